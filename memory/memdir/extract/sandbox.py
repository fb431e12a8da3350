"""One extraction at a time per memory dir (:func:`extraction_lock`, in the dir's state folder),
and the dry run's private copy of the memory dir (made, used and removed however the run ends;
a copy a killed run left is removed by the next dry run: :func:`sweep_dry_run_leftovers`)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import stat
import tempfile
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Final

from memdir.extract.results import ExtractionResult
from memdir.textio import NotRegularFileError, open_regular
from memdir.writing.files import TEMP_NAME
from memdir.writing.journal import LEGACY_FILENAMES, dir_state, discard_dir_state
from memdir.writing.results import WriteError

#: Held for a whole extraction, in the dir's state folder (never in the memory dir).
EXTRACT_LOCK_NAME: Final = "extract.lock"
#: The dry run's temporary folders: ``memdir-dry-run-<pid>-<random>`` in the temp dir.
DRY_RUN_PREFIX: Final = "memdir-dry-run-"
#: The copy's name inside its temporary folder.
_SANDBOX_NAME: Final = "memory"


# --- locking and the dry-run sandbox ---------------------------------------------------------


class ExtractionBusyError(Exception):
    """Another extraction holds this memory dir's extraction lock."""


@contextlib.contextmanager
def extraction_lock(memory_dir: Path) -> Iterator[None]:
    """Hold the memory dir's extraction lock, or raise :class:`ExtractionBusyError` at once
    (:class:`memdir.writing.results.WriteError` when memdir's state folder cannot be used)."""
    from filelock import FileLock, Timeout

    path = dir_state(memory_dir) / EXTRACT_LOCK_NAME
    lock = FileLock(str(path), timeout=0)
    try:
        lock.acquire()
    except Timeout:
        raise ExtractionBusyError(f"another extraction is running on {memory_dir}") from None
    except OSError as exc:
        raise WriteError(f"cannot lock {path}: {exc.strerror or exc}") from exc
    try:
        yield
    finally:
        lock.release()


def _copy_private(source: str, target: str) -> None:
    """Copy a file's bytes into a new file only its owner can read (no mode copied over).

    Only a regular file is copied: a FIFO would block the copy (and the run) for good, a device
    may act on being opened, and neither is a memory; they stay behind."""
    try:
        fd, _info = open_regular(source, follow_links=False)
    except NotRegularFileError:
        return
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    with os.fdopen(fd, "rb") as reader, os.fdopen(os.open(target, flags, 0o600), "wb") as writer:
        shutil.copyfileobj(reader, writer)


def _copy_for_dry_run(memory_dir: Path, sandbox: Path) -> None:
    # memdir's own leftovers (temp files, what older versions kept in the dir) stay behind: they
    # are no memory, and not something the dry run's diff should show as extraction's doing.
    own = LEGACY_FILENAMES

    def ignore(_directory: str, names: list[str]) -> set[str]:
        return {n for n in names if n in own or TEMP_NAME.match(n) or n.endswith(".tmp")}

    # symlinks=True: links are copied as links, so one leading out still leads out and is still
    # refused by the write checks; nothing outside is ever read into the sandbox.
    shutil.copytree(
        os.path.realpath(memory_dir),
        sandbox,
        symlinks=True,
        ignore=ignore,
        copy_function=_copy_private,
    )
    # copytree gives each folder its source's mode; the 0700 parent already shuts others out,
    # and a copy left behind by a kill stays private on its own too.
    for folder, _subdirs, _files in os.walk(sandbox):
        os.chmod(folder, 0o700)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: alive, someone else's
        return True
    return True


def sweep_dry_run_leftovers(temp_dir: str | None = None) -> list[str]:
    """Remove the dry-run copies of killed runs (ours, their process gone); return their paths.

    A SIGKILL skips every ``finally``: the copy stays (private) until this runs at the start of
    the next dry run.
    """
    temp_dir = temp_dir or tempfile.gettempdir()
    removed: list[str] = []
    try:
        names = [n for n in os.listdir(temp_dir) if n.startswith(DRY_RUN_PREFIX)]
    except OSError:
        return removed
    for name in names:
        pid_text = name[len(DRY_RUN_PREFIX) :].split("-", 1)[0]
        path = os.path.join(temp_dir, name)
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if (
            not pid_text.isdigit()
            or not stat.S_ISDIR(info.st_mode)
            or info.st_uid != os.getuid()
            or _pid_alive(int(pid_text))
        ):
            continue
        shutil.rmtree(path, ignore_errors=True)
        discard_dir_state(Path(path) / _SANDBOX_NAME)  # the copy's lock, in the state folder
        removed.append(path)
    return removed


async def _in_dry_run_copy(
    memory_dir: Path, run: Callable[[Path], Awaitable[ExtractionResult]]
) -> ExtractionResult:
    """``run`` on a private copy of ``memory_dir``, removed afterwards whatever happens."""
    await asyncio.to_thread(sweep_dry_run_leftovers)
    # mkdtemp makes the folder 0700; TemporaryDirectory removes it on every way out.
    with tempfile.TemporaryDirectory(prefix=f"{DRY_RUN_PREFIX}{os.getpid()}-") as scratch:
        sandbox = Path(scratch) / _SANDBOX_NAME
        copy = asyncio.ensure_future(asyncio.to_thread(_copy_for_dry_run, memory_dir, sandbox))
        try:
            await asyncio.shield(copy)
        except asyncio.CancelledError:
            # The thread cannot be stopped: let it finish before the folder is removed, or it
            # would recreate folders of a removed tree, outside the private parent.
            with contextlib.suppress(BaseException):
                await copy
            raise
        try:
            return await run(sandbox)
        finally:
            discard_dir_state(sandbox)  # the copy's lock, gone with the copy
