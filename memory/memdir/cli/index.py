"""``memdir index``: exactly what path A injects of MEMORY.md, with the cap summary."""

from __future__ import annotations

import argparse
import sys

from memdir import constants as C
from memdir.cli.common import (
    add_dir_argument,
    add_json_argument,
    print_json,
    resolve_dir,
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    index = subparsers.add_parser(
        "index", help="print exactly what path A injects of MEMORY.md, with the cap summary"
    )
    add_dir_argument(index)
    add_json_argument(index)
    index.set_defaults(func=cmd_index)


def cmd_index(args: argparse.Namespace) -> int:
    from memdir.index import load_index

    directory = resolve_dir(args.dir)
    index = load_index(directory)
    load = index.load
    cut = [
        {"line": e.line + 1, "title": e.title, "path": e.path, "raw": e.raw}
        for e in index.cut_entries
    ]
    if args.json:
        print_json(
            {
                "path": str(index.path),
                "exists": index.exists,
                "text": load.text,
                "lines": load.line_count,
                "chars": load.char_count,
                "loaded_lines": load.loaded_lines,
                "loaded_chars": load.loaded_chars,
                "max_lines": C.INDEX_MAX_LINES,
                "max_chars": C.INDEX_MAX_CHARS,
                "truncated": load.truncated,
                "reason": load.reason,
                "entries": len(index.entries),
                "cut_entries": cut,
            }
        )
        return 0
    if not index.exists:
        print(
            f"memdir index: note: {index.path} does not exist; path A injects nothing",
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
        print(f"-- truncated: {load.reason}; {len(cut)} entries never loaded:", file=sys.stderr)
        for item in cut:
            print(f"--   line {item['line']}: {item['raw']}", file=sys.stderr)
    return 0
