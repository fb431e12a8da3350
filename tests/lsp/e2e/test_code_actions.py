"""Move to a topic file, and the createFile fallback for clients without resource operations."""

from __future__ import annotations

import frontmatter
import pytest
from lsp_helpers import (
    FILES,
    INDEX,
    Workspace,
    apply_workspace_edit,
    encoding_of,
    open_doc,
    pos,
    topic,
)
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pytest_lsp import LanguageClient


async def _actions(
    client: LanguageClient, uri: str, start: types.Position, end: types.Position | None = None
) -> list[types.CodeAction]:
    result = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(start=start, end=end or start),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    return [a for a in result or [] if isinstance(a, types.CodeAction)]


def _move(actions: list[types.CodeAction]) -> types.CodeAction:
    moves = [a for a in actions if a.title.startswith("Move")]
    assert len(moves) == 1, [a.title for a in actions]
    return moves[0]


async def test_move_block_to_topic_file(client: LanguageClient, workspace: Workspace) -> None:
    uri = open_doc(client, workspace, "MEMORY.md")
    action = _move(await _actions(client, uri, pos(8, 3)))
    assert action.kind == types.CodeActionKind.RefactorExtract
    assert action.edit is not None and action.command is None
    creates = [c for c in action.edit.document_changes or [] if isinstance(c, types.CreateFile)]
    assert [c.uri for c in creates] == [
        workspace.uri_of("deploys-go-through-the-blue-green-pipeline.md")
    ]
    assert creates[0].options is not None and creates[0].options.overwrite is False

    apply_workspace_edit(action.edit, encoding_of(client))
    new_rel = "deploys-go-through-the-blue-green-pipeline.md"
    post = frontmatter.loads(workspace.text(new_rel))
    moved = INDEX.split("\n")[7:9]
    # Nothing is lost: the moved lines are the new file's body, verbatim.
    assert post.content == "\n".join(moved)
    assert post["name"] == "deploys-go-through-the-blue-green-pipeline"
    assert post["description"] == (
        "Deploys go through the blue/green pipeline; never deploy on Fridays"
    )
    assert post["type"] in ("project", "feedback")
    index_lines = workspace.text("MEMORY.md").split("\n")
    assert index_lines[:7] == INDEX.split("\n")[:7]
    new_line = index_lines[7]
    assert new_line.startswith("- [Deploys go through the blue/green pipeline")
    assert f"]({new_rel}) — " in new_line and len(new_line) <= 150
    assert index_lines[8:] == [""]


async def test_move_selection(client: LanguageClient, workspace: Workspace) -> None:
    uri = open_doc(client, workspace, "MEMORY.md")
    # Whole line 9 selected (ends at the start of the next line).
    action = _move(await _actions(client, uri, pos(8, 0), pos(9, 0)))
    assert action.edit is not None
    apply_workspace_edit(action.edit, encoding_of(client))
    created = [p for p in workspace.root.iterdir() if p.name.startswith("the-staging")]
    assert len(created) == 1
    assert frontmatter.loads(created[0].read_text()).content == INDEX.split("\n")[8]
    lines = workspace.text("MEMORY.md").split("\n")
    assert lines[7] == INDEX.split("\n")[7]  # the unselected line stays
    assert lines[8] == (
        "- [The staging database is reset every Monday at 06:00 UTC]"
        "(the-staging-database-is-reset-every-monday-at-06-00-utc.md)"
    )


LONG_HOOK = (
    "the release train leaves every second Tuesday; the cut is at 10:00 CET, QA signs off by "
    "Thursday, and store submission happens Friday morning after the go/no-go meeting"
)


@pytest.mark.files(
    {
        "MEMORY.md": f"- [Release train](release-train.md) — {LONG_HOOK}\n"
        f"- [Freeze](release-freeze.md) — {LONG_HOOK}\n",
        "release-freeze.md": FILES["release-freeze.md"],
    }
)
async def test_move_detail_of_long_entries(client: LanguageClient, workspace: Workspace) -> None:
    uri = open_doc(client, workspace, "MEMORY.md")
    encoding = encoding_of(client)
    # The target does not exist yet: the entry's own file is created with the hook as body.
    action = _move(await _actions(client, uri, pos(0, 5)))
    assert action.edit is not None
    apply_workspace_edit(action.edit, encoding)
    post = frontmatter.loads(workspace.text("release-train.md"))
    assert post.content == LONG_HOOK and post["name"] == "release-train"
    first = workspace.text("MEMORY.md").split("\n")[0]
    assert first.startswith("- [Release train](release-train.md) — ") and len(first) <= 150

    # The target exists: the hook is appended to it rather than starting a second file.
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[
                types.TextDocumentContentChangeWholeDocument(text=workspace.text("MEMORY.md"))
            ],
        )
    )
    action = _move(await _actions(client, uri, pos(1, 5)))
    assert action.title == "Move detail to topic file release-freeze.md"
    assert action.edit is not None
    apply_workspace_edit(action.edit, encoding)
    assert workspace.text("release-freeze.md").endswith(f"\n\n{LONG_HOOK}\n")
    assert workspace.text("release-freeze.md").startswith(FILES["release-freeze.md"])
    assert len(workspace.text("MEMORY.md").split("\n")[1]) <= 150


def _no_resource_operations(caps: types.ClientCapabilities) -> None:
    assert caps.workspace is not None and caps.workspace.workspace_edit is not None
    caps.workspace.workspace_edit.resource_operations = None


@pytest.mark.capabilities.with_args(_no_resource_operations)
@pytest.mark.init_options({"memdir": {"directories": ["."]}})  # the server writes only there
async def test_without_create_support_a_command_creates_the_file(
    client: LanguageClient, workspace: Workspace
) -> None:
    uri = open_doc(client, workspace, "MEMORY.md")
    action = _move(await _actions(client, uri, pos(8, 3)))
    assert action.edit is not None and action.edit.document_changes is None
    assert action.command is not None and action.command.command == "memdir.createFile"
    # As a client does: the edit first, then the command.
    apply_workspace_edit(action.edit, encoding_of(client))
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command=action.command.command, arguments=action.command.arguments
        )
    )
    (created,) = result["created"]
    path = workspace.root / created.rsplit("/", 1)[-1]
    assert frontmatter.loads(path.read_text()).content == "\n".join(INDEX.split("\n")[7:9])
    # Never overwrite: running it again changes nothing.
    path.write_text("edited by the user\n")
    again = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command=action.command.command, arguments=action.command.arguments
        )
    )
    assert again["created"] == [] and path.read_text() == "edited by the user\n"
    # Outside every memory dir: refused.
    outside = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command="memdir.createFile",
            arguments=[[(workspace.root.parent / "x.md").as_uri(), "x"]],
        )
    )
    assert outside["created"] == [] and not (workspace.root.parent / "x.md").exists()
    # Malformed arguments: InvalidParams saying what it takes, not a silent null.
    with pytest.raises(JsonRpcInvalidParams, match=r"\[uri, text\] pairs"):
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="memdir.createFile", arguments=[["only a uri"]])
        )


@pytest.mark.capabilities.with_args(_no_resource_operations)
async def test_without_create_support_no_half_fix_in_a_read_only_dir(
    client: LanguageClient, workspace: Workspace
) -> None:
    # The workspace folder merely holds a MEMORY.md: the server writes nothing there, so an
    # action whose file only its command would create is not offered at all.
    uri = open_doc(client, workspace, "MEMORY.md")
    actions = await _actions(client, uri, pos(8, 3))
    assert not [a for a in actions if a.command is not None]
    with pytest.raises(JsonRpcException, match=r"read-only.*memdir\.directories"):
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command="memdir.createFile", arguments=[[workspace.uri_of("new.md"), "x"]]
            )
        )
    assert not workspace.path("new.md").exists()


async def test_no_move_on_headings_or_topics(client: LanguageClient, workspace: Workspace) -> None:
    uri = open_doc(client, workspace, "MEMORY.md")
    assert not [a for a in await _actions(client, uri, pos(0, 2)) if a.title.startswith("Move")]
    topic_uri = open_doc(client, workspace, "orphan.md")
    assert not [
        a for a in await _actions(client, topic_uri, pos(5, 0)) if a.title.startswith("Move")
    ]


_ = topic
