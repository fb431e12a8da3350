"""pygls at arm's length: everything memdir-lsp takes from pygls beyond its public API.

pygls 2 offers no public hook for what the server must do differently, so it is done here, by
overriding or reading pygls internals, and nowhere else in the server:

* answering what pygls would drop or answer badly (:class:`MemoryProtocol`): a request whose
  params do not fit its method gets InvalidParams naming the problem (pygls answers nothing
  and pops up a message); a request may leave ``params`` out (Neovim does); a lone surrogate is
  refused; an unexpected exception becomes one sentence, never a traceback with install paths
  (:func:`memdir_lsp.errors.public_error`); the custom methods are listed in the initialize
  result;
* open documents with LSP's line ends (:class:`MemoryDocument`): pygls splits lines at every
  ``str.splitlines`` separator (U+2028, a form feed), so every later edit lands a line off, and
  mishandles an edit reaching past the end of the last line;
* the byte stream read by :mod:`memdir_lsp.wire` instead of pygls' reader (:func:`start_io`,
  :func:`start_tcp`), which answers through :func:`send_error`.

:data:`RELIED_ON` names each internal used; ``tests/lsp/unit/test_pygls_canary.py`` fails the
day a pygls release changes one, and pyproject.toml pins pygls to the minor release tested.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import sys
import threading
from collections.abc import Generator, Sequence
from typing import Any, Final

from cattrs import transform_error
from cattrs.errors import ClassValidationError
from lsprotocol import types
from pygls.exceptions import (
    FeatureRequestError,
    JsonRpcException,
    JsonRpcInternalError,
    JsonRpcInvalidParams,
)
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCProtocol,
    JsonRPCRequestMessage,
    LanguageServerProtocol,
    lsp_method,
)
from pygls.workspace import TextDocument, Workspace

from memdir_lsp import wire
from memdir_lsp.errors import field_where, has_lone_surrogate, public_error
from memdir_lsp.positions import split_lines, unit_counter
from memdir_lsp.protocol import EXPERIMENTAL_KEY

logger = logging.getLogger(__name__)

#: The pygls internals this module relies on: (class, name, the parameters of a method or
#: None for an attribute of an instance). The canary test checks each against pygls.
RELIED_ON: Final[tuple[tuple[type, str, tuple[str, ...] | None], ...]] = (
    (JsonRPCProtocol, "_send_response", ("self", "msg_id", "result", "error")),
    (JsonRPCProtocol, "_send_handler_result", ("self", "future", "msg_id")),
    (JsonRPCProtocol, "_send_data", ("self", "data")),
    (JsonRPCProtocol, "_converter", None),
    (JsonRPCProtocol, "_server", None),
    (JsonRPCProtocol, "_request_futures", None),
    (LanguageServerProtocol, "_workspace", None),
    (LanguageServer, "_report_server_error", ("self", "error", "source")),
    (LanguageServer, "_stop_event", None),
    (LanguageServer, "_server", None),
    (Workspace, "_create_text_document", ("self", "doc_uri", "source", "version", "language_id")),
    (Workspace, "_sync_kind", None),
    (TextDocument, "_apply_incremental_change", ("self", "change")),
    (TextDocument, "_source", None),
)

#: Prefixes of the custom methods advertised under ``experimental``.
CUSTOM_PREFIXES = ("memory/", "memdir/")

#: What :meth:`MemoryProtocol.structure_message` returns for a message it could not read.
UNREADABLE: Final = object()


class MemoryProtocol(LanguageServerProtocol):
    """pygls' protocol, answering what it would drop, and listing the custom methods.

    pygls computes the capabilities from the registered features but has no slot for custom
    methods; a client that wants to use a request added in a later version (e.g. the VS Code
    extension's "New memory" through ``memory/tool``) needs to know whether this server has it.
    """

    def __init__(self, server: Any, converter: Any) -> None:
        super().__init__(server, converter)
        #: Method and raw params of each request being handled, for its error answer.
        self.requests: dict[Any, tuple[str, Any]] = {}

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(
        self, params: types.InitializeParams
    ) -> Generator[Any, Any, types.InitializeResult]:
        result: types.InitializeResult = yield from super().lsp_initialize(params)
        # Before any document is open: ours keep LSP's line ends.
        self._workspace = MemoryWorkspace.like(self.workspace)
        methods = sorted(m for m in self.fm.features if m.startswith(CUSTOM_PREFIXES))
        experimental = result.capabilities.experimental
        extra = dict(experimental) if isinstance(experimental, dict) else {}
        extra[EXPERIMENTAL_KEY] = {"methods": methods}
        result.capabilities.experimental = extra
        return result

    def refuse(self, msg_id: Any, error: JsonRpcException) -> None:
        """Answer the request ``msg_id`` with ``error``, and report it as pygls reports one."""
        self._send_response(msg_id, error=error.to_response_error())
        self._server._report_server_error(error, FeatureRequestError)

    def structure_message(self, data: dict[str, Any]) -> Any:
        """pygls' reading of a message, except that a malformed request is answered.

        JSON-RPC lets a request or notification leave ``params`` out (Neovim does for
        ``nil``); pygls' message classes require the field, so it is read as null. Params that
        do not fit the method's type get an InvalidParams answer naming the problem, where
        pygls would pop up a message and leave the request unanswered.
        """
        if "jsonrpc" not in data or "method" not in data:
            return super().structure_message(data)
        if "params" not in data:
            data = {**data, "params": None}
        method = str(data["method"])
        fallback = JsonRPCRequestMessage if "id" in data else JsonRPCNotification
        surrogate = field_where(data["params"], has_lone_surrogate)
        if surrogate is not None and "id" in data:
            self.refuse(
                data["id"],
                JsonRpcInvalidParams(f"`{surrogate}` holds a lone surrogate (not Unicode)"),
            )
            return UNREADABLE
        if surrogate is not None:
            # A notification cannot be refused; U+FFFD keeps every offset (one code point, one
            # UTF-16 unit) so the editor's document stays in step.
            logger.warning("%s: lone surrogate in `%s` replaced by U+FFFD", method, surrogate)
            data = {**data, "params": replace_surrogates(data["params"])}
        if "id" in data:
            self.requests[data["id"]] = (method, data["params"])
        try:
            return self._converter.structure(data, self.get_message_type(method) or fallback)
        except Exception as exc:
            detail = str(exc)
            if isinstance(exc, ClassValidationError):
                detail = "; ".join(transform_error(exc))
            error = JsonRpcInvalidParams(f"invalid params for {method}: {detail}")
            if "id" in data:
                self.refuse(data["id"], error)
            else:
                logger.warning("notification ignored: %s", error)
            return UNREADABLE

    def handle_message(self, message: Any) -> None:
        if message is not UNREADABLE:  # already answered by structure_message
            super().handle_message(message)

    def _send_handler_result(self, future: Any, *, msg_id: Any) -> None:
        # An unexpected exception becomes one sentence for the client (errors.public_error);
        # pygls would send its text and traceback, install paths included.
        if not future.cancelled():
            exc = future.exception()
            if exc is not None and not isinstance(exc, JsonRpcException):
                self._request_futures.pop(msg_id, None)
                method, params = self.requests.get(msg_id, ("a request", None))
                self.refuse(msg_id, public_error(exc, method, params))
                return
        super()._send_handler_result(future, msg_id=msg_id)

    def _send_response(
        self, msg_id: Any, result: Any | None = None, error: types.ResponseError | None = None
    ) -> None:
        self.requests.pop(msg_id, None)
        if error is not None and error.code == JsonRpcInternalError.CODE:
            # Whatever path produced it, an internal error carries no traceback.
            error = types.ResponseError(code=error.code, message=error.message.split("\n")[0])
        super()._send_response(msg_id, result, error)


def replace_surrogates(value: Any) -> Any:
    """``value`` with every lone surrogate in its strings replaced by U+FFFD."""
    if isinstance(value, str):
        return "".join("\ufffd" if "\ud800" <= ch <= "\udfff" else ch for ch in value)
    if isinstance(value, list):
        return [replace_surrogates(item) for item in value]
    if isinstance(value, dict):
        return {key: replace_surrogates(item) for key, item in value.items()}
    return value


def send_error(protocol: JsonRPCProtocol, msg_id: Any, error: JsonRpcException) -> None:
    """An error answer to ``msg_id``, which may be None (JSON-RPC requires the ``id`` then too;
    pygls' converter would drop it, so the message is sent as a plain dict)."""
    logger.warning("%s", error)
    protocol._send_data(
        {"jsonrpc": "2.0", "id": msg_id, "error": {"code": error.code, "message": error.message}}
    )


# --- documents -------------------------------------------------------------------------------


class MemoryDocument(TextDocument):
    """pygls' ``TextDocument`` with LSP's line ends, whose changes land where the editor's do."""

    @property
    def lines(self) -> Sequence[str]:
        return tuple(split_lines(self.source))

    def _apply_incremental_change(self, change: types.TextDocumentContentChangePartial) -> None:
        """The change by offsets in the text: a column past a line's end is its end, a line
        past the last is the end of the text (as editors place them)."""
        text = self.source
        # LSP's lines with their ends: split at LF alone (at C speed) unless the text has a CR.
        lines = split_lines(text) if "\r" in text else [f"{line}\n" for line in text.split("\n")]
        count = unit_counter(self.position_codec)
        offsets = []
        for position in (change.range.start, change.range.end):
            if position.line >= len(lines):
                offsets.append(len(text))
                continue
            line = lines[position.line]
            content = line.rstrip("\r\n") if line.endswith(("\n", "\r")) else line
            before = sum(len(line) for line in lines[: position.line])
            offsets.append(before + _column(content, position.character, count))
        start, end = sorted(offsets)
        self._source = text[:start] + change.text + text[end:]


def _column(content: str, character: int, count: Any) -> int:
    """A client column on a line's ``content`` in code points, clamped to its end."""
    if count(content) == len(content):  # one unit a character: no loop
        return min(character, len(content))
    counted = 0
    for index, char in enumerate(content):
        if counted >= character:
            return index
        counted += count(char)
    return len(content)


class MemoryWorkspace(Workspace):
    """pygls' workspace with :class:`MemoryDocument` documents."""

    @classmethod
    def like(cls, other: Workspace) -> MemoryWorkspace:
        """A workspace for the same root, folders and position encoding as ``other`` (made
        while ``initialize`` is answered, before any document can be open)."""
        return cls(
            other.root_uri, other._sync_kind, list(other.folders.values()), other.position_encoding
        )

    def _create_text_document(
        self,
        doc_uri: str,
        source: str | None = None,
        version: int | None = None,
        language_id: str | None = None,
    ) -> TextDocument:
        return MemoryDocument(
            doc_uri,
            source=source,
            version=version,
            language_id=language_id,
            sync_kind=self._sync_kind,
            position_codec=self.position_codec,
        )


# --- transports ------------------------------------------------------------------------------


def start_io(server: Any) -> None:
    """``server.start_io()`` with memdir's reader (mirrors ``pygls.server._start_io_async``)."""
    server._stop_event = threading.Event()
    lines = wire.stdin_reader(sys.stdin.buffer, server.thread_pool)
    server.protocol.set_writer(StdoutWriter(sys.stdout.buffer))
    answer = functools.partial(send_error, server.protocol)
    try:
        asyncio.run(wire.run(server._stop_event, lines, server.protocol, answer))
    except BrokenPipeError:
        logger.error("Connection to the client is lost! Shutting down the server.")
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()


def start_tcp(server: Any, host: str, port: int) -> None:
    """``server.start_tcp()`` with memdir's reader (mirrors ``pygls.server.start_tcp``)."""
    server._stop_event = stop_event = threading.Event()
    answer = functools.partial(send_error, server.protocol)

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        server.protocol.set_writer(writer)
        await wire.run(stop_event, wire.LineReader(reader.read), server.protocol, answer)
        server.shutdown()

    async def serve() -> None:
        server._server = listening = await asyncio.start_server(connection, host, port)
        # The line a person (or a test) waits for: connections are accepted from here on, and
        # with ``--port 0`` it is the only way to learn the port.
        bound = listening.sockets[0].getsockname()
        print(f"memdir-lsp: listening on {bound[0]}:{bound[1]}", file=sys.stderr, flush=True)
        async with listening:
            await listening.serve_forever()

    try:
        asyncio.run(serve())
    except asyncio.CancelledError:
        pass
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()
