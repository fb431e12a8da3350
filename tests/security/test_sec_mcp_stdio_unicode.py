"""``memdir mcp`` over stdio answers every request, and never dies on a reply.

A JSON string may hold an escaped lone surrogate (``"\\ud800"``); the SDK's strict parser
rejects the line and its stdio transport dropped it, so the client waited for ever (5 of 5).
A file name that is not UTF-8 decodes to lone surrogates, and the SDK's stdout writer could not
encode a reply naming it: the server died on ``view /memories``. Raw JSON-RPC lines here, as a
hostile client writes them.
"""

from __future__ import annotations

import json
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest

TOPIC = "---\nname: deploy\ndescription: how deploys work\ntype: project\n---\nStaging first.\n"
#: Guards against a hang only: every answer comes at once.
DEADLINE = 30.0
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}


class Stdio:
    """A ``memdir mcp`` process spoken to line by line."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.pending = b""

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode("utf-8", "surrogatepass") + b"\n")
        self.proc.stdin.flush()

    def receive(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        deadline = time.monotonic() + DEADLINE
        while b"\n" not in self.pending:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self.proc.stdout], [], [], max(0.0, left))
            assert ready, f"no answer within {DEADLINE}s"
            chunk = self.proc.stdout.read1(65536)  # type: ignore[attr-defined]
            assert chunk, f"the server exited ({self.proc.wait()})"
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        message: dict[str, Any] = json.loads(line)
        return message

    def ask(self, line: str) -> dict[str, Any]:
        self.send(line)
        return self.receive()


@pytest.fixture(scope="module")
def stdio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stdio]:
    """One server for the module: each test must leave it serving anyway."""
    root = tmp_path_factory.mktemp("sec-mcp-stdio") / "memory"
    root.mkdir()
    (root / "MEMORY.md").write_text("- [Deploy](deploy.md) — how\n")
    (root / "deploy.md").write_text(TOPIC)
    (root / "memdir.toml").write_text('selector = "lexical"\n')
    # A memory whose name is not UTF-8 (Latin-1 "é"), as another tool may have written it.
    (root / "caf\udce9.md").write_text(TOPIC)
    with subprocess.Popen(
        [sys.executable, "-m", "memdir", "mcp", "--dir", str(root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    ) as proc:
        try:
            server = Stdio(proc)
            assert server.ask(json.dumps(INITIALIZE))["id"] == 0
            server.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            yield server
        finally:
            proc.kill()
            proc.wait(timeout=30)


def call(request_id: int, tool: str, arguments: str) -> str:
    """A tools/call line with ``arguments`` as raw JSON text (escapes kept as written)."""
    return (
        f'{{"jsonrpc":"2.0","id":{request_id},"method":"tools/call",'
        f'"params":{{"name":"{tool}","arguments":{arguments}}}}}'
    )


def tools_answer(server: Stdio, request_id: int) -> None:
    """The server is still up and serving."""
    answer = server.ask(f'{{"jsonrpc":"2.0","id":{request_id},"method":"tools/list"}}')
    assert answer["id"] == request_id
    assert {t["name"] for t in answer["result"]["tools"]} >= {"memory", "memory_recall"}


LONE = [
    ("memory_search", '{"pattern":"\\ud800"}', "params.arguments.pattern"),
    ("memory_recall", '{"query":"deploys to staging \\udfff now"}', "params.arguments.query"),
    (
        "memory",
        '{"command":"create","path":"/memories/x.md","file_text":"a\\ud83d b"}',
        "params.arguments.file_text",
    ),
    ("memory", '{"command":"view","path":"/memories/\\udce9.md"}', "params.arguments.path"),
    ("memory_lint", '{"directory":"\\ud800"}', "params.arguments.directory"),
    ("memory_index", '{"\\ud800":"x"}', "params.arguments.\ufffd"),
]


def test_a_lone_surrogate_in_arguments_is_an_error_naming_it(stdio: Stdio) -> None:
    for n, (tool, arguments, where) in enumerate(LONE, start=1):
        answer = stdio.ask(call(n, tool, arguments))
        assert answer["id"] == n, answer
        assert answer["error"]["code"] == -32602
        message = answer["error"]["message"]
        assert message.startswith(f"Invalid params: `{where}` holds a lone surrogate (\\u"), message
        tools_answer(stdio, 100 + n)


def test_a_valid_pair_is_text(stdio: Stdio) -> None:
    answer = stdio.ask(call(1, "memory_search", '{"pattern":"\\ud83d\\ude00"}'))
    assert answer["result"]["content"][0]["text"] == "No matches."


def test_lines_that_are_not_requests_are_answered(stdio: Stdio) -> None:
    garbage = stdio.ask("this is not json")
    assert garbage["id"] is None and garbage["error"]["code"] == -32700
    shape = stdio.ask('{"jsonrpc":"2.0","id":7,"method":"tools/call","params":5}')
    assert shape["id"] == 7 and shape["error"]["code"] == -32600
    assert "`params`" in shape["error"]["message"]
    # A notification gets no answer, even a broken one: the next answer is the next request's.
    stdio.send('{"jsonrpc":"2.0","method":"notifications/x","params":{"a":"\\ud800"}}')
    stdio.send('{"jsonrpc":"2.0","method":"notifications/x","params":5}')
    tools_answer(stdio, 8)


def test_a_file_name_that_is_not_utf8_is_listed_and_read(stdio: Stdio) -> None:
    view = stdio.ask(call(1, "memory", '{"command":"view","path":"/memories"}'))
    assert "/memories/caf\ufffd.md" in view["result"]["content"][0]["text"]
    listed = stdio.ask('{"jsonrpc":"2.0","id":2,"method":"resources/list"}')
    assert "memdir://memory/caf\ufffd.md" in {r["uri"] for r in listed["result"]["resources"]}
    found = stdio.ask(call(3, "memory_search", '{"pattern":"Staging"}'))
    assert "caf\ufffd.md:6:1: Staging first." in found["result"]["content"][0]["text"]
    tools_answer(stdio, 4)


def test_arguments_nested_too_deep_are_answered(stdio: Stdio) -> None:
    for n, depth in enumerate((300, 100_000), start=1):
        answer = stdio.ask(
            call(n, "memory_lint", '{"directory":' + "[" * depth + "]" * depth + "}")
        )
        assert "recursion limit exceeded" in answer["error"]["message"]
        assert answer["id"] == (n if depth == 300 else None)  # past Python's own limit: unread
        tools_answer(stdio, 100 + n)
