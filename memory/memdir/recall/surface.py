"""What path B injects for a selected memory, and the per-session state that limits it.

A file is read up to the injection caps, cut at a line end (a line that would cross the byte cap
is left out whole), cleaned as the agent cleans memory text, and given the header, staleness note
and truncation note of the ``target``; a session surfaces a few files a turn within its budget,
never the same file twice nor one the agent already read or wrote. The numbers are in
:mod:`memdir.constants`.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal

from memdir import constants as C
from memdir.agent.sanitize import neutralize_tags, strip_invisible
from memdir.containment import relative_inside
from memdir.target import DEFAULT_TARGET, Target
from memdir.textio import read_text, utf8_len, utf16_len

_DAY_SECONDS = 86_400


def age_days(mtime: float, now: float | None = None) -> int:
    """Whole days since ``mtime``, floored; a future mtime (clock skew) counts as today."""
    now = time.time() if now is None else now
    return max(0, math.floor((now - mtime) / _DAY_SECONDS))


def age_text(mtime: float, now: float | None = None) -> str:
    days = age_days(mtime, now)
    if days == 0:
        return "today"
    if days == 1:
        return "yesterday"
    return f"{days} days ago"


def staleness_text(mtime: float, now: float | None = None) -> str:
    """The warning for memories older than a day, or ``""`` for fresh ones (noise there)."""
    days = age_days(mtime, now)
    return C.STALENESS_TEMPLATE.format(days=days) if days > C.STALE_AFTER_DAYS else ""


def memory_header(
    path: str, mtime: float, now: float | None = None, target: Target = DEFAULT_TARGET
) -> str:
    if target.header_says_age:
        return f"Memory (saved {age_text(mtime, now)}): {path}:"
    return f"Memory: {path}:"


#: A header line of :func:`memory_header`, either form: ``Memory (saved today): /p/x.md:``.
_HEADER_LINE = re.compile(r"^Memory(?: \(saved [^)\n]*\))?: (?P<path>[^\n]+):$", re.MULTILINE)


def header_paths(text: str) -> list[str]:
    """The paths named by the memory headers in recalled text (an attachment, MCP
    ``memory_recall``'s result), in order: which memories that text gave the model."""
    return [match["path"] for match in _HEADER_LINE.finditer(text)]


#: Characters the agent removes from a path it shows (tabs, line breaks, control characters).
_PATH_DROPPED = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def display_path(path: Path) -> str:
    """The absolute path as the header and the truncation note show it."""
    return _PATH_DROPPED.sub("", str(path))


@dataclass(frozen=True)
class SurfacedMemory:
    """One memory exactly as injected."""

    path: Path
    rel_path: str
    #: The injected block: header, staleness warning, content, truncation note.
    text: str
    #: The file content included (frontmatter and body, cleaned), before header and notes.
    content: str
    #: UTF-8 bytes of ``content``.
    bytes: int
    truncated: bool
    mtime: float
    lines: int
    #: What counts against the session budget, in the target's unit
    #: (:attr:`memdir.target.Target.budget_utf16_with_note`).
    cost: int

    @property
    def truncation_note(self) -> str | None:
        """The note's line (the block's last: :func:`render_block` puts it there), or None."""
        return self.text.rpartition("\n")[2] if self.truncated else None


CutKind = Literal["lines", "bytes"]


def cut_text(
    text: str, max_lines: int = C.SURFACE_MAX_LINES, max_bytes: int = C.SURFACE_MAX_BYTES
) -> tuple[str, CutKind | None]:
    """Cut ``text`` to the injection caps: the kept text and which cap cut it (or None).

    As the agent's reader: the empty line after a final newline is a line (it counts toward the
    cap and the kept text keeps its newline), and a line that would cross the byte cap is left
    out whole, so a giant first line leaves nothing.
    """
    kept: list[str] = []
    used = 0
    for number, line in enumerate(text.split("\n")):
        if number >= max_lines:
            return "\n".join(kept), "lines"
        cost = utf8_len(line) + (1 if number else 0)
        if used + cost > max_bytes:
            return "\n".join(kept), "bytes"
        kept.append(line)
        used += cost
    return "\n".join(kept), None


def _reason(kind: CutKind, max_lines: int, max_bytes: int, names_limit: bool) -> str:
    if kind == "lines":
        template = C.TRUNCATION_REASON_LINES_LIMIT if names_limit else C.TRUNCATION_REASON_LINES
        return template.format(lines=max_lines)
    template = C.TRUNCATION_REASON_BYTES_LIMIT if names_limit else C.TRUNCATION_REASON_BYTES
    return template.format(bytes=max_bytes)


def cut_for_injection(
    text: str, max_lines: int = C.SURFACE_MAX_LINES, max_bytes: int = C.SURFACE_MAX_BYTES
) -> tuple[str, str | None]:
    """:func:`cut_text` with the cut said in memdir's words (``over 200 lines``), for lint."""
    kept, kind = cut_text(text, max_lines, max_bytes)
    return kept, None if kind is None else _reason(kind, max_lines, max_bytes, False)


def truncation_reason(kind: CutKind | None, target: Target = DEFAULT_TARGET) -> str | None:
    """The reason the truncation note gives, in the target's words."""
    if kind is None:
        return None
    limit = target.truncation_names_limit
    return _reason(kind, C.SURFACE_MAX_LINES, C.SURFACE_MAX_BYTES, limit)


def truncation_suffix(truncated_reason: str | None, display_path: str) -> str:
    """What follows cut content: a blank line and the note naming the full file, or nothing."""
    if truncated_reason is None:
        return ""
    note = C.TRUNCATION_NOTE_TEMPLATE.format(reason=truncated_reason, path=display_path)
    return f"\n\n{note}"


def render_block(
    display_path: str,
    content: str,
    mtime: float,
    truncated_reason: str | None,
    now: float | None = None,
    target: Target = DEFAULT_TARGET,
) -> str:
    """One memory as injected: header, staleness note, content, truncation note.

    ``content`` is already cleaned of invisible characters; the agent neutralises tag openers
    in the whole block, header included. memdir goes further in what it injects (a memory dir
    is untrusted input): invisible characters go from the header's path too, and model tags,
    look-alike tags and turn markers are neutralised as well (:mod:`memdir.agent.sanitize`'s
    ``strict``). Ordinary text comes out as the agent's.
    """
    header = memory_header(display_path, mtime, now, target)
    stale = staleness_text(mtime, now)
    body = content + truncation_suffix(truncated_reason, display_path)
    if target.staleness_before_header:
        head = f"{stale}\n\n{header}" if stale else header
    else:
        head = f"{header}\n{stale}" if stale else header
    return neutralize_tags(strip_invisible(f"{head}\n\n{body}"), strict=True)


def surface_file(
    path: Path, root: Path, now: float | None = None, target: Target = DEFAULT_TARGET
) -> SurfacedMemory:
    """Read one memory for injection with the caps applied.

    Raises :class:`OSError` when the file cannot be read at all (callers skip it).
    """
    result = read_text(path)
    if result.binary:
        raise OSError(f"{path} is binary")
    if result.mtime == 0.0 and result.problems and result.problems[0].kind == "unreadable":
        raise OSError(result.problems[0].message)
    # The agent's reader drops a BOM (read_text does) and reads CRLF as LF before counting.
    raw, kind = cut_text(result.text.replace("\r\n", "\n"))
    reason = truncation_reason(kind, target)
    content = strip_invisible(raw)
    rel = relative_inside(root, path, follow_links=False) or str(path)
    shown = display_path(path)
    block = render_block(shown, content, result.mtime, reason, now, target)
    size = utf8_len(content)
    if target.budget_utf16_with_note:
        cost = utf16_len(content + truncation_suffix(reason, shown))
    else:
        cost = size
    return SurfacedMemory(
        path=path,
        rel_path=rel,
        text=block,
        content=content,
        bytes=size,
        truncated=reason is not None,
        mtime=result.mtime,
        lines=content.count("\n") + 1 if content else 0,
        cost=cost,
    )


def wrap_attachment(blocks: Iterable[str]) -> str:
    """Each memory in its own system reminder, blank-line separated: the spec's attachment, and
    how the agent appends memories to a tool result for some main models."""
    return "\n\n".join(f"<system-reminder>\n{block}\n</system-reminder>" for block in blocks)


def render_attachment(memories: Iterable[SurfacedMemory], target: Target = DEFAULT_TARGET) -> str:
    """The ``relevant_memories`` attachment text for ``memories`` (``""`` for none).

    2.1.328 sends it as one system message: each memory ``<header>\n\n<content>``, the first
    preceded by the intro and a blank line, joined by a newline. (With some main models the agent
    wraps each memory in ``<system-reminder>`` inside the tool result instead:
    ``wrap_attachment`` of the same blocks.)
    """
    blocks = [m.text for m in memories]
    if blocks and target.attachment_intro:
        blocks[0] = f"{C.RELEVANT_MEMORIES_INTRO}\n\n{blocks[0]}"
    if target.attachment_system_message:
        return "\n".join(blocks)
    return wrap_attachment(blocks)


def _key(path: str | os.PathLike[str]) -> str:
    return os.path.realpath(os.fspath(path))


@dataclass
class Session:
    """What one agent session has already seen, and how much of its budget is spent."""

    surfaced: dict[str, int] = field(default_factory=dict)
    read: set[str] = field(default_factory=set)
    budget_used: int = 0
    budget_limit: int = C.SESSION_BUDGET_BYTES
    compactions: int = 0
    #: The model selector's earlier turns, ``(query, raw answer)``: a 2.1.328 selector request
    #: replays them, as the agent's selector conversation does until compaction.
    selector_turns: list[tuple[str, str]] = field(default_factory=list)

    @property
    def budget_left(self) -> int:
        return max(0, self.budget_limit - self.budget_used)

    @property
    def spent(self) -> bool:
        return self.budget_used >= self.budget_limit

    def seen(self, path: str | os.PathLike[str]) -> bool:
        """Surfaced earlier, or read/written/edited by the agent: never surface it (again)."""
        key = _key(path)
        return key in self.surfaced or key in self.read

    def mark_read(self, paths: Iterable[str | os.PathLike[str]]) -> None:
        self.read.update(_key(p) for p in paths)

    def mark_surfaced(self, memory: SurfacedMemory) -> None:
        key = _key(memory.path)
        self.surfaced[key] = self.surfaced.get(key, 0) + memory.cost
        self.budget_used += memory.cost

    def compact(self) -> None:
        """Compaction drops old attachments: memories may surface again, the budget restarts."""
        self.surfaced.clear()
        self.budget_used = 0
        self.selector_turns.clear()
        self.compactions += 1

    def take_turn(
        self, memories: Iterable[SurfacedMemory], target: Target = DEFAULT_TARGET
    ) -> list[SurfacedMemory]:
        """Admit at most 5 memories unseen before this turn, and record them.

        A file named twice in one turn is admitted twice, as the agent does. The budget is
        checked before each file, or (``target.budget_checked_at_trigger``) not at all here.
        """
        unseen = [m for m in memories if not self.seen(m.path)]
        admitted: list[SurfacedMemory] = []
        for memory in unseen:
            if len(admitted) >= C.SELECT_MAX_FILES:
                break
            if self.spent and not target.budget_checked_at_trigger:
                break
            admitted.append(memory)
            self.mark_surfaced(memory)
        return admitted

    def to_json(self) -> dict[str, object]:
        return {
            "surfaced": dict(sorted(self.surfaced.items())),
            "read": sorted(self.read),
            "budget_used": self.budget_used,
            "budget_limit": self.budget_limit,
            "compactions": self.compactions,
            "selector_turns": [list(turn) for turn in self.selector_turns],
        }

    @classmethod
    def from_json(cls, data: object) -> Session:
        """Rebuild a session; raises ValueError on a document that is not one."""
        if not isinstance(data, dict):
            raise ValueError("a session must be a JSON object")
        surfaced = data.get("surfaced", {})
        read = data.get("read", [])
        used = data.get("budget_used", 0)
        limit = data.get("budget_limit", C.SESSION_BUDGET_BYTES)
        compactions = data.get("compactions", 0)
        turns = data.get("selector_turns", [])
        if not (
            isinstance(surfaced, dict)
            and all(isinstance(k, str) and isinstance(v, int) for k, v in surfaced.items())
            and isinstance(read, list)
            and all(isinstance(p, str) for p in read)
            and isinstance(used, int)
            and isinstance(limit, int)
            and isinstance(compactions, int)
            and isinstance(turns, list)
            and all(
                isinstance(t, list) and len(t) == 2 and all(isinstance(x, str) for x in t)
                for t in turns
            )
        ):
            raise ValueError("malformed session: unexpected field types")
        pairs = [(t[0], t[1]) for t in turns]
        return cls(dict(surfaced), set(read), used, limit, compactions, pairs)

    def save(self, path: Path) -> None:
        from memdir.writing.files import write_atomic

        write_atomic(path, json.dumps(self.to_json(), indent=2, ensure_ascii=False) + "\n")

    @classmethod
    def load(cls, path: Path) -> Session:
        """A missing file is a new session; a corrupt one raises ValueError."""
        try:
            raw = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return cls()
        try:
            return cls.from_json(json.loads(raw))
        except json.JSONDecodeError as exc:
            raise ValueError(
                f"{path} is not a session file: {exc.msg} at line {exc.lineno}"
            ) from exc


#: Sessions a server keeps at once (the least recently used is forgotten first): its clients
#: name sessions freely, and each one kept costs memory.
MAX_SESSIONS: Final = 256
#: A session unused this long is forgotten: an agent session idle for a day has ended.
SESSION_IDLE_SECONDS: Final = 24 * 60 * 60
#: A session id longer than this is kept by its SHA-256 (as the hook names its state files):
#: 256 sessions of a megabyte's id each would otherwise hold 256 MB.
MAX_SESSION_ID_CHARS: Final = 128


class SessionStore:
    """The sessions a server keeps for its clients, by (memory dir, session id), bounded.

    A session is created on first use. At most ``limit`` are kept (the least recently used is
    forgotten first) and one unused for ``idle_seconds`` is forgotten, so no client, however
    many ids it makes up, grows the server without end. A forgotten session that comes back
    starts over: its memories may surface again, as after a compaction.
    """

    def __init__(
        self,
        limit: int = MAX_SESSIONS,
        idle_seconds: float = SESSION_IDLE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limit = limit
        self.idle_seconds = idle_seconds
        self._clock = clock
        #: Least recently used first, each with the clock's time of its last use.
        self._sessions: OrderedDict[tuple[Path, str], tuple[Session, float]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._sessions)

    def __iter__(self) -> Iterator[tuple[Path, str]]:
        """The keys kept, least recently used first (long ids as their hash)."""
        return iter(list(self._sessions))

    def __contains__(self, key: object) -> bool:
        return key in self._sessions

    @staticmethod
    def _key(root: Path, session_id: str) -> tuple[Path, str]:
        if len(session_id) > MAX_SESSION_ID_CHARS:
            session_id = hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()
        return root, session_id

    def get(self, root: Path, session_id: str) -> Session:
        """The session, created if it is new (or was forgotten); counts as a use."""
        now = self._clock()
        self._expire(now)
        key = self._key(root, session_id)
        kept = self._sessions.pop(key, None)
        session = kept[0] if kept is not None else Session()
        self._sessions[key] = (session, now)
        while len(self._sessions) > self.limit:
            self._sessions.popitem(last=False)
        return session

    def peek(self, root: Path, session_id: str) -> Session | None:
        """The session when it is kept; neither creates it nor counts as a use."""
        self._expire(self._clock())
        kept = self._sessions.get(self._key(root, session_id))
        return kept[0] if kept is not None else None

    def _expire(self, now: float) -> None:
        # Least recently used first: the first one still fresh ends the sweep.
        while self._sessions:
            key, (_, used) = next(iter(self._sessions.items()))
            if now - used < self.idle_seconds:
                return
            del self._sessions[key]
