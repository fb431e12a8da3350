"""Diagnostics: push (VS Code 1.65) or pull (Neovim 0.11), unsaved text, directory-level
refresh on changes in and outside the editor, quick fixes and fix-all."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import frontmatter
import pytest
from lsp_helpers import (
    FILES,
    INDEX,
    TIMEOUT,
    Workspace,
    apply_workspace_edit,
    codes,
    diagnostics_for,
    encoding_of,
    is_pull,
    open_doc,
    pos,
    quick_fixes,
    wait_until,
)
from lsprotocol import types
from memdir import constants as C
from pytest_lsp import LanguageClient


@pytest.mark.lsp_settings({"preview": True})  # MEM004 is a preview rule
async def test_index_diagnostics_push_or_pull(client: LanguageClient, workspace: Workspace) -> None:
    uri = open_doc(client, workspace, "MEMORY.md")
    # The file's own findings (MEM004) may come first, the directory's (MEM005) with the rest.
    found = await wait_until(client, uri, lambda f: {"MEM004", "MEM005"} <= set(codes(f)))
    assert all(d.source == "memdir" for d in found)
    dangling = next(d for d in found if d.code == "MEM005")
    assert dangling.range.start.line == 5
    assert dangling.severity == types.DiagnosticSeverity.Error
    if not is_pull(client):
        # Push covers every file of the directory, open or not: the orphan is flagged.
        orphan = await wait_until(
            client, workspace.uri_of("orphan.md"), lambda f: "MEM107" in codes(f)
        )
        assert orphan


async def test_unsaved_text_and_incremental_relint(
    client: LanguageClient, workspace: Workspace
) -> None:
    uri = open_doc(client, workspace, "MEMORY.md")
    await wait_until(client, uri, lambda f: "MEM005" in codes(f))
    # Remove the dangling entry in the editor only (not saved).
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(start=pos(5, 0), end=pos(6, 0)), text=""
                )
            ],
        )
    )
    await wait_until(client, uri, lambda f: "MEM005" not in codes(f))
    assert workspace.text("MEMORY.md") == INDEX  # the server never wrote the file


async def test_directory_level_refresh_on_file_created_outside_editor(
    client: LanguageClient, workspace: Workspace
) -> None:
    uri = open_doc(client, workspace, "MEMORY.md")
    await wait_until(client, uri, lambda f: "MEM005" in codes(f))
    # Another program writes the missing file; the watcher tells the server.
    workspace.path("missing.md").write_text(FILES["orphan.md"].replace("orphan", "missing"))
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[
                types.FileEvent(
                    uri=workspace.uri_of("missing.md"), type=types.FileChangeType.Created
                )
            ]
        )
    )
    await wait_until(client, uri, lambda f: "MEM005" not in codes(f))


async def test_orphan_fixed_by_editing_the_index(
    client: LanguageClient, workspace: Workspace
) -> None:
    if is_pull(client):
        pytest.skip("pull clients ask per open document; covered by the push preset")
    orphan_uri = workspace.uri_of("orphan.md")
    await wait_until(client, orphan_uri, lambda f: "MEM107" in codes(f))
    index_uri = open_doc(client, workspace, "MEMORY.md")
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=index_uri, version=2),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(start=pos(6, 0), end=pos(6, 0)),
                    text="- [On call](orphan.md) — PagerDuty escalation\n",
                )
            ],
        )
    )
    # A keystroke in MEMORY.md refreshes another file's directory-level result.
    await wait_until(client, orphan_uri, lambda f: "MEM107" not in codes(f))


async def test_workspace_diagnostic_pull(client: LanguageClient, workspace: Workspace) -> None:
    if not is_pull(client):
        pytest.skip("VS Code 1.65 does not pull; the server pushes instead")
    report = await client.workspace_diagnostic_async(
        types.WorkspaceDiagnosticParams(previous_result_ids=[])
    )
    by_uri = {item.uri: item for item in report.items}
    orphan = by_uri[workspace.uri_of("orphan.md")]
    assert isinstance(orphan, types.WorkspaceFullDocumentDiagnosticReport)
    assert "MEM107" in codes(list(orphan.items))
    # Unchanged results come back as "unchanged".
    again = await client.workspace_diagnostic_async(
        types.WorkspaceDiagnosticParams(
            previous_result_ids=[
                types.PreviousResultId(uri=uri, value=item.result_id or "")
                for uri, item in by_uri.items()
            ]
        )
    )
    assert all(
        isinstance(item, types.WorkspaceUnchangedDocumentDiagnosticReport) for item in again.items
    )


async def test_quick_fixes_for_dangling_entry(client: LanguageClient, workspace: Workspace) -> None:
    uri = open_doc(client, workspace, "MEMORY.md")
    found = await wait_until(client, uri, lambda f: "MEM005" in codes(f))
    dangling = next(d for d in found if d.code == "MEM005")
    actions = await quick_fixes(client, uri, dangling)
    titles = [a.title for a in actions]
    assert any(t.startswith("Create") for t in titles), titles
    assert any(t.startswith("Remove") for t in titles), titles
    assert all(a.kind == types.CodeActionKind.QuickFix for a in actions)
    assert all(list(a.diagnostics or []) == [dangling] for a in actions)
    create = next(a for a in actions if a.title.startswith("Create"))
    assert create.edit is not None
    apply_workspace_edit(create.edit, encoding_of(client))
    post = frontmatter.loads(workspace.text("missing.md"))
    assert post["name"] == "missing" and post["description"] == "this file does not exist"
    assert "type" in post.metadata


async def test_content_in_index_is_a_preview_rule(
    client: LanguageClient, workspace: Workspace
) -> None:
    # Off by default: the directory's findings of the index (MEM005) come with the full run,
    # after the file's own; by then MEM004 would have been there.
    uri = open_doc(client, workspace, "MEMORY.md")
    found = await wait_until(client, uri, lambda f: "MEM005" in codes(f))
    assert "MEM004" not in codes(found)


@pytest.mark.lsp_settings({"preview": True})  # MEM004 is a preview rule
async def test_move_is_the_quick_fix_for_content_in_index(
    client: LanguageClient, workspace: Workspace
) -> None:
    uri = open_doc(client, workspace, "MEMORY.md")
    found = await wait_until(client, uri, lambda f: "MEM004" in codes(f))
    content = next(d for d in found if d.code == "MEM004")
    actions = await quick_fixes(client, uri, content)
    moves = [a for a in actions if a.title.startswith("Move to topic file")]
    assert len(moves) == 1
    assert moves[0].kind == types.CodeActionKind.QuickFix and moves[0].is_preferred
    assert list(moves[0].diagnostics or []) == [content]


@pytest.mark.files(
    {
        "MEMORY.md": "- [Role](role.md) — who\n- [Role](role.md) — who\n",
        "role.md": "# Role\n\nAna is a backend engineer.\n",
        "extra.md": FILES["orphan.md"],
    }
)
async def test_fix_all_applies_safe_fixes(client: LanguageClient, workspace: Workspace) -> None:
    uri = open_doc(client, workspace, "MEMORY.md")
    await wait_until(client, uri, lambda f: "MEM006" in codes(f))
    result = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(start=pos(0, 0), end=pos(0, 0)),
            context=types.CodeActionContext(
                diagnostics=[], only=[types.CodeActionKind.SourceFixAll]
            ),
        )
    )
    actions = [a for a in result or [] if isinstance(a, types.CodeAction)]
    [fix_all] = actions
    assert fix_all.kind == "source.fixAll.memdir" and fix_all.edit is not None
    apply_workspace_edit(fix_all.edit, encoding_of(client))
    text = workspace.text("MEMORY.md")
    assert text.count("(role.md)") == 1


@pytest.mark.files({"MEMORY.md": "- [Role](role.md) — who\n", "role.md": "# Role\n\nAna.\n"})
async def test_frontmatter_skeleton_fix(client: LanguageClient, workspace: Workspace) -> None:
    uri = open_doc(client, workspace, "role.md")
    found = await wait_until(client, uri, lambda f: "MEM101" in codes(f))
    skeleton = next(d for d in found if d.code == "MEM101")
    actions = await quick_fixes(client, uri, skeleton)
    # Nothing in the file says what kind of memory it is: a person picks the type, the guess
    # (what lint attached) preferred.
    assert {a.title for a in actions} == {
        f"Add frontmatter as a `{t}` memory" for t in C.MEMORY_TYPES
    }
    [preferred] = [a for a in actions if a.is_preferred]
    assert preferred.title == "Add frontmatter as a `project` memory"
    [action] = [a for a in actions if a.title == "Add frontmatter as a `user` memory"]
    assert action.edit is not None
    apply_workspace_edit(action.edit, encoding_of(client))
    post = frontmatter.loads(workspace.text("role.md"))
    assert post["name"] == "role" and post["type"] == "user" and "description" in post.metadata
    assert post.content.startswith("# Role")


@pytest.mark.files(
    {
        "MEMORY.md": "- [Role](role.md) — who\n",
        "role.md": "---\nname: role\ndescription: Ana is a backend engineer new to React\n"
        "type: Users\n---\nAna.\n",
    }
)
async def test_unknown_type_fix(client: LanguageClient, workspace: Workspace) -> None:
    uri = open_doc(client, workspace, "role.md")
    found = await wait_until(client, uri, lambda f: "MEM104" in codes(f))
    unknown = next(d for d in found if d.code == "MEM104")
    actions = await quick_fixes(client, uri, unknown)
    # Every type once; the one lint suggests is preferred.
    assert {a.title for a in actions} == {f"Change the type to `{t}`" for t in C.MEMORY_TYPES}
    [preferred] = [a for a in actions if a.is_preferred]
    assert preferred.title == "Change the type to `user`" and preferred.edit is not None
    apply_workspace_edit(preferred.edit, encoding_of(client))
    assert frontmatter.loads(workspace.text("role.md"))["type"] == "user"


async def test_closing_the_only_memory_outside_dirs_sends_nothing(
    client: LanguageClient, workspace: Workspace, tmp_path: Any
) -> None:
    other = tmp_path / "notes.md"
    other.write_text("- [x](nowhere.md)\n\nplain text\n")
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=other.as_uri(), language_id="markdown", version=1, text=other.read_text()
            )
        )
    )
    assert await diagnostics_for(client, other.as_uri()) == []


async def test_file_operations_refresh_directory_results(
    client: LanguageClient, workspace: Workspace
) -> None:
    uri = open_doc(client, workspace, "MEMORY.md")
    await wait_until(client, uri, lambda f: "MEM005" in codes(f))
    # The editor renames a file (it did the move on disk, then notifies the server).
    workspace.path("user-role.md").rename(workspace.path("people.md"))
    client.workspace_did_rename_files(
        types.RenameFilesParams(
            files=[
                types.FileRename(
                    old_uri=workspace.uri_of("user-role.md"), new_uri=workspace.uri_of("people.md")
                )
            ]
        )
    )
    found = await wait_until(client, uri, lambda f: sum(1 for d in f if d.code == "MEM005") == 2)
    assert {d.range.start.line for d in found if d.code == "MEM005"} == {3, 5}
    # Deleting the other dangling target's entry file is seen the same way.
    workspace.path("people.md").rename(workspace.path("user-role.md"))
    client.workspace_did_create_files(
        types.CreateFilesParams(files=[types.FileCreate(uri=workspace.uri_of("user-role.md"))])
    )
    client.workspace_did_delete_files(
        types.DeleteFilesParams(files=[types.FileDelete(uri=workspace.uri_of("people.md"))])
    )
    await wait_until(client, uri, lambda f: sum(1 for d in f if d.code == "MEM005") == 1)


async def test_watchers_registered_when_the_client_allows(
    client: LanguageClient, workspace: Workspace
) -> None:
    # Any request waits for startup, so registrations (sent during startup) are in by now.
    await client.protocol.send_request_async("memdir/status", {})
    registrations = [
        r
        for params in getattr(client, "registrations", [])
        for r in params.registrations
        if r.method == "workspace/didChangeWatchedFiles"
    ]
    caps = client.capabilities
    dynamic = bool(
        caps
        and caps.workspace
        and caps.workspace.did_change_watched_files
        and caps.workspace.did_change_watched_files.dynamic_registration
    )
    if not dynamic:
        assert registrations == []  # Neovim: no dynamic registration, none attempted
        return
    assert len(registrations) == 1
    options = registrations[0].register_options
    globs = [w["globPattern"] for w in options["watchers"]]  # type: ignore[index]
    assert "**/*.md" in globs


async def test_first_check_reports_progress(client: LanguageClient, workspace: Workspace) -> None:
    caps = client.capabilities
    if not (caps and caps.window and caps.window.work_done_progress):
        pytest.skip("the client shows no progress")
    loop = asyncio.get_running_loop()
    deadline = loop.time() + TIMEOUT
    while True:
        ends = [
            token
            for token, reports in client.progress_reports.items()
            if reports and isinstance(reports[-1], types.WorkDoneProgressEnd)
        ]
        if ends:
            break
        assert loop.time() < deadline, client.progress_reports
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(client.wait_for_notification("$/progress"), 1.0)
    reports = client.progress_reports[ends[0]]
    assert isinstance(reports[0], types.WorkDoneProgressBegin)
    assert reports[0].title == "memdir: checking memory"
    # By files read: one report per file here (four topic files), at most one per percent.
    *steps, end = reports[1:]
    assert [
        (s.percentage, s.message) for s in steps if isinstance(s, types.WorkDoneProgressReport)
    ] == [(25 * done, f"{done} of 4 files") for done in range(1, 5)]
    assert len(steps) == 4
    assert isinstance(end, types.WorkDoneProgressEnd) and end.message == "done"


async def test_orphan_quick_fix_adds_an_index_entry(
    client: LanguageClient, workspace: Workspace
) -> None:
    uri = open_doc(client, workspace, "orphan.md")
    found = await wait_until(client, uri, lambda f: "MEM107" in codes(f))
    orphan = next(d for d in found if d.code == "MEM107")
    [action] = await quick_fixes(client, uri, orphan)
    assert action.title == "Add orphan.md to MEMORY.md" and action.is_preferred
    assert action.edit is not None
    apply_workspace_edit(action.edit, encoding_of(client))
    index = workspace.text("MEMORY.md")
    assert index.count("(orphan.md)") == 1
    assert index.startswith(INDEX.split("\n")[0])


def _refresh_support(caps: types.ClientCapabilities) -> None:
    assert caps.workspace is not None
    caps.workspace.diagnostics = types.DiagnosticWorkspaceClientCapabilities(refresh_support=True)


@pytest.mark.capabilities.with_args(_refresh_support)
async def test_pull_clients_are_asked_to_refresh(
    client: LanguageClient, workspace: Workspace
) -> None:
    if not is_pull(client):
        pytest.skip("push clients get new results pushed")
    uri = open_doc(client, workspace, "MEMORY.md")
    await wait_until(client, uri, lambda f: "MEM005" in codes(f))
    before = client.diagnostic_refresh_count
    workspace.path("missing.md").write_text(FILES["orphan.md"].replace("orphan", "missing"))
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[
                types.FileEvent(
                    uri=workspace.uri_of("missing.md"), type=types.FileChangeType.Created
                )
            ]
        )
    )
    # workspace/diagnostic/refresh is a request to the client: count the ones answered.
    loop = asyncio.get_running_loop()
    deadline = loop.time() + TIMEOUT
    while client.diagnostic_refresh_count == before:
        assert loop.time() < deadline, "no workspace/diagnostic/refresh"
        await client.protocol.send_request_async("memdir/status", {})
    assert client.diagnostic_refresh_count > before


LONG_ENTRY = (
    "- [Release train](release-train.md) — the release train leaves every second Tuesday; the "
    "cut is at 10:00 CET, QA signs off by Thursday, and store submission happens Friday morning\n"
)


@pytest.mark.files({"MEMORY.md": LONG_ENTRY})
async def test_long_entry_quick_fix_moves_the_detail(
    client: LanguageClient, workspace: Workspace
) -> None:
    uri = open_doc(client, workspace, "MEMORY.md")
    found = await wait_until(client, uri, lambda f: "MEM001" in codes(f))
    long_line = next(d for d in found if d.code == "MEM001")
    actions = await quick_fixes(client, uri, long_line)
    (move,) = [a for a in actions if a.title.startswith("Move")]
    assert move.kind == types.CodeActionKind.QuickFix
    assert move.edit is not None
    apply_workspace_edit(move.edit, encoding_of(client))
    post = frontmatter.loads(workspace.text("release-train.md"))
    assert post.content == LONG_ENTRY.split(" — ", 1)[1].rstrip("\n")
    assert len(workspace.text("MEMORY.md").split("\n")[0]) <= 150
