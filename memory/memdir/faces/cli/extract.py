"""``memdir extract``: run the extraction agent on a Claude Code transcript.

``--dry-run`` shows the writes it would make, with diffs, and writes nothing.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from memdir.faces.cli.common import (
    CliError,
    add_any_format_argument,
    add_dir_argument,
    add_json_argument,
    refuse_other_format,
    resolve_dir,
    shown,
)

#: ``memdir extract`` exit code when another extraction holds the dir (EX_TEMPFAIL: try later).
EXIT_BUSY = 75


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    extract = subparsers.add_parser(
        "extract",
        help="extract memories from a Claude Code session transcript (calls the model)",
        description=(
            "Run the extraction agent on a transcript (JSONL). Skipped when the last turn "
            "already wrote memory; one extraction per memory dir at a time. Exit 0 when it "
            "completed or was skipped, 1 on an error, 2 for a usage error (such as no API key "
            f"configured), {EXIT_BUSY} when another extraction is running."
        ),
    )
    extract.add_argument(
        "transcript", metavar="TRANSCRIPT", type=Path, help="the session transcript (.jsonl)"
    )
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
    add_any_format_argument(extract, "extract into it")
    extract.set_defaults(func=cmd_extract)


def cmd_extract(args: argparse.Namespace) -> int:
    transcript: Path = args.transcript.expanduser()
    if not transcript.is_file():
        raise CliError(f"no such transcript: {transcript}")
    directory = resolve_dir(args)
    refuse_other_format(args, directory)
    project: Path | None = args.project
    if project is not None:
        project = project.expanduser()
        if not project.is_dir():
            raise CliError(f"no such project directory: {project}")
    from memdir.extract.loop import extract
    from memdir.extract.results import dumps, format_result
    from memdir.extras import require
    from memdir.recall.select import NO_CREDENTIALS

    require("anthropic", "extraction")  # a setup mistake, like no API key: one line, exit 2

    # The result carries the run's error and warnings, which are printed below; the module's
    # log records would say them a second time. A tool's fault (an ERROR) is still shown.
    handler = logging.StreamHandler()
    handler.setLevel(logging.ERROR)
    handler.setFormatter(logging.Formatter("memdir extract: %(message)s"))
    logger = logging.getLogger("memdir.extract.loop")
    logger.addHandler(handler)
    try:
        result = extract(
            transcript, directory, project_root=project, model=args.model, dry_run=args.dry_run
        )
    finally:
        logger.removeHandler(handler)
    if result.status == "error" and result.reason == NO_CREDENTIALS:
        raise CliError(NO_CREDENTIALS)  # a setup mistake, said as `memdir recall` says it
    if args.json:
        print(dumps(result))
    else:
        print(format_result(result, lambda path: shown(directory / path)))
    if result.status == "busy":
        return EXIT_BUSY
    return 1 if result.status == "error" else 0
