"""What path B injects for a selected memory, and the per-session state that limits it.

A file is read up to the injection caps and cut at a line end (never inside a UTF-8 sequence),
with the agent's header, staleness warning and truncation note; a session surfaces a few files a
turn within its byte budget, never the same file twice nor one the agent already read or wrote.
The numbers are in :mod:`memdir.constants`.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from memdir import constants as C
from memdir.paths import relative_inside
from memdir.textio import read_text

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


def memory_header(path: str, mtime: float, now: float | None = None) -> str:
    return f"Memory (saved {age_text(mtime, now)}): {path}:"


@dataclass(frozen=True)
class SurfacedMemory:
    """One memory exactly as injected."""

    path: Path
    rel_path: str
    #: The injected block: header, staleness warning, content, truncation note.
    text: str
    #: The file content included (frontmatter and body), before header and notes.
    content: str
    #: UTF-8 bytes of ``content``: what counts against the session budget.
    bytes: int
    truncated: bool
    mtime: float
    lines: int

    @property
    def truncation_note(self) -> str | None:
        """The note's line (the block's last: :func:`render_block` puts it there), or None."""
        return self.text.rpartition("\n")[2] if self.truncated else None


def cut_for_injection(
    text: str, max_lines: int = C.SURFACE_MAX_LINES, max_bytes: int = C.SURFACE_MAX_BYTES
) -> tuple[str, str | None]:
    """Cut ``text`` to the injection caps. Returns the kept text and why it was cut (or None)."""
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    kept: list[str] = []
    used = 0
    reason: str | None = None
    for number, line in enumerate(lines):
        if number >= max_lines:
            reason = f"over {max_lines} lines"
            break
        cost = len(line.encode("utf-8")) + (1 if number else 0)
        if used + cost > max_bytes:
            reason = f"over {max_bytes} bytes"
            if not kept:
                # A single giant first line: cut inside it, at a character boundary.
                data = line.encode("utf-8")[:max_bytes]
                kept.append(data.decode("utf-8", errors="ignore"))
            break
        kept.append(line)
        used += cost
    return "\n".join(kept), reason


def render_block(
    display_path: str,
    content: str,
    mtime: float,
    truncated_reason: str | None,
    now: float | None = None,
) -> str:
    parts = [memory_header(display_path, mtime, now)]
    stale = staleness_text(mtime, now)
    if stale:
        parts.append(stale)
    parts.append("")
    parts.append(content)
    if truncated_reason:
        parts.append("")
        parts.append(C.TRUNCATION_NOTE_TEMPLATE.format(reason=truncated_reason, path=display_path))
    return "\n".join(parts)


def surface_file(path: Path, root: Path, now: float | None = None) -> SurfacedMemory:
    """Read one memory for injection with the caps applied.

    Raises :class:`OSError` when the file cannot be read at all (callers skip it).
    """
    result = read_text(path)
    if result.binary:
        raise OSError(f"{path} is binary")
    if result.mtime == 0.0 and result.problems and result.problems[0].kind == "unreadable":
        raise OSError(result.problems[0].message)
    content, reason = cut_for_injection(result.text)
    rel = relative_inside(root, path, follow_links=False) or str(path)
    block = render_block(str(path), content, result.mtime, reason, now)
    return SurfacedMemory(
        path=path,
        rel_path=rel,
        text=block,
        content=content,
        bytes=len(content.encode("utf-8")),
        truncated=reason is not None,
        mtime=result.mtime,
        lines=content.count("\n") + 1 if content else 0,
    )


def wrap_attachment(blocks: Iterable[str]) -> str:
    """The ``relevant_memories`` attachment: each memory in its own system reminder."""
    return "\n\n".join(f"<system-reminder>\n{block}\n</system-reminder>" for block in blocks)


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
        self.surfaced[_key(memory.path)] = memory.bytes
        self.budget_used += memory.bytes

    def compact(self) -> None:
        """Compaction drops old attachments: memories may surface again, the budget restarts."""
        self.surfaced.clear()
        self.budget_used = 0
        self.compactions += 1

    def take_turn(self, memories: Iterable[SurfacedMemory]) -> list[SurfacedMemory]:
        """Admit at most 5 unseen memories for this turn while the budget lasts, and record them."""
        admitted: list[SurfacedMemory] = []
        for memory in memories:
            if len(admitted) >= C.SELECT_MAX_FILES or self.spent:
                break
            if self.seen(memory.path):
                continue
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
        if not (
            isinstance(surfaced, dict)
            and all(isinstance(k, str) and isinstance(v, int) for k, v in surfaced.items())
            and isinstance(read, list)
            and all(isinstance(p, str) for p in read)
            and isinstance(used, int)
            and isinstance(limit, int)
            and isinstance(compactions, int)
        ):
            raise ValueError("malformed session: unexpected field types")
        return cls(dict(surfaced), set(read), used, limit, compactions)

    def save(self, path: Path) -> None:
        from memdir.write import write_atomic

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
