"""The ``memory/*`` handlers issue 26 changed, fed bad params: each request gets a JSON-RPC
error (never an internal one), each notification is logged and dropped, and nothing is written
in a read-only dir whatever the params. In process, against the handlers.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from memdir_lsp.code_actions import create_file
from memdir_lsp.errors import RequestFailed
from memdir_lsp.memory_protocol import handlers
from memdir_lsp.server import MemoryServer
from pygls.exceptions import JsonRpcInvalidParams

TOPIC = "---\nname: deploy\ndescription: deploys go through staging\ntype: project\n---\nBody.\n"


@pytest.fixture
def ls(make_dir: Callable[[dict[str, str | bytes]], Path]) -> MemoryServer:
    root = make_dir({"MEMORY.md": "- [Deploy](deploy.md) — staging\n", "deploy.md": TOPIC})
    server = MemoryServer()
    for _ in server.protocol.lsp_initialize(
        types.InitializeParams(capabilities=types.ClientCapabilities(), process_id=None)
    ):
        pass
    server.set_directories({root: {"workspace"}})  # read-only: found as a folder only
    server.ready.set()
    return server


def root_of(ls: MemoryServer) -> Path:
    return next(iter(ls.directories))


@pytest.mark.parametrize(
    "params",
    [
        {"sessionId": "s", "paths": ["a" * 300 + ".md", "x\0.md", "../../etc/passwd", "deploy.md"]},
        {"sessionId": "s", "paths": "deploy.md"},
        {"sessionId": 5},
        {"paths": ["deploy.md"]},
        "nonsense",
        None,
    ],
)
async def test_did_read_never_raises(ls: MemoryServer, params: Any) -> None:
    await handlers.memory_did_read(ls, params)
    session = ls.sessions.peek(root_of(ls), "s")
    if isinstance(params, dict) and "sessionId" in params and isinstance(params.get("paths"), list):
        assert session is not None
        assert session.read == {str((root_of(ls) / "deploy.md").resolve())}


@pytest.mark.parametrize("params", [None, [], {}, {"bogus": 1}, "x", [1, 2], 7])
async def test_grant_trust_never_raises(ls: MemoryServer, params: Any) -> None:
    ls.trusted = False
    await handlers.memdir_did_grant_workspace_trust(ls, params)
    # A wrong shape is logged and changes nothing; anything object-like grants.
    assert ls.trusted is (params in (None, [], {}) or isinstance(params, dict))


@pytest.mark.parametrize(
    "params",
    [
        {"command": "nuke", "path": "/memories"},
        {"command": "delete"},
        {"command": "create", "path": "/memories/x.md", "file_text": 5},
        {"command": "view", "path": "/memories", "directory": "http://example.invalid/"},
        "delete everything",
    ],
)
async def test_memory_tool_bad_input_is_invalid_params_even_read_only(
    ls: MemoryServer, params: Any
) -> None:
    with pytest.raises(JsonRpcInvalidParams):
        await handlers.memory_tool(ls, params)
    assert sorted(p.name for p in root_of(ls).iterdir()) == ["MEMORY.md", "deploy.md"]


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"transcript": 5},
        {"transcript": "/nonexistent.jsonl", "directory": "file:///not/known"},
        "x",
    ],
)
async def test_memory_extract_bad_params_are_invalid_params(ls: MemoryServer, params: Any) -> None:
    with pytest.raises(JsonRpcInvalidParams):
        await handlers.memory_extract(ls, params)
    assert ls.extractions == {}


async def test_create_file_bad_arguments(ls: MemoryServer) -> None:
    with pytest.raises(JsonRpcInvalidParams):
        await create_file(ls, ["only a uri"])
    with pytest.raises(JsonRpcInvalidParams):
        await create_file(ls, [(root_of(ls) / "a.md").as_uri(), "x"], "not a pair")
    with pytest.raises(RequestFailed):
        await create_file(ls, [(root_of(ls) / "a.md").as_uri(), "x"])
    outside = await create_file(ls, ["file:///elsewhere/x.md", "x"], ["not-a-uri", "y"])
    assert outside == {"created": [], "skipped": ["file:///elsewhere/x.md", "not-a-uri"]}
    assert not (root_of(ls) / "a.md").exists()
