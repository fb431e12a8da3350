"""Reading the byte stream: every message answered or logged, no malformed one stops the rest.

What pygls' own reader (``pygls.io_.run_async``) still gets wrong, each shown against plain
pygls by ``tests/lsp/unit/test_pygls_reader.py``: a header it cannot parse makes it read the
next message's body as headers, so every later message is lost; a body that is not JSON is
never answered (pygls pops up a message instead of JSON-RPC's ParseError); ``Content-Length``
headers that contradict each other, or a length no body fills, swallow the next message. This
reader skips a malformed header to the next valid ``Content-Length`` line, answers what
JSON-RPC 2.0 asks (ParseError or InvalidRequest, ``id`` null when it cannot be read) and hands
the rest to the protocol.

``Content-Length`` headers that contradict each other leave no way to tell where the body
ends, so the bytes are skipped to the next header (the message answered when its ``id`` can be
read from them). Everything is bounded (the guarantees of docs/security.md): a header line,
the header lines of a message, the body a header may declare; a body is read as it arrives,
never allocated by its declared length.

Nothing here touches pygls' internals: answering goes through the ``answer`` the adapter
(:mod:`memdir_lsp.adapter`) passes in.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from pygls.exceptions import JsonRpcException, JsonRpcInvalidRequest, JsonRpcParseError
from pygls.protocol import JsonRPCProtocol

logger = logging.getLogger(__name__)

#: A ``Content-Length`` header at the end of a line: after garbage, the next message starts here.
CONTENT_LENGTH = re.compile(rb"Content-Length:[ \t]*(\d{1,12})[ \t]*\r?\n\Z", re.IGNORECASE)
#: Any header line (``Content-Type`` ...), its name in group 1.
HEADER = re.compile(rb"([A-Za-z0-9-]+):[^\r\n]*\r?\n\Z")
#: The largest body a header may declare: VS Code syncs no file over 50 MB to extensions, and
#: a larger length is taken for a corrupt header (refused at once: nothing allocated, nothing
#: awaited).
MAX_BODY = 64 * 1024 * 1024
#: Header lines of one message (LSP defines two) and bytes of one header line.
MAX_HEADERS = 32
MAX_HEADER_LINE = 8 * 1024
#: Bytes read at a time: memory grows with what arrives, not with what a header declares.
CHUNK = 64 * 1024
#: Of a line too long to keep, its end is kept: a header glued to it is still found there.
TAIL = 256
#: Skipped bytes kept to read the ``id`` of the message they were (to answer it).
RECOVER_LIMIT = 64 * 1024


class LineReader:
    """Lines and exact byte counts from a stream that reads up to ``n`` bytes at a time."""

    def __init__(self, read: Callable[[int], Awaitable[bytes]]) -> None:
        self._read = read
        self._buffer = bytearray()

    def _take(self, n: int) -> bytes:
        taken = bytes(self._buffer[:n])
        del self._buffer[:n]
        return taken

    async def _fill(self) -> bool:
        chunk = await self._read(CHUNK)
        self._buffer += chunk
        return bool(chunk)

    async def readline(self, limit: int) -> tuple[bytes, bool]:
        """The next line, through its LF (or the end of the stream): whole when it has at most
        ``limit`` bytes, else its last :data:`TAIL` bytes and True. ``b""`` at the end."""
        cut = False
        tail = b""
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0:
                line = self._take(end + 1)
                if not cut and len(line) <= limit:
                    return line, False
                return (tail + line)[-TAIL:], True
            if cut or len(self._buffer) > limit:
                cut = True
                tail = (tail + self._take(len(self._buffer)))[-TAIL:]
            if not await self._fill():
                rest = self._take(len(self._buffer))
                return ((tail + rest)[-TAIL:], True) if cut else (rest, False)

    async def readexactly(self, n: int) -> bytes:
        """``n`` bytes, fewer only at the end of the stream."""
        parts = [self._take(n)]
        missing = n - len(parts[0])
        while missing > 0:
            chunk = await self._read(min(missing, CHUNK))
            if not chunk:
                break
            parts.append(chunk)
            missing -= len(chunk)
        return b"".join(parts)


@dataclass(frozen=True)
class Refused:
    """A message not handed to the protocol: why, and its bytes as far as they were kept."""

    reason: str
    data: bytes


class Framer:
    """Messages off a :class:`LineReader`: bodies, :class:`Refused` ones, None at the end."""

    def __init__(self, lines: LineReader) -> None:
        self._lines = lines
        #: A ``Content-Length`` a skip ended on: the header of the next message.
        self._carry: int | None = None

    async def next(self) -> bytes | Refused | None:
        length, self._carry = self._carry, None
        #: Why the message is refused though its body can be read; why it cannot be.
        refused: str | None = None
        lost: str | None = None
        count = 0
        while True:
            line, cut = await self._lines.readline(MAX_HEADER_LINE)
            if not line:
                return None
            if not cut and not line.strip():
                break
            found = CONTENT_LENGTH.search(line)
            if found is not None and (found.start() > 0 or cut):
                logger.warning("garbage before a header skipped: %r", line[:80])
                length, refused, lost, count = None, None, None, 0
            count += 1
            if count > MAX_HEADERS:
                refused = refused or f"more than {MAX_HEADERS} header lines"
            if found is not None:
                value = int(found.group(1))
                if value > MAX_BODY:
                    lost = lost or f"Content-Length {value} is over the limit of {MAX_BODY} bytes"
                elif length is None:
                    length = value
                elif value != length:
                    lost = lost or f"conflicting Content-Length headers ({length} and {value})"
                continue
            if cut:
                refused = refused or f"a header line is over {MAX_HEADER_LINE} bytes"
                continue
            header = HEADER.match(line)
            if header is None or header.group(1).lower() == b"content-length":
                logger.warning("malformed header %r: skipped to the next message", line[:80])
                return await self._skip("a malformed header")
        if lost is not None or length is None:
            if length is None and lost is None:
                logger.warning("message without a Content-Length header skipped")
            return await self._skip(lost or "no Content-Length header")
        body = await self._lines.readexactly(length)
        if len(body) < length:
            return None
        return Refused(refused, body) if refused is not None else body

    async def _skip(self, reason: str) -> Refused:
        """Skip to the next line that ends in a valid ``Content-Length`` header; the bytes
        skipped are kept (up to :data:`RECOVER_LIMIT`) to answer the message they were."""
        kept = bytearray()
        whole = True
        while True:
            line, cut = await self._lines.readline(CHUNK)
            if not line:
                return Refused(reason, bytes(kept) if whole else b"")
            found = CONTENT_LENGTH.search(line)
            resume = found is not None and int(found.group(1)) <= MAX_BODY
            if found is not None and resume:
                line = line[: found.start()]
            whole = whole and not cut and len(kept) + len(line) <= RECOVER_LIMIT
            if whole:
                kept += line
            if found is not None and resume:
                self._carry = int(found.group(1))
                return Refused(reason, bytes(kept) if whole else b"")


def envelope_error(data: Any) -> str | None:
    """Why ``data`` is not a JSON-RPC 2.0 request, notification or response; None if it is."""
    if not isinstance(data, dict):
        return "a message must be a JSON object (batches are not supported)"
    if data.get("jsonrpc") != "2.0":
        return '`jsonrpc` must be "2.0"'
    if "id" in data and (
        isinstance(data["id"], bool) or not isinstance(data["id"], str | int | None)
    ):
        return "`id` must be a string, an integer or null"
    if "method" in data:
        if not isinstance(data["method"], str):
            return "`method` must be a string"
        if not isinstance(data.get("params"), dict | list | None):
            return "`params` must be an object or an array"
        return None
    if "id" not in data or ("result" not in data and "error" not in data):
        return "a message needs a `method`, or an `id` and a `result` or an `error`"
    return None


#: Sends a JSON-RPC error answer for a message ``id`` (None when it cannot be read).
Answer = Callable[[Any, JsonRpcException], None]


def dispatch(protocol: JsonRPCProtocol, body: bytes, answer: Answer) -> None:
    """Read one message body and hand it to the protocol, or answer why it cannot be read."""
    try:
        data = json.loads(body.decode("utf-8"))
    except UnicodeDecodeError as exc:
        answer(None, JsonRpcParseError(f"the message is not UTF-8 ({exc.reason})"))
        return
    except (ValueError, RecursionError) as exc:
        reason = "it nests too deeply" if isinstance(exc, RecursionError) else str(exc)
        answer(None, JsonRpcParseError(f"the message is not JSON: {reason}"))
        return
    problem = envelope_error(data)
    if problem is not None:
        msg_id = data.get("id") if isinstance(data, dict) and "method" in data else None
        if isinstance(msg_id, bool) or not isinstance(msg_id, str | int | None):
            msg_id = None
        if isinstance(data, dict) and "method" in data and "id" not in data:
            logger.warning("notification ignored: %s", problem)  # nobody to answer
            return
        answer(msg_id, JsonRpcInvalidRequest(f"invalid request: {problem}"))
        return
    try:
        protocol.handle_message(protocol.structure_message(data))
    except Exception:
        # Our bug, not the client's; pygls' own handlers answer requests' failures.
        logger.exception("could not handle a message")


def refuse(refused: Refused, answer: Answer) -> None:
    """Answer a refused request when its ``id`` can be read from what was kept; log it else."""
    msg_id = recovered_id(refused.data)
    if msg_id is None:
        logger.warning("message skipped: %s", refused.reason)
        return
    answer(msg_id, JsonRpcInvalidRequest(f"invalid request: {refused.reason}"))


def recovered_id(data: bytes) -> str | int | None:
    """The ``id`` of the request ``data`` holds, when it is one; else None."""
    try:
        message = json.loads(data.decode("utf-8")) if data.strip() else None
    except (ValueError, RecursionError):
        return None
    if not isinstance(message, dict) or "method" not in message:
        return None
    msg_id = message.get("id")
    return msg_id if isinstance(msg_id, str | int) and not isinstance(msg_id, bool) else None


async def run(
    stop_event: threading.Event, lines: LineReader, protocol: JsonRPCProtocol, answer: Answer
) -> None:
    """The main loop: read a message, dispatch it, until the stream ends or the server stops."""
    framer = Framer(lines)
    while not stop_event.is_set():
        message = await framer.next()
        if message is None:
            break
        if isinstance(message, Refused):
            refuse(message, answer)
        else:
            dispatch(protocol, message, answer)


def stdin_reader(stdin: Any, executor: Any) -> LineReader:
    """Lines off ``stdin`` (a ``BufferedReader``), each blocking read in ``executor`` (a thread,
    off the event loop); ``read1`` returns what has arrived, up to ``n`` bytes."""

    async def read(n: int) -> bytes:
        return await asyncio.get_running_loop().run_in_executor(executor, stdin.read1, n)

    return LineReader(read)
