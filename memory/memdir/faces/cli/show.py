"""``memdir show``: exactly what path B injects for one topic file."""

from __future__ import annotations

import argparse

from memdir import constants as C
from memdir.faces.cli.common import (
    CliError,
    add_dir_argument,
    add_json_argument,
    add_target_argument,
    print_json,
    resolve_dir,
    resolve_inside,
    resolve_target,
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    show = subparsers.add_parser("show", help="print exactly what path B injects for one file")
    show.add_argument(
        "file", metavar="FILE", help="topic file, relative to the memory dir or absolute"
    )
    add_dir_argument(show)
    add_target_argument(show)
    add_json_argument(show)
    show.set_defaults(func=cmd_show)


def cmd_show(args: argparse.Namespace) -> int:
    from memdir.faces.projections import cli_json, memory_text
    from memdir.recall.surface import surface_file

    directory = resolve_dir(args)
    path = resolve_inside(directory, args.file)
    if path.name == C.INDEX_FILENAME:
        raise CliError(
            "MEMORY.md is the index (path A, see `memdir index`), never surfaced on path B"
        )
    try:
        memory = surface_file(path, directory, target=resolve_target(args.target, directory))
    except OSError as exc:
        raise CliError(str(exc)) from exc
    if args.json:
        print_json(cli_json(memory_text(memory)))
        return 0
    print(memory.text)
    return 0
