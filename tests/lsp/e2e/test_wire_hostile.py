"""``memdir-lsp`` on a hostile wire: every request is answered, nothing stops the next one.

Bytes a broken or malicious client may send (a header that is no header, a body that is not
UTF-8 or not JSON, a message that is JSON but not JSON-RPC, custom requests without params,
params that make the file system or the regex parser fail) must each get the answer JSON-RPC
prescribes, and the server must keep serving. Error answers carry one sentence: no traceback,
no path of the install.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from lsp_helpers import Wire, serving_wire
from memdir_lsp import protocol as P

#: Generous: a silent server is a failure, not a slow one.
ANSWER_TIMEOUT = 30


async def alive(wire: Wire) -> None:
    """The server still answers."""
    answer = await wire.request(P.MEMORY_INDEX, params={})
    assert "result" in answer, answer


@pytest.fixture
async def wire(tmp_path: Path) -> AsyncIterator[Wire]:
    async with serving_wire(tmp_path, ANSWER_TIMEOUT) as wire:
        yield wire


def assert_clean(answer: dict[str, Any]) -> None:
    """An error answer of one sentence: no traceback, no path of the install."""
    text = json.dumps(answer)
    assert "Traceback" not in text and "traceback" not in text, answer
    assert "site-packages" not in text and sys.prefix not in text, answer
    assert str(Path(P.__file__).parent) not in text, answer
    if "error" in answer:
        assert "data" not in answer["error"] or not answer["error"]["data"], answer
        assert "\n" not in answer["error"]["message"], answer


async def test_malformed_headers_are_skipped_and_the_server_keeps_serving(wire: Wire) -> None:
    body = b'{"jsonrpc":"2.0","id":"lost","method":"memory/index","params":{}}'
    wire.raw(b"Content-Length: abc\r\n\r\n" + body)  # not a number
    wire.raw(b"this is not a header\r\n\r\n" + body)  # no colon
    wire.raw(b"Content-Type: application/json\r\n\r\n" + body)  # no length at all
    await alive(wire)
    # A valid header glued to the garbage before it (no newline after a body) still counts.
    wire.raw(b"Content-Length: 5\r\n\r\nhello")
    wire.next_id += 1
    good = json.dumps(
        {"jsonrpc": "2.0", "id": wire.next_id, "method": P.MEMORY_INDEX, "params": {}}
    ).encode()
    wire.raw(b"garbage Content-Length: %d\r\n\r\n" % len(good) + good)
    parse_error = await wire.answer(None)  # "hello" is not JSON
    assert parse_error["error"]["code"] == -32700
    assert "result" in await wire.answer(wire.next_id)
    await alive(wire)


async def test_unreadable_bodies_are_answered_as_json_rpc_says(wire: Wire) -> None:
    wire.frame(b'{"jsonrpc":"2.0","id":7,"method":"memory/read","params":{"path":"\xff\xfe"}}')
    answer = await wire.answer(None)
    assert answer["error"]["code"] == -32700 and "UTF-8" in answer["error"]["message"]
    assert_clean(answer)

    wire.frame(b'{"jsonrpc": "2.0", "id": 8, "method": ')
    answer = await wire.answer(None)
    assert answer["error"]["code"] == -32700 and "JSON" in answer["error"]["message"]

    wire.frame(b"[" * 100_000 + b"]" * 100_000)  # valid JSON, too deep for any parser
    assert (await wire.answer(None))["error"]["code"] == -32700

    for message, msg_id in (
        (b"[]", None),  # a batch: LSP has none
        (b"42", None),
        (b'{"jsonrpc":"1.0","id":9,"method":"memory/index"}', 9),
        (b'{"jsonrpc":"2.0","id":10,"method":42}', 10),
        (b'{"jsonrpc":"2.0","id":11,"method":"memory/index","params":"x"}', 11),
        (b'{"jsonrpc":"2.0","id":{"no":1},"method":"memory/index"}', None),
    ):
        wire.frame(message)
        answer = await wire.answer(msg_id)
        assert answer["error"]["code"] == -32600, (message, answer)
        assert_clean(answer)
    await alive(wire)


async def test_every_custom_request_without_params_is_answered(wire: Wire) -> None:
    init = await wire.request("memdir/status")
    assert "result" in init
    methods = [
        getattr(P, name)
        for name in dir(P)
        if name.startswith(("MEMORY_", "MEMDIR_")) and isinstance(getattr(P, name), str)
    ]
    requests = [
        m
        for m in methods
        if m not in (P.MEMORY_DID_READ, P.MEMORY_COMPACTED, P.MEMDIR_DID_GRANT_WORKSPACE_TRUST)
        and m not in (P.MEMORY_RELEVANT_MEMORIES, P.MEMORY_EXTRACT_RESULT)
    ]
    assert P.MEMORY_SEARCH in requests
    for method in requests:
        answer = await wire.request(method)  # no `params` member at all
        assert "result" in answer or answer["error"]["code"] != -32603, (method, answer)
        assert_clean(answer)
    for method in (P.MEMORY_DID_READ, P.MEMORY_COMPACTED, P.MEMDIR_DID_GRANT_WORKSPACE_TRUST):
        wire.send({"method": method})
    await alive(wire)


async def test_params_that_break_the_file_system_or_the_parser_get_one_sentence(
    wire: Wire,
) -> None:
    long_name = "a" * 300 + ".md"
    answer = await wire.request(P.MEMORY_READ, params={"path": long_name})
    assert answer["error"]["code"] == -32602, answer
    assert answer["error"]["message"] == "`path`: file name too long"

    answer = await wire.request(P.MEMORY_READ, params={"path": "\ud800.md"})
    assert answer["error"]["code"] == -32602, answer
    assert "`path`" in answer["error"]["message"]

    for pattern in ("a{99999999999}", "(" * 5000 + ")" * 5000, "\udfff"):
        answer = await wire.request(P.MEMORY_SEARCH, params={"pattern": pattern})
        assert answer["error"]["code"] == -32602, answer
        assert "`pattern`" in answer["error"]["message"]
        assert_clean(answer)

    answer = await wire.request(P.MEMORY_READ, params={"path": "x\0.md"})
    assert "result" in answer or answer["error"]["code"] != -32603, answer
    assert_clean(answer)

    # A notification cannot be refused: its lone surrogate becomes U+FFFD and it is applied.
    uri = (Path(P.__file__).parent / "nothing.md").as_uri()
    wire.send(
        {
            "method": "textDocument/didOpen",
            "params": {
                "textDocument": {
                    "uri": uri,
                    "languageId": "markdown",
                    "version": 1,
                    "text": "\ud800",
                }
            },
        }
    )
    await alive(wire)
