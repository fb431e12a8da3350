"""A scripted stand-in for the Anthropic Messages API on a loopback port.

The language server runs in a subprocess, so the in-process ``httpx2.MockTransport`` of the
library tests cannot reach it. Instead the server is started with ``ANTHROPIC_BASE_URL`` pointing
here (the SDK honours it), and each ``POST /v1/messages`` gets the next scripted reply. Every
request body is kept so tests can check what the agent sent. Standard library only: a
``ThreadingHTTPServer`` in a daemon thread, one per test session.
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


def text(value: str) -> Body:
    return {"type": "text", "text": value}


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
        self.requests: list[Body] = []
        self.headers: list[dict[str, str]] = []
        self.paths: list[str] = []
        #: Set: replies flow; cleared by :meth:`hold`: the next request waits for release().
        self._flowing = threading.Event()
        self._flowing.set()
        self._hold_next = False
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body: Body = json.loads(self.rfile.read(length) or b"{}")
                status, payload = fake.answer(self.path, dict(self.headers.items()), body)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                # OSError: the client gave up (a cancelled extraction).
                with contextlib.suppress(OSError):
                    self.wfile.write(data)

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

    def reset(self, *script: Reply) -> None:
        with self._lock:
            self.script = list(script)
            self.requests.clear()
            self.headers.clear()
            self.paths.clear()
            self._hold_next = False
        self._flowing.set()

    def hold(self) -> None:
        """The next request is recorded at once but answered only after :meth:`release`."""
        with self._lock:
            self._hold_next = True
            self._flowing.clear()

    def release(self) -> None:
        self._flowing.set()

    def answer(self, path: str, headers: dict[str, str], body: Body) -> tuple[int, Body]:
        with self._lock:
            self.requests.append(body)
            self.headers.append({k.lower(): v for k, v in headers.items()})
            self.paths.append(path)
            reply = self.script.pop(0) if self.script else message(text("Nothing to save."))
            held, self._hold_next = self._hold_next, False
        if held:
            self._flowing.wait(HOLD_SECONDS)
        if not path.startswith("/v1/messages"):
            return 404, {"type": "error", "error": {"type": "not_found_error", "message": path}}
        return 200, reply(body) if callable(reply) else reply
