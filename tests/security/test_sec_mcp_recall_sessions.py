"""``memory_recall``'s sessions are bounded in number and in time.

Each ``session_id`` a client sends keeps a recall session (what it has been shown, its budget)
in the server. The least recently used go first past :data:`MAX_SESSIONS`, and a session idle
for :data:`SESSION_IDLE_SECONDS` is forgotten, so a long-running HTTP server does not
keep every conversation it ever served. The clock is the test's: no waiting.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from mcp import Client
from mcp.types import TextContent
from memdir.faces.mcp_server import MemdirMCP
from memdir.recall.surface import MAX_SESSIONS, SESSION_IDLE_SECONDS
from memhelpers import DEPLOY_FILES, DEPLOY_QUERY


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_an_idle_session_is_forgotten(
    make_dir: Callable[[dict[str, str | bytes]], Path],
) -> None:
    clock = Clock()
    memdir = MemdirMCP([make_dir(DEPLOY_FILES)], clock=clock)

    async def recall(session: str) -> str:
        result = await client.call_tool(
            "memory_recall", {"query": DEPLOY_QUERY, "session_id": session}
        )
        block = result.content[0]
        assert isinstance(block, TextContent)
        return block.text

    async with Client(memdir.server()) as client:
        assert "staging cluster first" in await recall("s1")
        assert (await recall("s1")).startswith("No memories recalled")
        clock.now += SESSION_IDLE_SECONDS - 1
        assert (await recall("s1")).startswith("No memories recalled")  # used: kept
        clock.now += SESSION_IDLE_SECONDS - 1
        assert "staging cluster first" in await recall("s2")
        assert len(memdir.sessions) == 2
        clock.now += SESSION_IDLE_SECONDS
        assert "staging cluster first" in await recall("s3")
        assert [key[1] for key in memdir.sessions] == ["s3"]  # s1 and s2 idled out
        assert "staging cluster first" in await recall("s1")  # afresh


def test_sessions_are_capped_least_recently_used_first(tmp_path: Path) -> None:
    clock = Clock()
    memdir = MemdirMCP([tmp_path], clock=clock)
    first = memdir.session(tmp_path, "first")
    for n in range(MAX_SESSIONS + 50):
        clock.now += 1
        memdir.session(tmp_path, f"s{n}")
        if n % 10 == 0:
            assert memdir.session(tmp_path, "first") is first  # kept while in use
    assert len(memdir.sessions) == MAX_SESSIONS
    assert memdir.session(tmp_path, "first") is first
    assert (tmp_path, "s0") not in memdir.sessions
