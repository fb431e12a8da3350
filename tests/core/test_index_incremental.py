"""An edit of MEMORY.md costs what it changed: the parse classifies only the lines the edit touched
(and those a block it opened or closed reads differently), and the index rules re-check only
those lines. Told by what was re-classified (``Index.edit``), re-checked (``IndexMemo.checked``)
and re-made (object identity), never by time; every result equals a parse and check from
scratch."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from memdir import constants as C
from memdir.config import Settings
from memdir.index import Index, load_index, parse_index
from memdir.lint.engine import LintContext
from memdir.lint.rules import IndexMemo, check_index

PIECES = (
    "- [A](a.md) — first",
    "- [B](b.md)",
    "- [A again](a.md) — a duplicate",
    "  - [C](c.md) — nested",
    "- [D](d.md)\r",
    "- [Web](https://example.com/x.md)",
    "- [Long](long.md) — " + "word " * 40,
    "```",
    "~~~~",
    "````",
    "<!-- a comment",
    "-->",
    "<!-- one line -->",
    "---",
    "# Heading",
    "",
    "Some memory content.",
    "token = 8fG2kL9pQ4zX7mN1",
    "-----BEGIN RSA PRIVATE KEY-----",
    "-----END RSA PRIVATE KEY-----",
    "x\r",
    "   ",
    "\u3000\u00a0",
)


def same_index(got: Index, want: Index) -> None:
    assert got == want
    assert got.lexed is not None and want.lexed is not None
    assert got.lexed.after == want.lexed.after and got.lexed.measure == want.lexed.measure


def random_edit(rng: random.Random, text: str) -> str:
    """Lines inserted, removed or replaced, or a few characters typed or deleted anywhere."""
    lines = text.split("\n")
    at = rng.randrange(len(lines) + 1)
    kind = rng.randrange(4)
    if kind == 0:
        lines.insert(at, rng.choice(PIECES))
    elif kind == 1 and at < len(lines):
        del lines[at]
    elif kind == 2 and at < len(lines):
        lines[at] = rng.choice(PIECES)
    else:
        text = "\n".join(lines)
        cut = rng.randrange(len(text) + 1)
        typed = rng.choice(["\n", "x", "`", "-", "<!--", "-->", "\r\n", "", "\n\n"])
        return text[:cut] + typed + text[cut + rng.randrange(3) :]
    return "\n".join(lines)


@pytest.mark.parametrize("seed", range(4))
def test_an_incremental_parse_equals_a_parse_from_scratch(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(150):
        text = "\n".join(rng.choice(PIECES) for _ in range(rng.randrange(30)))
        previous = parse_index(text + rng.choice(["", "\n", "\r\n"]))
        for _ in range(5):
            text = random_edit(rng, previous.text)
            index = parse_index(text, previous=previous)
            same_index(index, parse_index(text))
            previous = index


def test_an_edit_classifies_only_the_lines_it_changed() -> None:
    text = "# Index\n" + "".join(f"- [T{i}](t{i}.md) — hook {i}\n" for i in range(200))
    before = parse_index(text)
    lines = text.split("\n")
    lines[150] = "- [T149 renamed](t149.md) — a new hook"
    after = parse_index("\n".join(lines), previous=before)
    assert after.edit is not None
    assert (after.edit.start, after.edit.old_stop, after.edit.new_stop) == (150, 151, 151)
    # Every other entry is the same object: nothing else was parsed again.
    changed = zip(before.entries, after.entries, strict=True)
    assert [i for i, (a, b) in enumerate(changed) if a is not b] == [149]
    # Lines inserted: the entries below are moved copies at their new numbers, not re-parsed.
    lines.insert(10, "- [New](new.md) — inserted")
    lines.insert(10, "")
    moved = parse_index("\n".join(lines), previous=after)
    assert moved.edit is not None and (moved.edit.start, moved.edit.new_stop) == (10, 12)
    assert moved.entries[:9] == after.entries[:9]
    assert all(a is b for a, b in zip(moved.entries[:9], after.entries[:9], strict=True))
    assert [e.line for e in moved.entries[10:]] == [e.line + 2 for e in after.entries[9:]]


def test_a_fence_opened_by_an_edit_reclassifies_until_it_closes() -> None:
    body = "".join(f"- [T{i}](t{i}.md)\n" for i in range(100))
    text = body + "```\ncode\n```\n" + body
    before = parse_index(text)
    lines = text.split("\n")
    lines[40] = "```"  # opens a block that the old closing fence line ends... as an opener
    after = parse_index("\n".join(lines), previous=before)
    assert after.edit is not None and after.edit.start == 40
    # Lines 41-100 became code, the old opener closes it, the old closer opens a block to the end.
    assert after.edit.new_stop == len(after.lines)
    assert after == parse_index("\n".join(lines))
    # Closing it again right away: the states agree a line later, the rest is taken over.
    lines[41] = "```"
    again = parse_index("\n".join(lines), previous=after)
    assert again == parse_index("\n".join(lines))
    assert again.edit is not None and again.edit.start == 41


def test_an_editors_large_index_is_capped_as_the_disk_read_caps_it(tmp_path: Path) -> None:
    count = C.INDEX_MAX_READ_BYTES // 120 + 1000
    text = "".join(f"- [Ünïcode {i}](u{i}.md) — a hook {'of words ' * 10}\n" for i in range(count))
    (tmp_path / "MEMORY.md").write_text(text, encoding="utf-8")
    disk = load_index(tmp_path)
    editor = parse_index(text, tmp_path / "MEMORY.md")
    assert len(editor.text.encode()) <= C.INDEX_MAX_READ_BYTES < len(text.encode())
    assert editor == disk
    assert [p.kind for p in editor.problems] == ["too-large"]
    assert editor.load.reason is not None and "the agent reads at all" in editor.load.reason
    # An edit of the capped text re-checks only its lines: the line edited, and those from it
    # to the cut, which the edit moves.
    memo = IndexMemo()
    ctx = LintContext.from_settings(tmp_path, Settings())
    check_index(editor, ctx, memo=memo)
    lines = text.split("\n")
    lines[len(editor.lines) - 5] = lines[len(editor.lines) - 5].replace("a hook", "b hook")
    edited = parse_index("\n".join(lines), editor.path, previous=editor)
    assert edited.edit is not None and edited.edit.start == len(editor.lines) - 5
    checked = dict(memo.checked)
    assert check_index(edited, ctx, memo=memo) == check_index(edited, ctx)
    assert {code: memo.checked[code] - checked[code] for code in checked} == {
        "MEM001": 1,
        "MEM006": 2,  # and the line after it, which a fix may read
        "MEM007": 1,
        "MEM110": 1,
    }


def check_fresh(index: Index, ctx: LintContext) -> list[object]:
    return sorted(check_index(index, ctx), key=lambda d: (d.span.start_line, d.code, d.message))


@pytest.mark.parametrize("seed", range(3))
def test_incremental_index_findings_equal_a_check_from_scratch(seed: int) -> None:
    rng = random.Random(seed)
    ctx = LintContext.from_settings(Path("/m"), Settings())
    for _ in range(40):
        memo = IndexMemo()
        index = parse_index("\n".join(rng.choice(PIECES) for _ in range(rng.randrange(30))))
        check_index(index, ctx, memo=memo)
        for _ in range(6):
            index = parse_index(random_edit(rng, index.text), previous=index)
            got = sorted(
                check_index(index, ctx, memo=memo),
                key=lambda d: (d.span.start_line, d.code, d.message),
            )
            assert got == check_fresh(index, ctx)


def test_an_edit_rechecks_only_its_lines_and_keeps_the_other_findings() -> None:
    ctx = LintContext.from_settings(Path("/m"), Settings())
    lines = [f"- [T{i}](t{i}.md) — hook {i}" for i in range(300)]
    lines[20] = "- [Long](long.md) — " + "word " * 40  # MEM001
    lines[30] = "- [Web](https://example.com/x.md)"  # MEM007
    lines[40] = "- [Again](t1.md) — a duplicate"  # MEM006
    lines[50] = "api_token = 8fG2kL9pQ4zX7mN1"  # MEM110
    memo = IndexMemo()
    index = parse_index("\n".join(lines))
    first = {d.code: d for d in check_index(index, ctx, memo=memo)}
    assert {"MEM001", "MEM006", "MEM007", "MEM110"} <= set(first)
    assert memo.checked["MEM001"] == 300 and memo.made_count["MEM006"] == 1
    # A line changed below every finding: only it is checked, every finding is the same object.
    lines[200] = "- [Changed](changed.md) — another hook"
    index = parse_index("\n".join(lines), previous=index)
    second = {d.code: d for d in check_index(index, ctx, memo=memo)}
    assert memo.checked["MEM001"] == memo.checked["MEM110"] == 301
    assert memo.checked["MEM006"] == 302  # and the line after it, which a fix may read
    assert memo.made_count["MEM006"] == 1
    assert all(second[code] is first[code] for code in ("MEM001", "MEM006", "MEM007", "MEM110"))
    # Two lines inserted at the top: the findings move with their lines, nothing is re-checked
    # but the new lines (the duplicate's fix names its line, so it is made again).
    lines[:0] = ["# Index", ""]
    index = parse_index("\n".join(lines), previous=index)
    third = {d.code: d for d in check_index(index, ctx, memo=memo)}
    assert memo.checked["MEM001"] == 303
    assert third["MEM001"].span.start_line == first["MEM001"].span.start_line + 2
    assert third["MEM110"].span.start_line == 52
    assert memo.made_count["MEM006"] == 2
    assert sorted(third.values(), key=str) == sorted(
        {d.code: d for d in check_index(index, ctx)}.values(), key=str
    )


def test_a_private_key_block_closed_by_an_edit_is_found_whole() -> None:
    ctx = LintContext.from_settings(Path("/m"), Settings())
    lines = ["- [A](a.md)", "-----BEGIN RSA PRIVATE KEY-----", "MIIEowIBAAKCAQEA", "x", "y"]
    memo = IndexMemo()
    index = parse_index("\n".join(lines))
    (opened,) = [d for d in check_index(index, ctx, memo=memo) if d.code == "MEM110"]
    assert opened.span.end_line == 1  # no END yet: the BEGIN line alone
    lines[3] = "-----END RSA PRIVATE KEY-----"
    index = parse_index("\n".join(lines), previous=index)
    (closed,) = [d for d in check_index(index, ctx, memo=memo) if d.code == "MEM110"]
    assert (closed.span.start_line, closed.span.end_line) == (1, 3)
    # While the block spans lines, an edit anywhere checks the whole text again.
    checked = memo.checked["MEM110"]
    index = parse_index("\n".join([*lines, "- [B](b.md)"]), previous=index)
    assert [d for d in check_index(index, ctx, memo=memo) if d.code == "MEM110"] == [closed]
    assert memo.checked["MEM110"] == checked + len(index.lines)


def test_a_new_context_checks_the_index_whole() -> None:
    lines = [f"- [T{i}](t{i}.md)" for i in range(50)]
    memo = IndexMemo()
    index = parse_index("\n".join(lines))
    check_index(index, LintContext.from_settings(Path("/m"), Settings()), memo=memo)
    lines[3] = "- [X](x.md)"
    index = parse_index("\n".join(lines), previous=index)
    narrow = LintContext.from_settings(Path("/m"), Settings(index_line_limit=10))
    found = check_index(index, narrow, memo=memo)
    assert memo.checked["MEM001"] == 100
    assert len([d for d in found if d.code == "MEM001"]) == 50


def test_a_save_reads_the_index_from_the_edited_one(tmp_path: Path) -> None:
    text = "".join(f"- [T{i}](t{i}.md) — hook {i}\n" for i in range(100))
    (tmp_path / "MEMORY.md").write_text(text, encoding="utf-8")
    edited = parse_index(text.replace("hook 50", "hook fifty"), previous=load_index(tmp_path))
    (tmp_path / "MEMORY.md").write_text(edited.text, encoding="utf-8")
    saved = load_index(tmp_path, previous=edited)
    assert saved == load_index(tmp_path)
    assert saved.edit is not None and saved.edit.start == saved.edit.new_stop  # nothing to read
    assert all(a is b for a, b in zip(saved.entries, edited.entries, strict=True))


def test_the_dir_state_rechecks_only_an_edits_lines_of_its_index(tmp_path: Path) -> None:
    # The state keeps one IndexMemo across edits, typed in the editor or saved to disk.
    from memdir.lint.state import DirState, lint_directory

    lines = [f"- [Memory {n}](memory-{n}.md) — what memory {n} is about" for n in range(60)]
    (tmp_path / C.INDEX_FILENAME).write_text("\n".join(lines) + "\n", encoding="utf-8")
    state = DirState(tmp_path)
    state.refresh()
    state.lint()
    before = state.index_memo.checked["MEM001"]
    lines[-1] = "- [Memory 59](memory-59.md) — " + "a hook far too long " * 10
    edited = "\n".join(lines) + "\n"
    state.update(tmp_path / C.INDEX_FILENAME, edited)
    typed = state.lint()
    assert state.index_memo.checked["MEM001"] - before == 1
    (tmp_path / C.INDEX_FILENAME).write_text(edited.replace("59", "58", 1), encoding="utf-8")
    state.close(tmp_path / C.INDEX_FILENAME)
    saved = state.lint()
    assert state.index_memo.checked["MEM001"] - before == 2
    assert "MEM001" in {d.code for d in typed.diagnostics}
    assert saved.diagnostics == lint_directory(tmp_path).diagnostics
