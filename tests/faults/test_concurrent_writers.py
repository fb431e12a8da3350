"""Eight writers at once through every face (``memdir tool``, the language server's
``memory/tool``, ``memdir mcp``'s memory tool) lose no update: each inserts its own lines into one
file, and every line is there at the end, once."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from faulthelpers import leftovers
from mcp import Client, StdioServerParameters
from memhelpers import start_lsp

CLI_WRITERS, LSP_WRITERS, MCP_WRITERS = 3, 2, 3
CLI_LINES, SERVER_LINES = 2, 4
TIMEOUT = 120.0


def insert(text: str) -> dict[str, Any]:
    return {"command": "insert", "path": "/memories/log.md", "insert_line": 1, "insert_text": text}


async def cli_writer(root: Path, name: str) -> list[str]:
    lines = [f"{name} line {n}" for n in range(CLI_LINES)]
    for line in lines:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "memdir",
            "tool",
            "--dir",
            str(root),
            json.dumps(insert(line)),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await process.communicate()
        assert process.returncode == 0, (out, err)
    return lines


async def lsp_writer(root: Path, name: str) -> list[str]:
    client = await start_lsp(root.parent / "claude-config")
    process = client.process
    lines = [f"{name} line {n}" for n in range(SERVER_LINES)]
    try:
        # A folder that merely holds a MEMORY.md is read-only unless configured.
        await client.open_folder(root, {"memdir": {"directories": ["."]}})
        for line in lines:
            result = await client.request("memory/tool", insert(line))
            assert not result["isError"], result
        await client.request("shutdown", {})
        await client.send({"method": "exit"})
    finally:
        if process.returncode is None:
            process.kill()
        await process.wait()
    return lines


async def mcp_writer(root: Path, name: str) -> list[str]:
    # The SDK passes the server only a few variables (HOME, PATH ...): memdir's state dir, where
    # the lock all eight writers share lives, must be handed over like any other setting.
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memdir", "mcp", "--dir", str(root)],
        env={"XDG_STATE_HOME": os.environ["XDG_STATE_HOME"]},
    )
    lines = [f"{name} line {n}" for n in range(SERVER_LINES)]
    async with Client(params) as client:
        for line in lines:
            result = await client.call_tool("memory", insert(line))
            assert not result.is_error, result
    return lines


@pytest.mark.slow  # a dozen Python processes: seconds, more on a busy machine
async def test_eight_writers_through_every_face_lose_no_update(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    root.mkdir()
    (root / "log.md").write_text("# Log\n", encoding="utf-8")
    # The server knows a memory dir by its index.
    (root / "MEMORY.md").write_text("# Memory\n\n- [Log](log.md) — the log\n", encoding="utf-8")
    writers = [cli_writer(root, f"cli-{n}") for n in range(CLI_WRITERS)]
    writers += [lsp_writer(root, f"lsp-{n}") for n in range(LSP_WRITERS)]
    writers += [mcp_writer(root, f"mcp-{n}") for n in range(MCP_WRITERS)]
    assert len(writers) == 8
    written = await asyncio.wait_for(asyncio.gather(*writers), TIMEOUT)
    lines = (root / "log.md").read_text(encoding="utf-8").split("\n")
    assert lines[0] == "# Log"
    expected = sorted(line for batch in written for line in batch)
    assert sorted(line for line in lines[1:] if line) == expected
    assert leftovers(root) == []
