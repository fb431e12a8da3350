"""``memdir.createFile`` (the language server's fallback for clients without CreateFile) creates
nothing through a symlinked folder leading out: any name, a hidden one, missing folders."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from memhelpers import start_lsp

pytestmark = pytest.mark.slow  # the real server over stdio


async def test_create_file_command_refuses_a_symlinked_folder(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    root.mkdir()
    (root / "MEMORY.md").write_text("# Memory\n", encoding="utf-8")
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "link").symlink_to(outside, target_is_directory=True)
    client = await start_lsp(tmp_path / "claude-config")
    process = client.process
    try:
        folder = {"uri": root.as_uri(), "name": "memory"}
        init = {
            "processId": None,
            "capabilities": {},
            "workspaceFolders": [folder],
            # Configured: the server writes only in dirs it was told are memory dirs.
            "initializationOptions": {"directories": [str(root)]},
        }
        await asyncio.wait_for(client.request("initialize", init), 60)
        await client.send({"method": "initialized", "params": {}})
        names = ["link/.bashrc", "link/notes.md", "link/new/deep.md", "inside.md"]
        arguments = [[(root / name).as_uri(), "text\n"] for name in names]
        command = {"command": "memdir.createFile", "arguments": arguments}
        result = await asyncio.wait_for(client.request("workspace/executeCommand", command), 60)
        assert result["created"] == [(root / "inside.md").as_uri()]
        assert list(outside.iterdir()) == []
        assert (root / "inside.md").read_text(encoding="utf-8") == "text\n"
    finally:
        process.kill()
        await process.wait()
