"""What the server does with a run's findings is proportional to what changed: an edit converts
only the findings it moved or made, a pull of the same findings converts nothing, a push
republishes only the files whose findings changed; and the first check's objects are kept out
of the garbage collector's full collections."""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from memdir.lint.state import DirState
from memdir_lsp import diagnostics
from memdir_lsp.diagnostics import document_diagnostic, relint, state_of
from memdir_lsp.documents import MemoryDocument
from memdir_lsp.server import JsonResult, MemoryServer

TOPIC = "---\nname: {name}\ndescription: what {name} is about\ntype: user\n---\nData.\n"


def memory_dir(tmp_path: Path, topics: int = 5) -> Path:
    root = tmp_path / "memory"
    root.mkdir()
    entries = [f"- [Topic {n}](topic-{n}.md) — about {n}" for n in range(topics)]
    entries += ["- [Gone](gone.md) — a file not written", "- [Ünïcode](späte.md) — 😀 gone too"]
    (root / "MEMORY.md").write_text("\n".join(entries) + "\n", encoding="utf-8")
    for n in range(topics):
        (root / f"topic-{n}.md").write_text(TOPIC.format(name=f"topic-{n}"), encoding="utf-8")
    (root / "orphan.md").write_text(TOPIC.format(name="orphan"), encoding="utf-8")
    return root


def server_for(root: Path, *, pull: bool) -> MemoryServer:
    server = MemoryServer()
    # pygls's own initialize (no handlers registered on a bare server): a workspace, capabilities.
    for _ in server.protocol.lsp_initialize(
        types.InitializeParams(capabilities=types.ClientCapabilities(), process_id=None)
    ):
        pass
    server.set_directories({root: {"workspace"}})
    state_of(server).pull = pull
    return server


def open_index(server: MemoryServer, root: Path) -> str:
    uri = server.path_to_uri(root / "MEMORY.md")
    text = (root / "MEMORY.md").read_text(encoding="utf-8")
    server.workspace.put_text_document(
        types.TextDocumentItem(uri=uri, language_id="markdown", version=1, text=text)
    )
    return uri


def append_line(server: MemoryServer, uri: str, line: int, text: str, version: int) -> None:
    at = types.Position(line=line, character=0)
    server.workspace.update_text_document(
        types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        types.TextDocumentContentChangePartial(range=types.Range(start=at, end=at), text=text),
    )


@pytest.fixture
def conversions(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """Every finding converted to an LSP diagnostic."""
    seen: list[Any] = []
    original = diagnostics.to_lsp

    def counted(ls: MemoryServer, lines: Any, found: Any) -> types.Diagnostic:
        seen.append(found)
        return original(ls, lines, found)

    monkeypatch.setattr(diagnostics, "to_lsp", counted)
    yield seen


def pull(server: MemoryServer, uri: str, previous: str | None = None) -> Any:
    """The report as the client reads it (an open document's is sent in JSON form)."""
    params = types.DocumentDiagnosticParams(
        text_document=types.TextDocumentIdentifier(uri=uri), previous_result_id=previous
    )
    report = asyncio.run(document_diagnostic(server, params))
    if isinstance(report, JsonResult):
        converter = server.protocol._converter
        return converter.structure(report.value, types.RelatedFullDocumentDiagnosticReport)
    return report


def test_an_edit_converts_only_the_findings_it_made(tmp_path: Path, conversions: list[Any]) -> None:
    root = memory_dir(tmp_path)
    server = server_for(root, pull=True)
    uri = open_index(server, root)
    [directory] = server.directories.values()
    asyncio.run(relint(server, directory))

    first = pull(server, uri)
    assert len(conversions) == len(first.items) >= 2  # the two dangling entries at least

    conversions.clear()
    again = pull(server, uri, first.result_id)
    assert isinstance(again, types.RelatedUnchangedDocumentDiagnosticReport)
    assert again.result_id == first.result_id and conversions == []

    append_line(server, uri, 7, "- [New](new.md) — dangling as well\n", 2)
    edited = pull(server, uri, first.result_id)
    assert [d.code for d in conversions] == ["MEM005"]  # the new line's entry, nothing else
    assert edited.result_id != first.result_id
    # The same as converting every finding afresh.
    index = root / "MEMORY.md"
    fresh = [
        diagnostics.to_lsp(server, server.lines_of(index), d)
        for d in directory_findings(directory, index)
    ]
    assert list(edited.items) == fresh


def directory_findings(directory: Any, path: Path) -> tuple[Any, ...]:
    state = directory.lint_state
    assert isinstance(state, DirState)
    return state.lint().grouped.get(directory.rel(path), ())


def test_a_push_republishes_only_what_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = memory_dir(tmp_path)
    server = server_for(root, pull=False)
    published: list[str] = []
    monkeypatch.setattr(
        server,
        "text_document_publish_diagnostics",
        lambda params: published.append(params.uri),
    )
    [directory] = server.directories.values()
    asyncio.run(relint(server, directory))
    assert server.path_to_uri(root / "orphan.md") in published
    assert server.path_to_uri(root / "MEMORY.md") in published

    published.clear()
    asyncio.run(relint(server, directory))  # nothing changed
    assert published == []

    (root / "topic-1.md").write_text("no frontmatter now\n", encoding="utf-8")
    asyncio.run(relint(server, directory, [root / "topic-1.md"]))
    assert published == [server.path_to_uri(root / "topic-1.md")]


def test_the_first_check_is_frozen_out_of_full_collections(tmp_path: Path) -> None:
    """A full collection walked every object of the first check (0.6 s at 20,000 files)."""
    root = memory_dir(tmp_path)
    server = server_for(root, pull=True)
    [directory] = server.directories.values()
    try:
        asyncio.run(relint(server, directory))
        state = directory.lint_state
        assert isinstance(state, DirState)
        assert not any(tracked is state for tracked in gc.get_objects())  # frozen
    finally:
        gc.unfreeze()


def test_an_edit_during_the_first_check_gets_its_own_findings_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A push client editing while the directory's first check reads every file is answered
    from the file's own findings at once, not when that check is done."""
    root = memory_dir(tmp_path)
    server = server_for(root, pull=False)
    server.editor_settings = dataclasses.replace(server.editor_settings, debounce_ms=0)
    uri = open_index(server, root)
    [directory] = server.directories.values()
    reading, release = threading.Event(), threading.Event()
    refresh = DirState.refresh

    def held(state: DirState, *hooks: Any) -> set[str]:
        reading.set()
        release.wait(30)  # a safety bound: the test releases it
        return refresh(state, *hooks)

    monkeypatch.setattr(DirState, "refresh", held)

    async def scenario() -> list[list[str]]:
        published: list[list[str]] = []
        arrived = asyncio.Event()

        def publish(params: types.PublishDiagnosticsParams) -> None:
            if params.uri == uri:
                published.append([str(d.code) for d in params.diagnostics])
                arrived.set()

        monkeypatch.setattr(server, "text_document_publish_diagnostics", publish)
        first = asyncio.ensure_future(relint(server, directory))
        await asyncio.to_thread(reading.wait, 30)
        append_line(server, uri, 7, "- [Gone](gone.md) — twice now\n", 2)
        await diagnostics.on_document(server, uri, "change")
        await asyncio.wait_for(arrived.wait(), 30)
        assert not first.done()  # still reading: the answer came from the file alone
        release.set()
        await first
        while server.tasks:  # the edit's run, which goes on with the check the edit stopped
            await asyncio.gather(*server.tasks)
        return published

    published = asyncio.run(scenario())
    assert published[0] == ["MEM006"]  # the duplicate entry: MEMORY.md's own rule
    assert "MEM005" in published[-1]  # the directory's findings (dangling entries) follow
    assert len(published) == 2  # the check the edit stopped published nothing (stale text)
    state = directory.lint_state
    assert isinstance(state, DirState) and not state.refresh_owed
    assert set(state.reads.values()) == {1}  # the edit's run went on: nothing read twice


def test_an_open_index_holds_its_lines_once(tmp_path: Path) -> None:
    """The open MEMORY.md's lines are the ones its parse made, not a second list of copies."""
    root = memory_dir(tmp_path, topics=50)
    server = server_for(root, pull=True)
    uri = open_index(server, root)
    [directory] = server.directories.values()
    document = server.workspace.get_text_document(uri)
    assert isinstance(document, MemoryDocument)

    def shared() -> int:
        index = directory.lint_state.index
        return sum(a is b for a, b in zip(document.lf_lines(), index.lines, strict=True))

    asyncio.run(relint(server, directory))
    assert shared() == len(document.lf_lines()) == 53
    append_line(server, uri, 3, "- [New](new.md) — a new line\n", 2)
    asyncio.run(relint(server, directory, [root / "MEMORY.md"]))
    # Each side split the two lines the edit touched for itself; every other line is shared.
    assert shared() == 54 - 2
