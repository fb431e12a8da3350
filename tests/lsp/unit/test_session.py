"""One session per memory directory: it runs the lint engine when told, keeps the latest
findings, and hands each run to the delivery (push republishes only what changed). Told by what
is published, read and run (test doubles, never time)."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import threading
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from memdir.config import Settings
from memdir.lint.state import DirState
from memdir_lsp.directory import MemoryDirectory
from memdir_lsp.server import DocumentEvent, MemoryServer, create_server
from memdir_lsp.session import Events, Session, check_all
from memhelpers import count_disk_reads

TOPIC = "---\nname: {name}\ndescription: what {name} is about\ntype: user\n---\nData.\n"
PULL = types.ClientCapabilities(
    text_document=types.TextDocumentClientCapabilities(
        diagnostic=types.DiagnosticClientCapabilities()
    ),
    workspace=types.WorkspaceClientCapabilities(
        diagnostics=types.DiagnosticWorkspaceClientCapabilities(refresh_support=True)
    ),
)


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
    """Every feature registered; pygls' own initialize (a workspace, capabilities)."""
    server = create_server()
    capabilities = PULL if pull else types.ClientCapabilities()
    for _ in server.protocol.lsp_initialize(
        types.InitializeParams(capabilities=capabilities, process_id=None)
    ):
        pass
    server.set_directories({root: {"workspace"}})
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


@dataclasses.dataclass
class Served:
    """A memory dir served, and what the server delivers of its findings."""

    root: Path
    server: MemoryServer
    session: Session
    #: The URIs published (push) and the requests to pull again (pull).
    published: list[str]
    refreshes: list[object]


def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, pull: bool) -> Served:
    root = memory_dir(tmp_path)
    server = server_for(root, pull=pull)
    published: list[str] = []
    refreshes: list[object] = []
    monkeypatch.setattr(
        server, "text_document_publish_diagnostics", lambda params: published.append(params.uri)
    )
    monkeypatch.setattr(server, "workspace_diagnostic_refresh", refreshes.append)
    return Served(root, server, server.directories[root].session, published, refreshes)


def test_a_push_republishes_only_what_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dir_ = served(tmp_path, monkeypatch, pull=False)
    root, server = dir_.root, dir_.server
    asyncio.run(dir_.session.check(server))
    assert server.path_to_uri(root / "orphan.md") in dir_.published
    assert server.path_to_uri(root / "MEMORY.md") in dir_.published

    dir_.published.clear()
    asyncio.run(dir_.session.check(server))  # nothing changed
    assert dir_.published == []

    (root / "topic-1.md").write_text("no frontmatter now\n", encoding="utf-8")
    asyncio.run(dir_.session.check(server, [root / "topic-1.md"]))
    assert dir_.published == [server.path_to_uri(root / "topic-1.md")]


def test_a_pull_client_is_asked_to_pull_again_only_when_findings_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dir_ = served(tmp_path, monkeypatch, pull=True)
    asyncio.run(dir_.session.check(dir_.server))
    asyncio.run(dir_.session.check(dir_.server, [dir_.root / "topic-2.md"]))  # same findings
    assert len(dir_.refreshes) == 1 and dir_.published == []


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
    reads = count_disk_reads(monkeypatch.setattr)
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
        first = asyncio.ensure_future(directory.session.check(server))
        await asyncio.to_thread(reading.wait, 30)
        append_line(server, uri, 7, "- [Gone](gone.md) — twice now\n", 2)
        await Events().on_document(server, DocumentEvent(uri, "change"))
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
    state = directory.session.state
    assert state is not None and not state.refresh_owed
    # The edit's run went on: nothing read twice (MEMORY.md is the editor's text).
    assert set(reads.values()) == {1} and "MEMORY.md" not in reads


def test_own_findings_are_the_latest_until_the_first_run(tmp_path: Path) -> None:
    """An open file's own findings, given before the directory's first run has read every file,
    are what code actions fix until that run is done (a quick fix asked for at once finds
    them)."""
    root = tmp_path / "memory"
    root.mkdir()
    index = root / "MEMORY.md"
    index.write_text("- [Role](role.md) — who\n- [Role](role.md) — who\n", encoding="utf-8")
    (root / "orphan.md").write_text("# no frontmatter\n", encoding="utf-8")
    directory = MemoryDirectory(root, {"workspace"}, Settings(), text_of=lambda _: None)
    session = directory.session
    own = session._own_findings(index, dt.date.today())
    assert {d.code for d in own} == {"MEM006"}  # the duplicate entry: MEMORY.md's own rule
    assert session.latest(index) == own  # fix-all finds its fix
    session.run([], [], dt.date.today())
    findings = session.findings
    assert findings is not None and {d.code for d in findings["MEMORY.md"]} >= {"MEM005", "MEM006"}
    assert session.latest(index) == findings["MEMORY.md"]  # the full run wins from now on
    assert session.latest(root / "orphan.md") == findings["orphan.md"]


def test_a_debounce_change_keeps_the_state_and_reads_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A settings change that leaves a memory dir's lint settings equal (the debounce, say)
    keeps its lint state: nothing is read again."""
    root = tmp_path / "memory"
    root.mkdir()
    (root / "MEMORY.md").write_text("- [Role](role.md) — who\n", encoding="utf-8")
    (root / "role.md").write_text(TOPIC.format(name="role"), encoding="utf-8")
    server = server_for(root, pull=True)
    monkeypatch.setattr(server, "workspace_diagnostic_refresh", lambda params: None)
    reads = count_disk_reads(monkeypatch.setattr)
    asyncio.run(check_all(server))
    [directory] = server.directories.values()
    before = directory.session.state
    assert isinstance(before, DirState)
    read = dict(reads)

    server.editor_settings = dataclasses.replace(server.editor_settings, debounce_ms=0)
    server.reload_settings()  # as settings_changed does: equal Settings, a new object
    asyncio.run(check_all(server))
    assert directory.session.state is before and dict(reads) == read

    # A lint setting that differs does start over.
    directory.settings = Settings(index_line_limit=100)
    asyncio.run(check_all(server))
    assert directory.session.state is not before
