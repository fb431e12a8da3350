"""Issue 26, what one call may do: it cannot take MEMORY.md away, cannot write a file past the
size memdir edits, and cannot delete a folder holding anything but memory files.

Before: ``delete MEMORY.md`` and ``rename MEMORY.md x.md`` succeeded without a word (the agent
loads MEMORY.md every session: losing it silently loses every entry); ``create`` accepted 150 MB;
``delete`` of a folder removed whatever it held (someone's Documents holding a MEMORY.md).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from memdir.config import Settings
from memdir.writing.files import MAX_EDIT_BYTES
from memdir.writing.memory_tool import MemdirMemoryTool
from memdir.writing.results import WriteError
from memdir.writing.writer import MemoryWriter
from sec_write_helpers import cli_tool, snapshot, topic

INDEX = "# Memory\n\n- [Deploy](deploy.md) — how deploys work\n"


@pytest.fixture
def memory(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    root.mkdir()
    (root / "MEMORY.md").write_text(INDEX)
    (root / "deploy.md").write_text(topic("deploy", "how deploys work"))
    return root


def writer(root: Path) -> MemoryWriter:
    return MemoryWriter(root, settings=Settings())


# --- MEMORY.md --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        {"command": "delete", "path": "/memories/MEMORY.md"},
        {"command": "rename", "old_path": "/memories/MEMORY.md", "new_path": "/memories/x.md"},
        {"command": "rename", "old_path": "/memories/MEMORY.md", "new_path": "/memories/a/M.md"},
    ],
)
def test_the_memory_tool_never_takes_the_index_away(memory: Path, command: dict[str, str]) -> None:
    before = snapshot(memory)
    result = MemdirMemoryTool(memory, settings=Settings()).run(command)
    assert result.is_error, result
    assert "refusing to" in result.text and "the index the agent loads" in result.text
    assert snapshot(memory) == before


def test_the_cli_exits_non_zero_on_deleting_the_index(memory: Path) -> None:
    outcome = cli_tool(memory, {"command": "delete", "path": "/memories/MEMORY.md"})
    assert outcome.is_error and "refusing to delete MEMORY.md" in outcome.text
    assert (memory / "MEMORY.md").read_text() == INDEX


def test_the_writer_takes_the_index_away_only_when_asked_by_name(memory: Path) -> None:
    with pytest.raises(WriteError, match=r"refusing to delete MEMORY\.md"):
        writer(memory).delete("MEMORY.md")
    with pytest.raises(WriteError, match=r"refusing to rename .*MEMORY\.md"):
        writer(memory).rename("/" + str(memory / "MEMORY.md").lstrip("/"), "old-index.md")
    assert (memory / "MEMORY.md").read_text() == INDEX
    writer(memory).rename("MEMORY.md", "old-index.md", allow_index=True)
    assert (memory / "old-index.md").read_text() == INDEX
    writer(memory).rename("old-index.md", "MEMORY.md")  # giving it back is always fine
    writer(memory).delete("MEMORY.md", allow_index=True)
    assert not (memory / "MEMORY.md").exists()


def test_a_link_to_the_index_or_a_memory_named_alike_in_a_folder_is_no_index(
    memory: Path,
) -> None:
    (memory / "alias.md").symlink_to("MEMORY.md")
    writer(memory).delete("alias.md")  # the link goes, the index stays
    (memory / "team").mkdir()
    (memory / "team" / "MEMORY.md").write_text("# Team\n")
    writer(memory).delete("team/MEMORY.md")
    assert (memory / "MEMORY.md").read_text() == INDEX


# --- size ---------------------------------------------------------------------------------------

TOO_BIG = "x" * (MAX_EDIT_BYTES + 1)


@pytest.mark.parametrize(
    "operation",
    [
        lambda w: w.create("big.md", TOO_BIG),
        lambda w: w.create("wide.md", "é" * (MAX_EDIT_BYTES // 2 + 1)),  # 2 bytes each
        lambda w: w.update("deploy.md", TOO_BIG),
        lambda w: w.str_replace("deploy.md", "Body.", TOO_BIG),
        lambda w: w.insert("deploy.md", 1, TOO_BIG),
        lambda w: w.rewrite("deploy.md", lambda text: text + TOO_BIG, maintain=False),
    ],
    ids=["create", "create multibyte", "update", "str_replace", "insert", "rewrite"],
)
def test_no_write_produces_a_file_past_the_cap(memory: Path, operation: object) -> None:
    before = snapshot(memory)
    with pytest.raises(WriteError, match=f"more than the {MAX_EDIT_BYTES:,} memdir writes"):
        operation(writer(memory))  # type: ignore[operator]
    assert snapshot(memory) == before


def test_growing_a_file_to_the_cap_by_small_edits_stops_at_it(memory: Path) -> None:
    chunk = "y" * (MAX_EDIT_BYTES // 4)
    w = writer(memory)
    w.create("grow.md", chunk)
    w.insert("grow.md", 1, chunk)
    w.insert("grow.md", 2, chunk)
    with pytest.raises(WriteError, match="a memory is a page"):
        w.insert("grow.md", 3, chunk)
    assert (memory / "grow.md").stat().st_size < MAX_EDIT_BYTES


def test_the_memory_tool_says_why(memory: Path) -> None:
    command = {"command": "create", "path": "/memories/big.md", "file_text": TOO_BIG}
    outcome = cli_tool(memory, command)  # through the CLI: the exit code, and stdin
    assert outcome.is_error
    assert outcome.text.startswith("Error: refusing to write big.md: it would be 4,194,305 bytes")
    assert not (memory / "big.md").exists()


# --- deleting folders ---------------------------------------------------------------------------


def test_a_folder_of_memories_and_empty_folders_is_deleted(memory: Path) -> None:
    (memory / "team" / "old" / "empty").mkdir(parents=True)
    (memory / "team" / "a.md").write_text(topic("a"))
    (memory / "team" / "old" / "b.md").write_text(topic("b"))
    writer(memory).delete("team")
    assert not (memory / "team").exists()


@pytest.mark.parametrize(
    ("entry", "make"),
    [
        ("docs/report.pdf", lambda p: p.write_bytes(b"%PDF-1.7")),
        ("docs/deep/er/photo.jpg", lambda p: p.write_bytes(b"\xff\xd8")),
        ("docs/.DS_Store", lambda p: p.write_bytes(b"")),
        ("docs/notes.md.bak", lambda p: p.write_text("x")),
        ("docs/link.md", lambda p: p.symlink_to("/etc/hostname")),
        ("docs/pipe.md", lambda p: os.mkfifo(p)),
    ],
)
def test_a_folder_holding_anything_else_is_refused_naming_it(
    memory: Path, entry: str, make: object
) -> None:
    (memory / "docs" / "sub").mkdir(parents=True)
    (memory / "docs" / "MEMORY.md").write_text("# someone's index\n")
    (memory / "docs" / "sub" / "a.md").write_text(topic("a"))
    (memory / entry).parent.mkdir(parents=True, exist_ok=True)
    make(memory / entry)  # type: ignore[operator]
    before = snapshot(memory)
    with pytest.raises(WriteError, match="refusing to delete the folder docs") as refused:
        writer(memory).delete("docs")
    assert entry in refused.value.message
    assert snapshot(memory) == before
    tool = MemdirMemoryTool(memory, settings=Settings())
    result = tool.run({"command": "delete", "path": "/memories/docs"})
    assert result.is_error and entry in result.text
    assert snapshot(memory) == before


def test_the_cli_refuses_a_folder_of_other_things(memory: Path) -> None:
    (memory / "Documents").mkdir()
    (memory / "Documents" / "MEMORY.md").write_text("# found a memory here\n")
    (memory / "Documents" / "taxes-2025.xlsx").write_bytes(b"PK\x03\x04")
    outcome = cli_tool(memory, {"command": "delete", "path": "/memories/Documents"})
    assert outcome.is_error
    assert "Documents/taxes-2025.xlsx (not a memory file)" in outcome.text
    assert (memory / "Documents" / "taxes-2025.xlsx").exists()
