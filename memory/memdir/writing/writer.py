"""The one write path into a memory directory: every mutation memdir makes goes through here.

The CLI (``memdir tool``), the API memory tool (:mod:`memdir.writing.memory_tool`), the extraction
agent and the language server all call :class:`MemoryWriter`, so the rules of spec sections 8 and 10
hold for all of them:

* **Confined.** A path names something inside the memory dir or is refused with an
  :class:`UnsafePathError` before anything is touched: ``..`` segments, absolute paths elsewhere,
  percent-encodings (``%2e%2e``, double-encoded ``%252e``), backslashes, NUL and control
  characters, Unicode look-alikes of ``/``, ``\\`` and ``.`` (fullwidth solidus, division slash,
  one-dot leader ...), names starting with ``.`` (reserved for memdir's temp files), names too
  long for a temp file to sit beside them, and symlinks that resolve outside the dir (decided by
  :func:`memdir.agent.paths.relative_inside` on the resolved path, when the operation starts under
  the lock). At the moment of writing, the folder is reached from the memory dir one name at a time
  without following a symlink, and the write acts relative to it (:data:`FD_WALK`), so a folder
  swapped for a symlink after the check stops the write. The memory dir itself can never be
  deleted or renamed, MEMORY.md is not deleted or renamed away unless the caller asks for that
  by name (``allow_index``: the memory tool never does), and a folder is deleted only when all
  it holds are memory files (``*.md``) and folders of them. A create or rename adds no name
  that macOS or Windows would take for an existing one's (case and Unicode normalisation
  ignored there), nor a Windows device name, a trailing dot or space, or an invisible
  character (:func:`_check_new_names`).
* **Bounded.** No write produces a file larger than :data:`MAX_EDIT_BYTES` (what memdir loads
  for editing): a memory is a page, not a data set.
* **Atomic.** New content is written to a temp file in the same directory, fsynced and moved into
  place (:func:`write_atomic`), so a reader or a crash sees the old file or the new
  one, never half of either. ``create`` and ``rename`` never replace an existing file: they
  publish with ``link(2)``, which fails with ``EEXIST`` atomically (see :func:`_publish_noreplace`
  for why this and not a check followed by ``os.replace``).
* **Recoverable.** An operation that is killed part way (``kill -9``, a crash, a power cut after
  the fsyncs) is finished by the next writer, whichever face it comes through (CLI, server, MCP,
  hook, extraction). Before touching anything, an operation writes its intent to its journal,
  :data:`JOURNAL_NAME` in the dir's state folder (:func:`dir_state`, outside the memory dir); it
  removes it when done. The next writer to take the lock and find an intent finishes it against
  what is on disk (see :meth:`MemoryWriter.recover`): the temp files it left are removed, a
  publish cut between its two names is completed, a folder made for a file never written is
  removed again, and MEMORY.md gets the entry the operation owed it (created, dropped, renamed
  or refreshed). Temp files are provably stale then: only a lock holder makes them, while its
  intent exists. Every field of a journal passes the containment check before anything is
  done with it (:func:`intent_problem`); one that does not is reported and dropped, never acted
  on. A write whose index update fails (a full disk) raises :class:`IndexNotUpdatedError` after
  its file operation and leaves its journal, so the next writer makes the update it owes.
* **Serialised.** Each operation runs under an exclusive file lock, :data:`LOCK_NAME` in the
  dir's state folder, so two editors, agents or processes doing read-modify-write cannot
  interleave. memdir's bookkeeping lives in the per-user state dir (``$XDG_STATE_HOME/memdir``),
  keyed by the dir's real path (:func:`memdir.agent.paths.dir_state_path`), never in the memory dir:
  a repository cannot plant a lock or a journal, and nothing of memdir's enters ``git status``.
  The files older versions kept in the dir (:data:`LEGACY_FILENAMES`) are never opened; lint
  reports them (MEM122).
* **Indexed.** In index mode (``recall_mode = "index"``) creating or renaming a topic file adds or
  updates its ``MEMORY.md`` line, rendered with :func:`memdir.agent.index.render_entry` under the
  line limit, deleting removes it; in prefetch mode the index is left alone.
* **Stamped.** A write to a topic file that already has frontmatter sets its ``modified`` field to
  the current UTC time with milliseconds, where the agent keeps it (``metadata.modified`` in a
  file the agent wrote), as the agent does.

Errors are :class:`WriteError` subclasses whose message a user can read; the structured fields
let the memory tool rebuild the API's exact error strings.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import json
import os
import posixpath
import re
import secrets
import shutil
import signal
import stat
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Final, Literal

from memdir import constants as C
from memdir.agent.index import Index, fit_entry, parse_index
from memdir.agent.paths import (
    DIR_STATES_DIRNAME,
    dir_state_path,
    name_key,
    relative_inside,
    state_dir,
    unportable_name,
)
from memdir.agent.topic import parse_frontmatter, parse_topic_text
from memdir.config import Settings, load_settings
from memdir.fixes.apply import apply_text_edits
from memdir.fixes.plan import entries_linking, entry_insertion, rename_edits
from memdir.textio import kind_name, open_regular

#: The write lock of a memory dir, in its state folder (:func:`dir_state`).
LOCK_NAME: Final = "write.lock"
#: How long a writer waits for another writer before giving up with :class:`LockTimeoutError`.
WRITE_LOCK_TIMEOUT_SECONDS: Final = 10.0
#: Names longer than this are refused, so that every file system's 255-byte limit leaves room
#: for the other names memdir puts beside a file.
MAX_NAME_BYTES: Final = 240
#: Whole relative paths longer than this are refused (PATH_MAX is 4096 with the dir in front).
MAX_PATH_BYTES: Final = 1024
#: Files larger than this are not loaded for editing (a memory is a page, not a data set).
MAX_EDIT_BYTES: Final = 4 * 1024 * 1024
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
#: The names of the temp files and trashed folders a writer makes beside its targets.
TEMP_NAME: Final = re.compile(r"^\.memdir-[0-9a-f]{12}\.(?:tmp|trash)$")
#: Tests only: ``MEMDIR_TEST_KILL_AT=N`` makes the process kill itself (SIGKILL) at the N-th
#: step of its writes, so the fault tests can stop a write at every point it has.
KILL_AT_ENV: Final = "MEMDIR_TEST_KILL_AT"
_MAX_JOURNAL_BYTES: Final = 64 * 1024

ChangeKind = Literal["created", "changed", "deleted", "renamed"]

_PERCENT_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")
_KEBAB = re.compile(r"^[a-z0-9]+(?:[-_][a-z0-9]+)*$")
#: Characters that look like ``/`` or ``\`` but that NFKC leaves alone; anything whose NFKC form
#: contains ``/``, ``\`` or ``.`` (fullwidth solidus, one-dot leader, ...) is refused as well.
_SLASH_LOOKALIKES: Final = frozenset(
    "\u2215\u2044\u29f8\u29f9\u29f5\u2216\u2571\u2572\u0337\u0338\u20e5\u2cf9\u2cfa"
)
_BIDI_CONTROLS: Final = frozenset(
    "\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
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


# --- errors ----------------------------------------------------------------------------------


class WriteError(Exception):
    """A write memdir refused or could not make; the message is meant for the user."""

    def __init__(self, message: str, *, path: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        #: The path as the caller gave it.
        self.path = path


class UnsafePathError(WriteError):
    """The path is not a plain name inside the memory dir; nothing was touched.

    ``reason`` is a stable machine name: ``empty``, ``nul``, ``control``, ``backslash``,
    ``encoded``, ``lookalike``, ``home``, ``absolute``, ``traversal``, ``hidden``, ``too-long``,
    ``symlink``, ``root``, ``not-topic``, and for names a create or rename would add,
    ``collides`` and ``unportable``.
    """

    def __init__(self, message: str, *, path: str | None, reason: str, detail: str = "") -> None:
        super().__init__(message, path=path)
        self.reason = reason
        #: Why, without the path: "`..` is not allowed in memory paths".
        self.detail = detail or message


class PathExistsError(WriteError):
    """``create`` or ``rename`` would replace something that exists; it never does."""


class PathNotFoundError(WriteError):
    """The file or directory to read, edit, delete or rename does not exist."""


class NotAFileError(WriteError):
    """An edit names a directory or a special file."""


class NotUTF8Error(WriteError):
    """The file is not UTF-8 text, so a text edit could corrupt it."""


class NoMatchError(WriteError):
    """``str_replace``: ``old_str`` does not occur in the file."""

    def __init__(self, message: str, *, path: str | None, old_str: str) -> None:
        super().__init__(message, path=path)
        self.old_str = old_str


class MultipleMatchError(WriteError):
    """``str_replace``: ``old_str`` occurs more than once; ``lines`` are 1-based."""

    def __init__(
        self, message: str, *, path: str | None, old_str: str, lines: tuple[int, ...]
    ) -> None:
        super().__init__(message, path=path)
        self.old_str = old_str
        self.lines = lines


class InvalidLineError(WriteError):
    """``insert``: the line number is outside ``[0, line_count]``."""

    def __init__(self, message: str, *, path: str | None, line: int, line_count: int) -> None:
        super().__init__(message, path=path)
        self.line = line
        self.line_count = line_count


class LockTimeoutError(WriteError):
    """Another writer held the memory dir's lock for longer than the timeout."""


class FileTooLargeError(WriteError):
    """The file a write would produce is larger than :data:`MAX_EDIT_BYTES`; nothing was written."""


class IndexProtectedError(WriteError):
    """A delete or rename would take MEMORY.md away and the caller did not allow it."""


class FolderNotEmptyError(WriteError):
    """A folder to delete holds something that is not a memory file; nothing was deleted.

    ``entry`` is one such thing, relative to the memory dir."""

    def __init__(self, message: str, *, path: str | None, entry: str) -> None:
        super().__init__(message, path=path)
        self.entry = entry


class IndexNotUpdatedError(WriteError):
    """The operation itself was made (``result`` says what it did) but MEMORY.md could not be
    updated (a full disk, an I/O error). Its journal is kept, so the next write through memdir
    makes the update it owes."""

    def __init__(self, message: str, *, path: str | None, result: WriteResult) -> None:
        super().__init__(message, path=path)
        self.result = result


# --- results ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class FileChange:
    """One file (or directory) a write created, changed, deleted or renamed."""

    kind: ChangeKind
    #: Path relative to the memory dir, ``/``-separated (the old path for a rename).
    path: str
    new_path: str | None = None
    #: Text before and after; None where there is none (created, deleted, directories).
    before: str | None = None
    after: str | None = None
    is_dir: bool = False
    #: A unified diff of ``before`` and ``after``, where a caller asked for one (an extraction's
    #: net changes, see :func:`memdir.extract.loop.merge_changes`); "" otherwise.
    diff: str = ""

    def to_json(self) -> dict[str, object]:
        data: dict[str, object] = {"kind": self.kind, "path": self.path}
        if self.new_path is not None:
            data["new_path"] = self.new_path
        if self.is_dir:
            data["is_dir"] = True
        if self.diff:
            data["diff"] = self.diff
        return data


@dataclass(frozen=True)
class WriteResult:
    """What one operation did: the target's change first, then MEMORY.md's when it changed."""

    #: The target, relative to the memory dir (the new path for a rename).
    path: str
    changes: tuple[FileChange, ...]
    #: The target's final text, for operations that write text.
    text: str | None = None
    #: ``str_replace``: the 0-based line of ``text`` where the replacement starts.
    changed_line: int | None = None
    #: Things the user should know that did not stop the write (e.g. index left alone).
    warnings: tuple[str, ...] = ()

    @property
    def index_updated(self) -> bool:
        return any(c.path == C.INDEX_FILENAME for c in self.changes[1:])


# --- paths -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class MemoryPath:
    """A checked location inside a memory dir."""

    #: The memory dir, fully resolved.
    root: Path
    #: ``/``-separated path relative to ``root``; empty for the root itself.
    rel: str
    #: ``root / rel``: no symlink left in it except possibly the last component (see
    #: ``follow_leaf`` of :func:`resolve_path`).
    path: Path

    @property
    def is_root(self) -> bool:
        return self.rel == ""

    @property
    def folder(self) -> str:
        """The folder holding it, relative to ``root`` ("" for the top)."""
        return posixpath.dirname(self.rel)

    @property
    def name(self) -> str:
        return posixpath.basename(self.rel)


def _unsafe(path: str, reason: str, why: str) -> UnsafePathError:
    return UnsafePathError(f"refusing path {path!r}: {why}", path=path, reason=reason, detail=why)


def _cannot(doing: str, path: str, exc: OSError) -> WriteError:
    """The error for an operation on ``path`` the file system refused: what, and its reason."""
    return WriteError(f"cannot {doing}: {exc.strerror or exc}", path=path)


def _check_characters(path: str) -> None:
    if "\x00" in path:
        raise _unsafe(path, "nul", "it contains a NUL byte")
    if any(unicodedata.category(ch) in ("Cc", "Cs") or ch in _BIDI_CONTROLS for ch in path):
        # Bidi overrides make a name display as another ("evil\u202edm.txt" shows as "evil
        # txt.md"); lone surrogates cannot even be encoded as a file name.
        raise _unsafe(path, "control", "it contains control or bidirectional-override characters")
    if "\\" in path:
        raise _unsafe(path, "backslash", "backslashes are not allowed; separate folders with /")
    if _PERCENT_ESCAPE.search(path):
        # Decoding is how %2e%2e becomes ".." in some other tool; refusing every escape (not just
        # the dangerous ones) also covers double encoding like %252e%252e.
        raise _unsafe(path, "encoded", "percent-encoded characters are not allowed")
    for ch in path:
        if ch.isascii():
            continue
        folded = unicodedata.normalize("NFKC", ch)
        if ch in _SLASH_LOOKALIKES or any(c in folded for c in "/\\."):
            name = unicodedata.name(ch, f"U+{ord(ch):04X}")
            raise _unsafe(
                path,
                "lookalike",
                f"{name.lower()} looks like a path separator or a dot; use plain ASCII",
            )


def _check_new_names(root: Path, rel: str, shown: str, *, renaming: str | None = None) -> None:
    """Refuse the names a create or a rename would add to the memory dir (``rel``, checked by
    :func:`resolve_path`) when they would not be the same files everywhere: a name that a
    case-insensitive or normalising file system (macOS, Windows) takes for a sibling's (``A.md``
    beside ``a.md``, the NFD ``é.md`` beside the NFC one; a case-only rename of ``renaming`` is
    fine), or one :func:`memdir.agent.paths.unportable_name` refuses (invisible characters, Windows
    device names, a trailing dot or space). Names that exist already are left alone."""
    folder, new = root, False
    done: list[str] = []
    for part in rel.split("/"):
        if not new:
            try:
                siblings = os.listdir(folder)
            except (FileNotFoundError, NotADirectoryError):
                siblings = []
            if part not in siblings:
                new, key = True, name_key(part)
                for other in sorted(siblings):
                    if name_key(other) == key and posixpath.join(*done, other) != renaming:
                        raise _unsafe(
                            shown,
                            "collides",
                            f"{part!r} and {other!r}, which exists, are one name on macOS and "
                            "Windows (which ignore case and Unicode normalisation): there one "
                            "would replace the other",
                        )
        if new and (problem := unportable_name(part)):
            raise _unsafe(shown, "unportable", f"{part!r} is no portable name: {problem}")
        folder = folder / part
        done.append(part)


def split_path(path: str) -> list[str]:
    """The checked, non-empty segments of a relative path (``.`` segments dropped)."""
    _check_characters(path)
    if path.startswith("~"):
        raise _unsafe(path, "home", "home-relative paths (~) are not allowed")
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise _unsafe(path, "traversal", "`..` is not allowed in memory paths")
    for part in parts:
        if part.startswith("."):
            raise _unsafe(
                path, "hidden", f"names starting with '.' are reserved for memdir ({part})"
            )
        if len(part.encode("utf-8")) > MAX_NAME_BYTES:
            raise _unsafe(path, "too-long", f"a name is longer than {MAX_NAME_BYTES} bytes")
    if len("/".join(parts).encode("utf-8")) > MAX_PATH_BYTES:
        raise _unsafe(path, "too-long", f"the path is longer than {MAX_PATH_BYTES} bytes")
    return parts


def resolve_path(root: Path, path: str, *, follow_leaf: bool = True) -> MemoryPath:
    """Check ``path`` (relative to ``root``, or absolute inside it) and locate it in ``root``.

    With ``follow_leaf`` a symlink in the last component is resolved (it must stay inside);
    without it the link itself is the target, which is what delete and rename act on.
    Raises :class:`UnsafePathError` for anything that is not plainly inside ``root``.
    """
    if not isinstance(path, str):
        raise UnsafePathError("a path must be a string", path=None, reason="empty")
    real_root = Path(os.path.realpath(root))
    _check_characters(path)
    relative = path
    if path.startswith("/"):
        # Absolute paths are fine when they name something in this memory dir, whichever
        # spelling (as given, or with symlinks resolved) of the dir they start with.
        inside = relative_inside(root, posixpath.normpath(path), follow_links=False)
        if inside is None:
            raise _unsafe(path, "absolute", f"it is outside the memory dir {root}")
        relative = inside or "."
        if ".." in path.split("/"):
            raise _unsafe(path, "traversal", "`..` is not allowed in memory paths")
    parts = split_path(relative)
    lexical = real_root.joinpath(*parts)
    # The one confinement check, on the resolved path: every folder on the way and the leaf
    # itself (even where the link, not its target, is acted on) must stay inside.
    resolved = relative_inside(real_root, lexical, follow_links=True)
    if resolved is None:
        raise _unsafe(path, "symlink", "a symlink in it leads outside the memory dir")
    if follow_leaf or not parts:
        rel = resolved
    else:
        parent = relative_inside(real_root, lexical.parent, follow_links=True)
        if parent is None:
            raise _unsafe(path, "symlink", "a symlink in it leads outside the memory dir")
        rel = posixpath.join(parent, parts[-1])
    target = real_root / rel if rel else real_root
    if any(part.startswith(".") for part in rel.split("/") if part):
        # A link inside the dir may point at the lock or a temp file; never write those.
        raise _unsafe(path, "hidden", "it resolves to a name reserved for memdir")
    return MemoryPath(real_root, rel, target)


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


def _now_utc() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def format_modified(moment: dt.datetime) -> str:
    """``2026-07-15T09:12:00.000Z``: UTC with milliseconds, as the agent stamps ``modified``
    (JavaScript's ``Date.prototype.toISOString``)."""
    utc = moment.astimezone(dt.UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def has_frontmatter(text: str) -> bool:
    """True when ``text`` opens with a closed frontmatter block whose YAML is a mapping."""
    fm, problems = parse_frontmatter(text.split("\n"))
    return fm is not None and fm.close_line is not None and not problems


#: A ``modified`` key at any indentation, and the lines that belong to the block above them
#: (the agent's own patterns for placing its stamp).
_MODIFIED_LINE = re.compile(r"^(\s*)modified\s*:(.*)$", re.DOTALL)
_METADATA_HEADER = re.compile(r"^metadata:\s*(#.*)?$")
_INDENTED = re.compile(r"^\s+\S")
_BLANK_OR_COMMENT = re.compile(r"^\s*(#|$)")


def _metadata_end(lines: list[str], header: int, close: int) -> int:
    """The line after the ``metadata:`` block starting at ``header`` (blank and comment lines
    inside it belong to it when an indented line follows them)."""
    end = header + 1
    while end < close:
        if _INDENTED.match(lines[end].removesuffix("\r")):
            end += 1
            continue
        after = end
        while after < close and _BLANK_OR_COMMENT.match(lines[after].removesuffix("\r")):
            after += 1
        if after == end or after >= close or not _INDENTED.match(lines[after].removesuffix("\r")):
            break
        end = after
    return end


def _without_modified(data: dict[str, object]) -> dict[str, object]:
    return {
        key: {k: v for k, v in value.items() if k != "modified"}
        if isinstance(value, dict)
        else value
        for key, value in data.items()
        if key != "modified"
    }


def stamp_modified(text: str, stamp: str) -> tuple[str, int | None]:
    """Set the ``modified`` field of ``text``'s frontmatter to ``stamp``, where the agent keeps it.

    As the agent's Write tool does: the one ``modified:`` line of the block is updated in place
    at its indentation (``metadata.modified`` in a file the agent wrote, or a top-level one),
    keeping a trailing comment; without one, the field is added at the end of a ``metadata:``
    block, or before the closing ``---`` when there is none. Returns the new text and the
    0-based line that was inserted (None when a value was replaced or nothing changed). Text
    without a well-formed frontmatter is returned unchanged, and so is any text where the edit
    would be ambiguous (two ``modified`` lines, an inline ``metadata`` mapping) or would not
    read back exactly: the stamp is never worth corrupting a memory for.
    """
    lines = text.split("\n")
    fm, problems = parse_frontmatter(lines)
    if fm is None or fm.close_line is None or problems:
        return text, None
    close = fm.close_line
    eol = "\r" if lines[0].endswith("\r") else ""
    found = [i for i in range(1, close) if _MODIFIED_LINE.match(lines[i].removesuffix("\r"))]
    inserted: int | None = None
    if len(found) > 1:
        return text, None
    if found:
        number = found[0]
        match = _MODIFIED_LINE.match(lines[number].removesuffix("\r"))
        assert match is not None
        indent, rest = match.groups()
        if rest.strip().startswith(("|", ">")) or not rest.strip():
            return text, None
        comment = re.search(r"[ \t]+#.*$", rest)
        keep = comment.group() if comment and not rest.lstrip().startswith(("'", '"')) else ""
        lines[number] = f"{indent}modified: {stamp}{keep}{eol}"
    else:
        headers = [i for i in range(1, close) if lines[i].startswith("metadata:")]
        blocks = [i for i in headers if _METADATA_HEADER.match(lines[i].removesuffix("\r"))]
        if headers and not blocks:
            return text, None  # an inline mapping: no faithful place for the line
        if blocks:
            inserted = _metadata_end(lines, blocks[0], close)
            children = (
                line.removesuffix("\r")
                for line in lines[blocks[0] + 1 : inserted]
                if _INDENTED.match(line) and not _BLANK_OR_COMMENT.match(line.removesuffix("\r"))
            )
            first = next(children, "  ")
            indent = first[: len(first) - len(first.lstrip())]
        else:
            inserted, indent = close, ""
        lines.insert(inserted, f"{indent}modified: {stamp}{eol}")
    new_text = "\n".join(lines)
    new_fm, new_problems = parse_frontmatter(new_text.split("\n"))
    if new_fm is None or new_problems:
        return text, None
    written = [new_fm.data.get("modified")] + [
        value.get("modified") for value in new_fm.data.values() if isinstance(value, dict)
    ]
    stamps = [format_modified(w) if isinstance(w, dt.datetime) else w for w in written]
    if _without_modified(fm.data) != _without_modified(new_fm.data) or stamp not in stamps:
        return text, None
    return new_text, inserted


# --- the index -------------------------------------------------------------------------------


def is_topic_path(rel: str) -> bool:
    """A topic file: ``*.md`` anywhere in the dir except an index named MEMORY.md."""
    name = rel.rsplit("/", 1)[-1]
    return name.endswith(".md") and name != C.INDEX_FILENAME


def topic_title(name: str | None, rel: str) -> str:
    """The index title for a memory: its ``name``, read as words when it is a kebab slug."""
    if name and name.strip():
        name = " ".join(name.split())
        if not _KEBAB.match(name):
            return name
        words = " ".join(re.split(r"[-_]", name))
        return words[:1].upper() + words[1:]
    stem = posixpath.basename(rel).removesuffix(".md")
    words = " ".join(re.split(r"[-_\s]+", stem)).strip() or stem
    return words[:1].upper() + words[1:]


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


def _name_and_description(rel: str, text: str) -> tuple[str, str]:
    topic = parse_topic_text(text, Path(rel), rel)
    return topic.name or "", topic.description or ""


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


# --- the writer ------------------------------------------------------------------------------


@dataclass
class MemoryWriter:
    """Safe, locked, index-maintaining writes to one memory dir.

    Paths are relative to the memory dir (``/``-separated) or absolute inside it. Every method
    takes the directory lock for its whole read-modify-write and returns a :class:`WriteResult`;
    every refusal is a :class:`WriteError`. With ``md_only`` only topic files and the index may
    be written (the extraction agent's setting).
    """

    root: Path
    settings: Settings | None = None
    lock_timeout: float = WRITE_LOCK_TIMEOUT_SECONDS
    md_only: bool = False
    clock: Callable[[], dt.datetime] = field(default=_now_utc)
    #: Asked under the lock before a write touches anything: with the path (relative to the
    #: memory dir) of a file to be created or changed and the whole text it will hold, or with
    #: a rename's new path and None. It raises :class:`WriteError` to refuse the write. The
    #: memory tool refuses secrets with it, judging the file as it will be, not the edit.
    check: Callable[[str, str | None], None] | None = None
    #: What the last recovery did (see :meth:`recover`).
    _recovered: list[str] = field(default_factory=list, init=False, repr=False)
    #: What went wrong in the last recovery (a journal refused, a step that failed): every
    #: operation's result carries it as warnings.
    _recovery_problems: list[str] = field(default_factory=list, init=False, repr=False)
    #: The state folder of the dir, once the lock is held.
    _state: Path | None = field(default=None, init=False, repr=False)
    #: Why the current operation's index update failed, if it did (see
    #: :class:`IndexNotUpdatedError`).
    _index_failure: str | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self.root = Path(self.root)
        if self.settings is None:
            self.settings = load_settings(self.root)

    # -- public operations ----------------------------------------------------------------------

    @property
    def index_mode(self) -> bool:
        """True when MEMORY.md is maintained (recall mode ``index``)."""
        return self.settings is None or self.settings.recall_mode == "index"

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the memory dir's write lock; not re-entrant, so never nest two operations."""
        from filelock import FileLock, Timeout

        root = self._checked_root()
        state = dir_state(root)
        lock_path = state / LOCK_NAME
        try:
            _clear_odd_entry(lock_path)
            lock = FileLock(str(lock_path), timeout=self.lock_timeout)
            lock.acquire()
        except Timeout:
            raise LockTimeoutError(
                f"another writer has held the lock of {root} ({lock_path}) for "
                f"{self.lock_timeout:g}s; try again"
            ) from None
        except OSError as exc:
            raise WriteError(
                f"cannot lock {root} ({lock_path}): {exc.strerror or exc}; {_STATE_HINT}"
            ) from exc
        self._state, self._index_failure = state, None
        try:
            self._recover()
            yield
        except OSError as exc:
            # Whatever the file system says that an operation did not foresee (a symlink loop
            # mid-path, a permission, a full disk) still reaches the caller as a WriteError.
            where = f" ({exc.filename})" if exc.filename else ""
            raise WriteError(f"the write failed: {exc.strerror or exc}{where}") from exc
        finally:
            lock.release()

    def create(self, path: str, text: str, *, maintain: bool = True) -> WriteResult:
        """Create a new file with ``text``; an existing file is never overwritten.

        ``maintain=False`` leaves MEMORY.md alone: for fixes, which carry their own index edits.
        """
        with self.locked():
            target = self._resolve(path)
            self._require_writable_name(target, path)
            if target.is_root:
                raise PathExistsError(f"{path} is the memory dir itself", path=path)
            data = _checked_size(text, path)
            _check_new_names(target.root, target.rel, path)
            if self.check is not None:
                self.check(target.rel, text)
            temp = _temp_name()
            intent = WriteIntent(
                "create",
                target.rel,
                index=maintain,
                existed=os.path.lexists(target.path),
                made=_first_missing(target.root, target.path.parent),
                temp=temp,
            )
            with self._intent(intent):
                with _open_folder(target.root, target.folder, path, make=True) as folder:
                    try:
                        _write_temp(folder, temp, data)
                        _publish_noreplace(folder, temp, folder, target.name)
                    except FileExistsError:
                        raise PathExistsError(f"{path} already exists", path=path) from None
                    except OSError as exc:
                        raise _cannot(f"create {path}", path, exc) from exc
                    finally:
                        with contextlib.suppress(FileNotFoundError):
                            folder.unlink(temp)
                    folder.fsync()
                change = FileChange("created", target.rel, after=text)
                if not maintain:
                    return self._done(WriteResult(target.rel, (change,), text))
                extra, warnings = self._index_after_write(target.rel, None, text, created=True)
            return self._done(WriteResult(target.rel, (change, *extra), text, warnings=warnings))

    def update(self, path: str, text: str) -> WriteResult:
        """Replace the whole content of an existing file."""
        with self.locked():
            target, before = self._load(path)
            return self._done(self._commit(target, path, before, text))

    def rewrite(
        self, path: str, change: Callable[[str], str], *, maintain: bool = True
    ) -> WriteResult:
        """Read-modify-write under one lock: ``change`` maps the file's text to its new text.

        ``maintain=False`` writes exactly what ``change`` returns (no ``modified`` stamp, no
        index upkeep): for fixes, which are planned edits of that very text.
        """
        with self.locked():
            target, before = self._load(path)
            return self._done(self._commit(target, path, before, change(before), maintain=maintain))

    def str_replace(self, path: str, old_str: str, new_str: str) -> WriteResult:
        """Replace the one occurrence of ``old_str``; zero or several occurrences are errors."""
        with self.locked():
            target, before = self._load(path)
            count = before.count(old_str) if old_str else 0
            if count == 0:
                raise NoMatchError(
                    f"no change: the text to replace does not occur in {path}",
                    path=path,
                    old_str=old_str,
                )
            if count > 1:
                lines: list[int] = []
                start = before.find(old_str)
                while start != -1:
                    lines.append(before.count("\n", 0, start) + 1)
                    start = before.find(old_str, start + 1)
                shown = ", ".join(map(str, lines))
                raise MultipleMatchError(
                    f"no change: the text to replace occurs {count} times in {path} "
                    f"(lines {shown}); make it unique",
                    path=path,
                    old_str=old_str,
                    lines=tuple(lines),
                )
            position = before.find(old_str)
            after = before[:position] + new_str + before[position + len(old_str) :]
            changed_line = before.count("\n", 0, position)
            return self._done(self._commit(target, path, before, after, changed_line))

    def insert(self, path: str, insert_line: int, insert_text: str) -> WriteResult:
        """Insert ``insert_text`` as a line after line ``insert_line`` (0: at the top)."""
        with self.locked():
            target, before = self._load(path)
            # The API's line model: split on LF only (a CR stays with its line), no empty tail.
            lines = before.split("\n")
            if lines[-1] == "":
                lines.pop()
            if isinstance(insert_line, bool) or not 0 <= insert_line <= len(lines):
                raise InvalidLineError(
                    f"cannot insert at line {insert_line} of {path}: "
                    f"it has {len(lines)} lines (use 0 to {len(lines)})",
                    path=path,
                    line=insert_line,
                    line_count=len(lines),
                )
            lines.insert(insert_line, insert_text.rstrip("\n"))
            after = "\n".join(lines)
            if not after.endswith("\n"):
                after += "\n"
            return self._done(self._commit(target, path, before, after))

    def delete(self, path: str, *, allow_index: bool = False) -> WriteResult:
        """Delete a file, or a folder holding only memory files and folders of them (never the
        memory dir itself). MEMORY.md is deleted only with ``allow_index``: the agent loads it
        at the start of every session, and a call that drops it loses every entry at once."""
        with self.locked():
            target = self._resolve(path, follow_leaf=False)
            if target.is_root:
                raise UnsafePathError(
                    "the memory dir itself cannot be deleted", path=path, reason="root"
                )
            try:
                info = os.lstat(target.path)
            except (FileNotFoundError, NotADirectoryError):
                raise PathNotFoundError(f"{path} does not exist", path=path) from None
            is_dir = stat.S_ISDIR(info.st_mode)
            if self.md_only and (is_dir or not target.rel.endswith(".md")):
                raise _unsafe(path, "not-topic", "only memory files (*.md) may be deleted here")
            if not allow_index and _is_index(target, info):
                raise IndexProtectedError(
                    f"refusing to delete {path}: it is {C.INDEX_FILENAME}, the index the agent "
                    "loads at the start of every session, and deleting it drops every entry at "
                    "once; edit its lines instead, or delete it outside memdir if you mean to",
                    path=path,
                )
            if is_dir:
                _require_only_memories(target, path)
            with self._intent(WriteIntent("delete", target.rel, index=True, is_dir=is_dir)):
                result = self._delete(target, path, is_dir, info)
            return self._done(result)

    def _delete(
        self,
        target: MemoryPath,
        path: str,
        is_dir: bool,
        info: os.stat_result,
    ) -> WriteResult:
        """The body of :meth:`delete`, once its intent is written."""
        before: str | None = None
        warnings: list[str] = []
        try:
            with _open_folder(target.root, target.folder, path) as folder:
                if is_dir:
                    # Move the folder out of sight first (one atomic rename), so no reader sees
                    # it half deleted; then remove it.
                    trash = _temp_name(".trash")
                    folder.rename(target.name, folder, trash)
                    _step()
                    folder.fsync()
                    try:
                        folder.rmtree(trash)
                    except OSError as exc:
                        warnings.append(f"{path} is gone but {trash} was left behind: {exc}")
                else:
                    if stat.S_ISREG(info.st_mode):
                        with contextlib.suppress(WriteError, OSError):
                            before = _decode(_read_bytes_in(folder, target.name, path), path)
                    folder.unlink(target.name)
                    _step()
                    folder.fsync()
        except FileNotFoundError:
            raise PathNotFoundError(f"{path} does not exist", path=path) from None
        except OSError as exc:
            raise _cannot(f"delete {path}", path, exc) from exc
        change = FileChange("deleted", target.rel, before=before, is_dir=is_dir)
        extra = self._index_remove(target.rel, is_dir=is_dir, warnings=warnings)
        return WriteResult(target.rel, (change, *extra), warnings=tuple(warnings))

    def rename(self, old_path: str, new_path: str, *, allow_index: bool = False) -> WriteResult:
        """Rename or move a file or folder; an existing destination is never replaced.
        MEMORY.md is renamed away only with ``allow_index`` (see :meth:`delete`)."""
        with self.locked():
            source = self._resolve(old_path, follow_leaf=False)
            dest = self._resolve(new_path, follow_leaf=False)
            if source.is_root:
                raise UnsafePathError(
                    "the memory dir itself cannot be renamed", path=old_path, reason="root"
                )
            if dest.is_root:
                raise PathExistsError(f"{new_path} is the memory dir itself", path=new_path)
            try:
                info = os.lstat(source.path)
            except (FileNotFoundError, NotADirectoryError):
                raise PathNotFoundError(f"{old_path} does not exist", path=old_path) from None
            is_dir = stat.S_ISDIR(info.st_mode)
            if self.md_only and (
                is_dir or not source.rel.endswith(".md") or not dest.rel.endswith(".md")
            ):
                raise _unsafe(old_path, "not-topic", "only memory files (*.md) may be renamed here")
            if is_dir and (dest.rel + "/").startswith(source.rel + "/"):
                raise WriteError(f"cannot move {old_path} into itself", path=old_path)
            if os.path.lexists(dest.path):
                raise PathExistsError(f"{new_path} already exists", path=new_path)
            if not allow_index and _is_index(source, info):
                raise IndexProtectedError(
                    f"refusing to rename {old_path} to {new_path}: it is {C.INDEX_FILENAME}, the "
                    "index the agent loads at the start of every session, which would start "
                    "without one; edit its lines instead, or rename it outside memdir if you "
                    "mean to",
                    path=old_path,
                )
            _check_new_names(dest.root, dest.rel, new_path, renaming=source.rel)
            if self.check is not None:
                self.check(dest.rel, None)
            intent = WriteIntent(
                "rename",
                source.rel,
                index=True,
                new_path=dest.rel,
                is_dir=is_dir,
                made=_first_missing(dest.root, dest.path.parent),
            )
            with self._intent(intent):
                result = self._rename(source, dest, old_path, new_path, is_dir)
            return self._done(result)

    def _rename(
        self, source: MemoryPath, dest: MemoryPath, old_path: str, new_path: str, is_dir: bool
    ) -> WriteResult:
        """The body of :meth:`rename`, once its intent is written."""
        with (
            _open_folder(source.root, source.folder, old_path) as here,
            _open_folder(dest.root, dest.folder, new_path, make=True) as there,
        ):
            try:
                if is_dir:
                    _move_dir_noreplace(here, source.name, there, dest.name)
                else:
                    _publish_noreplace(here, source.name, there, dest.name)
            except FileExistsError:
                raise PathExistsError(f"{new_path} already exists", path=new_path) from None
            except FileNotFoundError:
                raise PathNotFoundError(f"{old_path} does not exist", path=old_path) from None
            except OSError as exc:
                raise _cannot(f"rename {old_path} to {new_path}", old_path, exc) from exc
            there.fsync()
            if source.folder != dest.folder:
                here.fsync()
        change = FileChange("renamed", source.rel, new_path=dest.rel, is_dir=is_dir)
        warnings: list[str] = []
        extra = self._index_rename(source.rel, dest.rel, is_dir=is_dir, warnings=warnings)
        return WriteResult(dest.rel, (change, *extra), warnings=tuple(warnings))

    def recover(self) -> tuple[str, ...]:
        """Finish what a writer that was killed left undone (every operation does this first);
        returns what was done, for a person to read."""
        with self.locked():
            return tuple(self._recovered)

    def read(self, path: str) -> str:
        """The text of a file in the dir, through the same path checks as the writes."""
        try:
            return _read_text(self._resolve(path), path)
        except OSError as exc:
            raise _cannot(f"read {path}", path, exc) from exc

    # -- internals ------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _intent(self, intent: WriteIntent) -> Iterator[None]:
        """Record ``intent`` for the next writer while the operation runs (lock held).

        An operation that ends, even with an error, leaves nothing to finish (its error paths
        clean up after themselves), so the record goes; only a killed one leaves it, and one
        whose index update failed (:class:`IndexNotUpdatedError`), for the next writer to make.
        """
        journal = self._journal()
        # A fresh file (O_EXCL, no link followed): whatever had the name is gone first.
        _clear_odd_entry(journal)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(journal)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW
        with os.fdopen(os.open(journal, flags, 0o600), "wb") as handle:
            handle.write(intent.to_json().encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        _fsync_dir(journal.parent)
        _step()
        try:
            yield
        finally:
            _step()
            if self._index_failure is None:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(journal)

    def _journal(self) -> Path:
        assert self._state is not None, "the journal is only used with the lock held"
        return self._state / JOURNAL_NAME

    def _read_journal(self, journal: Path) -> tuple[WriteIntent | None, str | None]:
        """The journal's intent (None for one torn while being written: nothing was done then)
        and why it is refused, if it is."""
        try:
            fd, _info = open_regular(journal, follow_links=False)
        except OSError as exc:
            return None, f"it cannot be read: {exc.strerror or exc}"
        with os.fdopen(fd, "rb") as handle:
            raw = handle.read(_MAX_JOURNAL_BYTES + 1)
        if len(raw) > _MAX_JOURNAL_BYTES:
            return None, f"it is larger than {_MAX_JOURNAL_BYTES:,} bytes"
        intent = WriteIntent.from_json(raw)
        if intent is None:
            return None, None
        return intent, intent_problem(self._checked_root(), intent)

    def _recover(self) -> None:
        """Finish the operation whose intent is still recorded (see "Recoverable" above)."""
        self._recovered, self._recovery_problems = [], []
        root = self._checked_root()
        journal = self._journal()
        if not os.path.lexists(journal):
            return
        intent, problem = self._read_journal(journal)
        done, problems = self._recovered, self._recovery_problems
        if problem is not None:
            problems.append(
                f"ignored the journal of an interrupted write ({journal}): {problem}; nothing "
                f"it names was touched, and {C.INDEX_FILENAME} may not match the files "
                "(`memdir lint` shows what is out of step)"
            )
            intent = None
        folders = intent.folders() if intent is not None else {""}
        try:
            if intent is not None:
                self._finish(root, intent, done)
        except (OSError, WriteError) as exc:
            problems.append(f"could not finish the interrupted write: {exc}")
        if self._index_failure is not None:
            # The update the dead writer owed still cannot be made: keep its journal, and make
            # no new write (it would need a journal of its own) until it can.
            raise WriteError(
                f"an interrupted write is not finished: {self._index_failure}; nothing else was "
                "written. Free some space (or fix what the error names) and write again: the "
                f"next write through memdir finishes it. Its journal is {journal}."
            )
        for rel in sorted(folders):
            try:
                place = resolve_path(root, rel or ".")
            except UnsafePathError:
                continue
            with _existing_folder(root, place.rel) as folder:
                if folder is not None:
                    done.extend(
                        f"removed {posixpath.join(rel, n)}" for n in _remove_stale_temps(folder)
                    )
        done.extend(problems)
        _clear_odd_entry(journal)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(journal)
        _fsync_dir(journal.parent)
        _fsync_dir(root)

    def _finish(self, root: Path, intent: WriteIntent, done: list[str]) -> None:
        """Bring the dir to the state ``intent`` left it in or was heading for, whichever is
        on disk: the file operation is kept or undone as found, and MEMORY.md follows it."""
        warnings: list[str] = []
        if intent.op == "create":
            target = resolve_path(root, intent.path)
            if intent.existed:
                return
            with _existing_folder(root, target.folder) as folder:
                temp = intent.temp or ""
                if folder is None or not folder.exists(target.name):
                    if folder is not None and temp:
                        with contextlib.suppress(FileNotFoundError):
                            folder.unlink(temp)  # before its folder, which goes if we made it
                    self._remove_made(root, intent.made, done)
                    return
                if temp and folder.exists(temp):
                    if _same_entry(folder, temp, folder, target.name):
                        folder.unlink(temp)  # published: only the second name was left
                    elif _empty_file(folder, target.name):
                        # The placeholder of a file system without hard links: the temp is
                        # whole (it is fsynced before the placeholder is made), so publish it.
                        folder.replace(temp, folder, target.name)
            if intent.index and is_topic_path(target.rel):
                text = _read_text(target, target.rel)
                changes, warnings_ = self._index_after_write(target.rel, None, text, created=True)
                warnings.extend(warnings_)
                done.extend(f"added {target.rel} to {C.INDEX_FILENAME}" for _ in changes)
        elif intent.op == "write":
            target = resolve_path(root, intent.path)
            if intent.index and is_topic_path(target.rel) and os.path.lexists(target.path):
                text = _read_text(target, target.rel)
                changes, warnings_ = self._index_after_write(
                    target.rel, intent.old, text, created=False
                )
                warnings.extend(warnings_)
                done.extend(f"refreshed the line of {target.rel}" for _ in changes)
        elif intent.op == "delete":
            target = resolve_path(root, intent.path, follow_leaf=False)
            if not os.path.lexists(target.path) and intent.index:
                changes = self._index_remove(target.rel, is_dir=intent.is_dir, warnings=warnings)
                done.extend(f"dropped {target.rel} from {C.INDEX_FILENAME}" for _ in changes)
        elif intent.op == "rename" and intent.new_path is not None:
            source = resolve_path(root, intent.path, follow_leaf=False)
            dest = resolve_path(root, intent.new_path, follow_leaf=False)
            with (
                _existing_folder(root, source.folder) as here,
                _existing_folder(root, dest.folder) as there,
            ):
                if here and there and here.exists(source.name) and there.exists(dest.name):
                    if not intent.is_dir and _same_entry(here, source.name, there, dest.name):
                        here.unlink(source.name)  # cut between the two names: finish the move
                        done.append(f"finished renaming {source.rel} to {dest.rel}")
                    elif intent.is_dir and _empty_folder(there, dest.name):
                        there.rmdir(dest.name)  # the placeholder of a move that never happened
                    elif not intent.is_dir and _empty_file(there, dest.name):
                        there.unlink(dest.name)  # the placeholder of a system without hard links
                arrived = there is not None and there.exists(dest.name)
                left = here is not None and here.exists(source.name)
            if not arrived:
                self._remove_made(root, intent.made, done)
            elif not left and intent.index:
                changes = self._index_rename(
                    source.rel, dest.rel, is_dir=intent.is_dir, warnings=warnings
                )
                done.extend(f"renamed {source.rel} in {C.INDEX_FILENAME}" for _ in changes)
        done.extend(warnings)

    @staticmethod
    def _remove_made(root: Path, made: str | None, done: list[str]) -> None:
        """Remove the folder ``made`` and the empty folders below it (a create or a move that
        never arrived made them)."""
        if made is None:
            return
        parent, name = posixpath.split(made)
        with _existing_folder(root, parent) as folder:
            if folder is not None and _remove_empty_folders(folder, name):
                done.append(f"removed the empty folder {made}")

    def _done(self, result: WriteResult) -> WriteResult:
        """``result`` with what the recovery before it ran into; raises
        :class:`IndexNotUpdatedError` (carrying ``result``) when MEMORY.md was owed an update it
        did not get."""
        if self._recovery_problems:
            result = replace(result, warnings=(*self._recovery_problems, *result.warnings))
        if self._index_failure is not None:
            raise IndexNotUpdatedError(
                f"{self._index_failure}; the change to {result.path} itself was made, and the "
                "next write through memdir makes the index update it owes",
                path=result.path,
                result=result,
            )
        return result

    def _checked_root(self) -> Path:
        real = Path(os.path.realpath(self.root))
        if not real.is_dir():
            raise WriteError(f"the memory dir {self.root} does not exist")
        return real

    def _resolve(self, path: str, *, follow_leaf: bool = True) -> MemoryPath:
        return resolve_path(self._checked_root(), path, follow_leaf=follow_leaf)

    def _require_writable_name(self, target: MemoryPath, shown: str) -> None:
        if self.md_only and not target.rel.endswith(".md"):
            raise _unsafe(shown, "not-topic", "only memory files (*.md) may be written here")

    def _load(self, path: str) -> tuple[MemoryPath, str]:
        target = self._resolve(path)
        self._require_writable_name(target, path)
        if target.is_root:
            raise NotAFileError(f"{path} is a directory, not a file", path=path)
        return target, _read_text(target, path)

    def _commit(
        self,
        target: MemoryPath,
        shown: str,
        before: str,
        after: str,
        changed_line: int | None = None,
        *,
        maintain: bool = True,
    ) -> WriteResult:
        _checked_size(after, shown)
        if maintain and is_topic_path(target.rel) and has_frontmatter(before):
            after, inserted = stamp_modified(after, format_modified(self.clock()))
            if inserted is not None and changed_line is not None and inserted <= changed_line:
                changed_line += 1
            _checked_size(after, shown)
        if self.check is not None:
            self.check(target.rel, after)
        old = (
            _name_and_description(target.rel, before)
            if maintain and is_topic_path(target.rel)
            else None
        )
        with self._intent(WriteIntent("write", target.rel, index=maintain, old=old)):
            try:
                _write_file(target, shown, after)
            except OSError as exc:
                raise _cannot(f"write {shown}", shown, exc) from exc
            change = FileChange("changed", target.rel, before=before, after=after)
            if not maintain:
                return WriteResult(target.rel, (change,), after, changed_line)
            extra, warnings = self._index_after_write(target.rel, old, after, created=False)
            return WriteResult(target.rel, (change, *extra), after, changed_line, warnings)

    # -- index maintenance (called with the lock held) ------------------------------------------

    def _index_text(self, warnings: list[str]) -> tuple[MemoryPath, str | None] | None:
        """MEMORY.md's location and text (None when missing), or None to leave it alone."""
        try:
            target = resolve_path(self._checked_root(), C.INDEX_FILENAME)
        except UnsafePathError as exc:
            warnings.append(f"{C.INDEX_FILENAME} left alone: {exc.message}")
            return None
        if not os.path.lexists(target.path):
            return target, None
        try:
            return target, _read_text(target, C.INDEX_FILENAME)
        except WriteError as exc:
            warnings.append(f"{C.INDEX_FILENAME} left alone: {exc.message}")
            return None

    def _write_index(
        self, target: MemoryPath, before: str | None, after: str, warnings: list[str]
    ) -> tuple[FileChange, ...]:
        if after == before:
            return ()
        try:
            _write_file(target, C.INDEX_FILENAME, after)
        except (OSError, WriteError) as exc:
            # Not a choice (like an index left alone): the update is owed, and the operation's
            # journal stays so that the next writer makes it (see IndexNotUpdatedError).
            reason = exc.message if isinstance(exc, WriteError) else exc.strerror or str(exc)
            self._index_failure = f"{C.INDEX_FILENAME} could not be updated: {reason}"
            warnings.append(self._index_failure)
            return ()
        kind: ChangeKind = "created" if before is None else "changed"
        return (FileChange(kind, C.INDEX_FILENAME, before=before, after=after),)

    def _line_for(self, rel: str, text: str) -> str:
        topic = parse_topic_text(text, Path(rel), rel)
        limit = self.settings.index_line_limit if self.settings else C.INDEX_LINE_LIMIT
        return fit_entry(topic_title(topic.name, rel), rel, topic.description or "", limit)

    def _index_after_write(
        self, rel: str, old: tuple[str, str] | None, after: str, *, created: bool
    ) -> tuple[tuple[FileChange, ...], tuple[str, ...]]:
        """Add the topic's index line if missing; refresh it on create or when name/description
        changed from ``old`` (a line a person curated is otherwise left as it is)."""
        warnings: list[str] = []
        if not self.index_mode or not is_topic_path(rel):
            return (), ()
        loaded = self._index_text(warnings)
        if loaded is None:
            return (), tuple(warnings)
        index_path, original = loaded
        text = original or ""
        index = parse_index(text)
        existing = entries_linking(index, rel)
        line = self._line_for(rel, after)
        lines = text.split("\n")
        if existing:
            if not created and old is not None:
                new = _name_and_description(rel, after)
                # A broken or removed frontmatter says nothing new: keep the line as it is.
                if new == old or not any(new):
                    return (), tuple(warnings)
            entry = existing[0]
            indent = entry.raw[: len(entry.raw) - len(entry.raw.lstrip())]
            lines[entry.line] = indent + line.replace("-", entry.bullet, 1)
            new_text = "\n".join(lines)
        else:
            new_text = _append_line(index, line)
        changes = self._write_index(index_path, original, new_text, warnings)
        if changes:
            cut = {e.path for e in parse_index(new_text).cut_entries}
            if rel in cut:
                warnings.append(
                    f"{C.INDEX_FILENAME} is past its load cap: the line for {rel} is not loaded"
                )
        return changes, tuple(warnings)

    def _index_remove(
        self, rel: str, *, is_dir: bool, warnings: list[str]
    ) -> tuple[FileChange, ...]:
        if not self.index_mode or rel == C.INDEX_FILENAME:
            return ()
        loaded = self._index_text(warnings)
        if loaded is None:
            return ()
        index_path, text = loaded
        if text is None:
            return ()
        index = parse_index(text)
        drop = {e.line for e in entries_linking(index, rel, folder=is_dir)}
        if not drop:
            return ()
        new_text = "\n".join(line for n, line in enumerate(text.split("\n")) if n not in drop)
        return self._write_index(index_path, text, new_text, warnings)

    def _index_rename(
        self, old: str, new: str, *, is_dir: bool, warnings: list[str]
    ) -> tuple[FileChange, ...]:
        """Point the entries of ``old`` at ``new`` (title and hook kept), or add one for ``new``."""
        if not self.index_mode or C.INDEX_FILENAME in (old, new):
            return ()
        loaded = self._index_text(warnings)
        if loaded is None:
            return ()
        index_path, original = loaded
        text = original or ""
        index = parse_index(text)
        # The links of topic files are the editor's to update (it shows the edits first).
        relinked = rename_edits(index, (), old, new)
        if relinked:
            new_text = apply_text_edits(text, relinked)
        elif entries_linking(index, new, folder=is_dir):
            return ()  # linked already (a rename finished by the next writer, say)
        elif not is_dir and is_topic_path(new):
            try:
                content = _read_text(resolve_path(self._checked_root(), new), new)
            except WriteError as exc:
                warnings.append(f"{new} not added to {C.INDEX_FILENAME}: {exc.message}")
                return ()
            new_text = _append_line(index, self._line_for(new, content))
        else:
            return ()
        return self._write_index(index_path, original, new_text, warnings)


def _append_line(index: Index, line: str) -> str:
    """The index text with ``line`` where every new entry goes (see :func:`entry_insertion`)."""
    return apply_text_edits(index.text, [entry_insertion(index, line)])
