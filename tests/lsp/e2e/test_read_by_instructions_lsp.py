"""A memory dir the project's instructions name, in the editor (issue 28): the notice once, and
only the rules that hold however the agent reads the files.

The workspace folder is a synthetic project (a ``.git`` folder, a ``CLAUDE.md`` that tells the
agent to read ``.claude/memory/``) whose memory dir is configured; the agent's config dir is in
tmp, so the project's auto memory is elsewhere.
"""

from __future__ import annotations

import asyncio

import pytest
from lsp_helpers import Workspace, codes, open_doc, request, wait_until
from lsprotocol import types
from pytest_lsp import LanguageClient

TIMEOUT = 15.0
AWS = "AKIAQ4ZRT7XW2PLM9KDB"
LONG_BODY = "\n".join(f"- step {n}: check the staging deploy log for errors" for n in range(260))
FILES = {
    ".git/HEAD": "ref: refs/heads/main\n",
    "CLAUDE.md": "Read `.claude/memory/` before starting work.\n",
    ".claude/memory/MEMORY.md": "- [Deploys](deploys.md) — how staging deploys are checked\n",
    # No frontmatter (MEM101), past the prefetch's cap (MEM106), a key (MEM110).
    ".claude/memory/deploys.md": f"Staging key: {AWS}\n\n{LONG_BODY}\n",
}

pytestmark = [
    pytest.mark.init_options({"memdir": {"directories": [".claude/memory"]}}),
    pytest.mark.files(FILES),
]


def notices(client: LanguageClient) -> list[str]:
    return [m.message for m in client.messages if "read by the project's instructions" in m.message]


async def test_the_notice_once_and_only_the_rules_that_hold(
    client: LanguageClient, workspace: Workspace
) -> None:
    uri = open_doc(client, workspace, ".claude/memory/deploys.md")
    found = await wait_until(client, uri, lambda found: "MEM110" in codes(found))
    assert not {"MEM101", "MEM106"} & set(codes(found))
    loop = asyncio.get_running_loop()
    deadline = loop.time() + TIMEOUT
    while not notices(client):
        assert loop.time() < deadline, "no notice shown"
        await asyncio.wait_for(
            client.wait_for_notification("window/showMessage"), deadline - loop.time()
        )
    [shown] = notices(client)
    assert shown.startswith(f"memdir: {workspace.path('.claude/memory')}: ")
    assert "CLAUDE.md names .claude/memory/" in shown

    # An edit runs the check again: the same findings, and the notice is not repeated.
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[
                types.TextDocumentContentChangeWholeDocument(
                    text=FILES[".claude/memory/deploys.md"] + "- one more step\n"
                )
            ],
        )
    )
    await request(client, "memdir/status", {})
    found = await wait_until(client, uri, lambda found: "MEM110" in codes(found))
    assert not {"MEM101", "MEM106"} & set(codes(found))
    assert notices(client) == [shown]


@pytest.mark.lsp_settings({"anyFormat": True})
async def test_the_editor_setting_checks_it_as_auto_memory(
    client: LanguageClient, workspace: Workspace
) -> None:
    uri = open_doc(client, workspace, ".claude/memory/deploys.md")
    await wait_until(client, uri, lambda found: {"MEM101", "MEM106"} <= set(codes(found)))
    assert notices(client) == []
