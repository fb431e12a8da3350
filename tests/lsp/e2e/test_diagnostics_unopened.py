"""Findings of files the editor has not opened, for each way a client takes diagnostics.

VS Code 1.65 takes pushes only: every file is pushed. Neovim 0.11 pulls the documents it has
open but never the workspace, so the server pushes the other files' findings (an orphan) and
hands a file over to pull while it is open. A client that pulls workspace reports (recent VS
Code: it declares workspace refresh support) gets nothing pushed at all.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

import pytest
from lsp_helpers import TIMEOUT, Workspace, codes, diagnostics_for, is_pull, open_doc
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


def close_doc(client: LanguageClient, uri: str) -> None:
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )


async def test_unopened_files_findings_are_pushed(
    client: LanguageClient, workspace: Workspace
) -> None:
    orphan = workspace.uri_of("orphan.md")
    open_doc(client, workspace, "MEMORY.md")
    pushed = await wait_pushed(client, orphan, lambda f: "MEM107" in codes(f))
    assert all(d.source == "memdir" for d in pushed)

    open_doc(client, workspace, "orphan.md")
    if is_pull(client):
        # Open: pull takes over, and the pushed findings are taken back (nothing twice).
        await wait_pushed(client, orphan, lambda f: f == [])
    assert codes(await diagnostics_for(client, orphan)) == codes(pushed)

    # Closed: the client drops what it pulled for it, so it is pushed again.
    close_doc(client, orphan)
    assert codes(await wait_pushed(client, orphan, lambda f: f != [])) == codes(pushed)


def _pull_like_vscode(capabilities: types.ClientCapabilities) -> None:
    """What VS Code ≥ 1.74 with vscode-languageclient ≥ 8 declares: pull and workspace refresh."""
    if capabilities.text_document is None:
        capabilities.text_document = types.TextDocumentClientCapabilities()
    capabilities.text_document.diagnostic = types.DiagnosticClientCapabilities(
        dynamic_registration=True, related_document_support=False
    )
    if capabilities.workspace is None:
        capabilities.workspace = types.WorkspaceClientCapabilities()
    capabilities.workspace.diagnostics = types.DiagnosticWorkspaceClientCapabilities(
        refresh_support=True
    )


@pytest.mark.capabilities.with_args(_pull_like_vscode)
async def test_workspace_pull_clients_get_nothing_pushed(
    client: LanguageClient, workspace: Workspace
) -> None:
    uri = open_doc(client, workspace, "MEMORY.md")
    assert "MEM005" in codes(await diagnostics_for(client, uri))
    report = await client.workspace_diagnostic_async(
        types.WorkspaceDiagnosticParams(previous_result_ids=[])
    )
    named = {item.uri: item for item in report.items}
    orphan = named[workspace.uri_of("orphan.md")]
    assert isinstance(orphan, types.WorkspaceFullDocumentDiagnosticReport)
    assert "MEM107" in codes(list(orphan.items))
    # A publishDiagnostics sent before the answer would have been handled before it.
    assert client.diagnostics == {}


async def test_a_workspace_pull_takes_back_what_was_pushed(
    client: LanguageClient, workspace: Workspace
) -> None:
    """A client without refresh support that pulls workspace reports after all."""
    if not is_pull(client):
        pytest.skip("VS Code 1.65 does not pull")
    orphan = workspace.uri_of("orphan.md")
    open_doc(client, workspace, "MEMORY.md")
    await wait_pushed(client, orphan, lambda f: "MEM107" in codes(f))
    report = await client.workspace_diagnostic_async(
        types.WorkspaceDiagnosticParams(previous_result_ids=[])
    )
    assert orphan in {item.uri for item in report.items}
    assert list(client.diagnostics[orphan]) == []
