"""``memdir index``: exactly what path A injects of MEMORY.md, with the cap summary."""

from __future__ import annotations

import argparse
import sys

from memdir import constants as C
from memdir.faces.cli.common import (
    CliError,
    add_dir_argument,
    add_json_argument,
    add_target_argument,
    print_json,
    resolve_dir,
    resolve_target,
    shown,
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    index = subparsers.add_parser(
        "index", help="print exactly what path A injects of MEMORY.md, with the cap summary"
    )
    add_dir_argument(index)
    add_target_argument(index)
    add_json_argument(index)
    index.set_defaults(func=cmd_index)


def cmd_index(args: argparse.Namespace) -> int:
    from memdir.agent.index import load_index
    from memdir.faces.projections import cli_json, index_summary
    from memdir.textio import not_read

    directory = resolve_dir(args)
    index = load_index(directory, resolve_target(args.target, directory))
    refused = not_read(index.problems)
    if refused is not None:
        # Nothing read, so nothing to print as injected text: say why, as lint does.
        raise CliError(refused.message)
    load = index.load
    if args.json:
        print_json(cli_json(index_summary(directory, index, exists=index.exists)))
        return 0
    if not index.exists:
        print(
            f"memdir index: note: {shown(index.path)} does not exist; path A injects nothing",
            file=sys.stderr,
        )
        return 0
    sys.stdout.write(load.text + ("\n" if load.text else ""))
    sys.stdout.flush()
    # The summary goes to stderr so stdout stays exactly the injected text.
    summary = (
        f"{load.line_count}/{C.INDEX_MAX_LINES} lines · "
        f"{load.char_count:,}/{C.INDEX_MAX_CHARS:,} chars (UTF-16) · "
        f"{len(index.entries)} entries"
    )
    print(f"-- {summary}", file=sys.stderr)
    if load.truncated:
        cut = index.cut_entries
        print(f"-- truncated: {load.reason}; {len(cut)} entries never loaded:", file=sys.stderr)
        for entry in cut:
            print(f"--   {shown(index.path)}:{entry.line + 1}: {entry.raw}", file=sys.stderr)
    return 0
