"""Links, definition, hover, references, the budget lens and rename, in both presets."""

from __future__ import annotations

from lsp_helpers import INDEX, Workspace, encoding_of, open_doc, pos, units
from lsprotocol import types
from pytest_lsp import LanguageClient


def _doc(uri: str) -> types.TextDocumentIdentifier:
    return types.TextDocumentIdentifier(uri=uri)


async def test_document_links_in_index_use_client_encoding(
    client: LanguageClient, workspace: Workspace
) -> None:
    uri = open_doc(client, workspace, "MEMORY.md")
    links = await client.text_document_document_link_async(
        types.DocumentLinkParams(text_document=_doc(uri))
    )
    assert links is not None
    targets = {link.target for link in links}
    assert targets == {
        workspace.uri_of("release-freeze.md"),
        workspace.uri_of("user-role.md"),
        workspace.uri_of("data-retention.md"),
    }  # missing.md is not linked: there is nothing to open
    cjk = next(link for link in links if link.target == workspace.uri_of("data-retention.md"))
    line = INDEX.split("\n")[4]
    start = line.index("data-retention.md")
    encoding = encoding_of(client)
    assert cjk.range.start == pos(4, units(line[:start], encoding))
    assert cjk.range.end.character - cjk.range.start.character == len("data-retention.md")


async def test_wiki_links_resolve_by_name(client: LanguageClient, workspace: Workspace) -> None:
    uri = open_doc(client, workspace, "release-freeze.md")
    links = await client.text_document_document_link_async(
        types.DocumentLinkParams(text_document=_doc(uri))
    )
    assert links is not None
    # [[user-role]] resolves; [[release-calendar]] is a memory that does not exist yet.
    assert [link.target for link in links] == [workspace.uri_of("user-role.md")]


async def test_definition_of_entry_and_wiki_link(
    client: LanguageClient, workspace: Workspace
) -> None:
    index_uri = open_doc(client, workspace, "MEMORY.md")
    result = await client.text_document_definition_async(
        types.DefinitionParams(text_document=_doc(index_uri), position=pos(2, 5))
    )
    assert isinstance(result, list)
    assert [loc.uri for loc in result] == [workspace.uri_of("release-freeze.md")]

    missing = await client.text_document_definition_async(
        types.DefinitionParams(text_document=_doc(index_uri), position=pos(5, 5))
    )
    assert not missing

    topic_uri = open_doc(client, workspace, "release-freeze.md")
    line = workspace.text("release-freeze.md").split("\n")[7]
    col = line.index("[[user-role]]") + 3
    result = await client.text_document_definition_async(
        types.DefinitionParams(text_document=_doc(topic_uri), position=pos(7, col))
    )
    assert isinstance(result, list)
    assert [loc.uri for loc in result] == [workspace.uri_of("user-role.md")]


async def test_hover_shows_frontmatter_and_visibility(
    client: LanguageClient, workspace: Workspace
) -> None:
    uri = open_doc(client, workspace, "MEMORY.md")
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=_doc(uri), position=pos(2, 30))
    )
    assert hover is not None
    assert isinstance(hover.contents, types.MarkupContent)
    text = hover.contents.value
    assert "**release-freeze**" in text and "`project`" in text
    assert "trunk is frozen from app-store submission" in text
    assert "# Release merge freeze" in text  # first lines of the body
    assert "loaded by path A" in text
    assert "candidate #" in text and "for path B" in text
    assert "injected whole" in text

    orphan = open_doc(client, workspace, "orphan.md")
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=_doc(orphan), position=pos(0, 1))
    )
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    assert "not in MEMORY.md" in hover.contents.value


async def test_references_from_topic_to_index_and_links(
    client: LanguageClient, workspace: Workspace
) -> None:
    uri = open_doc(client, workspace, "user-role.md")
    refs = await client.text_document_references_async(
        types.ReferenceParams(
            text_document=_doc(uri),
            position=pos(6, 0),
            context=types.ReferenceContext(include_declaration=False),
        )
    )
    assert refs is not None
    found = sorted((r.uri, r.range.start.line) for r in refs)
    assert found == [
        (workspace.uri_of("MEMORY.md"), 3),
        (workspace.uri_of("release-freeze.md"), 7),
    ]


async def test_budget_code_lens(client: LanguageClient, workspace: Workspace) -> None:
    uri = open_doc(client, workspace, "MEMORY.md")
    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=_doc(uri))
    )
    assert lenses is not None and len(lenses) == 1
    lens = lenses[0]
    assert lens.range.start.line == 0
    assert lens.command is not None
    chars = len(INDEX.strip())
    assert lens.command.title == f"9/200 lines · {chars:,}/25,000 chars"
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=lens.command.command, arguments=lens.command.arguments)
    )
    assert result["summary"] == lens.command.title
    # Topic files have no lens.
    topic = open_doc(client, workspace, "orphan.md")
    assert not await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=_doc(topic))
    )


async def test_will_rename_updates_index_and_links(
    client: LanguageClient, workspace: Workspace
) -> None:
    workspace.path("notes.md").write_text(
        "---\nname: notes\ndescription: d\ntype: project\n---\nSee [role](user-role.md#why).\n"
    )
    edit = await client.workspace_will_rename_files_async(
        types.RenameFilesParams(
            files=[
                types.FileRename(
                    old_uri=workspace.uri_of("user-role.md"),
                    new_uri=workspace.uri_of("people/ana-role.md"),
                )
            ]
        )
    )
    assert edit is not None and edit.changes is not None
    index_edits = edit.changes[workspace.uri_of("MEMORY.md")]
    assert [(e.range.start.line, e.new_text) for e in index_edits] == [(3, "people/ana-role.md")]
    notes_edits = edit.changes[workspace.uri_of("notes.md")]
    assert [e.new_text for e in notes_edits] == ["people/ana-role.md#why"]


async def test_plain_markdown_outside_memory_dirs_is_left_alone(
    client: LanguageClient, workspace: Workspace, tmp_path
) -> None:
    other = tmp_path / "README.md"
    other.write_text("# Readme\n\n- [x](y.md)\n")
    uri = other.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="markdown", version=1, text=other.read_text()
            )
        )
    )
    assert not await client.text_document_hover_async(
        types.HoverParams(text_document=_doc(uri), position=pos(2, 3))
    )
    assert not await client.text_document_document_link_async(
        types.DocumentLinkParams(text_document=_doc(uri))
    )
