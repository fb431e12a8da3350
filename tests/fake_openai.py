"""A stand-in for an OpenAI-compatible model server (Ollama, llama-server, ...) on 127.0.0.1.

Every request is recorded whatever its method or path, so tests can check that exactly one was
made and what it carried. ``POST /v1/chat/completions`` is answered by ``reply`` (a function of
the request body); with ``hold`` set the handler first waits for :meth:`FakeOpenAI.release`,
which a test calls after the client has given up: a slow server without sleeping anywhere.
Standard library only: a ``ThreadingHTTPServer`` in a daemon thread.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

Body = dict[str, Any]
#: ``(status, JSON value or raw bytes)`` or ``(status, payload, extra headers)`` for a body.
Reply = Callable[[Body], tuple[int, Any] | tuple[int, Any, dict[str, str]]]

#: How long a held reply waits for :meth:`FakeOpenAI.release` before answering anyway.
HOLD_SECONDS = 30.0
CHAT_PATH = "/v1/chat/completions"


def completion(content: str | None, finish_reason: str = "stop", model: str = "m") -> Body:
    """A Chat Completions reply carrying ``content``, shaped as the real servers send it."""
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": finish_reason,
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def answer(*names: str) -> Reply:
    """A reply selecting ``names`` (as the structured output's JSON text)."""
    text = json.dumps({"selected_memories": list(names)})
    return lambda body: (200, completion(text, model=body.get("model", "m")))


@dataclass(frozen=True)
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: Body | None


class FakeOpenAI:
    def __init__(self, reply: Reply, *, hold: bool = False) -> None:
        self.reply = reply
        self.requests: list[Recorded] = []
        self.arrived = threading.Event()
        self._hold = hold
        self._released = threading.Event()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _record(self) -> Body | None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = {"unparsable": raw.decode("utf-8", "replace")}
                headers = {k.lower(): v for k, v in self.headers.items()}
                fake.requests.append(Recorded(self.command, self.path, headers, body))
                fake.arrived.set()
                return body

            def _send(self, status: int, payload: Any, extra: dict[str, str] | None = None) -> None:
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(status)
                for name, value in (extra or {}).items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self._record()
                self._send(404, {"error": {"message": "not here"}})

            def do_POST(self) -> None:
                body = self._record()
                if fake._hold:
                    fake._released.wait(HOLD_SECONDS)
                if self.path != CHAT_PATH or not isinstance(body, dict):
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                status, payload, *extra = fake.reply(body)
                # The client may have given up (a timeout test): nobody reads this then.
                with contextlib.suppress(OSError):
                    self._send(status, payload, *extra)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        # A short poll: shutdown() waits for it, once per test.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def release(self) -> None:
        self._released.set()

    def __enter__(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
