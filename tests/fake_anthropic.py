"""A scripted stand-in for the Anthropic Messages API on a loopback port.

The language server runs in a subprocess, so the in-process ``httpx2.MockTransport`` of the
library tests cannot reach it. Instead the server is started with ``ANTHROPIC_BASE_URL`` pointing
here (the SDK honours it), and each ``POST /v1/messages`` gets the next scripted reply. Every
request body is kept so tests can check what the agent sent. Standard library only: a
``ThreadingHTTPServer`` in a daemon thread, one per test session.

The real Claude Code CLI (tests/fidelity) also asks for ``"stream": true`` (answered as
server-sent events), counts tokens and sends GETs; those are answered too (a count is recorded,
a GET is not), without consuming the script. A ``responder`` answers every request the script
does not (path B's runs script the agent's loop and its memory selector by what each request is).
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

Body = dict[str, Any]
#: A reply: the message JSON, or a function of the request body returning it.
Reply = Body | Callable[[Body], Body]

#: What ``count_tokens`` answers, whatever it is asked.
COUNTED_TOKENS = 100

#: How long a held reply waits for :meth:`FakeAnthropic.release` before answering anyway.
HOLD_SECONDS = 30.0


def message(*content: Body, stop: str | None = None) -> Body:
    uses_tools = any(block["type"] == "tool_use" for block in content)
    return {
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": list(content),
        "stop_reason": stop or ("tool_use" if uses_tools else "end_turn"),
        "stop_sequence": None,
        "usage": {"input_tokens": 100, "output_tokens": 20},
    }


def stream_events(reply: Body) -> list[Body]:
    """A message as the Messages API streams it: the events the SDKs assemble it from."""
    start = {**reply, "content": [], "stop_reason": None, "stop_sequence": None}
    events: list[Body] = [{"type": "message_start", "message": start}]
    for index, block in enumerate(reply.get("content", [])):
        if block["type"] == "text":
            opening: Body = {"type": "text", "text": ""}
            delta: Body = {"type": "text_delta", "text": block["text"]}
        else:  # tool_use: the input arrives as partial JSON
            opening = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        events += [
            {"type": "content_block_start", "index": index, "content_block": opening},
            {"type": "content_block_delta", "index": index, "delta": delta},
            {"type": "content_block_stop", "index": index},
        ]
    events += [
        {
            "type": "message_delta",
            "delta": {"stop_reason": reply.get("stop_reason"), "stop_sequence": None},
            "usage": {"output_tokens": reply.get("usage", {}).get("output_tokens", 0)},
        },
        {"type": "message_stop"},
    ]
    return events


def api_error(status: int, kind: str, message_: str) -> Body:
    """An error reply: answered with HTTP ``status`` and the API's error body."""
    return {"_status": status, "type": "error", "error": {"type": kind, "message": message_}}


def text(value: str) -> Body:
    return {"type": "text", "text": value}


def tool_result_blocks(body: Body) -> list[Body]:
    """The ``tool_result`` blocks of a request's user messages, in order."""
    return [
        block
        for msg in body.get("messages", [])
        if msg.get("role") == "user" and isinstance(msg.get("content"), list)
        for block in msg["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]


def result_text(block: Body) -> str:
    """A ``tool_result`` block's content as text (a string, or text parts joined)."""
    content = block.get("content")
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content or [] if isinstance(part, dict))


def tool_results(body: Body) -> dict[str, str]:
    """A request's tool results by ``tool_use`` id, as text."""
    return {block["tool_use_id"]: result_text(block) for block in tool_result_blocks(body)}


def memory_use(ident: str = "toolu_1", **data: Any) -> Body:
    return {"type": "tool_use", "id": ident, "name": "memory", "input": data}


class FakeAnthropic:
    """``POST /v1/messages`` answers the next scripted reply; an empty script ends the turn.

    Ending the turn (rather than an HTTP error) when the script runs out keeps the SDK from
    retrying with backoff, which would only slow a failing test down.
    """

    _shared: ClassVar[FakeAnthropic | None] = None

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.script: list[Reply] = []
        #: Answers a request when the script is empty (instead of ending the turn).
        self.responder: Reply | None = None
        self.requests: list[Body] = []
        self.headers: list[dict[str, str]] = []
        self.paths: list[str] = []
        #: Set: replies flow; cleared by :meth:`hold`: the next request waits for release().
        self._flowing = threading.Event()
        self._flowing.set()
        self._hold_next = False
        #: Set when the request :meth:`hold` holds has arrived.
        self._held = threading.Event()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self._send(200, {})

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body: Body = json.loads(self.rfile.read(length) or b"{}")
                status, payload = fake.answer(self.path, dict(self.headers.items()), body)
                if status == 200 and body.get("stream") is True:
                    self._stream(payload)
                else:
                    self._send(status, payload)

            def _send(self, status: int, payload: Body) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                # OSError: the client gave up (a cancelled extraction).
                with contextlib.suppress(OSError):
                    self.wfile.write(data)

            def _stream(self, reply: Body) -> None:
                # HTTP/1.0 without a content-length: the stream ends when the connection closes.
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.end_headers()
                with contextlib.suppress(OSError):
                    for event in stream_events(reply):
                        self.wfile.write(
                            f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()
                        )
                    self.wfile.flush()

            def log_message(self, format: str, *args: Any) -> None:
                return  # keep the test output clean

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @classmethod
    def shared(cls) -> FakeAnthropic:
        if cls._shared is None:
            cls._shared = cls()
        return cls._shared

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def reset(self, *script: Reply, responder: Reply | None = None) -> None:
        with self._lock:
            self.script = list(script)
            self.responder = responder
            self.requests.clear()
            self.headers.clear()
            self.paths.clear()
            self._hold_next = False
        self._flowing.set()

    def hold(self) -> None:
        """The next request is recorded at once but answered only after :meth:`release`."""
        with self._lock:
            self._hold_next = True
            self._held.clear()
            self._flowing.clear()

    def wait_held(self, timeout: float) -> bool:
        """Block until the held request has arrived (False on timeout); call it in a thread
        from async code (``asyncio.to_thread``)."""
        return self._held.wait(timeout)

    def release(self) -> None:
        self._flowing.set()

    def answer(self, path: str, headers: dict[str, str], body: Body) -> tuple[int, Body]:
        with self._lock:
            self.requests.append(body)
            self.headers.append({k.lower(): v for k, v in headers.items()})
            self.paths.append(path)
            if path.startswith("/v1/messages/count_tokens"):
                return 200, {"input_tokens": COUNTED_TOKENS}
            if self.script:
                reply = self.script.pop(0)
            elif self.responder is not None:
                reply = self.responder
            else:
                reply = message(text("Nothing to save."))
            held, self._hold_next = self._hold_next, False
        if held:
            self._held.set()
            self._flowing.wait(HOLD_SECONDS)
        if not path.startswith("/v1/messages"):
            return 404, {"type": "error", "error": {"type": "not_found_error", "message": path}}
        payload = dict(reply(body) if callable(reply) else reply)
        return payload.pop("_status", 200), payload
