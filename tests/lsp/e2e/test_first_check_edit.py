"""An edit during a directory's first check stops it; the edit's run goes on with it (issue 18).

The server is ``held_server.py``: its first check holds after reading ``HOLD_AT`` files until an
edit's run waits, so the test edits mid-check with nothing timed. The check the edit stopped
publishes nothing; the edit's run reads the files not read yet (each file once in all), lints
with the edited text, and the findings equal a fresh lint of that text. The work-done progress
of the check goes on where it stopped, never backwards, and ends with "done".
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from pathlib import Path

import pytest
from conftest import SERVER_ENV, client_fixture
from lsp_helpers import TIMEOUT, Workspace, codes, is_pull, open_doc, pos, topic, wait_until
from lsprotocol import types
from memdir.lint.state import DirState
from memdir_lsp.memory_protocol.converter import plain
from pytest_lsp import ClientServerConfig, LanguageClient

TOPICS = 40
HOLD_AT = 10
FILES = {
    "MEMORY.md": "".join(f"- [M{i}](m{i:02d}.md) — hook {i}\n" for i in range(TOPICS - 1))
    + "- [Gone](gone.md) — a memory not written\n",  # dangling; the last topic is an orphan
    **{
        f"m{i:02d}.md": topic(f"m{i:02d}", f"rule number {i} of the handbook")
        for i in range(TOPICS)
    },
}
EDITED = "m05.md"
#: Inserted at the top: the frontmatter no longer opens the file (MEM101).
INSERTED = "# Notes first\n"

CONFIG = ClientServerConfig(
    server_command=[sys.executable, str(Path(__file__).with_name("held_server.py"))],
    server_env={**SERVER_ENV, "MEMDIR_TEST_HOLD_AT": str(HOLD_AT)},
)
client = client_fixture(CONFIG)
pytestmark = pytest.mark.files(FILES)

Findings = dict[str, list[tuple[str, int]]]


def fresh_lint(workspace: Workspace, text: str) -> Findings:
    """What a fresh lint of the disk finds with the edited text on top, by URI."""
    state = DirState(workspace.root)
    state.refresh()
    state.update(workspace.path(EDITED), text)
    return {
        workspace.uri_of(rel): sorted((d.code, d.span.start_line) for d in found)
        for rel, found in state.lint().grouped.items()
    }


def by_uri(found: dict[str, list[types.Diagnostic]]) -> Findings:
    return {
        uri: sorted((str(d.code), d.range.start.line) for d in items)
        for uri, items in found.items()
        if items
    }


def record_pushes(client: LanguageClient) -> list[str]:
    """The URI of every publishDiagnostics from now on, in order (the client keeps the last)."""
    uris: list[str] = []
    features = client.protocol.fm.features
    keep = features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]

    def record(params: types.PublishDiagnosticsParams) -> None:
        uris.append(params.uri)
        keep(params)

    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = record
    return uris


async def ended(client: LanguageClient) -> list[object]:
    """The reports of the first check's work-done progress, once it has ended."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + TIMEOUT
    while True:
        for reports in client.progress_reports.values():
            if reports and isinstance(reports[-1], types.WorkDoneProgressEnd):
                return list(reports)
        assert loop.time() < deadline, client.progress_reports
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(client.wait_for_notification("$/progress"), 1.0)


async def test_an_edit_during_the_first_check_stops_it_and_its_run_goes_on(
    client: LanguageClient, workspace: Workspace
) -> None:
    pushes = record_pushes(client)
    uri = open_doc(client, workspace, EDITED)
    assert await client.protocol.send_request_async("test/held", {}) == HOLD_AT
    at = types.Range(start=pos(0, 0), end=pos(0, 0))
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangePartial(range=at, text=INSERTED)],
        )
    )
    expected = fresh_lint(workspace, INSERTED + workspace.text(EDITED))
    assert "MEM101" in [code for code, _line in expected[uri]]  # the edit shows in the findings

    if is_pull(client):
        # Answered once the directory is checked: after the edit's run finished the check.
        report = await client.workspace_diagnostic_async(
            types.WorkspaceDiagnosticParams(previous_result_ids=[])
        )
        pulled = {
            item.uri: list(item.items)
            for item in report.items
            if isinstance(item, types.WorkspaceFullDocumentDiagnosticReport)
        }
        assert by_uri(pulled) == expected
        # Once, when the edit's run finished the check: none from the check it stopped.
        assert client.diagnostic_refresh_count == 1
    else:
        # MEMORY.md's dangling entry comes with the whole check only; then a round trip, so
        # every publish of that run has arrived.
        await wait_until(client, workspace.uri_of("MEMORY.md"), lambda f: "MEM005" in codes(f))
        await client.protocol.send_request_async("memdir/status", {})
        assert by_uri(client.diagnostics) == expected
        # The edited file's own findings at once, then nothing new; MEMORY.md once, complete.
        # A check not stopped would have published the text before the edit, then replaced it.
        assert pushes.count(uri) == 1 and pushes.count(workspace.uri_of("MEMORY.md")) == 1

    reads = dict(plain(await client.protocol.send_request_async("test/reads", {})))
    assert set(reads.values()) == {1}  # nothing read twice
    # Every file read (the open one may have come from the editor alone).
    assert set(reads) >= set(FILES) - {EDITED}

    reports = await ended(client)
    assert isinstance(reports[0], types.WorkDoneProgressBegin)
    steps = [r for r in reports[1:-1] if isinstance(r, types.WorkDoneProgressReport)]
    percentages = [r.percentage for r in steps]
    assert percentages == sorted(set(percentages))  # increasing, never back after the stop
    held = int(100 * HOLD_AT / TOPICS)
    assert held in percentages and percentages[-1] == 100
    assert steps[percentages.index(held)].message == f"{HOLD_AT} of {TOPICS} files"
    assert steps[-1].message == f"{TOPICS} of {TOPICS} files"
    end = reports[-1]
    assert isinstance(end, types.WorkDoneProgressEnd) and end.message == "done"
