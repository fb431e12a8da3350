"""The commands of Claude's API memory tool (``memory_20250818``), as plain values.

What a caller needs before any file is touched: the six commands (``view``, ``create``,
``str_replace``, ``insert``, ``delete``, ``rename``) as frozen dataclasses, :func:`parse_command`
to check raw tool input (a dict from JSON) into one, which of them write, and the
:class:`ToolResult` every face shows. No file access and nothing beyond the standard library:
``memdir mcp`` builds its tool schema from here at startup, and loads the tool itself
(:mod:`memdir.writing.memory_tool`, over the writer) on the first call.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Final

#: The virtual root the API's memory tool works in.
MEMORIES_ROOT: Final = "/memories"
#: The tool definition sent to the API.
TOOL_TYPE: Final = "memory_20250818"
TOOL_NAME: Final = "memory"


@dataclass(frozen=True)
class ViewCommand:
    path: str
    #: ``[start, end]``, 1-based, ``end`` -1 for the last line; any other length is ignored, as
    #: the API's tool does.
    view_range: tuple[int, ...] | None = None
    command: ClassVar[str] = "view"


@dataclass(frozen=True)
class CreateCommand:
    path: str
    file_text: str
    command: ClassVar[str] = "create"


@dataclass(frozen=True)
class StrReplaceCommand:
    path: str
    old_str: str
    new_str: str
    command: ClassVar[str] = "str_replace"


@dataclass(frozen=True)
class InsertCommand:
    path: str
    insert_line: int
    insert_text: str
    command: ClassVar[str] = "insert"


@dataclass(frozen=True)
class DeleteCommand:
    path: str
    command: ClassVar[str] = "delete"


@dataclass(frozen=True)
class RenameCommand:
    old_path: str
    new_path: str
    command: ClassVar[str] = "rename"


#: One command of the tool; ``command.command`` names it.
Command = (
    ViewCommand | CreateCommand | StrReplaceCommand | InsertCommand | DeleteCommand | RenameCommand
)

_COMMANDS: Final[dict[str, type[Command]]] = {
    cls.command: cls
    for cls in (
        ViewCommand,
        CreateCommand,
        StrReplaceCommand,
        InsertCommand,
        DeleteCommand,
        RenameCommand,
    )
}
#: The commands that change the memory dir (all but ``view``): what a read-only server refuses.
WRITE_COMMANDS: Final = frozenset(_COMMANDS) - {"view"}
#: The commands after which the model has a file's content (it was shown it, or wrote it), and
#: the input field naming that file: what counts as seen in an agent session.
SHOWING_COMMANDS: Final = {
    "view": "path",
    "create": "path",
    "str_replace": "path",
    "insert": "path",
    "rename": "new_path",
}


def memories_relative(path: object) -> str | None:
    """A ``/memories/<rel>`` path's ``<rel>`` (None for the root itself or another path)."""
    if isinstance(path, str) and path.startswith(MEMORIES_ROOT + "/"):
        return path[len(MEMORIES_ROOT) + 1 :] or None
    return None


class InvalidCommandError(ValueError):
    """The tool input is not a memory command (unknown command, missing or mistyped field)."""


def _field_problem(value: object, annotation: str) -> str | None:
    """Why ``value`` does not fit a command field (annotations are strings here), or None."""
    if annotation == "str":
        return None if isinstance(value, str) else "must be a string"
    if annotation == "int":
        # bool is an int to Python, never to the API.
        ok = isinstance(value, int) and not isinstance(value, bool)
        return None if ok else "must be an integer"
    # ``view_range``, the one optional field.
    if value is None:
        return None
    items = value if isinstance(value, list | tuple) else None
    if items is None or any(isinstance(n, bool) or not isinstance(n, int) for n in items):
        return "must be a list of integers"
    return None


def parse_command(data: object) -> Command:
    """Check raw tool input (a dict from JSON) and make it one of the command types.

    Fields the command does not take are ignored, as the API's tool ignores them.
    """
    if not isinstance(data, Mapping):
        raise InvalidCommandError("a memory command must be a JSON object")
    name = data.get("command")
    model = _COMMANDS.get(name) if isinstance(name, str) else None
    if model is None:
        known = ", ".join(_COMMANDS)
        raise InvalidCommandError(f"unknown memory command {name!r} (expected one of: {known})")
    values: dict[str, Any] = {}
    problems: list[str] = []
    for spec in dataclasses.fields(model):
        if spec.name not in data:
            if spec.default is dataclasses.MISSING:
                problems.append(f"{spec.name}: required")
            continue
        value = data[spec.name]
        problem = _field_problem(value, str(spec.type))
        if problem is not None:
            problems.append(f"{spec.name}: {problem}")
        else:
            values[spec.name] = tuple(value) if isinstance(value, list) else value
    if problems:
        raise InvalidCommandError(f"invalid {name} command: {'; '.join(problems)}")
    return model(**values)


@dataclass(frozen=True)
class ToolResult:
    """The text a memory command returns, and whether the API should see it as an error."""

    text: str
    is_error: bool = False
    #: What the user should know that did not stop the command (MEMORY.md left alone, an
    #: interrupted write's journal refused): the API's text has no room for it, so each face
    #: shows it its own way (stderr, a second paragraph, a ``warnings`` field).
    warnings: tuple[str, ...] = ()
    #: memdir's clause on what the write did to MEMORY.md, already at the end of ``text`` (see
    #: :func:`with_index_note`); "" when there is none. ``text`` without it is the API's own.
    index: str = ""

    @property
    def api_text(self) -> str:
        """``text`` as the API's tool words it, without memdir's clause on the index."""
        for suffix in (f"; {self.index}", f"\nmemdir: {self.index}."):
            if self.index and self.text.endswith(suffix):
                return self.text.removesuffix(suffix)
        return self.text

    def to_block(self, tool_use_id: str) -> dict[str, Any]:
        """As a ``tool_result`` content block for the Messages API."""
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_use_id}
        block["content"] = self.text
        if self.is_error:
            block["is_error"] = True
        return block


def with_index_note(text: str, note: str) -> str:
    """The API's result ``text`` followed by memdir's ``note`` on the index: "File created
    successfully at: /memories/x.md; indexed in MEMORY.md at line 4 (…)". The API's words stay
    as they are; after a result of several lines (a snippet) or a full stop, the note is a
    sentence of its own on a new line."""
    if not note:
        return text
    if "\n" in text or text.endswith("."):
        return f"{text}\nmemdir: {note}."
    return f"{text}; {note}"
