"""Hostile tool arguments get short errors, cheaply, and keep the server's state small.

Over HTTP a request may carry 4 MiB, over stdio any size. A ``directory`` of 100,000 path
components took seconds to resolve on the event loop; a huge argument of the wrong type came back
whole in the error; each ``session_id`` was kept as sent, so 256 sessions of megabyte ids held
hundreds of megabytes.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from mcp import Client
from mcp.types import CallToolResult, TextContent
from memdir.faces.mcp_server import MAX_PATH_CHARS, MemdirMCP

FILES: dict[str, str | bytes] = {
    "MEMORY.md": "- [Deploy](deploy.md) — staging first\n",
    "deploy.md": "---\nname: deploy\ndescription: how deploys to the staging cluster work\n"
    "type: project\n---\nDeploys go through the staging cluster first.\n",
    "memdir.toml": 'selector = "lexical"\n',
}
QUERY = "how do deploys to the staging cluster work?"
HUGE = "x" * 1_000_000


def text_of(result: CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


@pytest.fixture
def memdir(make_dir: Callable[[dict[str, str | bytes]], Path]) -> MemdirMCP:
    return MemdirMCP([make_dir(FILES)])


async def test_a_directory_longer_than_a_path_is_not_resolved(
    memdir: MemdirMCP, monkeypatch: pytest.MonkeyPatch
) -> None:
    resolved: list[int] = []
    realpath = os.path.realpath

    def counting(path: str | Path) -> str:
        resolved.append(len(str(path)))
        return realpath(path)

    monkeypatch.setattr(os.path, "realpath", counting)
    far = "/a" * 100_000
    async with Client(memdir.server()) as client:
        for tool, arguments in (
            ("memory_lint", {"directory": far}),
            ("memory_index", {"directory": far}),
            ("memory_search", {"pattern": "x", "directory": far}),
            ("memory", {"command": "view", "directory": far}),
        ):
            result = await client.call_tool(tool, arguments)
            assert result.is_error
            assert "is not served here" in text_of(result)
            assert len(text_of(result)) < 1000
    assert max(resolved) <= MAX_PATH_CHARS


@pytest.mark.parametrize(
    ("tool", "arguments", "says"),
    [
        ("memory", {"command": HUGE}, "`command`: Input should be"),
        ("memory_search", {"pattern": "x", "ignore_case": HUGE}, "`ignore_case`: Input should"),
        ("memory_recall", {"query": QUERY, "recent_tools": HUGE}, "`recent_tools`: Input"),
        ("memory_index", {f"x{n}" * 1000: 1 for n in range(5000)}, "and 4995 more"),
    ],
)
async def test_errors_about_huge_arguments_are_short(
    memdir: MemdirMCP, tool: str, arguments: dict[str, object], says: str
) -> None:
    async with Client(memdir.server()) as client:
        result = await client.call_tool(tool, arguments)
        assert result.is_error
        assert says in text_of(result)
        assert len(text_of(result)) < 1000
        assert not (await client.call_tool("memory_index", {})).is_error


async def test_a_huge_session_id_is_kept_small_and_still_one_session(memdir: MemdirMCP) -> None:
    async with Client(memdir.server()) as client:
        ask = {"query": QUERY, "session_id": HUGE}
        assert "staging cluster first" in text_of(await client.call_tool("memory_recall", ask))
        again = text_of(await client.call_tool("memory_recall", ask))
        assert again.startswith("No memories recalled")  # the same session
        other = {"query": QUERY, "session_id": HUGE + "y"}
        assert "staging cluster first" in text_of(await client.call_tool("memory_recall", other))
    assert max(len(session_id) for _root, session_id in memdir.sessions) <= 128
