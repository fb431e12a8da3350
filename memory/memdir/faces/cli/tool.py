"""``memdir tool``: one API memory tool command (``memory_20250818``) on a memory dir.

Prints the tool's result text as the API would return it, followed by memdir's clause on what it
did to MEMORY.md, and any warning (MEMORY.md left alone, an interrupted write's journal refused)
on stderr: exit 0 on success, 1 when the
result is an error (a write whose MEMORY.md update failed is one), 2 when the input is not a
memory command at all.
"""

from __future__ import annotations

import argparse
import json
import sys

from memdir.faces.cli.common import (
    CliError,
    add_any_format_argument,
    add_dir_argument,
    refuse_other_format,
    resolve_dir,
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    tool = subparsers.add_parser(
        "tool",
        help="run one API memory tool command (memory_20250818) on a memory dir",
        description=(
            "Execute a memory tool command over the memory dir mapped to /memories and print "
            "the tool's result. Exit 0 on success, 1 when the result is an error, 2 for input "
            "that is not a memory command."
        ),
    )
    tool.add_argument(
        "command_json",
        metavar="JSON",
        help='the command, e.g. \'{"command": "view", "path": "/memories"}\' ("-": read stdin)',
    )
    add_dir_argument(tool)
    add_any_format_argument(tool, "write")
    tool.set_defaults(func=cmd_tool)


def cmd_tool(args: argparse.Namespace) -> int:
    directory = resolve_dir(args)
    raw = sys.stdin.read() if args.command_json == "-" else args.command_json
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise CliError(f"the command is not valid JSON: {exc}") from None
    # Imported here: the writer behind it is more than most subcommands need.
    from memdir.writing.memory_commands import WRITE_COMMANDS
    from memdir.writing.memory_tool import InvalidCommandError, MemdirMemoryTool, parse_command

    try:
        command = parse_command(data)
    except InvalidCommandError as exc:
        raise CliError(str(exc)) from None
    if command.command in WRITE_COMMANDS:
        # Another agent's memory is read (view), never written in Claude Code's format.
        refuse_other_format(args, directory)
    result = MemdirMemoryTool(directory).execute(command)
    print(result.text)
    # stdout is the API's text and memdir's clause on the index; the rest goes to stderr.
    for warning in result.warnings:
        print(f"memdir tool: warning: {warning}", file=sys.stderr)
    return 1 if result.is_error else 0
