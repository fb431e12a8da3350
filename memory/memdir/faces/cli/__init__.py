"""The ``memdir`` command line.

Each subcommand lives in its own module with a ``register(subparsers)`` function. User mistakes
(a missing directory, a bad argument, a file outside the memory dir, an extra not installed) are
one line on stderr and exit code 2, never a traceback; so is a file the file system refuses
(a name too long, permissions). A bug of memdir itself is one line asking for a report and exit
code 70, its traceback only with ``-v`` or ``MEMDIR_DEBUG=1``.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
from collections.abc import Sequence

from memdir import __version__
from memdir.extras import MissingExtraError
from memdir.faces.cli.common import (
    CliError,
    CommandParser,
    OneLineParser,
    describe_os_error,
    shorten,
)

#: Subcommand modules, in the order ``--help`` lists them, with the commands each registers.
_MODULES = {
    "where": ("where",),
    "index": ("index",),
    "manifest": ("manifest",),
    "show": ("show",),
    "search": ("search",),
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
    parser.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=0,
        help="on an internal error, print its traceback (also MEMDIR_DEBUG=1)",
    )
    subparsers = parser.add_subparsers(
        dest="command", metavar="COMMAND", parser_class=CommandParser
    )
    subparsers.required = True
    for name, commands in _MODULES.items():
        if command is None or command in commands:
            importlib.import_module(f"memdir.faces.cli.{name}").register(subparsers)
    return parser


#: Exit code of an internal error (a bug of memdir): sysexits' EX_SOFTWARE.
EXIT_INTERNAL = 70


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    first = arguments[0] if arguments else None
    known = any(first in commands for commands in _MODULES.values())
    parser = build_parser(first if known else None)
    args = parser.parse_args(arguments)
    command = f"memdir {args.command}"
    try:
        code: int = args.func(args)
    except (CliError, MissingExtraError) as exc:
        print(f"{command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # `memdir manifest | head` closes the pipe early; that is not an error.
        return 0
    except OSError as exc:
        # The file system refused (a name too long, permissions, a file that vanished): the
        # user can act on the reason and the name, not on a traceback.
        print(f"{command}: error: {describe_os_error(exc)}", file=sys.stderr)
        return 2
    except Exception as exc:
        # Last resort: a bug of ours. One line, the traceback only when asked for.
        if args.verbose or os.environ.get("MEMDIR_DEBUG", "") not in ("", "0"):
            traceback.print_exc()
        reason = shorten(f"{type(exc).__name__}: {exc}".splitlines()[0], 160)
        print(f"memdir: internal error: {reason}; please report it", file=sys.stderr)
        return EXIT_INTERNAL
    return code


if __name__ == "__main__":
    raise SystemExit(main())
