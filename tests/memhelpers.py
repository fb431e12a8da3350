"""Helpers shared by the core tests (a plain module: ``conftest`` names collide across folders)."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import select
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from memdir.agent.paths import slugify
from memdir.model import MemoryHeader

if TYPE_CHECKING:
    import httpx2
    import pytest

#: The repository checkout the tests run in.
ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "memory"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def count_disk_reads(patch: Callable[[Any, str, Any], None]) -> Counter[str]:
    """How often the lint engine reads each file from disk, by its path in the memory dir
    (``MEMORY.md`` for the index): a test double around the engine's two readers, installed
    with ``patch`` (``monkeypatch.setattr``, or ``setattr`` in a server process). The engine
    counts nothing itself."""
    from memdir.lint import state

    reads: Counter[str] = Counter()
    load_disk, load_index = state.DirState._load_disk, state.load_index

    def counted_disk(self: state.DirState, path: str, rel: str) -> Any:
        reads[rel] += 1
        return load_disk(self, path, rel)

    def counted_index(*args: Any, **kwargs: Any) -> Any:
        reads["MEMORY.md"] += 1
        return load_index(*args, **kwargs)

    patch(state.DirState, "_load_disk", counted_disk)
    patch(state, "load_index", counted_index)
    return reads


def count_rule_runs(monkeypatch: Any) -> Counter[str]:
    """How often each directory rule's check ran: a test double around the registry's checks
    (``monkeypatch``: pytest's). The engine counts nothing itself."""
    from memdir.lint import rules

    runs: Counter[str] = Counter()

    def counted(code: str, check: Callable[..., object]) -> Callable[..., object]:
        def run(*args: object) -> object:
            runs[code] += 1
            return check(*args)

        return run

    wrapped = tuple((code, counted(code, check)) for code, check in rules._DIRECTORY)
    monkeypatch.setattr(rules, "_DIRECTORY", wrapped)
    return runs


def topic(name: str, description: str, type_: str = "project", body: str = "Body.\n") -> str:
    return f"---\nname: {name}\ndescription: {description}\ntype: {type_}\n---\n{body}"


#: What stands only outside the memory dir that :func:`linked_out` makes: never to be shown.
SECRET = "SECRET-CONTENT-OUTSIDE"


def linked_out(tmp_path: Path) -> Path:
    """``tmp_path/memory``, whose MEMORY.md, ``secret.md`` and folder ``linked`` are symlinks
    leading out of it (to ``tmp_path/outside``, holding :data:`SECRET`)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "MEMORY.md").write_text(f"- [Secret](secret.md) — {SECRET}\n{SECRET}\n")
    (outside / "secret.md").write_text(topic("secret", f"the {SECRET} file", body=SECRET))
    root = tmp_path / "memory"
    root.mkdir()
    (root / "MEMORY.md").symlink_to(outside / "MEMORY.md")
    (root / "secret.md").symlink_to(outside / "secret.md")
    (root / "linked").symlink_to(outside, target_is_directory=True)
    return root


#: The query and the one memory the agent-face tests recall with it.
DEPLOY_QUERY = "how do deploys to the staging cluster work?"
DEPLOY_MEMORY = (
    "---\nname: deploy\ndescription: how deploys to the staging cluster work\n"
    "metadata:\n  type: project\n---\nDeploys go through the staging cluster first.\n"
)


def load_recall_eval() -> ModuleType:
    """``benchmarks/recall_eval.py``, the recall benchmark, as a module (it is a script)."""
    spec = importlib.util.spec_from_file_location("recall_eval", ROOT / "benchmarks/recall_eval.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["recall_eval"] = module
    spec.loader.exec_module(module)
    return module


def generate_memdir(root: Path, files: int, seed: int = 1, invalid_files: bool = True) -> Path:
    """A generated memory dir with planted problems (``benchmarks/gen_memdir.py``) at ``root``."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import gen_memdir
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    gen_memdir.generate(root, files, seed=seed, invalid_files=invalid_files)
    return root


def memory_header(
    rel: str, description: str, type_: str | None = "project", age: int = 0
) -> MemoryHeader:
    """A selector candidate without a file: ``age`` minutes older than the newest."""
    return MemoryHeader(
        path=Path("/memory") / rel,
        rel_path=rel,
        mtime=1_800_000_000.0 - age * 60,
        size=200,
        name=rel.removesuffix(".md"),
        description=description,
        type=type_,
    )


def selector_env_vars() -> tuple[str, ...]:
    """Every variable that makes `auto` choose a model selector or points one somewhere."""
    from memdir.config import OPENAI_BASE_URL_ENV
    from memdir.recall.select import CREDENTIAL_ENV_VARS
    from memdir.recall.select_openai import API_KEY_ENV

    return (*CREDENTIAL_ENV_VARS, API_KEY_ENV, OPENAI_BASE_URL_ENV)


def run_memdir(
    *args: str,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
) -> subprocess.CompletedProcess[str]:
    """``python -m memdir`` with ``args`` in a subprocess, its output captured as text."""
    return subprocess.run(
        [sys.executable, "-m", "memdir", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=timeout,
        check=False,
    )


#: git for the repositories the tests make: a fixed identity, no user or system config read.
GIT_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.org",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.org",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, env=GIT_ENV)


def write_files(
    root: Path, files: Mapping[str, str | bytes], mtime: float | None = None, step: float = 1.0
) -> None:
    """Each of ``files`` (a path relative to ``root``: its text or bytes), folders made; with
    ``mtime``, modification times from it, ``step`` seconds apart in the dict's order."""
    for offset, (rel, text) in enumerate(files.items()):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
        if mtime is not None:
            os.utime(path, (mtime + offset * step, mtime + offset * step))


def git_project(tmp_path: Path, files: Mapping[str, str | bytes]) -> Path:
    """``tmp_path/project``: a git repository of ``files`` in one commit on ``main``."""
    root = tmp_path / "project"
    root.mkdir()
    write_files(root, files)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "start")
    return root


def agent_memory_dir(config_dir: Path, project: Path) -> Path:
    """The agent's memory dir of ``project`` under the config dir ``config_dir``."""
    return config_dir / "projects" / slugify(Path(os.path.realpath(project))) / "memory"


def sdk_answered_by(
    monkeypatch: pytest.MonkeyPatch,
    handle: Callable[[httpx2.Request], httpx2.Response],
    api_key: str | None = None,
) -> None:
    """``anthropic.AsyncAnthropic``, however the code under test makes it, answered by
    ``handle`` (no network, no retries); without ``api_key`` the SDK reads the environment's."""
    import anthropic
    import httpx2

    real = anthropic.AsyncAnthropic

    def factory(**_kwargs: object) -> anthropic.AsyncAnthropic:
        return real(
            base_url="http://fake-api.test",
            max_retries=0,
            api_key=api_key,
            http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handle)),
        )

    monkeypatch.setattr(anthropic, "AsyncAnthropic", factory)


def announced(proc: subprocess.Popen[bytes], prefix: str, timeout: float = 30.0) -> str:
    """The first line of ``proc``'s stderr starting with ``prefix`` (a server saying it listens),
    waited for without polling. ``proc`` needs ``stderr=PIPE, bufsize=0``: unbuffered, select()
    sees every line still unread."""
    assert proc.stderr is not None
    deadline = time.monotonic() + timeout
    seen: list[str] = []
    while True:
        ready, _, _ = select.select([proc.stderr], [], [], max(0.0, deadline - time.monotonic()))
        assert ready, f"no line {prefix!r} within {timeout}s; stderr: {seen}"
        line = proc.stderr.readline().decode()
        assert line, f"the process exited ({proc.poll()}); stderr: {seen}"
        if line.startswith(prefix):
            return line.rstrip("\n")
        seen.append(line)


class RawLspClient:
    """Just enough JSON-RPC over a language server's stdio to initialize it and send requests;
    the server's own requests are answered with null."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.next_id = 0

    async def send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        await self.process.stdin.drain()

    async def receive(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        length = 0
        while True:
            header = (await self.process.stdout.readline()).strip()
            if not header:
                break
            name, _, value = header.partition(b":")
            if name.lower() == b"content-length":
                length = int(value)
        message: dict[str, Any] = json.loads(await self.process.stdout.readexactly(length))
        return message

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        self.next_id += 1
        ident = self.next_id
        await self.send({"id": ident, "method": method, "params": params})
        while True:
            message = await self.receive()
            if message.get("id") == ident and "method" not in message:
                assert "error" not in message, message
                return message.get("result")
            if "method" in message and "id" in message:
                await self.send({"id": message["id"], "result": None})  # the server asks: no
