"""What the write-path security tests share: each face of the memory tool run on a dir.

Faces: the writer itself, ``memdir tool`` and ``memdir lint --fix`` (subprocesses), the MCP
``memory`` tool (the SDK's client, in process) and the language server's ``memory/tool`` (a real
``memdir-lsp`` over stdio). Subprocesses inherit the environment, so they use the same
``XDG_STATE_HOME`` (memdir's state: locks and journals) as the test itself. Every subprocess has
a deadline that turns a hang into a failure.
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memhelpers import run_memdir, start_lsp

#: Long enough for a loaded machine, short enough that a hang fails the run instead of stalling it.
DEADLINE = 60.0

TOPIC = "---\nname: {name}\ndescription: {description}\ntype: project\n---\nBody.\n"


def topic(name: str, description: str = "a memory for the test") -> str:
    return TOPIC.format(name=name, description=description)


@dataclass(frozen=True)
class Outcome:
    """What a face answered: the tool's text (stdout for the CLI), whether it is an error (a
    non-zero exit for the CLI), and the warnings it showed (stderr, the text, a field)."""

    text: str
    is_error: bool
    warnings: str = ""


def file_size_limit(limit: int) -> Callable[[], None]:
    """A ``preexec_fn`` capping the size of any file the process writes (RLIMIT_FSIZE): past
    it a write fails with EFBIG, as a full disk fails with ENOSPC, deterministically. Python
    ignores SIGXFSZ, so the write fails instead of killing the process."""

    def limit_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return limit_files


def cli_tool(
    root: Path, command: dict[str, Any], *, preexec: Callable[[], None] | None = None
) -> Outcome:
    """``memdir tool`` with the command on stdin (a large one is past the argument limit)."""
    stdin = json.dumps(command)
    done = run_memdir(
        "tool", "--dir", str(root), "-", input=stdin, timeout=DEADLINE, preexec_fn=preexec
    )
    return Outcome(done.stdout, done.returncode != 0, done.stderr)


async def mcp_tool(root: Path, command: dict[str, Any]) -> Outcome:
    from mcp import Client
    from mcp.types import TextContent
    from memdir.faces.mcp_server import build_server

    async with Client(build_server(root)) as client:
        result = await client.call_tool("memory", command)
    text = "".join(b.text for b in result.content if isinstance(b, TextContent))
    return Outcome(text, bool(result.is_error), text)


async def _lsp_tool(
    root: Path, command: dict[str, Any], preexec: Callable[[], None] | None
) -> dict[str, Any]:
    client = await start_lsp(root.parent / "claude-config", preexec)
    try:
        # Configured, so the server may write there (a folder merely holding a MEMORY.md is
        # read-only).
        await client.open_folder(root, {"directories": [str(root)]})
        result: dict[str, Any] = await client.request("memory/tool", command)
        await client.request("shutdown", {})
        await client.send({"method": "exit"})
        return result
    finally:
        if client.process.returncode is None:
            client.process.kill()
        await client.process.wait()


async def lsp_tool(
    root: Path, command: dict[str, Any], *, preexec: Callable[[], None] | None = None
) -> Outcome:
    result = await asyncio.wait_for(_lsp_tool(root, command, preexec), DEADLINE)
    return Outcome(result["text"], bool(result["isError"]), "\n".join(result["warnings"]))


def snapshot(base: Path) -> dict[str, bytes | None]:
    """Every file's bytes and every folder (None) under ``base``; links and special files (a
    FIFO would block the read) by their kind, never followed or opened."""
    seen: dict[str, bytes | None] = {}
    for directory, dirs, files in os.walk(base):
        for name in dirs:
            seen[os.path.relpath(os.path.join(directory, name), base) + "/"] = None
        for name in files:
            path = Path(directory, name)
            mode = path.lstat().st_mode
            kind = b"<file>" if stat.S_ISREG(mode) else f"<mode {stat.S_IFMT(mode):o}>".encode()
            seen[os.path.relpath(path, base)] = path.read_bytes() if kind == b"<file>" else kind
    return seen
