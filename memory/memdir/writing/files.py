"""The filesystem steps of a write: folders reached from the memory dir one name at a time by file
descriptor (:data:`FD_WALK`), atomic replacement (:func:`write_atomic`), publishing without
replacing (:func:`_publish_noreplace`), temp files, and the kill points the fault tests cut a
write at (:data:`KILL_AT_ENV`)."""

from __future__ import annotations

import contextlib
import errno
import os
import posixpath
import re
import secrets
import shutil
import signal
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from memdir import constants as C
from memdir.textio import kind_name
from memdir.writing.confine import MemoryPath, _unsafe
from memdir.writing.results import (
    FileTooLargeError,
    FolderNotEmptyError,
    NotAFileError,
    NotUTF8Error,
    PathNotFoundError,
    WriteError,
    _cannot,
)

#: Files larger than this are not loaded for editing (a memory is a page, not a data set).
MAX_EDIT_BYTES: Final = 4 * 1024 * 1024
#: The names of the temp files and trashed folders a writer makes beside its targets.
TEMP_NAME: Final = re.compile(r"^\.memdir-[0-9a-f]{12}\.(?:tmp|trash)$")
#: Tests only: ``MEMDIR_TEST_KILL_AT=N`` makes the process kill itself (SIGKILL) at the N-th
#: step of its writes, so the fault tests can stop a write at every point it has.
KILL_AT_ENV: Final = "MEMDIR_TEST_KILL_AT"
_O_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)
#: ``link(2)`` errors that mean "this file system cannot hard-link", not "something is wrong".
_NO_HARDLINKS: Final = frozenset(
    {errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK, errno.ENOSYS, errno.EXDEV}
)


def _kill_at_from_env() -> int:
    try:
        return int(os.environ.get(KILL_AT_ENV, "") or 0)
    except ValueError:
        return 0


_kill_at = _kill_at_from_env()
_steps = 0


def _step() -> None:
    """A point where a write can be cut; only a test that set :data:`KILL_AT_ENV` stops here."""
    if _kill_at:
        global _steps
        _steps += 1
        if _steps >= _kill_at:
            os.kill(os.getpid(), signal.SIGKILL)


# --- small file helpers -----------------------------------------------------------------------


def _encode(text: str, shown: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        # Only lone surrogates (e.g. a JSON "\ud800") get here; writing them would need a lossy
        # replacement, and nothing is ever silently changed on the way to disk.
        raise WriteError(f"the text for {shown} is not valid Unicode", path=shown) from None


def _checked_size(text: str, shown: str) -> bytes:
    """``text`` as the bytes to write, refused past :data:`MAX_EDIT_BYTES` (what memdir loads for
    editing: a file it writes must stay one it can edit)."""
    # At least a byte a character: a text this long is too large before it is encoded.
    size, at_least = len(text), "" if text.isascii() else "at least "
    if size <= MAX_EDIT_BYTES:
        data = _encode(text, shown)
        size, at_least = len(data), ""
        if size <= MAX_EDIT_BYTES:
            return data
    raise FileTooLargeError(
        f"refusing to write {shown}: it would be {at_least}{size:,} bytes, more than the "
        f"{MAX_EDIT_BYTES:,} memdir writes to one file (a memory is a page, not a data set); "
        "keep it shorter, or split it into several memories",
        path=shown,
    )


def _fsync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


# --- folders, reached by file descriptor ------------------------------------------------------

_O_DIRECTORY: Final = getattr(os, "O_DIRECTORY", 0)
#: Whether writes reach their folder by file descriptor (POSIX). :func:`resolve_path` checks a
#: path before the write; a folder swapped for a symlink after that check would lead a path-based
#: write out of the dir. So every write opens the memory dir, walks to its folder one name at a
#: time refusing symlinks (``O_NOFOLLOW``), and creates, renames and removes relative to that
#: folder's descriptor: the walk is the check at the moment of writing. (A folder moved out whole
#: while a write holds it takes that write along, as it takes the files already in it.) Without
#: ``*at`` calls (Windows) the folder's checked path is used and that window stays open.
FD_WALK: Final = {
    os.open,
    os.mkdir,
    os.rename,
    os.unlink,
    os.rmdir,
    os.link,
    os.stat,
} <= os.supports_dir_fd and bool(_O_DIRECTORY and _O_NOFOLLOW)


@dataclass(frozen=True)
class _Folder:
    """A folder of the memory dir: names are taken relative to its open ``fd``, or without
    one (no :data:`FD_WALK`, or a file outside any memory dir) to its ``path``."""

    path: Path
    fd: int | None = None

    def at(self, name: str) -> str:
        return name if self.fd is not None else os.fspath(self.path / name)

    def lstat(self, name: str) -> os.stat_result:
        return os.stat(self.at(name), dir_fd=self.fd, follow_symlinks=False)

    def exists(self, name: str) -> bool:
        try:
            self.lstat(name)
        except (FileNotFoundError, NotADirectoryError):
            return False
        return True

    def open(self, name: str, flags: int, mode: int = 0o777) -> int:
        return os.open(self.at(name), flags, mode, dir_fd=self.fd)

    def mkdir(self, name: str) -> None:
        os.mkdir(self.at(name), 0o700, dir_fd=self.fd)

    def unlink(self, name: str) -> None:
        os.unlink(self.at(name), dir_fd=self.fd)

    def rmdir(self, name: str) -> None:
        os.rmdir(self.at(name), dir_fd=self.fd)

    def rmtree(self, name: str) -> None:
        shutil.rmtree(self.at(name), dir_fd=self.fd)

    def listdir(self) -> list[str]:
        return os.listdir(self.fd if self.fd is not None else self.path)

    def link(self, name: str, dest: _Folder, dest_name: str) -> None:
        os.link(
            self.at(name),
            dest.at(dest_name),
            src_dir_fd=self.fd,
            dst_dir_fd=dest.fd,
            follow_symlinks=False,
        )

    def replace(self, name: str, dest: _Folder, dest_name: str) -> None:
        os.replace(self.at(name), dest.at(dest_name), src_dir_fd=self.fd, dst_dir_fd=dest.fd)

    def rename(self, name: str, dest: _Folder, dest_name: str) -> None:
        os.rename(self.at(name), dest.at(dest_name), src_dir_fd=self.fd, dst_dir_fd=dest.fd)

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)

    def fsync(self) -> None:
        """Make the names in the folder survive a crash (best effort: not every system can)."""
        if self.fd is None:
            _fsync_dir(self.path)
        else:
            with contextlib.suppress(OSError):
                os.fsync(self.fd)


def _step_into(folder: _Folder, part: str, shown: str) -> _Folder:
    """The subfolder ``part`` of ``folder``, refused if it is a symlink or not a folder."""
    try:
        if folder.fd is None:
            info = os.lstat(folder.path / part)
            if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
                raise NotADirectoryError(errno.ENOTDIR, "not a folder", part)
            return _Folder(folder.path / part)
        fd = folder.open(part, os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW)
        return _Folder(folder.path / part, fd)
    except FileNotFoundError:
        raise PathNotFoundError(f"{shown} does not exist", path=shown) from None
    except OSError as exc:
        if exc.errno not in (errno.ENOTDIR, errno.ELOOP, errno.EMLINK):
            raise
        # O_DIRECTORY | O_NOFOLLOW says ENOTDIR (Linux) or ELOOP for a link; look which.
        try:
            link = stat.S_ISLNK(folder.lstat(part).st_mode)
        except OSError:
            link = True
        if not link:
            raise NotAFileError(f"{part} in {shown} is a file, not a folder", path=shown) from None
        raise _unsafe(
            shown,
            "symlink",
            f"the folder {part} became a symlink during the write; memdir does not follow it",
        ) from None


@contextlib.contextmanager
def _open_folder(root: Path, rel: str, shown: str, *, make: bool = False) -> Iterator[_Folder]:
    """The folder ``rel`` of the memory dir ``root`` (both as :func:`resolve_path` left them,
    with no symlink in them), reached from ``root`` one name at a time (see :data:`FD_WALK`);
    with ``make`` the missing folders on the way are created."""
    folder = _Folder(root, os.open(root, os.O_RDONLY | _O_DIRECTORY) if FD_WALK else None)
    try:
        for part in rel.split("/") if rel else ():
            if make:
                try:
                    folder.mkdir(part)
                    _step()
                except FileExistsError:
                    pass
            inner = _step_into(folder, part, shown)
            if folder.fd is not None:
                os.close(folder.fd)
            folder = inner
        yield folder
    finally:
        if folder.fd is not None:
            os.close(folder.fd)


def _replace_in(folder: _Folder, name: str, data: bytes, mode: int | None = None) -> None:
    """Replace ``name`` in ``folder`` with ``data`` atomically (see :func:`write_atomic`)."""
    temp = _temp_name()
    try:
        _write_temp(folder, temp, data)
        if mode is None:
            with contextlib.suppress(FileNotFoundError, NotADirectoryError):
                mode = os.stat(folder.at(name), dir_fd=folder.fd).st_mode & 0o7777
        if mode is not None:
            os.chmod(folder.at(temp), mode, dir_fd=folder.fd)
        _step()
        folder.replace(temp, folder, name)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            folder.unlink(temp)
        raise
    _step()
    folder.fsync()


def write_atomic(path: Path, text: str, *, mode: int | None = None) -> None:
    """Replace ``path`` with ``text`` so a reader or a crash sees the old file or the new one.

    A temp file beside it (same file system, so the rename is atomic), fsynced, moved into place
    with ``os.replace``, then the directory fsynced so the rename itself survives a crash. The
    file keeps its permissions unless ``mode`` is given. No lock and no path checks: inside a
    memory dir, write through :class:`MemoryWriter`.
    """
    _replace_in(_Folder(path.parent), path.name, text.encode("utf-8"), mode)


def _write_file(target: MemoryPath, shown: str, text: str) -> None:
    """Replace the file ``target`` of a memory dir atomically, in the folder reached by
    :func:`_open_folder`."""
    with _open_folder(target.root, target.folder, shown) as folder:
        _replace_in(folder, target.name, text.encode("utf-8"))


def _read_bytes(target: MemoryPath, shown: str) -> bytes:
    """Read a regular file without following a symlink swapped in at the last moment, in the
    leaf or in a folder on the way."""
    with _open_folder(target.root, target.folder, shown) as folder:
        return _read_bytes_in(folder, target.name, shown)


def _read_bytes_in(folder: _Folder, name: str, shown: str) -> bytes:
    try:
        fd = folder.open(name, os.O_RDONLY | _O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise PathNotFoundError(f"{shown} does not exist", path=shown) from None
    except IsADirectoryError:
        raise NotAFileError(f"{shown} is a directory, not a file", path=shown) from None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK):
            raise _unsafe(shown, "symlink", "it became a symlink") from None
        raise _cannot(f"read {shown}", shown, exc) from exc
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise NotAFileError(f"{shown} is a directory, not a file", path=shown)
        if not stat.S_ISREG(info.st_mode):
            raise NotAFileError(f"{shown} is not a regular file", path=shown)
        if info.st_size > MAX_EDIT_BYTES:
            raise WriteError(
                f"{shown} is {info.st_size:,} bytes; memdir edits files up to {MAX_EDIT_BYTES:,}",
                path=shown,
            )
    except BaseException:
        os.close(fd)
        raise
    with os.fdopen(fd, "rb") as handle:
        return handle.read(MAX_EDIT_BYTES + 1)


def _read_text(target: MemoryPath, shown: str) -> str:
    return _decode(_read_bytes(target, shown), shown)


def _decode(data: bytes, shown: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise NotUTF8Error(
            f"{shown} is not UTF-8 text; memdir will not edit it", path=shown
        ) from None


def _temp_name(suffix: str = ".tmp") -> str:
    # Short and hidden: it fits beside any allowed name, and no reader lists it.
    return f".memdir-{secrets.token_hex(6)}{suffix}"


def _write_temp(folder: _Folder, temp: str, data: bytes) -> None:
    fd = folder.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as handle:
        half = len(data) // 2
        handle.write(data[:half])
        if _kill_at:
            handle.flush()  # so that a test's kill here leaves a partial temp file
            _step()
        handle.write(data[half:])
        handle.flush()
        os.fsync(handle.fileno())


def _publish_noreplace(folder: _Folder, source: str, dest: _Folder, target: str) -> None:
    """Give the file ``source`` the name ``target`` unless ``target`` exists; raise FileExistsError.

    Why ``link(2)`` + ``unlink(2)``: the kernel checks and creates the new name in one step, so
    there is no window in which a file appearing at ``target`` could be replaced (a check followed
    by ``os.replace`` has exactly that window). It is in the standard library and on every POSIX
    system, unlike ``renameat2(RENAME_NOREPLACE)``, which is Linux-only and needs ctypes. The cost
    is a moment in which both names exist; a crash then leaves an extra name for the same content,
    never a loss. File systems without hard links (some FUSE, SMB and FAT mounts) get the
    fallback: reserve ``target`` with ``O_CREAT | O_EXCL``, then replace that empty placeholder,
    which only a writer ignoring memdir's lock could touch in between.
    """
    try:
        folder.link(source, dest, target)
    except OSError as exc:
        if exc.errno not in _NO_HARDLINKS or isinstance(exc, FileExistsError):
            raise
        fd = dest.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW, 0o600)
        os.close(fd)
        try:
            _step()
            folder.replace(source, dest, target)
        except BaseException:
            with contextlib.suppress(OSError):
                dest.unlink(target)
            raise
        return
    _step()
    folder.unlink(source)


def _move_dir_noreplace(folder: _Folder, source: str, dest: _Folder, target: str) -> None:
    """Rename a directory unless ``target`` exists; raise FileExistsError.

    Directories cannot be hard-linked, so ``target`` is reserved with ``mkdir`` (atomic, fails
    with EEXIST) and then replaced by the rename, which replaces only an *empty* directory: if
    anything appeared in the placeholder meanwhile the rename fails and nothing is lost.
    """
    dest.mkdir(target)
    try:
        _step()
        folder.rename(source, dest, target)
    except BaseException:
        with contextlib.suppress(OSError):
            dest.rmdir(target)
        raise


def _first_missing(root: Path, directory: Path) -> str | None:
    """The outermost folder between ``root`` and ``directory`` that does not exist yet."""
    current = root
    for part in directory.relative_to(root).parts:
        current = current / part
        if not os.path.lexists(current):
            return current.relative_to(root).as_posix()
    return None


def _same_entry(folder: _Folder, name: str, other: _Folder, other_name: str) -> bool:
    """Two names of one file (a hard link), links not followed."""
    a, b = folder.lstat(name), other.lstat(other_name)
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _empty_file(folder: _Folder, name: str) -> bool:
    info = folder.lstat(name)
    return stat.S_ISREG(info.st_mode) and info.st_size == 0


def _empty_folder(folder: _Folder, name: str) -> bool:
    try:
        inner = _step_into(folder, name, name)
    except WriteError:
        return False
    try:
        return not inner.listdir()
    finally:
        inner.close()


def _remove_empty_folders(folder: _Folder, name: str) -> bool:
    """Remove the folder ``name`` if it holds only empty folders; True when it is gone."""
    try:
        inner = _step_into(folder, name, name)
    except WriteError:
        return False
    try:
        for child in inner.listdir():
            with contextlib.suppress(OSError):
                if stat.S_ISDIR(inner.lstat(child).st_mode):
                    _remove_empty_folders(inner, child)
    finally:
        inner.close()
    with contextlib.suppress(OSError):
        folder.rmdir(name)
    return not folder.exists(name)


@contextlib.contextmanager
def _existing_folder(root: Path, rel: str) -> Iterator[_Folder | None]:
    """:func:`_open_folder` for recovery, which finds what is there: None when it is missing."""
    with contextlib.ExitStack() as stack:
        try:
            folder: _Folder | None = stack.enter_context(_open_folder(root, rel, rel or "."))
        except PathNotFoundError:
            folder = None
        yield folder


def _is_index(target: MemoryPath, info: os.stat_result) -> bool:
    """Whether ``target`` (``info`` its lstat) is the memory dir's MEMORY.md, under any spelling
    a case-insensitive file system accepts (a second hard link of it is not: the index stays)."""
    if target.rel == C.INDEX_FILENAME:
        return True
    if target.folder:
        return False
    try:
        index = os.lstat(target.root / C.INDEX_FILENAME)
    except OSError:
        return False
    same = (index.st_dev, index.st_ino) == (info.st_dev, info.st_ino)
    return same and info.st_nlink == 1


def _require_only_memories(target: MemoryPath, shown: str) -> None:
    """Refuse (:class:`FolderNotEmptyError`) to delete the folder ``target`` unless all it holds,
    at any depth, is memory files (regular ``*.md`` files) and folders: a folder that merely
    holds a memory (someone's Documents with a MEMORY.md in it) is not the memory tool's to
    wipe. Each folder is reached from the dir without following a symlink (one descriptor
    open at a time, however many folders there are)."""
    pending = [target.rel]
    while pending:
        rel = pending.pop()
        with _open_folder(target.root, rel, shown) as folder:
            for name in sorted(folder.listdir()):
                mode = folder.lstat(name).st_mode
                if stat.S_ISDIR(mode):
                    pending.append(posixpath.join(rel, name))
                elif not (stat.S_ISREG(mode) and name.endswith(".md")):
                    entry = posixpath.join(rel, name)
                    kind = "not a memory file" if stat.S_ISREG(mode) else kind_name(mode)
                    raise FolderNotEmptyError(
                        f"refusing to delete the folder {shown}: it holds {entry} ({kind}), and "
                        "memdir deletes only folders that hold nothing but memory files (*.md); "
                        f"move or delete {entry} yourself first",
                        path=shown,
                        entry=entry,
                    )


def _remove_stale_temps(folder: _Folder) -> list[str]:
    """Remove the temp files and trashed folders a dead writer left in ``folder``."""
    removed: list[str] = []
    try:
        names = [n for n in folder.listdir() if TEMP_NAME.match(n)]
    except OSError:
        return removed
    for name in names:
        try:
            if stat.S_ISDIR(folder.lstat(name).st_mode):
                folder.rmtree(name)
            else:
                folder.unlink(name)
        except OSError:
            continue
        removed.append(name)
    return removed
