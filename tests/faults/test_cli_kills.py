"""The same kills through the real command line: ``memdir tool`` and ``memdir lint --fix`` are
killed at a kill point (:data:`memdir.writing.files.KILL_AT_ENV`), and the next ``memdir tool``
run, in another process, finishes what they began. The default run kills each command once, at a
random point (the seed is in the output); ``MEMDIR_FAULTS=long`` kills each at every point."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from faulthelpers import (
    assert_old_or_new,
    build,
    drawn_points,
    kill_points,
    leftovers,
    topic,
    visible,
)
from memdir.lint import apply_fixes, lint_directory
from memdir.writing.files import KILL_AT_ENV
from memdir.writing.memory_tool import MemdirMemoryTool

pytestmark = pytest.mark.slow  # a few Python processes per kill

RENAME = {"command": "rename", "old_path": "/memories/deploy.md", "new_path": "/memories/ops/d.md"}
NEXT = {"command": "create", "path": "/memories/next.md", "file_text": topic("next", "next one")}
FIX_FILES = {
    "MEMORY.md": "# Memory\n",
    "orphan.md": topic("orphan", "nobody links me"),
    "bare.md": "No frontmatter at all.\n",
}


def memdir(*args: str, kill_at: int | None = None) -> int:
    env = {k: v for k, v in os.environ.items() if k != KILL_AT_ENV}
    if kill_at is not None:
        env[KILL_AT_ENV] = str(kill_at)
    command = [sys.executable, "-m", "memdir", *args]
    return subprocess.run(command, env=env, capture_output=True, check=False).returncode


def index_lines(state: dict[str, bytes | None]) -> list[str]:
    return sorted((state["MEMORY.md"] or b"").decode().splitlines())


def test_memdir_tool_killed_is_finished_or_undone_by_the_next_run(tmp_path: Path) -> None:
    before = visible(build(tmp_path / "before"))
    root = build(tmp_path / "done")
    count = kill_points(lambda: MemdirMemoryTool(root).run(RENAME))
    after = visible(root)
    assert memdir("tool", "--dir", str(root), json.dumps(NEXT)) == 0
    finished = visible(root)
    root = build(tmp_path / "undone")
    assert memdir("tool", "--dir", str(root), json.dumps(NEXT)) == 0
    undone = visible(root)
    for point in drawn_points(count, 1):
        root = build(tmp_path / f"killed-{point}")
        assert memdir("tool", "--dir", str(root), json.dumps(RENAME), kill_at=point) == -9
        assert_old_or_new(visible(root), before, after)
        assert memdir("tool", "--dir", str(root), json.dumps(NEXT)) == 0
        assert leftovers(root) == [], f"killed at point {point}"
        now = visible(root)
        # The rename is finished (and MEMORY.md follows it) or undone, never half made.
        assert index_lines(now) in (index_lines(finished), index_lines(undone))
        assert {k: v for k, v in now.items() if k != "MEMORY.md"} in (
            {k: v for k, v in finished.items() if k != "MEMORY.md"},
            {k: v for k, v in undone.items() if k != "MEMORY.md"},
        )


def test_memdir_lint_fix_killed_leaves_each_file_old_or_new(tmp_path: Path) -> None:
    before = visible(build(tmp_path / "before", FIX_FILES))
    root = build(tmp_path / "done", FIX_FILES)
    count = kill_points(lambda: apply_fixes(lint_directory(root).diagnostics))
    after = visible(root)
    assert after != before
    for point in drawn_points(count, 1):
        root = build(tmp_path / f"killed-{point}", FIX_FILES)
        assert memdir("lint", "--fix", str(root), kill_at=point) == -signal.SIGKILL
        assert_old_or_new(visible(root), before, after)
        assert memdir("tool", "--dir", str(root), json.dumps(NEXT)) == 0
        assert leftovers(root) == [], f"killed at point {point}"
        # Fixes are written file by file, each old or new: a second --fix finishes the job.
        memdir("lint", "--fix", str(root))
        now = visible(root)
        assert {k: v for k, v in now.items() if k not in ("MEMORY.md", "next.md")} == {
            k: v for k, v in after.items() if k != "MEMORY.md"
        }
        assert set(index_lines(after)) <= set(index_lines(now))
