"""``memory/extract`` over LSP when the API echoes the key, or a change's diff shows one: the
result and the progress say ``[redacted]`` (issue 18). The redaction itself is tested in
tests/core/test_extract.py."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from fake_anthropic import FakeAnthropic, api_error, memory_use, message, text
from lsp_helpers import Workspace, topic
from lsprotocol import types
from pytest_lsp import LanguageClient

#: The workspace folder is a memory dir opened directly: the server writes in it only when it is
#: configured (a folder that merely holds a MEMORY.md is served read-only).
pytestmark = pytest.mark.init_options({"memdir": {"directories": ["."]}})


TIMEOUT = 30.0
#: The key the e2e server runs with (tests/lsp/e2e/conftest.py) and a token of a known form.
SERVER_KEY = "test-key"
TOKEN = "npm_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"


def conversation(tmp_path: Path) -> Path:
    transcript = tmp_path / "session.jsonl"
    transcript.write_text(
        json.dumps({"type": "user", "message": {"role": "user", "content": "We ship Fridays."}})
        + "\n",
        encoding="utf-8",
    )
    return transcript


async def test_an_echoed_key_never_reaches_the_client(
    api_client: LanguageClient, workspace: Workspace, fake_api: FakeAnthropic, tmp_path: Path
) -> None:
    client = api_client
    transcript = conversation(tmp_path)
    echo = f"invalid x-api-key: {SERVER_KEY} (and {TOKEN})"
    fake_api.reset(responder=api_error(401, "authentication_error", echo))
    done = client.wait_for_notification("memory/extractResult")
    started = await asyncio.wait_for(
        client.protocol.send_request_async(
            "memory/extract", {"transcript": transcript.as_uri(), "directory": workspace.uri}
        ),
        TIMEOUT,
    )
    result = await asyncio.wait_for(done, TIMEOUT)
    assert result.id == started.id
    assert result.status == "error"
    assert "invalid x-api-key: [redacted] (and [redacted])" in result.reason
    shown = [json.dumps(result.reason)]
    tokens = [t for t in client.progress_reports if str(t).endswith(started.id)]
    for token in tokens:
        for report in client.progress_reports[token]:
            if isinstance(report, types.WorkDoneProgressEnd | types.WorkDoneProgressReport):
                shown.append(report.message or "")
    shown += [m.message for m in client.log_messages]
    for said in shown:
        assert SERVER_KEY not in said and TOKEN not in said


async def test_a_diff_removing_a_key_shows_it_redacted(
    api_client: LanguageClient, workspace: Workspace, fake_api: FakeAnthropic, tmp_path: Path
) -> None:
    client = api_client
    held = topic("publish", "how releases are published", body=f"token {TOKEN}\n")
    workspace.path("publish.md").write_text(held, encoding="utf-8")
    fake_api.reset(
        message(
            memory_use(
                command="str_replace",
                path="/memories/publish.md",
                old_str=f"token {TOKEN}",
                new_str="token: in NPM_TOKEN",
            )
        ),
        message(text("Done.")),
    )
    done = client.wait_for_notification("memory/extractResult")
    params = {"transcript": conversation(tmp_path).as_uri(), "directory": workspace.uri}
    await asyncio.wait_for(
        client.protocol.send_request_async("memory/extract", {**params, "dryRun": True}),
        TIMEOUT,
    )
    result = await asyncio.wait_for(done, TIMEOUT)
    assert result.status == "completed", result.reason
    [diff] = [c.diff for c in result.changes if c.path == "publish.md"]
    assert "-token [redacted]" in diff and "+token: in NPM_TOKEN" in diff
    assert TOKEN not in json.dumps([c.diff for c in result.changes])
    assert workspace.text("publish.md") == held  # a dry run
