"""The ``openai-compatible`` selector: the agent's selection request, answered by a local model.

Ollama, llama.cpp's ``llama-server``, LM Studio and vLLM all serve the OpenAI Chat Completions
API (``POST {base_url}/chat/completions``) and constrain the answer to a ``response_format`` JSON
schema, so one request shape reaches all of them. The request is the spec form of the agent's
(:func:`memdir.recall.select.build_request` under the ``seed`` target: its system prompt, its user
message, the manifest's names as an enum) and is sent exactly once, with the standard library:
the core install stays free of HTTP clients. Any failure falls back to the lexical selector with
the reason recorded, as the anthropic selector's failures do.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, TypeVar

from memdir import __version__
from memdir.config import (
    DEFAULT_OPENAI_BASE_URL,
    DEFAULT_OPENAI_TIMEOUT,
    base_url_error,
    is_loopback_url,
)
from memdir.model import MemoryHeader
from memdir.recall.select import (
    LexicalSelector,
    Selection,
    SelectionError,
    Selector,
    build_request,
    fall_back,
    one_line,
    parse_answer,
)
from memdir.secrets import redact
from memdir.target import SEED

log = logging.getLogger(__name__)

NAME: Final = "openai-compatible"
#: The only place the key is read from. A fixed name, not a setting: a settings file (which a
#: cloned repository's pyproject.toml can supply) must not choose which secret is sent.
API_KEY_ENV: Final = "MEMDIR_OPENAI_API_KEY"
#: ``response_format.json_schema.name``: OpenAI requires one; the others accept it.
SCHEMA_NAME: Final = "selected_memories"
NO_MODEL: Final = (
    "no model configured for the openai-compatible selector "
    "(set openai_model in memdir.toml or [tool.memdir], or pass --model)"
)
#: A selection reply is a few hundred bytes; more is not a chat completion worth reading.
_MAX_REPLY_BYTES: Final = 1 << 20

_T = TypeVar("_T")


def chat_body(
    query: str, headers: Sequence[MemoryHeader], recent_tools: Sequence[str], model: str
) -> dict[str, Any]:
    """The JSON body for ``/chat/completions``: the agent's request in the Chat Completions form."""
    request = build_request(query, headers, recent_tools, model, target=SEED)
    return {
        "model": request.model,
        "messages": [{"role": "system", "content": request.system}, *request.messages],
        "max_tokens": request.max_tokens,
        "stream": False,
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": SCHEMA_NAME, "schema": request.schema, "strict": True},
        },
    }


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """A redirect is an error (``HTTPError``): urllib would follow it as a GET that still carries
    the ``Authorization`` header, to wherever the server points."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def _post(url: str, body: bytes, headers: Mapping[str, str], timeout: float) -> bytes:
    """POST on the calling thread; raises urllib's errors, TimeoutError or OSError."""
    request = urllib.request.Request(url, data=body, headers=dict(headers), method="POST")
    handlers: list[urllib.request.BaseHandler] = [_NoRedirects()]
    if is_loopback_url(url):
        # A server on this machine is never reached through an HTTP proxy from the environment.
        handlers.append(urllib.request.ProxyHandler({}))
    opener = urllib.request.build_opener(*handlers)
    with opener.open(request, timeout=timeout) as response:
        data: bytes = response.read(_MAX_REPLY_BYTES)
        return data


async def _on_daemon_thread(call: Callable[[], _T]) -> _T:
    """``call()`` on its own daemon thread: a caller that stops waiting (the timeout) is not held
    by it, and neither is the interpreter's exit, as a pool thread stuck in a read would be."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[_T] = loop.create_future()

    def settle(value: _T | None, error: BaseException | None) -> None:
        if future.done():  # cancelled: nobody is waiting for this answer any more
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(value)  # type: ignore[arg-type]

    def run() -> None:
        value: _T | None = None
        error: BaseException | None = None
        try:
            value = call()
        except BaseException as exc:  # handed to the waiting coroutine, which decides
            error = exc
        # A closed loop raises RuntimeError: its caller gave up long ago.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(settle, value, error)

    threading.Thread(target=run, name="memdir-openai-selector", daemon=True).start()
    return await future


def _error_detail(body: bytes) -> str:
    """The ``error.message`` of an OpenAI-style error body, else the body.

    Not cut here: the reason it goes into is redacted first and cut after, so a key the body
    echoes is never left half shown by a cut through it.
    """
    text = body.decode("utf-8", "replace")
    try:
        data = json.loads(text)
    except ValueError:
        return text
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    if isinstance(error, str):
        return error
    return text


def read_reply(raw: bytes) -> tuple[str | None, str | None]:
    """``(content, stop_reason)`` of a chat completion, in the anthropic selector's terms."""
    try:
        data = json.loads(raw)
    except ValueError:
        raise SelectionError("the server's reply is not JSON") from None
    try:
        choice = data["choices"][0]
        message = choice["message"]
    except (KeyError, IndexError, TypeError):
        raise SelectionError("the server's reply has no choices[0].message") from None
    if not isinstance(message, dict):
        raise SelectionError("the server's reply has no choices[0].message")
    refusal = message.get("refusal")
    if isinstance(refusal, str) and refusal.strip():
        raise SelectionError(f"the model refused to answer: {one_line(refusal, 120)}")
    content = message.get("content")
    finish = choice.get("finish_reason") if isinstance(choice, dict) else None
    # ``length`` is Chat Completions' ``max_tokens``: a cut answer selects nothing.
    stop_reason = "max_tokens" if finish == "length" else finish
    return (content if isinstance(content, str) else None), stop_reason


class OpenAICompatibleSelector:
    """The agent's selection request to an OpenAI-compatible server; falls back to lexical.

    ``model`` is the server's name for the model (``llama3.2``, ``qwen2.5:7b``, ...): there is no
    sensible default, so without one every selection degrades, saying so. The key, when the
    server wants one, comes from ``MEMDIR_OPENAI_API_KEY`` and is sent as a bearer token.
    """

    def __init__(
        self,
        *,
        model: str | None,
        base_url: str = DEFAULT_OPENAI_BASE_URL,
        timeout: float = DEFAULT_OPENAI_TIMEOUT,
        env: Mapping[str, str] | None = None,
        fallback: Selector | None = None,
    ) -> None:
        if timeout <= 0:
            raise ValueError("timeout must be positive")
        self.model = model.strip() if model and model.strip() else None
        self.base_url = base_url.strip().rstrip("/")
        self.timeout = timeout
        self.fallback: Selector = fallback or LexicalSelector()
        self._env = env

    @property
    def name(self) -> str:
        return NAME

    @property
    def url(self) -> str:
        return f"{self.base_url}/chat/completions"

    def _api_key(self) -> str | None:
        env = os.environ if self._env is None else self._env
        key = env.get(API_KEY_ENV, "").strip()
        return key or None

    def __repr__(self) -> str:
        # Hand-written so that the key never reaches a repr.
        has_key = self._api_key() is not None
        return (
            f"OpenAICompatibleSelector(model={self.model!r}, base_url={self.base_url!r}, "
            f"timeout={self.timeout:g}, api_key={'set' if has_key else 'unset'})"
        )

    def redact(self, text: str) -> str:
        return redact(text, [self._api_key()])

    def request_headers(self) -> dict[str, str]:
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": f"memdir/{__version__}",
        }
        key = self._api_key()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def describe_failure(self, exc: BaseException) -> str:
        """A one-line reason for a failed request, key redacted."""
        reason: str
        if isinstance(exc, SelectionError):
            reason = str(exc)
        elif isinstance(exc, TimeoutError):
            reason = f"no answer from {self.base_url} within the {self.timeout:g} s timeout"
        elif isinstance(exc, urllib.error.HTTPError):
            try:
                detail = _error_detail(exc.read(4096))
            except OSError:
                detail = ""
            reason = f"HTTP {exc.code} from {self.url}" + (f": {detail}" if detail else "")
        elif isinstance(exc, urllib.error.URLError):
            cause = exc.reason
            if isinstance(cause, TimeoutError):
                reason = f"no answer from {self.base_url} within the {self.timeout:g} s timeout"
            elif isinstance(cause, ConnectionRefusedError):
                reason = (
                    f"cannot reach {self.base_url} (connection refused): is the server running?"
                )
            else:
                reason = f"cannot reach {self.base_url} ({cause})"
        elif isinstance(exc, ConnectionError):
            reason = f"the connection to {self.base_url} failed ({type(exc).__name__}: {exc})"
        else:
            reason = f"{type(exc).__name__}: {exc}"
        return one_line(self.redact(reason))

    async def _ask(
        self, query: str, headers: Sequence[MemoryHeader], recent_tools: Sequence[str]
    ) -> tuple[tuple[str, ...], tuple[str, ...]]:
        if self.model is None:
            raise SelectionError(NO_MODEL)
        if problem := base_url_error(self.base_url):
            raise SelectionError(f"the base URL {problem}")
        body = json.dumps(chat_body(query, headers, recent_tools, self.model)).encode()
        sent = self.request_headers()
        raw = await _on_daemon_thread(lambda: _post(self.url, body, sent, self.timeout))
        content, stop_reason = read_reply(raw)
        # The seed target's reading: names outside the manifest dropped, repeats and a 6th cut.
        return parse_answer(content, stop_reason, [h.rel_path for h in headers], target=SEED)

    async def select(
        self, query: str, headers: Sequence[MemoryHeader], recent_tools: Sequence[str] = ()
    ) -> Selection:
        start = time.perf_counter()
        if not headers:
            return Selection((), {}, NAME, NAME, model=self.model)
        try:
            # One deadline for the whole call; the socket has the same one, so the abandoned
            # thread of a timed-out request ends soon after too.
            async with asyncio.timeout(self.timeout):
                selected, notes = await self._ask(query, headers, recent_tools)
        except Exception as exc:  # any failure degrades, by contract; cancellation propagates
            reason = self.describe_failure(exc)
            log.info(
                "openai-compatible selector unavailable, using %s: %s", self.fallback.name, reason
            )
            timings = {"openai_compatible_ms": _ms(start)}
            return await fall_back(
                self.fallback, NAME, query, headers, recent_tools, reason, timings, self.model
            )
        why = {
            path: f"chosen by {self.model} (rank {rank} of {len(selected)})"
            for rank, path in enumerate(selected, 1)
        }
        return Selection(
            selected=selected,
            why=why,
            selector=NAME,
            requested=NAME,
            timings={"openai_compatible_ms": _ms(start)},
            notes=notes,
            model=self.model,
        )


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 3)
