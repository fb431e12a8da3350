"""``memory/newMemory``: the plan of a new memory as a WorkspaceEdit; the server writes nothing."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from lsp_helpers import (
    FILES,
    INDEX,
    Workspace,
    apply_workspace_edit,
    encoding_of,
    open_doc,
    request,
)
from lsprotocol import types
from lsprotocol.converters import get_converter
from pygls.exceptions import JsonRpcInvalidParams
from pytest_lsp import LanguageClient

TIMEOUT = 15.0
SMALL_PRS = {
    "name": "Small pull requests",
    "description": "keep pull requests under 300 lines and put the reason first",
    "type": "feedback",
}
LINE = (
    "- [Small pull requests](small-pull-requests.md) — keep pull requests under 300 lines and"
    " put the reason first"
)


async def apply(client: LanguageClient, plan: dict[str, Any]) -> None:
    """As a client does: apply the edit, then run the command when there is one."""
    edit = get_converter().structure(plan["edit"], types.WorkspaceEdit)
    apply_workspace_edit(edit, encoding_of(client))
    command = plan["command"]
    if command is not None:
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=command["command"], arguments=command["arguments"])
        )


async def test_the_plan_creates_the_file_and_its_index_line(
    client: LanguageClient, workspace: Workspace
) -> None:
    before = {p.name for p in workspace.root.iterdir()}
    plan = await request(client, "memory/newMemory", {"directory": workspace.uri, **SMALL_PRS})
    assert plan["path"] == "small-pull-requests.md"
    assert plan["uri"] == workspace.uri_of("small-pull-requests.md")
    # A plan: nothing is written until the client applies it.
    assert {p.name for p in workspace.root.iterdir()} == before
    await apply(client, plan)
    assert workspace.text("small-pull-requests.md") == (
        "---\nname: small-pull-requests\n"
        "description: keep pull requests under 300 lines and put the reason first\n"
        "type: feedback\n---\n# Small pull requests\n\n**Why:**\n\n**How to apply:**\n"
    )
    index = workspace.text("MEMORY.md").split("\n")
    # After the last entry, not after the prose at the end of the index.
    assert index[6] == LINE
    assert "\n".join(index[:6] + index[7:]) == INDEX


async def test_a_taken_name_gets_a_number(client: LanguageClient, workspace: Workspace) -> None:
    workspace.path("Small-Pull-Requests.md").write_text("mine\n", encoding="utf-8")
    plan = await request(client, "memory/newMemory", SMALL_PRS)
    assert plan["path"] == "small-pull-requests-2.md"


async def test_the_index_edit_is_against_the_unsaved_buffer(
    client: LanguageClient, workspace: Workspace
) -> None:
    unsaved = "- [Only](only.md) — typed, not saved\n"
    uri = open_doc(client, workspace, "MEMORY.md", unsaved)
    plan = await request(client, "memory/newMemory", SMALL_PRS)
    edit = get_converter().structure(plan["edit"], types.WorkspaceEdit)
    changes = edit.document_changes or []
    if not changes:  # no resource operations: the index edit comes as plain changes
        assert [e.range.start.line for e in (edit.changes or {})[uri]] == [1]
        return
    [index_edit] = [
        c for c in changes if isinstance(c, types.TextDocumentEdit) and c.text_document.uri == uri
    ]
    assert index_edit.text_document.version == 1
    [text_edit] = index_edit.edits
    assert isinstance(text_edit, types.TextEdit)
    assert (text_edit.range.start.line, text_edit.new_text) == (1, LINE + "\n")


@pytest.mark.files({**FILES, "memdir.toml": 'recall_mode = "prefetch"\n'})
async def test_outside_index_mode_the_index_is_left_alone(
    client: LanguageClient, workspace: Workspace
) -> None:
    plan = await request(client, "memory/newMemory", SMALL_PRS)
    await apply(client, plan)
    assert workspace.text("MEMORY.md") == INDEX
    assert workspace.text("small-pull-requests.md").startswith("---\nname: small-pull-requests\n")


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({**SMALL_PRS, "name": "  "}, "`name` must not be empty"),
        ({**SMALL_PRS, "type": "notes"}, "`type` must be one of"),
        ({"name": "x", "type": "user"}, "`description` is required"),
    ],
)
async def test_bad_params_name_the_field(
    client: LanguageClient, params: dict[str, Any], message: str
) -> None:
    with pytest.raises(JsonRpcInvalidParams, match=message):
        await asyncio.wait_for(
            client.protocol.send_request_async("memory/newMemory", params), TIMEOUT
        )
