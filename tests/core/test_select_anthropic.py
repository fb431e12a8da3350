"""The anthropic selector through the real SDK, against a fake API that checks every request.

``AsyncAnthropic`` talks to ``httpx2.MockTransport``: the handler asserts the request body the spec
prescribes (target ``seed``: model, max_tokens, system prompt, user message, tools line, schema
with the manifest enum) or the conversation Claude Code 2.1.328 sends, and answers with a real
Message document, an API error, a timeout or garbage. Nothing here touches the network.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

import anthropic
import httpx2
import pytest
from memdir import constants as C
from memdir.agent.manifest import format_manifest
from memdir.model import MemoryHeader
from memdir.recall.choice import choose_selector
from memdir.recall.select import (
    SELECT_MEMORIES_CONVERSATION_PROMPT,
    SELECT_MEMORIES_SYSTEM_PROMPT,
    AnthropicSelector,
    LexicalSelector,
    Selection,
    build_request,
    credential_source,
    parse_answer,
)
from memdir.target import CLAUDE_CODE_2_1_328, SEED, Target
from memhelpers import memory_header as header

#: A fake credential: it must never show up in reprs, reasons, logs or output.
SENTINEL = "sk-ant-api03-SENTINEL-d41d8cd98f00b204e9800998ecf8427e"
BASE_URL = "http://anthropic.memdir.test"
MODEL = "claude-test-model"

Handler = Callable[[httpx2.Request], Coroutine[None, None, httpx2.Response]]


HEADERS = (
    header("release-merge-freeze.md", "trunk is frozen from app-store submission until live"),
    header("feedback-no-mocks.md", "integration tests hit a real Postgres", "feedback", 1),
    header("reference/grafana.md", "Grafana dashboard for checkout latency", "reference", 2),
    header("tools/psql-usage.md", "how to run psql against staging", "reference", 3),
    header("tools/psql-gotchas.md", "psql gotcha: \\copy needs a local path", "reference", 4),
    header("user-role.md", "backend engineer new to React", "user", 5),
    header("notes.md", None, None, 6),  # type: ignore[arg-type]
)
PATHS = [h.rel_path for h in HEADERS]


def message(text: str | None, stop_reason: str = "end_turn") -> dict[str, Any]:
    """A Messages API response document, as the API sends it."""
    content = [] if text is None else [{"type": "text", "text": text}]
    return {
        "id": "msg_01memdirtest",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": 321, "output_tokens": 17},
    }


def answer(paths: Sequence[object], stop_reason: str = "end_turn") -> httpx2.Response:
    return httpx2.Response(
        200, json=message(json.dumps({"selected_memories": list(paths)}), stop_reason)
    )


def api_error(status: int, kind: str, text: str) -> httpx2.Response:
    body = {"type": "error", "error": {"type": kind, "message": text}}
    return httpx2.Response(status, json=body, headers={"retry-after-ms": "1"})


class FakeAPI:
    """A MockTransport handler recording each request body before answering."""

    def __init__(self, respond: Callable[[httpx2.Request, dict[str, Any]], Any]) -> None:
        self.respond = respond
        self.bodies: list[dict[str, Any]] = []
        self.requests: list[httpx2.Request] = []

    async def __call__(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        self.requests.append(request)
        self.bodies.append(body)
        result = self.respond(request, body)
        if asyncio.iscoroutine(result):
            result = await result
        assert isinstance(result, httpx2.Response)
        return result


def client_for(handler: Handler, **options: Any) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(
        api_key=SENTINEL,
        base_url=BASE_URL,
        max_retries=0,
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handler)),
        **options,
    )


class StubFallback:
    """Stands in for the lexical selector so these tests pin down the anthropic side only."""

    name = "stub"

    def __init__(self) -> None:
        self.calls = 0

    async def select(
        self, query: str, headers: Sequence[MemoryHeader], recent_tools: Sequence[str] = ()
    ) -> Selection:
        self.calls += 1
        first = headers[0].rel_path
        return Selection((first,), {first: "stub"}, "stub", "stub", timings={"stub_ms": 0.1})


def selector_for(
    handler: Handler, *, max_retries: int = 0, timeout: float = 5.0, target: Target = SEED
) -> tuple[AnthropicSelector, StubFallback]:
    fallback = StubFallback()
    selector = AnthropicSelector(
        model=MODEL,
        timeout=timeout,
        max_retries=max_retries,
        client=client_for(handler),
        fallback=fallback,
        target=target,
    )
    return selector, fallback


def expected_user_message(query: str, tools: str | None = None) -> str:
    text = f"Query: {query}\n\nAvailable memories:\n{format_manifest(HEADERS)}"
    return text + (f"\n\nRecently used tools: {tools}" if tools else "")


# --- the request -------------------------------------------------------------------------------


async def test_request_body_is_the_spec_request_and_the_answer_is_used() -> None:
    def respond(request: httpx2.Request, body: dict[str, Any]) -> httpx2.Response:
        assert request.method == "POST"
        assert request.url.path == "/v1/messages"
        auth = request.headers.get("x-api-key", "") + request.headers.get("authorization", "")
        assert SENTINEL in auth  # the key goes to the API, and only there
        assert body["model"] == MODEL
        assert body["max_tokens"] == C.SELECT_MAX_TOKENS == 256
        assert body["system"] == SELECT_MEMORIES_SYSTEM_PROMPT
        assert body["messages"] == [
            {"role": "user", "content": expected_user_message("is trunk frozen right now?")}
        ]
        schema = body["output_config"]["format"]
        assert schema["type"] == "json_schema"
        assert schema["schema"] == {
            "type": "object",
            "properties": {
                "selected_memories": {"type": "array", "items": {"type": "string", "enum": PATHS}}
            },
            "required": ["selected_memories"],
            "additionalProperties": False,
        }
        assert "tools" not in body and "temperature" not in body
        return answer(["release-merge-freeze.md", "user-role.md"])

    api = FakeAPI(respond)
    selector, fallback = selector_for(api)
    result = await selector.select("is trunk frozen right now?", HEADERS)
    assert len(api.bodies) == 1
    assert result.selected == ("release-merge-freeze.md", "user-role.md")
    assert result.selector == result.requested == "anthropic"
    assert result.degraded is None
    assert result.model == MODEL
    assert set(result.why) == set(result.selected)
    assert "rank 1 of 2" in result.why["release-merge-freeze.md"]
    assert "anthropic_ms" in result.timings
    assert fallback.calls == 0


def test_system_prompt_states_the_rules() -> None:
    prompt = SELECT_MEMORIES_SYSTEM_PROMPT
    assert "(up to 5)" in prompt
    assert "certain will be helpful" in prompt
    assert "feel free to return an empty list" in prompt
    assert "recently-used tools" in prompt
    assert "usage reference or API documentation for those tools" in prompt
    assert "DO still select memories containing warnings, gotchas, or known issues" in prompt


async def test_recently_used_tools_line_is_appended_deduplicated() -> None:
    api = FakeAPI(lambda _r, _b: answer(["tools/psql-gotchas.md"]))
    selector, _ = selector_for(api)
    result = await selector.select("why does copy fail?", HEADERS, ["psql", " Bash ", "psql", ""])
    content = api.bodies[0]["messages"][0]["content"]
    assert content == expected_user_message("why does copy fail?", "psql, Bash")
    assert content.endswith("\n\nRecently used tools: psql, Bash")
    assert result.selected == ("tools/psql-gotchas.md",)


async def test_no_tools_no_tools_line() -> None:
    api = FakeAPI(lambda _r, _b: answer([]))
    selector, _ = selector_for(api)
    result = await selector.select("anything about grafana", HEADERS, [])
    assert "Recently used tools" not in api.bodies[0]["messages"][0]["content"]
    # An empty list is a valid answer, not a failure.
    assert result.selected == ()
    assert result.degraded is None
    assert result.selector == "anthropic"


def test_build_request_matches_the_sent_body() -> None:
    request = build_request("q", HEADERS, ["git"], MODEL, target=SEED)
    body = request.to_body()
    assert body["messages"][0]["content"] == expected_user_message("q", "git")
    assert (
        body["output_config"]["format"]["schema"]["properties"]["selected_memories"]["items"][
            "enum"
        ]
        == PATHS
    )


async def test_no_candidates_means_no_call() -> None:
    api = FakeAPI(lambda _r, _b: answer([]))
    selector, _ = selector_for(api)
    result = await selector.select("anything", [])
    assert result.selected == () and result.degraded is None
    assert api.bodies == []


# --- the answer --------------------------------------------------------------------------------


def block(text: str, *, cached: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "text", "text": text}
    if cached:
        out["cache_control"] = {"type": "ephemeral"}
    return out


async def test_claude_code_request_is_its_conversation() -> None:
    api = FakeAPI(lambda _r, _b: answer(["user-role.md"]))
    selector, _ = selector_for(api, target=CLAUDE_CODE_2_1_328)
    result = await selector.select("who am I working with?", HEADERS, ["psql"])
    [body] = api.bodies
    assert body == {
        "model": MODEL,
        "max_tokens": 2560,
        "system": [block(SELECT_MEMORIES_CONVERSATION_PROMPT, cached=True)],
        "messages": [
            {
                "role": "user",
                "content": [block("Available memories:\n" + format_manifest(HEADERS), cached=True)],
            },
            {
                "role": "user",
                "content": [
                    block("Select memories relevant to:\nwho am I working with?", cached=True)
                ],
            },
        ],
        "output_config": {
            "format": {
                "type": "json_schema",
                "schema": {
                    "type": "object",
                    "properties": {
                        "selected_memories": {"type": "array", "items": {"type": "string"}}
                    },
                    "required": ["selected_memories"],
                    "additionalProperties": False,
                },
            }
        },
    }
    assert (
        body
        == build_request(
            "who am I working with?", HEADERS, ["psql"], MODEL, target=CLAUDE_CODE_2_1_328
        ).to_body()
    )
    assert result.selected == ("user-role.md",)


def test_claude_code_prompt_is_its_own() -> None:
    prompt = SELECT_MEMORIES_CONVERSATION_PROMPT
    assert prompt.endswith('{"selected_memories": ["<filename>", ...]}.\n')
    assert "Do not re-select memories you already returned" in prompt
    assert "recently-used tools" not in prompt


def test_earlier_turns_come_between_the_manifest_and_the_query() -> None:
    history = [("first question here", '{"selected_memories": ["notes.md"]}')]
    body = build_request(
        "second one", HEADERS, target=CLAUDE_CODE_2_1_328, history=history
    ).to_body()
    assert [m["role"] for m in body["messages"]] == ["user", "user", "assistant", "user"]
    assert body["messages"][1] == {
        "role": "user",
        "content": [block("Select memories relevant to:\nfirst question here")],
    }
    assert body["messages"][2] == {
        "role": "assistant",
        "content": [block('{"selected_memories": ["notes.md"]}')],
    }
    assert body["messages"][3]["content"][0]["cache_control"] == {"type": "ephemeral"}


def test_answer_read_as_the_agent_reads_it() -> None:
    fenced = '```json\n{"selected_memories": ["[reference] reference/grafana.md", "user-role.md", '
    fenced += '"user-role.md", "[project]_notes.md", 7, "ghost.md"]}\n```'
    selected, notes = parse_answer(fenced, "end_turn", PATHS, target=CLAUDE_CODE_2_1_328)
    assert selected == ("reference/grafana.md", "user-role.md", "user-role.md")
    assert any("3 name(s) not in the manifest" in n for n in notes)
    many, _ = parse_answer(
        json.dumps({"selected_memories": PATHS}), "end_turn", PATHS, target=CLAUDE_CODE_2_1_328
    )
    assert many == tuple(
        PATHS
    )  # the cap applies after seen files are dropped (memdir.recall.prefetch)
    assert parse_answer(fenced, "end_turn", PATHS, target=SEED)[0] == (
        "reference/grafana.md",
        "user-role.md",
    )


async def test_an_answer_cut_at_max_tokens_selects_nothing() -> None:
    text = json.dumps({"selected_memories": ["user-role.md"]})
    api = FakeAPI(lambda _r, _b: httpx2.Response(200, json=message(text, "max_tokens")))
    selector, fallback = selector_for(api)
    result = await selector.select("who am I?", HEADERS)
    assert result.selected == () and result.degraded is None and fallback.calls == 0
    assert any("max_tokens" in n for n in result.notes)


async def test_more_than_five_is_capped_in_order() -> None:
    api = FakeAPI(lambda _r, _b: answer(list(reversed(PATHS))))
    selector, _ = selector_for(api)
    result = await selector.select("everything please", HEADERS)
    assert result.selected == tuple(reversed(PATHS))[:5]
    assert any("kept the first 5" in n for n in result.notes)
    assert result.degraded is None


async def test_unknown_names_dropped_and_duplicates_removed() -> None:
    api = FakeAPI(
        lambda _r, _b: answer(
            ["ghost.md", "user-role.md", "../../etc/passwd", "user-role.md", "notes.md"]
        )
    )
    selector, _ = selector_for(api)
    result = await selector.select("who am I working with?", HEADERS)
    assert result.selected == ("user-role.md", "notes.md")  # seed: duplicates removed
    assert any("2 name(s) not in the manifest" in n and "ghost.md" in n for n in result.notes)
    assert result.degraded is None


@pytest.mark.parametrize(
    ("status", "kind", "expected"),
    [
        (429, "rate_limit_error", "RateLimitError"),
        (500, "api_error", "InternalServerError"),
        (529, "overloaded_error", "OverloadedError"),
        (400, "invalid_request_error", "BadRequestError"),
    ],
)
async def test_api_errors_degrade_with_the_reason(status: int, kind: str, expected: str) -> None:
    api = FakeAPI(lambda _r, _b: api_error(status, kind, "try later"))
    selector, fallback = selector_for(api)
    result = await selector.select("is trunk frozen?", HEADERS)
    assert fallback.calls == 1
    assert result.selector == "stub"
    assert result.requested == "anthropic"
    assert result.selected == (HEADERS[0].rel_path,)
    assert result.degraded is not None
    assert f"API error {status} {kind} ({expected})" in result.degraded
    assert "try later" in result.degraded
    assert "anthropic_ms" in result.timings and "stub_ms" in result.timings


async def test_overloaded_then_ok_is_retried_once() -> None:
    calls: list[int] = []

    def respond(_r: httpx2.Request, _b: dict[str, Any]) -> httpx2.Response:
        calls.append(1)
        if len(calls) == 1:
            return api_error(529, "overloaded_error", "Overloaded")
        return answer(["user-role.md"])

    selector, fallback = selector_for(FakeAPI(respond), max_retries=1)
    result = await selector.select("who am I?", HEADERS)
    assert len(calls) == 2
    assert result.selected == ("user-role.md",) and result.degraded is None
    assert fallback.calls == 0


async def test_transport_timeout_degrades() -> None:
    def respond(request: httpx2.Request, _b: dict[str, Any]) -> httpx2.Response:
        raise httpx2.ReadTimeout("read timed out", request=request)

    selector, fallback = selector_for(FakeAPI(respond))
    result = await selector.select("is trunk frozen?", HEADERS)
    assert fallback.calls == 1
    assert result.degraded is not None and "timed out" in result.degraded
    assert "APITimeoutError" in result.degraded


async def test_no_answer_within_the_timeout_degrades() -> None:
    never = asyncio.Event()

    async def hang(_r: httpx2.Request, _b: dict[str, Any]) -> httpx2.Response:
        await never.wait()  # the API never answers
        raise AssertionError("unreachable")

    selector, fallback = selector_for(FakeAPI(hang), timeout=0.05)
    result = await selector.select("is trunk frozen?", HEADERS)
    assert fallback.calls == 1
    assert result.degraded == "no answer within the 0.05 s timeout"


async def test_connection_error_degrades() -> None:
    def respond(request: httpx2.Request, _b: dict[str, Any]) -> httpx2.Response:
        raise httpx2.ConnectError("connection refused", request=request)

    selector, _ = selector_for(FakeAPI(respond))
    result = await selector.select("is trunk frozen?", HEADERS)
    assert result.degraded is not None and "cannot reach the API" in result.degraded


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        (message("Sure! The relevant memories are user-role.md"), "not JSON"),
        (message('{"selected_memories": ["user-role.md"'), "not JSON"),
        (message('["user-role.md"]'), "wrong shape"),
        (message('{"selected_memories": "user-role.md"}'), "wrong shape"),
        (message('{"memories": []}'), "wrong shape"),
        (message(None), "no text block"),
        (message(None, "refusal"), "refused"),
        (message('{"selected_memories": ["user-role.md"]}', "refusal"), "refused"),
    ],
)
async def test_malformed_answers_and_refusals_degrade(
    response: dict[str, Any], expected: str
) -> None:
    api = FakeAPI(lambda _r, _b: httpx2.Response(200, json=response))
    selector, fallback = selector_for(api)
    result = await selector.select("who am I?", HEADERS)
    assert fallback.calls == 1
    assert result.selector == "stub"
    assert result.degraded is not None and expected in result.degraded


async def test_non_json_http_body_degrades() -> None:
    api = FakeAPI(lambda _r, _b: httpx2.Response(200, text="<html>gateway</html>"))
    selector, fallback = selector_for(api)
    result = await selector.select("who am I?", HEADERS)
    assert fallback.calls == 1 and result.degraded


async def test_failing_fallback_still_returns_a_selection() -> None:
    class Broken:
        name = "broken"

        async def select(
            self, query: str, headers: Sequence[MemoryHeader], recent_tools: Sequence[str] = ()
        ) -> Selection:
            raise RuntimeError("boom")

    api = FakeAPI(lambda _r, _b: api_error(500, "api_error", "down"))
    selector = AnthropicSelector(
        model=MODEL, max_retries=0, client=client_for(api), fallback=Broken()
    )
    result = await selector.select("who am I?", HEADERS)
    assert result.selected == ()
    assert result.degraded is not None and "broken fallback failed too" in result.degraded


async def test_cancellation_propagates() -> None:
    entered = asyncio.Event()
    never = asyncio.Event()

    async def hang(_r: httpx2.Request, _b: dict[str, Any]) -> httpx2.Response:
        entered.set()
        await never.wait()
        raise AssertionError("unreachable")

    selector, fallback = selector_for(FakeAPI(hang))
    task = asyncio.ensure_future(selector.select("who am I?", HEADERS))
    waiting = asyncio.ensure_future(entered.wait())
    # If the request fails before reaching the API, the task ends first: don't hang on the event.
    await asyncio.wait({waiting, task}, return_when=asyncio.FIRST_COMPLETED)
    assert entered.is_set() and not task.done()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert fallback.calls == 0  # a cancelled call is not a failure to fall back from


async def test_degrades_to_the_real_lexical_selector() -> None:
    api = FakeAPI(lambda _r, _b: api_error(529, "overloaded_error", "Overloaded"))
    selector = AnthropicSelector(model=MODEL, max_retries=0, client=client_for(api))
    assert isinstance(selector.fallback, LexicalSelector)
    result = await selector.select("is the trunk frozen for app-store submission?", HEADERS)
    assert result.selector == "lexical"
    assert result.requested == "anthropic"
    assert result.degraded is not None and "529" in result.degraded
    assert "lexical_ms" in result.timings
    assert set(result.selected) <= set(PATHS)
    assert len(result.selected) <= C.SELECT_MAX_FILES


# --- credentials -------------------------------------------------------------------------------


def test_credential_source_names_the_variable_never_the_value() -> None:
    assert credential_source({}) is None
    assert credential_source({"ANTHROPIC_API_KEY": "  "}) is None
    assert credential_source({"ANTHROPIC_API_KEY": SENTINEL}) == "ANTHROPIC_API_KEY"
    assert credential_source({"ANTHROPIC_AUTH_TOKEN": SENTINEL}) == "ANTHROPIC_AUTH_TOKEN"


def test_auto_is_anthropic_with_a_key_else_lexical() -> None:
    assert isinstance(choose_selector("auto", env={}), LexicalSelector)
    assert isinstance(
        choose_selector("lexical", env={"ANTHROPIC_API_KEY": SENTINEL}), LexicalSelector
    )
    chosen = choose_selector("auto", env={"ANTHROPIC_API_KEY": SENTINEL}, model="claude-haiku-4-5")
    assert isinstance(chosen, AnthropicSelector)
    assert chosen.model == "claude-haiku-4-5"
    assert isinstance(
        choose_selector("auto", env={"ANTHROPIC_AUTH_TOKEN": SENTINEL}), AnthropicSelector
    )
    # Explicitly asked for: it stays anthropic and explains itself when it cannot run.
    assert isinstance(choose_selector("anthropic", env={}), AnthropicSelector)
    with pytest.raises(ValueError, match="unknown selector"):
        choose_selector("gpt", env={})  # type: ignore[arg-type]


def test_default_model_is_sonnet_class() -> None:
    selector = AnthropicSelector(env={})
    assert selector.model == C.DEFAULT_SELECTOR_MODEL
    assert "sonnet" in C.DEFAULT_SELECTOR_MODEL
    assert C.CHEAP_SELECTOR_MODEL == "claude-haiku-4-5"
    assert selector.timeout == C.SELECT_TIMEOUT_SECONDS


async def test_missing_key_degrades_without_a_request() -> None:
    fallback = StubFallback()
    selector = AnthropicSelector(model=MODEL, env={}, fallback=fallback)
    assert selector.credentials is None
    result = await selector.select("who am I?", HEADERS)
    assert fallback.calls == 1
    assert result.degraded is not None and "no API key configured" in result.degraded
    assert "ANTHROPIC_API_KEY" in result.degraded


class PatchedClient(anthropic.AsyncAnthropic):
    """The SDK client the selector makes itself, pointed at the fake API."""

    handler: Handler

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(
            **kwargs,
            base_url=BASE_URL,
            http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(PatchedClient.handler)),
        )


@pytest.mark.parametrize("variable", ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"])
async def test_owned_client_reads_credentials_from_the_environment(
    variable: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(variable, SENTINEL)
    api = FakeAPI(lambda _r, _b: answer(["user-role.md"]))
    monkeypatch.setattr(PatchedClient, "handler", api, raising=False)
    monkeypatch.setattr(anthropic, "AsyncAnthropic", PatchedClient)
    selector = choose_selector("auto", model=MODEL, max_retries=0)
    assert isinstance(selector, AnthropicSelector)
    result = await selector.select("who am I?", HEADERS)
    assert result.selected == ("user-role.md",) and result.degraded is None
    sent = api.requests[0].headers
    assert SENTINEL in sent.get("x-api-key", "") + sent.get("authorization", "")


async def test_key_never_in_reprs_reasons_or_logs(
    caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    caplog.set_level(logging.DEBUG)
    # An error body that echoes the key back, as a misbehaving proxy might.
    api = FakeAPI(
        lambda _r, _b: api_error(401, "authentication_error", f"invalid x-api-key {SENTINEL}")
    )
    selector, _ = selector_for(api)
    result = await selector.select("who am I?", HEADERS)
    assert result.degraded is not None and "401" in result.degraded
    assert "[redacted]" in result.degraded
    env_selector = AnthropicSelector(env={"ANTHROPIC_API_KEY": SENTINEL})
    explicit = AnthropicSelector(api_key=SENTINEL)
    texts = [
        repr(selector),
        repr(env_selector),
        repr(explicit),
        str(explicit.__dict__.keys()),
        repr(result),
        str(result),
        caplog.text,
        *capsys.readouterr(),
    ]
    for text in texts:
        assert SENTINEL not in text
    assert "credentials='ANTHROPIC_API_KEY'" in repr(env_selector)
    assert "anthropic selector unavailable" in caplog.text
