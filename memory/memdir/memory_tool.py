"""Claude's API memory tool (``memory_20250818``) served from a Claude Code memory dir.

An application that gives Claude the client-side memory tool executes its commands (``view``,
``create``, ``str_replace``, ``insert``, ``delete``, ``rename``) over a ``/memories`` tree.
:class:`MemdirMemoryTool` maps that tree onto a memdir, so such an application (and ``memdir
tool``, the language server's ``memory/tool`` request and the extraction agent) can read and
write a Claude Code memory directory.

It is built on the anthropic SDK's own classes (spec section 10): the SDK's local-filesystem
tool provides ``view`` (directory listing up to two levels, hidden items excluded, numbered
lines and ``view_range``) and the API's result and error strings are reproduced from it; every
mutation is routed through :class:`memdir.write.MemoryWriter` instead of the SDK's file code, so
memdir's stricter path checks, the directory lock, atomic no-replace writes, index maintenance
and ``modified`` stamps apply. The SDK's ``clear_all_memory`` is refused: a Claude Code memory
dir is never wiped wholesale.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

try:
    import pydantic
    from anthropic.lib.tools import ToolError
    from anthropic.tools.memory import BetaAbstractMemoryTool, BetaLocalFilesystemMemoryTool
    from anthropic.types.beta import (
        BetaMemoryTool20250818Command,
        BetaMemoryTool20250818CreateCommand,
        BetaMemoryTool20250818DeleteCommand,
        BetaMemoryTool20250818InsertCommand,
        BetaMemoryTool20250818RenameCommand,
        BetaMemoryTool20250818StrReplaceCommand,
        BetaMemoryTool20250818ViewCommand,
    )
    from typing_extensions import override
except ImportError:
    from memdir.extras import require

    require("anthropic", "the memory tool")  # when the extra is the cause, say so in one line
    raise

from memdir.config import Settings
from memdir.lint.secrets import SecretMatch, find_secrets
from memdir.write import (
    FileChange,
    IndexNotUpdatedError,
    InvalidLineError,
    MemoryWriter,
    MultipleMatchError,
    NoMatchError,
    NotAFileError,
    PathExistsError,
    PathNotFoundError,
    UnsafePathError,
    WriteError,
    WriteResult,
    resolve_path,
)

#: The virtual root the API's memory tool works in.
MEMORIES_ROOT: Final = "/memories"
#: The tool definition sent to the API.
TOOL_TYPE: Final = "memory_20250818"
TOOL_NAME: Final = "memory"
#: SDK line-number width in ``view`` and snippets (``len(str(999999))``).
_LINE_WIDTH: Final = 6

_COMMANDS: Final[dict[str, type[pydantic.BaseModel]]] = {
    "view": BetaMemoryTool20250818ViewCommand,
    "create": BetaMemoryTool20250818CreateCommand,
    "str_replace": BetaMemoryTool20250818StrReplaceCommand,
    "insert": BetaMemoryTool20250818InsertCommand,
    "delete": BetaMemoryTool20250818DeleteCommand,
    "rename": BetaMemoryTool20250818RenameCommand,
}
#: The commands that change the memory dir (all but ``view``): what a read-only server refuses.
WRITE_COMMANDS: Final = frozenset(_COMMANDS) - {"view"}
#: Reasons (see :class:`memdir.write.UnsafePathError`) the API words as an escape attempt.
_ESCAPE_REASONS: Final = frozenset({"traversal", "absolute", "encoded", "lookalike", "home"})


class InvalidCommandError(ValueError):
    """The tool input is not a memory command (unknown command, missing or mistyped field)."""


@dataclass(frozen=True)
class ToolResult:
    """The text a memory command returns, and whether the API should see it as an error."""

    text: str
    is_error: bool = False
    #: What the user should know that did not stop the command (MEMORY.md left alone, an
    #: interrupted write's journal refused): the API's text has no room for it, so each face
    #: shows it its own way (stderr, a second paragraph, a ``warnings`` field).
    warnings: tuple[str, ...] = ()

    def to_block(self, tool_use_id: str) -> dict[str, Any]:
        """As a ``tool_result`` content block for the Messages API."""
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_use_id}
        block["content"] = self.text
        if self.is_error:
            block["is_error"] = True
        return block


def parse_command(data: object) -> BetaMemoryTool20250818Command:
    """Validate raw tool input (a dict from JSON) into one of the SDK's command models."""
    if not isinstance(data, Mapping):
        raise InvalidCommandError("a memory command must be a JSON object")
    name = data.get("command")
    model = _COMMANDS.get(name) if isinstance(name, str) else None
    if model is None:
        known = ", ".join(_COMMANDS)
        raise InvalidCommandError(f"unknown memory command {name!r} (expected one of: {known})")
    try:
        command = model.model_validate(dict(data))
    except pydantic.ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in error['loc']) or 'input'}: {error['msg']}"
            for error in exc.errors()
        )
        raise InvalidCommandError(f"invalid {name} command: {problems}") from None
    return command  # type: ignore[return-value]


@dataclass
class _Log:
    changes: list[FileChange] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


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
    """The memory tool's :attr:`memdir.write.MemoryWriter.check`: refuse a write whose file, as
    it would be after the write, or whose name holds a credential.

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


class MemdirMemoryTool(BetaLocalFilesystemMemoryTool):
    """The API memory tool over a memdir: ``/memories/x.md`` is ``<memory dir>/x.md``.

    Use it with the SDK's tool runner (``tools=[MemdirMemoryTool(dir)]``), or call
    :meth:`run` with the raw tool input to get a :class:`ToolResult`. Every change made is
    appended to :attr:`changes` (with MEMORY.md's when the index was maintained).
    """

    def __init__(
        self,
        memory_dir: str | Path,
        *,
        settings: Settings | None = None,
        md_only: bool = False,
        lock_timeout: float | None = None,
    ) -> None:
        # The SDK's __init__ would create ``<base>/memories``; a memdir *is* the root, and it
        # must already exist, so only the abstract base's initialiser runs.
        BetaAbstractMemoryTool.__init__(self)
        self.base_path = Path(memory_dir)
        self.memory_root = Path(memory_dir)
        self.writer = MemoryWriter(
            self.memory_root, settings=settings, md_only=md_only, check=refuse_secrets
        )
        if lock_timeout is not None:
            self.writer.lock_timeout = lock_timeout
        self._log = _Log()

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
        known = len(self._log.warnings)
        text, is_error = self._execute(command)
        return ToolResult(text, is_error, tuple(self._log.warnings[known:]))

    def _execute(self, command: BetaMemoryTool20250818Command) -> tuple[str, bool]:
        try:
            result = self.execute(command)
        except ToolError as exc:
            return (exc.content if isinstance(exc.content, str) else str(exc)), True
        except UnicodeDecodeError:
            shown = getattr(command, "path", MEMORIES_ROOT)
            return f"The file {shown} is not valid UTF-8 text.", True
        except OSError as exc:
            return f"Error: {exc.strerror or exc}", True
        return (result if isinstance(result, str) else str(result)), False

    async def arun(self, data: object) -> ToolResult:
        """:meth:`run` off the event loop (file work and the lock may block)."""
        return await asyncio.to_thread(self.run, data)

    # -- paths --------------------------------------------------------------------------------

    def _relative(self, path: str) -> str:
        if not isinstance(path, str) or not (
            path == MEMORIES_ROOT or path.startswith(MEMORIES_ROOT + "/")
        ):
            raise ToolError(f"Path must start with /memories, got: {path}")
        return path[len(MEMORIES_ROOT) :].lstrip("/")

    @staticmethod
    def _path_error(path: str, exc: UnsafePathError) -> ToolError:
        if exc.reason == "symlink":
            return ToolError("Path would escape /memories directory via symlink")
        if exc.reason in _ESCAPE_REASONS:
            return ToolError(f"Path {path} would escape /memories directory")
        return ToolError(f"Invalid path {path}: {exc.detail}")

    @override
    def _validate_path(self, path: str) -> Path:
        """memdir's checks (stricter than the SDK's) behind the SDK's ``view``."""
        relative = self._relative(path)
        try:
            return resolve_path(self.memory_root, relative).path
        except UnsafePathError as exc:
            raise self._path_error(path, exc) from None

    # -- mutations, all through memdir.write ----------------------------------------------------

    def _record(self, result: WriteResult) -> None:
        self._log.changes.extend(result.changes)
        self._log.warnings.extend(result.warnings)

    def _index_owed(self, exc: IndexNotUpdatedError, done: str) -> ToolError:
        """The command was carried out but MEMORY.md not updated (a full disk): an error, so
        that every face says so (the CLI exits non-zero), worded so the model does not redo it."""
        self._record(exc.result)
        return ToolError(f"Error: {done}, but {exc.message}")

    def _generic(self, path: str, exc: WriteError) -> ToolError:
        if isinstance(exc, UnsafePathError):
            return self._path_error(path, exc)
        return ToolError(f"Error: {exc.message}")

    @override
    def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        relative = self._relative(command.path)
        try:
            result = self.writer.create(relative, command.file_text)
        except IndexNotUpdatedError as exc:
            raise self._index_owed(exc, f"File created at: {command.path}") from exc
        except PathExistsError as exc:
            raise ToolError(f"File {command.path} already exists") from exc
        except WriteError as exc:
            raise self._generic(command.path, exc) from exc
        self._record(result)
        return f"File created successfully at: {command.path}"

    def _edit_errors(self, path: str, exc: WriteError) -> ToolError:
        if isinstance(exc, PathNotFoundError):
            return ToolError(f"The path {path} does not exist. Please provide a valid path.")
        if isinstance(exc, NotAFileError):
            return ToolError(f"The path {path} is not a file.")
        return self._generic(path, exc)

    @override
    def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        relative = self._relative(command.path)
        try:
            result = self.writer.str_replace(relative, command.old_str, command.new_str)
        except IndexNotUpdatedError as exc:
            raise self._index_owed(exc, f"The file {command.path} has been edited") from exc
        except NoMatchError as exc:
            raise ToolError(
                f"No replacement was performed, old_str `{command.old_str}` did not appear "
                f"verbatim in {command.path}."
            ) from exc
        except MultipleMatchError as exc:
            raise ToolError(
                f"No replacement was performed. Multiple occurrences of old_str "
                f"`{command.old_str}` in lines: {', '.join(map(str, exc.lines))}. "
                "Please ensure it is unique"
            ) from exc
        except WriteError as exc:
            raise self._edit_errors(command.path, exc) from exc
        self._record(result)
        lines = (result.text or "").split("\n")
        changed = result.changed_line or 0
        start, end = max(0, changed - 2), min(len(lines), changed + 3)
        snippet = "\n".join(
            f"{str(number).rjust(_LINE_WIDTH)}\t{lines[number - 1]}"
            for number in range(start + 1, end + 1)
        )
        return (
            "The memory file has been edited. Here is the snippet showing the change "
            f"(with line numbers):\n{snippet}"
        )

    @override
    def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        relative = self._relative(command.path)
        try:
            result = self.writer.insert(relative, command.insert_line, command.insert_text)
        except IndexNotUpdatedError as exc:
            raise self._index_owed(exc, f"The file {command.path} has been edited") from exc
        except InvalidLineError as exc:
            raise ToolError(
                f"Invalid `insert_line` parameter: {command.insert_line}. "
                f"It should be within the range [0, {exc.line_count}]."
            ) from exc
        except WriteError as exc:
            raise self._edit_errors(command.path, exc) from exc
        self._record(result)
        return f"The file {command.path} has been edited."

    @override
    def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        relative = self._relative(command.path)
        try:
            result = self.writer.delete(relative)
        except IndexNotUpdatedError as exc:
            raise self._index_owed(exc, f"Deleted {command.path}") from exc
        except UnsafePathError as exc:
            if exc.reason == "root":
                raise ToolError("Cannot delete the /memories directory itself") from exc
            raise self._path_error(command.path, exc) from exc
        except PathNotFoundError as exc:
            raise ToolError(f"The path {command.path} does not exist") from exc
        except WriteError as exc:
            raise self._generic(command.path, exc) from exc
        self._record(result)
        return f"Successfully deleted {command.path}"

    @override
    def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        old_relative = self._relative(command.old_path)
        new_relative = self._relative(command.new_path)
        try:
            result = self.writer.rename(old_relative, new_relative)
        except IndexNotUpdatedError as exc:
            raise self._index_owed(
                exc, f"Renamed {command.old_path} to {command.new_path}"
            ) from exc
        except UnsafePathError as exc:
            if exc.reason == "root":
                raise ToolError("Cannot rename the /memories directory itself") from exc
            shown = command.new_path if exc.path == new_relative else command.old_path
            raise self._path_error(shown, exc) from exc
        except PathExistsError as exc:
            raise ToolError(f"The destination {command.new_path} already exists") from exc
        except PathNotFoundError as exc:
            raise ToolError(f"The path {command.old_path} does not exist") from exc
        except WriteError as exc:
            raise self._generic(command.old_path, exc) from exc
        self._record(result)
        return f"Successfully renamed {command.old_path} to {command.new_path}"

    @override
    def clear_all_memory(self) -> str:
        raise ToolError("memdir never clears a memory directory; delete files one at a time")
