"""Edits as plain data: what a fix changes, never a callback.

Positions are :class:`memdir.model.Span` values against the text the planner read (0-based lines,
code-point columns, exclusive ends). The CLI prints them 1-based; the server converts columns to
the client's encoding.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from memdir.model import Span


def position_json(span: Span) -> dict[str, int]:
    """A span in the public JSON shape: 1-based lines and columns, end exclusive."""
    return {
        "line": span.start_line + 1,
        "column": span.start_col + 1,
        "end_line": span.end_line + 1,
        "end_column": span.end_col + 1,
    }


@dataclass(frozen=True, slots=True)
class TextEdit:
    """Replace ``span`` of the file at ``path`` with ``new_text`` (an insertion when empty)."""

    path: Path
    #: ``/``-separated path relative to the memory dir.
    rel_path: str
    span: Span
    new_text: str

    def to_json(self) -> dict[str, object]:
        return {"path": self.rel_path, **position_json(self.span), "new_text": self.new_text}


@dataclass(frozen=True, slots=True)
class CreateFile:
    """Create ``path`` with ``text``; an existing file is never replaced (LSP: ignoreIfExists)."""

    path: Path
    rel_path: str
    text: str = ""

    def to_json(self) -> dict[str, object]:
        return {"path": self.rel_path, "text": self.text}


@dataclass(frozen=True, slots=True)
class DeleteFile:
    """Delete the file ``path`` (a memory merged into another). Only an editor applies it, where
    a person sees the change and can undo it: a fix that deletes is never ``safe``."""

    path: Path
    rel_path: str

    def to_json(self) -> dict[str, object]:
        return {"path": self.rel_path}


@dataclass(frozen=True, slots=True)
class Fix:
    """A change that resolves a diagnostic. File creations apply before the edits, deletions
    after them."""

    title: str
    edits: tuple[TextEdit, ...] = ()
    creates: tuple[CreateFile, ...] = ()
    #: Safe fixes only add text, or remove an exact duplicate: ``memdir lint --fix`` applies
    #: them unattended. Others are offered by the editor for a person to accept.
    safe: bool = False
    deletes: tuple[DeleteFile, ...] = ()

    def __post_init__(self) -> None:
        if self.safe and self.deletes:
            raise ValueError("a fix that deletes a file is never safe")

    def effect(
        self,
    ) -> tuple[frozenset[tuple[Path, Span, str]], frozenset[tuple[Path, str]], frozenset[Path]]:
        """What the fix does, without its title: two fixes with equal effects are one fix."""
        return (
            frozenset((e.path, e.span, e.new_text) for e in self.edits),
            frozenset((c.path, c.text) for c in self.creates),
            frozenset(d.path for d in self.deletes),
        )

    def to_json(self) -> dict[str, object]:
        data: dict[str, object] = {"title": self.title, "safe": self.safe}
        if self.creates:
            data["creates"] = [c.to_json() for c in self.creates]
        data["edits"] = [e.to_json() for e in self.edits]
        if self.deletes:
            data["deletes"] = [d.to_json() for d in self.deletes]
        return data
