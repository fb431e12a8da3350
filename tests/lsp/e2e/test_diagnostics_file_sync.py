"""Diagnostics of a file created by "Move to topic file" follow the file, not its empty start.

Regression test for the VS Code end-to-end failure (client-vscode/e2e/scenario.js, "diagnostics
of the moved topic file stay in step with the file on disk"): after applying the action, the new
topic file kept MEM101 "no frontmatter" and MEM107 "orphan" in the Problems panel although on
disk it had frontmatter and an index entry.

The server's own results were right. The findings were stale in the client: VS Code pulls
diagnostics of files shown in no editor tab (the new file is edited in a background model) only
through ``workspace/diagnostic``, and applies each report per file, keeping what it has for a
file a report does not mention. The server reported only files *with* findings, so a workspace
pull that landed while the new file was still empty (between ``CreateFile`` and its text) left
MEM101 + MEM107 on it for good. The sequence below is what VS Code sends (taken from a -vv server
log of the e2e run), with that pull made deterministic.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from lsp_helpers import (
    Workspace,
    apply_text_edits,
    encoding_of,
    open_doc,
    pos,
    pull_like_vscode,
    wait_until,
)
from lsprotocol import types
from pytest_lsp import LanguageClient

TIMEOUT = 10.0


def is_pull(client: LanguageClient) -> bool:
    return client.init_result.capabilities.diagnostic_provider is not None  # type: ignore[attr-defined]


class WorkspacePullView:
    """What vscode-languageclient shows for a file in no editor tab: workspace reports only.

    A full report replaces the file's findings, an unchanged report keeps them, and a file the
    report does not name keeps them too (vscode-languageclient's
    ``DiagnosticRequestor.pullWorkspaceAsync``).
    """

    def __init__(self) -> None:
        self.items: dict[str, list[types.Diagnostic]] = {}
        self.result_ids: dict[str, str] = {}

    async def pull(self, client: LanguageClient) -> set[str]:
        """One workspace pull; returns the URIs the report named."""
        report = await client.workspace_diagnostic_async(
            types.WorkspaceDiagnosticParams(
                previous_result_ids=[
                    types.PreviousResultId(uri=uri, value=value)
                    for uri, value in self.result_ids.items()
                ]
            )
        )
        for item in report.items:
            if isinstance(item, types.WorkspaceFullDocumentDiagnosticReport):
                self.items[item.uri] = list(item.items)
            if item.result_id is not None:
                self.result_ids[item.uri] = item.result_id
        return {item.uri for item in report.items}

    def codes(self, uri: str) -> list[str]:
        return sorted(str(d.code) for d in self.items.get(uri, []))


async def _settled(client: LanguageClient) -> None:
    """Let scheduled re-lints run (a request is answered after the notifications before it)."""
    await asyncio.wait_for(client.protocol.send_request_async("memdir/status", {}), TIMEOUT)


async def _move_action(client: LanguageClient, uri: str) -> types.CodeAction:
    result = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(start=pos(8, 3), end=pos(8, 3)),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    moves = [a for a in result or [] if isinstance(a, types.CodeAction) and "topic" in a.title]
    assert len(moves) == 1, result
    return moves[0]


def _edits_of(edit: types.WorkspaceEdit, uri: str) -> list[types.TextEdit]:
    return [
        e
        for change in edit.document_changes or []
        if isinstance(change, types.TextDocumentEdit) and change.text_document.uri == uri
        for e in change.edits
        if isinstance(e, types.TextEdit)
    ]


async def _replay_move(client: LanguageClient, workspace: Workspace) -> tuple[str, Any]:
    """Apply "Move to topic file" exactly as VS Code does; returns the new file's URI.

    Returns also the workspace-pull view (None for push clients), which has seen the empty
    new file: the moment that made the bug.
    """
    encoding = encoding_of(client)
    index_uri = open_doc(client, workspace, "MEMORY.md")
    await _settled(client)
    view = WorkspacePullView() if is_pull(client) else None
    if view is not None:
        await view.pull(client)
    else:
        # Push: the first check of the whole directory is done (an orphan is a finding only
        # it makes), so each step below is a run of its own and the new file's findings are
        # pushed, not folded into that check.
        orphan = workspace.uri_of("orphan.md")
        await wait_until(client, orphan, lambda found: "MEM107" in {str(d.code) for d in found})
    action = await _move_action(client, index_uri)
    assert action.edit is not None
    creates = [c for c in action.edit.document_changes or [] if isinstance(c, types.CreateFile)]
    assert len(creates) == 1, action.edit
    new_uri = creates[0].uri
    new_rel = new_uri.rsplit("/", 1)[-1]
    index_text = workspace.text("MEMORY.md")

    # 1. CreateFile: an empty file on disk, then the file-operation notification.
    workspace.path(new_rel).write_text("", encoding="utf-8")
    client.workspace_did_create_files(
        types.CreateFilesParams(files=[types.FileCreate(uri=new_uri)])
    )
    # 2. The edit's text goes into a model VS Code opens for it (in no tab): empty at first.
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=new_uri, language_id="markdown", version=1, text=""
            )
        )
    )
    if view is not None:
        # VS Code re-pulls workspace diagnostics every 2 s and on each refresh; this is the
        # pull that lands before the text arrives.
        await view.pull(client)
        assert {"MEM101", "MEM107"} <= set(view.codes(new_uri)), view.items.get(new_uri)
    new_text = apply_text_edits("", _edits_of(action.edit, new_uri), encoding)
    new_index = apply_text_edits(index_text, _edits_of(action.edit, index_uri), encoding)
    assert new_text.startswith("---\n") and f"]({new_rel})" in new_index
    # 3. The text of both files, as full-text changes.
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=new_uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=new_text)],
        )
    )
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=index_uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=new_index)],
        )
    )
    # 4. "Save All": VS Code closes the background model of the new file before its save
    #    notification arrives; the disk still holds the empty file for a moment.
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=new_uri))
    )
    await _settled(client)
    if view is not None:
        await view.pull(client)
    workspace.path(new_rel).write_text(new_text, encoding="utf-8")
    workspace.path("MEMORY.md").write_text(new_index, encoding="utf-8")
    for uri in (new_uri, index_uri):
        client.text_document_did_save(
            types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
    # 5. The file watcher reports both writes.
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[
                types.FileEvent(uri=new_uri, type=types.FileChangeType.Created),
                types.FileEvent(uri=index_uri, type=types.FileChangeType.Changed),
                types.FileEvent(uri=new_uri, type=types.FileChangeType.Changed),
            ]
        )
    )
    await _settled(client)
    return new_uri, view


async def _assert_clean(client: LanguageClient, new_uri: str, view: Any) -> None:
    if view is None:
        # Push: the new file's last publishDiagnostics says it is clean (one arrives: its
        # close re-lints it from disk).
        await wait_until(client, new_uri, lambda found: new_uri in client.diagnostics and not found)
        return
    # The server itself knows the file is clean ...
    report = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=new_uri))
    )
    assert isinstance(report, types.RelatedFullDocumentDiagnosticReport)
    assert list(report.items) == []
    # ... and must tell a client that pulls workspace reports. A workspace pull re-lints after
    # every notification sent before it, so its first answer is the settled one.
    await view.pull(client)
    assert view.codes(new_uri) == [], f"stale findings on the new file: {view.codes(new_uri)}"
    # Once the client holds "no findings", the server stops naming the file.
    assert new_uri not in await view.pull(client)
    assert view.codes(new_uri) == []


async def test_moved_topic_file_diagnostics_follow_the_file(
    client: LanguageClient, workspace: Workspace
) -> None:
    """VS Code (pull) and Neovim (push) capabilities as they come."""
    new_uri, view = await _replay_move(client, workspace)
    await _assert_clean(client, new_uri, view)


@pytest.mark.capabilities.with_args(pull_like_vscode)
async def test_moved_topic_file_diagnostics_follow_the_file_pull_clients(
    client: LanguageClient, workspace: Workspace
) -> None:
    """The e2e's client: VS Code pulling workspace diagnostics (both presets made pull)."""
    new_uri, view = await _replay_move(client, workspace)
    assert view is not None
    await _assert_clean(client, new_uri, view)


async def test_deleted_file_findings_are_cleared_for_pull_clients(
    client: LanguageClient, workspace: Workspace
) -> None:
    """A file with findings deleted outside the editor gets an empty workspace report."""
    if not is_pull(client):
        pytest.skip("push clients get an empty publishDiagnostics (test_diagnostics.py)")
    orphan = workspace.uri_of("orphan.md")
    view = WorkspacePullView()
    await view.pull(client)
    assert "MEM107" in view.codes(orphan)
    workspace.path("orphan.md").unlink()
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=orphan, type=types.FileChangeType.Deleted)]
        )
    )
    await _settled(client)
    await view.pull(client)
    assert view.codes(orphan) == []
