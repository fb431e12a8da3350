"""``memory/tool`` and ``memory/extract``: the write path over LSP.

``memory/tool`` runs one command of the API memory tool on the memory dir and refreshes the
server's view of it. ``memory/extract`` runs the extraction agent in the background against a
loopback fake of the Messages API (``fake_anthropic.FakeAnthropic``, reached through
``ANTHROPIC_BASE_URL``), with work-done progress, cancellation and a result notification.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from fake_anthropic import FakeAnthropic, memory_use, message, text
from lsp_helpers import Workspace
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pytest_lsp import LanguageClient

#: The workspace folder is a memory dir opened directly: the server writes in it only when it is
#: configured (a folder that merely holds a MEMORY.md is served read-only).
pytestmark = pytest.mark.init_options({"memdir": {"directories": ["."]}})


TIMEOUT = 15.0

PNPM = (
    "---\nname: use-pnpm\ndescription: the user wants pnpm, never npm, in this repo\n"
    "type: feedback\n---\nUse pnpm.\n**Why:** the user said so.\n"
)


def tree(top: Path) -> dict[str, bytes]:
    return {
        p.relative_to(top).as_posix(): p.read_bytes()
        for p in sorted(top.rglob("*"))
        if p.is_file() and not p.name.endswith(".lock")
    }


async def tool(client: LanguageClient, **params: Any) -> Any:
    return await asyncio.wait_for(
        client.protocol.send_request_async("memory/tool", params), TIMEOUT
    )


async def invalid(client: LanguageClient, method: str, params: dict[str, Any]) -> str:
    with pytest.raises(JsonRpcInvalidParams) as caught:
        await asyncio.wait_for(client.protocol.send_request_async(method, params), TIMEOUT)
    return str(caught.value)


def is_pull(client: LanguageClient) -> bool:
    return client.init_result.capabilities.diagnostic_provider is not None  # type: ignore[attr-defined]


async def workspace_codes(client: LanguageClient, uri: str) -> list[str]:
    """The findings the server reports for ``uri`` in a workspace pull (no re-read forced)."""
    report = await client.workspace_diagnostic_async(
        types.WorkspaceDiagnosticParams(previous_result_ids=[])
    )
    for item in report.items:
        if item.uri == uri and isinstance(item, types.WorkspaceFullDocumentDiagnosticReport):
            return sorted(str(d.code) for d in item.items)
    return []


# --- memory/tool -----------------------------------------------------------------------------


async def test_memory_tool_create_view_and_refresh(
    client: LanguageClient, workspace: Workspace
) -> None:
    result = await tool(client, command="create", path="/memories/use-pnpm.md", file_text=PNPM)
    lines = workspace.text("MEMORY.md").splitlines()
    [line] = [n for n, entry in enumerate(lines, 1) if "(use-pnpm.md)" in entry]
    assert result.text == (
        "File created successfully at: /memories/use-pnpm.md; "
        f"indexed in MEMORY.md at line {line} (no need to add a line)"
    )
    assert result.isError is False
    assert [(c.kind, c.path) for c in result.changes] == [
        ("created", "use-pnpm.md"),
        ("changed", "MEMORY.md"),
    ]
    assert result.changes[0].uri == workspace.uri_of("use-pnpm.md")
    assert workspace.text("use-pnpm.md") == PNPM
    # Index mode: the writer added its line to MEMORY.md.
    assert "](use-pnpm.md) — the user wants pnpm" in workspace.text("MEMORY.md")

    listing = await tool(client, command="view", path="/memories")
    assert listing.isError is False
    assert listing.text.startswith(
        "Here're the files and directories up to 2 levels deep in /memories"
    )
    assert "/memories/use-pnpm.md" in listing.text
    shown = await tool(client, command="view", path="/memories/use-pnpm.md")
    assert "name: use-pnpm" in shown.text and shown.changes == []

    # camelCase spellings of the tool's fields work too.
    edited = await tool(
        client,
        command="str_replace",
        path="/memories/use-pnpm.md",
        oldStr="Use pnpm.",
        newStr="Use pnpm for installs and scripts.",
    )
    assert edited.isError is False, edited.text
    assert "Use pnpm for installs and scripts." in workspace.text("use-pnpm.md")

    # The write happened outside the editor: the server re-read the directory before answering.
    bare = await tool(client, command="create", path="/memories/notes/bare.md", file_text="x\n")
    assert bare.isError is False
    bare_uri = workspace.uri_of("notes/bare.md")
    if is_pull(client):
        assert "MEM101" in await workspace_codes(client, bare_uri)
    else:
        assert "MEM101" in [str(d.code) for d in client.diagnostics.get(bare_uri, [])]


async def test_memory_tool_refuses_escapes_and_reports_errors(
    client: LanguageClient, workspace: Workspace
) -> None:
    outside = workspace.root.parent
    before = tree(outside)
    escape = await tool(client, command="create", path="/memories/../escape.md", file_text="x")
    assert escape.isError is True
    assert escape.text == "Path /memories/../escape.md would escape /memories directory"
    assert escape.changes == []
    for path in ("/etc/evil.md", "/memories/%2e%2e/escape.md", "/memories/a/../../escape.md"):
        result = await tool(client, command="create", path=path, file_text="x")
        assert result.isError is True, (path, result.text)
    moved = await tool(
        client, command="rename", old_path="/memories/orphan.md", new_path="/memories/../o.md"
    )
    assert moved.isError is True
    gone = await tool(client, command="delete", path="/memories")
    assert gone.isError is True
    assert tree(outside) == before  # nothing written anywhere, inside or out

    missing = await tool(
        client, command="str_replace", path="/memories/nope.md", old_str="a", new_str="b"
    )
    assert missing.isError is True
    assert "does not exist" in missing.text
    exists = await tool(client, command="create", path="/memories/orphan.md", file_text="x")
    assert exists.isError is True and "already exists" in exists.text

    # Not a memory command at all: a JSON-RPC error, not a tool result.
    assert "`command` must be one of" in await invalid(client, "memory/tool", {"command": "nuke"})
    assert "path" in await invalid(client, "memory/tool", {"command": "create", "file_text": "x"})
    message_text = await invalid(
        client, "memory/tool", {"command": "view", "path": "/memories", "directory": "/tmp"}
    )
    assert "file URI" in message_text
    twice = await invalid(
        client,
        "memory/tool",
        {"command": "create", "path": "/memories/x.md", "file_text": "a", "fileText": "b"},
    )
    assert "twice" in twice
    assert tree(outside) == before


# --- memory/extract --------------------------------------------------------------------------


def record(kind: str, content: object, **extra: Any) -> str:
    return json.dumps({"type": kind, "message": {"role": kind, "content": content}, **extra})


def write_transcript(path: Path, *lines: str) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def transcript(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    return write_transcript(
        tmp_path / "session.jsonl",
        record("user", "Always use pnpm, never npm, in this repo.", cwd=str(project)),
        record("assistant", [text("Understood, I will use pnpm.")]),
    )


async def extract(client: LanguageClient, **params: Any) -> tuple[str, Any]:
    """Start an extraction; returns its id and the ``memory/extractResult`` params."""
    done = client.wait_for_notification("memory/extractResult")
    started = await asyncio.wait_for(
        client.protocol.send_request_async("memory/extract", params), TIMEOUT
    )
    result = await asyncio.wait_for(done, TIMEOUT)
    assert result.id == started.id
    return started.id, result


def extraction_reports(client: LanguageClient, job_id: str) -> list[Any]:
    tokens = [t for t in client.progress_reports if str(t).endswith(job_id)]
    assert len(tokens) == 1, list(client.progress_reports)
    return client.progress_reports[tokens[0]]


def supports_progress(client: LanguageClient) -> bool:
    window = client.capabilities.window  # type: ignore[attr-defined]
    return bool(window and window.work_done_progress)


async def test_memory_extract_reports_progress_and_result(
    api_client: LanguageClient, workspace: Workspace, fake_api: FakeAnthropic, transcript: Path
) -> None:
    client = api_client
    fake_api.reset(
        message(text("Let me look first."), memory_use(command="view", path="/memories")),
        message(memory_use(command="create", path="/memories/use-pnpm.md", file_text=PNPM)),
        message(text("Saved one feedback memory.")),
    )
    job_id, result = await extract(
        client, transcript=transcript.as_uri(), model="claude-test", directory=workspace.uri
    )
    assert result.status == "completed", result.reason
    assert result.created == ["use-pnpm.md"]
    assert result.changed == ["MEMORY.md"]
    assert result.deleted == []
    assert result.summary == "Saved one feedback memory."
    assert result.dryRun is False
    assert workspace.text("use-pnpm.md") == PNPM

    # The real SDK talked to the fake, with the key from the server's environment.
    assert fake_api.paths == ["/v1/messages"] * 3
    assert fake_api.requests[0]["model"] == "claude-test"
    assert "test-key" in json.dumps(fake_api.headers[0])
    assert "Always use pnpm" in json.dumps(fake_api.requests[0]["messages"])

    if not supports_progress(client):
        return
    reports = extraction_reports(client, job_id)
    assert isinstance(reports[0], types.WorkDoneProgressBegin)
    assert reports[0].cancellable is True and reports[0].percentage == 0
    assert isinstance(reports[-1], types.WorkDoneProgressEnd)
    assert reports[-1].message == "1 created, 1 changed"
    middle = reports[1:-1]
    assert middle and all(isinstance(r, types.WorkDoneProgressReport) for r in middle)
    percentages = [r.percentage for r in middle]
    assert percentages == sorted(percentages)  # never goes back
    assert percentages[-1] == 60  # turn 3 of 5
    assert any("memory:" in (r.message or "") for r in middle)


async def test_memory_extract_with_a_client_token_and_dry_run(
    api_client: LanguageClient, workspace: Workspace, fake_api: FakeAnthropic, transcript: Path
) -> None:
    client = api_client
    fake_api.reset(
        message(memory_use(command="create", path="/memories/use-pnpm.md", file_text=PNPM)),
        message(text("Would save one memory.")),
    )
    before = tree(workspace.root)
    token = "client-token-1"
    client.progress_reports[token] = []  # the client made this token itself
    _job_id, result = await extract(
        client, transcript=str(transcript), dryRun=True, workDoneToken=token
    )
    assert result.status == "completed"
    assert result.dryRun is True
    assert result.created == ["use-pnpm.md"]
    assert "+name: use-pnpm" in result.changes[0].diff
    assert tree(workspace.root) == before  # a dry run writes nothing
    reports = client.progress_reports[token]
    assert isinstance(reports[0], types.WorkDoneProgressBegin)
    assert "dry run" in reports[0].title
    assert isinstance(reports[-1], types.WorkDoneProgressEnd)


async def test_memory_extract_skips_a_transcript_that_wrote_memory(
    api_client: LanguageClient, workspace: Workspace, fake_api: FakeAnthropic, tmp_path: Path
) -> None:
    path = write_transcript(
        tmp_path / "wrote.jsonl",
        record("user", "remember that we deploy on Tuesdays", cwd=str(tmp_path)),
        record(
            "assistant",
            [
                {
                    "type": "tool_use",
                    "id": "t1",
                    "name": "Write",
                    "input": {"file_path": str(workspace.path("deploys.md")), "content": "x"},
                }
            ],
        ),
    )
    _job_id, result = await extract(api_client, transcript=str(path))
    assert result.status == "skipped"
    assert "already wrote memory" in result.reason
    assert result.created == [] and result.changed == []
    assert fake_api.requests == []  # no model call at all


async def test_memory_extract_cancelled_by_the_client(
    api_client: LanguageClient, workspace: Workspace, fake_api: FakeAnthropic, transcript: Path
) -> None:
    client = api_client
    if not supports_progress(client):
        pytest.skip("cancellation goes through work-done progress")
    fake_api.hold()  # the first model call hangs until released
    done = client.wait_for_notification("memory/extractResult")
    started = await client.protocol.send_request_async(
        "memory/extract", {"transcript": str(transcript)}
    )
    assert await asyncio.to_thread(fake_api.wait_held, TIMEOUT), "the model was never called"
    token = next(t for t in client.progress_reports if str(t).endswith(started.id))
    client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    result = await asyncio.wait_for(done, TIMEOUT)
    fake_api.release()
    assert result.id == started.id
    assert result.status == "cancelled"
    reports = client.progress_reports[token]
    assert isinstance(reports[-1], types.WorkDoneProgressEnd)
    assert reports[-1].message == "cancelled"
    assert not workspace.path("use-pnpm.md").exists()
    # The server is still fine, and the directory lock was released: a new run works.
    fake_api.reset(message(text("Nothing to save.")))
    _job_id, again = await extract(client, transcript=str(transcript))
    assert again.status == "completed"


async def test_memory_extract_invalid_params(
    client: LanguageClient, workspace: Workspace, tmp_path: Path
) -> None:
    assert "`transcript` is required" in await invalid(client, "memory/extract", {})
    assert "no such transcript" in await invalid(
        client, "memory/extract", {"transcript": str(tmp_path / "absent.jsonl")}
    )
    assert "absolute" in await invalid(client, "memory/extract", {"transcript": "session.jsonl"})
    (tmp_path / "t.jsonl").write_text("{}\n", encoding="utf-8")
    assert "dryRun" in await invalid(
        client, "memory/extract", {"transcript": str(tmp_path / "t.jsonl"), "dryRun": "yes"}
    )
    assert "workDoneToken" in await invalid(
        client, "memory/extract", {"transcript": str(tmp_path / "t.jsonl"), "workDoneToken": []}
    )


async def test_custom_methods_are_advertised(client: LanguageClient) -> None:
    result: types.InitializeResult = client.init_result  # type: ignore[attr-defined]
    experimental = result.capabilities.experimental
    assert isinstance(experimental, dict)
    methods = experimental["memdir"]["methods"]
    assert {"memory/tool", "memory/extract", "memory/index", "memdir/status"} <= set(methods)
