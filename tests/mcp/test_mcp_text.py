"""What the model reads of ``memdir mcp``, checked against what the tools take.

A description names arguments in backticks, and only arguments: each one it names is in the
tool's input schema, and each required one is named. The ``memory`` tool's description gives one
line per command, naming exactly the fields that command reads (``memdir.writing.
memory_commands``, the parser every face shares), optional ones marked so.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
from mcp import Client
from mcp.types import Tool
from memdir import constants as C
from memdir.faces.mcp_server import build_server
from memdir.writing.memory_commands import (
    CreateCommand,
    DeleteCommand,
    InsertCommand,
    RenameCommand,
    StrReplaceCommand,
    ViewCommand,
)

COMMANDS = [
    ViewCommand,
    CreateCommand,
    StrReplaceCommand,
    InsertCommand,
    DeleteCommand,
    RenameCommand,
]
NAMED = re.compile(r"`([^`]+)`")


def _named(text: str) -> set[str]:
    return set(NAMED.findall(text))


def _command_fields(command: type) -> tuple[set[str], set[str]]:
    """The fields a memory command requires, and those it may take."""
    fields = dataclasses.fields(command)
    required = {f.name for f in fields if f.default is dataclasses.MISSING}
    return required, {f.name for f in fields} - required


async def _listing(root: Path, *, read_only: bool) -> tuple[str, dict[str, Tool]]:
    async with Client(build_server(root, read_only=read_only)) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert client.instructions is not None
        return client.instructions, tools


@pytest.mark.parametrize("read_only", [False, True])
async def test_descriptions_name_the_arguments_of_their_schemas(
    tmp_path: Path, read_only: bool
) -> None:
    instructions, tools = await _listing(tmp_path, read_only=read_only)
    for name, tool in tools.items():
        assert tool.description is not None
        properties = set(tool.input_schema["properties"])
        assert _named(tool.description) <= properties, name
        assert set(tool.input_schema.get("required", [])) <= _named(tool.description), name
        # Each tool it points the model to exists.
        assert set(re.findall(r"\bmemory_\w+", tool.description)) <= set(tools), name
    assert set(re.findall(r"\bmemory_\w+", instructions)) <= set(tools)
    assert "call memory_recall with the user's message" in instructions
    assert "Before answering a question about the user, the project or past decisions" in (
        instructions
    )
    assert tools["memory_recall"].description is not None
    assert tools["memory_recall"].description.startswith(
        "Call before answering a question about the user, the project or past decisions"
    )
    memory = tools["memory"].description
    assert memory is not None
    for kind in C.MEMORY_TYPES:
        assert kind in memory


async def test_the_memory_tool_says_what_each_command_takes(tmp_path: Path) -> None:
    instructions, tools = await _listing(tmp_path, read_only=False)
    description = tools["memory"].description
    assert description is not None
    lines = {
        line[2:].split(":", 1)[0]: line
        for line in description.splitlines()
        if line.startswith("- ")
    }
    assert list(lines) == tools["memory"].input_schema["properties"]["command"]["enum"]
    assert list(lines) == [command.command for command in COMMANDS]
    for command in COMMANDS:
        required, optional = _command_fields(command)
        line = lines[command.command]
        assert _named(line) == required | optional, line
        for field in optional:
            assert f"optional `{field}`" in line
    index_kept = f"memdir keeps {C.INDEX_FILENAME}'s entry for each file it writes"
    assert index_kept in description
    assert index_kept in instructions


async def test_the_read_only_memory_tool_offers_view_alone(tmp_path: Path) -> None:
    instructions, tools = await _listing(tmp_path, read_only=True)
    description = tools["memory"].description
    assert description is not None
    required, optional = _command_fields(ViewCommand)
    assert _named(description) == {"command"} | required | optional
    assert "view only" in instructions
    assert "keeps" not in instructions
