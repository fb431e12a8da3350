"""Issue 26: an endpoint that echoes the API key back, in any encoding, never gets it shown.

On main the key was redacted only as sent (raw), and the OpenAI-compatible selector cut an error
body to 160 characters before redacting it: an endpoint echoing the key base64-encoded got its
first 47 characters printed. Now :func:`memdir.secrets.redact` hides the caller's own
credentials raw, base64 (standard and URL-safe, alone or inside ``base64(user:key)`` or
``base64(Bearer key)``), URL-encoded, hex and JSON-escaped, and every error text is redacted
before it is cut.
The selectors and the extraction agent run against the fakes on 127.0.0.1.
"""

from __future__ import annotations

import base64
import urllib.parse
from pathlib import Path

import anthropic
import pytest
from fake_anthropic import FakeAnthropic, api_error
from fake_openai import FakeOpenAI
from memdir.config import Settings
from memdir.extract.loop import run_extraction
from memdir.extract.results import format_result
from memdir.recall.select import AnthropicSelector, LexicalSelector
from memdir.recall.select_openai import API_KEY_ENV, OpenAICompatibleSelector
from memdir.secrets import REDACTED, redact
from memhelpers import memory_header as header

#: The key in use: no provider's shape, so only knowing it can redact it; "/", "+" and "=" make
#: its URL encoding differ from it.
KEY = "lk/7Qm2Zx9Rv4Tb8Nw3Hc6Jf1Kd5Gs0Ye7Ua2Io4Pq+Lm=8Xt"
#: Fewer shared characters than this say nothing of the key.
WINDOW = 8


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def echoes(key: str) -> dict[str, str]:
    """The key as a misbehaving endpoint may echo it."""
    raw = key.encode()
    return {
        "raw": key,
        "base64": b64(raw),
        "base64 url-safe": base64.urlsafe_b64encode(raw).decode(),
        "base64 of user:key": b64(b"user:" + raw),
        "base64 of :key": b64(b":" + raw),
        "base64 of Bearer key": b64(b"Bearer " + raw),
        "url-encoded": urllib.parse.quote(key, safe=""),
        "json-escaped": key.replace("/", "\\/"),
        "hex": raw.hex(),
    }


def key_windows(key: str) -> set[str]:
    """Every WINDOW characters of an echo that come from the key's bytes alone."""
    windows: set[str] = set()
    raw = key.encode()
    for name, form in echoes(key).items():
        if name.startswith("base64"):
            prefix = {"base64 of user:key": 5, "base64 of :key": 1, "base64 of Bearer key": 7}
            skip = prefix.get(name, 0)
            first, last = (8 * skip + 5) // 6, (8 * (skip + len(raw))) // 6
            form = form[first:last]
        windows.update(form[i : i + WINDOW] for i in range(len(form) - WINDOW + 1))
    return windows


def assert_nothing_of(key: str, shown: str) -> None:
    leaked = sorted(w for w in key_windows(key) if w in shown)
    assert leaked == [], shown


@pytest.mark.parametrize("name", list(echoes(KEY)))
def test_redact_hides_each_encoding_of_a_known_key(name: str) -> None:
    echoed = echoes(KEY)[name]
    shown = redact(f"401 from the gateway, which echoed {echoed} (check the header)", [KEY])
    assert REDACTED in shown
    assert_nothing_of(KEY, shown)
    assert shown.endswith("(check the header)")


HEADERS = (
    header("deploy.md", "how deploys to the staging cluster work"),
    header("release.md", "the release freeze and who lifts it"),
)
QUERY = "how do I deploy to staging?"
#: Long enough that the echo straddles the 160 characters the error detail was cut to.
PADDING = "The credentials sent were not accepted by this gateway. " * 2


def echo_message(key: str) -> str:
    # Labelled by number: "user:key: …" would be found as an assignment, whatever the key.
    return PADDING + " / ".join(f"echo {n}: {form}" for n, form in enumerate(echoes(key).values()))


@pytest.mark.parametrize("body", ["json", "text"])
async def test_the_openai_compatible_selector_never_shows_an_echoed_key(body: str) -> None:
    message = echo_message(KEY)
    payload: object = {"error": {"message": message}} if body == "json" else message.encode()
    with FakeOpenAI(lambda _body: (401, payload)) as fake:
        selector = OpenAICompatibleSelector(
            base_url=fake.base_url, model="m", timeout=5.0, env={API_KEY_ENV: KEY}
        )
        result = await selector.select(QUERY, HEADERS)
    assert fake.requests[0].headers["authorization"] == f"Bearer {KEY}"
    assert result.degraded is not None and result.degraded.startswith("HTTP 401")
    assert_nothing_of(KEY, result.degraded)
    assert_nothing_of(KEY, repr(result))


async def test_the_anthropic_selector_never_shows_an_echoed_key() -> None:
    fake = FakeAnthropic.shared()
    fake.reset(api_error(401, "authentication_error", echo_message(KEY)))
    client = anthropic.AsyncAnthropic(api_key=KEY, base_url=fake.url, max_retries=0)
    selector = AnthropicSelector(model="m", client=client, fallback=LexicalSelector())
    result = await selector.select(QUERY, HEADERS)
    sent = fake.headers[0]
    assert KEY in sent.get("x-api-key", "") + sent.get("authorization", "")
    assert result.degraded is not None and "401" in result.degraded
    assert_nothing_of(KEY, result.degraded)


async def test_the_extraction_agent_never_shows_an_echoed_key(tmp_path: Path) -> None:
    memory_dir, transcript = tmp_path / "memory", tmp_path / "session.jsonl"
    memory_dir.mkdir()
    transcript.write_text(
        '{"type": "user", "message": {"role": "user", "content": "remember: deploys go '
        'through staging"}, "uuid": "u1", "timestamp": "2026-01-01T00:00:00Z"}\n',
        encoding="utf-8",
    )
    fake = FakeAnthropic.shared()
    fake.reset(api_error(401, "authentication_error", echo_message(KEY)))
    client = anthropic.AsyncAnthropic(api_key=KEY, base_url=fake.url, max_retries=0)
    result = await run_extraction(transcript, memory_dir, client=client, settings=Settings())
    assert result.status == "error" and result.reason is not None
    assert_nothing_of(KEY, result.reason)
    assert_nothing_of(KEY, format_result(result))
