"""``memdir where``: the memory dir the agent uses for a project path."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from memdir.faces.cli.common import CliError, add_json_argument, add_target_argument, print_json


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    where = subparsers.add_parser("where", help="print the memory dir of a project path")
    where.add_argument("path", nargs="?", type=Path, help="project path (default: current dir)")
    add_json_argument(where)
    add_target_argument(where)
    where.set_defaults(func=cmd_where)


def cmd_where(args: argparse.Namespace) -> int:
    from memdir.agent.paths import locate_memory_dir
    from memdir.target import DEFAULT_TARGET, get_target

    path: Path | None = args.path
    if path is not None and not path.expanduser().exists():
        raise CliError(f"no such path: {path}")
    # The `target` setting lives in the memory dir this command is looking for: only --target.
    target = get_target(args.target) if args.target else DEFAULT_TARGET
    location = locate_memory_dir(path.expanduser() if path else None, target=target)
    if args.json:
        print_json(location.to_json())
        return 0
    for note in location.notes:
        print(f"memdir where: note: {note}", file=sys.stderr)
    if location.memory_dir is None:
        raise CliError(f"no memory dir matches {location.prefix_pattern} yet")
    print(location.memory_dir)
    return 0
