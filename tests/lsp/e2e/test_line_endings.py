"""Lone CRs: the core breaks lines at LF (as the agent does), an LSP client at CR too.

LSP 3.17 ends a line at ``\\n``, ``\\r\\n`` or ``\\r``, so in a file with a lone CR the client
counts more lines than the core. The server maps between the two (:mod:`memdir_lsp.positions`):
a diagnostic covers the right text in the client's lines, a quick fix applied by the client's
rules lands where the core meant it, and a position the client sends names the right entry.
This test's client model is the LSP's, not :func:`lsp_helpers.apply_text_edits` (LF only), and
its documents are opened with their exact text (``read_text`` would turn each CR into LF).
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from lsp_helpers import (
    Workspace,
    codes,
    encoding_of,
    open_doc,
    quick_fixes,
    topic,
    units,
    wait_until,
)
from lsprotocol import types
from pytest_lsp import LanguageClient

TOKEN = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
INDEX = (
    "# Index\rSee below.\n"
    "- [Role](role.md) — who Ana is\n"
    "- [Notes](notes.md) — where the release notes are\n"
    "- [Role](role.md) — who Ana is\n"
)
FILES = {
    "MEMORY.md": INDEX,
    "role.md": topic("role", "Ana is a backend engineer who is new to React", "user"),
    # The token sits after a lone CR and a character outside the BMP on its client line.
    "notes.md": topic(
        "notes",
        "where the release notes are kept and who writes them",
        body=f"Intro 😀\rThe 😀 token is {TOKEN} here.\n",
    ),
    # The token's line comes after a line with a lone CR.
    "later.md": topic(
        "later",
        "a token that sits one line after a lone carriage return",
        body=f"A\rB\nThe token is {TOKEN} here.\n",
    ),
}


def client_lines(text: str) -> list[str]:
    """``text`` in lines as an LSP client counts them (ends not included)."""
    return re.split(r"\r\n|\r|\n", text)


def offset(text: str, position: types.Position, encoding: str) -> int:
    """A client position as an index into ``text``, with the LSP's line ends."""
    starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", text)]
    line = client_lines(text)[position.line]
    index = 0
    while index < len(line) and units(line[:index], encoding) < position.character:
        index += 1
    return starts[position.line] + index


def covered(text: str, range_: types.Range, encoding: str) -> str:
    return text[offset(text, range_.start, encoding) : offset(text, range_.end, encoding)]


def apply(text: str, edits: list[types.TextEdit], encoding: str) -> str:
    spans = sorted(
        (
            (offset(text, e.range.start, encoding), offset(text, e.range.end, encoding), e.new_text)
            for e in edits
        ),
        reverse=True,
    )
    for start, end, new_text in spans:
        text = text[:start] + new_text + text[end:]
    return text


def edits_of(action: types.CodeAction, uri: str) -> list[types.TextEdit]:
    assert action.edit is not None
    found = list((action.edit.changes or {}).get(uri, []))
    for change in action.edit.document_changes or []:
        if isinstance(change, types.TextDocumentEdit) and change.text_document.uri == uri:
            found += [e for e in change.edits if isinstance(e, types.TextEdit)]
    return found


@pytest.mark.files(FILES)
async def test_a_diagnostic_after_a_lone_cr_covers_its_text(
    client: LanguageClient, workspace: Workspace
) -> None:
    encoding = encoding_of(client)
    text = FILES["notes.md"]
    assert workspace.path("notes.md").read_bytes() == text.encode("utf-8")
    uri = open_doc(client, workspace, "notes.md", text)
    found = await wait_until(client, uri, lambda ds: "MEM110" in codes(ds))
    (secret,) = [d for d in found if d.code == "MEM110"]
    assert secret.range.start.line == 6  # the core's line 5, after the lone CR
    assert covered(text, secret.range, encoding) == TOKEN


@pytest.mark.files(FILES)
async def test_a_lone_cr_typed_on_an_earlier_line_moves_the_diagnostic(
    client: LanguageClient, workspace: Workspace
) -> None:
    """The finding and its line are the same for the core; only the client's line moves."""
    encoding = encoding_of(client)
    text = FILES["later.md"]
    uri = open_doc(client, workspace, "later.md", text)

    def secret_on(line: int) -> Callable[[list[types.Diagnostic]], bool]:
        return lambda ds: any(d.code == "MEM110" and d.range.start.line == line for d in ds)

    await wait_until(client, uri, secret_on(7))
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(
                        start=types.Position(line=6, character=1),
                        end=types.Position(line=6, character=1),
                    ),
                    text="\rC",
                )
            ],
        )
    )
    found = await wait_until(client, uri, secret_on(8))
    (secret,) = [d for d in found if d.code == "MEM110"]
    assert covered(text.replace("B\n", "B\rC\n"), secret.range, encoding) == TOKEN


@pytest.mark.files(FILES)
async def test_a_quick_fix_after_a_lone_cr_lands_right(
    client: LanguageClient, workspace: Workspace
) -> None:
    encoding = encoding_of(client)
    uri = open_doc(client, workspace, "MEMORY.md", INDEX)
    found = await wait_until(client, uri, lambda ds: "MEM006" in codes(ds))
    (duplicate,) = [d for d in found if d.code == "MEM006"]
    assert covered(INDEX, duplicate.range, encoding) == "- [Role](role.md) — who Ana is"
    assert duplicate.range.start.line == 4
    (action,) = [
        a for a in await quick_fixes(client, uri, duplicate) if a.title.startswith("Remove")
    ]
    assert apply(INDEX, edits_of(action, uri), encoding) == (
        "# Index\rSee below.\n"
        "- [Role](role.md) — who Ana is\n"
        "- [Notes](notes.md) — where the release notes are\n"
    )


@pytest.mark.files(FILES)
async def test_a_client_position_after_a_lone_cr_names_its_entry(
    client: LanguageClient, workspace: Workspace
) -> None:
    uri = open_doc(client, workspace, "MEMORY.md", INDEX)
    result = await client.text_document_definition_async(
        types.DefinitionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=3, character=5),  # "Notes", the core's line 2
        )
    )
    assert isinstance(result, list)
    assert [loc.uri for loc in result] == [workspace.uri_of("notes.md")]
