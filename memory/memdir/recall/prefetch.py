"""Path B end to end: the relevance prefetch that surfaces a few memories for a user message.

trigger → scan → (seed: drop already surfaced/read) → manifest → select → drop surfaced/read →
first 5 → read with caps → budget → result; what differs by agent release follows the ``target``.
:func:`start_prefetch` runs :func:`prefetch` as a task so the caller goes on with
its turn, as the agent does. The session is touched once, synchronously, at the end, so a
cancelled prefetch leaves it unchanged and two racing prefetches never surface a file twice.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict, Unpack

from memdir import constants as C
from memdir.agent.manifest import format_manifest
from memdir.agent.scan import ScanResult, scan
from memdir.agent.trigger import TriggerRule, should_prefetch
from memdir.config import Settings, load_settings
from memdir.model import MemoryHeader
from memdir.recall.choice import selector_from_settings
from memdir.recall.select import AnthropicSelector, Selection, Selector, normalize_tools
from memdir.recall.surface import Session, SurfacedMemory, render_attachment, surface_file
from memdir.target import Target


@dataclass(frozen=True)
class Candidate:
    """A topic file the selector was shown (one manifest line)."""

    rel_path: str
    type: str | None
    mtime: float
    description: str | None

    @classmethod
    def from_header(cls, header: MemoryHeader) -> Candidate:
        return cls(header.rel_path, header.type, header.mtime, header.description)


@dataclass(frozen=True)
class Dropped:
    """A file left out on the way, at which stage and why."""

    rel_path: str
    #: ``before-select``, ``after-select``, ``read`` or ``budget``.
    stage: str
    reason: str


@dataclass(frozen=True)
class Timings:
    scan_ms: float = 0.0
    select_ms: float = 0.0
    read_ms: float = 0.0
    total_ms: float = 0.0


@dataclass(frozen=True)
class RecallResult:
    """Everything one prefetch did, and exactly what it injects."""

    query: str
    triggered: bool
    #: Why it ran, or why not (single word, acknowledgement, budget spent).
    reason: str
    #: The manifest's files, newest first: already seen ones too unless the target leaves them
    #: out (the model selector is shown them all; other selectors only the unseen ones).
    candidates: tuple[Candidate, ...] = ()
    #: The manifest text the model selector is shown.
    manifest: str = ""
    #: The selector's choice: paths relative to the memory dir, ``/``-separated, in its order.
    selected: tuple[str, ...] = ()
    #: The memories injected, each block exactly as the model sees it.
    surfaced: tuple[SurfacedMemory, ...] = ()
    #: The ``relevant_memories`` attachment as the target injects it (``""`` when nothing
    #: surfaced): :func:`memdir.recall.surface.render_attachment`.
    attachment: str = ""
    #: Files left out before or after selection, and why.
    dropped: tuple[Dropped, ...] = ()
    #: Session budget after this prefetch.
    budget_used: int = 0
    budget_left: int = 0
    budget_limit: int = C.SESSION_BUDGET_BYTES
    #: The selector that chose (``lexical`` after a fallback), the one asked, and why it fell back.
    selector: str | None = None
    requested_selector: str | None = None
    degraded: str | None = None
    why: Mapping[str, str] = field(default_factory=dict)
    #: The selector's own notes and rejections (names dropped, caps, tool rule).
    notes: tuple[str, ...] = ()
    rejected: Mapping[str, str] = field(default_factory=dict)
    model: str | None = None
    timings: Timings = field(default_factory=Timings)
    selector_timings: Mapping[str, float] = field(default_factory=dict)

    @property
    def surfaced_paths(self) -> tuple[str, ...]:
        return tuple(m.rel_path for m in self.surfaced)

    @property
    def surfaced_bytes(self) -> int:
        """What this recall added to the session budget, in the budget's unit."""
        return sum(m.cost for m in self.surfaced)


def bound_query(query: str, limit: int = C.QUERY_MAX_CHARS) -> str:
    """The query as recall uses it: whole up to ``limit`` characters, else its start and its
    end (where a pasted log's question usually is), ``limit`` in all, joined by a ``…`` line."""
    if len(query) <= limit:
        return query
    head = (limit - 3) // 2
    return f"{query[:head]}\n…\n{query[len(query) - (limit - 3 - head) :]}"


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 3)


def seen_reason(session: Session, path: Path) -> str | None:
    """Why the session rules a file out, or None."""
    # The session keys files by real path, so a symlinked dir or alias still matches.
    key = os.path.realpath(path)
    if key in session.read:
        return "already read or written by the agent"
    if key in session.surfaced:
        return "already surfaced in this session"
    return None


def _read_selected(
    headers: Sequence[MemoryHeader], root: Path, now: float | None, target: Target
) -> tuple[list[SurfacedMemory], list[Dropped]]:
    """Read each selected file with the injection caps; an unreadable file is skipped."""
    memories: list[SurfacedMemory] = []
    dropped: list[Dropped] = []
    for header in headers:
        try:
            memories.append(surface_file(header.path, root, now, target))
        except (OSError, ValueError) as exc:
            dropped.append(Dropped(header.rel_path, "read", f"cannot read: {exc}"))
    return memories, dropped


async def prefetch(
    query: str,
    memory_dir: Path,
    session: Session,
    recent_tools: Sequence[str] = (),
    *,
    selector: Selector | None = None,
    settings: Settings | None = None,
    trigger_rule: TriggerRule | None = None,
    now: float | None = None,
    target: Target | None = None,
) -> RecallResult:
    """Run path B once for a user message and record what surfaced in ``session``.

    ``selector`` defaults to :func:`~memdir.recall.choice.selector_from_settings` (``auto``:
    anthropic with a key, else a configured local model, else lexical); ``settings`` to
    :func:`load_settings` of ``memory_dir``; ``trigger_rule`` to the settings' rule; ``target``
    to the settings' target. A query over :data:`~memdir.constants.QUERY_MAX_CHARS` is cut
    (:func:`bound_query`). Never raises for a bad file or a failing selector; cancellation
    propagates and leaves ``session`` untouched.
    """
    start = time.perf_counter()
    # Bounded before anything reads it: the trigger, the selector, the session's selector turns.
    query = bound_query(query)
    if settings is None:
        settings = await asyncio.to_thread(load_settings, memory_dir)
    rule: TriggerRule = trigger_rule or settings.trigger
    target = target or settings.agent_target

    def finish_untriggered(reason: str) -> RecallResult:
        return RecallResult(
            query=query,
            triggered=False,
            reason=reason,
            budget_used=session.budget_used,
            budget_left=session.budget_left,
            budget_limit=session.budget_limit,
            timings=Timings(total_ms=_ms(start)),
        )

    # 1. Trigger: the budget first (the spec's order), then the message rule.
    if session.spent:
        return finish_untriggered(
            f"session budget spent ({session.budget_used:,}/{session.budget_limit:,}); "
            "compaction resets it"
        )
    decision = should_prefetch(query, rule)
    if not decision.triggered:
        return finish_untriggered(decision.reason)

    # 2. Scan, off the event loop.
    scan_start = time.perf_counter()
    scanned: ScanResult = await asyncio.to_thread(scan, memory_dir)
    scan_ms = _ms(scan_start)

    # 3. What this session has seen: left out of the manifest (seed), or only after selection.
    dropped: list[Dropped] = []
    unseen: list[MemoryHeader] = []
    for header in scanned.candidates:
        why_not = seen_reason(session, header.path)
        if not why_not:
            unseen.append(header)
        elif target.manifest_excludes_seen:
            dropped.append(Dropped(header.rel_path, "before-select", why_not))
    shown = unseen if target.manifest_excludes_seen else list(scanned.candidates)

    # 4. Manifest.
    manifest = format_manifest(shown)

    # 5. Select, unless every candidate has been seen (then the agent makes no call either).
    select_start = time.perf_counter()
    if selector is None:
        selector = selector_from_settings(settings, target=target)
    tools = normalize_tools(recent_tools)
    selection: Selection
    if unseen:
        try:
            if isinstance(selector, AnthropicSelector):
                # The agent's request shows its manifest; a fallback gets the unseen files only.
                selection = await selector.select(
                    query,
                    shown,
                    tools,
                    fallback_headers=unseen,
                    history=tuple(session.selector_turns),
                )
            else:
                # Other selectors have no "do not re-select" prompt: they choose among new files.
                selection = await selector.select(query, unseen, tools)
        except Exception as exc:  # a third-party selector's bug must not end the user's turn
            failure = " ".join(f"{type(exc).__name__}: {exc}".split())[:240]
            selection = Selection(
                (),
                {},
                "none",
                selector.name,
                degraded=f"selector {selector.name} failed: {failure}",
            )
    else:
        note = "all surfaced or read: no selector call" if shown else "no candidates"
        selection = Selection((), {}, selector.name, selector.name, notes=(note,))
    select_ms = _ms(select_start)

    # 6. Drop what was seen (the agent may also have read a file while the selector was
    # thinking) and names that are not candidates; then the first 5. A repeated name stays.
    by_path = {h.rel_path: h for h in shown}
    chosen: list[MemoryHeader] = []
    for rel in selection.selected:
        picked = by_path.get(rel)
        if picked is None:
            dropped.append(Dropped(rel, "after-select", "not among the candidates"))
            continue
        why_not = seen_reason(session, picked.path)
        if why_not:
            dropped.append(Dropped(rel, "after-select", why_not))
            continue
        chosen.append(picked)
    for extra in chosen[C.SELECT_MAX_FILES :]:
        dropped.append(Dropped(extra.rel_path, "after-select", "over 5 files this turn"))
    chosen = chosen[: C.SELECT_MAX_FILES]

    # 7. Read with the caps, off the event loop.
    read_start = time.perf_counter()
    memories, unreadable = (
        await asyncio.to_thread(_read_selected, chosen, memory_dir, now, target)
        if chosen
        else ([], [])
    )
    dropped.extend(unreadable)
    read_ms = _ms(read_start)

    # 8. Budget. From here on nothing awaits: the session changes all at once or not at all.
    if selection.raw_answer is not None:
        session.selector_turns.append((query, selection.raw_answer))
    admitted = session.take_turn(memories, target)
    admitted_keys = {id(m) for m in admitted}
    for memory in memories:
        if id(memory) not in admitted_keys:
            reason = (
                "session budget spent"
                if session.spent
                else seen_reason(session, memory.path) or "over 5 files this turn"
            )
            dropped.append(Dropped(memory.rel_path, "budget", reason))

    return RecallResult(
        query=query,
        triggered=True,
        reason=decision.reason,
        candidates=tuple(Candidate.from_header(h) for h in shown),
        manifest=manifest,
        selected=selection.selected,
        surfaced=tuple(admitted),
        attachment=render_attachment(admitted, target),
        dropped=tuple(dropped),
        budget_used=session.budget_used,
        budget_left=session.budget_left,
        budget_limit=session.budget_limit,
        selector=selection.selector,
        requested_selector=selection.requested,
        degraded=selection.degraded,
        why=dict(selection.why),
        notes=selection.notes,
        rejected=dict(selection.rejected),
        model=selection.model,
        timings=Timings(scan_ms, select_ms, read_ms, _ms(start)),
        selector_timings=dict(selection.timings),
    )


class PrefetchOptions(TypedDict, total=False):
    """The keyword options of :func:`prefetch`, passed on by the wrappers below."""

    selector: Selector | None
    settings: Settings | None
    trigger_rule: TriggerRule | None
    now: float | None
    target: Target | None


def start_prefetch(
    query: str,
    memory_dir: Path,
    session: Session,
    recent_tools: Sequence[str] = (),
    **options: Unpack[PrefetchOptions],
) -> asyncio.Task[RecallResult]:
    """Start :func:`prefetch` in the background and return at once (needs a running loop).

    The caller goes on with its turn and awaits (or checks ``done()`` on) the task when it is
    ready for the memories, or cancels it when the turn ends first.
    """
    return asyncio.get_running_loop().create_task(
        prefetch(query, memory_dir, session, recent_tools, **options),
        name=f"memdir-prefetch:{query[:40]}",
    )


def recall(
    query: str,
    memory_dir: Path,
    session: Session | None = None,
    recent_tools: Sequence[str] = (),
    **options: Unpack[PrefetchOptions],
) -> RecallResult:
    """Synchronous :func:`prefetch` for scripts and the CLI (not for code inside an event loop)."""
    return asyncio.run(
        prefetch(
            query,
            memory_dir,
            session if session is not None else Session(),
            recent_tools,
            **options,
        )
    )
