from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from memdir import constants as C
from memdir.agent.index import (
    format_size,
    load_cap,
    load_index,
    normalize_target,
    parse_entry,
    parse_index,
    render_entry,
)
from memdir.target import SEED
from memdir.textio import utf16_len


@pytest.mark.parametrize(
    ("line", "title", "path", "hook", "sep"),
    [
        (
            "- [Release freeze](release-freeze.md) — trunk frozen",
            "Release freeze",
            "release-freeze.md",
            "trunk frozen",
            "—",
        ),
        ("* [A](a.md) - hook text", "A", "a.md", "hook text", "-"),
        ("- [A](a.md): colon hook", "A", "a.md", "colon hook", ":"),
        ("- [A](a.md) – en dash", "A", "a.md", "en dash", "–"),
        ("- [A](a.md)", "A", "a.md", "", ""),
        ("- [Deploy](ops/deploy%20notes.md) — sub", "Deploy", "ops/deploy notes.md", "sub", "—"),
        ("- [数据](%E6%95%B0%E6%8D%AE.md) — 中文", "数据", "数据.md", "中文", "—"),
        ("- [X](./x.md#part) — frag", "X", "x.md", "frag", "—"),
        ("- [A [b] c](<with space.md>) — angle", "A [b] c", "with space.md", "angle", "—"),
        ("  - [Nested](n.md) — indented", "Nested", "n.md", "indented", "—"),
        (r"- [a \] b](a.md) — escaped", "a ] b", "a.md", "escaped", "—"),
        ("1. [A](a.md) — numbered", "A", "a.md", "numbered", "—"),
        ("12) [B](b.md) — numbered", "B", "b.md", "numbered", "—"),
    ],
)
def test_parse_entry_variants(line: str, title: str, path: str, hook: str, sep: str) -> None:
    entry = parse_entry(line, 3)
    assert entry is not None
    assert (entry.title, entry.path, entry.hook, entry.separator) == (title, path, hook, sep)
    assert entry.line == 3
    # Spans point at the exact characters of each part.
    assert line[entry.title_span.start_col : entry.title_span.end_col].replace("\\", "") in (
        title,
        title.replace("]", "]"),
    )
    assert line[entry.target_span.start_col : entry.target_span.end_col] == entry.target
    assert line[entry.hook_span.start_col : entry.hook_span.end_col] == hook


@pytest.mark.parametrize(
    "line",
    [
        "Some paragraph about deploys.",
        "- plain bullet with no link",
        "## Heading",
        "- see [A](a.md) for details",
        "1.[A](a.md) — no space after the number",
    ],
)
def test_non_entries(line: str) -> None:
    assert parse_entry(line, 0) is None


def test_classify_lines() -> None:
    text = (
        "---\nx: 1\n---\n# Index\n\n- [A](a.md) — a\n<!-- note\nmore -->\n```\n- [B](b.md)\n```\n"
        "Free text here\n- detail bullet\n"
    )
    index = parse_index(text)
    assert [e.path for e in index.entries] == ["a.md"]
    kinds = {line.line: line.kind for line in index.other}
    assert kinds[0] == kinds[1] == kinds[2] == "frontmatter"
    assert kinds[3] == "heading"
    assert kinds[6] == kinds[7] == "comment"
    assert kinds[8] == kinds[9] == kinds[10] == "code"
    assert kinds[11] == "text"
    assert kinds[12] == "bullet"


def test_normalize_target() -> None:
    assert normalize_target("a%2Fb.md") == "a/b.md"
    assert normalize_target("././x.md") == "x.md"
    assert normalize_target("<a b.md>") == "a b.md"


def test_render_entry_format() -> None:
    assert render_entry("Release freeze", "release-freeze.md", "trunk frozen") == (
        "- [Release freeze](release-freeze.md) — trunk frozen"
    )
    assert render_entry("A", "dir/has space(1).md") == "- [A](dir/has%20space%281%29.md)"


_title = st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), min_size=1).filter(
    lambda s: s.strip() == s and s != ""
)
_segment = st.text(
    st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp"), blacklist_characters="/#"),
    min_size=1,
    max_size=20,
).filter(lambda s: s not in (".", ".."))
_path = st.lists(_segment, min_size=1, max_size=3).map(lambda parts: "/".join(parts) + ".md")
_hook = st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp"))).map(str.strip)


@given(title=_title, path=_path, hook=_hook)
def test_render_parse_round_trip(title: str, path: str, hook: str) -> None:
    line = render_entry(title, path, hook)
    entry = parse_entry(line, 0)
    assert entry is not None, line
    assert entry.title == title
    assert entry.path == path
    assert entry.hook == hook
    assert "\n" not in line


def test_load_cap_not_truncated_strips_frontmatter_and_comments() -> None:
    text = (
        "---\nname: idx\n---\n\n<!-- maintained by the agent -->\n"
        "  - [A](a.md) — a\n- [B](b.md)\n\n"
    )
    load = load_cap(text)
    assert load.text == "- [A](a.md) — a\n- [B](b.md)"
    assert not load.truncated
    assert load.line_count == 2
    assert load.loaded_source_lines == (5, 6)


def test_comment_residue_is_kept() -> None:
    load = load_cap("<!-- x --> kept text\n- [A](a.md)")
    assert load.text == "kept text\n- [A](a.md)"


def test_line_cap_exact_warning_and_cut_entries() -> None:
    lines = [render_entry(f"M{i}", f"m{i}.md", "hook") for i in range(230)]
    index = parse_index("\n".join(lines) + "\n")
    load = index.load
    assert load.line_truncated and not load.char_truncated
    assert load.reason == "230 lines (limit: 200)"
    body, warning = load.text.split("\n\n")
    assert body == "\n".join(lines[:200])
    assert warning == (
        "> WARNING: MEMORY.md is 230 lines (limit: 200). Only part of it was loaded: 30 of 230 "
        'lines were cut off, starting at line 201 ("- [M200](m200.md) — hook"). '
        "Keep index entries to one line under ~200 chars; move detail into topic files."
    )
    assert [e.path for e in index.cut_entries] == [f"m{i}.md" for i in range(200, 230)]
    assert load.first_cut_line == 200
    # The documented design (target "seed") says only that part was loaded.
    seed = parse_index("\n".join(lines) + "\n", target=SEED).load
    assert seed.warning == (
        "> WARNING: MEMORY.md is 230 lines (limit: 200). Only part of it was loaded. "
        "Keep index entries to one line under ~200 chars; move detail into topic files."
    )
    assert seed.loaded_source_lines == load.loaded_source_lines


def test_cut_detail_quotes_the_first_cut_line_shortened_at_a_word() -> None:
    lines = ["- [x](x.md)"] * 200 + ["- [Long](long.md) — " + "word " * 30]
    warning = load_cap("\n".join(lines)).warning or ""
    assert (
        'starting at line 201 ("- [Long](long.md) — word word word word word word word' in warning
    )
    assert 'word…"). Keep' in warning


def test_cut_inside_a_first_line_longer_than_the_cap() -> None:
    load = load_cap("- " + "z" * 30_000 + "\n- [B](b.md)")
    assert load.text.startswith("- zzz")
    assert utf16_len(load.text.split("\n\n> WARNING")[0]) == C.INDEX_MAX_CHARS
    assert "loaded: everything after the first 25000 characters of line 1 was cut off." in (
        load.warning or ""
    )
    assert load.loaded_source_lines == () and load.first_cut_line == 0


def test_sizes_round_ties_up_like_javascript() -> None:
    assert format_size(25_856) == "25.3KB"  # 25.25: Python's own rounding gives 25.2
    assert format_size(25_600) == "25KB" and format_size(1000) == "1000 bytes"


def test_injected_text_is_sanitised_as_the_agent_does() -> None:
    load = load_cap(
        "- [A](a.md) — a\u200bb\u0007c <system-reminder>x</system-reminder>\r\n- [B](b.md)"
    )
    assert load.text == "- [A](a.md) — abc <\\system-reminder>x<\\/system-reminder>\n- [B](b.md)"
    assert load_cap("<ticket> <\\tick>").text == "<ticket> <\\tick>"  # not an agent tag; done
    assert load_cap("a\u200bb", target=SEED).text == "a\u200bb"


def test_comment_indented_into_a_list_item_stays() -> None:
    text = "- [A](a.md)\n  <!-- in the item -->\n<!-- top level -->\n\n- [B](b.md)"
    assert load_cap(text).text == "- [A](a.md)\n  <!-- in the item -->\n- [B](b.md)"


def test_an_index_over_4_mib_is_not_loaded_at_all() -> None:
    line = render_entry("M", "m.md", "h" * 200)
    text = "\n".join([line] * (C.INDEX_MAX_READ_BYTES // len(line.encode()) + 10))
    index = parse_index(text)
    assert index.load.text == "" and index.load.truncated
    assert "over the 4MB the agent reads at all" in (index.load.reason or "")
    assert len(index.cut_entries) == len(index.entries)
    assert parse_index(text, target=SEED).load.text.startswith(line)


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


def test_load_level_near_past_the_rewrite_target_or_the_char_share() -> None:
    near_chars = int(C.INDEX_MAX_CHARS * C.INDEX_NEAR_CAP_RATIO)
    target = C.INDEX_REWRITE_TARGET_LINES
    assert load_cap("x\n" * target).level == "within"
    assert load_cap("x\n" * (target + 1)).level == "near"
    assert load_cap("x" * near_chars).level == "within"
    assert load_cap("x" * (near_chars + 1)).level == "near"
    assert load_cap("x\n" * (C.INDEX_MAX_LINES + 1)).level == "over"


def test_char_cap_cuts_at_last_newline_and_reports_kb() -> None:
    line = "- [" + "x" * 200 + "](x.md) — " + "y" * 290  # 500 chars per line
    assert len(line) == 503
    text = "\n".join([line] * 60)  # 60 lines, 30,179 chars
    load = load_cap(text)
    assert load.char_truncated and not load.line_truncated
    assert load.reason == f"{format_size(len(text))} (limit: 24.4KB) — index entries are too long"
    loaded = load.text.split("\n\n> WARNING")[0]
    assert utf16_len(loaded) <= C.INDEX_MAX_CHARS
    # 49 full lines = 49*503 + 48 newlines = 24,695; the 50th newline would sit past 25,000.
    assert loaded == "\n".join([line] * 49)


def test_char_cap_counts_utf16_units_on_cjk() -> None:
    # 100 lines of 260 CJK characters: 26,099 UTF-16 units (but 78,000+ UTF-8 bytes).
    line = "- [记忆](a.md) — " + "中" * 245
    text = "\n".join([line] * 100)
    assert utf16_len(text) == len(text)
    load = load_cap(text)
    assert load.char_truncated
    loaded = load.text.split("\n\n> WARNING")[0]
    assert utf16_len(loaded) <= C.INDEX_MAX_CHARS
    assert len(loaded.split("\n")) == (C.INDEX_MAX_CHARS + 1) // (len(line) + 1)


def test_char_cap_astral_characters_count_twice() -> None:
    line = "- [e](e.md) — " + "😀" * 100  # each emoji is 2 UTF-16 units
    text = "\n".join([line] * 200)
    load = load_cap(text)
    loaded = load.text.split("\n\n> WARNING")[0]
    # 214 UTF-16 units per line (114 code points): 116 lines fit, 24,939 units.
    assert len(loaded.split("\n")) == 116
    assert utf16_len(loaded) == 24_939


def test_both_caps_reason() -> None:
    text = "\n".join(["- [a](a.md) — " + "z" * 200] * 300)
    assert load_cap(text).reason == f"300 lines and {format_size(utf16_len(text))}"


def test_single_giant_line_hard_cut_never_breaks_a_character() -> None:
    text = "中😀" * 20_000
    load = load_cap(text)
    loaded = load.text.split("\n\n> WARNING")[0]
    assert utf16_len(loaded) <= C.INDEX_MAX_CHARS
    assert text.startswith(loaded)
    loaded.encode("utf-8")  # no lone surrogate


@given(
    st.lists(
        st.text(
            st.characters(blacklist_categories=("Cs",), blacklist_characters="\r"), max_size=400
        ),
        max_size=260,
    )
)
def test_cap_never_exceeds_limits(lines: list[str]) -> None:
    text = "\n".join(lines)
    load = load_cap(text)
    loaded = load.text.split("\n\n> WARNING: MEMORY.md is ")[0] if load.truncated else load.text
    assert len(loaded.split("\n")) <= C.INDEX_MAX_LINES or not loaded
    assert utf16_len(loaded) <= C.INDEX_MAX_CHARS
    loaded.encode("utf-8")
    assert load.truncated == (load.line_count > 200 or load.char_count > C.INDEX_MAX_CHARS)


def test_format_size_matches_agent_wording() -> None:
    assert format_size(25_000) == "24.4KB"
    assert format_size(25_710) == "25.1KB"
    assert format_size(1024) == "1KB"
    assert format_size(500) == "500 bytes"


def test_load_index_missing_file(tmp_path: Path) -> None:
    index = load_index(tmp_path)
    assert not index.exists
    assert index.entries == ()
    assert index.load.text == ""


def test_fences_close_only_on_the_same_character_at_least_as_long() -> None:
    from memdir.agent.index import Fences

    lines = [
        "text",
        "````md",
        "```",
        "still code",
        "```",
        "````",
        "text again",
        "  - item:",
        "    ~~~",
        "    code",
        "    ~~~",
        "after",
    ]
    fences = Fences()
    assert [fences.is_code(line) for line in lines] == [
        False, True, True, True, True, True, False, False, True, True, True, False
    ]  # fmt: skip
