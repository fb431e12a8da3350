"""memdir lint: every way a memory becomes invisible, wrong or unsafe, as diagnostics.

One rule engine for the CLI (``memdir lint``) and the language server. The pieces:

* :mod:`~memdir.lint.diagnostic`: :class:`Diagnostic` and :class:`Fix` as plain data;
* :mod:`~memdir.lint.rules`: the rules by area, each code's metadata beside its check, and the
  registry ``RULES`` of the stable codes (MEM001-MEM007, MEM101-MEM121);
* :mod:`~memdir.lint.engine`: settings resolved to the codes and severities that apply;
* :mod:`~memdir.lint.state`: :class:`DirState`, the incremental per-directory cache;
* :mod:`~memdir.lint.fix`: applying fixes atomically; :mod:`~memdir.lint.formats`: output.

Typical use::

    state = DirState(memory_dir, load_settings(memory_dir))
    state.refresh()                      # read what changed on disk
    state.update(path, editor_text)      # or: one file changed in the editor
    result = state.lint()                # every diagnostic, plus which files changed
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memdir.lint.diagnostic import CreateFile, Diagnostic, Fix, Severity, TextEdit
    from memdir.lint.engine import LintContext
    from memdir.lint.fix import FixReport, apply_fixes, apply_text_edits
    from memdir.lint.rules import ALL_CODES, RULES, Rule
    from memdir.lint.state import DirState, LintResult, lint_directory

# Exported names load their module on first use: `import memdir.lint.diagnostic` (what the CLI
# and the server import first) must not pull in the whole engine.
_EXPORTS = {
    "ALL_CODES": "rules",
    "RULES": "rules",
    "Rule": "rules",
    "CreateFile": "diagnostic",
    "Diagnostic": "diagnostic",
    "Fix": "diagnostic",
    "Severity": "diagnostic",
    "TextEdit": "diagnostic",
    "LintContext": "engine",
    "FixReport": "fix",
    "apply_fixes": "fix",
    "apply_text_edits": "fix",
    "DirState": "state",
    "LintResult": "state",
    "lint_directory": "state",
}
__all__ = [
    "ALL_CODES",
    "RULES",
    "CreateFile",
    "Diagnostic",
    "DirState",
    "Fix",
    "FixReport",
    "LintContext",
    "LintResult",
    "Rule",
    "Severity",
    "TextEdit",
    "apply_fixes",
    "apply_text_edits",
    "lint_directory",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'memdir.lint' has no attribute {name!r}")
    return getattr(importlib.import_module(f"memdir.lint.{module}"), name)
