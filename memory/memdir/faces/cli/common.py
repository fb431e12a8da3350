"""Helpers shared by the subcommands: errors, the memory dir argument, JSON output."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:
    from memdir.target import Target


class CliError(Exception):
    """A user mistake: reported as one line on stderr with exit code 2."""


class OneLineParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


class CommandParser(OneLineParser):
    """A subcommand's parser: its options may come before, between or after its positionals, as
    in git and ripgrep (``memdir search PATTERN --glob G DIR``). Plain argparse gives an
    optional positional nothing once an option stands between it and the one before, and then
    calls the later DIR unrecognized; intermixed parsing (the standard library's) does not."""

    _intermixing = False

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        nested = any(
            action.nargs in (argparse.PARSER, argparse.REMAINDER)
            for action in self._get_positional_actions()
        )
        if self._intermixing or nested or "--" in (args or ()):
            # Intermixed parsing calls back here for each of its two passes (up to Python
            # 3.12), cannot take a command that has subcommands (`memdir hook EVENT`), and
            # drops `--` (`memdir search -- -x DIR`), which plain parsing honours.
            return super().parse_known_args(args, namespace)
        self._intermixing = True
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._intermixing = False


_DIR_HELP = "memory directory (default: the agent's memory dir of the current project)"


def add_dir_argument(parser: argparse.ArgumentParser, *, several: bool = False) -> None:
    """The memory dir, taken the same way by every command: a positional ``DIR`` after the
    command's own positionals (``memdir search PATTERN [DIR]``: paths last, as grep, ripgrep and
    ruff take them), ``--dir DIR`` its alias. ``several``: ``DIR ...``, ``--dir`` repeatable."""
    parser.add_argument(
        "dir_args",
        nargs="*" if several else "?",
        type=Path,
        metavar="DIR",
        help=_DIR_HELP.replace("directory", "directories, one or more") if several else _DIR_HELP,
    )
    parser.add_argument(
        "--dir",
        dest="dir_options",
        metavar="DIR",
        type=Path,
        action="append" if several else "store",
        help="the same as DIR" + (" (repeatable)" if several else ""),
    )


def given_dirs(args: argparse.Namespace) -> list[Path]:
    """The memory dirs named on the command line (DIR or --dir), not yet checked; [] for none."""
    positional, option = args.dir_args, args.dir_options
    listed = [positional] if isinstance(positional, Path) else list(positional or [])
    options = [option] if isinstance(option, Path) else list(option or [])
    if listed and options:
        raise CliError("the memory dir is given both as DIR and with --dir: give it once")
    return listed or options


def resolve_dir(args: argparse.Namespace) -> Path:
    """The memory dir a command works on: DIR (or ``--dir``), else the current project's."""
    given = given_dirs(args)
    return existing_dir(given[0]) if given else project_memory_dir()[0]


def resolve_dirs(args: argparse.Namespace) -> list[Path]:
    """The memory dirs of a command that takes several: each DIR given, else the project's."""
    given = given_dirs(args)
    return [existing_dir(d) for d in given] if given else [project_memory_dir()[0]]


def existing_dir(value: Path) -> Path:
    """A memory dir named on the command line; it must exist."""
    directory = value.expanduser()
    if not directory.exists():
        raise CliError(f"no such directory: {directory}")
    if not directory.is_dir():
        raise CliError(f"not a directory: {directory}")
    # Absolute (not resolved) so injected paths read like the agent's, symlinks kept.
    return Path(os.path.abspath(directory))


def project_memory_dir() -> tuple[Path, Path | None]:
    """The agent's memory dir of the project containing the working directory, and that
    project's root: what every command works on when no DIR is given. It must exist."""
    from memdir.agent.paths import locate_memory_dir  # only without a DIR: keep CLI startup light

    location = locate_memory_dir(Path.cwd())
    if location.memory_dir is None:
        raise CliError(location.notes[-1] if location.notes else "no memory dir for this project")
    if not location.memory_dir.is_dir():
        raise CliError(f"this project has no memory dir yet ({location.memory_dir}); pass a DIR")
    return location.memory_dir, location.project_root


def shown(path: Path | str) -> str:
    """How every command names a file for a person: relative to the working directory when it
    lies there (``mem/MEMORY.md`` after ``memdir lint mem``), else absolute, as ruff does."""
    from memdir.agent.paths import display_path

    return display_path(Path(path), Path(os.path.abspath(Path.cwd())))


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


def resolve_inside(directory: Path, name: str) -> Path:
    """A file named relative to the memory dir (or absolute), refusing anything outside it."""
    if "\x00" in name:
        raise CliError("file name contains a NUL byte")
    from memdir.containment import relative_inside

    candidate = Path(name).expanduser()
    if not candidate.is_absolute():
        candidate = directory / candidate
    if relative_inside(directory, candidate) is None:
        raise CliError(f"{name} is outside the memory dir {shown(directory)}")
    if not candidate.exists():
        raise CliError(f"no such file: {shown(candidate)}")
    if not candidate.is_file():
        raise CliError(f"not a file: {shown(candidate)}")
    return candidate


def print_json(data: object) -> None:
    import json  # here: `memdir lint` (which has its own formats) never needs it

    json.dump(data, sys.stdout, ensure_ascii=False, indent=2)
    sys.stdout.write("\n")


def shorten(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else f"{text[: limit // 2]}…{text[-limit // 2 :]}"


def describe_os_error(exc: OSError) -> str:
    """``File name too long: aaaa…aa.md``: the reason, and the file's name kept short."""
    reason = exc.strerror or type(exc).__name__
    if exc.filename is None:
        return reason
    name = os.path.basename(os.fsdecode(exc.filename)) or os.fsdecode(exc.filename)
    return f"{reason}: {shorten(name)}"


def add_any_format_argument(parser: argparse.ArgumentParser, what: str, also: str = "") -> None:
    """``--any-format``: a command that writes (or checks) a memory dir refuses another agent's
    memory (:mod:`memdir.agent.formats`) unless given this or the ``any_format`` setting."""
    parser.add_argument(
        "--any-format",
        action="store_true",
        help=f"{what} even when the directory looks like another agent's memory (OpenClaw, "
        f"Hermes, a memory bank ...), which is otherwise left alone with a notice{also}",
    )


def refuse_other_format(args: argparse.Namespace, directory: Path) -> None:
    """Raise the notice as a usage error when ``directory`` holds another agent's memory and
    neither ``--any-format`` nor the directory's ``any_format`` setting forces the command."""
    from memdir.agent.formats import declined
    from memdir.config import load_settings

    if getattr(args, "any_format", False):
        return
    sentence = declined(directory, load_settings(directory).any_format)
    if sentence is not None:
        raise CliError(f"{shown(directory)}: {sentence}")
