"""Helpers shared by the subcommands: errors, the memory dir argument, JSON output."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:
    from memdir.target import Target


class CliError(Exception):
    """A user mistake: reported as one line on stderr with exit code 2."""


class OneLineParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def add_dir_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--dir",
        metavar="D",
        type=Path,
        help="memory directory (default: the agent's memory dir of the current project)",
    )


def add_json_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="machine-readable JSON output")


def add_target_argument(parser: argparse.ArgumentParser) -> None:
    from memdir.target import TARGETS

    parser.add_argument(
        "--target",
        metavar="T",
        choices=sorted(TARGETS),
        help="agent behaviour to reproduce: "
        + ", ".join(sorted(TARGETS))
        + " (default: the `target` setting, else the newest verified Claude Code release)",
    )


def resolve_target(value: str | None, directory: Path) -> Target:
    """``--target``, else the memory dir's ``target`` setting, else the default."""
    from memdir.config import load_settings
    from memdir.target import get_target

    if value is not None:
        return get_target(value)
    return load_settings(directory).agent_target


def resolve_dir(value: Path | None) -> Path:
    """The memory dir to work on: ``--dir`` or the current project's; it must exist."""
    if value is not None:
        directory = value.expanduser()
        if not directory.exists():
            raise CliError(f"no such directory: {directory}")
        if not directory.is_dir():
            raise CliError(f"not a directory: {directory}")
        # Absolute (not resolved) so injected paths read like the agent's, symlinks kept.
        return Path(os.path.abspath(directory))
    from memdir.paths import locate_memory_dir  # only without --dir: keep CLI startup light

    location = locate_memory_dir(Path.cwd())
    if location.memory_dir is None:
        raise CliError(location.notes[-1] if location.notes else "no memory dir for this project")
    if not location.memory_dir.is_dir():
        raise CliError(f"this project has no memory dir yet ({location.memory_dir}); pass --dir D")
    return location.memory_dir


def resolve_inside(directory: Path, name: str) -> Path:
    """A file named relative to the memory dir (or absolute), refusing anything outside it."""
    if "\x00" in name:
        raise CliError("file name contains a NUL byte")
    from memdir.paths import relative_inside

    candidate = Path(name).expanduser()
    if not candidate.is_absolute():
        candidate = directory / candidate
    if relative_inside(directory, candidate) is None:
        raise CliError(f"{name} is outside the memory dir {directory}")
    if not candidate.exists():
        raise CliError(f"no such file: {candidate}")
    if not candidate.is_file():
        raise CliError(f"not a file: {candidate}")
    return candidate


def print_json(data: object) -> None:
    import json  # here: `memdir lint` (which has its own formats) never needs it

    json.dump(data, sys.stdout, ensure_ascii=False, indent=2)
    sys.stdout.write("\n")
