"""The openai-compatible selector against a fake model server on 127.0.0.1.

The fake checks what a real server would receive: one ``POST /v1/chat/completions`` per selection
carrying the agent's selector prompt, its user message and a JSON-schema response format naming
exactly the manifest's files. Every failure must come back as the lexical selection with the
reason, never as an exception.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest
from fake_openai import CHAT_PATH, FakeOpenAI, answer, completion
from memdir.agent.manifest import format_manifest
from memdir.agent.paths import locate_memory_dir
from memdir.config import (
    DEFAULT_OPENAI_BASE_URL,
    DEFAULT_OPENAI_TIMEOUT,
    SELECTOR_NAMES,
    settings_from_mapping,
)
from memdir.faces.hook import user_prompt_submit
from memdir.recall.choice import choose_selector, selector_from_settings
from memdir.recall.select import (
    SELECT_MEMORIES_SYSTEM_PROMPT,
    AnthropicSelector,
    LexicalSelector,
    Selection,
    user_message,
)
from memdir.recall.select_openai import (
    API_KEY_ENV,
    NO_MODEL,
    SCHEMA_NAME,
    OpenAICompatibleSelector,
)
from memhelpers import memory_header as header
from memhelpers import topic

MODEL = "qwen2.5:7b-instruct"
KEY = "sk-local-SENTINEL-7215ee9c7d9dc229d2921a40e899ec5f"
QUERY = "can I merge while the trunk is frozen for the release?"


HEADERS = (
    header("release-merge-freeze.md", "trunk is frozen from app-store submission until live"),
    header("feedback-no-mocks.md", "integration tests hit a real Postgres", "feedback"),
    header("reference/grafana.md", "Grafana dashboard for checkout latency", "reference"),
    header("tools/docker-gotchas.md", "docker push needs the registry login first", "reference"),
)
PATHS = [h.rel_path for h in HEADERS]


def check_request(fake: FakeOpenAI, tools: tuple[str, ...] = (), key: str | None = None) -> None:
    """Exactly one request, and it is the agent's selector request in Chat Completions form."""
    assert len(fake.requests) == 1, fake.requests
    sent = fake.requests[0]
    assert (sent.method, sent.path) == ("POST", CHAT_PATH)
    assert sent.headers["content-type"] == "application/json"
    assert sent.headers.get("authorization") == (f"Bearer {key}" if key else None)
    body = sent.body
    assert body is not None
    assert body["model"] == MODEL
    assert body["messages"] == [
        {"role": "system", "content": SELECT_MEMORIES_SYSTEM_PROMPT},
        {"role": "user", "content": user_message(QUERY, format_manifest(HEADERS), tools)},
    ]
    assert body["stream"] is False
    assert body["response_format"]["type"] == "json_schema"
    spec = body["response_format"]["json_schema"]
    assert spec["name"] == SCHEMA_NAME and spec["strict"] is True
    schema = spec["schema"]
    assert schema["required"] == ["selected_memories"]
    assert schema["additionalProperties"] is False
    assert schema["properties"]["selected_memories"]["items"]["enum"] == PATHS


def selector(fake: FakeOpenAI | None, **kwargs: Any) -> OpenAICompatibleSelector:
    base_url = fake.base_url if fake is not None else kwargs.pop("base_url")
    options: dict[str, Any] = {"model": MODEL, "timeout": 5.0, "env": {}}
    options.update(kwargs)
    return OpenAICompatibleSelector(base_url=base_url, **options)


async def lexical(tools: tuple[str, ...] = ()) -> Selection:
    return await LexicalSelector().select(QUERY, HEADERS, tools)


async def assert_fell_back(result: Selection, reason: str) -> None:
    offline = await lexical()
    assert result.selector == "lexical" and result.requested == "openai-compatible"
    assert result.selected == offline.selected and result.selected
    assert result.degraded is not None and reason in result.degraded, result.degraded
    assert result.model == MODEL
    assert "openai_compatible_ms" in result.timings and "lexical_ms" in result.timings


async def test_success_is_the_models_choice() -> None:
    tools = ("docker", "Bash")
    with FakeOpenAI(answer("tools/docker-gotchas.md", "release-merge-freeze.md")) as fake:
        result = await selector(fake).select(QUERY, HEADERS, tools)
    check_request(fake, tools)
    assert result.selected == ("tools/docker-gotchas.md", "release-merge-freeze.md")
    assert result.selector == result.requested == "openai-compatible"
    assert result.degraded is None and result.notes == ()
    assert result.model == MODEL
    assert result.why["release-merge-freeze.md"] == f"chosen by {MODEL} (rank 2 of 2)"


async def test_names_outside_the_manifest_are_dropped() -> None:
    names = (
        "nope.md",
        "[project] release-merge-freeze.md",
        "../secrets.md",
        "reference/grafana.md",
    )
    with FakeOpenAI(answer(*names)) as fake:
        result = await selector(fake).select(QUERY, HEADERS)
    check_request(fake)
    # The copied type tag is taken off (as the agent does); unknown names go, with a note.
    assert result.selected == ("release-merge-freeze.md", "reference/grafana.md")
    assert result.degraded is None
    assert result.notes == ("dropped 2 name(s) not in the manifest: 'nope.md', '../secrets.md'",)


async def test_more_than_five_and_repeats_are_cut() -> None:
    many = [*PATHS, *PATHS]
    with FakeOpenAI(answer(*many)) as fake:
        result = await selector(fake).select(QUERY, HEADERS)
    assert result.selected == tuple(PATHS)
    assert len(fake.requests) == 1


async def test_connection_refused_falls_back_to_lexical() -> None:
    # A bound socket that does not listen: connections are refused, and no one else gets the port.
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
        base_url = f"http://127.0.0.1:{port}/v1"
        result = await selector(None, base_url=base_url).select(QUERY, HEADERS)
    await assert_fell_back(result, f"cannot reach {base_url} (connection refused)")


async def test_timeout_falls_back_to_lexical() -> None:
    with FakeOpenAI(answer("reference/grafana.md"), hold=True) as fake:
        result = await selector(fake, timeout=0.3).select(QUERY, HEADERS)
        assert fake.arrived.wait(5)
        fake.release()
    await assert_fell_back(result, f"no answer from {fake.base_url} within the 0.3 s timeout")
    check_request(fake)


async def test_http_500_falls_back_with_the_servers_message() -> None:
    error = {"error": {"message": 'model "qwen2.5:7b-instruct" not found', "type": "api_error"}}
    with FakeOpenAI(lambda body: (500, error)) as fake:
        result = await selector(fake).select(QUERY, HEADERS)
    check_request(fake)
    await assert_fell_back(
        result,
        f'HTTP 500 from {fake.base_url}/chat/completions: model "qwen2.5:7b-instruct" not found',
    )


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ((200, b"<html>proxy error</html>"), "the server's reply is not JSON"),
        ((200, {"object": "error"}), "the server's reply has no choices[0].message"),
        ((200, completion("selected: notes.md")), "the answer is not JSON"),
        (
            (200, completion(json.dumps({"memories": ["reference/grafana.md"]}))),
            "the answer has the wrong shape",
        ),
        ((200, completion(None)), "the answer has no text block"),
    ],
    ids=["reply-not-json", "no-choices", "content-not-json", "schema-mismatch", "no-content"],
)
async def test_bad_answers_fall_back(reply: tuple[int, Any], reason: str) -> None:
    with FakeOpenAI(lambda body: reply) as fake:
        result = await selector(fake).select(QUERY, HEADERS)
    check_request(fake)
    await assert_fell_back(result, reason)


async def test_an_answer_cut_at_max_tokens_selects_nothing() -> None:
    cut = completion('{"selected_memories": ["reference/gra', finish_reason="length")
    with FakeOpenAI(lambda body: (200, cut)) as fake:
        result = await selector(fake).select(QUERY, HEADERS)
    check_request(fake)
    assert result.selected == () and result.degraded is None
    assert result.notes == (
        "the answer was cut at max_tokens: nothing selected (as the agent does)",
    )


async def test_model_unset_falls_back_without_a_request() -> None:
    with FakeOpenAI(answer("reference/grafana.md")) as fake:
        result = await selector(fake, model=None).select(QUERY, HEADERS)
        blank = await selector(fake, model="  ").select(QUERY, HEADERS)
    assert fake.requests == []
    assert result.model is None and blank.model is None
    offline = await lexical()
    for each in (result, blank):
        assert each.selector == "lexical" and each.requested == "openai-compatible"
        assert each.degraded == NO_MODEL
        assert each.selected == offline.selected


async def test_no_headers_no_request() -> None:
    with FakeOpenAI(answer()) as fake:
        result = await selector(fake).select(QUERY, [])
    assert fake.requests == [] and result.selected == () and result.degraded is None


async def test_api_key_is_a_bearer_token_and_never_shown(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level("DEBUG")
    leak = {"error": {"message": f"invalid key {KEY}"}}
    env = {API_KEY_ENV: KEY}
    with FakeOpenAI(lambda body: (401, leak)) as fake:
        chosen = selector(fake, env=env)
        result = await chosen.select(QUERY, HEADERS)
    check_request(fake, key=KEY)
    assert (
        result.degraded == f"HTTP 401 from {fake.base_url}/chat/completions: invalid key [redacted]"
    )
    assert KEY not in repr(chosen) and "api_key=set" in repr(chosen)
    assert KEY not in caplog.text


async def test_a_redirect_is_not_followed() -> None:
    # Following it would send the key (as a GET) wherever the server points.
    env = {API_KEY_ENV: KEY}
    with FakeOpenAI(answer("reference/grafana.md")) as elsewhere:
        target = f"{elsewhere.base_url}/chat/completions"
        moved = lambda body: (302, {}, {"Location": target})  # noqa: E731
        with FakeOpenAI(moved) as fake:
            result = await selector(fake, env=env).select(QUERY, HEADERS)
    check_request(fake, key=KEY)
    assert elsewhere.requests == []
    await assert_fell_back(result, f"HTTP 302 from {fake.base_url}/chat/completions")


async def test_a_proxy_in_the_environment_is_not_used_for_loopback(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Nothing listens on port 9: a request through this proxy could not succeed.
    for name in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    with FakeOpenAI(answer("reference/grafana.md")) as fake:
        result = await selector(fake).select(QUERY, HEADERS)
    assert result.selected == ("reference/grafana.md",) and result.degraded is None


def test_a_timeout_must_be_positive() -> None:
    with pytest.raises(ValueError, match="timeout"):
        OpenAICompatibleSelector(model=MODEL, timeout=0)


# --- choose_selector and settings ----------------------------------------------------------------


def test_choose_selector_auto_order() -> None:
    key = {"ANTHROPIC_API_KEY": "sk-ant-api03-0123456789abcdef"}
    # 1. Anthropic credentials: the agent's own selector, even with a local model configured.
    assert isinstance(choose_selector("auto", env=key, openai_model=MODEL), AnthropicSelector)
    # 2. No credentials, a local model configured: the local server.
    local = choose_selector("auto", env={}, openai_model=MODEL)
    assert isinstance(local, OpenAICompatibleSelector)
    assert (local.model, local.base_url, local.timeout) == (
        MODEL,
        DEFAULT_OPENAI_BASE_URL,
        DEFAULT_OPENAI_TIMEOUT,
    )
    # 3. Neither: lexical. A base URL alone is not a configured model.
    assert isinstance(choose_selector("auto", env={}), LexicalSelector)
    assert isinstance(
        choose_selector("auto", env={}, openai_base_url="http://127.0.0.1:8080/v1"),
        LexicalSelector,
    )


def test_choose_selector_explicit_names() -> None:
    key = {"ANTHROPIC_API_KEY": "sk-ant-api03-0123456789abcdef"}
    # Asked for by name: returned even without a model, to say why it cannot run.
    unset = choose_selector("openai-compatible", env=key)
    assert isinstance(unset, OpenAICompatibleSelector) and unset.model is None
    assert isinstance(choose_selector("lexical", env={}, openai_model=MODEL), LexicalSelector)
    assert isinstance(choose_selector("anthropic", env={}, openai_model=MODEL), AnthropicSelector)
    # An explicit timeout replaces each model selector's own default.
    timed = choose_selector("openai-compatible", openai_model=MODEL, openai_timeout=9, timeout=2)
    assert isinstance(timed, OpenAICompatibleSelector) and timed.timeout == 2
    anthropic = choose_selector("anthropic", env={})
    assert isinstance(anthropic, AnthropicSelector) and anthropic.timeout == 10


def test_settings_reach_the_selector() -> None:
    settings = settings_from_mapping(
        {
            "selector": "openai-compatible",
            "openaiBaseUrl": "http://127.0.0.1:8080/v1/",
            "openai_model": " llama3.2 ",
            "openai_timeout": 12,
        }
    )
    assert settings.errors == ()
    chosen = selector_from_settings(settings, env={})
    assert isinstance(chosen, OpenAICompatibleSelector)
    assert (chosen.model, chosen.base_url, chosen.timeout) == (
        "llama3.2",
        "http://127.0.0.1:8080/v1",
        12.0,
    )
    assert chosen.url == "http://127.0.0.1:8080/v1/chat/completions"


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("selector", "ollama", "`selector` must be one of auto, anthropic, openai-compatible"),
        ("openai_base_url", "127.0.0.1:11434", "must be an http:// or https:// URL with a host"),
        ("openai_base_url", "ftp://host/v1", "must be an http:// or https:// URL"),
        ("openai_base_url", "http://127.0.0.1/v1?x=1", "must not have a query or fragment"),
        ("openai_base_url", "http://127.0.0.1:port/v1", "has a bad port"),
        ("openai_base_url", "http://gpu-box.lan:8000/v1", "must be on this machine"),
        ("openai_base_url", "https://evil.example/v1", "set MEMDIR_OPENAI_BASE_URL or pass"),
        ("openai_model", "", "must be the model name the server knows"),
        ("openai_timeout", 0, "must be a positive number of seconds"),
        ("openai_timeout", True, "must be a positive number of seconds"),
    ],
)
def test_bad_settings_are_reported_and_the_default_stays(
    key: str, value: object, message: str
) -> None:
    settings = settings_from_mapping({key: value})
    assert len(settings.errors) == 1 and message in settings.errors[0], settings.errors
    assert settings.openai_base_url == DEFAULT_OPENAI_BASE_URL
    assert settings.openai_model is None and settings.selector == "auto"


def test_the_vscode_settings_match_memdirs() -> None:
    root = Path(__file__).resolve().parents[2]
    manifest = json.loads((root / "client-vscode" / "package.json").read_text(encoding="utf-8"))
    props = manifest["contributes"]["configuration"]["properties"]
    assert tuple(props["memdir.selector"]["enum"]) == SELECTOR_NAMES
    assert len(props["memdir.selector"]["enumDescriptions"]) == len(SELECTOR_NAMES)
    assert props["memdir.openaiBaseUrl"]["default"] == DEFAULT_OPENAI_BASE_URL
    assert props["memdir.openaiTimeout"]["default"] == DEFAULT_OPENAI_TIMEOUT
    assert "default" not in props["memdir.openaiModel"]  # unset: auto does not use it
    # The editor's camelCase keys are the settings' own.
    sent = {"openaiBaseUrl": "http://127.0.0.1:1234/v1", "openaiModel": "m", "openaiTimeout": 3}
    settings = settings_from_mapping(sent)
    assert settings.errors == ()
    assert (settings.openai_base_url, settings.openai_model, settings.openai_timeout) == (
        "http://127.0.0.1:1234/v1",
        "m",
        3.0,
    )


@pytest.mark.parametrize(
    "url", ["http://localhost:1234/v1", "http://[::1]:8000/v1", "https://127.0.0.2/v1"]
)
def test_settings_accept_this_machine(url: str) -> None:
    settings = settings_from_mapping({"openai_base_url": url})
    assert settings.errors == () and settings.openai_base_url == url


def test_a_server_elsewhere_comes_from_the_environment_or_the_flag() -> None:
    settings = settings_from_mapping({"selector": "openai-compatible", "openai_model": MODEL})
    remote = "http://gpu-box.lan:8000/v1"
    from_env = selector_from_settings(settings, env={"MEMDIR_OPENAI_BASE_URL": remote})
    assert isinstance(from_env, OpenAICompatibleSelector) and from_env.base_url == remote
    flag = "http://10.0.0.7:8080/v1"
    from_flag = selector_from_settings(
        settings, env={"MEMDIR_OPENAI_BASE_URL": remote}, base_url=flag
    )
    assert isinstance(from_flag, OpenAICompatibleSelector) and from_flag.base_url == flag
    plain = selector_from_settings(settings, env={})
    assert isinstance(plain, OpenAICompatibleSelector)
    assert plain.base_url == DEFAULT_OPENAI_BASE_URL


async def test_a_bad_base_url_from_the_environment_falls_back_without_a_request() -> None:
    settings = settings_from_mapping({"selector": "openai-compatible", "openai_model": MODEL})
    chosen = selector_from_settings(settings, env={"MEMDIR_OPENAI_BASE_URL": "gpu-box:8000"})
    result = await chosen.select(QUERY, HEADERS)
    await assert_fell_back(result, "the base URL must be an http:// or https:// URL with a host")


def test_the_prompt_hook_uses_the_configured_local_model(tmp_path: Path) -> None:
    # The hook's auto, its injected environment (the key) and the memory dir's memdir.toml.
    home, cwd = tmp_path / "home", tmp_path / "proj"
    cwd.mkdir()
    env = {API_KEY_ENV: KEY}
    memory = locate_memory_dir(cwd, env=env, home=home).memory_dir
    assert memory is not None
    memory.mkdir(parents=True)
    (memory / "deploy.md").write_text(
        topic("deploy", "how to deploy the staging server with kubectl"), encoding="utf-8"
    )
    prompt = {
        "session_id": "s1",
        "transcript_path": str(home / "t.jsonl"),
        "cwd": str(cwd),
        "hook_event_name": "UserPromptSubmit",
        "prompt": "how do I deploy staging?",
    }
    with FakeOpenAI(answer("deploy.md")) as fake:
        (memory / "memdir.toml").write_text(
            f'openai_model = "{MODEL}"\nopenai_base_url = "{fake.base_url}"\n', encoding="utf-8"
        )
        outcome = user_prompt_submit(json.dumps(prompt), env=env, home=home, now=1_700_000_000.0)
    assert len(fake.requests) == 1
    assert fake.requests[0].headers["authorization"] == f"Bearer {KEY}"
    assert outcome.result is not None
    assert outcome.result.selector == outcome.result.requested_selector == "openai-compatible"
    assert "deploy.md" in outcome.stdout()
