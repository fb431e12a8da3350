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


#: ``edited``: the write was to MEMORY.md itself (only ``dropped`` has anything to say).
IndexAction = Literal[
    "added",
    "updated",
    "unchanged",
    "kept",
    "removed",
    "relinked",
    "not-maintained",
    "left-alone",
    "edited",
]


@dataclass(frozen=True)
class DroppedLine:
    """memdir's own index line for ``path``, dropped because another entry links the file: the
    words of the agent or a person win over memdir's."""

    path: str
    #: The 1-based line of the entry that stays, in MEMORY.md as written.
    kept_line: int


@dataclass(frozen=True)
class IndexOutcome:
    """What a write did to MEMORY.md for its target: every face shows it after the result (see
    :meth:`clause`), so the agent knows whether to add a line itself."""

    action: IndexAction
    #: The 1-based line of the target's entry in MEMORY.md after the write, where it has one.
    line: int | None = None
    #: Why MEMORY.md was not touched (``not-maintained``, ``left-alone``).
    reason: str = ""
    #: memdir's own lines dropped by this write because another entry links their file.
    dropped: tuple[DroppedLine, ...] = ()

    def clause(self) -> str:
        """One clause for a person and a model, e.g. "indexed in MEMORY.md at line 4 (no need to
        add a line)"; "" when there is nothing to say."""
        index = C.INDEX_FILENAME
        at = f"line {self.line}" if self.line is not None else "its line"
        parts = {
            "added": f"indexed in {index} at {at} (no need to add a line)",
            "updated": f"{index} {at} rewritten from the new name and description "
            "(memdir wrote that line; no need to edit it)",
            "unchanged": f"{index} {at} already links it (no need to add a line)",
            "kept": f"{index} {at} kept (written by hand; its hook may now disagree with the "
            "new description)",
            "removed": f"its entry removed from {index}",
            "relinked": f"{index} {at} now links the new path",
            "not-maintained": f"{index} not maintained ({self.reason})",
            "left-alone": f"{index} left alone: {self.reason}",
            "edited": "",
        }
        clauses = [parts[self.action]] if parts[self.action] else []
        clauses += [
            f"dropped memdir's own {index} line for {d.path} (line {d.kept_line} links it now)"
            for d in self.dropped
        ]
        return "; ".join(clauses)


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
    #: What the write did to MEMORY.md (None: nothing a write of this file could do to it).
    index: IndexOutcome | None = None

    @property
    def index_updated(self) -> bool:
        return any(c.path == C.INDEX_FILENAME for c in self.changes[1:])


def _cannot(doing: str, path: str, exc: OSError) -> WriteError:
    """The error for an operation on ``path`` the file system refused: what, and its reason."""
    return WriteError(f"cannot {doing}: {exc.strerror or exc}", path=path)
