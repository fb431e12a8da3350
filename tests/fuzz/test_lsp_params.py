"""Fuzz ``memdir-lsp``'s params: every request the server registers, standard and ``memory/*``.

One real server (``python -m memdir_lsp`` over stdio) takes every example. Properties: each
request is answered (a result or a JSON-RPC error, never silence); bad params are refused, never
an internal error; an error is one line without a traceback or an install path; and the server
keeps serving (a valid request after each example answers).
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fuzz.strategies import FUZZ, json_values, mutated, numbers, schema_object, strings
from hypothesis import given
from hypothesis import strategies as st
from memdir_lsp import protocol as P
from memdir_lsp.memory_protocol.schema import SCHEMA_PATH
from memdir_lsp.memory_protocol.types import METHODS
from memdir_lsp.server import create_server

#: Generous: a silent server fails the test, a slow one does not.
ANSWER_TIMEOUT = 60.0

INDEX = "# Memory index\n\n- [Deploy](deploy.md) — staging first\n- [Gone](gone.md) — missing\n"
TOPIC = "---\nname: deploy\ndescription: how deploys reach staging\ntype: project\n---\nBody.\n"

#: Lifecycle methods end the session; the fuzz keeps it.
LIFECYCLE = {"initialize", "initialized", "shutdown", "exit"}


class Server:
    """``memdir-lsp`` in a subprocess, driven synchronously; a thread reads its answers."""

    def __init__(self, root: Path) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE_"))}
        env["CLAUDE_CONFIG_DIR"] = str(root / "claude")
        self.log = (root / "server.log").open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "memdir_lsp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            env=env,
        )
        self.answers: queue.Queue[dict[str, Any]] = queue.Queue()
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        stdout = self.proc.stdout
        assert stdout is not None
        while True:
            length = 0
            while (line := stdout.readline()).strip():
                name, _, value = line.decode().partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            if not line:
                return
            message = json.loads(stdout.read(length))
            if "method" in message and "id" in message:  # a request to the client
                self.write({"id": message["id"], "result": None})
            elif "method" not in message:
                self.answers.put(message)

    def write(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def request(self, method: str, params: Any = None, *, omit: bool = False) -> dict[str, Any]:
        self.next_id += 1
        message: dict[str, Any] = {"id": self.next_id, "method": method}
        if not omit:
            message["params"] = params
        self.write(message)
        while True:
            try:
                answer = self.answers.get(timeout=ANSWER_TIMEOUT)
            except queue.Empty:
                pytest.fail(f"no answer to {method} {json.dumps(params)[:300]}")
            if answer.get("id") == self.next_id:
                return answer

    def notify(self, method: str, params: Any) -> None:
        self.write({"method": method, "params": params})

    def close(self) -> None:
        self.request("shutdown")
        self.notify("exit", None)
        assert self.proc.wait(timeout=ANSWER_TIMEOUT) == 0
        self.log.close()


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Path]]:
    root = tmp_path_factory.mktemp("fuzz-lsp")
    memory = root / "memory"
    memory.mkdir()
    (memory / "MEMORY.md").write_text(INDEX, encoding="utf-8")
    (memory / "deploy.md").write_text(TOPIC, encoding="utf-8")
    server = Server(root)
    init = server.request(
        "initialize",
        {
            "processId": None,
            "rootUri": memory.as_uri(),
            "capabilities": {
                "workspace": {"workspaceEdit": {"resourceOperations": ["create"]}},
                "window": {"workDoneProgress": False},
            },
        },
    )
    assert "result" in init
    server.notify("initialized", {})
    index = (memory / "MEMORY.md").as_uri()
    server.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": index, "languageId": "markdown", "version": 1, "text": INDEX}},
    )
    yield server, root
    server.close()


def uris(root: Path) -> st.SearchStrategy[str]:
    """URIs in the memory dir, beside it (still inside the test's temp dir), and hostile ones."""
    memory = root / "memory"
    return st.one_of(
        st.sampled_from(
            [
                memory.as_uri(),
                (memory / "MEMORY.md").as_uri(),
                (memory / "deploy.md").as_uri(),
                (memory / "new.md").as_uri(),
                (memory / ("a" * 300 + ".md")).as_uri(),
                (root / "outside.md").as_uri(),
                memory.as_uri() + "/%00.md",
                memory.as_uri() + "/%ED%A0%80.md",  # an encoded lone surrogate
            ]
        ),
        strings,
    )


def position() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({"line": numbers, "character": numbers})


def standard_params(method: str, root: Path) -> st.SearchStrategy[Any]:
    """Params shaped like the method's, then mutated."""
    doc = {"uri": (root / "memory" / "MEMORY.md").as_uri()}
    at = {"line": 2, "character": 4}
    span = {"start": at, "end": {"line": 3, "character": 0}}
    templates: dict[str, dict[str, Any]] = {
        "textDocument/codeAction": {
            "textDocument": doc,
            "range": span,
            "context": {"diagnostics": []},
        },
        "textDocument/completion": {"textDocument": doc, "position": at},
        "textDocument/references": {
            "textDocument": doc,
            "position": at,
            "context": {"includeDeclaration": True},
        },
        "workspace/symbol": {"query": "deploy"},
        "workspace/willRenameFiles": {
            "files": [{"oldUri": doc["uri"], "newUri": (root / "memory" / "x.md").as_uri()}]
        },
        "window/workDoneProgress/cancel": {"token": "t"},
        "workspace/executeCommand": {
            "command": P.CMD_CREATE_FILE,
            "arguments": [[(root / "memory" / "made.md").as_uri(), "text"]],
        },
    }
    template = templates.get(method, {"textDocument": doc, "position": at})
    extra = st.one_of(
        uris(root),
        position(),
        st.fixed_dictionaries({"uri": uris(root)}),
        st.fixed_dictionaries({"start": position(), "end": position()}),
    )
    return mutated(template, extra)


SCHEMA = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))["$defs"]


@st.composite
def custom_params(draw: st.DrawFn, cls_name: str, root: Path) -> Any:
    text = st.one_of(strings, uris(root))
    params = draw(schema_object(SCHEMA[cls_name], lambda _name: text))
    if "directory" in params and draw(st.booleans()):
        params["directory"] = None  # mostly the default dir, so the rest of the params matter
    return draw(mutated(params, json_values))


def registered() -> tuple[list[str], list[str]]:
    """The requests and notifications the server registers (lifecycle left out)."""
    server = create_server()
    methods = set(server.protocol.fm.features) - LIFECYCLE
    methods.add("workspace/executeCommand")
    notifications = {m.name for m in METHODS if m.kind == "notification"}
    notifications |= {m for m in methods if "/did" in m or m.endswith("/cancel")}
    return sorted(methods - notifications), sorted(notifications)


REQUESTS, NOTIFICATIONS = registered()
CUSTOM = {m.name: m.params.__name__ for m in METHODS if m.kind != "server notification"}


def params_for(method: str, root: Path) -> st.SearchStrategy[Any]:
    if method in CUSTOM:
        return custom_params(CUSTOM[method], root)
    return standard_params(method, root)


def assert_answered(answer: dict[str, Any], method: str, params: Any) -> None:
    said = f"{method} {json.dumps(params)[:300]} -> {json.dumps(answer)[:500]}"
    assert "result" in answer or "error" in answer, said
    if "error" in answer:
        error = answer["error"]
        assert error["code"] != -32603, said  # bad params are never an internal error
        message = error["message"]
        assert message and "\n" not in message and "Traceback" not in message, said
        assert not error.get("data"), said
        assert "site-packages" not in message and sys.prefix not in message, said
        if message.startswith("invalid params for"):  # the structure step names the field
            assert "$.params" in message, said


def test_every_registered_method_is_fuzzed() -> None:
    assert {m.name for m in METHODS if m.kind == "request"} <= set(REQUESTS)
    assert {"textDocument/hover", "textDocument/completion", "workspace/symbol"} <= set(REQUESTS)
    assert {"textDocument/didChange", P.MEMORY_DID_READ} <= set(NOTIFICATIONS)


@pytest.mark.parametrize("method", REQUESTS)
@FUZZ
@given(data=st.data(), omit=st.booleans())
def test_every_request_is_answered_and_the_server_keeps_serving(
    world: tuple[Server, Path], data: st.DataObject, method: str, omit: bool
) -> None:
    server, root = world
    params = None if omit else data.draw(params_for(method, root), label="params")
    answer = server.request(method, params, omit=omit)
    assert_answered(answer, method, params)
    assert "result" in server.request(P.MEMDIR_STATUS, {})


@pytest.mark.parametrize("method", NOTIFICATIONS)
@FUZZ
@given(data=st.data())
def test_notifications_never_stop_the_server(
    world: tuple[Server, Path], data: st.DataObject, method: str
) -> None:
    server, root = world
    params = data.draw(params_for(method, root), label="params")
    server.notify(method, params)
    assert "result" in server.request(P.MEMORY_INDEX, {})
