"""memdir-lsp's per-session state is bounded (issue 26): a client that names a new ``sessionId``
on every ``memory/recall``, ``memory/didRead`` or ``memory/compacted`` (200,000 of them grew a
server to 1.13 GB, never freed) finds at most ``MAX_SESSIONS`` kept, the least recently used
forgotten first; a session idle for ``SESSION_IDLE_SECONDS`` is forgotten; and one session
never holds more read marks than its directory has files. Counted in entries, not bytes.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from lsprotocol import types
from memdir.recall.surface import MAX_SESSIONS, SESSION_IDLE_SECONDS, SessionStore
from memdir_lsp.memory_protocol import handlers
from memdir_lsp.server import MemoryServer

TOPIC = "---\nname: {0}\ndescription: how {0} works\ntype: project\n---\n{0} details.\n"


@pytest.fixture
def server(
    make_dir: Callable[[dict[str, str | bytes]], Path], monkeypatch: pytest.MonkeyPatch
) -> MemoryServer:
    # No key: recall uses the lexical selector, in process, with no network.
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    root = make_dir(
        {
            "MEMORY.md": "- [Deploy](deploy.md) — deploys\n- [Billing](billing.md) — billing\n",
            "deploy.md": TOPIC.format("deploy"),
            "billing.md": TOPIC.format("billing"),
        }
    )
    ls = MemoryServer()
    for _ in ls.protocol.lsp_initialize(
        types.InitializeParams(capabilities=types.ClientCapabilities(), process_id=None)
    ):
        pass
    ls.set_directories({root: {"setting"}})
    ls.ready.set()
    return ls


def kept(ls: MemoryServer, ids: list[str]) -> list[str]:
    root = next(iter(ls.directories))
    return [i for i in ids if ls.sessions.peek(root, i) is not None]


async def test_made_up_session_ids_keep_at_most_max_sessions(server: MemoryServer) -> None:
    ids = [f"session-{i}" for i in range(3 * MAX_SESSIONS)]
    for i, session_id in enumerate(ids):
        params = {"sessionId": session_id}
        if i % 3 == 0:
            await handlers.memory_recall(server, {**params, "query": "how do deploys work"})
        elif i % 3 == 1:
            await handlers.memory_did_read(server, {**params, "paths": ["deploy.md"]})
        else:
            await handlers.memory_compacted(server, params)
    # The newest are kept, the oldest forgotten.
    assert kept(server, ids) == ids[-MAX_SESSIONS:]


async def test_a_session_in_use_is_not_the_one_forgotten(server: MemoryServer) -> None:
    await handlers.memory_did_read(server, {"sessionId": "busy", "paths": ["deploy.md"]})
    for i in range(2 * MAX_SESSIONS):
        await handlers.memory_compacted(server, {"sessionId": f"other-{i}"})
        if i % 10 == 0:  # the agent keeps using its session
            await handlers.memory_recall(server, {"sessionId": "busy", "query": "billing"})
    assert kept(server, ["busy"]) == ["busy"]
    root = next(iter(server.directories))
    busy = server.sessions.peek(root, "busy")
    assert busy is not None and busy.read  # its state survived, not a fresh session


def test_an_idle_session_is_forgotten() -> None:
    now = [0.0]
    store = SessionStore(clock=lambda: now[0])
    root = Path("/m")
    store.get(root, "old").budget_used = 100
    now[0] += SESSION_IDLE_SECONDS - 1
    store.get(root, "recent")
    assert store.peek(root, "old") is not None  # not idle long enough yet
    now[0] += 2
    assert store.peek(root, "old") is None and store.peek(root, "recent") is not None
    assert len(store) == 1
    assert store.get(root, "old").budget_used == 0  # it starts over


async def test_made_up_read_paths_do_not_grow_a_session(server: MemoryServer) -> None:
    paths = [f"never-{i}.md" for i in range(5_000)] + ["deploy.md"]
    await handlers.memory_did_read(server, {"sessionId": "s", "paths": paths})
    root = next(iter(server.directories))
    session = server.sessions.peek(root, "s")
    assert session is not None
    assert session.read == {str((root / "deploy.md").resolve())}
