"""What the install tests share: clean environments, commands, the stdio exchanges.

Every install goes into a temporary directory and runs from a temporary working directory, in an
environment stripped of this checkout's virtualenv, so nothing can import the clone by accident.
Downloads are cached under ``$MEMDIR_E2E_CACHE`` (default ``~/.cache/memdir-e2e``): pip's and
uv's caches, and the venv holding the installers themselves (pipx, uv, pre-commit).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

REPO: Final = Path(__file__).resolve().parents[2]
CACHE: Final = Path(os.environ.get("MEMDIR_E2E_CACHE") or Path.home() / ".cache" / "memdir-e2e")
#: The installers the documentation names, at the versions the tests were written against.
TOOLS: Final = {"pipx": "1.18.4", "uv": "0.13.9", "pre-commit": "4.7.0"}
TOOLS_VENV: Final = CACHE / "python-tools"
#: Links to the installers' commands alone, for PATH.
TOOLS_BIN: Final = CACHE / "python-tools-bin"
#: Variables that would point an install or a run back at this checkout or its venv.
_DROPPED_PREFIXES: Final = ("PYTHON", "VIRTUAL_ENV", "PIPX_", "UV_", "PRE_COMMIT", "CONDA")
TIMEOUT: Final = 600


def clean_env(extra: Mapping[str, str | Path] | None = None) -> dict[str, str]:
    """The caller's environment without this checkout's venv, with the shared download caches
    and the installers (only those: no ``python`` of theirs) on ``PATH``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_DROPPED_PREFIXES)}
    venv_bin = str(Path(sys.prefix) / "bin")
    kept = [p for p in env.get("PATH", "").split(os.pathsep) if p and p != venv_bin]
    env["PATH"] = os.pathsep.join([str(TOOLS_BIN), *kept])
    env["PIP_CACHE_DIR"] = str(CACHE / "pip")
    env["UV_CACHE_DIR"] = str(CACHE / "uv")
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env.update({k: str(v) for k, v in (extra or {}).items()})
    return env


def run(
    command: Sequence[str | Path],
    *,
    cwd: Path,
    env: Mapping[str, str],
    input: str | None = None,
    check: bool = True,
) -> subprocess.CompletedProcess[str]:
    """Run ``command``; with ``check``, a failure shows the command and both streams."""
    proc = subprocess.run(
        [str(c) for c in command],
        cwd=cwd,
        env=dict(env),
        input=input,
        stdin=None if input is not None else subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    if check and proc.returncode != 0:
        raise AssertionError(
            f"exit {proc.returncode}: {shlex.join(proc.args)}\n"
            f"--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"
        )
    return proc


def shell(command: str, *, cwd: Path, env: Mapping[str, str]) -> subprocess.CompletedProcess[str]:
    """A command as the documentation or an error message prints it, run by the shell."""
    return run(["bash", "-c", command], cwd=cwd, env=env)


def module_file(python: Path, module: str, *, cwd: Path, env: Mapping[str, str]) -> str | None:
    """Where ``python`` imports ``module`` from, or None when it cannot import it."""
    code = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.find_spec({module!r})\n"
        "print(spec.origin if spec else '')"
    )
    out = run([python, "-c", code], cwd=cwd, env=env).stdout.strip()
    return out or None


def lsp_initialize(command: Sequence[str | Path], *, cwd: Path, env: Mapping[str, str]) -> Any:
    """Start a language server, initialize it, shut it down; the ``initialize`` result.

    The whole session is written at once (the server reads it in order) so that a server that
    never answers times out instead of blocking a read.
    """

    def frame(message: dict[str, Any]) -> bytes:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        return f"Content-Length: {len(body)}\r\n\r\n".encode() + body

    session = b"".join(
        frame(m)
        for m in (
            {"id": 1, "method": "initialize", "params": {
                "processId": None, "rootUri": cwd.as_uri(), "capabilities": {}}},
            {"method": "initialized", "params": {}},
            {"id": 2, "method": "shutdown", "params": None},
            {"method": "exit", "params": None},
        )
    )  # fmt: skip
    proc = subprocess.run(
        [str(c) for c in command],
        cwd=cwd,
        env=dict(env),
        input=session,
        capture_output=True,
        timeout=60,
        check=False,
    )
    messages = _lsp_messages(proc.stdout)
    answers = {m.get("id"): m for m in messages if "id" in m and "method" not in m}
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    assert 1 in answers and 2 in answers, messages
    return answers[1]["result"]


def _lsp_messages(data: bytes) -> list[dict[str, Any]]:
    messages = []
    while data:
        header, _, rest = data.partition(b"\r\n\r\n")
        length = next(
            int(line.split(b":")[1])
            for line in header.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        )
        messages.append(json.loads(rest[:length]))
        data = rest[length:]
    return messages


def mcp_tools(command: Sequence[str | Path], *, cwd: Path, env: Mapping[str, str]) -> list[str]:
    """The tool names an MCP server over stdio lists (closing stdin ends the server)."""
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "memdir-install-test", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}},
    ]  # fmt: skip
    proc = run(
        command,
        cwd=cwd,
        env=env,
        input="".join(json.dumps(line) + "\n" for line in lines),
    )
    answers = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    listed = next(a for a in answers if a.get("id") == 2)
    return sorted(tool["name"] for tool in listed["result"]["tools"])


def du(path: Path) -> int:
    """Bytes under ``path`` (files only, symlinks not followed)."""
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())
