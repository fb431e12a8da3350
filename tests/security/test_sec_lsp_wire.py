"""memdir-lsp's framing over real stdio bytes: headers that contradict each other, repeat, pile
up or run long, and a length no body will fill, must neither swallow the next message nor make
the server wait or allocate for them (issue 26). What plain pygls gets wrong of these is shown
by tests/lsp/unit/test_pygls_reader.py.

Each refused message is answered with InvalidRequest when its ``id`` can be read, and the
request sent after it is answered as usual.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from lsp.e2e.lsp_helpers import Wire, serving_wire
from memdir_lsp import protocol as P
from memdir_lsp.wire import MAX_BODY, MAX_HEADER_LINE, MAX_HEADERS

#: Only against a hang: a swallowed message never gets its answer.
ANSWER_TIMEOUT = 20

#: Each test starts the real server: out of the quick loop, in every full run.
pytestmark = pytest.mark.processes


@pytest.fixture
async def wire(tmp_path: Path) -> AsyncIterator[Wire]:
    async with serving_wire(tmp_path, ANSWER_TIMEOUT) as wire:
        yield wire


def request_body(msg_id: str) -> bytes:
    return json.dumps(
        {"jsonrpc": "2.0", "id": msg_id, "method": P.MEMORY_INDEX, "params": {}}
    ).encode()


async def next_request_answered(wire: Wire) -> list[dict[str, Any]]:
    """The request after the bad one is answered; returns everything read before that answer."""
    before = len(wire.notifications)
    answer = await wire.request(P.MEMORY_INDEX, params={})
    assert "result" in answer, answer
    return wire.notifications[before:]


def refusal(messages: list[dict[str, Any]], msg_id: str) -> dict[str, Any]:
    (found,) = [m for m in messages if m.get("id") == msg_id]
    assert found["error"]["code"] == -32600, found
    assert "result" not in found
    return found


async def test_conflicting_content_lengths_do_not_swallow_the_next_message(wire: Wire) -> None:
    body = request_body("conflict")
    # The second length runs past this body into the next message: pygls-style readers that
    # take the last one read the next request as this body's tail.
    wire.raw(b"Content-Length: %d\r\nContent-Length: %d\r\n\r\n" % (len(body), len(body) + 40))
    wire.raw(body)
    seen = await next_request_answered(wire)
    assert "conflicting Content-Length" in refusal(seen, "conflict")["error"]["message"]


async def test_a_repeated_header_is_read_once(wire: Wire) -> None:
    # Equal values leave no doubt where the body ends: the message is answered as usual.
    body = request_body("twice")
    wire.raw(b"Content-Length: %d\r\nContent-Length: %d\r\n\r\n" % (len(body), len(body)) + body)
    assert "result" in await wire.answer("twice")

    body = request_body("type twice")
    ctype = b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n"
    wire.raw(b"Content-Length: %d\r\n" % len(body) + ctype + ctype + b"\r\n" + body)
    assert "result" in await wire.answer("type twice")
    await next_request_answered(wire)


async def test_a_length_over_the_limit_is_refused_at_once(wire: Wire) -> None:
    # Just under the old 1 GiB bound: read(n) allocated it whole, then waited for it forever.
    huge = min(MAX_BODY * 16, (1 << 30) - 1)
    body = request_body("huge")
    wire.raw(b"Content-Length: %d\r\n\r\n" % huge + body)
    seen = await next_request_answered(wire)
    assert "over the limit" in refusal(seen, "huge")["error"]["message"]


async def test_too_many_or_too_long_header_lines_are_refused(wire: Wire) -> None:
    body = request_body("many")
    pads = b"".join(b"X-Pad-%d: 1\r\n" % i for i in range(MAX_HEADERS + 1))
    wire.raw(b"Content-Length: %d\r\n" % len(body) + pads + b"\r\n" + body)
    seen = await next_request_answered(wire)
    assert f"more than {MAX_HEADERS} header lines" in refusal(seen, "many")["error"]["message"]

    body = request_body("long")
    pad = b"X-Pad: " + b"a" * (4 * MAX_HEADER_LINE) + b"\r\n"
    wire.raw(b"Content-Length: %d\r\n" % len(body) + pad + b"\r\n" + body)
    seen = await next_request_answered(wire)
    assert "header line is over" in refusal(seen, "long")["error"]["message"]


async def test_a_refused_notification_is_skipped_and_serving_goes_on(wire: Wire) -> None:
    body = json.dumps({"jsonrpc": "2.0", "method": P.MEMORY_COMPACTED, "params": {}}).encode()
    wire.raw(b"Content-Length: %d\r\nContent-Length: 3\r\n\r\n" % len(body) + body)
    seen = await next_request_answered(wire)
    assert [m for m in seen if "id" in m] == []  # nothing to answer: logged only
