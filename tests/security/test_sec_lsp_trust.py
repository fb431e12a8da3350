"""memdir-lsp in an untrusted workspace runs no git and writes nothing (issue 26).

A client declares it with ``trusted: false`` in initializationOptions (the VS Code extension
does in a workspace the user has not trusted; a Neovim user can too). Then even the agent's own
memory dir is served read-only, and no project is loaded (listing one runs git, and a cloned
repository's git config can run programs). ``memdir/didGrantWorkspaceTrust`` lifts both. The
settings a workspace may supply (``workspace/configuration``) cannot raise the trust. In process,
against the server's handlers.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from memdir.agent.paths import locate_memory_dir
from memdir_lsp.discovery import rediscover
from memdir_lsp.memory_protocol import handlers
from memdir_lsp.memory_protocol.converter import plain
from memdir_lsp.server import MemoryServer
from memdir_lsp.settings import apply_settings, on_initialize

TOPIC = (
    "---\nname: api\ndescription: the API lives in src/api.py\ntype: project\n---\n"
    "See `src/api.py`.\n"
)


#: The agent's config dir in tmp, and no API key (see the fixture in conftest.py).
pytestmark = pytest.mark.usefixtures("agent_config")


@pytest.fixture
def spawned(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The command line of every process started (``subprocess.run`` starts a Popen too)."""
    started: list[list[str]] = []
    real = subprocess.Popen

    class Recording(real):  # type: ignore[misc, valid-type]
        def __init__(self, args: Any, *rest: Any, **kwargs: Any) -> None:
            started.append([str(a) for a in args] if isinstance(args, list | tuple) else [args])
            super().__init__(args, *rest, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", Recording)
    return started


def project_with_memory(tmp_path: Path) -> tuple[Path, Path]:
    """A git project and its agent memory dir (a memory citing a file of the project)."""
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "api.py").write_text("def handler(): ...\n", encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    location = locate_memory_dir(project)
    assert location.memory_dir is not None
    memory = Path(os.path.abspath(location.memory_dir))
    memory.mkdir(parents=True)
    (memory / "MEMORY.md").write_text("- [API](api.md) — where the API is\n", encoding="utf-8")
    (memory / "api.md").write_text(TOPIC, encoding="utf-8")
    return project, memory


async def start(folder: Path, options: Any) -> MemoryServer:
    ls = MemoryServer()
    params = types.InitializeParams(
        capabilities=types.ClientCapabilities(),
        process_id=None,
        workspace_folders=[types.WorkspaceFolder(uri=folder.as_uri(), name=folder.name)],
        initialization_options=options,
    )
    for _ in ls.protocol.lsp_initialize(params):
        pass
    await on_initialize(ls, params)  # what the server's initialize runs: settings, trust
    await rediscover(ls)
    ls.ready.set()
    return ls


async def create(ls: MemoryServer, memory: Path, name: str) -> dict[str, Any]:
    params = {"directory": memory.as_uri(), "command": "create", "path": f"/memories/{name}"}
    return dict(plain(await handlers.memory_tool(ls, {**params, "file_text": "x\n"})))


async def status(ls: MemoryServer) -> dict[str, Any]:
    return dict(plain(await handlers.memdir_status(ls, {})))


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
async def test_untrusted_runs_no_git_and_writes_nothing_until_trust_is_granted(
    tmp_path: Path, spawned: list[list[str]]
) -> None:
    project, memory = project_with_memory(tmp_path)
    spawned.clear()
    ls = await start(project, {"memdir": {}, "trusted": False})
    directory = ls.directories[memory]
    assert directory.origins == {"agent"}  # the agent's own dir: writable when trusted
    await directory.session.check_whole(ls)
    assert directory.session.project is None and directory.project_root is None
    assert [cmd for cmd in spawned if "git" in os.path.basename(cmd[0])] == []

    refused = await create(ls, memory, "new.md")
    assert refused["isError"] is True and "not trusted" in refused["text"], refused
    assert not (memory / "new.md").exists()
    seen = await status(ls)
    assert seen["trusted"] is False
    assert seen["directories"][0]["writable"] is False
    assert "not trusted" in seen["directories"][0]["readOnlyReason"]

    # The workspace's own settings cannot raise the trust.
    apply_settings(ls, {"trusted": True}, "workspace/configuration")
    await ls.settings_changed()
    assert ls.trusted is False and (await create(ls, memory, "new.md"))["isError"] is True

    await handlers.memdir_did_grant_workspace_trust(ls, None)
    await directory.session.check_whole(ls)
    assert ls.trusted is True and directory.project_root == project.resolve()
    assert directory.session.project is not None
    assert [cmd for cmd in spawned if "git" in os.path.basename(cmd[0])]  # now it may
    created = await create(ls, memory, "new.md")
    assert created["isError"] is False, created
    assert (await status(ls))["directories"][0]["writable"] is True


@pytest.mark.parametrize(
    "options",
    [
        {"trusted": "false"},
        {"memdir": {"trusted": False}},
        {"memdir": {"trusted": None}, "trusted": True},
        {"trusted": 0},
    ],
)
async def test_anything_but_true_is_untrusted(tmp_path: Path, options: dict[str, Any]) -> None:
    project, memory = project_with_memory(tmp_path)
    ls = await start(project, options)
    assert ls.trusted is False
    assert (await create(ls, memory, "new.md"))["isError"] is True


async def test_trusted_by_default_and_when_declared(tmp_path: Path) -> None:
    project, memory = project_with_memory(tmp_path)
    for options in (None, {"trusted": True}, {"memdir": {"trusted": True}}):
        ls = await start(project, options)
        assert ls.trusted is True, options
        assert ls.directories[memory].writable
        assert not ls.editor_settings.overrides  # `trusted` is no memdir.toml key
