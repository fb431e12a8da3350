"""``memdir mcp --http``: a flood of sessions cannot lock other clients out.

The SDK refuses a new session with 503 once 10,000 are open, until they idle out (30 minutes):
one client opening sessions in a loop (19 s) locked every other one out. memdir caps sessions
lower and, at the cap, a newcomer evicts the least recently used session that is not answering
a request. The server runs in process on a real socket with a cap of 3, so counting is cheap.
"""

from __future__ import annotations

import contextlib
import json
import socket
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
import uvicorn
from memdir.faces.mcp_server import build_server
from memdir.faces.mcp_transport import SessionLRU
from memhelpers import MCP_HEADERS, MCP_INITIALIZE, MCP_INITIALIZED

CAP = 3
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


class Served:
    def __init__(self, url: str, sessions: SessionLRU, client: httpx2.AsyncClient) -> None:
        self.url, self.sessions, self.client = url, sessions, client

    async def post(self, message: dict[str, Any], **headers: str) -> httpx2.Response:
        return await self.client.post(self.url, json=message, headers={**MCP_HEADERS, **headers})

    async def open(self) -> str:
        opened = await self.post(MCP_INITIALIZE)
        assert opened.status_code == 200, opened.text
        session = opened.headers["mcp-session-id"]
        done = await self.post(MCP_INITIALIZED, **{"mcp-session-id": session})
        assert done.status_code == 202
        return session

    async def answers(self, session: str) -> bool:
        """Whether the session still answers (200), or is gone (404)."""
        response = await self.post(LIST, **{"mcp-session-id": session})
        assert response.status_code in (200, 404), response.text
        if response.status_code == 200:
            data = [line[5:] for line in response.text.splitlines() if line.startswith("data:")]
            assert "tools" in json.loads(data[-1])["result"]
        return response.status_code == 200


@pytest.fixture
def root(make_dir: Callable[[dict[str, str | bytes]], Path]) -> Path:
    return make_dir({"MEMORY.md": "- [Deploy](deploy.md) — how\n"})


@contextlib.asynccontextmanager
async def serving(root: Path) -> AsyncIterator[Served]:
    """``memdir mcp --http`` in process, on a socket bound before the server starts (requests
    wait in its backlog), with a cap of 3 sessions. (Not a fixture: an async fixture would
    enter and leave the task group in different tasks.)"""
    sock = socket.create_server(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    app = build_server(root, read_only=True).http_app("127.0.0.1", port, max_sessions=CAP)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(server.serve, [sock])
        async with httpx2.AsyncClient(timeout=30) as client:
            yield Served(f"http://127.0.0.1:{port}/mcp", app.state.sessions, client)
        server.should_exit = True
    sock.close()


async def test_a_newcomer_at_the_cap_evicts_the_least_recently_used(root: Path) -> None:
    async with serving(root) as served:
        first, second, third = [await served.open() for _ in range(CAP)]
        assert served.sessions.open_sessions == CAP
        assert await served.answers(first)  # `second` is now the least recently used
        fourth = await served.open()  # the SDK answered 503 here
        assert served.sessions.open_sessions == CAP
        assert served.sessions.evicted == 1
        assert not await served.answers(second)
        for session in (first, third, fourth):
            assert await served.answers(session)


async def test_a_flood_leaves_the_cap_and_the_newest_clients(root: Path) -> None:
    async with serving(root) as served:
        flood = [await served.open() for _ in range(3 * CAP)]
        assert served.sessions.open_sessions == CAP
        assert served.sessions.evicted == 2 * CAP
        newcomer = await served.open()
        assert await served.answers(newcomer)
        alive = [session for session in flood if await served.answers(session)]
        assert alive == flood[-(CAP - 1) :]


async def test_a_page_in_a_browser_neither_opens_nor_evicts(root: Path) -> None:
    async with serving(root) as served:
        sessions = [await served.open() for _ in range(CAP)]
        for headers in ({"Host": "evil.example"}, {"Origin": "http://evil.example"}):
            refused = await served.post(MCP_INITIALIZE, **headers)
            assert refused.status_code in (421, 403)
        assert served.sessions.evicted == 0
        for session in sessions:
            assert await served.answers(session)


async def test_a_session_that_ended_frees_its_place(root: Path) -> None:
    async with serving(root) as served:
        sessions = [await served.open() for _ in range(CAP)]
        ended = await served.client.delete(
            served.url, headers={**MCP_HEADERS, "mcp-session-id": sessions[0]}
        )
        assert ended.status_code == 200
        assert served.sessions.open_sessions == CAP - 1
        await served.open()
        assert served.sessions.evicted == 0
        for session in sessions[1:]:
            assert await served.answers(session)
