"""Freshness in the editor: citations checked against the memory dir's project as it changes,
dates re-judged at midnight, hover and completion of ``last_verified``.

The workspace folder is a real git repository made here; its memory is the agent's memory dir
of that project (under the test run's ``CLAUDE_CONFIG_DIR``). The server runs with a clock the
test moves (``freshness_server.py``); nothing waits by sleeping: every step waits for the
server's next diagnostics.
"""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path

import pytest
from conftest import CONFIG_DIR, SERVER_ENV, client_fixture
from lsp_helpers import Workspace, build, codes, open_doc, pos, wait_until
from lsprotocol import types
from memhelpers import agent_memory_dir, git, git_project
from pytest_lsp import ClientServerConfig, LanguageClient

#: Noon on the day the server believes it is (local time).
NOW = dt.datetime(2027, 3, 15, 12, 0).astimezone()
TODAY = NOW.date()
#: Verified exactly 180 days before today: due today, overdue tomorrow.
VERIFIED = TODAY - dt.timedelta(days=180)

MEMORY = f"""\
---
name: payments
description: where payment retries live and how refunds go
type: project
last_verified: {VERIFIED.isoformat()}
---
Retries live in `src/app.py`; call `retry_payment()` before refunding.
The API freeze ends {TODAY.isoformat()}.
"""
INDEX = "# Memory index\n\n- [Payments](payments.md) — where payment retries live\n"
#: Not in the index: its finding (MEM107) shows that the first check, project included, is done.
ORPHAN = "---\nname: orphan\ndescription: not in the index\ntype: user\n---\nBody.\n"
APP = "def charge(card):\n    return card\n"
UTIL = "def retry_payment(charge):\n    return charge\n"

CONFIG = ClientServerConfig(
    server_command=[sys.executable, str(Path(__file__).with_name("freshness_server.py"))],
    server_env={**SERVER_ENV, "MEMDIR_TEST_NOW": NOW.isoformat()},
)


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    """The project (a git repository with one commit), its memory in the agent's place."""
    root = git_project(
        tmp_path, {"src/app.py": APP, "src/util.py": UTIL, "README.md": "# Payments\n"}
    )
    memory = agent_memory_dir(CONFIG_DIR, root)
    # The citation and deadline rules are preview rules: this memory dir turns them on.
    preview = {"memdir.toml": "preview = true\n"}
    build(memory, {"MEMORY.md": INDEX, "payments.md": MEMORY, "orphan.md": ORPHAN, **preview})
    return Workspace(root)


@pytest.fixture
def memory_dir(workspace: Workspace) -> Path:
    return agent_memory_dir(CONFIG_DIR, workspace.root)


client = client_fixture(CONFIG)


async def settled(client: LanguageClient, memory_dir: Path) -> str:
    """Wait for the first check (the project loaded in it); the memory's URI."""
    await wait_until(client, (memory_dir / "orphan.md").as_uri(), lambda f: "MEM107" in codes(f))
    return (memory_dir / "payments.md").as_uri()


def _changed(client: LanguageClient, *events: tuple[Path, types.FileChangeType]) -> None:
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=path.as_uri(), type=kind) for path, kind in events]
        )
    )


async def test_citations_follow_the_project(
    client: LanguageClient, workspace: Workspace, memory_dir: Path
) -> None:
    uri = await settled(client, memory_dir)
    found = await wait_until(client, uri, lambda f: True)
    assert not {"MEM117", "MEM118", "MEM120", "MEM121"} & set(codes(found))

    # The cited file is deleted.
    app = workspace.path("src/app.py")
    app.unlink()
    _changed(client, (app, types.FileChangeType.Deleted))
    found = await wait_until(client, uri, lambda f: "MEM117" in codes(f))
    [missing] = [d for d in found if d.code == "MEM117"]
    assert "`src/app.py`" in missing.message and missing.range.start.line == 6

    # The cited function is removed from the file that defined it.
    util = workspace.path("src/util.py")
    util.write_text("def charge_again(charge):\n    return charge\n", encoding="utf-8")
    _changed(client, (util, types.FileChangeType.Changed))
    found = await wait_until(client, uri, lambda f: "MEM118" in codes(f))
    assert "`retry_payment()`" in next(d.message for d in found if d.code == "MEM118")

    # Both come back in one batch: both findings go.
    app.write_text(APP, encoding="utf-8")
    util.write_text(UTIL, encoding="utf-8")
    _changed(client, (app, types.FileChangeType.Created), (util, types.FileChangeType.Changed))
    found = await wait_until(client, uri, lambda f: not {"MEM117", "MEM118"} & set(codes(f)))

    # A directory deleted as a whole (one event for the directory).
    for child in workspace.path("src").iterdir():
        child.unlink()
    workspace.path("src").rmdir()
    workspace.path("lib").mkdir()
    workspace.path("lib/other.py").write_text("x = 1\n", encoding="utf-8")
    _changed(
        client,
        (workspace.path("src"), types.FileChangeType.Deleted),
        (workspace.path("lib"), types.FileChangeType.Created),
    )
    await wait_until(client, uri, lambda f: "MEM118" in codes(f))


async def test_a_commit_lists_the_project_again(
    client: LanguageClient, workspace: Workspace, memory_dir: Path
) -> None:
    uri = await settled(client, memory_dir)
    git(workspace.root, "mv", "src/app.py", "src/payments.py")
    git(workspace.root, "commit", "-q", "-m", "rename")
    # Only git's own files are reported changed: the rename is read from git again.
    _changed(
        client,
        (workspace.path(".git/index"), types.FileChangeType.Changed),
        (workspace.path(".git/HEAD"), types.FileChangeType.Changed),
    )
    found = await wait_until(client, uri, lambda f: "MEM117" in codes(f))
    [renamed] = [d for d in found if d.code == "MEM117"]
    assert "renamed to `src/payments.py`" in renamed.message


async def test_project_watched(client: LanguageClient, workspace: Workspace) -> None:
    await client.protocol.send_request_async("memdir/status", {})  # startup done
    caps = client.capabilities
    watched = caps.workspace.did_change_watched_files if caps and caps.workspace else None
    if watched is None or not watched.dynamic_registration:
        return  # Neovim: no dynamic registration
    [registration] = [
        r
        for params in getattr(client, "registrations", [])
        for r in params.registrations
        if r.method == "workspace/didChangeWatchedFiles"
    ][-1:]
    globs = [w["globPattern"] for w in registration.register_options["watchers"]]  # type: ignore[index]
    base = workspace.root.as_uri()
    if watched.relative_pattern_support:
        relative = {(g["baseUri"], g["pattern"]) for g in globs if isinstance(g, dict)}
        assert {(base, "**/*"), (base, ".git/index"), (base, ".git/HEAD")} <= relative
    else:
        assert {"**/*", "**/.git/index", "**/.git/HEAD"} <= set(globs)


async def test_midnight_rejudges_dates(
    client: LanguageClient, workspace: Workspace, memory_dir: Path
) -> None:
    uri = await settled(client, memory_dir)
    found = await wait_until(client, uri, lambda f: True)
    assert not {"MEM120", "MEM121"} & set(codes(found))
    # Just before midnight: the server's own timer fires; no file changes.
    before = dt.datetime.combine(TODAY, dt.time(23, 59, 59, 800_000), NOW.tzinfo)
    client.protocol.notify("test/setClock", {"now": before.isoformat()})
    found = await wait_until(client, uri, lambda f: {"MEM120", "MEM121"} <= set(codes(f)))
    deadline = next(d for d in found if d.code == "MEM121")
    assert "passed 1 days ago" in deadline.message or "passed 1 day" in deadline.message
    assert "181 days ago" in next(d.message for d in found if d.code == "MEM120")


async def test_hover_and_completion(
    client: LanguageClient, workspace: Workspace, memory_dir: Path
) -> None:
    await settled(client, memory_dir)
    doc = Workspace(memory_dir)
    uri = open_doc(client, doc, "payments.md")

    async def hover(line: int, character: int) -> str:
        result = await client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                position=pos(line, character),
            )
        )
        assert result is not None
        assert isinstance(result.contents, types.MarkupContent)
        return result.contents.value

    due = (VERIFIED + dt.timedelta(days=180)).isoformat()
    verified = await hover(4, 3)
    assert verified == (
        f"Last verified {VERIFIED.isoformat()} (180 days ago); due again {due} "
        "(verify_after_days = 180)"
    )
    # The frontmatter's first line: the card, with the same line at its end.
    assert (await hover(0, 1)).endswith(verified)
    assert await hover(6, 20) == "`src/app.py` exists in the project"
    assert await hover(6, 40) == "`retry_payment` appears in the project"

    # Completion of a frontmatter key: last_verified with today's date.
    draft = "---\nname: draft\nla\n---\nBody.\n"
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=draft)],
        )
    )
    result = await client.text_document_completion_async(
        types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=pos(2, 2)
        )
    )
    assert result is not None
    items = result.items if isinstance(result, types.CompletionList) else result
    [item] = [i for i in items if i.label == "last_verified"]
    assert isinstance(item.text_edit, types.TextEdit)
    assert item.text_edit.new_text == f"last_verified: {TODAY.isoformat()}"
