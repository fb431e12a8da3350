"""The state folder of a memory dir and the intent journal in it: memdir's per-user state
(:func:`dir_state`, under :func:`memdir.agent.paths.state_dir`, never in the memory dir), where
an operation writes its intent (:class:`WriteIntent`) before touching anything, so that the next
writer finishes it after a crash; every field of a journal passes the containment check
(:func:`intent_problem`) before anything is done with it."""

from __future__ import annotations

import contextlib
import json
import os
import posixpath
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from memdir import constants as C
from memdir.agent.paths import DIR_STATES_DIRNAME, dir_state_path, state_dir
from memdir.textio import kind_name
from memdir.writing.confine import resolve_path, split_path
from memdir.writing.files import TEMP_NAME
from memdir.writing.results import UnsafePathError, WriteError

#: The intent of the operation in progress (see "Recoverable" above), in the state folder.
JOURNAL_NAME: Final = "intent.json"
#: What older versions of memdir kept in the memory dir itself (the write lock, the journal,
#: the extraction lock). A repository can plant any of them, so none is opened, locked or acted
#: on any more; lint reports them (MEM122) so they can be deleted and untracked.
LEGACY_FILENAMES: Final = (".memdir.lock", ".memdir-intent.json", ".memdir-extract.lock")
#: How to fix a state folder memdir cannot use.
_STATE_HINT: Final = (
    "set XDG_STATE_HOME to a folder of yours where memdir may keep its locks and journals"
)
_MAX_JOURNAL_BYTES: Final = 64 * 1024


# --- the state folder ------------------------------------------------------------------------


def _private_folder(path: Path) -> None:
    """Make ``path`` a folder only this user can use (0700), or refuse it: a symlink, something
    else than a folder, or another user's folder could hand memdir's lock and journal to
    someone else."""
    with contextlib.suppress(FileExistsError):
        os.mkdir(path, 0o700)
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode):
        kind = kind_name(info.st_mode)
        raise WriteError(f"memdir's state folder {path} is {kind}, not a folder; {_STATE_HINT}")
    getuid = getattr(os, "getuid", None)
    if getuid is not None and info.st_uid != getuid():
        raise WriteError(
            f"memdir's state folder {path} belongs to another user (uid {info.st_uid}); "
            + _STATE_HINT
        )
    if info.st_mode & 0o077:
        os.chmod(path, 0o700)


def _home() -> Path:
    """The user's home ("~" itself when there is none: then only XDG_STATE_HOME can help)."""
    return Path(os.path.expanduser("~"))


def _state_base() -> Path:
    """memdir's per-user state dir, the same for every face of one user."""
    base = state_dir(os.environ, _home())
    if not base.is_absolute():
        raise WriteError(f"memdir finds no home folder to keep its state in; {_STATE_HINT}")
    return base


def dir_state(memory_dir: Path) -> Path:
    """memdir's own folder for ``memory_dir`` (:func:`memdir.agent.paths.dir_state_path`), where its
    write lock, journal and extraction lock live; made private (0700) when missing.

    Every folder from memdir's state dir down must be a real folder of this user's (not a
    symlink, not another user's), or the write is refused with a :class:`WriteError` naming
    the folder and the fix (``XDG_STATE_HOME``).
    """
    base = _state_base()
    place = dir_state_path(memory_dir, os.environ, _home())
    current = base
    try:
        base.parent.mkdir(parents=True, exist_ok=True)
        for current in (base, base / DIR_STATES_DIRNAME, place):
            _private_folder(current)
    except OSError as exc:
        raise WriteError(
            f"cannot use memdir's state folder {current}: {exc.strerror or exc}; {_STATE_HINT}"
        ) from exc
    return place


def discard_dir_state(memory_dir: Path) -> None:
    """Remove memdir's state folder of ``memory_dir`` (a dry run's private copy, gone for good)."""
    place = dir_state_path(memory_dir, os.environ, _home())
    with contextlib.suppress(OSError):
        if place.is_absolute() and stat.S_ISDIR(os.lstat(place).st_mode):
            shutil.rmtree(place)


def _clear_odd_entry(path: Path) -> None:
    """Remove whatever is at ``path`` in a state folder when it is not a regular file (a symlink,
    a FIFO): nothing memdir made, so nothing to follow, open or block on."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISREG(info.st_mode):
        if stat.S_ISDIR(info.st_mode):
            shutil.rmtree(path)
        else:
            os.unlink(path)


# --- the intent journal ----------------------------------------------------------------------


@dataclass(frozen=True)
class WriteIntent:
    """What an operation is about to do, written before it touches anything."""

    op: Literal["create", "write", "delete", "rename"]
    path: str
    #: Whether MEMORY.md is owed an update (index upkeep asked for and not a fix's own edit).
    index: bool
    new_path: str | None = None
    is_dir: bool = False
    #: ``create``: something was already there, so the operation can only fail.
    existed: bool = False
    #: ``create``/``rename``: the first folder the operation makes (removed again, with the
    #: empty folders below it, when the file never arrived).
    made: str | None = None
    #: ``create``: the temp file's name, beside the target.
    temp: str | None = None
    #: ``write``: the topic's name and description before, to tell whether its line is stale.
    old: tuple[str, str] | None = None

    def folders(self) -> set[str]:
        """The folders where this operation makes temp files: beside its targets and MEMORY.md."""
        paths = [self.path, self.new_path or self.path, C.INDEX_FILENAME]
        return {posixpath.dirname(p) for p in paths}

    def to_json(self) -> str:
        data = {k: v for k, v in vars(self).items() if v not in (None, False)}
        return json.dumps(data, ensure_ascii=False)

    @classmethod
    def from_json(cls, raw: bytes) -> WriteIntent | None:
        """The intent, or None for one cut while being written (nothing was done then)."""
        try:
            data = json.loads(raw.decode("utf-8"))
            old = data.get("old")
            return cls(
                data["op"],
                data["path"],
                bool(data.get("index")),
                data.get("new_path"),
                bool(data.get("is_dir")),
                bool(data.get("existed")),
                data.get("made"),
                data.get("temp"),
                (str(old[0]), str(old[1])) if old else None,
            )
        except (ValueError, KeyError, TypeError, IndexError, AttributeError):
            return None


_OPS: Final = frozenset({"create", "write", "delete", "rename"})


def _journal_path(root: Path, value: object, what: str, *, follow_leaf: bool = True) -> str:
    """A path field of a journal as a checked relative path: the one containment check
    (:func:`resolve_path`) on a relative string, else ValueError saying which field failed."""
    if not isinstance(value, str) or value.startswith("/"):
        raise ValueError(f"its {what} {value!r} is not a path inside the memory dir")
    try:
        resolve_path(root, value, follow_leaf=follow_leaf)
    except UnsafePathError as exc:
        raise ValueError(f"its {what} {value!r} is refused: {exc.detail}") from None
    return "/".join(split_path(value))


def intent_problem(root: Path, intent: WriteIntent) -> str | None:
    """Why ``intent`` (read back from a journal) must not be acted on, or None.

    The journal lives in the user's private state folder, but recovery deletes, moves and
    removes what it names, so nothing in it is trusted: every path passes the containment check
    of a write, the temp file is a name memdir makes (:data:`TEMP_NAME`, no folder), and the
    folder an operation made lies on the way to its own target.
    """
    try:
        if not isinstance(intent.op, str) or intent.op not in _OPS:
            raise ValueError(f"its operation {intent.op!r} is unknown")
        leaf = intent.op in ("create", "write")
        path = _journal_path(root, intent.path, "path", follow_leaf=leaf)
        if not path and intent.op in ("delete", "rename"):
            raise ValueError("it names the memory dir itself")
        target = path
        if intent.op == "rename":
            target = _journal_path(root, intent.new_path, "new path", follow_leaf=False)
            if not target:
                raise ValueError("it names the memory dir itself")
        elif intent.new_path is not None:
            raise ValueError(f"a {intent.op} has no new path")
        if intent.temp is not None and (
            intent.op != "create"
            or not isinstance(intent.temp, str)
            or not TEMP_NAME.fullmatch(intent.temp)
            or not intent.temp.endswith(".tmp")
        ):
            raise ValueError(f"its temp file {intent.temp!r} is not a name memdir makes")
        if intent.made is not None:
            made = _journal_path(root, intent.made, "folder")
            folder = posixpath.dirname(target)
            if (
                intent.op not in ("create", "rename")
                or not made
                or not (folder == made or folder.startswith(made + "/"))
            ):
                raise ValueError(f"its folder {intent.made!r} is not on the way to {target}")
    except ValueError as exc:
        return str(exc)
    return None
