"""What an extraction reports: its progress as it runs (:class:`ExtractionProgress`), each tool call
(:class:`ToolCallRecord`) and the result (:class:`ExtractionResult`, with the writes it made or
would make), and the result as a person or a program reads it (:func:`format_result`,
:func:`dumps`)."""

from __future__ import annotations

import difflib
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from memdir import constants as C
from memdir.extract.transcript import (
    MemoryWrite,
)
from memdir.writing.results import FileChange

Status = Literal["completed", "skipped", "busy", "error"]


# --- results and progress --------------------------------------------------------------------


@dataclass(frozen=True)
class ExtractionProgress:
    """A progress event: ``started``, ``turn`` (before each model call), ``tool``, ``finished``."""

    stage: Literal["started", "turn", "tool", "finished"]
    message: str
    turn: int = 0
    max_turns: int = C.EXTRACTION_MAX_TURNS

    @property
    def percentage(self) -> int:
        if self.stage == "finished":
            return 100
        return min(99, round(100 * self.turn / max(1, self.max_turns)))


ProgressCallback = Callable[[ExtractionProgress], Awaitable[None] | None]


@dataclass(frozen=True)
class ToolCallRecord:
    turn: int
    name: str
    input: Mapping[str, Any]
    is_error: bool
    #: The start of the result text, for logs and the CLI.
    preview: str


@dataclass(frozen=True)
class ExtractionResult:
    """What an extraction did (or, with ``dry_run``, would do)."""

    status: Status
    memory_dir: Path
    dry_run: bool = False
    #: Why it was skipped or busy, or the error that ended it.
    reason: str | None = None
    #: How the loop ended: the model's last ``stop_reason``, or ``max_turns``.
    stop_reason: str | None = None
    turns: int = 0
    model: str | None = None
    changes: tuple[FileChange, ...] = ()
    tool_calls: tuple[ToolCallRecord, ...] = ()
    #: The memory writes found in the recent turns (why a run was skipped).
    recent_writes: tuple[MemoryWrite, ...] = ()
    #: The model's final text (its own summary of what it saved).
    summary: str = ""
    warnings: tuple[str, ...] = ()
    usage: Mapping[str, int] = field(default_factory=dict)

    def paths(self, kind: str) -> list[str]:
        return [
            c.new_path or c.path if kind == "renamed" else c.path
            for c in self.changes
            if c.kind == kind
        ]

    @property
    def created(self) -> list[str]:
        return self.paths("created")

    @property
    def changed(self) -> list[str]:
        return self.paths("changed")

    @property
    def deleted(self) -> list[str]:
        return self.paths("deleted")

    def to_json(self) -> dict[str, object]:
        return {
            "status": self.status,
            "memory_dir": str(self.memory_dir),
            "dry_run": self.dry_run,
            "reason": self.reason,
            "stop_reason": self.stop_reason,
            "turns": self.turns,
            "model": self.model,
            "created": self.created,
            "changed": self.changed,
            "deleted": self.deleted,
            "renamed": [
                {"from": c.path, "to": c.new_path} for c in self.changes if c.kind == "renamed"
            ],
            "changes": [c.to_json() for c in self.changes],
            "tool_calls": [
                {"turn": t.turn, "name": t.name, "input": dict(t.input), "is_error": t.is_error}
                for t in self.tool_calls
            ],
            "recent_writes": [
                {"line": w.line, "tool": w.tool, "path": w.path} for w in self.recent_writes
            ],
            "summary": self.summary,
            "warnings": list(self.warnings),
            "usage": dict(self.usage),
        }


def merge_changes(changes: list[FileChange]) -> tuple[FileChange, ...]:
    """Fold a run's writes into one net change per file, with unified diffs.

    A file created and then edited is "created" with its final text; created and then deleted
    is nothing at all; edited and then deleted is "deleted"; a rename carries any edits along.
    """
    state: dict[str, FileChange] = {}
    for change in changes:
        previous = state.pop(change.path, None)
        if change.kind == "created":
            if previous is not None and previous.kind == "deleted":
                state[change.path] = FileChange(
                    "changed", change.path, before=previous.before, after=change.after
                )
            else:
                state[change.path] = change
        elif change.kind == "changed":
            if previous is None:
                state[change.path] = change
            else:
                state[change.path] = replace(previous, after=change.after)
        elif change.kind == "deleted":
            if change.is_dir:
                prefix = change.path + "/"
                for key in [k for k in state if k.startswith(prefix)]:
                    if state[key].kind == "created":
                        del state[key]
            if previous is None:
                state[change.path] = change
            elif previous.kind == "renamed":
                state[previous.path] = FileChange("deleted", previous.path, before=previous.before)
            elif previous.kind != "created":
                state[change.path] = FileChange(
                    "deleted", change.path, before=previous.before, is_dir=change.is_dir
                )
        elif change.kind == "renamed" and change.new_path is not None:
            if previous is None:
                state[change.new_path] = change
            elif previous.kind == "created":
                state[change.new_path] = replace(previous, path=change.new_path)
            elif previous.kind == "renamed" and previous.path == change.new_path:
                if previous.after != previous.before:
                    state[change.new_path] = FileChange(
                        "changed", change.new_path, before=previous.before, after=previous.after
                    )
            else:
                origin = previous.path if previous.kind == "renamed" else change.path
                state[change.new_path] = FileChange(
                    "renamed",
                    origin,
                    new_path=change.new_path,
                    before=previous.before,
                    after=previous.after,
                )
    merged: list[FileChange] = []
    for key, change in state.items():
        old_name = change.path
        new_name = key
        diff = ""
        if not change.is_dir and (change.before is not None or change.after is not None):
            diff = "".join(
                difflib.unified_diff(
                    (change.before or "").splitlines(keepends=True),
                    (change.after or "").splitlines(keepends=True),
                    fromfile="/dev/null" if change.kind == "created" else f"a/{old_name}",
                    tofile="/dev/null" if change.kind == "deleted" else f"b/{new_name}",
                )
            )
        merged.append(replace(change, diff=diff))
    return tuple(merged)


def format_result(result: ExtractionResult, name: Callable[[str], str] = str) -> str:
    """A short human report: what was (or would be) written, and why not when nothing was.
    ``name`` turns a path relative to the memory dir into the one to print (the command line
    names files from the working directory)."""
    verb = {
        "created": "would create",
        "changed": "would change",
        "deleted": "would delete",
        "renamed": "would rename",
    }
    lines: list[str] = []
    if result.status in ("skipped", "busy"):
        lines.append(f"{result.status}: {result.reason}")
    elif result.status == "error":
        lines.append(f"error: {result.reason}")
    for change in result.changes:
        word = verb[change.kind] if result.dry_run else change.kind
        target = name(change.path)
        if change.new_path:
            target += f" -> {name(change.new_path)}"
        lines.append(f"{word} {target}")
        if result.dry_run and change.diff:
            lines.extend("    " + line for line in change.diff.rstrip("\n").split("\n"))
    if result.status == "completed":
        if not result.changes:
            lines.append("nothing saved" if not result.dry_run else "nothing would be saved")
        ending = "turn limit reached" if result.stop_reason == "max_turns" else result.stop_reason
        dry = " (dry run: nothing written)" if result.dry_run else ""
        lines.append(f"-- {result.turns} turn(s), {ending}{dry}")
    lines.extend(f"warning: {w}" for w in result.warnings)
    return "\n".join(lines)


def dumps(result: ExtractionResult) -> str:
    return json.dumps(result.to_json(), ensure_ascii=False, indent=2)
