"""Diagnostics as plain data: what the CLI prints and the language server publishes.

Positions are :class:`memdir.model.Span` values (0-based lines, code-point columns, exclusive
ends); the CLI adds one, the server converts columns to the client's encoding. A diagnostic's
fix is a :class:`memdir.fixes.model.Fix`, planned by :mod:`memdir.fixes.plan`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from memdir.config import Severity
from memdir.fixes.model import CreateFile, Fix, TextEdit, position_json
from memdir.model import Span

# The edit types live in memdir.fixes.model; these names stay importable from here.
__all__ = ["FAILING", "SEVERITY_ORDER", "CreateFile", "Diagnostic", "Fix", "Severity", "TextEdit"]

SEVERITY_ORDER: tuple[Severity, ...] = ("error", "warning", "info", "hint")
#: Severities that make ``memdir lint`` exit 1.
FAILING: frozenset[str] = frozenset(("error", "warning"))


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
        data: dict[str, object] = {"path": self.rel_path, **position_json(self.span)}
        data["code"] = self.code
        data["severity"] = self.severity
        data["message"] = self.message
        if self.fix is not None:
            data["fix"] = self.fix.to_json()
        return data
