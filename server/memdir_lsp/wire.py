"""Reading the byte stream: every message answered or logged, no malformed one stops the rest.

pygls' reader (``pygls.io_.run_async``) ignores a header it cannot parse and then reads the next
message's body as headers, so one bad header loses every later message; a body that is not
UTF-8 or not JSON is logged with a traceback and never answered. This reader skips a malformed
header to the next valid ``Content-Length`` line, answers what JSON-RPC 2.0 asks (ParseError or
InvalidRequest, ``id`` null when it cannot be read) and hands the rest to the protocol.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import sys
import threading
from typing import Any, Protocol

from pygls.exceptions import JsonRpcException, JsonRpcInvalidRequest, JsonRpcParseError
from pygls.io_ import StdinAsyncReader, StdoutWriter
from pygls.protocol import JsonRPCProtocol

logger = logging.getLogger(__name__)

#: A ``Content-Length`` header at the end of a line: after garbage, the next message starts here.
CONTENT_LENGTH = re.compile(rb"Content-Length:[ \t]*(\d{1,12})[ \t]*\r?\n\Z", re.IGNORECASE)
#: Larger bodies are taken for a corrupt header: reading them would only exhaust memory.
MAX_BODY = 1 << 30
#: Any other header line (``Content-Type`` ...).
HEADER = re.compile(rb"[A-Za-z0-9-]+:[^\r\n]*\r?\n\Z")


class AsyncReader(Protocol):
    def readline(self) -> Any: ...

    def readexactly(self, n: int) -> Any: ...


async def read_body(reader: AsyncReader) -> bytes | None:
    """The next message's body; None at the end of the stream.

    A line that is no header (or a header block without a length) is logged and skipped up
    to the next line ending in a valid ``Content-Length`` header.
    """
    length: int | None = None
    skipping = False
    while True:
        line: bytes = await reader.readline()
        if not line:
            return None
        found = CONTENT_LENGTH.search(line)
        if found is not None and int(found.group(1)) <= MAX_BODY:
            if found.start() > 0:
                logger.warning("garbage before a header skipped: %r", line[:80])
            length, skipping = int(found.group(1)), False
            continue
        if skipping:
            continue
        if not line.strip():
            if length is not None:
                body: bytes = await reader.readexactly(length) if length else b""
                if length and not body:
                    return None
                return body
            logger.warning("message without a Content-Length header skipped")
        elif HEADER.match(line):
            continue
        else:
            logger.warning("malformed header %r: skipped to the next message", line[:80])
        length, skipping = None, True


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


def answer_error(protocol: JsonRPCProtocol, msg_id: Any, error: JsonRpcException) -> None:
    logger.warning("%s", error)
    # A plain dict: pygls' converter would drop an `id` of None, which JSON-RPC requires.
    protocol._send_data(
        {
            "jsonrpc": "2.0",
            "id": msg_id,
            "error": {"code": error.code, "message": error.message},
        }
    )


def dispatch(protocol: JsonRPCProtocol, body: bytes) -> None:
    """Read one message body and hand it to the protocol, or answer why it cannot be read."""
    try:
        data = json.loads(body.decode("utf-8"))
    except UnicodeDecodeError as exc:
        answer_error(protocol, None, JsonRpcParseError(f"the message is not UTF-8 ({exc.reason})"))
        return
    except (ValueError, RecursionError) as exc:
        reason = "it nests too deeply" if isinstance(exc, RecursionError) else str(exc)
        answer_error(protocol, None, JsonRpcParseError(f"the message is not JSON: {reason}"))
        return
    problem = envelope_error(data)
    if problem is not None:
        msg_id = data.get("id") if isinstance(data, dict) and "method" in data else None
        if isinstance(msg_id, bool) or not isinstance(msg_id, str | int | None):
            msg_id = None
        if isinstance(data, dict) and "method" in data and "id" not in data:
            logger.warning("notification ignored: %s", problem)  # nobody to answer
            return
        answer_error(protocol, msg_id, JsonRpcInvalidRequest(f"invalid request: {problem}"))
        return
    try:
        protocol.handle_message(protocol.structure_message(data))
    except Exception:
        # Our bug, not the client's; pygls' own handlers answer requests' failures.
        logger.exception("could not handle a message")


async def run(stop_event: threading.Event, reader: AsyncReader, protocol: JsonRPCProtocol) -> None:
    """The main loop: read a message, dispatch it, until the stream ends or the server stops."""
    while not stop_event.is_set():
        body = await read_body(reader)
        if body is None:
            break
        dispatch(protocol, body)


def start_io(server: Any) -> None:
    """``server.start_io()`` with this reader (mirrors ``pygls.server._start_io_async``)."""
    server._stop_event = threading.Event()
    reader = StdinAsyncReader(sys.stdin.buffer, server.thread_pool)
    server.protocol.set_writer(StdoutWriter(sys.stdout.buffer))
    try:
        asyncio.run(run(server._stop_event, reader, server.protocol))
    except BrokenPipeError:
        logger.error("Connection to the client is lost! Shutting down the server.")
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()


def start_tcp(server: Any, host: str, port: int) -> None:
    """``server.start_tcp()`` with this reader (mirrors ``pygls.server.start_tcp``)."""
    server._stop_event = stop_event = threading.Event()

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        server.protocol.set_writer(writer)
        await run(stop_event, reader, server.protocol)
        server.shutdown()

    async def serve() -> None:
        server._server = await asyncio.start_server(connection, host, port)
        # The line a person (or a test) waits for: connections are accepted from here on, and
        # with ``--port 0`` it is the only way to learn the port.
        bound = server._server.sockets[0].getsockname()
        print(f"memdir-lsp: listening on {bound[0]}:{bound[1]}", file=sys.stderr, flush=True)
        async with server._server:
            await server._server.serve_forever()

    try:
        asyncio.run(serve())
    except asyncio.CancelledError:
        pass
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()
