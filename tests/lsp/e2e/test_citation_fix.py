"""MEM117's editor fix: a memory citing a file that git shows was renamed is offered the new
path, in the form it was cited, as the preferred quick fix of the finding.

The workspace folder is a real git repository made here, the rename committed before the server
starts; its memory is the agent's memory dir of that project (under the test run's
``CLAUDE_CONFIG_DIR``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import CONFIG_DIR
from lsp_helpers import Workspace, build, codes, quick_fixes, wait_until
from lsprotocol import types
from memhelpers import agent_memory_dir, git, git_project
from pytest_lsp import LanguageClient

MEMORY = (
    "---\nname: retries\ndescription: where payment retries live\ntype: project\n---\n"
    "Retries live in `src/app/old.py:12`; 重试逻辑见 src/app/old.py。\n"
)
INDEX = "# Memory index\n\n- [Retries](retries.md) — where payment retries live\n"


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    """The project, its file renamed in the last commit; its memory in the agent's place."""
    root = git_project(
        tmp_path, {"src/app/old.py": "def retry_payment(order):\n    return order\n"}
    )
    git(root, "mv", "src/app/old.py", "src/app/retry.py")
    git(root, "commit", "-q", "-m", "rename")
    # MEM117 is a preview rule: the directory turns preview on.
    files = {"MEMORY.md": INDEX, "retries.md": MEMORY, "memdir.toml": "preview = true\n"}
    build(agent_memory_dir(CONFIG_DIR, root), files)
    return Workspace(root)


async def test_renamed_path_quick_fix(client: LanguageClient, workspace: Workspace) -> None:
    uri = (agent_memory_dir(CONFIG_DIR, workspace.root) / "retries.md").as_uri()
    found = await wait_until(client, uri, lambda f: codes(f).count("MEM117") == 2)
    offered: dict[str, str] = {}
    for diagnostic in (d for d in found if d.code == "MEM117"):
        # One action, the one lint attached: the preferred quick fix.
        [action] = await quick_fixes(client, uri, diagnostic)
        assert action.kind == types.CodeActionKind.QuickFix and action.is_preferred
        assert action.edit is not None
        edits = [
            e
            for change in action.edit.document_changes or []
            if isinstance(change, types.TextDocumentEdit)
            for e in change.edits
        ] or [e for changes in (action.edit.changes or {}).values() for e in changes]
        [edit] = edits
        assert isinstance(edit, types.TextEdit) and edit.range == diagnostic.range
        offered[action.title] = edit.new_text
    assert offered == {
        "Replace `src/app/old.py:12` with `src/app/retry.py:12` (git shows it was renamed)": (
            "src/app/retry.py:12"
        ),
        "Replace `src/app/old.py` with `src/app/retry.py` (git shows it was renamed)": (
            "src/app/retry.py"
        ),
    }
