"""What a caller is shown of an index, a scan, a surfaced memory or a recall: plain dataclasses.

The engine's own types carry paths, floats and internals; these are the flat, serialisable
views both faces report: the CLI's ``--json`` (:func:`cli_json`, snake_case) and the
``memory/*`` protocol (the server's converter camelCases the same fields). A field marked
:data:`PROTOCOL_ONLY` is left out of the CLI's documented documents.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memdir import constants as C
from memdir.agent.index import Index, LoadLevel
from memdir.agent.manifest import format_manifest, iso_mtime
from memdir.agent.scan import ScanResult
from memdir.model import ZERO_BASED, MemoryHeader
from memdir.recall.explain import Explanation
from memdir.recall.surface import SurfacedMemory

if TYPE_CHECKING:
    from memdir.recall.prefetch import RecallResult

#: Field metadata: sent on the protocol, not part of the CLI's ``--json`` keys.
PROTOCOL_ONLY: Mapping[str, object] = {"cli": False}


def cli_json(view: Any) -> Any:
    """A view as JSON-ready data with its snake_case names: what the CLI's ``--json`` prints and
    MCP's structured results hold. Lines and columns count from 1 here (fields marked
    :data:`~memdir.model.ZERO_BASED`), as people count them; the protocol's stay LSP's."""
    if is_dataclass(view) and not isinstance(view, type):
        return {
            f.name: getattr(view, f.name) + 1
            if f.metadata.get("zero_based")
            else cli_json(getattr(view, f.name))
            for f in fields(view)
            if f.metadata.get("cli", True)
        }
    if isinstance(view, Mapping):
        return {key: cli_json(value) for key, value in view.items()}
    if isinstance(view, list | tuple):
        return [cli_json(value) for value in view]
    return view


# --- the index (path A) ----------------------------------------------------------------------


@dataclass(frozen=True)
class CutEntry:
    """An index entry past the load cap: path A never shows it."""

    #: Its line in MEMORY.md, 0-based as LSP counts (the CLI and MCP show it 1-based).
    line: int = field(metadata=ZERO_BASED)
    title: str
    #: The linked file, relative to the memory dir.
    path: str | None
    #: The whole line.
    raw: str


@dataclass(frozen=True)
class IndexSummary:
    """What path A injects of MEMORY.md, and how much of the load cap it uses."""

    #: The memory dir.
    directory: str = field(metadata=PROTOCOL_ONLY)
    #: MEMORY.md's path.
    path: str
    exists: bool
    #: Exactly the injected text (the warning line included when the cap was hit).
    text: str
    #: Lines and characters (UTF-16 units) of the content, before the cap.
    lines: int
    chars: int
    #: Lines and characters loaded.
    loaded_lines: int
    loaded_chars: int
    #: The caps: 200 lines, 25,000 characters.
    max_lines: int
    max_chars: int
    truncated: bool
    #: Why it was cut, as the warning line says; null when nothing was.
    reason: str | None
    #: Number of index entries.
    entries: int
    cut_entries: tuple[CutEntry, ...]
    #: Past the cap, near it (over ``rewriteTargetLines`` lines or 90% of the characters), or
    #: within it.
    level: LoadLevel = field(metadata=PROTOCOL_ONLY)
    #: The agent is told to keep the index under this many lines.
    rewrite_target_lines: int = field(metadata=PROTOCOL_ONLY)


def index_summary(root: Path, index: Index, *, exists: bool) -> IndexSummary:
    load = index.load
    return IndexSummary(
        directory=str(root),
        path=str(index.path),
        exists=exists,
        text=load.text,
        lines=load.line_count,
        chars=load.char_count,
        loaded_lines=load.loaded_lines,
        loaded_chars=load.loaded_chars,
        max_lines=C.INDEX_MAX_LINES,
        max_chars=C.INDEX_MAX_CHARS,
        truncated=load.truncated,
        reason=load.reason,
        entries=len(index.entries),
        cut_entries=tuple(CutEntry(e.line, e.title, e.path, e.raw) for e in index.cut_entries),
        level=load.level,
        rewrite_target_lines=C.INDEX_REWRITE_TARGET_LINES,
    )


# --- the scan (path B) -----------------------------------------------------------------------


@dataclass(frozen=True)
class SkippedFile:
    """A file the scan refused or could not read."""

    path: str
    reason: str


@dataclass(frozen=True)
class ManifestCandidate:
    """One manifest line: a topic file the selector is shown."""

    path: str
    type: str | None
    #: Last modified, ISO 8601 UTC with milliseconds.
    mtime: str
    name: str | None = None
    description: str | None = None

    @classmethod
    def of(cls, header: MemoryHeader) -> ManifestCandidate:
        return cls(
            header.rel_path, header.type, iso_mtime(header.mtime), header.name, header.description
        )


@dataclass(frozen=True)
class ManifestView:
    """Exactly what the selector is shown: the newest topic files' headers."""

    directory: str = field(metadata=PROTOCOL_ONLY)
    candidates: tuple[ManifestCandidate, ...]
    #: The manifest text, one line per candidate.
    manifest: str
    #: Topic files past the 200-file window: never candidates.
    cut_off: tuple[str, ...]
    skipped: tuple[SkippedFile, ...]


def skipped_files(result: ScanResult) -> tuple[SkippedFile, ...]:
    return tuple(SkippedFile(s.rel_path, s.reason) for s in result.skipped)


def manifest_view(result: ScanResult) -> ManifestView:
    return ManifestView(
        directory=str(result.root),
        candidates=tuple(ManifestCandidate.of(h) for h in result.candidates),
        manifest=format_manifest(result.candidates),
        cut_off=tuple(h.rel_path for h in result.cut_off),
        skipped=skipped_files(result),
    )


# --- one memory as injected ------------------------------------------------------------------


@dataclass(frozen=True)
class MemoryText:
    """One topic file exactly as path B injects it."""

    path: str
    #: UTF-8 bytes of ``content``: what counts against the session budget.
    bytes: int
    truncated: bool
    #: The injected block: header, staleness warning, content, truncation note.
    text: str
    lines: int
    #: The file content included, before header and notes.
    content: str = field(metadata=PROTOCOL_ONLY)
    mtime: str = field(metadata=PROTOCOL_ONLY)


def memory_text(memory: SurfacedMemory) -> MemoryText:
    return MemoryText(
        path=memory.rel_path,
        bytes=memory.bytes,
        truncated=memory.truncated,
        text=memory.text,
        lines=memory.lines,
        content=memory.content,
        mtime=iso_mtime(memory.mtime),
    )


# --- recall ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class SurfacedView:
    """One memory injected by a recall."""

    path: str
    bytes: int
    truncated: bool
    #: The block exactly as the model sees it (header, body, truncation note).
    text: str
    #: The truncation note's line of ``text`` (null when the whole file is shown).
    truncation_note: str | None = field(default=None, metadata=PROTOCOL_ONLY)


@dataclass(frozen=True)
class RecallBudget:
    """The session's surfacing budget after this recall, in bytes."""

    used: int
    left: int
    limit: int
    #: Bytes this recall surfaced.
    surfaced_now: int


@dataclass(frozen=True)
class DroppedFile:
    """A file left out on the way, at which stage and why."""

    path: str
    #: ``before-select``, ``after-select``, ``read`` or ``budget``.
    stage: str
    reason: str


@dataclass(frozen=True)
class RecallCandidate:
    """A file the selector was shown in a recall: its manifest line's fields."""

    path: str
    type: str | None
    #: Last modified, ISO 8601 UTC with milliseconds.
    mtime: str
    #: Always null: the selector is shown no names.
    name: None = field(default=None, metadata=PROTOCOL_ONLY)
    description: str | None = None


@dataclass(frozen=True)
class RecallTimings:
    """Milliseconds each stage took; ``selector``: the selector's own stages."""

    scan_ms: float
    select_ms: float
    read_ms: float
    total_ms: float
    selector: dict[str, float]


@dataclass(frozen=True)
class RecallView:
    """Everything one recall (path B) did, and exactly what it injects."""

    query: str
    triggered: bool
    #: Why it ran, or why not (single word, acknowledgement, budget spent).
    reason: str
    #: The selector's choice, relative paths in its order.
    selected_memories: tuple[str, ...]
    surfaced: tuple[SurfacedView, ...]
    #: The ``relevant_memories`` attachment (empty when nothing surfaced).
    attachment: str
    #: The selector that chose (``lexical`` after a fallback), the one asked, and why it fell back.
    selector: str | None
    requested_selector: str | None
    model: str | None
    degraded: str | None
    #: Why each selected file was chosen, when the selector says.
    why: dict[str, str]
    #: Names the selector gave that were dropped, and why.
    rejected: dict[str, str]
    #: The selector's own notes (names dropped, caps, tool rule).
    notes: tuple[str, ...]
    dropped: tuple[DroppedFile, ...]
    budget: RecallBudget
    #: The files the selector was shown, newest first.
    candidates: tuple[RecallCandidate, ...]
    #: The manifest text the selector saw.
    manifest: str
    timings: RecallTimings
    elapsed_ms: float
    #: Why each file asked about (``--explain``, ``explain``) was or was not selected.
    explanations: tuple[Explanation, ...] = ()


def recall_view(result: RecallResult, explanations: tuple[Explanation, ...] = ()) -> RecallView:
    timings = result.timings
    return RecallView(
        query=result.query,
        triggered=result.triggered,
        reason=result.reason,
        selected_memories=tuple(result.selected),
        surfaced=tuple(
            SurfacedView(m.rel_path, m.bytes, m.truncated, m.text, m.truncation_note)
            for m in result.surfaced
        ),
        attachment=result.attachment,
        selector=result.selector,
        requested_selector=result.requested_selector,
        model=result.model,
        degraded=result.degraded,
        why=dict(result.why),
        rejected=dict(result.rejected),
        notes=tuple(result.notes),
        dropped=tuple(DroppedFile(d.rel_path, d.stage, d.reason) for d in result.dropped),
        budget=RecallBudget(
            result.budget_used, result.budget_left, result.budget_limit, result.surfaced_bytes
        ),
        candidates=tuple(
            RecallCandidate(c.rel_path, c.type, iso_mtime(c.mtime), description=c.description)
            for c in result.candidates
        ),
        manifest=result.manifest,
        timings=RecallTimings(
            timings.scan_ms,
            timings.select_ms,
            timings.read_ms,
            timings.total_ms,
            dict(result.selector_timings),
        ),
        elapsed_ms=timings.total_ms,
        explanations=explanations,
    )
