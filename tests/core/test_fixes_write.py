"""Fixes reach the disk one way: through MemoryWriter (confined, locked, atomic, no overwrite)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from memdir.containment import relative_inside
from memdir.fixes.model import CreateFile, Fix, TextEdit
from memdir.lint.diagnostic import Diagnostic
from memdir.lint.fix import apply_fixes
from memdir.model import Span
from memdir.writing.files import write_atomic

MakeDir = Callable[..., Path]


def finding(root: Path, rel: str, fix: Fix) -> Diagnostic:
    return Diagnostic(root / rel, rel, Span(0, 0, 0, 0), "MEM101", "error", "m", fix)


def insert(root: Path, rel: str, text: str) -> Fix:
    return Fix("insert", (TextEdit(root / rel, rel, Span(0, 0, 0, 0), text),), safe=True)


def test_a_fix_never_writes_through_a_symlink_out_of_the_dir(
    make_dir: MakeDir, tmp_path: Path
) -> None:
    root = make_dir({"MEMORY.md": "# Index\n"})
    outside = tmp_path / "outside.md"
    outside.write_text("not a memory\n", encoding="utf-8")
    (root / "link.md").symlink_to(outside)
    report = apply_fixes([finding(root, "link.md", insert(root, "link.md", "---\n"))])
    assert outside.read_text(encoding="utf-8") == "not a memory\n"
    assert report.applied == () and report.written == ()
    [(_, reason)] = report.skipped
    assert "left alone" in reason and "symlink" in reason


def test_a_created_file_never_replaces_one_that_appeared(make_dir: MakeDir) -> None:
    root = make_dir({"MEMORY.md": "# Index\n"})
    create = Fix("create", creates=(CreateFile(root / "new.md", "new.md", "planned\n"),))
    report = apply_fixes([finding(root, "new.md", create)], safe_only=False)
    assert (root / "new.md").read_text(encoding="utf-8") == "planned\n"
    assert report.written == (root / "new.md",)
    (root / "new.md").write_text("the user's\n", encoding="utf-8")
    apply_fixes([finding(root, "new.md", create)], safe_only=False)
    assert (root / "new.md").read_text(encoding="utf-8") == "the user's\n"


def test_fixes_take_the_directory_lock_and_leave_no_temp_files(make_dir: MakeDir) -> None:
    root = make_dir({"MEMORY.md": "# Index\n", "a.md": "body\n"})
    report = apply_fixes([finding(root, "a.md", insert(root, "a.md", "top\n"))])
    assert report.written == (root / "a.md",)
    assert (root / "a.md").read_text(encoding="utf-8") == "top\nbody\n"
    # Nothing of the writer's (no lock, no temp file) is left beside the memories.
    assert sorted(p.name for p in root.iterdir()) == ["MEMORY.md", "a.md"]


def test_write_atomic_keeps_the_mode(tmp_path: Path) -> None:
    path = tmp_path / "a.md"
    path.write_text("old", encoding="utf-8")
    os.chmod(path, 0o640)
    write_atomic(path, "new")
    assert path.read_text(encoding="utf-8") == "new"
    assert path.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["a.md"]


def test_relative_inside(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    (root / "sub").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    (root / "out").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    alias = tmp_path / "alias"
    alias.symlink_to(root, target_is_directory=True)
    assert relative_inside(root, "sub/a.md") == "sub/a.md"
    assert relative_inside(root, root / "sub" / "a.md") == "sub/a.md"
    assert relative_inside(root, root) == ""
    assert relative_inside(root, "../x.md") is None
    assert relative_inside(root, tmp_path / "x.md") is None
    # Another spelling of the dir is inside; a link leading out is not, once followed.
    assert relative_inside(root, alias / "a.md") == "a.md"
    # As written: the dir as given or resolved, nothing else.
    assert relative_inside(alias, root / "a.md", follow_links=False) == "a.md"
    assert relative_inside(alias, alias / "a.md", follow_links=False) == "a.md"
    assert relative_inside(root, alias / "a.md", follow_links=False) is None
    assert relative_inside(root, "out/x.md") is None
    assert relative_inside(root, "out/x.md", follow_links=False) == "out/x.md"


@pytest.mark.parametrize("name", ["../escape.md", "/etc/passwd"])
def test_cli_file_arguments_stay_inside(make_dir: MakeDir, name: str) -> None:
    from memdir.faces.cli.common import CliError, resolve_inside

    root = make_dir({"MEMORY.md": "# Index\n"})
    with pytest.raises(CliError, match="outside the memory dir"):
        resolve_inside(root, name)


def test_rel_path_names_either_spelling(tmp_path: Path) -> None:
    from memdir.containment import rel_path

    root = tmp_path / "mem"
    root.mkdir()
    alias = tmp_path / "alias"
    alias.symlink_to(root, target_is_directory=True)
    assert rel_path(root, root / "a.md") == "a.md"
    assert rel_path(root, alias / "a.md") == "a.md"
    assert rel_path(root, "sub/a.md") == "sub/a.md"
    with pytest.raises(ValueError, match="not inside"):
        rel_path(root, tmp_path / "x.md")
