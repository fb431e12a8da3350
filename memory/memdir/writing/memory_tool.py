"""Claude's API memory tool (``memory_20250818``) served from a Claude Code memory dir.

An application that gives Claude the client-side memory tool executes its commands (``view``,
``create``, ``str_replace``, ``insert``, ``delete``, ``rename``) over a ``/memories`` tree.
:class:`MemdirMemoryTool` maps that tree onto a memdir, so ``memdir tool``, ``memdir mcp``, the
language server's ``memory/tool`` request (VS Code's ``memdir_memory``) and the extraction agent
read and write a Claude Code memory directory the way the API's tool does.

It is a small dispatcher over :class:`memdir.writing.writer.MemoryWriter`, with no dependency beyond
the core: the extension's bundled server and a core install run it. Its result and error strings are
the anthropic SDK's own local-filesystem tool's (``BetaLocalFilesystemMemoryTool``: the listing
with sizes up to two levels, hidden items excluded, numbered lines, ``view_range``); a test runs
one script of commands through both and compares, and names each place memdir deliberately
differs. Every mutation goes through the writer, so memdir's stricter path checks, the directory
lock, atomic no-replace writes, the secret check, index maintenance and ``modified`` stamps
apply.
"""

from __future__ import annotations

import asyncio
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from memdir.config import Settings
from memdir.containment import relative_inside
from memdir.secrets import SecretMatch, find_secrets
from memdir.writing.confine import resolve_path
from memdir.writing.memory_commands import (
    MEMORIES_ROOT,
    TOOL_NAME,
    TOOL_TYPE,
    WRITE_COMMANDS,
    Command,
    CreateCommand,
    DeleteCommand,
    InsertCommand,
    InvalidCommandError,
    RenameCommand,
    StrReplaceCommand,
    ToolResult,
    ViewCommand,
    parse_command,
    with_index_note,
)
from memdir.writing.results import (
    FileChange,
    IndexNotUpdatedError,
    InvalidLineError,
    MultipleMatchError,
    NoMatchError,
    NotAFileError,
    NotUTF8Error,
    PathExistsError,
    PathNotFoundError,
    UnsafePathError,
    WriteError,
    WriteResult,
)
from memdir.writing.writer import MemoryWriter

__all__ = [
    "MEMORIES_ROOT",
    "TOOL_NAME",
    "TOOL_TYPE",
    "WRITE_COMMANDS",
    "Command",
    "CreateCommand",
    "DeleteCommand",
    "InsertCommand",
    "InvalidCommandError",
    "MemdirMemoryTool",
    "RenameCommand",
    "SecretRefusedError",
    "StrReplaceCommand",
    "ToolResult",
    "ViewCommand",
    "parse_command",
    "refuse_secrets",
]

#: The API's line-number width in ``view`` and snippets (``len(str(999999))``).
_LINE_WIDTH: Final = 6
#: The API's longest file ``view`` shows.
_MAX_LINES: Final = 999_999
#: How deep a directory ``view`` lists.
_VIEW_DEPTH: Final = 2
#: Reasons (see :class:`memdir.writing.results.UnsafePathError`) the API words as an escape attempt
#: (a symlink leading out is one to the API's tool too: it resolves the path first).
_ESCAPE_REASONS: Final = frozenset(
    {"traversal", "absolute", "encoded", "lookalike", "home", "symlink"}
)


class _ResultError(Exception):
    """A command's error result, in the API's words."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


# --- secrets -----------------------------------------------------------------------------------


class SecretRefusedError(WriteError):
    """A write the memory tool refused: the file would hold a credential, or be named with one."""


def _kinds(found: list[SecretMatch]) -> str:
    return ", ".join(dict.fromkeys(match.kind for match in found))


#: ``scheme:/`` in a path as the writer keeps it: ``postgres://u:p@h/x.md`` lost a slash.
_SCHEME_SLASH = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*:)/(?!/)")


def _secrets_in_name(path: str) -> list[SecretMatch]:
    """The secrets in a path: read whole (a URL spans folders) and folder by folder (a value
    ends where its folder's name does), without its ``.md``."""
    name = _SCHEME_SLASH.sub(r"\1//", path.removesuffix(".md"))
    return find_secrets(name) or find_secrets(name.replace("/", "\n"))


def refuse_secrets(path: str, text: str | None) -> None:
    """The memory tool's :attr:`memdir.writing.writer.MemoryWriter.check`: refuse a write whose
    file, as it would be after the write, or whose name holds a credential.

    Memories are injected into every later conversation and often synced or committed: a key
    stored in one leaks everywhere. The whole resulting text is judged, not the edit, so a key
    written in two halves (a create, then a ``str_replace``) is refused when it is whole; names
    too, because a file's name is listed in MEMORY.md, which every session loads. The message
    names the kind of secret, never its text (nor the path, which may be the secret).
    """
    if found := _secrets_in_name(path):
        raise SecretRefusedError(
            f"refused: the file name holds what looks like a secret ({_kinds(found)}). "
            "Names are listed in MEMORY.md and injected into later conversations; name the "
            "memory for what it is about, never with a credential."
        )
    if text is not None and (found := find_secrets(text)):
        raise SecretRefusedError(
            f"refused: the file as it would be after this write holds what looks like a secret "
            f"({_kinds(found)}). Memories are injected into later conversations; store where "
            "the secret lives (an environment variable, a secrets manager), never the secret "
            "itself, and remove any that is already in the file."
        )


# --- the tool ----------------------------------------------------------------------------------


def _format_size(size: int) -> str:
    """A size as the API's listing shows it: ``0B``, ``512B``, ``4K``, ``1.3K``, ``2.0M``."""
    if size == 0:
        return "0B"
    units = ("B", "K", "M", "G")
    unit = min((size.bit_length() - 1) // 10, len(units) - 1)
    scaled = size / 1024**unit
    return f"{int(scaled)}{units[unit]}" if scaled == int(scaled) else f"{scaled:.1f}{units[unit]}"


def _numbered(lines: list[str], first: int) -> str:
    return "\n".join(
        f"{str(number).rjust(_LINE_WIDTH)}\t{line}" for number, line in enumerate(lines, first)
    )


def _path_error(path: str, exc: UnsafePathError) -> _ResultError:
    if exc.reason in _ESCAPE_REASONS:
        return _ResultError(f"Path {path} would escape /memories directory")
    return _ResultError(f"Invalid path {path}: {exc.detail}")


def _generic(path: str, exc: WriteError) -> _ResultError:
    if isinstance(exc, UnsafePathError):
        return _path_error(path, exc)
    return _ResultError(f"Error: {exc.message}")


def _edit_error(path: str, exc: WriteError) -> _ResultError:
    """What the API says when ``str_replace`` or ``insert`` cannot load its file."""
    if isinstance(exc, PathNotFoundError):
        return _ResultError(f"The path {path} does not exist. Please provide a valid path.")
    if isinstance(exc, NotAFileError):
        return _ResultError(f"The path {path} is not a file.")
    return _generic(path, exc)


@dataclass
class _Log:
    changes: list[FileChange] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: memdir's clause on the index for the command running now.
    index: str = ""


class MemdirMemoryTool:
    """The API memory tool over a memdir: ``/memories/x.md`` is ``<memory dir>/x.md``.

    :meth:`run` takes the raw tool input and returns a :class:`ToolResult`; every failure is an
    error result, never an exception. Every change made is appended to :attr:`changes` (with
    MEMORY.md's when the index was maintained).
    """

    def __init__(
        self,
        memory_dir: str | Path,
        *,
        settings: Settings | None = None,
        md_only: bool = False,
        lock_timeout: float | None = None,
    ) -> None:
        self.memory_root = Path(memory_dir)
        self.writer = MemoryWriter(
            self.memory_root, settings=settings, md_only=md_only, check=refuse_secrets
        )
        if lock_timeout is not None:
            self.writer.lock_timeout = lock_timeout
        self._log = _Log()
        self._handlers: dict[str, Callable[[Any], str]] = {
            "view": self._view,
            "create": self._create,
            "str_replace": self._str_replace,
            "insert": self._insert,
            "delete": self._delete,
            "rename": self._rename,
        }

    @property
    def changes(self) -> list[FileChange]:
        """Every file created, changed, deleted or renamed through this tool, in order."""
        return self._log.changes

    @property
    def warnings(self) -> list[str]:
        return self._log.warnings

    # -- entry points -------------------------------------------------------------------------

    def run(self, data: object) -> ToolResult:
        """Execute raw tool input; every failure is an error result, never an exception."""
        try:
            command = parse_command(data)
        except InvalidCommandError as exc:
            return ToolResult(f"Error: {exc}", is_error=True)
        return self.execute(command)

    def execute(self, command: Command) -> ToolResult:
        """Execute a parsed command (see :func:`parse_command`)."""
        known = len(self._log.warnings)
        self._log.index = ""
        try:
            text, is_error = self._handlers[command.command](command), False
        except _ResultError as exc:
            text, is_error = exc.text, True
        except OSError as exc:
            text, is_error = f"Error: {exc.strerror or exc}", True
        note = "" if is_error else self._log.index
        return ToolResult(
            with_index_note(text, note), is_error, tuple(self._log.warnings[known:]), note
        )

    async def arun(self, data: object) -> ToolResult:
        """:meth:`run` off the event loop (file work and the lock may block)."""
        return await asyncio.to_thread(self.run, data)

    # -- paths --------------------------------------------------------------------------------

    @staticmethod
    def _relative(path: str) -> str:
        if not (path == MEMORIES_ROOT or path.startswith(MEMORIES_ROOT + "/")):
            raise _ResultError(f"Path must start with /memories, got: {path}")
        return path[len(MEMORIES_ROOT) :].lstrip("/")

    def _record(self, result: WriteResult) -> None:
        self._log.changes.extend(result.changes)
        self._log.warnings.extend(result.warnings)
        self._log.index = result.index.clause() if result.index is not None else ""

    def _index_owed(self, exc: IndexNotUpdatedError, done: str) -> _ResultError:
        """The command was carried out but MEMORY.md not updated (a full disk): an error, so
        that every face says so (the CLI exits non-zero), worded so the model does not redo it."""
        self._record(exc.result)
        return _ResultError(f"Error: {done}, but {exc.message}")

    # -- view ---------------------------------------------------------------------------------

    def _view(self, command: ViewCommand) -> str:
        path = command.path
        try:
            target = resolve_path(self.memory_root, self._relative(path))
        except UnsafePathError as exc:
            raise _path_error(path, exc) from None
        try:
            info = os.lstat(target.path)
        except (FileNotFoundError, NotADirectoryError):
            raise _ResultError(
                f"The path {path} does not exist. Please provide a valid path."
            ) from None
        if stat.S_ISDIR(info.st_mode):
            return self._listing(path, target.root, target.path, info)
        if not stat.S_ISREG(info.st_mode):
            raise _ResultError(f"Unsupported file type for {path}")
        try:
            text = self.writer.read(target.rel)
        except PathNotFoundError:
            raise _ResultError(
                f"The file {path} no longer exists (may have been deleted or renamed concurrently)."
            ) from None
        except NotUTF8Error:
            raise _ResultError(f"The file {path} is not valid UTF-8 text.") from None
        except WriteError as exc:
            raise _generic(path, exc) from None
        lines = text.split("\n")
        if len(lines) > _MAX_LINES:
            raise _ResultError(f"File {path} exceeds maximum line limit of 999,999 lines.")
        first = 1
        if command.view_range and len(command.view_range) == 2:
            start, end = command.view_range
            first = max(1, start)
            lines = lines[first - 1 : len(lines) if end == -1 else end]
        return f"Here's the content of {path} with line numbers:\n" + _numbered(lines, first)

    @staticmethod
    def _listing(path: str, root: Path, folder: Path, info: os.stat_result) -> str:
        """Two levels of ``folder``, by name, without hidden names or links leading out."""
        rows = [f"{_format_size(info.st_size)}\t{path}"]

        def collect(directory: Path, prefix: str, depth: int) -> None:
            try:
                items = sorted(directory.iterdir(), key=lambda item: item.name)
            except OSError:
                return
            for item in items:
                if item.name.startswith("."):
                    continue
                try:
                    if relative_inside(root, item) is None:
                        continue
                    size = item.stat().st_size
                except (OSError, ValueError):
                    continue
                shown = f"{prefix}{item.name}"
                if item.is_dir():
                    rows.append(f"{_format_size(size)}\t{path}/{shown}/")
                    if depth < _VIEW_DEPTH:
                        collect(item, f"{shown}/", depth + 1)
                elif item.is_file():
                    rows.append(f"{_format_size(size)}\t{path}/{shown}")

        collect(folder, "", 1)
        header = (
            f"Here're the files and directories up to 2 levels deep in {path}, "
            "excluding hidden items:"
        )
        return header + "\n" + "\n".join(rows)

    # -- mutations, all through memdir.writing.writer -------------------------------------------

    def _create(self, command: CreateCommand) -> str:
        path = command.path
        try:
            result = self.writer.create(self._relative(path), command.file_text)
        except IndexNotUpdatedError as exc:
            raise self._index_owed(exc, f"File created at: {path}") from None
        except PathExistsError:
            raise _ResultError(f"File {path} already exists") from None
        except WriteError as exc:
            raise _generic(path, exc) from None
        self._record(result)
        return f"File created successfully at: {path}"

    def _str_replace(self, command: StrReplaceCommand) -> str:
        path, old = command.path, command.old_str
        try:
            result = self.writer.str_replace(self._relative(path), old, command.new_str)
        except IndexNotUpdatedError as exc:
            raise self._index_owed(exc, f"The file {path} has been edited") from None
        except NoMatchError:
            raise _ResultError(
                f"No replacement was performed, old_str `{old}` did not appear verbatim in {path}."
            ) from None
        except MultipleMatchError as exc:
            raise _ResultError(
                f"No replacement was performed. Multiple occurrences of old_str `{old}` in "
                f"lines: {', '.join(map(str, exc.lines))}. Please ensure it is unique"
            ) from None
        except WriteError as exc:
            raise _edit_error(path, exc) from None
        self._record(result)
        lines = (result.text or "").split("\n")
        changed = result.changed_line or 0
        start, end = max(0, changed - 2), min(len(lines), changed + 3)
        return (
            "The memory file has been edited. Here is the snippet showing the change "
            f"(with line numbers):\n{_numbered(lines[start:end], start + 1)}"
        )

    def _insert(self, command: InsertCommand) -> str:
        path = command.path
        try:
            result = self.writer.insert(
                self._relative(path), command.insert_line, command.insert_text
            )
        except IndexNotUpdatedError as exc:
            raise self._index_owed(exc, f"The file {path} has been edited") from None
        except InvalidLineError as exc:
            raise _ResultError(
                f"Invalid `insert_line` parameter: {command.insert_line}. "
                f"It should be within the range [0, {exc.line_count}]."
            ) from None
        except WriteError as exc:
            raise _edit_error(path, exc) from None
        self._record(result)
        return f"The file {path} has been edited."

    def _delete(self, command: DeleteCommand) -> str:
        path = command.path
        try:
            result = self.writer.delete(self._relative(path))
        except IndexNotUpdatedError as exc:
            raise self._index_owed(exc, f"Deleted {path}") from None
        except UnsafePathError as exc:
            if exc.reason == "root":
                raise _ResultError("Cannot delete the /memories directory itself") from None
            raise _path_error(path, exc) from None
        except PathNotFoundError:
            raise _ResultError(f"The path {path} does not exist") from None
        except WriteError as exc:
            raise _generic(path, exc) from None
        self._record(result)
        return f"Successfully deleted {path}"

    def _rename(self, command: RenameCommand) -> str:
        old, new = command.old_path, command.new_path
        old_relative, new_relative = self._relative(old), self._relative(new)
        try:
            result = self.writer.rename(old_relative, new_relative)
        except IndexNotUpdatedError as exc:
            raise self._index_owed(exc, f"Renamed {old} to {new}") from None
        except UnsafePathError as exc:
            if exc.reason == "root":
                raise _ResultError("Cannot rename the /memories directory itself") from None
            raise _path_error(new if exc.path == new_relative else old, exc) from None
        except PathExistsError:
            raise _ResultError(f"The destination {new} already exists") from None
        except PathNotFoundError:
            raise _ResultError(f"The path {old} does not exist") from None
        except WriteError as exc:
            raise _generic(old, exc) from None
        self._record(result)
        return f"Successfully renamed {old} to {new}"
