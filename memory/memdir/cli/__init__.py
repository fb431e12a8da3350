"""The ``memdir`` command line.

Each subcommand lives in its own module with a ``register(subparsers)`` function. User mistakes
(a missing directory, a bad argument, a file outside the memory dir) are one line on stderr and
exit code 2, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from memdir import __version__
from memdir.cli import core, lint, recall, write
from memdir.cli.common import CliError, OneLineParser

_MODULES = (core, recall, write, lint)


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="memdir",
        description="Lint, inspect and recall agent memory directories (Claude Code auto memory).",
    )
    parser.add_argument("--version", action="version", version=f"memdir {__version__}")
    subparsers = parser.add_subparsers(
        dest="command", metavar="COMMAND", parser_class=OneLineParser
    )
    subparsers.required = True
    for module in _MODULES:
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.func(args)
    except CliError as exc:
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
