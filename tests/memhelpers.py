"""Helpers shared by the core tests (a plain module: ``conftest`` names collide across folders)."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
import os
import select
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
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
#: A memory dir of :data:`DEPLOY_MEMORY`, recalled the same whatever the environment's
#: credentials (the offline selector).
DEPLOY_FILES: dict[str, str | bytes] = {
    "MEMORY.md": "- [Deploy](deploy.md) — staging first\n",
    "deploy.md": DEPLOY_MEMORY,
    "memdir.toml": 'selector = "lexical"\n',
}


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
    input: str | None = None,
    preexec_fn: Callable[[], None] | None = None,
) -> subprocess.CompletedProcess[str]:
    """``python -m memdir`` with ``args`` in a subprocess (``input`` on its stdin), its output
    captured as text."""
    return subprocess.run(
        [sys.executable, "-m", "memdir", *args],
        input=input,
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=timeout,
        preexec_fn=preexec_fn,
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

    async def open_folder(self, root: Path, options: dict[str, Any]) -> None:
        """``initialize`` with ``root`` as the one workspace folder and ``options`` as the
        initializationOptions, then ``initialized``."""
        folder = {"uri": root.as_uri(), "name": "memory"}
        await self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": root.as_uri(),
                "capabilities": {},
                "workspaceFolders": [folder],
                "initializationOptions": options,
            },
        )
        await self.send({"method": "initialized", "params": {}})


async def spawn_lsp(
    *args: str,
    env: Mapping[str, str],
    stderr: int = asyncio.subprocess.DEVNULL,
    cwd: Path | None = None,
    preexec_fn: Callable[[], None] | None = None,
) -> asyncio.subprocess.Process:
    """``memdir-lsp`` with ``args`` (this interpreter's), spoken to over pipes."""
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "memdir_lsp",
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=stderr,
        env=env,
        cwd=cwd,
        preexec_fn=preexec_fn,
    )


async def start_lsp(config_dir: Path, preexec_fn: Callable[[], None] | None = None) -> RawLspClient:
    """``memdir-lsp --stdio`` (stderr dropped), the agent's config dir at ``config_dir``."""
    env = {**os.environ, "CLAUDE_CONFIG_DIR": str(config_dir)}
    return RawLspClient(await spawn_lsp("--stdio", env=env, preexec_fn=preexec_fn))


#: ``initialize`` as the tests' MCP clients send it (a JSON-RPC request, id 1).
MCP_INITIALIZE: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}
#: The notification that ends an MCP client's handshake.
MCP_INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
#: What a streamable HTTP client sends with every POST.
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


class McpStdio:
    """An MCP server over stdio, spoken to in JSON lines as raw as a test needs: :meth:`write`
    sends any line (malformed or holding a lone surrogate on purpose), :meth:`send` a message,
    :meth:`ask` a request and reads its answer. ``timeout`` only turns a hang into a failure."""

    def __init__(self, proc: subprocess.Popen[bytes], timeout: float = 60.0) -> None:
        self.proc, self.timeout = proc, timeout
        self.pending, self.next_id, self.last = b"", 1, ""

    def write(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode("utf-8", "surrogatepass") + b"\n")
        self.proc.stdin.flush()
        self.last = line

    def send(self, method: str, params: dict[str, Any] | None = None) -> int | None:
        """A request with ``params`` (its id, the next one, returned), else a notification.
        ``json.dumps`` writes ASCII: a lone surrogate goes as an escape."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        request_id = None
        if params is not None:
            request_id, self.next_id = self.next_id, self.next_id + 1
            message |= {"id": request_id, "params": params}
        self.write(json.dumps(message))
        return request_id

    def receive(self) -> dict[str, Any]:
        """The next line the server writes, waited for without polling."""
        assert self.proc.stdout is not None
        deadline = time.monotonic() + self.timeout
        while b"\n" not in self.pending:
            left = max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([self.proc.stdout], [], [], left)
            assert ready, f"no answer within {self.timeout}s to {self.last[:300]}"
            chunk = self.proc.stdout.read1(1 << 16)  # type: ignore[attr-defined]
            assert chunk, f"the server exited ({self.proc.wait()}) on {self.last[:300]}"
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        message: dict[str, Any] = json.loads(line)
        return message

    def ask(self, method: str, params: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """A request's id and the next line the server writes (its answer)."""
        request_id = self.send(method, params)
        assert request_id is not None
        return request_id, self.receive()

    def ask_line(self, line: str) -> dict[str, Any]:
        """``line`` written as it is, and the next line the server writes."""
        self.write(line)
        return self.receive()

    def initialize(self, client: str = "test") -> dict[str, Any]:
        """The handshake, as ``client``: the ``initialize`` answer."""
        hello = {**MCP_INITIALIZE["params"], "clientInfo": {"name": client, "version": "1"}}
        _, answer = self.ask("initialize", hello)
        self.write(json.dumps(MCP_INITIALIZED))
        return answer


@contextlib.contextmanager
def mcp_stdio(memory: Path, timeout: float = 60.0) -> Iterator[McpStdio]:
    """``memdir mcp --dir memory`` over stdio (stderr dropped), killed at the end."""
    with subprocess.Popen(
        [sys.executable, "-m", "memdir", "mcp", "--dir", str(memory)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    ) as proc:
        try:
            yield McpStdio(proc, timeout)
        finally:
            proc.kill()
            proc.wait(timeout=30)


@contextlib.contextmanager
def mcp_http(
    *args: str,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 30.0,
) -> Iterator[str]:
    """``memdir mcp`` with ``args`` (``--http`` among them) in a subprocess: the URL its serving
    line names, once the socket listens; terminated at the end."""
    with subprocess.Popen(
        [sys.executable, "-m", "memdir", "mcp", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        bufsize=0,
        cwd=cwd,
        env=env,
    ) as proc:
        try:
            yield announced(proc, "memdir mcp: serving ").rsplit(" at ", 1)[1]
        finally:
            proc.terminate()
            proc.wait(timeout=timeout)
