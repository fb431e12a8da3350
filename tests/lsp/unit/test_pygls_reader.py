"""Why memdir-lsp reads the byte stream itself (memdir_lsp.wire): each case here is one plain
pygls (its reader ``pygls.io_.run_async`` and its protocol) still gets wrong, and the same bytes
through memdir's reader and protocol. The day pygls gets one right, its test fails and that part
of the wire can go.

Both run in process over the same bytes, to the end of the stream; what each sent is compared
(no timing).
"""

from __future__ import annotations

import asyncio
import functools
import io
import json
import threading
from collections.abc import Callable
from typing import Any

import pytest
from lsprotocol import types
from memdir_lsp import adapter, wire
from memdir_lsp.server import MemoryServer
from pygls.io_ import run_async
from pygls.lsp.server import LanguageServer


class Sent:
    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []

    def write(self, data: bytes) -> None:
        self.messages.append(json.loads(data.split(b"\r\n\r\n", 1)[1]))

    def close(self) -> None:
        pass

    def answer(self, msg_id: object) -> dict[str, Any] | None:
        """The answer to ``msg_id`` (None: the request was never answered)."""
        return next((m for m in self.messages if "id" in m and m["id"] == msg_id), None)


class BytesReader:
    """pygls' async reader protocol over bytes."""

    def __init__(self, data: bytes) -> None:
        self.stream = io.BytesIO(data)

    async def readline(self) -> bytes:
        return self.stream.readline()

    async def readexactly(self, n: int) -> bytes:
        return self.stream.read(n)


def with_echo(server: LanguageServer) -> LanguageServer:
    @server.feature("test/echo")
    def echo(ls: LanguageServer, params: Any) -> dict[str, bool]:
        return {"ok": True}

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: LanguageServer, params: types.HoverParams) -> None:
        return None

    return server


def plain_pygls(data: bytes) -> Sent:
    server = with_echo(LanguageServer("plain", "0"))
    sent = Sent()
    server.protocol.set_writer(sent)
    asyncio.run(run_async(threading.Event(), BytesReader(data), server.protocol))
    return sent


def memdir(data: bytes) -> Sent:
    server = with_echo(MemoryServer())
    sent = Sent()
    server.protocol.set_writer(sent)
    stream = io.BytesIO(data)

    async def read(n: int) -> bytes:
        return stream.read(n)

    answer = functools.partial(adapter.send_error, server.protocol)
    asyncio.run(wire.run(threading.Event(), wire.LineReader(read), server.protocol, answer))
    return sent


def frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def request(msg_id: str, method: str = "test/echo", params: Any = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params or {}}


BAD = json.dumps(request("bad")).encode()
NEXT = frame(request("next"))


def answered(sent: Sent) -> bool:
    return sent.answer("next") is not None


def bad_answered(sent: Sent) -> bool:
    found = sent.answer("bad")
    return found is not None and "error" in found


def parse_error_answered(sent: Sent) -> bool:
    found = sent.answer(None)
    return found is not None and found["error"]["code"] == -32700


CASES: dict[str, tuple[bytes, Callable[[Sent], bool]]] = {
    # The next message's header is read as part of a line: every later message is lost.
    "a malformed header": (b"Content-Length: x\r\n\r\n" + BAD + NEXT, answered),
    # Contradicting lengths: pygls takes the first, which runs into the next message.
    "conflicting lengths": (
        b"Content-Length: %d\r\nContent-Length: %d\r\n\r\n" % (len(BAD) + 40, len(BAD))
        + BAD
        + NEXT,
        answered,
    ),
    # A length over the limit: pygls allocates it (read(n)) and takes the next message as the
    # rest of this body; memdir refuses it at once.
    "a length over the limit": (
        b"Content-Length: %d\r\n\r\n" % (wire.MAX_BODY + 1) + BAD + NEXT,
        answered,
    ),
    # JSON-RPC's ParseError (id null): pygls pops a message up instead.
    "a body that is not JSON": (b"Content-Length: 5\r\n\r\n{oops" + NEXT, parse_error_answered),
    # InvalidParams for the request: pygls answers nothing, and pops a message up.
    "params that do not fit the method": (
        frame(request("bad", "textDocument/hover", {"textDocument": 3})) + NEXT,
        bad_answered,
    ),
    # JSON-RPC lets a request leave params out (Neovim does): pygls cannot read it.
    "a request without params": (
        frame({"jsonrpc": "2.0", "id": "next", "method": "test/echo"}),
        answered,
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_plain_pygls_still_gets_it_wrong_and_memdir_does_not(case: str) -> None:
    data, right = CASES[case]
    assert not right(plain_pygls(data))
    assert right(memdir(data))
