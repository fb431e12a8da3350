"""Settings from every source, discovery of memory dirs, and a light startup."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import CONFIG_DIR
from lsp_helpers import FILES, Workspace, build, open_doc, pos
from lsprotocol import types
from memdir.agent.paths import slugify
from memdir_lsp.memory_protocol.converter import plain
from memhelpers import announced
from pytest_lsp import LanguageClient

EXTRA = Path(__file__).parent / "_extra"  # replaced per test by tmp dirs


async def status(client: LanguageClient) -> dict[str, Any]:
    return plain(await client.protocol.send_request_async("memdir/status", {}))


async def test_startup_stays_light(client: LanguageClient, workspace: Workspace) -> None:
    # Open a document and ask for a few features: none of them may import the SDK.
    uri = open_doc(client, workspace, "MEMORY.md")
    await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=pos(2, 4))
    )
    result = await status(client)
    assert result["anthropicLoaded"] is False
    assert [d["origins"] for d in result["directories"]] == [["workspace"]]


@pytest.mark.lsp_settings({"indexLineLimit": 80, "severity": {"MEM109": "nope"}, "bogus": 1})
async def test_workspace_configuration_with_bad_values(
    client: LanguageClient, workspace: Workspace
) -> None:
    result = await status(client)
    assert result["editorSettings"]["overrides"] == {"indexLineLimit": 80}
    assert result["directories"][0]["indexLineLimit"] == 80
    messages = [m.message for m in client.log_messages if m.type == types.MessageType.Warning]
    assert any("unknown setting `bogus`" in m for m in messages)
    assert any("MEM109" in m and "must be one of" in m for m in messages)


@pytest.mark.init_options({"memdir": {"indexLineLimit": 120, "directories": 5}})
async def test_initialization_options(client: LanguageClient, workspace: Workspace) -> None:
    result = await status(client)
    assert result["directories"][0]["indexLineLimit"] == 120
    messages = [m.message for m in client.log_messages]
    assert any("`directories` must be a list of paths" in m for m in messages)


async def test_did_change_configuration_adds_directories(
    client: LanguageClient, workspace: Workspace, tmp_path: Path
) -> None:
    extra = tmp_path / "team-memory"
    build(extra, {"MEMORY.md": "- [Team](team.md) — who is who\n", "team.md": FILES["orphan.md"]})
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(
            settings={"memdir": {"directories": [str(extra)], "indexLineLimit": 90}}
        )
    )
    for _ in range(100):
        result = await status(client)
        if len(result["directories"]) == 2:
            break
    by_path = {d["path"]: d for d in result["directories"]}
    assert by_path[str(extra)]["origins"] == ["setting"]
    assert by_path[str(extra)]["indexLineLimit"] == 90
    index = plain(
        await client.protocol.send_request_async("memory/index", {"directory": extra.as_uri()})
    )
    assert index["entries"] == 1


@pytest.mark.files({"README.md": "# A project\n", ".git/HEAD": "ref: refs/heads/main\n"})
async def test_agent_memory_dir_of_the_project(
    client: LanguageClient, workspace: Workspace
) -> None:
    # The workspace is a project (no MEMORY.md); its memory lives under CLAUDE_CONFIG_DIR.
    project_root = Path(os.path.realpath(workspace.root))
    memory = CONFIG_DIR / "projects" / slugify(project_root) / "memory"
    assert memory.is_dir(), "created by the fixture below"
    result = await status(client)
    assert [(d["path"], d["origins"]) for d in result["directories"]] == [(str(memory), ["agent"])]
    # The project's own Markdown is not a memory document.
    readme = open_doc(client, workspace, "README.md")
    assert not await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=readme))
    )


@pytest.fixture(autouse=True)
def _agent_memory(request: pytest.FixtureRequest, workspace: Workspace) -> None:
    """For the agent-dir test: the project's memory dir, where the agent would keep it."""
    if request.node.originalname != "test_agent_memory_dir_of_the_project":
        return
    project_root = Path(os.path.realpath(workspace.root))
    build(CONFIG_DIR / "projects" / slugify(project_root) / "memory", FILES)


def test_version_and_light_import() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "memdir_lsp", "--version"], capture_output=True, text=True
    )
    assert out.returncode == 0 and out.stdout.startswith("memdir-lsp ")
    probe = (
        "import sys, memdir_lsp.__main__ as m; from memdir_lsp.server import create_server; "
        "create_server(); print('anthropic' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert out.stdout.strip() == "False", out.stderr


def _frame(payload: dict[str, Any]) -> bytes:
    body = json.dumps(payload).encode()
    return f"Content-Length: {len(body)}\r\n\r\n".encode() + body


def test_tcp_transport(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "memdir_lsp", "--tcp", "--port", "0"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        bufsize=0,  # unbuffered: select() sees every line still unread
    )
    try:
        port = int(announced(proc, "memdir-lsp: listening on ").rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            sock.sendall(
                _frame(
                    {
                        "jsonrpc": "2.0",
                        "id": 1,
                        "method": "initialize",
                        "params": {"processId": None, "rootUri": None, "capabilities": {}},
                    }
                )
            )
            data = b""
            while b"serverInfo" not in data or not data.rstrip().endswith(b"}"):
                chunk = sock.recv(65536)
                assert chunk, "connection closed"
                data += chunk
        response = json.loads(data.split(b"\r\n\r\n", 1)[1])
        assert response["result"]["serverInfo"]["name"] == "memdir-lsp"
        assert response["result"]["capabilities"]["hoverProvider"]
    finally:
        proc.terminate()
        proc.wait(10)
