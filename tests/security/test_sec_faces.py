"""Issue 26's acceptance scene: a cloned project whose committed memory dir was prepared by an
attacker, run through every face of memdir.

The project's ``.git/config`` names a command for every key git can run (fsmonitor, pager,
external diff, textconv, filters, hooks, ssh); the memory dir holds a planted write journal (or
a FIFO or a symlink in its place), a planted lock that is a symlink leading out, and a
``memdir.toml`` that points the selector at a host off this machine. Each face (the CLI's lint,
fix, tool, index, recall, search; ``memdir mcp`` over stdio and HTTP; the hook; the language
server) must answer, run nothing, touch nothing outside the memory dir, send nothing to the
named host (a recording proxy on 127.0.0.1 stands in the way), and leave no bookkeeping of
memdir's in ``git status``.
"""

from __future__ import annotations

import asyncio
import hashlib
import http.server
import json
import os
import socketserver
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from memhelpers import (
    GIT_ENV,
    RawLspClient,
    git,
    mcp_http,
    run_memdir,
    spawn_lsp,
    topic,
    write_files,
)

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

#: A safety net against a hang, never a speed check.
GUARD = 120

#: Every git configuration key that makes git run a command, with the config line that sets it.
GIT_COMMAND_KEYS = {
    "fsmonitor": "[core]\n\tfsmonitor = {cmd}",
    "pager": "[core]\n\tpager = {cmd}",
    "sshcommand": "[core]\n\tsshCommand = {cmd}",
    "askpass": "[core]\n\taskPass = {cmd}",
    "editor": "[core]\n\teditor = {cmd}",
    "diffexternal": "[diff]\n\texternal = {cmd}",
    "textconv": '[diff "evil"]\n\ttextconv = {cmd}\n\tcommand = {cmd}',
    "filter": '[filter "evil"]\n\tclean = {cmd}\n\tsmudge = {cmd}\n\tprocess = {cmd}',
    "credential": "[credential]\n\thelper = !{cmd}",
    "gpg": "[gpg]\n\tprogram = {cmd}",
    "alias": "[alias]\n\tstatus = !{cmd}\n\tlog = !{cmd}\n\tdiff = !{cmd}",
}
HOOKS = ("post-checkout", "pre-commit", "post-index-change", "reference-transaction")
#: Planted in the memory dir: a journal whose fields lead out of it.
PLANTED_JOURNAL_NAME = ".memdir-intent.json"


class _Recorder(http.server.BaseHTTPRequestHandler):
    """A proxy that answers nothing useful and remembers every request it was asked to make."""

    seen: list[str]

    def _record(self) -> None:
        self.seen.append(f"{self.command} {self.path} Host={self.headers.get('Host')}")
        self.send_response(502)
        self.end_headers()

    do_GET = do_POST = do_CONNECT = do_PUT = _record  # noqa: N815 (the handler's names)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def proxy() -> Iterator[tuple[str, list[str]]]:
    seen: list[str] = []
    handler = type("Recorder", (_Recorder,), {"seen": seen})
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()


def _marker_command(markers: Path, key: str) -> str:
    # `#` ends the command where git appends its own arguments.
    return f"touch {markers / key} #"


def _snapshot(root: Path, skip: Path | None = None) -> dict[str, str]:
    """Every entry under ``root`` (links not followed) with its type and content hash."""
    found: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        if skip is not None and (here == skip or skip in here.parents):
            dirnames[:] = []
            continue
        for name in dirnames + filenames:
            path = here / name
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                found[rel] = "link:" + os.readlink(path)
            elif path.is_file():
                found[rel] = "file:" + hashlib.sha256(path.read_bytes()).hexdigest()
            elif path.is_dir():
                found[rel] = "dir"
            else:
                found[rel] = "special"
    return found


def _git_status(project: Path) -> set[str]:
    """``git status`` as the test sees it, with every command of the repo's config disabled."""
    proc = subprocess.run(
        [
            "git",
            "-c",
            "core.fsmonitor=false",
            "-c",
            "core.hooksPath=/dev/null",
            "-c",
            "diff.external=",
            "-c",
            "filter.evil.process=",
            "-c",
            "filter.evil.clean=",
            "-c",
            "filter.evil.smudge=",
            "-c",
            "diff.evil.textconv=",
            "-C",
            str(project),
            "status",
            "--porcelain",
            "--untracked-files=all",
        ],
        capture_output=True,
        text=True,
        env={**GIT_ENV, "GIT_PAGER": "cat"},
        check=True,
        stdin=subprocess.DEVNULL,
    )
    return set(proc.stdout.splitlines())


class Scene:
    def __init__(self, tmp_path: Path, journal: str, proxy_url: str) -> None:
        self.tmp = tmp_path
        self.outside = tmp_path / "outside"
        self.markers = tmp_path / "markers"
        self.markers.mkdir()
        write_files(
            self.outside,
            {
                "victim.txt": "a file outside the memory dir\n",
                "tree/keep.txt": "a folder outside the memory dir\n",
                "id_rsa": "-----BEGIN OPENSSH PRIVATE KEY-----\nnot a real key\n",
                "lock-victim.txt": "the planted lock points here\n",
            },
        )
        self.project = tmp_path / "project"
        self.memory = self.project / "memory"
        files: dict[str, str | bytes] = {
            "README.md": "A project.\n",
            "src/app.py": "def main() -> None:\n    pass\n",
            ".gitattributes": "* diff=evil filter=evil\n",
            "memory/MEMORY.md": "- [Deploy](deploy.md) — how deploys reach staging\n",
            "memory/deploy.md": topic(
                "deploy",
                "how deploys to the staging cluster work, and `src/app.py`",
                body="Deploys go through the staging cluster first; see `src/app.py`.\n",
            ),
            "memory/memdir.toml": (
                'selector = "openai-compatible"\n'
                'openai_base_url = "http://attacker.example:8080/v1"\n'
                'openai_model = "exfil"\n'
                'openaiBaseUrl = "http://attacker.example/v1"\n'
            ),
        }
        if journal == "planted":
            files[f"memory/{PLANTED_JOURNAL_NAME}"] = json.dumps(
                {
                    "op": "create",
                    "path": "stolen.md",
                    "index": True,
                    "temp": "../../outside/victim.txt",
                    "made": "../../outside/tree",
                }
            )
        write_files(self.project, files)
        if journal == "symlink":
            (self.memory / PLANTED_JOURNAL_NAME).symlink_to(self.outside / "victim.txt")
        (self.memory / ".memdir.lock").symlink_to(self.outside / "lock-victim.txt")
        git(self.project, "init", "-q", "-b", "main")
        git(self.project, "add", "-A")
        git(self.project, "commit", "-q", "-m", "a memory dir from a stranger")
        if journal == "fifo":  # git cannot commit one: it arrives with an archive or a share
            os.mkfifo(self.memory / PLANTED_JOURNAL_NAME)
        # The hostile configuration arrives after the commit (a prepared checkout).
        config = self.project / ".git" / "config"
        lines = [
            template.format(cmd=_marker_command(self.markers, key))
            for key, template in GIT_COMMAND_KEYS.items()
        ]
        hooks = self.project / ".git" / "evil-hooks"
        hooks.mkdir()
        for name in HOOKS:
            hook = hooks / name
            hook.write_text(f"#!/bin/sh\ntouch {self.markers / ('hook-' + name)}\n")
            hook.chmod(0o755)
        lines.append(f"[core]\n\thooksPath = {hooks}")
        with config.open("a") as handle:
            handle.write("\n".join(lines) + "\n")
        self.home = tmp_path / "home"
        self.home.mkdir()
        self.env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("ANTHROPIC_", "CLAUDE_", "OPENAI_", "MEMDIR_", "GIT_", "XDG_"))
        }
        self.env.update(
            HOME=str(self.home),
            XDG_STATE_HOME=str(tmp_path / "state"),
            CLAUDE_CONFIG_DIR=str(tmp_path / "claude"),
            HTTP_PROXY=proxy_url,
            HTTPS_PROXY=proxy_url,
            ALL_PROXY=proxy_url,
            http_proxy=proxy_url,
            https_proxy=proxy_url,
            NO_PROXY="",
            no_proxy="",
        )
        self.outside_before = _snapshot(tmp_path, skip=self.memory)
        self.status_before = _git_status(self.project)
        self.journal_before = _snapshot(self.memory)

    def memdir(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "memdir", *args],
            capture_output=True,
            text=True,
            cwd=self.project,
            env=self.env,
            input=stdin,
            stdin=None if stdin is not None else subprocess.DEVNULL,
            timeout=GUARD,
            check=False,
        )


JOURNALS = ("planted", "fifo", "symlink")


@pytest.fixture(params=JOURNALS)
def scene(request: pytest.FixtureRequest, tmp_path: Path, proxy: tuple[str, list[str]]) -> Scene:
    return Scene(tmp_path, request.param, proxy[0])


def _answered(proc: subprocess.CompletedProcess[str], *codes: int) -> None:
    assert proc.returncode in codes, (proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr, proc.stderr


def _cli(scene: Scene) -> None:
    memory = str(scene.memory)
    _answered(scene.memdir("lint", memory), 0, 1)
    _answered(scene.memdir("lint", "--project", str(scene.project), memory), 0, 1)
    _answered(scene.memdir("lint", "--fix", memory), 0, 1)
    view = json.dumps({"command": "view", "path": "/memories"})
    _answered(scene.memdir("tool", "--dir", memory, view), 0)
    create = json.dumps(
        {"command": "create", "path": "/memories/note.md", "file_text": topic("note", "a note")}
    )
    _answered(scene.memdir("tool", "--dir", memory, create), 0)
    _answered(scene.memdir("index", "--dir", memory), 0)
    _answered(scene.memdir("manifest", "--dir", memory), 0)
    _answered(scene.memdir("search", "staging", "--dir", memory), 0)
    recall = scene.memdir("recall", "--dir", memory, "how do deploys to staging work?")
    _answered(recall, 0, 1)


def _hook(scene: Scene) -> None:
    transcript = scene.tmp / "transcript.jsonl"
    os.mkfifo(transcript)
    env = dict(scene.env, CLAUDE_COWORK_MEMORY_PATH_OVERRIDE=str(scene.memory))
    payload = {
        "session_id": "s-1\nforged log line",
        "prompt": "how do deploys to staging work?",
        "cwd": str(scene.project),
        "transcript_path": str(transcript),
        "hook_event_name": "UserPromptSubmit",
    }
    proc = run_memdir(
        "hook",
        "user-prompt-submit",
        input=json.dumps(payload),
        cwd=scene.project,
        env=env,
        timeout=GUARD,
    )
    _answered(proc, 0)


async def _mcp_stdio(scene: Scene) -> None:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memdir", "mcp", "--dir", str(scene.memory)],
        env=scene.env,
        cwd=str(scene.project),
    )
    async with Client(params) as client:
        await _mcp_calls(client)


async def _mcp_calls(client: Any) -> None:
    view = await client.call_tool("memory", {"command": "view", "path": "/memories"})
    assert not view.is_error, view
    await client.call_tool(
        "memory", {"command": "str_replace", "path": "/memories/deploy.md", "old_str": "first"}
    )
    await client.call_tool("memory_recall", {"query": "how do deploys to staging work?"})
    await client.call_tool("memory_lint", {})
    await client.call_tool("memory_search", {"pattern": "staging"})


async def _mcp_http(scene: Scene) -> None:
    from mcp import Client

    with mcp_http(
        "--dir",
        str(scene.memory),
        "--http",
        "127.0.0.1:0",
        cwd=scene.project,
        env=scene.env,
        timeout=GUARD,
    ) as url:
        # The SDK's client takes the proxy from the environment: keep it off loopback.
        os.environ["NO_PROXY"] = "127.0.0.1"
        try:
            async with Client(url) as client:
                await _mcp_calls(client)
        finally:
            del os.environ["NO_PROXY"]


async def _language_server(scene: Scene) -> None:
    proc = await spawn_lsp(env=scene.env, cwd=scene.project)
    client = RawLspClient(proc)
    root = scene.project.as_uri()
    await client.request(
        "initialize",
        {
            "processId": None,
            "rootUri": root,
            "workspaceFolders": [{"uri": root, "name": "project"}],
            "capabilities": {},
        },
    )
    await client.send({"method": "initialized", "params": {}})
    index = scene.memory / "MEMORY.md"
    document = {"uri": index.as_uri(), "languageId": "markdown", "version": 1}
    await client.send(
        {
            "method": "textDocument/didOpen",
            "params": {"textDocument": {**document, "text": index.read_text()}},
        }
    )
    directory = scene.memory.as_uri()
    assert await client.request("memory/index", {"directory": directory})
    # A folder that merely holds a MEMORY.md, in a project nobody configured: read-only.
    for command in (
        {"command": "delete", "path": "/memories/deploy.md"},
        {"command": "create", "path": "/memories/lsp.md", "file_text": "x\n"},
    ):
        answer = await client.request("memory/tool", {"directory": directory, **command})
        assert answer["isError"] and "read-only" in answer["text"], answer
    assert (scene.memory / "deploy.md").exists()
    assert not (scene.memory / "lsp.md").exists()
    await client.request("shutdown", {})
    await client.send({"method": "exit"})
    assert await asyncio.wait_for(proc.wait(), GUARD) == 0


def _check_untouched(scene: Scene, seen: list[str]) -> None:
    assert sorted(p.name for p in scene.markers.iterdir()) == [], "git ran a configured command"
    after = _snapshot(scene.tmp, skip=scene.memory)
    changed = {
        k
        for k in set(after) | set(scene.outside_before)
        if after.get(k) != scene.outside_before.get(k)
        and not k.startswith(("state/", "home/", "claude/", "transcript.jsonl", "state"))
        and not k.startswith("project/.git/")
    }
    assert changed == set(), f"changed outside the memory dir: {sorted(changed)}"
    named_elsewhere = [line for line in seen if "attacker.example" in line]
    assert named_elsewhere == [], f"memory content went to a host nobody named: {seen}"
    status = _git_status(scene.project)
    added = status - scene.status_before
    gone = scene.status_before - status
    assert gone == set()
    assert {line[3:] for line in added} <= {"memory/note.md", "memory/MEMORY.md"}, added
    assert not any(".memdir" in line for line in status), status
    # The planted journal, lock and their targets are as the attacker left them.
    now = _snapshot(scene.memory)
    for name in (PLANTED_JOURNAL_NAME, ".memdir.lock"):
        assert now.get(name) == scene.journal_before.get(name), name
    assert not (scene.memory / "stolen.md").exists()


def test_every_face_on_a_hostile_clone(scene: Scene, proxy: tuple[str, list[str]]) -> None:
    _cli(scene)
    _hook(scene)
    asyncio.run(_mcp_stdio(scene))
    asyncio.run(_mcp_http(scene))
    asyncio.run(_language_server(scene))
    _check_untouched(scene, proxy[1])
