"""Diagnostics and fixes as plain data: what the CLI prints and the language server publishes.

Positions are :class:`memdir.model.Span` values (0-based lines, code-point columns, exclusive
ends); the CLI adds one, the server converts columns to the client's encoding. A fix is a list of
text edits and file creations, never a callback, so the server can turn it into a WorkspaceEdit
and ``memdir lint --fix`` can apply it with the same code.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from memdir.model import Span

Severity = Literal["error", "warning", "info", "hint"]
SEVERITY_ORDER: tuple[Severity, ...] = ("error", "warning", "info", "hint")
#: Severities that make ``memdir lint`` exit 1.
FAILING: frozenset[str] = frozenset(("error", "warning"))


def _position(span: Span) -> dict[str, int]:
    return {
        "line": span.start_line + 1,
        "column": span.start_col + 1,
        "end_line": span.end_line + 1,
        "end_column": span.end_col + 1,
    }


@dataclass(frozen=True, slots=True)
class TextEdit:
    """Replace ``span`` of the file at ``path`` (as lint read it) with ``new_text``."""

    path: Path
    rel_path: str
    span: Span
    new_text: str

    def to_json(self) -> dict[str, object]:
        return {"path": self.rel_path, **_position(self.span), "new_text": self.new_text}


@dataclass(frozen=True, slots=True)
class CreateFile:
    """Create ``path`` with ``text``; an existing file is never replaced (LSP: ignoreIfExists)."""

    path: Path
    rel_path: str
    text: str = ""

    def to_json(self) -> dict[str, object]:
        return {"path": self.rel_path, "text": self.text}


@dataclass(frozen=True, slots=True)
class Fix:
    """A change that resolves a diagnostic. File creations apply before the edits."""

    title: str
    edits: tuple[TextEdit, ...] = ()
    creates: tuple[CreateFile, ...] = ()
    #: Safe fixes only add text, or remove an exact duplicate: ``memdir lint --fix`` applies
    #: them unattended. Others are offered by the editor for a person to accept.
    safe: bool = False

    def to_json(self) -> dict[str, object]:
        data: dict[str, object] = {"title": self.title, "safe": self.safe}
        if self.creates:
            data["creates"] = [c.to_json() for c in self.creates]
        data["edits"] = [e.to_json() for e in self.edits]
        return data


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One finding: where, which rule, how bad, why it matters to the agent, and a fix."""

    #: Absolute path of the file (MEMORY.md or a topic file).
    path: Path
    #: ``/``-separated path relative to the memory dir.
    rel_path: str
    span: Span
    code: str
    severity: Severity
    message: str
    fix: Fix | None = None

    def sort_key(self) -> tuple[str, int, int, str]:
        return (self.rel_path, self.span.start_line, self.span.start_col, self.code)

    def to_json(self) -> dict[str, object]:
        """The public JSON shape (1-based, end exclusive); ``fix`` only when there is one."""
        data: dict[str, object] = {"path": self.rel_path, **_position(self.span)}
        data["code"] = self.code
        data["severity"] = self.severity
        data["message"] = self.message
        if self.fix is not None:
            data["fix"] = self.fix.to_json()
        return data
