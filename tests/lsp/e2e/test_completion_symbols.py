"""Completion (file links, frontmatter keys and types, [[names]]) and symbols."""

from __future__ import annotations

from lsp_helpers import Workspace, open_doc, pos
from lsprotocol import types
from pytest_lsp import LanguageClient


def _doc(uri: str) -> types.TextDocumentIdentifier:
    return types.TextDocumentIdentifier(uri=uri)


async def _complete(client: LanguageClient, uri: str, line: int, col: int) -> list[str]:
    result = await client.text_document_completion_async(
        types.CompletionParams(text_document=_doc(uri), position=pos(line, col))
    )
    assert isinstance(result, types.CompletionList)
    items = sorted(result.items, key=lambda i: i.sort_text or i.label)
    return [item.label for item in items]


async def test_file_links_after_paren_unindexed_first(
    client: LanguageClient, workspace: Workspace
) -> None:
    text = workspace.text("MEMORY.md") + "- [On call](\n"
    uri = open_doc(client, workspace, "MEMORY.md", text)
    line = text.split("\n").index("- [On call](")
    labels = await _complete(client, uri, line, len("- [On call]("))
    assert labels[0] == "orphan.md"  # the one file not in the index comes first
    assert set(labels) == {"orphan.md", "release-freeze.md", "user-role.md", "data-retention.md"}


async def test_frontmatter_type_values_and_keys(
    client: LanguageClient, workspace: Workspace
) -> None:
    text = "---\nname: draft\n\ntype: \n---\nBody\n"
    workspace.path("draft.md").write_text(text)
    uri = open_doc(client, workspace, "draft.md", text)
    assert await _complete(client, uri, 3, 6) == sorted(
        ["user", "feedback", "project", "reference"]
    )
    # On the blank line: the keys not present yet.
    assert await _complete(client, uri, 2, 0) == [
        "description",
        "last_verified",
        "metadata",
        "modified",
    ]
    # In the body: nothing.
    result = await client.text_document_completion_async(
        types.CompletionParams(text_document=_doc(uri), position=pos(5, 2))
    )
    assert result is None


async def test_wiki_names(client: LanguageClient, workspace: Workspace) -> None:
    text = workspace.text("release-freeze.md") + "Also [[\n"
    uri = open_doc(client, workspace, "release-freeze.md", text)
    line = len(text.split("\n")) - 2
    result = await client.text_document_completion_async(
        types.CompletionParams(text_document=_doc(uri), position=pos(line, len("Also [[")))
    )
    assert isinstance(result, types.CompletionList)
    labels = {item.label for item in result.items}
    assert labels == {"user-role", "orphan", "数据保留策略"}  # not the file itself
    item = next(i for i in result.items if i.label == "orphan")
    assert isinstance(item.text_edit, types.TextEdit)
    assert item.text_edit.new_text == "orphan]]"


async def test_document_symbols(client: LanguageClient, workspace: Workspace) -> None:
    uri = open_doc(client, workspace, "MEMORY.md")
    symbols = await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=_doc(uri))
    )
    assert symbols is not None
    (heading,) = symbols
    assert isinstance(heading, types.DocumentSymbol)
    assert heading.name == "Memory index"
    assert [c.name for c in heading.children or []] == [
        "Release merge freeze",
        "Ana's role",
        "数据保留策略",
        "Gone",
    ]
    topic = open_doc(client, workspace, "release-freeze.md")
    symbols = await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=_doc(topic))
    )
    assert symbols is not None
    names = [s.name for s in symbols]
    assert names == ["frontmatter", "Release merge freeze"]
    fm = symbols[0]
    assert isinstance(fm, types.DocumentSymbol)
    assert [(c.name, c.detail) for c in fm.children or []] == [
        ("name", "release-freeze"),
        (
            "description",
            "trunk is frozen from app-store submission until the release is live and stable",
        ),
        ("type", "project"),
    ]


async def test_workspace_symbols_search_name_and_description(
    client: LanguageClient, workspace: Workspace
) -> None:
    found = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="pagerduty"))
    assert found is not None
    assert [(s.name, s.location.uri) for s in found] == [  # type: ignore[union-attr]
        ("orphan", workspace.uri_of("orphan.md"))
    ]
    everything = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query=""))
    assert everything is not None and len(everything) == 4


async def test_workspace_symbols_report_progress(
    client: LanguageClient, workspace: Workspace
) -> None:
    token = "symbols-1"
    # A client-provided token: the test client must know it before the first $/progress.
    client.progress_reports.setdefault(token, [])
    await client.workspace_symbol_async(
        types.WorkspaceSymbolParams(query="role", work_done_token=token)
    )
    reports = client.progress_reports[token]
    assert isinstance(reports[0], types.WorkDoneProgressBegin)
    assert isinstance(reports[-1], types.WorkDoneProgressEnd)
