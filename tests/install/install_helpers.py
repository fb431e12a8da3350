"""What the install tests share: clean environments, commands, the stdio exchanges.

Every install goes into a temporary directory and runs from a temporary working directory, in an
environment stripped of this checkout's virtualenv, so nothing can import the clone by accident.
Downloads are cached under ``$MEMDIR_E2E_CACHE`` (default ``~/.cache/memdir-e2e``): pip's and
uv's caches, and the venv holding the installers themselves (pipx, uv, pre-commit).
"""

from __future__ import annotations

import json
import os
import queue
import shlex
import subprocess
import sys
import tempfile
import threading
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


class Stdio:
    """A server over stdio: write messages, wait for the answer to a request id.

    A thread reads stdout, so every wait has a timeout instead of a read that could block.
    """

    def __init__(self, command: Sequence[str | Path], *, cwd: Path, env: Mapping[str, str],
                 framed: bool) -> None:  # fmt: skip
        self.framed = framed
        # A file, not a pipe: a chatty server never blocks on it.
        self.stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed by close()
        self.proc = subprocess.Popen(
            [str(c) for c in command],
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
        )
        self.messages: queue.Queue[dict[str, Any] | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        stream = self.proc.stdout
        try:
            while True:
                if self.framed:
                    length = None
                    while (line := stream.readline()) not in (b"\r\n", b""):
                        if line.lower().startswith(b"content-length:"):
                            length = int(line.split(b":")[1])
                    if length is None:
                        return
                    self.messages.put(json.loads(stream.read(length)))
                else:
                    line = stream.readline()
                    if not line:
                        return
                    if line.strip():
                        self.messages.put(json.loads(line))
        finally:
            self.messages.put(None)

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        header = f"Content-Length: {len(body)}\r\n\r\n".encode() if self.framed else b""
        self.proc.stdin.write(header + body + (b"" if self.framed else b"\n"))
        self.proc.stdin.flush()

    def answer(self, request_id: int, timeout: float = 60) -> dict[str, Any]:
        """The response to ``request_id`` (notifications and other answers are skipped)."""
        while True:
            message = self.messages.get(timeout=timeout)
            if message is None:
                self.stderr.seek(0)
                raise AssertionError(f"server ended: {self.stderr.read().decode()}")
            if message.get("id") == request_id and "method" not in message:
                return message

    def close(self, timeout: float = 60) -> int:
        """Close stdin and wait for the exit status."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
            self.stderr.close()


def lsp_initialize(command: Sequence[str | Path], *, cwd: Path, env: Mapping[str, str]) -> Any:
    """Start a language server, initialize it, shut it down; the ``initialize`` result."""
    server = Stdio(command, cwd=cwd, env=env, framed=True)
    try:
        server.send({"id": 1, "method": "initialize", "params": {
            "processId": None, "rootUri": cwd.as_uri(), "capabilities": {}}})  # fmt: skip
        result = server.answer(1)["result"]
        server.send({"method": "initialized", "params": {}})
        server.send({"id": 2, "method": "shutdown", "params": None})
        server.answer(2)
        server.send({"method": "exit", "params": None})
    finally:
        status = server.close()
    assert status == 0
    return result


def mcp_tools(command: Sequence[str | Path], *, cwd: Path, env: Mapping[str, str]) -> list[str]:
    """The tool names an MCP server over stdio lists (closing stdin ends the server)."""
    server = Stdio(command, cwd=cwd, env=env, framed=False)
    try:
        server.send({"id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "memdir-install-test", "version": "0"}}})  # fmt: skip
        server.answer(1)
        server.send({"method": "notifications/initialized"})
        server.send({"id": 2, "method": "tools/list", "params": {}})
        listed = server.answer(2)
    finally:
        server.close()
    return sorted(tool["name"] for tool in listed["result"]["tools"])


def du(path: Path) -> int:
    """Bytes under ``path`` (files only, symlinks not followed)."""
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())
