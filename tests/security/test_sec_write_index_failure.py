"""Issue 26, a full disk: a write whose MEMORY.md update fails says so on every face (the CLI
exits non-zero), and its journal stays so that the next writer repairs the index.

Before: ``delete`` and ``rename`` reported success (exit 0) when the file operation fitted and the
index rewrite did not; the warning reached no user, the journal was removed, and MEMORY.md kept
the stale line for good. The failure is made deterministic two ways: in process, the writer's
low-level file write fails with ENOSPC for MEMORY.md only; in a subprocess (CLI, language
server), RLIMIT_FSIZE makes any write past a size fail (EFBIG), and MEMORY.md is the one file
that large.
"""

from __future__ import annotations

import errno
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from memdir.config import Settings
from memdir.writing import confine, results, writer
from memdir.writing.results import WriteError
from memdir.writing.writer import MemoryWriter
from sec_write_helpers import cli_tool, file_size_limit, lsp_tool, mcp_tool, topic

FILES = {
    "deploy.md": topic("deploy", "how deploys work"),
    "team/a.md": topic("a", "first of the team"),
    "team/b.md": topic("b", "second of the team"),
}
INDEX = (
    "# Memory\n\n- [Deploy](deploy.md) — how deploys work\n"
    "- [A](team/a.md) — first of the team\n- [B](team/b.md) — second of the team\n"
)


def build(root: Path, index: str = INDEX) -> Path:
    root.mkdir()
    (root / "MEMORY.md").write_text(index)
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(exist_ok=True)
        (root / rel).write_text(text)
    return root


def full_disk_for_the_index(monkeypatch: pytest.MonkeyPatch) -> None:
    """MEMORY.md cannot be written (ENOSPC); every other file can."""
    real = writer._write_file

    def write_file(target: confine.MemoryPath, shown: str, text: str) -> None:
        if target.rel == "MEMORY.md":
            raise OSError(errno.ENOSPC, "No space left on device")
        real(target, shown, text)

    monkeypatch.setattr(writer, "_write_file", write_file)


Op = Callable[[MemoryWriter], object]
#: Every operation that owes MEMORY.md an update, and what the index holds once it is made.
OPERATIONS: dict[str, tuple[Op, Callable[[str], bool]]] = {
    "delete a file": (lambda w: w.delete("deploy.md"), lambda i: "(deploy.md)" not in i),
    "delete a folder": (lambda w: w.delete("team"), lambda i: "team/" not in i),
    "rename a file": (
        lambda w: w.rename("deploy.md", "ops/deploy.md"),
        lambda i: "(ops/deploy.md)" in i and "(deploy.md)" not in i,
    ),
    "rename a folder": (
        lambda w: w.rename("team", "crew"),
        lambda i: "(crew/a.md)" in i and "(team/a.md)" not in i,
    ),
    "create": (lambda w: w.create("new.md", topic("new", "a new one")), lambda i: "(new.md)" in i),
    "edit a description": (
        lambda w: w.str_replace("deploy.md", "how deploys work", "how deploys go out"),
        lambda i: "how deploys go out" in i,
    ),
}


@pytest.mark.parametrize("name", list(OPERATIONS))
def test_a_failed_index_update_is_an_error_and_the_next_writer_repairs_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    root = build(tmp_path / "memory")
    operation, repaired = OPERATIONS[name]
    full_disk_for_the_index(monkeypatch)
    with pytest.raises(WriteError, match=r"MEMORY\.md could not be updated: No space left"):
        operation(MemoryWriter(root, settings=Settings()))
    assert (root / "MEMORY.md").read_text() == INDEX  # stale, and said so
    # While the disk is still full, the next write does not pile a second journal on the
    # first: it says the earlier write is unfinished, and writes nothing.
    with pytest.raises(WriteError, match="interrupted write is not finished"):
        MemoryWriter(root, settings=Settings()).create("other.md", topic("other", "o"))
    assert not (root / "other.md").exists()
    monkeypatch.undo()  # space again
    # The next writer, whatever it writes, makes the update the failed one owed.
    MemoryWriter(root, settings=Settings()).create("later.md", topic("later", "afterwards"))
    index = (root / "MEMORY.md").read_text()
    assert repaired(index), index
    assert "(later.md)" in index


def test_the_error_carries_what_the_operation_did(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = build(tmp_path / "memory")
    full_disk_for_the_index(monkeypatch)
    with pytest.raises(results.IndexNotUpdatedError) as failed:
        MemoryWriter(root, settings=Settings()).delete("deploy.md")
    assert [c.kind for c in failed.value.result.changes] == ["deleted"]
    assert not (root / "deploy.md").exists()


DELETE = {"command": "delete", "path": "/memories/deploy.md"}


def big_index() -> str:
    """An index larger than the subprocess may write (with deploy.md's line in it)."""
    lines = [
        f"- [Note {n}](notes/n{n}.md) — a note of the padding kind, number {n}" for n in range(150)
    ]
    return INDEX + "\n".join(lines) + "\n"


LIMIT = 8 * 1024


def test_the_cli_exits_non_zero_and_says_so(tmp_path: Path) -> None:
    root = build(tmp_path / "memory", big_index())
    assert len(big_index()) > LIMIT
    outcome = cli_tool(root, DELETE, preexec=file_size_limit(LIMIT))
    assert outcome.is_error, outcome
    assert "MEMORY.md could not be updated" in outcome.text
    assert "File too large" in outcome.text
    assert not (root / "deploy.md").exists()
    assert "(deploy.md)" in (root / "MEMORY.md").read_text()
    # The next write, with room again, repairs the index.
    create = {"command": "create", "path": "/memories/z.md", "file_text": topic("z", "zz")}
    assert not cli_tool(root, create).is_error
    index = (root / "MEMORY.md").read_text()
    assert "(deploy.md)" not in index and "(z.md)" in index


async def test_mcp_reports_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = build(tmp_path / "memory")
    full_disk_for_the_index(monkeypatch)
    outcome = await mcp_tool(root, DELETE)
    assert outcome.is_error, outcome
    assert "MEMORY.md could not be updated: No space left on device" in outcome.text


async def test_the_language_server_reports_an_error(tmp_path: Path) -> None:
    root = build(tmp_path / "memory", big_index())
    outcome = await lsp_tool(root, DELETE, preexec=file_size_limit(LIMIT))
    assert outcome.is_error, outcome
    assert "MEMORY.md could not be updated" in outcome.text
    assert "MEMORY.md could not be updated" in outcome.warnings
    assert not (root / "deploy.md").exists()


def test_warnings_reach_the_cli_user(tmp_path: Path) -> None:
    """A warning that did not stop the write (here: MEMORY.md is not UTF-8, so left alone) is
    printed on stderr; stdout is the API's text and memdir's clause on the index."""
    root = build(tmp_path / "memory")
    (root / "MEMORY.md").write_bytes(b"- [Deploy](deploy.md) \xff\n")
    create: dict[str, Any] = {"command": "create", "path": "/memories/n.md", "file_text": "x\n"}
    outcome = cli_tool(root, create)
    assert not outcome.is_error
    assert outcome.text == (
        "File created successfully at: /memories/n.md; MEMORY.md left alone: MEMORY.md is not "
        "UTF-8 text; memdir will not edit it\n"
    )
    assert "warning: MEMORY.md left alone" in outcome.warnings
