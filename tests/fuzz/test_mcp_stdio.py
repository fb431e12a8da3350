"""Fuzz ``memdir mcp`` over stdio with the same hostile arguments, as JSON lines on the wire.

``test_mcp_args`` calls the server in process, where a lone surrogate is just a Python string;
on the wire ``json.dumps`` writes it as an escape (``"\\ud800"``) that the SDK's strict parser
rejects, and the SDK's stdio reader used to drop the line: the request was never answered.
Properties: every request is answered, with its id, and the server keeps serving.
"""

from __future__ import annotations

import json
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from itertools import count
from typing import Any

import pytest
from fuzz.strategies import FUZZ
from fuzz.test_mcp_args import INDEX, TOOLS, TOPIC, arguments
from hypothesis import given
from hypothesis import strategies as st

#: Guards against a hang only: every answer comes at once.
DEADLINE = 60.0


class Wire:
    """A ``memdir mcp`` process spoken to in JSON lines."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc, self.pending, self.ids = proc, b"", count(1)

    def ask(self, method: str, params: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        request_id = next(self.ids)
        line = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(line.encode("ascii") + b"\n")  # escapes: lone surrogates too
        self.proc.stdin.flush()
        deadline = time.monotonic() + DEADLINE
        while b"\n" not in self.pending:
            left = max(0.0, deadline - time.monotonic())
            assert select.select([self.proc.stdout], [], [], left)[0], f"no answer: {line[:300]}"
            chunk = self.proc.stdout.read1(1 << 16)  # type: ignore[attr-defined]
            assert chunk, f"the server exited ({self.proc.wait()}) on {line[:300]}"
            self.pending += chunk
        answer, self.pending = self.pending.split(b"\n", 1)
        return request_id, json.loads(answer)


@pytest.fixture(scope="module")
def wire(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Wire, dict[str, Any]]]:
    memory = tmp_path_factory.mktemp("fuzz-mcp-stdio") / "memory"
    memory.mkdir()
    (memory / "MEMORY.md").write_text(INDEX, encoding="utf-8")
    (memory / "deploy.md").write_text(TOPIC, encoding="utf-8")
    (memory / "memdir.toml").write_text('selector = "lexical"\n', encoding="utf-8")
    with subprocess.Popen(
        [sys.executable, "-m", "memdir", "mcp", "--dir", str(memory)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    ) as proc:
        try:
            server = Wire(proc)
            hello = {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "fuzz", "version": "1"},
            }
            server.ask("initialize", hello)
            assert proc.stdin is not None
            proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
            _, listed = server.ask("tools/list", {})
            yield server, {t["name"]: t["inputSchema"] for t in listed["result"]["tools"]}
        finally:
            proc.kill()
            proc.wait(timeout=30)


@pytest.mark.parametrize("tool", TOOLS)
@FUZZ
@given(data=st.data())
def test_every_request_on_the_wire_is_answered(
    wire: tuple[Wire, dict[str, Any]], data: st.DataObject, tool: str
) -> None:
    server, schemas = wire
    args = data.draw(arguments(schemas[tool]), label="arguments")
    request_id, answer = server.ask("tools/call", {"name": tool, "arguments": args})
    assert answer["id"] == request_id, answer
    assert "result" in answer or answer["error"]["code"] != -32603, answer
    after_id, after = server.ask("tools/call", {"name": "memory_index", "arguments": {}})
    assert after["id"] == after_id and not after["result"]["isError"], after
