"""Findings of files the editor has not opened, and of open files when another file changes.

Neovim 0.11 pulls the documents it has open but never the workspace, and takes no refresh: the
server offers it no pull and pushes every file's findings (an orphan's among them, and an open
index's as soon as a file it links appears). A client that pulls workspace reports and takes
refreshes (VS Code) gets nothing pushed at all.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

import pytest
from lsp_helpers import (
    TIMEOUT,
    Workspace,
    codes,
    is_pull,
    open_doc,
    pull_like_vscode,
    topic,
    wait_until,
)
from lsprotocol import types
from pytest_lsp import LanguageClient


async def wait_pushed(
    client: LanguageClient, uri: str, check: Callable[[list[types.Diagnostic]], bool]
) -> list[types.Diagnostic]:
    """Wait until the last publishDiagnostics of ``uri`` satisfies ``check``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + TIMEOUT
    while not check(found := list(client.diagnostics.get(uri, []))):
        if loop.time() > deadline:
            raise AssertionError(f"timed out; last pushed for {uri}: {found}")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(
                client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS),
                deadline - loop.time(),
            )
    return found


def pull_without_refresh(capabilities: types.ClientCapabilities) -> None:
    """What Neovim 0.11 declares: document pull, and no workspace diagnostics section."""
    if capabilities.text_document is None:
        capabilities.text_document = types.TextDocumentClientCapabilities()
    capabilities.text_document.diagnostic = types.DiagnosticClientCapabilities(
        dynamic_registration=False, related_document_support=False
    )
    if capabilities.workspace is not None:
        capabilities.workspace.diagnostics = None


@pytest.mark.capabilities.with_args(pull_without_refresh)
async def test_clients_without_refresh_get_every_file_pushed(
    client: LanguageClient, workspace: Workspace
) -> None:
    assert not is_pull(client)  # pull could not be kept up to date for such a client
    index = open_doc(client, workspace, "MEMORY.md")
    orphan = workspace.uri_of("orphan.md")
    pushed = await wait_pushed(client, orphan, lambda f: "MEM107" in codes(f))
    assert all(d.source == "memdir" for d in pushed)
    # The open index's own findings may be pushed first; the directory's (MEM005) follow.
    await wait_pushed(client, index, lambda f: "MEM005" in codes(f))

    # The missing topic file appears (saved from the editor): the open index's dangling-entry
    # finding goes at once, with no edit of MEMORY.md.
    missing = workspace.path("missing.md")
    missing.write_text(topic("gone", "a topic file created after the index linked it"))
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=missing.as_uri(), type=types.FileChangeType.Created)]
        )
    )
    await wait_pushed(client, index, lambda f: "MEM005" not in codes(f))


@pytest.mark.capabilities.with_args(pull_like_vscode)
async def test_workspace_pull_clients_get_nothing_pushed(
    client: LanguageClient, workspace: Workspace
) -> None:
    uri = open_doc(client, workspace, "MEMORY.md")
    # The file's own findings may come first; the directory's (MEM005) with the rest.
    await wait_until(client, uri, lambda f: "MEM005" in codes(f))
    report = await client.workspace_diagnostic_async(
        types.WorkspaceDiagnosticParams(previous_result_ids=[])
    )
    named = {item.uri: item for item in report.items}
    orphan = named[workspace.uri_of("orphan.md")]
    assert isinstance(orphan, types.WorkspaceFullDocumentDiagnosticReport)
    assert "MEM107" in codes(list(orphan.items))
    # A publishDiagnostics sent before the answer would have been handled before it.
    assert client.diagnostics == {}
