"""What hover says of a memory's freshness (memdir.faces.freshness), and the incremental re-checks
the language server relies on (DirState.recheck_citations, DirState.set_today), on a real git
repository made here."""

from __future__ import annotations

import datetime as dt
import os
import shutil
from collections import Counter
from pathlib import Path

import pytest
from memdir.agent.topic import parse_topic_text
from memdir.config import Settings
from memdir.faces.freshness import citation_at, citation_text, verification_text
from memdir.lint.state import DirState
from memdir.model import TopicFile
from memdir.project.lookup import Project
from memhelpers import count_disk_reads, git, git_project

TODAY = dt.date(2027, 3, 15)

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def topic(text: str, path: Path = Path("/m/x.md")) -> TopicFile:
    return parse_topic_text(text, path, path.name, mtime=dt.datetime(2027, 1, 2).timestamp())


def head(extra: str = "", type_: str = "project") -> str:
    return f"---\nname: x\ndescription: d\ntype: {type_}\n{extra}---\n"


# --- verification ------------------------------------------------------------------------------


def test_verified_and_due() -> None:
    memory = topic(head("last_verified: 2027-01-14\n") + "Body.\n")
    assert verification_text(memory, TODAY, 180) == (
        "Last verified 2027-01-14 (60 days ago); due again 2027-07-13 (verify_after_days = 180)"
    )
    assert verification_text(memory, dt.date(2027, 1, 14), 180).startswith(
        "Last verified 2027-01-14 (today)"
    )


def test_overdue_and_metadata_wins() -> None:
    memory = topic(
        head("last_verified: 2027-03-01\nmetadata:\n  last_verified: 2026-01-01\n") + "Body.\n"
    )
    assert verification_text(memory, TODAY, 30) == (
        "Last verified 2026-01-01 (438 days ago); overdue since 2026-01-31 (verify_after_days = 30)"
    )


def test_never_verified() -> None:
    stamped = topic(head("modified: 2027-03-14T10:00:00Z\n") + "Body.\n")
    assert verification_text(stamped, TODAY, 180) == (
        "Never verified (no `last_verified`); modified 2027-03-14 (yesterday); due again "
        "2027-09-10 (verify_after_days = 180)"
    )
    # Without a `modified` stamp MEM120 never reports it: no due date is promised.
    bare = topic(head() + "Body.\n")
    text = verification_text(bare, TODAY, 180)
    assert text.startswith("Never verified (no `last_verified`); modified 2027-01-02")
    assert text.endswith(
        "never reported as unverified (verify_after_days = 180, no `modified` stamp)"
    )
    assert verification_text(bare, TODAY, 0).endswith("not checked for age (verify_after_days = 0)")


# --- citations ---------------------------------------------------------------------------------


@pytest.fixture
def project(tmp_path: Path) -> Project:
    files = {
        "src/app.py": "def charge(card):\n    return card\n",
        "src/old.py": "def retry_payment():\n    pass\n",
        "src/gone.py": "x = 1\n",
    }
    root = git_project(tmp_path, files)
    git(root, "mv", "src/old.py", "src/retry.py")
    git(root, "rm", "-q", "src/gone.py")
    git(root, "commit", "-q", "-m", "move")
    return Project.load(root)


def hover_at(project: Project, memory: TopicFile, needle: str) -> str | None:
    lines = memory.text.split("\n")
    line = next(n for n, text in enumerate(lines) if needle in text)
    citation = citation_at(memory, line, lines[line].index(needle) + 1)
    return citation_text(project, memory, citation) if citation is not None else None


@needs_git
def test_what_the_project_says(project: Project) -> None:
    memory = topic(
        head()
        + "See `src/app.py` and `src/old.py`; `src/gone.py` held the config.\n"
        + "`src/new_thing.py` is planned. Call `retry_payment()`, never `refund_all()`.\n"
        + "Plain words are no citation.\n"
        + "这里的 `charge()` 负责扣款。\n"
    )
    assert hover_at(project, memory, "src/app.py") == "`src/app.py` exists in the project"
    assert hover_at(project, memory, "src/old.py") == (
        "`src/old.py` is gone: git shows it was renamed to `src/retry.py`"
    )
    assert (
        hover_at(project, memory, "src/gone.py")
        == "`src/gone.py` is gone: git shows it was deleted"
    )
    assert (
        hover_at(project, memory, "src/new_thing.py") == "`src/new_thing.py` is not in the project"
    )
    assert hover_at(project, memory, "retry_payment") == "`retry_payment` appears in the project"
    assert hover_at(project, memory, "refund_all") == "`refund_all` appears nowhere in the project"
    assert hover_at(project, memory, "charge()") == "`charge` appears in the project"
    assert hover_at(project, memory, "Plain") is None
    assert citation_at(memory, 0, 2) is None  # the frontmatter is not read


@needs_git
def test_reference_memories_and_memory_files(project: Project, tmp_path: Path) -> None:
    memory_dir = tmp_path / "memory"
    memory_dir.mkdir()
    (memory_dir / "notes").mkdir()
    (memory_dir / "notes/a.md").write_text("x\n", encoding="utf-8")
    memory = topic(
        head(type_="reference") + "Board: `ProjectBoard`; see `notes/a.md` and `lint_me()`.\n",
        memory_dir / "ref.md",
    )
    assert hover_at(project, memory, "ProjectBoard") == (
        "`ProjectBoard`: not checked (a reference memory names things in other systems)"
    )
    assert hover_at(project, memory, "notes/a.md") == (
        "`notes/a.md`: a file of the memory dir (not checked against the project)"
    )


# --- incremental re-checks -----------------------------------------------------------------------


@needs_git
def test_recheck_citations_rereads_only_citing_files(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads = count_disk_reads(monkeypatch.setattr)
    memory_dir = tmp_path / "memory"
    memory_dir.mkdir()
    files = {
        "cites.md": head() + "Charging is in `src/app.py`.\n",
        "plain.md": head() + "Deploys wait for the freeze.\n",
    }
    for rel, text in files.items():
        (memory_dir / rel).write_text(text, encoding="utf-8")
    (memory_dir / "MEMORY.md").write_text(
        "".join(f"- [{rel}]({rel}) — x\n" for rel in files), encoding="utf-8"
    )
    state = DirState(memory_dir, Settings(preview=True), project)
    state.refresh()
    assert not [d for d in state.lint().diagnostics if d.code == "MEM117"]
    # An editor's unsaved text survives the re-check.
    state.update(memory_dir / "plain.md", head() + "Also see `src/app.py`.\n")
    before = Counter(reads)

    os.unlink(project.root / "src/app.py")
    project.remove_file("src/app.py")
    state.recheck_citations()
    found = sorted((d.rel_path, d.code) for d in state.lint().diagnostics if d.code == "MEM117")
    assert found == [("cites.md", "MEM117"), ("plain.md", "MEM117")]
    reread = reads - before
    assert reread["cites.md"] == 1  # re-read from disk
    assert reread["plain.md"] == 0  # the editor's text, not the disk


def test_set_today_rejudges_every_file(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_text("- [a](a.md) — x\n", encoding="utf-8")
    (tmp_path / "a.md").write_text(
        head("last_verified: 2026-09-16\n") + "The freeze ends 2027-03-15.\n", encoding="utf-8"
    )
    state = DirState(tmp_path, Settings(preview=True))
    state.set_today(TODAY)
    state.refresh()
    assert not {"MEM120", "MEM121"} & {d.code for d in state.lint().diagnostics}
    state.set_today(TODAY + dt.timedelta(days=1))
    result = state.lint()
    assert {"MEM120", "MEM121"} <= {d.code for d in result.diagnostics}
    assert result.changed == frozenset({"a.md"})
    # The settings change keeps the day the state was told.
    state.set_settings(Settings(preview=True))
    state.refresh()
    assert {"MEM120", "MEM121"} <= {d.code for d in state.lint().diagnostics}
