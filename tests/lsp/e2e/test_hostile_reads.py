"""The server on hostile files: links leading out of the memory dir, FIFOs named like memories.

Hover, links and the ``memory/index`` request say what lint says of such a path (MEM113,
MEM114) and never show what lies behind it; nothing blocks on a FIFO. The links and FIFOs are
made after the server started: it reads files when asked, as an editor's user would find them.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from lsp_helpers import Workspace, codes, is_pull, open_doc, pos, request, topic, wait_until
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

SECRET = "SECRET-CONTENT-OUTSIDE"
INDEX = (
    "- [Secret](secret.md) — a link out\n"
    "- [Linked](linked/secret.md) — through a folder leading out\n"
    "- [Pipe](pipe.md) — a FIFO\n"
    "- [Own](own.md) — a memory of this dir\n"
)
FILES = {"MEMORY.md": INDEX, "own.md": topic("own", "a memory of this dir, read as usual")}


def _outside(workspace: Workspace) -> Path:
    outside = workspace.root.parent / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text(topic("secret", f"the {SECRET} file", body=SECRET))
    (outside / "MEMORY.md").write_text(f"- [Secret](secret.md) — {SECRET}\n{SECRET}\n")
    return outside


async def _hover(client: LanguageClient, uri: str, line: int) -> str:
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=pos(line, 4)
        )
    )
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    return hover.contents.value


@pytest.mark.files(FILES)
async def test_hover_never_shows_what_a_link_out_points_to(
    client: LanguageClient, workspace: Workspace
) -> None:
    outside = _outside(workspace)
    (workspace.root / "secret.md").symlink_to(outside / "secret.md")
    (workspace.root / "linked").symlink_to(outside, target_is_directory=True)
    uri = open_doc(client, workspace, "MEMORY.md")
    for line, rel in ((0, "secret.md"), (1, "linked/secret.md")):
        text = await _hover(client, uri, line)
        assert SECRET not in text
        assert f"**{rel}** is not read" in text
        assert "symlink leads outside the memory dir: memdir does not follow it" in text
    assert "a memory of this dir, read as usual" in await _hover(client, uri, 3)


async def _findings(client: LanguageClient, uri: str) -> list[types.Diagnostic]:
    """``uri``'s findings (MEM113 expected): from a workspace pull, or pushed."""
    if not is_pull(client):
        return await wait_until(client, uri, lambda f: "MEM113" in codes(f))
    report = await client.workspace_diagnostic_async(
        types.WorkspaceDiagnosticParams(previous_result_ids=[])
    )
    (item,) = [item for item in report.items if item.uri == uri]
    assert isinstance(item, types.WorkspaceFullDocumentDiagnosticReport)
    return list(item.items)


def _release(fifo: Path) -> None:
    """Let a reader blocked on ``fifo`` go (it sees an empty file), so a regression fails the
    test instead of hanging the run: opening for writing fails when nobody waits to read."""
    try:
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    except OSError:
        return
    os.close(fd)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
@pytest.mark.files(FILES)
async def test_a_fifo_is_reported_and_blocks_nothing(
    client: LanguageClient, workspace: Workspace
) -> None:
    fifo = workspace.root / "pipe.md"
    os.mkfifo(fifo)
    try:
        uri = open_doc(client, workspace, "MEMORY.md")
        found = await _findings(client, workspace.uri_of("pipe.md"))
        assert "cannot read pipe.md: not a regular file (a FIFO)" in found[0].message
        text = await _hover(client, uri, 2)
        assert "**pipe.md** is not read: cannot read pipe.md: not a regular file (a FIFO)" in text
        assert "a memory of this dir, read as usual" in await _hover(client, uri, 3)
    finally:
        _release(fifo)


@pytest.mark.files(FILES)
async def test_index_through_a_link_out_is_not_shown(
    client: LanguageClient, workspace: Workspace
) -> None:
    outside = _outside(workspace)
    (workspace.root / "MEMORY.md").unlink()
    (workspace.root / "MEMORY.md").symlink_to(outside / "MEMORY.md")
    # Refused with lint's reason, as `memdir index` does, not answered as an empty index.
    with pytest.raises(JsonRpcException) as raised:
        await request(client, "memory/index", {})
    assert raised.value.code == -32803
    assert "leads outside the memory dir" in raised.value.message
    assert SECRET not in str(raised.value)
    # An editor opening it shows the file; the server does not read through the link.
    uri = open_doc(client, workspace, "MEMORY.md")
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=pos(0, 4))
    )
    assert hover is None or SECRET not in str(hover.contents)
