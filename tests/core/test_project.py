"""memdir.project on real projects made here (git repositories and plain directories): the words
the memories cite are looked up once, and a file created, changed or deleted afterwards leaves
every answer equal to a fresh Project's; the update's answer says whether a finding can change."""

from __future__ import annotations

import shutil
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path

import pytest
from memdir.project import listing, lookup
from memdir.project import words as project_words
from memdir.project.lookup import Project
from memdir.project.words import words_in
from memhelpers import git, git_project, write_files

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

CODE = {
    "src/app/payments.py": "def retry_payment(order):\n    return charge_card(order)\n",
    "src/app/cards.py": "def charge_card(order):\n    return order\n",
    "src/lib/flags.py": "FLAGS = ['--dry-run', '--max-retries']\n",
    "scripts/deploy.sh": "#!/bin/sh\necho deploying\n",
    "docs/notes.md": "The `charge_card` helper; see `Makefile`.\n",
    "Makefile": "build:\n\tpython -m build\n",
}
WORDS = [
    "retry_payment", "charge_card", "dry-run", "max-retries", "deploy", "build", "run",
    "retry", "nothing_here", "order", "FLAGS",
]  # fmt: skip
PATHS = [
    "src/app/payments.py", "app/payments.py", "src/app", "src/app/new.py", "src/app/old.py",
    "lib/flags.py", "src/gone/", "scripts", "payments.py", "src/app/moved.py",
]  # fmt: skip


def make_project(tmp_path: Path, use_git: bool, files: Mapping[str, str | bytes] = CODE) -> Path:
    if use_git:
        return git_project(tmp_path, files)
    root = tmp_path / "project"
    root.mkdir()
    write_files(root, files)
    return root


def answers(project: Project) -> dict[str, object]:
    """Everything the citation rules ask, for the words and paths above."""
    return {
        "words": {word: project.has_word(word) for word in WORDS},
        "exists": {path: project.exists(path) for path in PATHS},
        "suffix": {path: project.has_suffix(path) for path in PATHS},
        "deleted": {path: project.was_deleted(path) for path in PATHS},
        "renamed": {path: project.renamed_to(path) for path in PATHS},
        "files": sorted(project.files),
    }


def fresh(root: Path) -> dict[str, object]:
    return answers(Project.load(root, None, WORDS))


@pytest.fixture(params=["git", "plain"])
def use_git(request: pytest.FixtureRequest) -> bool:
    return bool(request.param == "git")


@pytest.fixture(params=["grep", "read here"])
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Both ways of looking words up: the system's grep, and reading files here."""
    if request.param == "read here":
        monkeypatch.setattr(project_words, "_grep", lambda root, words, files: None)
    return str(request.param)


# --- words ---------------------------------------------------------------------------------------


def test_words_are_whole_words_as_grep_finds_them(tmp_path: Path, backend: str) -> None:
    text = "run --dry-run-fast x3foo foo_bar éfoo baz.qux\nmake build.all; a:b; tail-\n"
    root = make_project(tmp_path, True, {"a.txt": text, "b.bin": b"\0binary retry_payment\n"})
    words = ["run", "dry-run", "dry-run-fast", "fast", "foo", "foo_bar", "bar", "3foo"]
    words += ["baz", "qux", "retry_payment", "build.all", "build", "a:b", "tail-", "dry"]
    project = Project.load(root, None, words)
    found = {word for word in words if project.has_word(word)}
    # Overlapping words (run in dry-run, dry in dry-run-fast) are each found; a binary file
    # has no words.
    assert found == {
        "run", "dry-run", "dry-run-fast", "fast", "foo", "foo_bar", "baz", "qux", "build.all",
        "build", "a:b", "tail-", "dry",
    }  # fmt: skip
    assert words_in(text.encode(), words) == found  # one file re-read: the same answers


def test_a_word_never_looked_up_is_looked_up_when_asked(tmp_path: Path) -> None:
    root = make_project(tmp_path, True)
    project = Project.load(root)
    assert project.has_word("retry_payment") and not project.has_word("refund_payment")
    # A path names its words too: a script deploy.sh names deploy.
    assert project.has_word("deploy")


def test_the_first_word_asked_brings_the_memory_dirs_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_project(tmp_path, True)
    memory = tmp_path / "memory"
    write_files(
        memory, {"a.md": "Use `retry_payment()` and `charge_card()`; not `refund_all()`.\n"}
    )
    passes: list[set[str]] = []
    search = project_words.search_files

    def counted(root: Path, words: Collection[str], files: Iterable[str]) -> dict[str, set[str]]:
        if words:
            passes.append(set(words))
        return search(root, words, files)

    monkeypatch.setattr(listing, "search_files", counted)
    monkeypatch.setattr(lookup, "search_files", counted)
    project = Project.load(root, memory)
    assert project.has_word("retry_payment") and project.has_word("charge_card")
    assert not project.has_word("refund_all")
    assert passes == [{"retry_payment", "charge_card", "refund_all"}]  # one pass for all three
    assert not project.has_word("other_name")
    assert passes[1:] == [{"other_name"}]


def test_the_memory_dir_and_links_do_not_vouch(tmp_path: Path, backend: str) -> None:
    root = make_project(tmp_path, True)
    outside = tmp_path / "outside.py"
    outside.write_text("only_outside = 1\n")
    (root / "link.py").symlink_to(outside)
    write_files(root, {".claude/memory/a.md": "only_in_memory\n"})
    project = Project.load(root, root / ".claude" / "memory", ["only_outside", "only_in_memory"])
    assert project.exists("link.py")
    assert not project.has_word("only_outside") and not project.has_word("only_in_memory")
    assert not project.update_file(".claude/memory/a.md")  # not the project's


def test_unsaved_text_counts_for_words_asked_later(tmp_path: Path) -> None:
    root = make_project(tmp_path, True)
    project = Project.load(root, None, ["retry_payment"])
    assert project.update_file("src/app/payments.py", b"def refund_payment():\n    pass\n")
    assert not project.has_word("retry_payment")
    assert project.has_word("refund_payment")  # from the editor's text, not the disk
    assert project.update_file("src/app/payments.py")  # back to the disk: words change back
    assert project.has_word("retry_payment") and not project.has_word("refund_payment")


def test_a_big_file_is_searched_whole_both_ways(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(project_words, "MAX_FILE_BYTES", 64)
    monkeypatch.setattr(lookup, "MAX_FILE_BYTES", 64)
    root = make_project(tmp_path, True, {"big.py": "x = 1\n" * 20 + "late_name = 2\n"})
    project = Project.load(root, None, ["late_name", "later_name"])
    assert project.has_word("late_name")  # grep reads the whole file
    (root / "big.py").write_text("x = 1\n" * 20 + "later_name = 2\n")
    assert project.update_file("big.py")
    assert answers(project) == fresh(root)
    assert project.has_word("later_name") and not project.has_word("late_name")


# --- one file at a time --------------------------------------------------------------------------


def test_updates_answer_like_a_fresh_project(tmp_path: Path, use_git: bool, backend: str) -> None:
    root = make_project(tmp_path, use_git)
    project = Project.load(root, None, WORDS)
    assert answers(project) == fresh(root)
    steps: list[tuple[str, str | None]] = [
        ("src/app/payments.py", "def other(order):\n    return order\n"),  # a word gone
        ("src/app/new.py", "retry_payment = None\n"),  # a new file brings it back
        ("src/app/new.py", None),  # deleted: gone again
        ("src/lib/flags.py", "FLAGS = []\n"),  # flags gone
        ("scripts/deploy.sh", None),  # the path word goes with the file
        ("src/gone/x.py", "run = 1\n"),  # a new directory
        ("src/gone/x.py", None),  # and it is gone again
        ("src/app/cards.py", None),  # a file holding a word still elsewhere
    ]
    for rel, text in steps:
        path = root / rel
        if text is None:
            path.unlink()
            project.remove_file(rel)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            project.update_file(rel)
        expected = fresh(root)
        got = answers(project)
        if use_git:
            # A fresh listing knows that an untracked file removed was never committed.
            expected["deleted"] = got["deleted"]
        assert got == expected, rel


def test_the_answer_says_whether_a_finding_can_change(tmp_path: Path, use_git: bool) -> None:
    root = make_project(tmp_path, use_git)
    project = Project.load(root, None, WORDS)
    answers(project)  # the rules have asked about these words and paths
    write_files(root, {"src/app/cards.py": "def charge_card(order):\n    return order  # noted\n"})
    assert not project.update_file("src/app/cards.py")  # nothing cited changed
    write_files(root, {"src/app/payments.py": "def other():\n    pass\n"})
    assert project.update_file("src/app/payments.py")  # retry_payment is gone
    write_files(root, {"docs/notes.md": "Nothing about helpers.\n"})
    assert not project.update_file("docs/notes.md")  # charge_card is still in cards.py
    write_files(root, {"src/app/extra.py": "retry_payment = 1\n"})
    assert project.update_file("src/app/extra.py")  # a new file brings a word back
    write_files(root, {"tests/test_unrelated.py": "x = 1\n"})
    assert not project.update_file("tests/test_unrelated.py")  # no cited path is near it
    write_files(root, {"src/app/new.py": "x = 1\n"})
    assert project.update_file("src/app/new.py")  # a cited path now exists
    (root / "tests/test_unrelated.py").unlink()
    assert not project.remove_file("tests/test_unrelated.py")
    (root / "src/app/payments.py").unlink()
    assert project.remove_file("src/app/payments.py")  # a cited path is gone
    assert not project.remove_file("never/listed.py")


def test_the_answer_names_the_words_and_paths_that_changed(tmp_path: Path, use_git: bool) -> None:
    root = make_project(tmp_path, use_git)
    project = Project.load(root, None, WORDS)
    with project.recording() as asked:
        answers(project)
    # What was asked, as keys: the words, and the paths wrapped in slashes.
    assert {"retry_payment", "charge_card", "/src/app/new.py/", "/app/payments.py/"} <= asked
    with project.recording() as outer:
        with project.recording() as inner:
            project.has_word("order")
        project.exists("scripts")
    assert inner == {"order"} and outer == {"order", "/scripts/"}
    project.has_word("build")  # not recording: nothing collected
    assert outer == {"order", "/scripts/"}

    write_files(root, {"src/app/payments.py": "def other():\n    pass\n"})
    assert project.update_file("src/app/payments.py").keys == {"retry_payment"}
    write_files(root, {"src/app/new.py": "retry_payment = 1\n"})
    # A new file: the word it brings back, and the cited paths it is, or lies under.
    assert project.update_file("src/app/new.py").keys == {
        "retry_payment", "/src/app/new.py/", "/src/app/"
    }  # fmt: skip
    (root / "src/app/payments.py").unlink()
    removed = project.remove_file("src/app/payments.py")
    assert removed.keys == {
        "/src/app/payments.py/", "/app/payments.py/", "/payments.py/", "/src/app/"
    }  # fmt: skip
    both = removed | project.update_file("src/app/new.py")
    assert both.keys == removed.keys and both.concerns(["/payments.py/", "x"])
    assert not both.concerns(["retry_payment"])


def test_ignored_files_are_not_the_projects(tmp_path: Path, use_git: bool) -> None:
    root = make_project(tmp_path, use_git, {**CODE, ".gitignore": "generated/\n"})
    project = Project.load(root, None, ["only_generated"])
    skipped = "generated/out.py" if use_git else "node_modules/x/out.py"
    write_files(root, {skipped: "only_generated = 1\n"})
    assert not project.update_file(skipped)
    assert skipped not in project.files and not project.has_word("only_generated")
    assert not project.update_file(".git/index")
    if use_git:
        write_files(root, {"generated/more.py": "x = 1\n", "src/app/debug.log": "only_generated\n"})
        write_files(root, {"src/app/new.py": "only_generated = 1\n"})
        (root / ".gitignore").write_text("generated/\n*.log\n")
        assert not project.update_file("generated/more.py")  # the directory's answer, kept
        assert not project.update_file("src/app/debug.log")
        assert project.update_file("src/app/new.py")  # not ignored: its word counts
        assert "src/app/new.py" in project.files and "src/app/debug.log" not in project.files


# --- git's history -------------------------------------------------------------------------------


def test_renames_and_deletions_from_git(tmp_path: Path) -> None:
    root = make_project(tmp_path, True)
    git(root, "mv", "src/app/payments.py", "src/app/moved.py")
    git(root, "mv", "src/lib", "src/core")
    git(root, "rm", "-q", "scripts/deploy.sh")
    git(root, "commit", "-q", "-m", "move")
    git(root, "mv", "src/app/cards.py", "src/app/card_api.py")  # staged, not committed
    project = Project.load(root)
    assert project.renamed_to("src/app/payments.py") == "src/app/moved.py"
    assert project.renamed_to("src/lib") == "src/core"
    assert project.renamed_to("src/app/cards.py") == "src/app/card_api.py"
    assert project.renamed_suffix("app/payments.py") == "src/app/moved.py"
    assert project.was_deleted("scripts/deploy.sh") and project.was_deleted("deploy.sh")
    assert not project.was_deleted("src/app/payments.py")
    # The rename's target deleted later: the rename leads nowhere, as for a fresh listing.
    (root / "src/app/moved.py").unlink()
    assert project.remove_file("src/app/moved.py")
    assert project.renamed_to("src/app/payments.py") is None
    assert project.renamed_to("src/app/payments.py") == Project.load(root).renamed_to(
        "src/app/payments.py"
    )


def test_a_tracked_file_deleted_from_the_work_tree(tmp_path: Path, backend: str) -> None:
    root = make_project(tmp_path, True, {**CODE, "src/only.py": "only_here = 1\n"})
    (root / "src/only.py").unlink()  # not staged
    project = Project.load(root, None, ["only_here", "retry_payment"])
    assert not project.exists("src/only.py") and project.was_deleted("src/only.py")
    assert not project.has_word("only_here") and project.has_word("retry_payment")


def test_the_history_read_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_project(tmp_path, True)
    git(root, "mv", "src/app/payments.py", "src/app/moved.py")
    git(root, "commit", "-q", "-m", "move")
    write_files(root, {"src/app/cards.py": "def charge_card(order):\n    return None\n"})
    git(root, "commit", "-q", "-am", "later")
    assert Project.load(root).renamed_to("src/app/payments.py") == "src/app/moved.py"
    monkeypatch.setattr(listing, "MAX_HISTORY_COMMITS", 1)
    assert Project.load(root).renamed_to("src/app/payments.py") is None
