"""``memdir lint``: check memory directories for everything that hides, breaks or leaks a memory.

Exit codes: 1 when any error or warning is reported, 0 otherwise (or with ``--exit-zero``), 2 for
usage errors (a missing directory, an unknown code, an unreadable configuration file). The lint
engine is imported only when the command runs, so other commands do not pay for it.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from memdir.faces.cli.common import (
    CliError,
    add_any_format_argument,
    add_dir_argument,
    existing_dir,
    given_dirs,
    project_memory_dir,
)

if TYPE_CHECKING:
    from memdir.lint.diagnostic import Diagnostic

_FORMATS = ("text", "json", "sarif", "github")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    lint = subparsers.add_parser(
        "lint",
        help="check memory dirs for invisible, broken or unsafe memories",
        description=(
            "Check memory directories: index entries past the load cap or pointing nowhere, "
            "topic files the index or the prefetch scan never reaches, broken frontmatter, "
            "vague descriptions, duplicates and secrets. `memdir rule` lists the codes and "
            "`memdir rule CODE` explains one."
        ),
    )
    add_dir_argument(lint, several=True)
    lint.add_argument("--format", choices=_FORMATS, default="text", help="output format")
    lint.add_argument(
        "--select", metavar="CODES", help="only these codes or prefixes, comma-separated (MEM1)"
    )
    lint.add_argument("--ignore", metavar="CODES", help="skip these codes or prefixes")
    lint.add_argument(
        "--preview",
        action="store_true",
        help="run the preview rules too: not yet right often enough on real memory dirs to be "
        "on by default (`memdir rule` marks them; as `preview = true` in memdir.toml)",
    )
    lint.add_argument(
        "--fix",
        action="store_true",
        help="apply safe fixes (add orphans to the index, drop exact duplicate entries, add "
        "frontmatter to a file that states its type, correct a misspelled type) and report what "
        "is left",
    )
    lint.add_argument(
        "--exit-zero", action="store_true", help="exit 0 even when problems are found"
    )
    lint.add_argument(
        "--project",
        type=Path,
        metavar="ROOT",
        help="the project the memories cite: check their paths and identifiers against it "
        "(MEM117, MEM118: preview rules, run with --preview; default: the project of the "
        "agent's memory dir when no DIR is given, else not checked)",
    )
    add_any_format_argument(
        lint,
        "check it (and with --fix, fix it)",
        "; and check a directory the project's instructions name as auto memory, with every "
        "rule (as `any_format = true`)",
    )
    lint.add_argument(
        "--absolute-paths",
        action="store_true",
        help="print absolute file paths (default: relative to the working directory for files "
        "inside it, else absolute)",
    )
    lint.set_defaults(func=cmd_lint)


def _codes(value: str | None, option: str) -> list[str]:
    from memdir.lint.rules import ALL_CODES, unknown_codes

    if value is None:
        return []
    codes = [c.strip().upper() for c in value.split(",") if c.strip()]
    unknown = unknown_codes(codes)
    if unknown:
        raise CliError(
            f"unknown code {unknown[0]} in {option} (codes are {ALL_CODES[0]} ... {ALL_CODES[-1]})"
        )
    return codes


def _targets(args: argparse.Namespace) -> list[tuple[Path, Path | None]]:
    """(memory dir, project root) for each directory to lint: a DIR's project is not known."""
    given = given_dirs(args)
    if not given:
        return [project_memory_dir()]
    return [(existing_dir(value), None) for value in given]


_CITATION_CODES = ("MEM117", "MEM118")


def _project_root(value: Path | None) -> Path | None:
    if value is None:
        return None
    root = value.expanduser()
    if not root.is_dir():
        raise CliError(f"--project: not a directory: {value}")
    return Path(os.path.abspath(root))


def cmd_lint(args: argparse.Namespace) -> int:
    # A run builds a few objects per file that live until it ends: the cyclic collector would
    # only walk them again and again, to free nothing (docs/performance.md, "Lint speed").
    # Restored for callers that run the command in process (tests).
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _run(args)
    finally:
        if enabled:
            gc.enable()


def _run(args: argparse.Namespace) -> int:
    from memdir.agent.formats import declined
    from memdir.agent.paths import display_path
    from memdir.config import load_settings
    from memdir.lint.diagnostic import FAILING
    from memdir.lint.engine import with_cli_codes
    from memdir.lint.formats import Section, render
    from memdir.lint.rules import expand_codes, preview_selections_ignored, rule_enabled
    from memdir.lint.state import DirState, LintResult

    select = _codes(args.select, "--select")
    ignore = _codes(args.ignore, "--ignore")
    # Printed paths are for a person to follow from where they ran the command.
    cwd = Path(os.path.abspath(Path.cwd()))
    relative_to = None if args.absolute_paths else cwd
    explicit_project = _project_root(args.project)
    sections: list[Section] = []
    unchecked = False
    warned: set[str] = set()
    for directory, project_root in _targets(args):
        settings = with_cli_codes(
            load_settings(directory, project_root), select, ignore, args.preview
        )
        if settings.load_error is not None:
            raise CliError(f"cannot read settings: {settings.load_error}")
        if args.any_format:
            settings = replace(settings, any_format=True)
        for error in settings.errors:
            print(f"memdir lint: warning: {settings.source}: {error}", file=sys.stderr)
        for code in preview_selections_ignored(settings):
            if code not in warned:
                warned.add(code)
                print(
                    f"memdir lint: warning: selecting {code} has no effect: it is a preview "
                    "rule, and preview is off (pass --preview, or set preview = true)",
                    file=sys.stderr,
                )
        notice = declined(directory, settings.any_format)
        if notice is not None:
            # Another agent's memory: no finding, nothing fixable, nothing written.
            print(
                f"memdir lint: notice: {display_path(directory, relative_to)}: {notice}",
                file=sys.stderr,
            )
            sections.append(Section(LintResult(directory, 0), notice))
            continue
        cited_root = explicit_project or project_root
        project = None
        citations_on = [code for code in _CITATION_CODES if rule_enabled(settings, code)]
        if citations_on:
            if cited_root is not None:
                from memdir.project.citations import cited_words
                from memdir.project.lookup import Project  # only with a project: keep lint light

                # The cited names are looked up in one pass, while git lists the project.
                words = cited_words(directory) if "MEM118" in citations_on else ()
                project = Project.load(cited_root, directory, words)
            else:
                unchecked = True
        state = DirState(directory, settings, project, project_root=cited_root)
        if state.context.reading is not None:
            from memdir.agent.instructions import notice as reading_notice

            print(
                f"memdir lint: notice: {display_path(directory, relative_to)}: "
                f"{reading_notice(state.context.reading)}",
                file=sys.stderr,
            )
        state.refresh()
        result = state.lint()
        if args.fix:
            from memdir.lint.fix import apply_fixes

            report = apply_fixes(result.diagnostics)
            for diagnostic in report.applied:
                assert diagnostic.fix is not None
                print(
                    f"fixed {display_path(diagnostic.path, relative_to)} ({diagnostic.code}): "
                    f"{diagnostic.fix.title}",
                    file=sys.stderr,
                )
            for diagnostic, reason in report.skipped:
                if diagnostic.fix is not None and diagnostic.fix.safe:
                    print(
                        f"not fixed {display_path(diagnostic.path, relative_to)} "
                        f"({diagnostic.code}): {reason}",
                        file=sys.stderr,
                    )
            if report.written:
                state.refresh()
                result = state.lint()
        sections.append(Section(result))

    if unchecked and select and set(_CITATION_CODES) & expand_codes(select):
        # Said when asked for: a note on every run of `memdir lint DIR` would be noise.
        print(
            "memdir lint: note: cited paths and identifiers (MEM117, MEM118) are not checked: "
            "the project is not known; pass --project ROOT",
            file=sys.stderr,
        )
    sys.stdout.write(render(args.format, sections, cwd, args.absolute_paths))
    sys.stdout.flush()
    diagnostics = [d for section in sections for d in section.result.diagnostics]
    if args.format == "text" and any(s.notice is None for s in sections):
        print(_summary(diagnostics, sum(s.result.files for s in sections)), file=sys.stderr)
    if args.exit_zero:
        return 0
    return 1 if any(d.severity in FAILING for d in diagnostics) else 0


def _summary(diagnostics: Sequence[Diagnostic], files: int) -> str:
    from memdir.lint.diagnostic import SEVERITY_ORDER
    from memdir.lint.formats import fixable

    if not diagnostics:
        return f"memdir lint: {files} topic files, no problems"
    counts = Counter(d.severity for d in diagnostics)
    parts = [
        f"{counts[s]} {s}{'s' if counts[s] != 1 and s in ('error', 'warning') else ''}"
        for s in SEVERITY_ORDER
        if counts[s]
    ]
    summary = f"memdir lint: {files} topic files, " + ", ".join(parts)
    fixes = sum(1 for d in diagnostics if fixable(d))
    if fixes:
        summary += f"\n[*] {fixes} fixable with `memdir lint --fix`"
    return summary
