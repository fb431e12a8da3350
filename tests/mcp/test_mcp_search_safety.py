"""``memory_search`` with a catastrophic pattern: an error naming the file, other calls answered.

Python's ``re`` holds the GIL while it backtracks: ``(-+)+x`` on a Markdown rule line used to
stop the whole MCP server for minutes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import CallToolResult, TextContent
from memdir.faces.mcp_server import build_server

FILES: dict[str, str | bytes] = {
    "MEMORY.md": "- [Rules](rules.md) — how we write\n",
    "rules.md": "---\nname: rules\ndescription: how we write\ntype: project\n---\n"
    + "Intro\n"
    + "-" * 32
    + "\nMore\n",
}


def text_of(result: CallToolResult) -> str:
    assert len(result.content) == 1
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


@pytest.mark.processes
async def test_a_slow_search_is_an_error_and_other_calls_are_answered_meanwhile(
    make_dir: Callable[[dict[str, str | bytes]], Path],
) -> None:
    root = make_dir(FILES)
    answered: list[str] = []
    async with Client(build_server(root)) as client:

        async def call(tool: str, arguments: dict[str, Any]) -> CallToolResult:
            result = await client.call_tool(tool, arguments)
            answered.append(tool)
            return result

        search = asyncio.ensure_future(call("memory_search", {"pattern": "(-+)+x"}))
        index = await call("memory_index", {})
        slow = await search
        assert not index.is_error
        assert answered == ["memory_index", "memory_search"]
        assert slow.is_error
        assert text_of(slow) == (
            "Error executing tool memory_search: `pattern`: the pattern took longer than 2 s "
            "on rules.md; simplify it or search literally"
        )
        found = await client.call_tool("memory_search", {"pattern": "^-{5,}$"})
        assert text_of(found) == "rules.md:7:1: " + "-" * 32


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("a{99999999999}", "a repetition count is too large"),
        ("(" * 5000 + ")" * 5000, "the pattern nests too deeply"),
    ],
)
async def test_patterns_that_cannot_compile_say_why(
    make_dir: Callable[[dict[str, str | bytes]], Path], pattern: str, message: str
) -> None:
    async with Client(build_server(make_dir(FILES))) as client:
        result = await client.call_tool("memory_search", {"pattern": pattern})
    assert result.is_error
    assert text_of(result) == (
        "Error executing tool memory_search: "
        f"`pattern` is not a valid regular expression: {message}"
    )
