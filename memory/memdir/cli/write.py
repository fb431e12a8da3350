"""``memdir tool`` and ``memdir extract``: the write path from the command line.

``memdir tool '<json>'`` executes one API memory tool command (``memory_20250818``) on a memory
dir and prints the tool's result text exactly as the API would return it: exit 0 on success, 1
when the result is an error, 2 when the input is not a memory command at all. ``memdir extract``
runs the extraction agent on a Claude Code transcript; ``--dry-run`` shows the writes it would
make, with diffs, and writes nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from memdir.cli.common import CliError, add_dir_argument, add_json_argument, resolve_dir

#: ``memdir extract`` exit code when another extraction holds the dir (EX_TEMPFAIL: try later).
EXIT_BUSY = 75


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
    tool.set_defaults(func=cmd_tool)

    extract = subparsers.add_parser(
        "extract",
        help="extract memories from a Claude Code session transcript (calls the model)",
        description=(
            "Run the extraction agent on a transcript (JSONL). Skipped when the last turn "
            "already wrote memory; one extraction per memory dir at a time. Exit 0 when it "
            f"completed or was skipped, 1 on an error, {EXIT_BUSY} when another extraction "
            "is running."
        ),
    )
    extract.add_argument("transcript", type=Path, help="the session transcript (.jsonl)")
    add_dir_argument(extract)
    extract.add_argument(
        "--project",
        metavar="P",
        type=Path,
        help="project root the agent may read (default: the transcript's working directory)",
    )
    extract.add_argument("--model", metavar="M", help="model (default: a Sonnet-class model)")
    extract.add_argument(
        "--dry-run", action="store_true", help="show the writes it would make; write nothing"
    )
    add_json_argument(extract)
    extract.set_defaults(func=cmd_extract)


def cmd_tool(args: argparse.Namespace) -> int:
    directory = resolve_dir(args.dir)
    raw = sys.stdin.read() if args.command_json == "-" else args.command_json
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise CliError(f"the command is not valid JSON: {exc}") from None
    # Imported here: the SDK is heavy and most subcommands never need it.
    from memdir.memory_tool import InvalidCommandError, MemdirMemoryTool, parse_command

    try:
        parse_command(data)
    except InvalidCommandError as exc:
        raise CliError(str(exc)) from None
    result = MemdirMemoryTool(directory).run(data)
    print(result.text)
    return 1 if result.is_error else 0


def cmd_extract(args: argparse.Namespace) -> int:
    transcript: Path = args.transcript.expanduser()
    if not transcript.is_file():
        raise CliError(f"no such transcript: {transcript}")
    directory = resolve_dir(args.dir)
    project: Path | None = args.project
    if project is not None:
        project = project.expanduser()
        if not project.is_dir():
            raise CliError(f"no such project directory: {project}")
    from memdir.extract import dumps, extract, format_result

    result = extract(
        transcript, directory, project_root=project, model=args.model, dry_run=args.dry_run
    )
    if args.json:
        print(dumps(result))
    else:
        print(format_result(result))
    if result.status == "busy":
        return EXIT_BUSY
    return 1 if result.status == "error" else 0
