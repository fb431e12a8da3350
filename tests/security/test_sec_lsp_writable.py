"""Which memory dirs memdir-lsp writes in is explicit (issue 26).

A folder that merely holds a ``MEMORY.md`` (a workspace folder, or one up to four levels above
an opened file) may be any folder of a cloned repository or of the user's home: the attack run
opened a home folder holding a MEMORY.md and ``memory/tool`` ``delete /memories/Documents``
removed the real ``Documents``. Such a dir is served read-only: reading, recall and plans the
editor applies still work; ``memory/tool``'s writes, ``memory/extract`` and ``memdir.createFile``
are refused, naming the setting that makes the dir writable. The agent's own memory dir and the
dirs of the ``directories`` setting stay writable. In process, against the server's handlers.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from memdir.agent.paths import locate_memory_dir
from memdir_lsp.code_actions import create_file
from memdir_lsp.discovery import on_document, rediscover
from memdir_lsp.errors import RequestFailed
from memdir_lsp.memory_protocol import handlers
from memdir_lsp.memory_protocol.converter import plain
from memdir_lsp.server import DocumentEvent, MemoryServer
from memdir_lsp.settings import apply_settings

INDEX = "# Memory index\n\n- [Deploy](deploy.md) — deploys go through staging\n"
TOPIC = "---\nname: deploy\ndescription: deploys go through staging\ntype: project\n---\nBody.\n"


#: The agent's config dir in tmp, and no API key (see the fixture in conftest.py).
pytestmark = pytest.mark.usefixtures("agent_config")


def home_folder(tmp_path: Path) -> Path:
    """A home folder that holds a MEMORY.md, and a real Documents folder with a file."""
    home = tmp_path / "home"
    (home / "Documents").mkdir(parents=True)
    (home / "Documents" / "taxes.pdf").write_bytes(b"%PDF-1.4 not a memory")
    (home / "MEMORY.md").write_text(INDEX, encoding="utf-8")
    (home / "deploy.md").write_text(TOPIC, encoding="utf-8")
    return home


async def start(folders: list[Path], settings: dict[str, Any] | None = None) -> MemoryServer:
    """A server with these workspace folders, its settings applied and discovery run."""
    ls = MemoryServer()
    params = types.InitializeParams(
        capabilities=types.ClientCapabilities(),
        process_id=None,
        workspace_folders=[types.WorkspaceFolder(uri=f.as_uri(), name=f.name) for f in folders],
    )
    for _ in ls.protocol.lsp_initialize(params):
        pass
    if settings is not None:
        apply_settings(ls, settings, "initializationOptions")
    await rediscover(ls)
    ls.ready.set()
    return ls


def uri(path: Path) -> str:
    return path.as_uri()


async def tool(ls: MemoryServer, directory: Path, **command: Any) -> dict[str, Any]:
    result = await handlers.memory_tool(ls, {"directory": uri(directory), **command})
    return dict(plain(result))


async def status_of(ls: MemoryServer, directory: Path) -> dict[str, Any]:
    status = plain(await handlers.memdir_status(ls, {}))
    (found,) = [d for d in status["directories"] if d["path"] == str(directory)]
    return dict(found)


async def test_a_workspace_folder_holding_a_memory_md_is_served_read_only(tmp_path: Path) -> None:
    home = home_folder(tmp_path)
    ls = await start([home])
    deleted = await tool(ls, home, command="delete", path="/memories/Documents")
    assert deleted["isError"] is True, deleted
    assert "read-only" in deleted["text"] and "`memdir.directories`" in deleted["text"]
    assert (home / "Documents" / "taxes.pdf").is_file()
    assert deleted["changes"] == []

    for command in (
        {"command": "create", "path": "/memories/new.md", "file_text": "x\n"},
        {
            "command": "str_replace",
            "path": "/memories/deploy.md",
            "old_str": "Body",
            "new_str": "B",
        },
        {"command": "insert", "path": "/memories/deploy.md", "insert_line": 0, "insert_text": "x"},
        {"command": "rename", "old_path": "/memories/deploy.md", "new_path": "/memories/d.md"},
    ):
        refused = await tool(ls, home, **command)
        assert refused["isError"] is True and "read-only" in refused["text"], command
    assert sorted(p.name for p in home.iterdir()) == ["Documents", "MEMORY.md", "deploy.md"]
    assert (home / "deploy.md").read_text(encoding="utf-8") == TOPIC

    # Reading still works: view, the index, the listing, recall, a plan the editor applies.
    viewed = await tool(ls, home, command="view", path="/memories")
    assert viewed["isError"] is False and "deploy.md" in viewed["text"]
    assert plain(await handlers.memory_index(ls, {"directory": uri(home)}))["exists"] is True
    asked = {"directory": uri(home), "query": "how do deploys work"}
    recall = plain(await handlers.memory_recall(ls, asked))
    assert recall["triggered"] is True
    planned = plain(
        await handlers.memory_new_memory(
            ls,
            {
                "directory": uri(home),
                "name": "Freeze",
                "description": "no merges",
                "type": "project",
            },
        )
    )
    assert planned["edit"] and not (home / planned["path"]).exists()

    found = await status_of(ls, home)
    assert found["writable"] is False and "`memdir.directories`" in found["readOnlyReason"]


async def test_extraction_and_file_creation_are_refused_in_a_read_only_dir(
    tmp_path: Path,
) -> None:
    home = home_folder(tmp_path)
    transcript = tmp_path / "session.jsonl"
    transcript.write_text("", encoding="utf-8")
    ls = await start([home])
    with pytest.raises(RequestFailed, match=r"read-only.*`memdir\.directories`"):
        await handlers.memory_extract(
            ls, {"directory": uri(home), "transcript": str(transcript), "dryRun": True}
        )
    assert ls.extractions == {}
    with pytest.raises(RequestFailed, match="read-only"):
        await create_file(ls, [uri(home / "new.md"), "text\n"])
    assert not (home / "new.md").exists()


async def test_a_dir_found_above_an_opened_file_is_read_only(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "docs" / "notes").mkdir(parents=True)
    (repo / "MEMORY.md").write_text(INDEX, encoding="utf-8")
    (repo / "docs" / "notes" / "a.md").write_text("# a\n", encoding="utf-8")
    (repo / "src").mkdir()
    ls = await start([])
    await on_document(ls, DocumentEvent(uri(repo / "docs" / "notes" / "a.md"), "open"))
    assert ls.directories[repo].origins == {"opened"}
    refused = await tool(ls, repo, command="delete", path="/memories/src")
    assert refused["isError"] is True and "read-only" in refused["text"]
    assert (repo / "src").is_dir()


async def test_configured_and_agent_dirs_stay_writable(tmp_path: Path, agent_config: Path) -> None:
    home = home_folder(tmp_path)
    ls = await start([home], {"directories": ["."]})
    created = await tool(ls, home, command="create", path="/memories/new.md", file_text="x\n")
    assert created["isError"] is False, created
    assert (await status_of(ls, home))["writable"] is True

    project = tmp_path / "project"
    project.mkdir()
    location = locate_memory_dir(project)
    assert location.memory_dir is not None and agent_config in location.memory_dir.parents
    location.memory_dir.mkdir(parents=True)
    agent_dir = Path(os.path.abspath(location.memory_dir))
    ls = await start([project])
    assert ls.directories[agent_dir].origins == {"agent"}
    created = await tool(ls, agent_dir, command="create", path="/memories/n.md", file_text="x\n")
    assert created["isError"] is False, created

    # The agent's memory dir of another project, opened as a folder of its own: the agent's too.
    ls = await start([agent_dir])
    assert ls.directories[agent_dir].origins == {"workspace"}
    created = await tool(ls, agent_dir, command="create", path="/memories/o.md", file_text="x\n")
    assert created["isError"] is False, created
