"""memdir.writing.writer: the operations, index maintenance, ``modified`` stamps and the lock."""

from __future__ import annotations

import datetime as dt
import errno
import os
from pathlib import Path

import pytest
from filelock import FileLock
from memdir.agent.index import fit_entry, topic_title
from memdir.agent.scan import scan
from memdir.config import Settings
from memdir.writing.journal import dir_state
from memdir.writing.results import (
    IndexOutcome,
    InvalidLineError,
    LockTimeoutError,
    MultipleMatchError,
    NoMatchError,
    NotAFileError,
    NotUTF8Error,
    PathExistsError,
    PathNotFoundError,
    UnsafePathError,
)
from memdir.writing.stamps import stamp_modified
from memdir.writing.writer import LOCK_NAME, MemoryWriter


def topic(name: str, description: str, type_: str = "project", body: str = "Body.\n") -> str:
    """A topic file with frontmatter (own copy: ``conftest`` is ambiguous with tests/lsp)."""
    return f"---\nname: {name}\ndescription: {description}\ntype: {type_}\n---\n{body}"


NOW = dt.datetime(2026, 7, 15, 9, 12, 0, tzinfo=dt.UTC)
STAMP = "2026-07-15T09:12:00.000Z"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    directory = tmp_path / "memory"
    directory.mkdir()
    return directory


def writer(root: Path, **options: object) -> MemoryWriter:
    options.setdefault("settings", Settings())
    return MemoryWriter(root, clock=lambda: NOW, **options)  # type: ignore[arg-type]


FREEZE = topic(
    "release-merge-freeze",
    "trunk is frozen from app-store submission until the release is live",
    body="# Release merge freeze\nTrunk freezes.\n",
)


def index_of(root: Path) -> str:
    return (root / "MEMORY.md").read_text(encoding="utf-8")


# --- create ----------------------------------------------------------------------------------


def test_create_writes_the_text_and_adds_the_index_line(root: Path) -> None:
    result = writer(root).create("release-merge-freeze.md", FREEZE)
    assert (root / "release-merge-freeze.md").read_text(encoding="utf-8") == FREEZE
    assert index_of(root) == (
        "- [Release merge freeze](release-merge-freeze.md) — trunk is frozen from app-store "
        "submission until the release is live\n"
    )
    assert [(c.kind, c.path) for c in result.changes] == [
        ("created", "release-merge-freeze.md"),
        ("created", "MEMORY.md"),
    ]
    assert result.index_updated


def test_create_appends_after_the_last_entry_and_keeps_other_lines(root: Path) -> None:
    (root / "MEMORY.md").write_text(
        "# Index\n\n- [A](a.md) — first\n- [B](b.md) — second\n\nSee also the wiki.\n",
        encoding="utf-8",
    )
    writer(root).create("c.md", topic("c", "third"))
    assert index_of(root) == (
        "# Index\n\n- [A](a.md) — first\n- [B](b.md) — second\n- [C](c.md) — third\n\n"
        "See also the wiki.\n"
    )


def test_create_never_overwrites(root: Path) -> None:
    (root / "a.md").write_text("original\n", encoding="utf-8")
    (root / "folder").mkdir()
    with pytest.raises(PathExistsError, match="already exists"):
        writer(root).create("a.md", "new\n")
    with pytest.raises(PathExistsError):
        writer(root).create("folder", "new\n")
    assert (root / "a.md").read_text(encoding="utf-8") == "original\n"
    assert not (root / "MEMORY.md").exists()


def test_create_makes_missing_folders_inside(root: Path) -> None:
    result = writer(root).create("team/people/ana.md", topic("ana", "Ana leads the mobile team"))
    assert (root / "team" / "people" / "ana.md").is_file()
    assert result.path == "team/people/ana.md"
    assert "(team/people/ana.md)" in index_of(root)


def test_create_does_not_stamp_the_new_text(root: Path) -> None:
    writer(root).create("a.md", topic("a", "x"))
    assert "modified" not in (root / "a.md").read_text(encoding="utf-8")


def test_an_existing_entry_someone_wrote_is_kept_on_create(root: Path) -> None:
    # Someone else's line (the agent's, a person's): memdir rewrites only lines it wrote.
    (root / "MEMORY.md").write_text("- [Old title](a.md) — old hook\n", encoding="utf-8")
    result = writer(root).create("a.md", topic("new-name", "new hook"))
    assert index_of(root) == "- [Old title](a.md) — old hook\n"
    assert result.index == IndexOutcome("unchanged", 1)


def test_md_only_refuses_other_files(root: Path) -> None:
    with pytest.raises(UnsafePathError) as info:
        writer(root, md_only=True).create("notes.txt", "x")
    assert info.value.reason == "not-topic"
    assert not (root / "notes.txt").exists()


# --- update, str_replace, insert -------------------------------------------------------------


def test_update_replaces_and_stamps_modified(root: Path) -> None:
    (root / "a.md").write_text(topic("a", "about a"), encoding="utf-8")
    result = writer(root).update("a.md", topic("a", "about a", body="New body.\n"))
    text = (root / "a.md").read_text(encoding="utf-8")
    assert text == (
        f"---\nname: a\ndescription: about a\ntype: project\nmodified: {STAMP}\n---\nNew body.\n"
    )
    assert result.text == text
    assert [c.kind for c in result.changes] == ["changed", "created"]  # the index line was added


def test_update_without_frontmatter_is_not_stamped(root: Path) -> None:
    (root / "plain.md").write_text("just text\n", encoding="utf-8")
    writer(root).update("plain.md", "other text\n")
    assert (root / "plain.md").read_text(encoding="utf-8") == "other text\n"


def test_update_of_a_missing_file_is_an_error(root: Path) -> None:
    with pytest.raises(PathNotFoundError):
        writer(root).update("nope.md", "x")
    assert not (root / "nope.md").exists()


def test_modified_is_replaced_in_place(root: Path) -> None:
    text = "---\nname: a\nmodified: 2020-01-01T00:00:00Z\ndescription: d\n---\nbody\n"
    (root / "a.md").write_text(text, encoding="utf-8")
    writer(root).str_replace("a.md", "body", "body 2")
    assert (root / "a.md").read_text(encoding="utf-8") == (
        f"---\nname: a\nmodified: {STAMP}\ndescription: d\n---\nbody 2\n"
    )


def test_stamp_keeps_crlf_and_never_corrupts() -> None:
    crlf = "---\r\nname: a\r\n---\r\nbody\r\n"
    stamped, inserted = stamp_modified(crlf, STAMP)
    assert stamped == f"---\r\nname: a\r\nmodified: {STAMP}\r\n---\r\nbody\r\n"
    assert inserted == 2
    block = "---\nname: a\nmodified: |\n  multi\n---\nbody\n"
    assert stamp_modified(block, STAMP) == (block, None)
    broken = '---\nname: "unclosed\n---\nbody\n'
    assert stamp_modified(broken, STAMP) == (broken, None)
    assert stamp_modified("no frontmatter\n", STAMP) == ("no frontmatter\n", None)


def test_stamp_goes_where_the_agent_keeps_modified() -> None:
    # A file the agent wrote: its metadata.modified is updated in place, not doubled.
    agent = (
        "---\nname: a\ndescription: d\nmetadata:\n  node_type: memory\n  type: project\n"
        "  originSessionId: 1f0c\n  modified: 2026-12-03T12:24:00.780Z\n---\n\nbody\n"
    )
    stamped, inserted = stamp_modified(agent, STAMP)
    assert stamped == agent.replace("2026-12-03T12:24:00.780Z", STAMP)
    assert inserted is None
    # A top-level one is updated, keeping its comment.
    top = "---\nname: a\nmodified: 2020-01-01  # by hand\n---\nbody\n"
    assert stamp_modified(top, STAMP) == (
        f"---\nname: a\nmodified: {STAMP}  # by hand\n---\nbody\n",
        None,
    )
    # None yet: at the end of a metadata block (its indentation), else before the closing ---.
    nested = "---\nname: a\nmetadata:\n    type: user\n\n    # note\n    x: 1\ntags: t\n---\nb\n"
    stamped, inserted = stamp_modified(nested, STAMP)
    assert inserted == 7
    assert stamped.split("\n")[7] == f"    modified: {STAMP}"
    flat = "---\nname: a\ntype: user\n---\nb\n"
    assert stamp_modified(flat, STAMP) == (
        f"---\nname: a\ntype: user\nmodified: {STAMP}\n---\nb\n",
        3,
    )


def test_stamp_leaves_ambiguous_places_alone() -> None:
    both = "---\nmodified: 2020-01-01\nmetadata:\n  modified: 2021-01-01\n---\nb\n"
    assert stamp_modified(both, STAMP) == (both, None)
    inline = "---\nname: a\nmetadata: {type: user}\n---\nb\n"
    assert stamp_modified(inline, STAMP) == (inline, None)


def test_write_to_an_agent_file_keeps_one_modified(root: Path) -> None:
    text = (
        "---\nname: a\ndescription: d\nmetadata:\n  type: user\n"
        "  modified: 2026-01-01T00:00:00.000Z\n---\nx\n"
    )
    (root / "a.md").write_text(text, encoding="utf-8")
    writer(root).str_replace("a.md", "x", "y")
    written = (root / "a.md").read_text(encoding="utf-8")
    assert written == text.replace("2026-01-01T00:00:00.000Z", STAMP).replace("\nx\n", "\ny\n")


def test_str_replace_replaces_the_single_occurrence(root: Path) -> None:
    (root / "a.md").write_text("one\ntwo\nthree\n", encoding="utf-8")
    result = writer(root).str_replace("a.md", "two", "TWO")
    assert (root / "a.md").read_text(encoding="utf-8") == "one\nTWO\nthree\n"
    assert result.changed_line == 1


def test_str_replace_line_accounts_for_an_inserted_stamp(root: Path) -> None:
    (root / "a.md").write_text(topic("a", "d", body="x\nzz\n"), encoding="utf-8")
    result = writer(root).str_replace("a.md", "zz", "Y")
    assert result.text is not None
    assert result.changed_line is not None
    assert result.text.split("\n")[result.changed_line] == "Y"


def test_str_replace_errors(root: Path) -> None:
    (root / "a.md").write_text("x\nsame\nsame\n", encoding="utf-8")
    with pytest.raises(NoMatchError) as none:
        writer(root).str_replace("a.md", "absent", "y")
    assert none.value.old_str == "absent"
    with pytest.raises(MultipleMatchError) as many:
        writer(root).str_replace("a.md", "same", "y")
    assert many.value.lines == (2, 3)
    with pytest.raises(NotAFileError):
        writer(root).str_replace(".", "a", "b")
    assert (root / "a.md").read_text(encoding="utf-8") == "x\nsame\nsame\n"


def test_insert(root: Path) -> None:
    (root / "a.md").write_text("one\ntwo", encoding="utf-8")
    writer(root).insert("a.md", 0, "zero\n")
    writer(root).insert("a.md", 3, "three")
    assert (root / "a.md").read_text(encoding="utf-8") == "zero\none\ntwo\nthree\n"
    with pytest.raises(InvalidLineError) as info:
        writer(root).insert("a.md", 9, "x")
    assert (info.value.line, info.value.line_count) == (9, 4)


def test_editing_a_non_utf8_file_is_refused(root: Path) -> None:
    (root / "latin1.md").write_bytes(b"caf\xe9\n")
    with pytest.raises(NotUTF8Error):
        writer(root).str_replace("latin1.md", "caf", "x")
    assert (root / "latin1.md").read_bytes() == b"caf\xe9\n"


def test_editing_the_description_refreshes_the_index_line(root: Path) -> None:
    w = writer(root)
    w.create("a.md", topic("a", "old description"))
    w.str_replace("a.md", "old description", "new description")
    assert index_of(root) == "- [A](a.md) — new description\n"


def test_a_curated_index_line_survives_body_edits(root: Path) -> None:
    w = writer(root)
    w.create("a.md", topic("a", "desc"))
    (root / "MEMORY.md").write_text("- [Curated](a.md) — hand-written hook\n", encoding="utf-8")
    w.str_replace("a.md", "Body.", "Body, longer.")
    assert index_of(root) == "- [Curated](a.md) — hand-written hook\n"


# --- delete ----------------------------------------------------------------------------------


def test_delete_removes_the_file_and_its_index_line(root: Path) -> None:
    w = writer(root)
    w.create("a.md", topic("a", "first"))
    w.create("b.md", topic("b", "second"))
    result = w.delete("a.md")
    assert not (root / "a.md").exists()
    assert index_of(root) == "- [B](b.md) — second\n"
    assert result.changes[0].kind == "deleted"
    assert result.changes[0].before == topic("a", "first")


def test_delete_a_folder_removes_its_entries(root: Path) -> None:
    w = writer(root)
    w.create("team/a.md", topic("a", "first"))
    w.create("team/b.md", topic("b", "second"))
    w.create("c.md", topic("c", "third"))
    w.delete("team")
    assert not (root / "team").exists()
    assert index_of(root) == "- [C](c.md) — third\n"
    assert sorted(os.listdir(root)) == ["MEMORY.md", "c.md"]


def test_delete_errors(root: Path) -> None:
    with pytest.raises(PathNotFoundError):
        writer(root).delete("nope.md")
    for spelling in ("", ".", "/", str(root), "a/.."):
        with pytest.raises(UnsafePathError):
            writer(root).delete(spelling)
    assert root.is_dir()


# --- rename ----------------------------------------------------------------------------------


def test_rename_retargets_the_entry_keeping_title_hook_and_fragment(root: Path) -> None:
    w = writer(root)
    w.create("a.md", topic("a", "d"))
    (root / "MEMORY.md").write_text(
        "- [Curated](a.md#why) — hand-written hook\n- [Other](other.md)\n", encoding="utf-8"
    )
    result = w.rename("a.md", "topics/b c.md")
    assert (root / "topics" / "b c.md").read_text(encoding="utf-8") == topic("a", "d")
    assert not (root / "a.md").exists()
    assert index_of(root) == (
        "- [Curated](topics/b%20c.md#why) — hand-written hook\n- [Other](other.md)\n"
    )
    assert result.changes[0].kind == "renamed"
    assert result.changes[0].new_path == "topics/b c.md"


def test_rename_without_an_entry_adds_one(root: Path) -> None:
    (root / "a.md").write_text(topic("a-memory", "about a"), encoding="utf-8")
    writer(root).rename("a.md", "b.md")
    assert index_of(root) == "- [A memory](b.md) — about a\n"


def test_rename_never_replaces(root: Path) -> None:
    (root / "a.md").write_text("A\n", encoding="utf-8")
    (root / "b.md").write_text("B\n", encoding="utf-8")
    with pytest.raises(PathExistsError):
        writer(root).rename("a.md", "b.md")
    assert (root / "a.md").read_text(encoding="utf-8") == "A\n"
    assert (root / "b.md").read_text(encoding="utf-8") == "B\n"


def test_rename_without_hard_links_still_never_replaces(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_links(*_args: object, **_kwargs: object) -> None:
        raise OSError(errno.EPERM, "hard links not supported")

    monkeypatch.setattr(os, "link", no_links)
    (root / "a.md").write_text("A\n", encoding="utf-8")
    (root / "b.md").write_text("B\n", encoding="utf-8")
    with pytest.raises(PathExistsError):
        writer(root).rename("a.md", "b.md")
    writer(root).rename("a.md", "c.md")
    writer(root).create("d.md", "D\n")
    with pytest.raises(PathExistsError):
        writer(root).create("d.md", "other\n")
    assert {p.name: p.read_text(encoding="utf-8") for p in root.glob("*.md")} == {
        "b.md": "B\n",
        "c.md": "A\n",
        "d.md": "D\n",
        "MEMORY.md": "- [C](c.md)\n- [D](d.md)\n",
    }


def test_rename_folders(root: Path) -> None:
    w = writer(root)
    w.create("team/a.md", topic("a", "first"))
    (root / "other").mkdir()
    with pytest.raises(PathExistsError):
        w.rename("team", "other")
    w.rename("team", "people")
    assert (root / "people" / "a.md").is_file()
    assert index_of(root) == "- [A](people/a.md) — first\n"
    with pytest.raises(Exception, match="into itself"):
        w.rename("people", "people/sub")
    for spelling in ("", ".", "/", str(root)):
        with pytest.raises(UnsafePathError):
            w.rename(spelling, "x")


# --- modes, names, limits ----------------------------------------------------------------------


def test_prefetch_mode_leaves_the_index_alone(root: Path) -> None:
    (root / "MEMORY.md").write_text("- [Old](old.md) — x\n", encoding="utf-8")
    w = writer(root, settings=Settings(recall_mode="prefetch"))
    w.create("a.md", topic("a", "d"))
    w.rename("a.md", "b.md")
    w.create("old.md", topic("old", "d"))
    w.delete("old.md")
    assert index_of(root) == "- [Old](old.md) — x\n"


def test_settings_come_from_memdir_toml(root: Path) -> None:
    (root / "memdir.toml").write_text('recall_mode = "prefetch"\n', encoding="utf-8")
    MemoryWriter(root).create("a.md", topic("a", "d"))
    assert not (root / "MEMORY.md").exists()


def test_index_lines_stay_under_the_limit(root: Path) -> None:
    long = "a very long description " * 10
    w = writer(root, settings=Settings(index_line_limit=80))
    w.create("a.md", topic("a", long.strip()))
    line = index_of(root).rstrip("\n")
    assert len(line) <= 80
    assert line.startswith("- [A](a.md) — a very long description")
    assert line.endswith("…")


def test_index_line_and_title_helpers() -> None:
    assert topic_title("release-merge-freeze", "x.md") == "Release merge freeze"
    assert topic_title("Release Merge Freeze", "x.md") == "Release Merge Freeze"
    assert topic_title(None, "team/api_keys-rotation.md") == "Api keys rotation"
    line = fit_entry("Title", "t.md", "word " * 100, 60)
    assert len(line) <= 60
    # When even the title does not fit, the link is kept whole: a broken link is worse.
    assert fit_entry("Title", "x" * 80 + ".md", "hook", 40).endswith("x.md)")


def test_absolute_paths_inside_the_dir_are_accepted(root: Path) -> None:
    result = writer(root).create(str(root / "abs.md"), "x\n")
    assert result.path == "abs.md"


def test_symlinks_inside_the_dir_are_followed_inside(root: Path) -> None:
    (root / "real.md").write_text("one\n", encoding="utf-8")
    (root / "alias.md").symlink_to("real.md")
    writer(root).str_replace("alias.md", "one", "two")
    assert (root / "real.md").read_text(encoding="utf-8") == "two\n"
    assert (root / "alias.md").is_symlink()
    writer(root).delete("alias.md")  # deletes the link, not its target
    assert (root / "real.md").exists()


def test_the_lock_is_in_the_state_folder_not_the_dir(root: Path) -> None:
    writer(root).create("a.md", topic("a", "d"))
    assert (dir_state(root) / LOCK_NAME).exists()
    assert sorted(os.listdir(root)) == ["MEMORY.md", "a.md"]
    assert [h.rel_path for h in scan(root).all_files] == ["a.md"]


def test_a_held_lock_times_out_with_a_clear_error(root: Path) -> None:
    held = FileLock(str(dir_state(root) / LOCK_NAME))
    with held, pytest.raises(LockTimeoutError, match="another writer"):
        writer(root, lock_timeout=0).create("a.md", "x")
    assert not (root / "a.md").exists()
    writer(root, lock_timeout=0).create("a.md", "x")


def test_a_missing_memory_dir_is_an_error(tmp_path: Path) -> None:
    from memdir.writing.results import WriteError

    with pytest.raises(WriteError, match="does not exist"):
        MemoryWriter(tmp_path / "absent", settings=Settings()).create("a.md", "x")
    assert not (tmp_path / "absent").exists()


def test_an_unreadable_index_is_left_alone_with_a_warning(root: Path) -> None:
    (root / "MEMORY.md").write_bytes(b"- [A](a.md) \xff\n")
    result = writer(root).create("b.md", topic("b", "d"))
    assert (root / "MEMORY.md").read_bytes() == b"- [A](a.md) \xff\n"
    assert any("MEMORY.md left alone" in w for w in result.warnings)


def test_text_that_cannot_be_encoded_is_refused(root: Path) -> None:
    from memdir.writing.results import WriteError

    with pytest.raises(WriteError, match="not valid Unicode"):
        writer(root).create("a.md", "lone \ud800 surrogate")
    (root / "b.md").write_text("x\n", encoding="utf-8")
    with pytest.raises(WriteError, match="not valid Unicode"):
        writer(root).str_replace("b.md", "x", "\udfff")
    assert sorted(p.name for p in root.iterdir()) == ["b.md"]
    assert (root / "b.md").read_text(encoding="utf-8") == "x\n"
