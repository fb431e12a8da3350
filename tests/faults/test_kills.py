"""kill -9 at every point of every write: the dir holds the old or the new content, never a
partial file, and the next writer leaves no temp file and an index that agrees with the files.

Each write runs in a forked child that kills itself (SIGKILL, nothing runs after it) at its
N-th kill point (:data:`memdir.writing.files.KILL_AT_ENV`, set here through the module), on a fresh
dir each time. The default run tries two points of each write, drawn at random (the seed is in
the test's output); ``MEMDIR_FAULTS=long`` tries every point of every write.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections.abc import Callable
from pathlib import Path

import anthropic
import fake_anthropic
import httpx2
import pytest
from faulthelpers import (
    CLOCK,
    assert_old_or_new,
    build,
    drawn_points,
    journal,
    kill_points,
    leftovers,
    topic,
    visible,
)
from memdir.config import Settings
from memdir.extract.loop import run_extraction
from memdir.lint import apply_fixes, lint_directory
from memdir.writing import files as write_files
from memdir.writing.journal import JOURNAL_NAME, LEGACY_FILENAMES
from memdir.writing.memory_tool import MemdirMemoryTool
from memdir.writing.writer import MemoryWriter

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")

SAMPLE = 2

Operation = Callable[[Path], object]


def writer(root: Path) -> MemoryWriter:
    return MemoryWriter(root, clock=lambda: CLOCK)


def tool(root: Path, command: dict[str, object]) -> None:
    memory_tool = MemdirMemoryTool(root)
    memory_tool.writer.clock = lambda: CLOCK
    memory_tool.run(command)


def extraction(root: Path) -> None:
    """The extraction agent, answered by a scripted fake of the Messages API: it creates one
    memory and deletes another through the memory tool, then ends its turn."""

    def use(ident: str, **data: object) -> dict[str, object]:
        return {"type": "tool_use", "id": ident, "name": "memory", "input": data}

    replies = iter(
        [
            fake_anthropic.message(
                use("t1", command="create", path="/memories/pnpm.md", file_text=PNPM)
            ),
            fake_anthropic.message(use("t2", command="delete", path="/memories/notes/more.md")),
            fake_anthropic.message({"type": "text", "text": "Saved."}),
        ]
    )
    client = anthropic.AsyncAnthropic(
        api_key="test",
        base_url="http://fake-api.test",
        max_retries=0,
        http_client=httpx2.AsyncClient(
            transport=httpx2.MockTransport(lambda _r: httpx2.Response(200, json=next(replies)))
        ),
    )
    transcript = root.parent / f"{root.name}.jsonl"
    said = {"role": "user", "content": "Always use pnpm, never npm."}
    transcript.write_text(json.dumps({"type": "user", "message": said}) + "\n")
    result = asyncio.run(
        run_extraction(
            transcript, root, client=client, settings=Settings(), project_root=root.parent
        )
    )
    assert result.status == "completed", result.reason


PNPM = topic("use-pnpm", "the user wants pnpm, never npm")

#: The memory tool's five writes (as the CLI, the server, MCP and extraction run them) and the
#: writer's cases they do not reach: folders made, a file that is no memory, folders moved.
OPERATIONS: dict[str, Operation] = {
    "create in new folders": lambda r: writer(r).create("a/b/new.md", topic("new", "deep")),
    "update a file that is no memory": lambda r: writer(r).update("plain.txt", "changed\n"),
    "delete a folder": lambda r: writer(r).delete("notes"),
    "rename a folder": lambda r: writer(r).rename("notes", "archive/notes"),
    "tool create": lambda r: tool(
        r, {"command": "create", "path": "/memories/x.md", "file_text": topic("x", "an x")}
    ),
    "tool str_replace": lambda r: tool(
        r,
        {
            "command": "str_replace",
            "path": "/memories/deploy.md",
            "old_str": "description: how deploys work",
            "new_str": "description: how deploys go out",
        },
    ),
    "tool insert": lambda r: tool(
        r,
        {"command": "insert", "path": "/memories/deploy.md", "insert_line": 6, "insert_text": "x"},
    ),
    "tool delete": lambda r: tool(r, {"command": "delete", "path": "/memories/notes/more.md"}),
    "extraction": extraction,
    "tool rename": lambda r: tool(
        r,
        {
            "command": "rename",
            "old_path": "/memories/deploy.md",
            "new_path": "/memories/ops/deploy-guide.md",
        },
    ),
}


def run_killed_at(root: Path, operation: Operation, step: int) -> bool:
    """Run ``operation`` in a child killed at its ``step``-th kill point; True when it was."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 0
        try:
            write_files._kill_at, write_files._steps = step, 0
            operation(root)
        except BaseException:
            code = 3
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        assert os.WTERMSIG(status) == signal.SIGKILL
        return True
    assert os.WEXITSTATUS(status) == 0, "the write failed without being killed"
    return False


def expected_after(tmp_path: Path, operation: Operation) -> tuple[dict[str, bytes | None], int]:
    """The dir after ``operation`` ran to the end, and how many kill points it passed."""
    root = build(tmp_path / "uninterrupted")
    count = kill_points(lambda: operation(root))
    return visible(root), count


#: Writes made of several operations: what the dir holds between them (each operation is
#: old-or-new on its own, so a kill between two leaves the first done).
BETWEEN: dict[str, list[Operation]] = {
    "extraction": [
        lambda r: tool(r, {"command": "create", "path": "/memories/pnpm.md", "file_text": PNPM})
    ],
}


@pytest.mark.parametrize("name", list(OPERATIONS))
def test_a_write_killed_at_any_point_is_old_or_new_and_recovered(tmp_path: Path, name: str) -> None:
    operation = OPERATIONS[name]
    before = visible(build(tmp_path / "before"))
    after, count = expected_after(tmp_path, operation)
    states = [before, after]
    for n, partial in enumerate(BETWEEN.get(name, [])):
        partial(build(tmp_path / f"between-{n}"))
        states.insert(-1, visible(tmp_path / f"between-{n}"))
    assert after != before
    assert count > 3, "the write has fewer kill points than it has steps"
    for step in drawn_points(count, SAMPLE):
        root = build(tmp_path / f"killed-{step}")
        assert run_killed_at(root, operation, step)
        assert_old_or_new(visible(root), *states)
        # The next writer, whatever it writes, first finishes what the killed one began.
        writer(root).recover()
        assert leftovers(root) == [], f"killed at point {step}"
        assert visible(root) in states, f"killed at point {step}"
    # One past the last point: the write completes.
    root = build(tmp_path / "complete")
    assert not run_killed_at(root, operation, count + 1)
    assert visible(root) == after and leftovers(root) == []


def test_a_killed_write_is_finished_by_the_next_write_of_another_face(tmp_path: Path) -> None:
    root = build(tmp_path / "memory")
    operation = OPERATIONS["tool rename"]
    # Cut between the file's move and MEMORY.md's update.
    step = 1
    while run_killed_at(root, operation, step) and "ops/deploy-guide.md" not in visible(root):
        root = build(tmp_path / f"memory-{step}")
        step += 1
    assert "ops/deploy-guide.md" in visible(root)
    assert "(deploy.md)" in (root / "MEMORY.md").read_text()
    # The memory tool (as the CLI, the server and MCP run it) writes something else ...
    tool(root, {"command": "create", "path": "/memories/z.md", "file_text": topic("z", "zz")})
    index = (root / "MEMORY.md").read_text()
    # ... and the index now has the rename as well as its own entry.
    assert "(ops/deploy-guide.md)" in index and "(deploy.md)" not in index and "(z.md)" in index
    assert leftovers(root) == []


def test_lint_fix_killed_at_any_point(tmp_path: Path) -> None:
    """``memdir lint --fix`` writes each file through the writer: every file old or new, no
    leftover once the next writer ran, and a second --fix finishes the job."""
    files = {
        "MEMORY.md": "# Memory\n",
        "orphan.md": topic("orphan", "nobody links me"),
        "bare.md": "No frontmatter at all.\n",
    }
    before = visible(build(tmp_path / "before", files))

    def fix(root: Path) -> None:
        apply_fixes(lint_directory(root).diagnostics)

    after_root = build(tmp_path / "uninterrupted", files)
    fix(after_root)
    after = visible(after_root)
    assert after != before
    step = 0
    while True:
        step += 1
        root = build(tmp_path / f"killed-{step}", files)
        if not run_killed_at(root, fix, step):
            break
        assert_old_or_new(visible(root), before, after)
        writer(root).recover()
        assert leftovers(root) == []
        fix(root)
        assert visible(root) == after
    assert step > 2


def test_lint_reports_an_interrupted_write_until_the_next_writer(tmp_path: Path) -> None:
    root = build(tmp_path / "memory")
    assert run_killed_at(root, OPERATIONS["tool create"], 3)
    codes = [d.code for d in lint_directory(root).diagnostics]
    assert "MEM122" in codes
    (finding,) = [d for d in lint_directory(root).diagnostics if d.code == "MEM122"]
    assert "interrupted" in finding.message
    writer(root).recover()
    assert "MEM122" not in [d.code for d in lint_directory(root).diagnostics]
    assert leftovers(root) == []


def test_lint_knows_the_writers_names() -> None:
    from memdir.lint.rules import writes as rule

    assert rule._JOURNAL == JOURNAL_NAME
    assert rule._LEGACY == LEGACY_FILENAMES
    assert rule._TEMP.pattern == write_files.TEMP_NAME.pattern


def test_a_torn_intent_is_no_intent(tmp_path: Path) -> None:
    """An intent cut while being written: nothing was done yet, so nothing is redone."""
    root = build(tmp_path / "memory")
    before = visible(root)
    writer(root).recover()  # makes the state folder
    journal(root).write_text(json.dumps({"op": "delete", "path": "deploy.md"})[:20])
    (root / ".memdir-0123456789ab.tmp").write_text("half")
    writer(root).recover()
    assert visible(root) == before and leftovers(root) == []
