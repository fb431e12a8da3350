"""An open file's own findings, given before the directory's first run has read every file, are
what code actions fix until that run is done (a quick fix asked for at once finds them)."""

from __future__ import annotations

from pathlib import Path

from memdir.config import Settings
from memdir_lsp import linting
from memdir_lsp.directory import MemoryDirectory


def test_own_findings_are_the_latest_until_the_first_run(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    root.mkdir()
    index = root / "MEMORY.md"
    index.write_text("- [Role](role.md) — who\n- [Role](role.md) — who\n", encoding="utf-8")
    (root / "orphan.md").write_text("# no frontmatter\n", encoding="utf-8")
    directory = MemoryDirectory(root, {"workspace"}, Settings(), text_of=lambda _: None)
    own = linting.own_findings(directory, index, None)
    assert {d.code for d in own} == {"MEM006"}  # the duplicate entry: MEMORY.md's own rule
    assert linting.latest(directory, index) == own  # fix-all finds its fix
    grouped = linting.run(directory, [], list).grouped
    assert {d.code for d in grouped[index]} >= {"MEM005", "MEM006"}
    assert linting.latest(directory, index) == grouped[index]  # the full run wins from now on
    assert linting.latest(directory, root / "orphan.md") == grouped[root / "orphan.md"]
