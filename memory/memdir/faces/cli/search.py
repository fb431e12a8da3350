"""``memdir search``: lines of MEMORY.md and the topic files matching a regular expression."""

from __future__ import annotations

import argparse
import sys

from memdir.faces.cli.common import (
    CliError,
    add_dir_argument,
    add_json_argument,
    print_json,
    resolve_dir,
    shown,
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    search = subparsers.add_parser(
        "search",
        help="print the lines of the memory files matching a regular expression",
        description="Print `path:line:column: text` for each line of MEMORY.md and the topic "
        "files matching PATTERN (Python syntax), as the editor's search and the MCP tool find "
        "them. Paths are relative to the working directory when the file lies there, else "
        "absolute. Exit code 0 with matches, 1 without. A pattern that takes longer than 2 s "
        "on one file is an error (exit 2).",
    )
    search.add_argument("pattern", metavar="PATTERN", help="regular expression (Python syntax)")
    search.add_argument(
        "--glob",
        metavar="G",
        default="**/*.md",
        help="only files matching this glob; one without / matches file names in any folder "
        "(default: **/*.md)",
    )
    search.add_argument("-i", "--ignore-case", action="store_true", help="ignore case")
    add_dir_argument(search)
    add_json_argument(search)
    search.set_defaults(func=cmd_search)


def cmd_search(args: argparse.Namespace) -> int:
    from memdir.faces.projections import cli_json
    from memdir.search.grep import (
        InvalidPatternError,
        SlowPatternError,
        compile_pattern,
        glob_matcher,
        search_dir,
    )

    try:
        regex = compile_pattern(args.pattern, ignore_case=args.ignore_case)
    except InvalidPatternError as exc:
        raise CliError(f"PATTERN is not a valid regular expression: {exc}") from None
    try:
        glob_matcher(args.glob)
    except InvalidPatternError as exc:
        raise CliError(f"--glob: {exc}") from None
    directory = resolve_dir(args)
    try:
        found = search_dir(directory, regex, args.glob)
    except SlowPatternError as exc:
        raise CliError(exc.naming(shown(directory / exc.path))) from None
    if args.json:
        print_json({"matches": cli_json(found.matches), "truncated": found.truncated})
    else:
        for m in found.matches:
            print(m.grep_line(shown(directory / m.path)))
        if found.truncated:
            print(f"memdir search: stopped after {len(found.matches)} matches", file=sys.stderr)
    return 0 if found.matches else 1
