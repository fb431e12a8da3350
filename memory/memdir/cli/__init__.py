"""The ``memdir`` command line.

Each subcommand lives in its own module with a ``register(subparsers)`` function. User mistakes
(a missing directory, a bad argument, a file outside the memory dir, an extra not installed) are
one line on stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from memdir import __version__
from memdir.cli.common import CliError, OneLineParser
from memdir.extras import MissingExtraError

#: Subcommand modules, in the order ``--help`` lists them, with the commands each registers.
_MODULES = {
    "where": ("where",),
    "index": ("index",),
    "manifest": ("manifest",),
    "show": ("show",),
    "recall": ("recall",),
    "tool": ("tool",),
    "extract": ("extract",),
    "lint": ("lint",),
    "rule": ("rule",),
    "hook": ("hook",),
    "mcp": ("mcp",),
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole command line, or only the subcommand ``command`` (what a run of it parses:
    ``memdir lint`` need not import the other commands' modules)."""
    parser = OneLineParser(
        prog="memdir",
        description="Lint, inspect and recall agent memory directories (Claude Code auto memory).",
    )
    parser.add_argument("--version", action="version", version=f"memdir {__version__}")
    subparsers = parser.add_subparsers(
        dest="command", metavar="COMMAND", parser_class=OneLineParser
    )
    subparsers.required = True
    for name, commands in _MODULES.items():
        if command is None or command in commands:
            importlib.import_module(f"memdir.cli.{name}").register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    first = arguments[0] if arguments else None
    known = any(first in commands for commands in _MODULES.values())
    parser = build_parser(first if known else None)
    args = parser.parse_args(arguments)
    try:
        code: int = args.func(args)
    except (CliError, MissingExtraError) as exc:
        print(f"memdir {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # `memdir manifest | head` closes the pipe early; that is not an error.
        return 0
    return code


if __name__ == "__main__":
    raise SystemExit(main())
