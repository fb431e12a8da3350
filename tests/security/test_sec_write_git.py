"""Issue 26, bookkeeping in the repository: nothing of memdir's enters the memory dir, so nothing
enters ``git status``, and a lock planted in the dir is never opened.

Before: ``.memdir.lock`` (and ``.memdir-intent.json``, ``.memdir-extract.lock``) were created in
the memory dir and committed with it (a new user found ``mem/.memdir.lock`` in ``git ls-files``);
a planted ``.memdir.lock`` symlink was the file the lock library opened and created.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from memdir.config import Settings
from memdir.extract.sandbox import extraction_lock
from memdir.writing.memory_tool import MemdirMemoryTool
from memdir.writing.writer import MemoryWriter
from sec_write_helpers import cli_tool, snapshot, topic

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True, timeout=60
    ).stdout


def test_writes_leave_nothing_of_memdirs_for_git(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    memory = repo / "mem"
    memory.mkdir(parents=True)
    (memory / "MEMORY.md").write_text("# Memory\n")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "memories")

    create = {"command": "create", "path": "/memories/deploy.md", "file_text": topic("deploy")}
    assert not cli_tool(memory, create).is_error
    tool = MemdirMemoryTool(memory, settings=Settings())
    tool.run({"command": "rename", "old_path": "/memories/deploy.md", "new_path": "/memories/d.md"})
    MemoryWriter(memory).create("x/y.md", topic("y"))
    MemoryWriter(memory).delete("x")
    with extraction_lock(memory):
        pass

    status = git(repo, "status", "--porcelain", "--untracked-files=all", "--ignored")
    assert sorted(status.splitlines()) == [" M mem/MEMORY.md", "?? mem/d.md"]
    assert ".memdir" not in git(repo, "ls-files", "--others", "--ignored", "--exclude-standard")


def test_a_planted_lock_symlink_is_never_opened(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "MEMORY.md").write_text("# Memory\n")
    victim = tmp_path / "outside" / "important.txt"
    victim.parent.mkdir()
    victim.write_text("keep me\n")
    (memory / ".memdir.lock").symlink_to(victim)
    (memory / ".memdir-extract.lock").symlink_to(tmp_path / "outside" / "created-by-lock")
    before = snapshot(tmp_path / "outside")

    MemoryWriter(memory, settings=Settings()).create("a.md", topic("a"))
    with extraction_lock(memory):
        pass

    assert snapshot(tmp_path / "outside") == before
    assert (memory / ".memdir.lock").is_symlink()
    assert (memory / "a.md").exists()
