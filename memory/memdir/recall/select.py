"""Choosing which memories to surface: one protocol, model selectors and an offline one.

:class:`AnthropicSelector` makes exactly the agent's selection request through the ``anthropic``
SDK (imported only when a request is made); the ``openai-compatible`` selector
(:mod:`memdir.recall.select_openai`) sends the same request to a local model server. On any failure
both fall back to the offline :class:`LexicalSelector` and record why (:func:`fall_back`), so the
caller never sees an exception. Keys never appear in reprs, messages or logs.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Final, Protocol

from memdir import constants as C
from memdir.agent.manifest import format_manifest
from memdir.extras import MissingExtraError, require
from memdir.model import MemoryHeader
from memdir.secrets import redact
from memdir.target import DEFAULT_TARGET, Target

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic
    from anthropic.types import Message

log = logging.getLogger(__name__)

#: Retries inside the selector's time budget: one quick retry rides out a transient 529/connection
#: reset, more would only burn the budget of a call whose answer is needed within seconds.
SELECT_MAX_RETRIES: Final = 1

#: Environment variables the SDK reads credentials from (``ANTHROPIC_PROFILE`` names a profile
#: file holding them). Only their presence is checked here; their values are the SDK's business.
CREDENTIAL_ENV_VARS: Final = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE")
#: How every model caller (the selector, extraction) says that no credentials are configured.
NO_CREDENTIALS: Final = "no API key configured (set ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN)"
_SECRET_ENV_VARS: Final = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")

#: What both of the agent's selector prompts ask of the answer, word for word.
_SELECTOR_CHOICE_RULES: Final = (
    "Return a list of filenames for the memories that will clearly be useful to Claude Code as it "
    "processes the user's query (up to 5). Only include memories that you are certain will be "
    "helpful based on their name and description.\n"
    "- If you are unsure if a memory will be useful in processing the user's query, then do not "
    "include it in your list. Be selective and discerning.\n"
    "- If there are no memories in the list that would clearly be useful, feel free to return an "
    "empty list.\n"
)

#: The spec's agent's selector prompt (Claude Code ``findRelevantMemories.ts``), verbatim: it says
#: everything the spec requires (at most 5, only files certain to help, an empty list is fine, the
#: recently-used-tools rule), and keeping its wording keeps memdir's choices close to the agent's.
SELECT_MEMORIES_SYSTEM_PROMPT: Final = (
    "You are selecting memories that will be useful to Claude Code as it processes a user's "
    "query. You will be given the user's query and a list of available memory files with their "
    "filenames and descriptions.\n"
    "\n"
    + _SELECTOR_CHOICE_RULES
    + "- If a list of recently-used tools is provided, do not select memories that are usage "
    "reference or API documentation for those tools (Claude Code is already exercising them). DO "
    "still select memories containing warnings, gotchas, or known issues about those tools — "
    "active use is exactly when those matter.\n"
)

#: Claude Code 2.1.328's selector prompt, verbatim (the selector is a conversation there: the
#: manifest first, then one message per user query).
SELECT_MEMORIES_CONVERSATION_PROMPT: Final = (
    "You are selecting memories that will be useful to Claude Code as it processes a user's "
    "query. The first message lists the available memory files with their filenames and "
    "descriptions; subsequent messages each contain one user query.\n"
    "\n"
    + _SELECTOR_CHOICE_RULES
    + "- Be especially conservative with user-profile and project-overview memories ([user], "
    "[project]). These describe the user's ongoing focus, not what every question is about. A "
    'profile saying "works on DB performance" is NOT relevant to a question that merely contains '
    'the word "performance" unless the question is actually about that DB work. Match on what '
    "the question IS ABOUT, not on surface keyword overlap with who the user is.\n"
    "- Do not re-select memories you already returned for an earlier query in this "
    "conversation.\n"
    "\n"
    'Reply with only a JSON object of the form {"selected_memories": ["<filename>", ...]}.\n'
)


@dataclass(frozen=True)
class Selection:
    """What a selector chose, and enough about how to explain it."""

    #: Paths relative to the memory dir, ``/``-separated, in the selector's order: at most 5
    #: and no repeats, except an anthropic answer under a target that keeps it as is.
    selected: tuple[str, ...]
    #: Why each selected path was chosen.
    why: Mapping[str, str]
    #: The selector that produced ``selected`` (``lexical`` after a fallback) ...
    selector: str
    #: ... and the one that was asked.
    requested: str
    #: Why the requested selector could not answer, or None.
    degraded: str | None = None
    #: Milliseconds per stage, e.g. ``{"anthropic_ms": 812.4, "lexical_ms": 0.9}``.
    timings: Mapping[str, float] = field(default_factory=dict)
    #: Paths the selector looked at and turned down for a stated reason (not plain irrelevance).
    rejected: Mapping[str, str] = field(default_factory=dict)
    #: Anything else worth showing: names dropped from the answer, a cap applied.
    notes: tuple[str, ...] = ()
    #: The model asked, for the anthropic selector.
    model: str | None = None
    #: The model's answer as it came, when it was read: the next request of a conversation
    #: replays it (:func:`build_request`'s ``history``).
    raw_answer: str | None = None


class Selector(Protocol):
    """Anything that picks memories from manifest headers; never raises for a bad answer."""

    @property
    def name(self) -> str: ...

    async def select(
        self, query: str, headers: Sequence[MemoryHeader], recent_tools: Sequence[str] = ()
    ) -> Selection: ...


class SelectionError(Exception):
    """The model's answer (or its absence) cannot be used; the message is the recorded reason."""


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 3)


def normalize_tools(recent_tools: Sequence[str]) -> tuple[str, ...]:
    """Tool names as the request lists them: trimmed, non-empty, first occurrence kept."""
    return tuple(dict.fromkeys(t.strip() for t in recent_tools if t.strip()))


# --- lexical -----------------------------------------------------------------------------------


class LexicalSelector:
    """The offline selector (:mod:`memdir.recall.lexical`) behind the :class:`Selector` protocol."""

    def __init__(self, limit: int = C.SELECT_MAX_FILES) -> None:
        self.limit = limit

    @property
    def name(self) -> str:
        return "lexical"

    def __repr__(self) -> str:
        return f"LexicalSelector(limit={self.limit})"

    def select_now(
        self, query: str, headers: Sequence[MemoryHeader], recent_tools: Sequence[str] = ()
    ) -> Selection:
        """The selection, computed on the calling thread."""
        # Imported here so that importing this module never pays for the tokenisers.
        from memdir.agent.topic import with_bodies
        from memdir.recall.lexical import select_lexical

        start = time.perf_counter()
        result = select_lexical(
            query, with_bodies(headers), normalize_tools(recent_tools), limit=self.limit
        )
        selected = tuple(dict.fromkeys(m.rel_path for m in result.selected))[: self.limit]
        why = {
            m.rel_path: (
                f"lexical score {m.score:.2f} ≥ threshold {result.threshold:.2f}"
                + (f"; matched {', '.join(m.matched_terms)}" if m.matched_terms else "")
            )
            for m in result.selected
        }
        rejected = {
            m.rel_path: m.dropped_reason
            for m in result.considered
            if m.dropped_reason and m.matched_terms and m.rel_path not in why
        }
        return Selection(
            selected=selected,
            why=why,
            selector="lexical",
            requested="lexical",
            timings={"lexical_ms": _ms(start)},
            rejected=rejected,
        )

    async def select(
        self, query: str, headers: Sequence[MemoryHeader], recent_tools: Sequence[str] = ()
    ) -> Selection:
        # Off the event loop: ranking is fast, but a tokeniser's first use may load a dictionary.
        return await asyncio.to_thread(self.select_now, query, headers, recent_tools)


# --- anthropic ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class SelectRequest:
    """The selector's request, built without the SDK so it can be shown and tested as data."""

    model: str
    max_tokens: int
    #: A string, or text blocks (the 2.1.328 conversation caches its prompt).
    system: str | list[dict[str, Any]]
    messages: list[dict[str, Any]]
    schema: dict[str, Any]

    @property
    def output_config(self) -> dict[str, Any]:
        return {"format": {"type": "json_schema", "schema": self.schema}}

    def to_body(self) -> dict[str, Any]:
        """The JSON body sent to ``/v1/messages`` (the agent also sends ``metadata``)."""
        return {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "system": self.system,
            "messages": self.messages,
            "output_config": self.output_config,
        }


def user_message(query: str, manifest: str, recent_tools: Sequence[str] = ()) -> str:
    """``Query: <query>\\n\\nAvailable memories:\\n<manifest>`` plus the tools line when any."""
    text = f"Query: {query}\n\nAvailable memories:\n{manifest}"
    tools = normalize_tools(recent_tools)
    if tools:
        text += f"\n\nRecently used tools: {', '.join(tools)}"
    return text


def output_schema(paths: Sequence[str], target: Target = DEFAULT_TARGET) -> dict[str, Any]:
    """Structured output: ``{"selected_memories": [path, ...]}``, paths as an enum or not.

    A JSON schema cannot cap an array's length for this API, so the cap of 5 is applied in code.
    """
    items: dict[str, Any] = {"type": "string"}
    if target.selector_enum:
        items["enum"] = list(dict.fromkeys(paths))
    return {
        "type": "object",
        "properties": {"selected_memories": {"type": "array", "items": items}},
        "required": ["selected_memories"],
        "additionalProperties": False,
    }


def _text_message(role: str, text: str, *, cached: bool = False) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": text}
    if cached:
        block["cache_control"] = {"type": "ephemeral"}
    return {"role": role, "content": [block]}


def conversation_messages(
    query: str, manifest: str, history: Sequence[tuple[str, str]] = ()
) -> list[dict[str, Any]]:
    """2.1.328's selector messages: manifest, earlier ``(query, raw answer)`` turns, query."""
    messages = [_text_message("user", C.SELECT_MANIFEST_PREFIX + manifest, cached=True)]
    for earlier, answer in history:
        messages.append(_text_message("user", C.SELECT_QUERY_PREFIX + earlier))
        messages.append(_text_message("assistant", answer))
    messages.append(_text_message("user", C.SELECT_QUERY_PREFIX + query, cached=True))
    return messages


def build_request(
    query: str,
    headers: Sequence[MemoryHeader],
    recent_tools: Sequence[str] = (),
    model: str = C.DEFAULT_SELECTOR_MODEL,
    max_tokens: int | None = None,
    *,
    target: Target = DEFAULT_TARGET,
    history: Sequence[tuple[str, str]] = (),
) -> SelectRequest:
    """The selection request ``target`` sends for ``query`` over ``headers``.

    ``history``: this session's earlier ``(query, raw answer)`` selector turns, which only the
    conversation form sends (it has no recently-used tools either). The agent's first system
    block, a billing header naming its own build, is agent-internal and left out.
    """
    manifest = format_manifest(headers)
    system: str | list[dict[str, Any]]
    if target.selector_conversation:
        system = [
            {
                "type": "text",
                "text": SELECT_MEMORIES_CONVERSATION_PROMPT,
                "cache_control": {"type": "ephemeral"},
            }
        ]
        messages = conversation_messages(query, manifest, history)
    else:
        system = SELECT_MEMORIES_SYSTEM_PROMPT
        messages = [{"role": "user", "content": user_message(query, manifest, recent_tools)}]
    return SelectRequest(
        model=model,
        max_tokens=target.selector_max_tokens if max_tokens is None else max_tokens,
        system=system,
        messages=messages,
        schema=output_schema([h.rel_path for h in headers], target),
    )


_FENCE_OPEN = re.compile(r"^```[^\n]*\n?")
_TYPE_PREFIX = re.compile(C.SELECT_TYPE_PREFIX_PATTERN)


def strip_fence(text: str) -> str:
    """The answer without a surrounding Markdown code fence (the agent strips one too)."""
    text = text.strip()
    if text.startswith("```"):
        text = _FENCE_OPEN.sub("", text, count=1)
        text = text.removesuffix("```")
    return text.strip()


def parse_answer(
    text: str | None,
    stop_reason: str | None,
    known_paths: Sequence[str],
    limit: int = C.SELECT_MAX_FILES,
    target: Target = DEFAULT_TARGET,
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The usable paths of an answer and notes on what was dropped; raises SelectionError.

    As the agent reads it: an answer cut at ``max_tokens`` selects nothing, a code fence around
    the JSON is ignored, a ``[type] `` tag copied from the manifest is taken off a name, and
    names not in the manifest are dropped.
    """
    if stop_reason == "refusal":
        raise SelectionError("the model refused to answer (stop_reason: refusal)")
    if stop_reason == "max_tokens":
        return (), ("the answer was cut at max_tokens: nothing selected (as the agent does)",)
    if text is None:
        raise SelectionError(f"the answer has no text block (stop_reason: {stop_reason})")
    try:
        data = json.loads(strip_fence(text))
    except json.JSONDecodeError as exc:
        raise SelectionError(f"the answer is not JSON: {exc.msg}") from None
    names = data.get("selected_memories") if isinstance(data, dict) else None
    if not isinstance(names, list):
        raise SelectionError(
            'the answer has the wrong shape: expected {"selected_memories": [string, ...]}'
        )
    known = set(known_paths)
    usable: list[str] = []
    unknown: list[str] = []
    for name in names:
        if not isinstance(name, str):
            unknown.append(json.dumps(name)[:80])
            continue
        if name not in known:
            name = _TYPE_PREFIX.sub("", name, count=1)
        (usable if name in known else unknown).append(name)
    notes: list[str] = []
    if unknown:
        shown = ", ".join(repr(n[:80]) for n in unknown[:5])
        notes.append(f"dropped {len(unknown)} name(s) not in the manifest: {shown}")
    if not target.selector_answer_deduped:
        return tuple(usable), tuple(notes)
    unique = list(dict.fromkeys(usable))
    if len(unique) > limit:
        notes.append(f"the model returned {len(unique)} memories; kept the first {limit}")
    return tuple(unique[:limit]), tuple(notes)


def credential_source(env: Mapping[str, str] | None = None) -> str | None:
    """The name of the environment variable that configures credentials, never its value."""
    env = os.environ if env is None else env
    return next((name for name in CREDENTIAL_ENV_VARS if env.get(name, "").strip()), None)


def credential_values(
    client: object = None, env: Mapping[str, str] | None = None, api_key: str | None = None
) -> list[str]:
    """The Anthropic credentials in play (``api_key``, the env vars, a client's own key and
    token): what :func:`memdir.secrets.redact` must hide from any error text."""
    env = os.environ if env is None else env
    values = [api_key, *(env.get(name) for name in _SECRET_ENV_VARS)]
    if client is not None:
        values += [getattr(client, "api_key", None), getattr(client, "auth_token", None)]
    return [v for v in values if isinstance(v, str) and v]


def one_line(text: str, limit: int = 240) -> str:
    """``text`` on one line and at most ``limit`` characters: reasons are shown in one line."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


class AnthropicSelector:
    """The agent's model selector, through ``anthropic.AsyncAnthropic``; falls back to lexical.

    ``client`` (an ``AsyncAnthropic``) is used as given, with this selector's timeout and retries;
    without one a client is made per call from ``api_key`` or the SDK's usual configuration
    (``ANTHROPIC_API_KEY``, ``ANTHROPIC_AUTH_TOKEN``, ``ANTHROPIC_PROFILE``) and closed after it.
    The default model is Sonnet-class like the agent's; ``claude-haiku-4-5``
    (:data:`memdir.constants.CHEAP_SELECTOR_MODEL`) is the cheap choice (``--model`` or the
    ``model`` setting).
    """

    def __init__(
        self,
        *,
        model: str = C.DEFAULT_SELECTOR_MODEL,
        timeout: float = C.SELECT_TIMEOUT_SECONDS,
        max_retries: int = SELECT_MAX_RETRIES,
        api_key: str | None = None,
        client: AsyncAnthropic | None = None,
        fallback: Selector | None = None,
        env: Mapping[str, str] | None = None,
        target: Target = DEFAULT_TARGET,
    ) -> None:
        if timeout <= 0:
            raise ValueError("timeout must be positive")
        self.model = model
        self.target = target
        self.timeout = timeout
        self.max_retries = max_retries
        self.fallback: Selector = fallback or LexicalSelector()
        self._api_key = api_key
        self._client = client
        self._env = env

    @property
    def name(self) -> str:
        return "anthropic"

    @property
    def credentials(self) -> str | None:
        """Where credentials come from (``client``, ``api_key`` or an env var name), or None."""
        if self._client is not None:
            return "client"
        if self._api_key:
            return "api_key"
        return credential_source(self._env)

    def __repr__(self) -> str:
        # Deliberately hand-written: the key must never reach a repr, a log line or a traceback.
        return (
            f"AnthropicSelector(model={self.model!r}, timeout={self.timeout:g}, "
            f"max_retries={self.max_retries}, credentials={self.credentials!r})"
        )

    def redact(self, text: str) -> str:
        return redact(text, credential_values(self._client, self._env, self._api_key))

    def describe_failure(self, exc: BaseException) -> str:
        """A one-line reason for a failed request, built from types and codes, key redacted."""
        reason: str
        if isinstance(exc, SelectionError):
            reason = str(exc)
        elif isinstance(exc, TimeoutError):
            reason = f"no answer within the {self.timeout:g} s timeout"
        elif isinstance(exc, MissingExtraError):
            reason = str(exc)
        elif isinstance(exc, ImportError):
            reason = f"the anthropic SDK cannot be imported: {exc}"
        else:
            reason = self._describe_sdk_error(exc)
        return one_line(self.redact(reason))

    def _describe_sdk_error(self, exc: BaseException) -> str:
        try:
            import anthropic
        except ImportError:  # pragma: no cover - the import succeeded to get here
            return f"{type(exc).__name__}: {exc}"
        if isinstance(exc, anthropic.APITimeoutError):
            return f"the API request timed out (APITimeoutError, timeout {self.timeout:g} s)"
        if isinstance(exc, anthropic.APIStatusError):
            kind = exc.type or "error"
            detail = f": {exc.api_message}" if exc.api_message else ""
            return f"API error {exc.status_code} {kind} ({type(exc).__name__}){detail}"
        if isinstance(exc, anthropic.APIConnectionError):
            return f"cannot reach the API ({type(exc).__name__}: {exc})"
        return f"{type(exc).__name__}: {exc}"

    def _credentials_for_client(self) -> tuple[str | None, str | None, str | None]:
        """``(api_key, auth_token, profile)`` for a client we make; all None lets the SDK decide."""
        if self._api_key:
            return self._api_key, None, None
        if self._env is None:
            return None, None, None
        # An injected environment is not os.environ, which is all the SDK would look at.
        for position, name in enumerate(CREDENTIAL_ENV_VARS):
            value = self._env.get(name, "").strip()
            if value:
                found: list[str | None] = [None, None, None]
                found[position] = value
                return found[0], found[1], found[2]
        return None, None, None

    async def _ask(
        self,
        query: str,
        headers: Sequence[MemoryHeader],
        recent_tools: Sequence[str],
        history: Sequence[tuple[str, str]],
    ) -> tuple[tuple[str, ...], tuple[str, ...], str | None]:
        request = build_request(
            query, headers, recent_tools, self.model, target=self.target, history=history
        )
        if self._client is not None:
            client = self._client.with_options(timeout=self.timeout, max_retries=self.max_retries)
            message = await self._create(client, request)
        else:
            # Without the SDK (no [anthropic] extra) even `auto` with a key degrades, saying so.
            require("anthropic", "the anthropic selector")
            if self.credentials is None:
                raise SelectionError(NO_CREDENTIALS)
            from anthropic import AsyncAnthropic

            api_key, auth_token, profile = self._credentials_for_client()
            async with AsyncAnthropic(
                api_key=api_key,
                auth_token=auth_token,
                profile=profile,
                timeout=self.timeout,
                max_retries=self.max_retries,
            ) as owned:
                message = await self._create(owned, request)
        text = next((b.text for b in message.content if b.type == "text"), None)
        paths = [h.rel_path for h in headers]
        selected, notes = parse_answer(text, message.stop_reason, paths, target=self.target)
        # The agent keeps a turn only when its answer was read (not one cut at max_tokens).
        kept = text if message.stop_reason != "max_tokens" else None
        return selected, notes, kept

    @staticmethod
    async def _create(client: AsyncAnthropic, request: SelectRequest) -> Message:
        # The request is plain JSON data; the SDK's TypedDicts add nothing to check here.
        system: Any = request.system
        messages: Any = request.messages
        return await client.messages.create(
            model=request.model,
            max_tokens=request.max_tokens,
            system=system,
            messages=messages,
            output_config={"format": {"type": "json_schema", "schema": request.schema}},
        )

    async def select(
        self,
        query: str,
        headers: Sequence[MemoryHeader],
        recent_tools: Sequence[str] = (),
        *,
        fallback_headers: Sequence[MemoryHeader] | None = None,
        history: Sequence[tuple[str, str]] = (),
    ) -> Selection:
        """Ask the model to choose among ``headers`` (the agent's manifest).

        ``fallback_headers``: what the fallback chooses from instead, when the manifest also lists
        files already seen: the model is told not to pick those again, the fallback is not shown
        them. ``history``: the session's earlier ``(query, raw answer)`` selector turns.
        """
        start = time.perf_counter()
        if not headers:
            # Nothing to choose from: the agent makes no call either.
            return Selection((), {}, "anthropic", "anthropic", model=self.model)
        try:
            # One deadline for the whole call, retries included: a late answer is useless.
            async with asyncio.timeout(self.timeout):
                selected, notes, raw = await self._ask(query, headers, recent_tools, history)
        except Exception as exc:  # any failure degrades, by contract; cancellation still propagates
            reason = self.describe_failure(exc)
            # INFO, not WARNING: the reason travels in the result, and an unconfigured logger
            # would otherwise print it to stderr in the middle of the CLI's output.
            log.info("anthropic selector unavailable, using %s: %s", self.fallback.name, reason)
            offered = headers if fallback_headers is None else fallback_headers
            timings = {"anthropic_ms": _ms(start)}
            return await fall_back(
                self.fallback,
                "anthropic",
                query,
                offered,
                recent_tools,
                reason,
                timings,
                self.model,
                redact=self.redact,
            )
        order = {path: rank for rank, path in enumerate(selected, 1)}
        why = {p: f"chosen by {self.model} (rank {r} of {len(selected)})" for p, r in order.items()}
        return Selection(
            selected=selected,
            why=why,
            selector="anthropic",
            requested="anthropic",
            timings={"anthropic_ms": _ms(start)},
            notes=notes,
            model=self.model,
            raw_answer=raw,
        )


async def fall_back(
    fallback: Selector,
    requested: str,
    query: str,
    headers: Sequence[MemoryHeader],
    recent_tools: Sequence[str],
    reason: str,
    timings: Mapping[str, float],
    model: str | None,
    *,
    redact: Callable[[str], str] = lambda text: text,
) -> Selection:
    """``fallback``'s selection, marked as standing in for ``requested`` because of ``reason``."""
    try:
        result = await fallback.select(query, headers, recent_tools)
    except Exception as exc:  # the fallback is offline code, but the contract holds anyway
        failure = one_line(redact(f"{type(exc).__name__}: {exc}"))
        log.warning("fallback selector %s failed: %s", fallback.name, failure)
        return Selection(
            selected=(),
            why={},
            selector="none",
            requested=requested,
            degraded=f"{reason}; {fallback.name} fallback failed too: {failure}",
            timings=dict(timings),
            model=model,
        )
    return replace(
        result,
        requested=requested,
        degraded=reason,
        timings={**timings, **result.timings},
        model=model,
    )
