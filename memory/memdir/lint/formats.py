"""Output formats of ``memdir lint``: text, json, sarif (2.1.0) and github annotations.

Positions are printed 1-based, ends exclusive, columns in code points (SARIF says so with
``columnKind: unicodeCodePoints``). The JSON shape is a public contract: an array of objects with
``path`` (relative to the memory dir, ``/``-separated), ``line``, ``column``, ``end_line``,
``end_column``, ``code``, ``severity``, ``message`` and ``fix`` when there is one; with several
directories each object also names its ``root``. Text, SARIF and GitHub output name a file so
that whoever reads it can open it: relative to a base directory the caller passes (the working
directory for the command line, the memory dir for the MCP tool) when it is inside, else absolute.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from memdir import __version__
from memdir.agent.paths import display_path
from memdir.lint.diagnostic import Diagnostic
from memdir.lint.rules import RULES
from memdir.lint.state import LintResult

FORMATS = ("text", "json", "sarif", "github")
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note", "hint": "note"}
_GITHUB_LEVEL = {"error": "error", "warning": "warning", "info": "notice", "hint": "notice"}
#: The id of SARIF's note for a directory left alone (another agent's memory).
NOTICE_ID = "not-claude-code-memory"


@dataclass(frozen=True)
class Section:
    """One linted directory, or one left alone: ``notice`` says why (another agent's memory,
    :func:`memdir.agent.formats.notice`), and ``result`` is then empty."""

    result: LintResult
    notice: str | None = None


def _relative(path: Path, base: Path) -> Path | None:
    """``path`` relative to the directory ``base`` when it lies there (as written), else None."""
    return path.relative_to(base) if path.is_relative_to(base) else None


def fixable(diagnostic: Diagnostic) -> bool:
    """Whether ``memdir lint --fix`` fixes this finding (it applies safe fixes only)."""
    return diagnostic.fix is not None and diagnostic.fix.safe


def format_text(sections: Sequence[Section], relative_to: Path | None) -> str:
    """``path:line:col: severity CODE [*] message``, one per line, ruff style: ``[*]`` marks
    what ``--fix`` fixes. Paths as :func:`display_path` names them."""
    lines = [
        f"{display_path(d.path, relative_to)}:{d.span.start_line + 1}:{d.span.start_col + 1}: "
        f"{d.severity} {d.code} {'[*] ' if fixable(d) else ''}{d.message}"
        for section in sections
        for d in section.result.diagnostics
    ]
    return "".join(f"{line}\n" for line in lines)


def format_json(sections: Sequence[Section]) -> str:
    import json  # here, like in format_sarif: the text output (the default) needs none

    several = len(sections) > 1
    items: list[dict[str, object]] = []
    for section in sections:
        for diagnostic in section.result.diagnostics:
            item = diagnostic.to_json()
            if several:
                item["root"] = str(section.result.root)
            items.append(item)
    return json.dumps(items, ensure_ascii=False, indent=2) + "\n"


def format_sarif(sections: Sequence[Section], cwd: Path | None = None) -> str:
    """A SARIF 2.1.0 log with one run; paths relative to ``cwd`` (the checkout) when inside it."""
    base = Path(os.path.abspath(cwd or Path.cwd()))
    rule_ids = list(RULES)
    rules = [
        {
            "id": rule.code,
            "name": rule.name,
            "shortDescription": {"text": rule.summary},
            "fullDescription": {"text": f"{rule.summary} {rule.why}"},
            "help": {"text": f"{rule.why} Fix: {rule.remedy}"},
            "defaultConfiguration": {"level": _SARIF_LEVEL[rule.severity]},
            "properties": {"scope": rule.scope, "fixable": rule.fixable},
        }
        for rule in RULES.values()
    ]
    results: list[dict[str, object]] = []
    for section in sections:
        for d in section.result.diagnostics:
            relative = _relative(d.path, base)
            location: dict[str, object] = (
                {"uri": relative.as_posix(), "uriBaseId": "%SRCROOT%"}
                if relative is not None
                else {"uri": d.path.as_uri()}
            )
            result: dict[str, object] = {
                "ruleId": d.code,
                "ruleIndex": rule_ids.index(d.code),
                "level": _SARIF_LEVEL[d.severity],
                "message": {"text": d.message},
                "locations": [
                    {
                        "physicalLocation": {
                            "artifactLocation": location,
                            "region": {
                                "startLine": d.span.start_line + 1,
                                "startColumn": d.span.start_col + 1,
                                "endLine": d.span.end_line + 1,
                                "endColumn": d.span.end_col + 1,
                            },
                        }
                    }
                ],
            }
            # A fix that creates or deletes a file is more than SARIF's text replacements.
            if d.fix is not None and d.fix.edits and not d.fix.creates and not d.fix.deletes:
                result["fixes"] = [
                    {
                        "description": {"text": d.fix.title},
                        "artifactChanges": [
                            {
                                "artifactLocation": location,
                                "replacements": [
                                    {
                                        "deletedRegion": {
                                            "startLine": e.span.start_line + 1,
                                            "startColumn": e.span.start_col + 1,
                                            "endLine": e.span.end_line + 1,
                                            "endColumn": e.span.end_col + 1,
                                        },
                                        "insertedContent": {"text": e.new_text},
                                    }
                                    for e in d.fix.edits
                                ],
                            }
                        ],
                    }
                ]
            results.append(result)
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "memdir",
                        "version": __version__,
                        "rules": rules,
                    }
                },
                "originalUriBaseIds": {"%SRCROOT%": {"uri": base.as_uri() + "/"}},
                "columnKind": "unicodeCodePoints",
                "results": results,
                **_sarif_notices(sections, base),
            }
        ],
    }
    import json

    return json.dumps(log, ensure_ascii=False, indent=2) + "\n"


def _directory_uri(root: Path, base: Path) -> str:
    relative = _relative(root, base)
    return relative.as_posix() if relative is not None else root.as_uri()


def _sarif_notices(sections: Sequence[Section], base: Path) -> dict[str, object]:
    """A directory left alone, as SARIF says what a tool did not do: a note in the run's
    invocation (``toolExecutionNotifications``), with the directory as its location."""
    notes = [
        {
            "level": "note",
            "descriptor": {"id": NOTICE_ID},
            "message": {"text": section.notice},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": _directory_uri(section.result.root, base)}
                    }
                }
            ],
        }
        for section in sections
        if section.notice is not None
    ]
    if not notes:
        return {}
    return {"invocations": [{"executionSuccessful": True, "toolExecutionNotifications": notes}]}


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def format_github(sections: Sequence[Section], cwd: Path | None = None) -> str:
    """GitHub Actions workflow commands: ``::warning file=…,line=…::message``."""
    base = Path(os.path.abspath(cwd or Path.cwd()))
    lines: list[str] = []
    for section in sections:
        if section.notice is not None:
            where = _relative(section.result.root, base)
            shown = where.as_posix() if where is not None else str(section.result.root)
            lines.append(
                f"::notice title={_escape_property(f'memdir: {shown}')}::"
                f"{_escape_data(section.notice)}"
            )
        for d in section.result.diagnostics:
            relative = _relative(d.path, base)
            file = relative.as_posix() if relative is not None else str(d.path)
            props = (
                f"file={_escape_property(file)},line={d.span.start_line + 1},"
                f"col={d.span.start_col + 1},endLine={d.span.end_line + 1},"
                f"endColumn={d.span.end_col + 1},title={d.code}"
            )
            lines.append(f"::{_GITHUB_LEVEL[d.severity]} {props}::{_escape_data(d.message)}")
    return "".join(f"{line}\n" for line in lines)


def render(
    fmt: str, sections: Sequence[Section], cwd: Path | None = None, absolute_paths: bool = False
) -> str:
    """Output in format ``fmt``; ``absolute_paths`` names every file in text output absolutely."""
    if fmt == "json":
        return format_json(sections)
    if fmt == "sarif":
        return format_sarif(sections, cwd)
    if fmt == "github":
        return format_github(sections, cwd)
    base = Path(os.path.abspath(cwd or Path.cwd()))
    return format_text(sections, None if absolute_paths else base)
