"""The canary: what memdir_lsp.adapter relies on in pygls is still there and still behaves.

pygls is pinned to the minor release it is tested with (pyproject.toml); these fail the day a
release renames, re-signs or changes one of the internals the adapter overrides or reads
(``adapter.RELIED_ON``), before anything subtler breaks in an editor.
"""

from __future__ import annotations

import inspect
import json
import threading
from concurrent.futures import Future
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from memdir_lsp import adapter
from memdir_lsp.server import MemoryServer
from pygls.exceptions import JsonRpcInvalidParams
from pygls.workspace import TextDocument

ROOT = Path(__file__).resolve().parents[3]


class Sent:
    """A writer that keeps what the protocol sends, each message as JSON."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []

    def write(self, data: bytes) -> None:
        self.messages.append(json.loads(data.split(b"\r\n\r\n", 1)[1]))

    @property
    def answers(self) -> list[dict[str, Any]]:
        return [m for m in self.messages if "id" in m]

    def close(self) -> None:
        pass


def initialized(capabilities: types.ClientCapabilities | None = None) -> MemoryServer:
    server = MemoryServer()
    params = types.InitializeParams(
        capabilities=capabilities or types.ClientCapabilities(), process_id=None
    )
    for _ in server.protocol.lsp_initialize(params):
        pass
    return server


def test_the_pin_is_the_release_installed() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    major, minor = version("pygls").split(".")[:2]
    assert f'"pygls>={major}.{minor},<{major}.{int(minor) + 1}"' in pyproject


@pytest.mark.parametrize(
    ("owner", "name", "parameters"),
    adapter.RELIED_ON,
    ids=[f"{owner.__name__}.{name}" for owner, name, _ in adapter.RELIED_ON],
)
def test_each_internal_the_adapter_relies_on_exists(
    owner: type, name: str, parameters: tuple[str, ...] | None
) -> None:
    if parameters is not None:
        assert list(inspect.signature(getattr(owner, name)).parameters) == list(parameters)
        return
    # An attribute of instances, made by pygls' own constructors (and initialize).
    server = initialized()
    document = TextDocument("file:///m/a.md", source="")
    candidates = (server.protocol, server, server.workspace, document)
    instance = next(i for i in candidates if isinstance(i, owner))
    assert name in vars(instance), f"{type(instance).__name__} has no {name}"


def test_send_response_and_send_data_write_json_rpc() -> None:
    server = initialized()
    sent = Sent()
    server.protocol.set_writer(sent)
    server.protocol._send_response("a", result={"ok": True})
    adapter.send_error(server.protocol, None, JsonRpcInvalidParams("bad"))
    assert sent.messages == [
        {"jsonrpc": "2.0", "id": "a", "result": {"ok": True}},
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32602, "message": "bad"}},
    ]


def test_a_failed_handler_reaches_send_handler_result_and_is_one_sentence() -> None:
    server = initialized()
    sent = Sent()
    server.protocol.set_writer(sent)
    server.protocol.requests[7] = ("memory/index", {})
    failed: Future[Any] = Future()
    failed.set_exception(RuntimeError("/home/someone/secret/path"))
    server.protocol._send_handler_result(failed, msg_id=7)
    [answer] = sent.answers
    assert answer["id"] == 7 and answer["error"]["code"] == -32603
    assert "/home" not in json.dumps(answer)


def test_params_that_do_not_fit_are_refused_through_structure_message() -> None:
    server = initialized()
    sent = Sent()
    server.protocol.set_writer(sent)
    message = {"jsonrpc": "2.0", "id": 3, "method": "textDocument/hover", "params": {"x": 1}}
    assert server.protocol.structure_message(message) is adapter.UNREADABLE
    [answer] = sent.answers
    assert answer["id"] == 3 and answer["error"]["code"] == -32602


def test_the_workspace_makes_memory_documents_and_applies_their_changes() -> None:
    server = initialized()
    workspace = server.workspace
    assert isinstance(workspace, adapter.MemoryWorkspace)  # swapped in by lsp_initialize
    uri = "file:///m/MEMORY.md"
    workspace.put_text_document(
        types.TextDocumentItem(uri=uri, language_id="markdown", version=1, text="a\u2028b\nc\n")
    )
    document = workspace.get_text_document(uri)
    assert isinstance(document, adapter.MemoryDocument)
    at = types.Position(line=1, character=0)
    workspace.update_text_document(
        types.VersionedTextDocumentIdentifier(uri=uri, version=2),
        types.TextDocumentContentChangePartial(range=types.Range(start=at, end=at), text="X"),
    )
    assert document.source == "a\u2028b\nXc\n"


def test_initialize_lists_the_custom_methods() -> None:
    from memdir_lsp.server import create_server

    server = create_server()
    result = None
    generator = server.protocol.lsp_initialize(
        types.InitializeParams(capabilities=types.ClientCapabilities(), process_id=None)
    )
    try:
        while True:
            next(generator)
    except StopIteration as stop:
        result = stop.value
    assert result is not None
    methods = result.capabilities.experimental["memdir"]["methods"]
    assert "memory/index" in methods


def test_shutdown_sets_the_stop_event_the_reader_loop_watches() -> None:
    server = MemoryServer()
    server._stop_event = stop = threading.Event()
    server.shutdown()
    assert stop.is_set()


def test_no_other_server_module_touches_those_internals() -> None:
    """The adapter is the one place: a pygls release that changes an internal breaks it alone."""
    names = {name for _, name, _ in adapter.RELIED_ON}
    server = ROOT / "server" / "memdir_lsp"
    for module in server.rglob("*.py"):
        if module.name == "adapter.py":
            continue
        text = module.read_text(encoding="utf-8")
        used = sorted(name for name in names if f".{name}" in text)
        assert used == [], f"{module.relative_to(ROOT)} uses pygls internals {used}"
