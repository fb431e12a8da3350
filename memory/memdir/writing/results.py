"""What a write returns (:class:`WriteResult`, one :class:`FileChange` per file) or raises
(:class:`WriteError` and its subclasses, whose message a user can read; the structured fields let
the memory tool rebuild the API's exact error strings)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from memdir import constants as C

ChangeKind = Literal["created", "changed", "deleted", "renamed"]


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
    #: net changes, see :func:`memdir.extract.results.merge_changes`); "" otherwise.
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


def _cannot(doing: str, path: str, exc: OSError) -> WriteError:
    """The error for an operation on ``path`` the file system refused: what, and its reason."""
    return WriteError(f"cannot {doing}: {exc.strerror or exc}", path=path)
