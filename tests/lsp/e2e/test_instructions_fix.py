"""MEM127's editor fix: a memory repeating the project's CLAUDE.md is offered "delete this copy"
(the file deleted, its index entry removed). The workspace folder is a project with a CLAUDE.md;
its memory is the agent's memory dir of that project."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import CONFIG_DIR
from lsp_helpers import (
    Workspace,
    apply_workspace_edit,
    build,
    codes,
    encoding_of,
    quick_fixes,
    topic,
    wait_until,
)
from lsprotocol import types
from memhelpers import agent_memory_dir, git_project
from pytest_lsp import LanguageClient

INSTRUCTIONS = (
    "# Working here\n\n## Tests\nAlways run the test suite inside the dev shell with "
    "`make check`; running python directly misses the native libraries and skips half of the "
    "integration tests.\n"
)
COPY = topic(
    "dev-shell",
    "Tests must run inside the dev shell",
    "feedback",
    "Always run the test suite inside the dev shell with `make check`: running python "
    "directly misses the native libraries and skips half of the integration tests.\n",
)


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    """A project with a CLAUDE.md; its memory in the agent's place."""
    root = git_project(tmp_path, {"CLAUDE.md": INSTRUCTIONS, "src/app.py": "x = 1\n"})
    build(
        agent_memory_dir(CONFIG_DIR, root),
        {
            "MEMORY.md": "- [Dev shell](dev-shell.md) — tests run in the dev shell\n",
            "dev-shell.md": COPY,
            "memdir.toml": "preview = true\n",  # MEM127 is a preview rule
        },
    )
    return Workspace(root)


async def test_delete_a_copy_of_claude_md(client: LanguageClient, workspace: Workspace) -> None:
    memory = agent_memory_dir(CONFIG_DIR, workspace.root)
    uri = (memory / "dev-shell.md").as_uri()
    found = await wait_until(client, uri, lambda f: "MEM127" in codes(f))
    [diagnostic] = [d for d in found if d.code == "MEM127"]
    assert diagnostic.severity == types.DiagnosticSeverity.Information
    [action] = await quick_fixes(client, uri, diagnostic)
    assert action.title == "Delete dev-shell.md: CLAUDE.md already says it"
    assert _deletes(action) == [uri]
    apply_workspace_edit(action.edit, encoding_of(client))  # type: ignore[arg-type]
    assert not (memory / "dev-shell.md").exists()
    assert (memory / "MEMORY.md").read_text() == ""


def _deletes(action: types.CodeAction) -> list[str]:
    assert action.edit is not None
    return [c.uri for c in action.edit.document_changes or [] if isinstance(c, types.DeleteFile)]
