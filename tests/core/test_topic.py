from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from memdir.agent.topic import load_header, load_topic, parse_topic_text
from memdir.model import MemoryHeader
from memdir.textio import read_head

ROOT = Path("/m")


def parse(text: str):  # type: ignore[no-untyped-def]
    return parse_topic_text(text, ROOT / "a.md", "a.md")


def test_standard_frontmatter_fields_and_body_line() -> None:
    topic = parse("---\nname: n\ndescription: d\ntype: project\n---\n# Title\nbody\n")
    assert (topic.name, topic.description, topic.type, topic.raw_type) == (
        "n",
        "d",
        "project",
        "project",
    )
    assert topic.body_line == 5
    assert topic.body.startswith("# Title")
    assert topic.problems == ()
    fm = topic.frontmatter
    assert fm is not None and fm.close_line == 4
    assert fm.value_spans["description"].start_line == 2
    assert fm.value_spans["description"].start_col == len("description: ")


def test_nested_metadata_type_and_unknown_fields_are_valid() -> None:
    topic = parse(
        "---\nname: n\ndescription: d\nmetadata:\n  type: feedback\nowner: ana\n"
        "modified: 2026-07-15T09:12:00Z\n---\nbody"
    )
    assert topic.type == "feedback"
    assert topic.modified == "2026-07-15T09:12:00Z"
    assert topic.frontmatter is not None and topic.frontmatter.data["owner"] == "ana"
    assert topic.frontmatter.value_spans["metadata.type"].start_line == 4
    assert topic.problems == ()


def test_metadata_type_and_modified_win_over_top_level_ones() -> None:
    # The agent reads {...top-level, ...metadata}: the nested value, even an empty one.
    topic = parse(
        "---\nname: n\ndescription: d\ntype: user\nmodified: 2026-01-01T00:00:00Z\n"
        "metadata:\n  type: reference\n  modified: 2026-12-03T12:24:00.780Z\n---\n"
    )
    assert topic.type == "reference"
    assert topic.modified is not None and topic.modified.startswith("2026-12-03T12:24:00.78")
    emptied = parse("---\nname: n\ndescription: d\ntype: user\nmetadata:\n  type:\n---\n")
    assert emptied.raw_type is None
    nested_list = parse("---\nname: n\ndescription: d\ntype: user\nmetadata:\n  type: [a]\n---\n")
    assert nested_list.raw_type is None
    [problem] = nested_list.problems
    assert (problem.kind, problem.key, problem.span.start_line) == ("bad-field", "type", 5)
    assert "`metadata.type` is a YAML list" in problem.message


def test_the_scan_reads_the_nested_type_first(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text(
        "---\nname: a\ndescription: d\ntype: user\nmetadata:\n  type: reference\n---\n",
        encoding="utf-8",
    )
    assert load_header(tmp_path / "a.md", tmp_path).type == "reference"


def test_unknown_type_is_no_type_but_kept_raw() -> None:
    topic = parse("---\nname: n\ndescription: d\ntype: Project\n---\n")
    assert topic.type is None
    assert topic.raw_type == "Project"


def test_wiki_links_with_positions_outside_code() -> None:
    topic = parse(
        "---\nname: n\n---\nSee [[release-calendar]] and [[a|alias]].\n```\n[[no]]\n```\n"
    )
    assert [(link.name, link.span.start_line, link.span.start_col) for link in topic.links] == [
        ("release-calendar", 3, 4),
        ("a", 3, 29),
    ]


def test_malformed_yaml_problem_at_parser_position() -> None:
    topic = parse("---\nname: n\ndescription: d: e\ntype: user\n---\nbody\n\t")
    # The agent retries a block that does not parse with the value quoted: so does memdir.
    assert topic.problems == () and topic.description == "d: e"
    topic = parse('---\nname: n\ndescription: "d\ntype: user\n---\nbody')
    (problem,) = [p for p in topic.problems if p.kind == "yaml-error"]
    assert problem.span.start_line == 3
    assert "found unexpected end of stream" in problem.message
    assert topic.name is None  # nothing parsed from a broken block


def test_no_frontmatter_and_unclosed() -> None:
    assert [p.kind for p in parse("# Just a note\n").problems] == ["no-frontmatter"]
    unclosed = parse("---\nname: n\ndescription: d\n")
    assert [p.kind for p in unclosed.problems] == ["unclosed-frontmatter"]
    assert unclosed.frontmatter is not None and unclosed.frontmatter.close_line is None


def test_non_string_values_are_problems_not_crashes() -> None:
    topic = parse("---\nname: [a, b]\ndescription: 42\ntype: user\n---\n")
    assert topic.description == "42"
    assert topic.name is None
    assert any(p.kind == "bad-field" and "`name`" in p.message for p in topic.problems)
    scalar = parse("---\njust a string\n---\n")
    assert any(p.kind == "bad-field" for p in scalar.problems)


def test_load_topic_non_utf8_and_binary(tmp_path: Path) -> None:
    (tmp_path / "latin.md").write_bytes(b"---\nname: caf\xe9\ndescription: d\ntype: user\n---\n")
    topic = load_topic(tmp_path / "latin.md", tmp_path)
    assert topic.name == "caf\ufffd"
    (problem,) = [p for p in topic.problems if p.kind == "not-utf8"]
    assert (problem.span.start_line, problem.span.start_col) == (1, 9)
    (tmp_path / "bin.md").write_bytes(b"\x00\x01\x02---")
    binary = load_topic(tmp_path / "bin.md", tmp_path)
    assert [p.kind for p in binary.problems] == ["binary"]


def test_load_topic_unreadable_and_vanished(tmp_path: Path) -> None:
    vanished = load_topic(tmp_path / "gone.md", tmp_path)
    assert [p.kind for p in vanished.problems] == ["unreadable"]


def test_header_reads_only_first_30_lines(tmp_path: Path) -> None:
    late = "---\nname: n\n" + "x: 1\n" * 30 + "description: late\ntype: user\n---\nbody\n"
    (tmp_path / "late.md").write_text(late)
    header = load_header(tmp_path / "late.md", tmp_path)
    assert header.description is None and header.type is None
    ok = "---\nname: n\ndescription: early\ntype: user\n---\n" + "line\n" * 10_000
    (tmp_path / "ok.md").write_text(ok)
    header = load_header(tmp_path / "ok.md", tmp_path)
    assert (header.description, header.type) == ("early", "user")
    assert header.size == len(ok)


@given(st.binary(max_size=600))
def test_parser_never_raises_on_random_bytes(data: bytes) -> None:
    topic = parse(data.decode("utf-8", errors="replace"))
    assert topic.rel_path == "a.md"


@given(st.text(max_size=300))
def test_parser_never_raises_on_frontmatter_like_text(text: str) -> None:
    parse("---\n" + text + "\n---\nbody")


# --- the scan's header, as Claude Code 2.1.328 reads it -------------------------------------------


def _header(tmp_path: Path, content: str | bytes) -> MemoryHeader:
    path = tmp_path / "h.md"
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return load_header(path, tmp_path)


def test_header_reads_crlf_bom_and_tab_indented_frontmatter(tmp_path: Path) -> None:
    crlf = _header(tmp_path, "---\r\ndescription: Windows\r\ntype: project\r\n---\r\nbody\r\n")
    assert (crlf.description, crlf.type) == ("Windows", "project")
    assert _header(tmp_path, "\ufeff---\ndescription: BOM\n---\nx\n").description == "BOM"
    tabs = _header(tmp_path, "---\ndescription: Tabs\nmetadata:\n\ttype: reference\n---\nx\n")
    assert (tabs.description, tabs.type) == ("Tabs", "reference")
    # The agent's retry also quotes a value holding a YAML indicator.
    assert _header(tmp_path, "---\ndescription: a: b\n---\n").description == "a: b"


def test_header_description_is_raw_and_a_string(tmp_path: Path) -> None:
    block = _header(tmp_path, "---\ndescription: |\n  first\n  second\ntype: user\n---\n")
    assert block.description == "first\nsecond\n"
    assert _header(tmp_path, '---\ndescription: "  padded  "\n---\n').description == "  padded  "
    # Typed as the agent's YAML 1.2 parser types it: numbers and booleans are no description,
    # yes/no and dates stay strings.
    assert _header(tmp_path, "---\ndescription: 42\n---\n").description is None
    assert _header(tmp_path, "---\ndescription: true\n---\n").description is None
    assert _header(tmp_path, "---\ndescription: 1e3\n---\n").description is None
    assert _header(tmp_path, "---\ndescription: yes\n---\n").description == "yes"
    assert _header(tmp_path, "---\ndescription: 2026-01-01\n---\n").description == "2026-01-01"
    assert _header(tmp_path, "---\ndescription: d\ntype: ' user'\n---\n").type is None


def test_header_frontmatter_ends_at_the_first_dashes(tmp_path: Path) -> None:
    assert _header(tmp_path, "---\ndescription: a---b\n---\n").description == "a"
    assert _header(tmp_path, "----\ndescription: x\n---\n").description is None
    assert _header(tmp_path, "---\ndescription: open\ntype: user\nbody\n").description is None


def test_head_read_stops_at_30_lines_and_64_kib(tmp_path: Path) -> None:
    late = "---\n" + "".join(f"k{i}: v\n" for i in range(28)) + "description: late\n---\n"
    assert _header(tmp_path, late).description is None  # the closing --- is line 31
    path = tmp_path / "h.md"
    path.write_text("a\nb\n", encoding="utf-8")
    assert read_head(path, 30).text == "a\nb\n"
    path.write_text("".join(f"{i}\n" for i in range(40)), encoding="utf-8")
    assert read_head(path, 30).text == "\n".join(str(i) for i in range(30))
    # A line that would take the text past the byte limit ends the read.
    path.write_text("short\n" + "x" * 70_000 + "\nafter\n", encoding="utf-8")
    head = read_head(path, 30)
    assert (head.text, head.partial) == ("short", True)
    path.write_text("ab\r\ncd\r\n" + "y" * 10, encoding="utf-8")
    assert read_head(path, 30, max_bytes=15).text == "ab\ncd"
    assert read_head(path, 30, max_bytes=16).text == "ab\ncd\n" + "y" * 10
