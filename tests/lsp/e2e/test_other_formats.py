"""Another agent's memory in the editor: the notice once, no finding, no action that writes.

The workspace folder is an OpenClaw workspace (synthetic, ``tests/other_formats.py``) configured
as a memory dir, so the server would write there if the format allowed it.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from lsp_helpers import Workspace, codes, diagnostics_for, open_doc, request, wait_until
from lsprotocol import types
from other_formats import OPENCLAW, tree_bytes
from pytest_lsp import LanguageClient

TIMEOUT = 15.0
OPENCLAW_FILES = dict(OPENCLAW)

pytestmark = [
    pytest.mark.init_options({"memdir": {"directories": ["."]}}),
    pytest.mark.files(OPENCLAW_FILES),
]


def notices(client: LanguageClient) -> list[str]:
    return [m.message for m in client.messages if "looks like OpenClaw" in m.message]


async def first_notice(client: LanguageClient) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + TIMEOUT
    while not notices(client):
        assert loop.time() < deadline, "no notice shown"
        await asyncio.wait_for(
            client.wait_for_notification("window/showMessage"), deadline - loop.time()
        )


async def test_the_notice_once_and_nothing_checked_or_written(
    client: LanguageClient, workspace: Workspace
) -> None:
    before = tree_bytes(workspace.root)
    await first_notice(client)
    [shown] = notices(client)
    assert shown.startswith(f"memdir: {workspace.root}") and "nothing checked" in shown
    status: Any = await request(client, "memdir/status", {})
    [directory] = status["directories"]
    assert directory["notice"] is not None and directory["notice"] in shown

    uri = open_doc(client, workspace, "MEMORY.md")
    # An edit runs the check again: still no finding, and the notice is not repeated.
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[
                types.TextDocumentContentChangeWholeDocument(
                    text=OPENCLAW["MEMORY.md"] + "Plain prose, no index entry.\n"
                )
            ],
        )
    )
    await request(client, "memdir/status", {})
    assert codes(await diagnostics_for(client, uri)) == []
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(types.Position(2, 0), types.Position(4, 0)),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    assert not actions
    result = await asyncio.wait_for(
        client.protocol.send_request_async(
            "memory/tool", {"command": "create", "path": "/memories/x.md", "file_text": "hi\n"}
        ),
        TIMEOUT,
    )
    assert result.isError is True and "looks like OpenClaw" in result.text
    assert notices(client) == [shown]
    assert tree_bytes(workspace.root) == before


@pytest.mark.lsp_settings({"anyFormat": True, "preview": True})  # MEM004 is a preview rule
async def test_the_editor_setting_checks_it_as_claude_codes(
    client: LanguageClient, workspace: Workspace
) -> None:
    # Checked as Claude Code's: the workspace's long-term notes are content in the index (its
    # daily logs, named for a day, and SOUL.md, named in capitals, are no memories).
    uri = open_doc(client, workspace, "MEMORY.md")
    await wait_until(client, uri, lambda found: "MEM004" in codes(found))
    assert notices(client) == []
