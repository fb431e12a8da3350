"""MEM128's editor fix: merge a near-duplicate memory into the one saying the same (the copy's
own lines appended, the copy deleted, its index entry removed). Offered only to clients that can
delete files; never part of "fix all"."""

from __future__ import annotations

import pytest
from lsp_helpers import (
    Workspace,
    apply_workspace_edit,
    codes,
    encoding_of,
    open_doc,
    quick_fixes,
    topic,
    wait_until,
)
from lsprotocol import types
from pytest_lsp import LanguageClient

STEPS = (
    "The staging deploy runs from the release branch every Tuesday afternoon.\n"
    "First the database migrations run against the staging replica, then the workers restart.\n"
    "The smoke suite must pass before anyone announces the release in the team channel.\n"
)
FILES = {
    "memdir.toml": "preview = true\n",  # MEM128 is a preview rule
    "MEMORY.md": "# Index\n- [Deploy](deploy.md) — the staging deploy, step by step\n"
    "- [Release](release.md) — releasing the billing service to staging\n",
    "deploy.md": topic(
        "deploy",
        "How the staging deploy runs, step by step",
        "project",
        STEPS + "Rollbacks need a ticket.\n",
    ),
    "release.md": topic(
        "release",
        "What to do when releasing the billing service to staging",
        "project",
        STEPS + "Ask QA to sign off the release notes by Friday, then ping the on-call.\n",
    ),
}


def _deletes(action: types.CodeAction) -> list[str]:
    assert action.edit is not None
    return [c.uri for c in action.edit.document_changes or [] if isinstance(c, types.DeleteFile)]


@pytest.mark.files(FILES)
async def test_merge_quick_fix(client: LanguageClient, workspace: Workspace) -> None:
    uri = open_doc(client, workspace, "deploy.md")
    found = await wait_until(client, uri, lambda f: "MEM128" in codes(f))
    [diagnostic] = [d for d in found if d.code == "MEM128"]
    [action] = await quick_fixes(client, uri, diagnostic)
    assert action.title == "Merge deploy.md into release.md (and delete deploy.md)"
    assert action.is_preferred and action.kind == types.CodeActionKind.QuickFix
    assert _deletes(action) == [workspace.uri_of("deploy.md")]
    apply_workspace_edit(action.edit, encoding_of(client))  # type: ignore[arg-type]
    assert not workspace.path("deploy.md").exists()
    assert workspace.text("release.md").endswith(
        "then ping the on-call.\n\nRollbacks need a ticket.\n"
    )
    assert "deploy.md" not in workspace.text("MEMORY.md")


def _no_delete(caps: types.ClientCapabilities) -> None:
    assert caps.workspace is not None and caps.workspace.workspace_edit is not None
    caps.workspace.workspace_edit.resource_operations = [
        types.ResourceOperationKind.Create,
        types.ResourceOperationKind.Rename,
    ]


@pytest.mark.files(FILES)
@pytest.mark.capabilities.with_args(_no_delete)
async def test_no_merge_for_a_client_that_cannot_delete(
    client: LanguageClient, workspace: Workspace
) -> None:
    uri = open_doc(client, workspace, "deploy.md")
    found = await wait_until(client, uri, lambda f: "MEM128" in codes(f))
    [diagnostic] = [d for d in found if d.code == "MEM128"]
    # Half a merge (the text added, the copy kept) is no fix: nothing is offered.
    assert await quick_fixes(client, uri, diagnostic) == []
