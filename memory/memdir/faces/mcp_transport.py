"""How ``memdir mcp`` meets its clients, every one of them untrusted.

The SDK's transports, configured and wrapped, not replaced:

- **HTTP** (:func:`http_app`): the SDK checks ``Host`` and ``Origin`` against DNS rebinding only
  when bound to the literal ``127.0.0.1``, ``localhost`` or ``::1``, and accepts any port there;
  here its check (:class:`TransportSecuritySettings`) names exactly the bound host and port, for
  every bind. Its session manager refuses a new session with 503 once 10,000 are open, for as
  long as they stay idle (30 minutes): here the cap is small and a newcomer evicts the least
  recently used session instead (:class:`SessionLRU`), so a flood cannot lock others out.
- **stdio** (:func:`serve_stdio`): the SDK drops a line it cannot read (a lone surrogate escape
  such as ``"\\ud800"``, which its strict JSON parser rejects; a message that is not JSON-RPC)
  and the client waits for an answer for ever. Here such a request is answered with an error
  naming the problem.
- **Both** (:func:`valid_unicode_out`, a server middleware): a reply never carries a lone
  surrogate (a file name that is not UTF-8 decodes to one); stdio could not encode it and died,
  and over HTTP strict clients rejected the reply.

Only ``memdir mcp`` imports this module (through :mod:`memdir.faces.mcp_server`).
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import logging
from collections import OrderedDict
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

import anyio
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from mcp.types import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    RequestId,
)
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.routing import Route

from memdir.textio import lone_surrogate, without_surrogates

if TYPE_CHECKING:
    from anyio.streams.memory import MemoryObjectSendStream
    from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
    from mcp.server.lowlevel.server import Server
    from mcp.server.streamable_http import StreamableHTTPServerTransport
    from mcp.shared._stream_protocols import ReadStream, WriteStream
    from starlette.types import Receive, Scope, Send

logger = logging.getLogger(__name__)

#: HTTP sessions open at once; a newcomer past it evicts the least recently used idle one. Each
#: agent window holds one; the SDK's own limit (10,000) is a flood's, not a person's.
MAX_HTTP_SESSIONS: Final = 64
#: An HTTP session without a request or an open stream for this long is closed (the SDK's
#: default, named here for the docs); its client gets 404 and opens a new one.
HTTP_SESSION_IDLE_SECONDS: Final = 30 * 60
#: Where the streamable HTTP transport is served.
HTTP_PATH: Final = "/mcp"


# --- HTTP: Host and Origin ----------------------------------------------------------------------


def allowed_hosts(host: str, port: int, bound: str | None = None) -> list[str]:
    """The ``Host`` values a request to ``host:port`` may carry: the name given and the address
    bound (``bound``, e.g. 127.0.0.1 for localhost), each IPv6 address bracketed and also in its
    short form (``[::1]`` for ``[0:0:0:0:0:0:0:1]``), and ``localhost`` for a loopback address:
    a name no DNS answer can rebind. Never another port, never a wildcard."""
    names = [host, *([bound] if bound else [])]
    loopback = host == "localhost"
    for name in list(names):
        try:
            address = ipaddress.ip_address(name)
        except ValueError:
            continue
        names.append(address.compressed)
        loopback = loopback or address.is_loopback
    if loopback:
        names.append("localhost")
    hosts = []
    for name in dict.fromkeys(names):
        shown = f"[{name}]" if ":" in name else name
        hosts.append(f"{shown}:{port}")
        if port == 80:  # a client leaves the default port out
            hosts.append(shown)
    return hosts


def transport_security(host: str, port: int, bound: str | None = None) -> TransportSecuritySettings:
    """The SDK's DNS-rebinding check for this bind: a request whose ``Host`` is not one of
    :func:`allowed_hosts` gets 421, one whose ``Origin`` is not ``http://`` one of them 403; a
    request without ``Origin`` (not from a browser) passes."""
    hosts = allowed_hosts(host, port, bound)
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=hosts,
        allowed_origins=[f"http://{h}" for h in hosts],
    )


# --- HTTP: sessions -----------------------------------------------------------------------------


class SessionLRU(StreamableHTTPSessionManager):
    """The SDK's session manager, where a newcomer at the cap evicts a session rather than
    getting 503.

    Every client of a loopback server comes from 127.0.0.1, and without authentication nothing
    tells two clients apart: a "client" is a session. So the cap is on sessions, and at the cap a
    request opening a new session closes the least recently used one that is not answering a
    request (a GET stream, which a client may hold open all along, does not count as one); its
    client gets 404 on its next request and opens a new session, as MCP says it must. Only when
    every session is answering a request does a newcomer get the SDK's 503.

    Host and Origin are checked before anything else, so a page in a browser can neither open
    a session nor evict one.

    The SDK has no public hook for this: it overrides the manager's ``_handle_stateful_request``,
    ``_serve_opening_request`` and ``_discard_session`` and counts its ``_server_instances``
    (mcp is pinned below 3; tests/security/test_sec_mcp_http_sessions.py fails if they change).
    """

    def __init__(
        self,
        app: Server[Any],
        *,
        security: TransportSecuritySettings,
        max_sessions: int = MAX_HTTP_SESSIONS,
        idle_timeout: float = HTTP_SESSION_IDLE_SECONDS,
    ) -> None:
        super().__init__(
            app,
            security_settings=security,
            max_sessions=max_sessions,
            session_idle_timeout=idle_timeout,
        )
        self._check = TransportSecurityMiddleware(security)
        #: Open sessions, least recently used first, each with its requests being answered.
        self._recent: OrderedDict[str, int] = OrderedDict()
        #: Sessions evicted so far (logged; tests count them).
        self.evicted = 0

    async def _handle_stateful_request(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        refused = await self._check.validate_request(request, is_post=request.method == "POST")
        if refused is not None:
            await refused(scope, receive, send)
            return
        session_id = request.headers.get(MCP_SESSION_ID_HEADER)
        if session_id is None:
            if request.method == "POST":  # only a POST can open a session
                async with self._session_creation_lock:
                    await self._make_room()
            await super()._handle_stateful_request(scope, receive, send)
            return
        if session_id not in self._recent:  # unknown (the SDK says 404)
            await super()._handle_stateful_request(scope, receive, send)
            return
        self._recent.move_to_end(session_id)
        if request.method == "GET":
            await super()._handle_stateful_request(scope, receive, send)
            return
        self._recent[session_id] += 1
        try:
            await super()._handle_stateful_request(scope, receive, send)
        finally:
            if session_id in self._recent:
                self._recent[session_id] -= 1

    async def _make_room(self) -> None:
        """At the cap, close the least recently used session not answering a request."""
        while self.max_sessions is not None and len(self._server_instances) >= self.max_sessions:
            victim = next((sid for sid, busy in self._recent.items() if not busy), None)
            if victim is None:
                return  # every session is answering a request: the SDK answers 503
            transport = self._server_instances.get(victim)
            if transport is None:
                self._recent.pop(victim)
                continue
            self.evicted += 1
            logger.info("%d sessions open: closing the least recently used", self.max_sessions)
            # Forgets the session before its first await: the count drops at once.
            await self._discard_session(victim, transport)

    @property
    def open_sessions(self) -> int:
        return len(self._server_instances)

    async def _serve_opening_request(
        self,
        http_transport: StreamableHTTPServerTransport,
        scope: Scope,
        receive: Receive,
        send: Send,
    ) -> None:
        session_id = http_transport.mcp_session_id
        assert session_id is not None  # a stateful session's transport has its id
        self._recent[session_id] = 1  # its opening request is being answered
        try:
            await super()._serve_opening_request(http_transport, scope, receive, send)
        finally:
            if session_id in self._recent:
                self._recent[session_id] -= 1

    async def _discard_session(
        self, session_id: str, transport: StreamableHTTPServerTransport
    ) -> None:
        self._recent.pop(session_id, None)
        await super()._discard_session(session_id, transport)


def http_app(
    server: Server[Any],
    host: str,
    port: int,
    *,
    bound: str | None = None,
    max_sessions: int = MAX_HTTP_SESSIONS,
    idle_timeout: float = HTTP_SESSION_IDLE_SECONDS,
) -> Starlette:
    """The streamable HTTP app at :data:`HTTP_PATH` for a server bound to ``host:port`` (``bound``:
    the address the socket took, if the host is a name), as the SDK's
    ``streamable_http_app`` builds it, with the checks above."""
    manager = SessionLRU(
        server,
        security=transport_security(host, port, bound),
        max_sessions=max_sessions,
        idle_timeout=idle_timeout,
    )

    def lifespan(_app: Starlette) -> contextlib.AbstractAsyncContextManager[None]:
        return manager.run()

    app = Starlette(
        routes=[Route(HTTP_PATH, endpoint=StreamableHTTPASGIApp(manager))], lifespan=lifespan
    )
    app.state.sessions = manager
    return app


# --- stdio: every request answered --------------------------------------------------------------


async def serve_stdio(server: Server[Any]) -> None:
    """Serve over the process's stdin and stdout with the SDK's transport, answering the lines
    it cannot read (see :func:`answer_unreadable`) instead of dropping them."""
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read_stream, write_stream):
        sink, source = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(_answering, read_stream, sink, write_stream)
            await server.run(source, write_stream, server.create_initialization_options())
            tasks.cancel_scope.cancel()


async def _answering(
    read_stream: ReadStream[SessionMessage | Exception],
    sink: MemoryObjectSendStream[SessionMessage | Exception],
    write_stream: WriteStream[SessionMessage],
) -> None:
    async with sink:
        async for item in read_stream:
            if isinstance(item, Exception):
                answer = answer_unreadable(item)
                if answer is not None:
                    await write_stream.send(SessionMessage(answer))
                continue
            await sink.send(item)


def answer_unreadable(exc: Exception) -> JSONRPCError | None:
    """The error answering a line the SDK's stdio reader could not read (it hands us its
    pydantic error, which holds the line or the parsed message), or None when nobody waits for
    an answer: a notification, a response, or something that is neither."""
    if not isinstance(exc, ValidationError):
        return None
    errors = exc.errors()
    line = next((e["input"] for e in errors if e["type"] == "json_invalid"), None)
    if isinstance(line, str):
        try:
            message = json.loads(line, parse_constant=_not_json)
        except (ValueError, RecursionError):
            said = errors[0]["msg"].removeprefix("Invalid JSON: ")
            return _error(None, PARSE_ERROR, f"Parse error: {said}")
        problem = _surrogate_problem(message)
        if problem is None:
            problem = (INVALID_REQUEST, f"Invalid request: {errors[0]['msg']}")
    else:
        # Valid JSON, not a JSON-RPC message: the whole message is the input of the errors at
        # the top (not a list of messages) or of a missing field.
        message = next(
            (
                e["input"]
                for e in errors
                if len(e["loc"]) <= 1 or (e["type"] == "missing" and len(e["loc"]) == 2)
            ),
            None,
        )
        said = "; ".join(
            f"`{'.'.join(str(p) for p in e['loc'][1:])}`: {e['msg']}"
            for e in errors
            if e["loc"][:1] == ("JSONRPCRequest",) and len(e["loc"]) > 1
        )
        problem = (INVALID_REQUEST, f"Invalid request: {said or 'not a JSON-RPC 2.0 request'}")
    if isinstance(message, Mapping):
        if "method" not in message:
            if "id" in message and ("result" in message or "error" in message):
                return None  # a response to us (memdir sends no requests): nobody waits
        elif "id" not in message:
            return None  # a notification
        return _error(_request_id(message.get("id")), *problem)
    return _error(None, *problem)


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON")


def _request_id(value: Any) -> RequestId | None:
    """The request's id if it is one JSON-RPC allows (and can be sent back), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int) or (isinstance(value, str) and lone_surrogate(value) is None):
        return value
    return None


def _surrogate_problem(message: Any) -> tuple[int, str] | None:
    """Where the message holds a lone surrogate: JSON allows ``"\\ud800"``, Unicode text does
    not, and nothing is silently changed on its way to a memory file."""
    found = _find_surrogate(message, ())
    if found is None:
        return None
    where, char = found
    path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in where).lstrip(".")
    code = INVALID_PARAMS if where[:1] == ("params",) else INVALID_REQUEST
    return code, (
        f"Invalid {'params' if code == INVALID_PARAMS else 'request'}: `{path or 'the message'}` "
        f"holds a lone surrogate (\\u{ord(char):04x}), which is not Unicode text; send the "
        "character itself or a whole surrogate pair"
    )


def _find_surrogate(
    value: Any, where: tuple[str | int, ...]
) -> tuple[tuple[str | int, ...], str] | None:
    if isinstance(value, str):
        char = lone_surrogate(value)
        return None if char is None else (where, char)
    items: Any = ()
    if isinstance(value, dict):
        for key in value:
            char = lone_surrogate(key)
            if char is not None:
                return (*where, without_surrogates(key)), char
        items = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    for key, item in items:
        found = _find_surrogate(item, (*where, key))
        if found is not None:
            return found
    return None


def _error(request_id: RequestId | None, code: int, message: str) -> JSONRPCError:
    return JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(code=code, message=message))


# --- every transport: replies are valid Unicode -------------------------------------------------


async def valid_unicode_out(
    ctx: ServerRequestContext[Any, Any], call_next: CallNext
) -> HandlerResult:
    """A server middleware: each lone surrogate of a result or an error message as U+FFFD.

    A file whose name is not UTF-8 is listed with its name as Python decodes it, holding lone
    surrogates; the stdio transport could not encode such a reply and died, and over HTTP a
    strict client rejected it. Replies without one are passed on untouched.
    """
    try:
        result = await call_next(ctx)
    except MCPError as exc:
        if not _has_surrogate(exc.error.message) and not _has_surrogate(exc.error.data):
            raise
        raise MCPError(
            exc.error.code, without_surrogates(exc.error.message), _scrubbed(exc.error.data)
        ) from None
    except (ValidationError, anyio.get_cancelled_exc_class()):
        raise
    except Exception as exc:  # the SDK would send str(exc) as the message
        if not _has_surrogate(str(exc)):
            raise
        raise MCPError(INTERNAL_ERROR, without_surrogates(str(exc))) from exc
    if isinstance(result, dict) and _has_surrogate(result):
        return _scrubbed(result)  # type: ignore[no-any-return]
    return result


def _has_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        return lone_surrogate(value) is not None
    if isinstance(value, dict):
        return any(_has_surrogate(k) or _has_surrogate(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return any(_has_surrogate(v) for v in value)
    return False


def _scrubbed(value: Any) -> Any:
    if isinstance(value, str):
        return without_surrogates(value)
    if isinstance(value, dict):
        return {without_surrogates(k): _scrubbed(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_scrubbed(v) for v in value]
    return value
