"""Settings to rules: which codes run, at which severity, in which recall mode.

One :class:`LintContext` is resolved from :class:`memdir.config.Settings` (``memdir.toml``,
``[tool.memdir]``, or the editor's settings) and handed to every rule, so rules never read
settings themselves. ``--select``/``--ignore`` on the command line are merged here too.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from memdir import constants as C
from memdir.config import Settings
from memdir.lint.diagnostic import Diagnostic, Fix, Severity
from memdir.lint.rules import RULES, rule_enabled
from memdir.model import Span
from memdir.secrets import redact

if TYPE_CHECKING:
    from memdir.agent.instructions import ReadByInstructions
    from memdir.project.lookup import Project


@dataclass(frozen=True)
class LintContext:
    """What every rule needs besides the files: settings resolved to codes and severities."""

    root: Path
    enabled: frozenset[str]
    severities: Mapping[str, Severity]
    line_limit: int = C.INDEX_LINE_LIMIT
    prefetch_mode: bool = False
    #: The project the memories cite (MEM117, MEM118); None: those rules find nothing.
    project: Project | None = None
    #: The day the rules judge dates against (MEM119, MEM120): an input, so a test can freeze it;
    #: the real local date when the CLI or the server makes the context.
    today: dt.date = field(default_factory=dt.date.today)
    verify_after_days: int = 180
    #: Set when the agent reads the directory on the project's instructions, not as its auto
    #: memory: the rules that model auto memory's loading are left out (``Rule.auto_memory_only``).
    reading: ReadByInstructions | None = None
    #: The root of the project the directory belongs to, when known (the project of the agent's
    #: own memory dir, ``--project``, the editor's): where the agent works, so a link MEMORY.md
    #: writes from there is followed from there (MEM005).
    project_root: Path | None = None

    @property
    def working_root(self) -> Path | None:
        """Where the agent opens a path MEMORY.md writes from the project's root: the project
        whose instructions name the directory, else the directory's project when known."""
        return self.reading.project_root if self.reading is not None else self.project_root

    @classmethod
    def from_settings(
        cls, root: Path, settings: Settings, reading: ReadByInstructions | None = None
    ) -> LintContext:
        prefetch = settings.recall_mode == "prefetch"
        enabled: set[str] = set()
        severities: dict[str, Severity] = {}
        for code, rule in RULES.items():
            if not rule_enabled(settings, code):
                continue
            if reading is not None and rule.auto_memory_only:
                continue
            severity: Severity = rule.severity_in(settings.recall_mode)
            override = settings.severity.get(code)
            if override is not None and override != "off":
                severity = override
            enabled.add(code)
            severities[code] = severity
        return cls(
            root,
            frozenset(enabled),
            severities,
            settings.index_line_limit,
            prefetch,
            verify_after_days=settings.verify_after_days,
            reading=reading,
        )

    def on(self, code: str) -> bool:
        return code in self.enabled

    def diag(
        self, code: str, path: Path, rel: str, span: Span, message: str, fix: Fix | None = None
    ) -> Diagnostic:
        # Messages and fix titles quote memory text (a cited name, a type, an entry's key), and
        # reach JSON, SARIF and the editor: a credential in that text must not (see secrets).
        if fix is not None:
            title = _shown(fix.title)
            if title != fix.title:
                fix = replace(fix, title=title)
        return Diagnostic(path, rel, span, code, self.severities[code], _shown(message), fix)

    @cached_property
    def index_path(self) -> Path:
        # One Path for every finding on MEMORY.md (hundreds per edit of a large index).
        return self.root / C.INDEX_FILENAME


#: Text -> the same text redacted. Each edit of MEMORY.md makes its findings' messages again,
#: identical but for the edited lines: looking them up costs a hash, scanning them a few
#: microseconds each (milliseconds per edit in a large dir). Cleared when full.
_SHOWN: dict[str, str] = {}
_SHOWN_LIMIT = 1 << 16


def _shown(text: str) -> str:
    """``text`` as it may be shown: :func:`memdir.secrets.redact`, remembered."""
    safe = _SHOWN.get(text)
    if safe is None:
        if len(_SHOWN) >= _SHOWN_LIMIT:
            _SHOWN.clear()
        safe = _SHOWN[text] = redact(text)
    return safe


def with_cli_codes(
    settings: Settings,
    select: Sequence[str] | None,
    ignore: Sequence[str] | None,
    preview: bool = False,
) -> Settings:
    """Command-line codes over the configured ones: ``--select`` replaces, ``--ignore`` adds,
    ``--preview`` turns the preview rules on (it never turns them off)."""
    if preview and not settings.preview:
        settings = replace(settings, preview=True)
    if select:
        settings = replace(settings, select=tuple(select))
    if ignore:
        settings = replace(settings, ignore=(*settings.ignore, *ignore))
    return settings
