"""Nothing is written, or planned to be written, through a symlinked folder leading out.

Issue 18 measured ``memdir.createFile`` creating files through a symlinked subfolder and the
dangling-entry quick fix proposing a ``CreateFile`` through one. Every write resolves its path
with :func:`memdir.writing.confine.resolve_path` (the one confinement check on the resolved path),
and the fix planner proposes no file that check would refuse.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from memdir.agent.index import parse_index
from memdir.faces.cli import main
from memdir.fixes.plan import (
    creatable,
    create_missing,
    move_to_topic,
    rename_edits,
)
from memdir.lint import lint_directory
from memdir.lint.fix import quick_fixes, safe_fixes
from memdir.writing.results import UnsafePathError
from memdir.writing.writer import MemoryWriter

MakeDir = Callable[..., Path]

INDEX = "# Memory\n\n- [Shell](link/.bashrc) — my shell\n- [Notes](link/notes.md) — notes\n"


@pytest.fixture
def linked(make_dir: MakeDir, tmp_path: Path) -> tuple[Path, Path]:
    """A memory dir whose ``link`` folder is a symlink to ``outside``."""
    root = make_dir({"MEMORY.md": INDEX})
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "link").symlink_to(outside, target_is_directory=True)
    return root, outside


@pytest.mark.parametrize("rel", ["link/.bashrc", "link/notes.md", "link/new/deep.md"])
def test_the_writer_creates_nothing_through_a_symlinked_folder(
    linked: tuple[Path, Path], rel: str
) -> None:
    root, outside = linked
    writer = MemoryWriter(root)
    for path in (rel, str(root / rel)):
        with pytest.raises(UnsafePathError):
            writer.create(path, "x\n", maintain=False)
    assert list(outside.iterdir()) == []


def test_the_cli_tool_creates_nothing_through_a_symlinked_folder(
    linked: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    root, outside = linked
    command = {"command": "create", "path": "/memories/link/new/x.md", "file_text": "x"}
    assert main(["tool", "--dir", str(root), json.dumps(command)]) == 1
    assert list(outside.iterdir()) == []
    capsys.readouterr()


def test_no_fix_plans_a_file_through_a_symlinked_folder(linked: tuple[Path, Path]) -> None:
    root, outside = linked
    index = parse_index(INDEX, root / "MEMORY.md")
    for entry in index.entries:
        assert create_missing(index, entry, entry.path) is None
    # Move to a topic file: an entry linking a missing file through the link gets a new name.
    plan = move_to_topic(index, 3, 3, taken=[])
    assert plan is not None
    assert [c.rel_path for c in plan.fix.creates] == ["notes.md"]
    assert all(c.path.parent == root for c in plan.fix.creates)
    # Lint's MEM005 offers only "remove the entry" for them, and --fix writes nothing outside.
    report = lint_directory(root)
    dangling = [d for d in report.diagnostics if d.code == "MEM005"]
    assert dangling and all(d.fix is None or not d.fix.creates for d in dangling)
    assert list(outside.iterdir()) == []


def test_creatable_is_the_writers_answer(linked: tuple[Path, Path]) -> None:
    root, _outside = linked
    assert creatable(root, "a.md") and creatable(root, "sub/a.md")
    assert not creatable(root, "link/a.md")
    assert not creatable(root, ".memdir.lock") and not creatable(root, "sub/.hidden.md")
    (root / "inner").symlink_to(root / "sub", target_is_directory=True)
    # A link to a folder inside would create the file under another name: not planned either.
    assert not creatable(root, "inner/a.md")


def test_no_fix_edits_an_index_that_leads_out(make_dir: MakeDir, tmp_path: Path) -> None:
    """MEMORY.md a symlink to a file outside: lint does not follow it, and the editor is offered
    no edit of it (applying one would write outside); ``memdir lint --fix`` writes nothing."""
    root = make_dir({"a.md": "---\nname: a\ndescription: the a memory of this dir\n---\nBody.\n"})
    outside = tmp_path / "outside.md"
    outside.write_text("# Outside\n", encoding="utf-8")
    (root / "MEMORY.md").symlink_to(outside)
    diagnostics = lint_directory(root).diagnostics
    orphan = [d for d in diagnostics if d.code == "MEM107"]
    assert orphan and all(d.fix is not None for d in orphan)
    assert all(quick_fixes(d) == [] for d in orphan)
    assert safe_fixes(diagnostics) == []
    assert main(["lint", "--fix", str(root)]) in (0, 1)
    assert outside.read_text(encoding="utf-8") == "# Outside\n"


def test_rename_edits_skip_an_index_that_leads_out(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    root.mkdir()
    outside = tmp_path / "outside.md"
    outside.write_text("- [A](a.md) — the a memory\n", encoding="utf-8")
    (root / "MEMORY.md").symlink_to(outside)
    index = parse_index(outside.read_text(encoding="utf-8"), root / "MEMORY.md")
    assert rename_edits(index, (), "a.md", "b.md") == []
    inside = parse_index("- [A](a.md) — the a memory\n", root / "sub" / "MEMORY.md")
    (root / "sub").mkdir()
    (root / "sub" / "MEMORY.md").write_text("x", encoding="utf-8")
    assert len(rename_edits(inside, (), "a.md", "b.md")) == 1
