"""Each lint rule: plant the problem, check the code, the position and the message."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from memdir.agent.topic import parse_topic_text
from memdir.config import RecallMode, Settings
from memdir.lint import Diagnostic, DirState, LintContext
from memdir.lint.rules import (
    RULES,
    citations,
    consistency,
    content,
    descriptions,
    directory,
    frontmatter,
    instructions,
)
from memdir.lint.rules import dates as date_rules
from memdir.lint.rules import index as index_rules
from memdir.lint.rules import writes as write_rules
from memdir.lint.rules.base import Rule
from memdir.lint.rules.descriptions import description_problem, near_duplicate_pairs
from memdir.lint.rules.frontmatter import suggest_type
from memhelpers import EXAMPLES, generate_memdir

MakeDir = Callable[..., Path]


def topic(name: str, description: str, type_: str = "project", body: str = "Body.\n") -> str:
    return f"---\nname: {name}\ndescription: {description}\ntype: {type_}\n---\n{body}"


GOOD = (
    "integration tests must hit a real Postgres through testcontainers, never a mocked repository"
)


def run(root: Path, settings: Settings | None = None) -> list[Diagnostic]:
    state = DirState(root, settings)
    state.refresh()
    return list(state.lint().diagnostics)


def only(diagnostics: list[Diagnostic], code: str) -> list[Diagnostic]:
    return [d for d in diagnostics if d.code == code]


def pos(diagnostic: Diagnostic) -> tuple[int, int, int, int]:
    """1-based (line, column, end_line, end_column), as the CLI prints them."""
    s = diagnostic.span
    return (s.start_line + 1, s.start_col + 1, s.end_line + 1, s.end_col + 1)


def entry(rel: str, hook: str = "what it covers") -> str:
    return f"- [{rel}]({rel}) — {hook}"


# --- MEMORY.md ------------------------------------------------------------------------------


def test_mem001_line_over_limit_ranges_the_excess(make_dir: MakeDir) -> None:
    long_hook = "x" * 160
    line = f"- [A](a.md) — {long_hook}"
    root = make_dir({"MEMORY.md": f"# Index\n{line}\n", "a.md": topic("a", GOOD)})
    [found] = only(run(root), "MEM001")
    assert pos(found) == (2, 151, 2, len(line) + 1)
    assert found.severity == "warning"
    assert f"{len(line)} characters (limit 150)" in found.message
    assert "load budget" in found.message


def test_mem001_counts_utf16_units_and_honours_the_configured_limit(make_dir: MakeDir) -> None:
    # Each emoji is two UTF-16 units: 12 + 2 * 50 = 112 units in 62 code points.
    line = "- [A](a.md) " + "😀" * 50
    root = make_dir({"MEMORY.md": line + "\n", "a.md": topic("a", GOOD)})
    assert only(run(root), "MEM001") == []
    [found] = only(run(root, Settings(index_line_limit=80)), "MEM001")
    # 80 units = the 12 ASCII characters plus 34 emoji: the excess starts at code point 46.
    assert pos(found)[:2] == (1, 47)
    assert "112 characters (limit 80)" in found.message


def index_with(count: int, extra: str = "") -> tuple[str, dict[str, str]]:
    files = {f"m{i:03d}.md": topic(f"m{i:03d}", f"{GOOD} number {i}") for i in range(count)}
    lines = [entry(rel, f"memory number {i}") for i, rel in enumerate(files)]
    return "\n".join(lines) + "\n" + extra, files


def test_mem002_past_the_line_cap_names_the_lost_entries(make_dir: MakeDir) -> None:
    text, files = index_with(210)
    root = make_dir({"MEMORY.md": text, **files})
    found = run(root)
    [cap] = only(found, "MEM002")
    assert cap.severity == "error"
    assert pos(cap)[:2] == (201, 1)
    assert "210 lines (limit: 200)" in cap.message
    assert "never sees the last 10 entries (lines 201-210)" in cap.message
    assert only(found, "MEM003") == []


def test_mem002_past_the_character_cap_counts_utf16(make_dir: MakeDir) -> None:
    # 150 lines of 167 UTF-16 units each (17 ASCII + 150 CJK): 25,199 in all, under 200 lines.
    hook = "记" * 150
    files = {f"m{i:03d}.md": topic(f"m{i:03d}", f"{GOOD} {i}") for i in range(150)}
    lines = [f"- [{i:03d}](m{i:03d}.md) {hook}" for i in range(150)]
    root = make_dir({"MEMORY.md": "\n".join(lines) + "\n", **files})
    [cap] = only(run(root), "MEM002")
    # 148 lines and their newlines take 148 * 168 = 24,864 units; line 149 would pass 25,000.
    assert pos(cap)[:2] == (149, 1)
    assert "never sees the last 2 entries" in cap.message


def test_mem003_near_the_cap_warns_at_line_141(make_dir: MakeDir) -> None:
    text, files = index_with(150)
    root = make_dir({"MEMORY.md": text, **files})
    found = run(root)
    assert only(found, "MEM002") == []
    [near] = only(found, "MEM003")
    assert near.severity == "warning"
    assert pos(near)[:2] == (141, 1)
    assert "150/200 lines" in near.message and "loses the last entries" in near.message


def test_mem004_content_blocks_one_diagnostic_each(make_dir: MakeDir) -> None:
    index = (
        "# Index\n"
        f"{entry('a.md')}\n"
        "  - detail bullet under the entry\n"
        f"{entry('b.md')}\n"
        "We decided to keep the export until Q3 because finance\n"
        "still reconciles against it.\n"
        "```\n"
        "make deploy\n"
        "```\n"
        "\n"
        "- See [A](a.md) for more\n"
        "<!-- a comment is fine -->\n"
    )
    root = make_dir({"MEMORY.md": index, "a.md": topic("a", GOOD), "b.md": topic("b", GOOD)})
    found = only(run(root, Settings(preview=True)), "MEM004")  # MEM004 is a preview rule
    assert [pos(d)[:3] for d in found] == [(3, 1, 3), (5, 1, 11)]
    assert "memory content in the index (1 line)" in found[0].message
    assert "(6 lines)" in found[1].message


def test_mem005_dangling_link_at_the_target_with_a_create_fix(make_dir: MakeDir) -> None:
    line = "- [Release calendar](release-calendar.md) — freeze windows for 2026"
    root = make_dir({"MEMORY.md": line + "\n"})
    [found] = only(run(root), "MEM005")
    assert found.severity == "error"
    assert pos(found) == (1, 22, 1, 41)
    assert "release-calendar.md does not exist" in found.message
    assert found.fix is not None and not found.fix.safe
    [create] = found.fix.creates
    assert create.rel_path == "release-calendar.md"
    assert "description: freeze windows for 2026" in create.text
    assert "# Release calendar" in create.text


def test_mem006_duplicate_entry_safe_only_when_identical(make_dir: MakeDir) -> None:
    index = f"{entry('a.md')}\n{entry('b.md')}\n{entry('a.md')}\n- [B](./b.md) — other hook\n"
    root = make_dir({"MEMORY.md": index, "a.md": topic("a", GOOD), "b.md": topic("b", GOOD)})
    first, second = only(run(root), "MEM006")
    assert pos(first)[:2] == (3, 1)
    assert "a.md is already linked on line 1" in first.message
    assert first.fix is not None and first.fix.safe
    assert pos(second)[:2] == (4, 1)
    assert "b.md is already linked on line 2" in second.message
    assert second.fix is not None and not second.fix.safe  # its hook would be lost


@pytest.mark.parametrize(
    ("target", "words"),
    [
        ("https://example.com/notes.md", "links a URL"),
        ("/etc/notes.md", "absolute path"),
        ("MEMORY.md", "links MEMORY.md itself"),
    ],
)
def test_mem007_bad_links(make_dir: MakeDir, target: str, words: str) -> None:
    line = f"- [Bad]({target}) — hook"
    root = make_dir({"MEMORY.md": line + "\n", "notes.txt": "x"})
    found = run(root)
    [bad] = only(found, "MEM007")
    assert pos(bad) == (1, 9, 1, 9 + len(target))
    assert words in bad.message
    assert only(found, "MEM005") == []


@pytest.mark.parametrize(
    "target", ["../docs/api.md", "sub/../../x.md", "../../README.md", "report.html", "notes.txt"]
)
def test_mem007_a_relative_link_beside_the_dir_is_a_pointer(make_dir: MakeDir, target: str) -> None:
    """A repository's memory dir points at the repository's docs (`../docs/api.md`), or at a
    report kept with the memories (`report.html`): not a memory, and neither a dangling memory
    nor a mistake."""
    root = make_dir({"MEMORY.md": f"- [API]({target}) — the endpoints, for comparison\n"})
    found = run(root)
    assert only(found, "MEM007") == [] and only(found, "MEM005") == []


# --- topic files -----------------------------------------------------------------------------


def test_mem101_no_frontmatter_with_a_safe_skeleton(make_dir: MakeDir) -> None:
    root = make_dir(
        {
            "MEMORY.md": entry("user-notes.md") + "\n",
            "user-notes.md": "# Deploys\nAna: ship on Tuesdays. Never Fridays.\n",
        }
    )
    [found] = only(run(root), "MEM101")
    assert found.severity == "error"
    assert pos(found) == (1, 1, 1, 10)
    assert "selector" in found.message
    assert found.fix is not None and found.fix.safe
    [edit] = found.fix.edits
    # The draft description is the first sentence; it holds ": ", so it is quoted.
    assert edit.new_text == (
        '---\nname: user-notes\ndescription: "Ana: ship on Tuesdays"\ntype: user\n---\n'
    )


def test_mem102_yaml_error_at_the_parser_position(make_dir: MakeDir) -> None:
    text = '---\nname: a\ndescription: "unclosed\ntype: project\n---\nBody\n'
    root = make_dir({"MEMORY.md": entry("a.md") + "\n", "a.md": text})
    found = run(root)
    [bad] = only(found, "MEM102")
    assert bad.severity == "error"
    # Where PyYAML gives up on the unclosed quote: the end of the block.
    assert pos(bad) == (4, 14, 4, 14)
    assert bad.message.startswith("malformed YAML: found unexpected end of stream")
    assert "reads no name, description or type" in bad.message
    assert only(found, "MEM103") == []


def test_mem102_frontmatter_that_is_not_a_mapping(make_dir: MakeDir) -> None:
    root = make_dir({"MEMORY.md": entry("a.md") + "\n", "a.md": "---\n- a\n- b\n---\nBody\n"})
    found = run(root)
    [bad] = only(found, "MEM102")
    assert "not a mapping" in bad.message
    assert only(found, "MEM103") == []


def test_mem103_missing_empty_and_non_string_fields(make_dir: MakeDir) -> None:
    files = {
        "a.md": "---\nname: a\ntype: project\n---\nBody\n",
        "b.md": f"---\nname: b\ndescription: {GOOD}\ntype:\n---\nBody\n",
        "c.md": "---\ndescription: [one, two]\ntype: user\nname: c\n---\n",
        "d.md": f"---\ndescription: {GOOD} d\ntype: user\n---\n",
    }
    index = "\n".join(entry(rel) for rel in files) + "\n"
    found = only(run(make_dir({"MEMORY.md": index, **files})), "MEM103")
    by_file = {d.rel_path: d for d in found}
    assert len(found) == 4
    assert pos(by_file["a.md"]) == (1, 1, 1, 4)
    assert by_file["a.md"].message.startswith("missing `description`")
    assert "selector" in by_file["a.md"].message
    assert pos(by_file["b.md"])[:2] == (4, 1)
    assert by_file["b.md"].message.startswith("empty `type`")
    assert pos(by_file["c.md"])[:2] == (2, 14)
    assert "`description` is a YAML list" in by_file["c.md"].message
    assert by_file["d.md"].message.startswith("missing `name`")


@pytest.mark.parametrize(
    ("raw", "suggestion"),
    [
        ("Project", "project"),
        ("projects", "project"),
        ("preferences", "user"),
        ("refrence", "reference"),
    ],
)
def test_mem104_unknown_type_suggests_the_nearest(
    make_dir: MakeDir, raw: str, suggestion: str
) -> None:
    root = make_dir({"MEMORY.md": entry("a.md") + "\n", "a.md": topic("a", GOOD, raw)})
    [found] = only(run(root), "MEM104")
    assert pos(found) == (4, 7, 4, 7 + len(raw))
    assert f"unknown type `{raw}`" in found.message
    assert f"did you mean `{suggestion}`?" in found.message
    assert found.fix is not None and found.fix.edits[0].new_text == suggestion
    assert suggest_type(raw) == suggestion


def test_mem104_nested_metadata_type(make_dir: MakeDir) -> None:
    text = f"---\nname: a\ndescription: {GOOD}\nmetadata:\n  type: Feedback\n---\n"
    root = make_dir({"MEMORY.md": entry("a.md") + "\n", "a.md": text})
    [found] = only(run(root), "MEM104")
    assert pos(found) == (5, 9, 5, 17)
    assert "did you mean `feedback`?" in found.message


def test_mem105_frontmatter_closed_after_line_30(make_dir: MakeDir) -> None:
    padding = "".join(f"note_{i}: x\n" for i in range(32))
    text = f"---\nname: a\ndescription: {GOOD}\ntype: user\n{padding}---\nBody\n"
    root = make_dir({"MEMORY.md": entry("a.md") + "\n", "a.md": text})
    [found] = only(run(root), "MEM105")
    assert found.severity == "error"
    assert pos(found)[:2] == (37, 1)
    assert "past the first 30 lines the prefetch scan reads" in found.message


def test_mem105_never_closed(make_dir: MakeDir) -> None:
    root = make_dir({"MEMORY.md": entry("a.md") + "\n", "a.md": "---\nname: a\nBody\n"})
    found = run(root)
    [unclosed] = only(found, "MEM105")
    assert pos(unclosed) == (1, 1, 1, 4)
    assert "never closed" in unclosed.message
    assert only(found, "MEM103") == []


def test_mem106_line_cap_at_line_201(make_dir: MakeDir) -> None:
    body = "".join(f"line {i}\n" for i in range(250))
    root = make_dir({"MEMORY.md": entry("a.md") + "\n", "a.md": topic("a", GOOD, body=body)})
    [found] = only(run(root), "MEM106")
    assert found.severity == "info"
    assert pos(found)[:2] == (201, 1)
    assert "over 200 lines" in found.message and "not injected" in found.message


def test_mem106_byte_cap_at_the_first_line_past_4096_bytes(make_dir: MakeDir) -> None:
    # The frontmatter takes 5 lines; then 99-character lines. cut_for_injection keeps lines
    # while the bytes so far (newlines included) stay within 4,096.
    head = topic("a", GOOD, body="")
    body = "".join("y" * 99 + "\n" for _ in range(60))
    root = make_dir({"MEMORY.md": entry("a.md") + "\n", "a.md": head + body})
    [found] = only(run(root), "MEM106")
    kept = len(head.encode()) - 1  # bytes of the first 5 lines with their newlines, minus one
    lines_kept = 5 + (4096 - kept) // 100
    assert pos(found)[:2] == (lines_kept + 1, 1)
    assert "over 4096 bytes" in found.message


def test_mem106_one_giant_line_is_left_out_whole(make_dir: MakeDir) -> None:
    text = "x" * 5000
    root = make_dir({"MEMORY.md": entry("a.md") + "\n", "a.md": text})
    [found] = only(run(root), "MEM106")
    assert pos(found)[:2] == (1, 1)  # the agent drops a line that would cross 4096 bytes


def test_mem107_orphan_with_a_safe_index_fix(make_dir: MakeDir) -> None:
    root = make_dir(
        {
            "MEMORY.md": "# Index\n" + entry("a.md") + "\n",
            "a.md": topic("a", GOOD),
            "b.md": topic(
                "b", "deploys go out on Tuesdays after the canary bake", body="# Deploy days\n"
            ),
        }
    )
    [found] = only(run(root), "MEM107")
    assert found.rel_path == "b.md"
    assert found.severity == "warning"
    assert pos(found) == (1, 1, 1, 4)
    assert "invisible in index mode: not linked from MEMORY.md" in found.message
    assert found.fix is not None and found.fix.safe
    [edit] = found.fix.edits
    assert edit.rel_path == "MEMORY.md" and (edit.span.start_line, edit.span.start_col) == (2, 0)
    assert edit.new_text == (
        "- [Deploy days](b.md) — deploys go out on Tuesdays after the canary bake\n"
    )


def test_mem107_respects_subfolders_and_url_encoded_links(make_dir: MakeDir) -> None:
    root = make_dir(
        {
            "MEMORY.md": "- [A](sub%20dir/my%20file.md) — a\n- [B](<other dir/b.md>) — b\n",
            "sub dir/my file.md": topic("a", GOOD),
            "other dir/b.md": topic("b", GOOD + " too"),
        }
    )
    found = run(root)
    assert only(found, "MEM107") == [] and only(found, "MEM005") == []


def test_mem107_is_info_in_prefetch_mode(make_dir: MakeDir) -> None:
    root = make_dir({"a.md": topic("a", GOOD)})
    [found] = only(run(root, Settings(recall_mode="prefetch")), "MEM107")
    assert found.severity == "info"
    assert "recall_mode = prefetch" in found.message
    assert "index is not injected" in found.message


def test_mem107_fix_creates_the_index_when_missing(make_dir: MakeDir) -> None:
    root = make_dir({"a.md": topic("a", GOOD)})
    [found] = only(run(root), "MEM107")
    assert "(there is no MEMORY.md)" in found.message
    assert found.fix is not None
    assert [c.rel_path for c in found.fix.creates] == ["MEMORY.md"]


def test_mem107_hook_is_cut_to_keep_the_entry_under_the_limit(make_dir: MakeDir) -> None:
    long = "deploys go out on Tuesdays after the canary bake " * 6
    root = make_dir({"MEMORY.md": "", "a.md": topic("a", long.strip())})
    [found] = only(run(root), "MEM107")
    assert found.fix is not None
    line = found.fix.edits[0].new_text.rstrip("\n")
    assert len(line) <= 150 and line.endswith("…")
    assert line.startswith("- [a](a.md) — deploys go out on Tuesdays")


def test_mem108_outside_the_window_of_200_newest(make_dir: MakeDir) -> None:
    files = {f"m{i:03d}.md": topic(f"m{i:03d}", f"{GOOD} {i}") for i in range(203)}
    root = make_dir(files)  # mtimes ascend in dict order: m000-m002 are the oldest
    found = only(run(root, Settings(ignore=("MEM107",))), "MEM108")
    assert [d.rel_path for d in found] == ["m000.md", "m001.md", "m002.md"]
    assert found[0].severity == "info"
    assert "never offers this one to the selector" in found[0].message
    prefetch = only(run(root, Settings(recall_mode="prefetch")), "MEM108")
    assert {d.severity for d in prefetch} == {"warning"}


def test_mem108_ties_on_mtime_are_broken_by_path_like_the_scan(make_dir: MakeDir) -> None:
    files = {f"m{i:03d}.md": topic(f"m{i:03d}", f"{GOOD} {i}") for i in range(201)}
    root = make_dir(files)
    for rel in files:
        os.utime(root / rel, (1_700_000_000, 1_700_000_000))
    found = only(run(root, Settings(ignore=("MEM107",))), "MEM108")
    assert [d.rel_path for d in found] == ["m200.md"]


@pytest.mark.parametrize(
    ("description", "reason"),
    [
        ("notes", "too short"),
        ("Notes about the project", "too generic"),
        ("misc user preferences and various notes", "too generic"),
        ("release merge freeze", "too short"),
        ("Release merge freeze notes here", None),
        # Length is MEM131's (a preview rule), not vagueness.
        ("a " + "very long description " * 12, None),
        ("数据保留", "too short"),
        ("用户行为日志只保留九十天", None),
    ],
)
def test_mem109_description_problem(description: str, reason: str | None) -> None:
    found = description_problem(description, "release-merge-freeze", "release-merge-freeze.md")
    assert (found is None) if reason is None else (found is not None and reason in found)


def test_mem131_a_long_description_is_its_own_preview_rule(make_dir: MakeDir) -> None:
    long = "the export schema: " + "its columns, their types and the migrations behind them; " * 5
    long = long.rstrip("; ")
    root = make_dir({"MEMORY.md": entry("a.md") + "\n", "a.md": topic("a", long)})
    assert only(run(root), "MEM131") == [] and only(run(root), "MEM109") == []
    [found] = only(run(root, Settings(preview=True)), "MEM131")
    assert found.span.start_line == 2 and f"{len(long)} characters long" in found.message
    assert only(run(root, Settings(preview=True)), "MEM109") == []


def test_mem109_repeats_the_name(make_dir: MakeDir) -> None:
    text = topic("team-release-merge-freeze", "team release merge freeze")
    root = make_dir({"MEMORY.md": entry("a.md") + "\n", "a.md": text})
    [found] = only(run(root), "MEM109")
    assert pos(found) == (3, 14, 3, 39)
    assert "only repeats the file's name" in found.message
    assert "selector chooses memories from their one-line descriptions" in found.message


def test_mem109_multi_line_description(make_dir: MakeDir) -> None:
    text = f"---\nname: a\ndescription: |\n  {GOOD}\n  and more\ntype: user\n---\n"
    root = make_dir({"MEMORY.md": entry("a.md") + "\n", "a.md": text})
    [found] = only(run(root), "MEM109")
    assert "spans several lines" in found.message


def test_mem110_secret_position_and_no_echo(make_dir: MakeDir) -> None:
    key = "sk-ant-api03-" + "Zx9Qw3Er5Ty7Ui1Op2As4Df6Gh8Jk0LzXcVbNm1Qa2Ws3Ed4Rf5Tg6Yh7Uj8" + "AA"
    body = f"# Staging\n\nThe staging key is {key} for now.\n"
    root = make_dir({"MEMORY.md": entry("a.md") + "\n", "a.md": topic("a", GOOD, body=body)})
    [found] = only(run(root), "MEM110")
    assert found.severity == "error"
    assert pos(found) == (8, 20, 8, 20 + len(key))
    assert "Anthropic API key" in found.message and "sk-ant-…" in found.message
    assert key not in found.message and key[8:20] not in found.message


def test_mem110_in_the_index_too(make_dir: MakeDir) -> None:
    token = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5b"
    root = make_dir({"MEMORY.md": f"- [A](a.md) — CI token {token}\n", "a.md": topic("a", GOOD)})
    [found] = only(run(root), "MEM110")
    assert found.rel_path == "MEMORY.md" and pos(found)[:2] == (1, 24)


def test_mem111_same_name_in_two_files(make_dir: MakeDir) -> None:
    files = {
        "a.md": topic("user-role", GOOD),
        "people/b.md": topic("user-role", "ana reviews every change herself on her phone"),
    }
    index = "\n".join(entry(rel) for rel in files) + "\n"
    preview = Settings(preview=True)
    found = only(run(make_dir({"MEMORY.md": index, **files}), preview), "MEM111")
    # One finding for the pair, on its last file, naming the other.
    assert [(d.rel_path, pos(d)[:2]) for d in found] == [("people/b.md", (2, 7))]
    assert "`user-role` is also the name of a.md" in found[0].message
    assert "[[user-role]]" in found[0].message
    # A preview rule: off by default.
    assert only(run(make_dir({"MEMORY.md": index, **files})), "MEM111") == []


def test_mem111_near_identical_descriptions(make_dir: MakeDir) -> None:
    files = {
        "a.md": topic("a", "trunk is frozen from app-store submission until the release is live"),
        "b.md": topic("b", "Trunk is frozen from app store submission until the release is live!"),
        "c.md": topic("c", "trunk is open again once the release has been stable for one day"),
    }
    index = "\n".join(entry(rel) for rel in files) + "\n"
    found = only(run(make_dir({"MEMORY.md": index, **files}), Settings(preview=True)), "MEM111")
    assert [d.rel_path for d in found] == ["b.md"]
    assert pos(found[0]) == (3, 14, 3, 14 + 68)
    assert "100% the same as a.md" in found[0].message


def test_near_duplicate_pairs_ignores_short_vague_descriptions() -> None:
    assert near_duplicate_pairs({"a.md": "notes", "b.md": "notes"}) == []
    pairs = near_duplicate_pairs(
        {"a.md": "deploys happen on Tuesday at ten", "b.md": "deploys happen on Tuesday at ten"}
    )
    assert [(a, b) for a, b, _ in pairs] == [("a.md", "b.md")]


def test_mem112_not_utf8_at_the_first_bad_byte(make_dir: MakeDir) -> None:
    data = f"---\nname: a\ndescription: {GOOD}\ntype: user\n---\nThe caf\xe9 opens at 8.\n"
    root = make_dir({"MEMORY.md": entry("a.md") + "\n", "a.md": data.encode("latin-1")})
    [found] = only(run(root), "MEM112")
    assert pos(found) == (6, 8, 6, 9)
    assert "U+FFFD" in found.message and "garbled" in found.message


def test_mem113_binary_file(make_dir: MakeDir) -> None:
    root = make_dir({"MEMORY.md": "", "diagram.md": b"\x89PNG\r\n\x1a\n\x00\x00\x00"})
    found = run(root)
    [binary] = only(found, "MEM113")
    assert binary.rel_path == "diagram.md" and binary.severity == "error"
    assert "binary" in binary.message
    assert only(found, "MEM107") == [] and only(found, "MEM101") == []


def test_mem114_symlink_out_of_the_dir(make_dir: MakeDir, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text(topic("x", GOOD), encoding="utf-8")
    root = make_dir({"MEMORY.md": ""})
    (root / "shared.md").symlink_to(outside)
    found = run(root)
    [skip] = only(found, "MEM114")
    assert skip.rel_path == "shared.md"
    assert "symlink leads outside the memory dir" in skip.message
    assert only(found, "MEM107") == []


def test_mem115_a_name_the_agent_blanks(make_dir: MakeDir) -> None:
    files = {
        "data-retention.md": topic("数据保留策略", GOOD),
        "值班.md": topic("值班与升级", f"{GOOD} oncall"),
        "symbols.md": topic("'***'", f"{GOOD} symbols"),
        # Kept by the agent: ASCII letters or digits, or only ``a-z0-9_-`` already.
        "mixed.md": topic("发布冻结 v2", f"{GOOD} mixed"),
        "under.md": topic("___", f"{GOOD} under"),
    }
    index = "\n".join(entry(rel) for rel in files) + "\n"
    root = make_dir({"MEMORY.md": index, **files})
    found = {d.rel_path: d for d in only(run(root), "MEM115")}
    assert sorted(found) == ["data-retention.md", "symbols.md", "值班.md"]
    named = found["data-retention.md"]
    assert named.severity == "warning"
    assert pos(named) == (2, 7, 2, 13)
    assert "rewrites this name to an empty string the next time it writes the file" in (
        named.message
    )
    assert "breaks [[name]] links" in named.message
    # The file name has an ASCII slug: offered, not applied (links keep the old name).
    assert named.fix is not None and not named.fix.safe
    assert [e.new_text for e in named.fix.edits] == ["data-retention"]
    assert found["值班.md"].fix is None


def test_mem103_an_empty_name_says_the_agent_may_have_blanked_it(make_dir: MakeDir) -> None:
    root = make_dir({"MEMORY.md": entry("a.md") + "\n", "a.md": topic('""', GOOD)})
    [found] = only(run(root), "MEM103")
    assert found.message.startswith("empty `name`")
    assert "Claude Code writes an empty name" in found.message


def test_mem116_top_level_type_under_a_different_nested_one(make_dir: MakeDir) -> None:
    files = {
        "a.md": f"---\nname: a\ndescription: {GOOD}\ntype: user\nmetadata:\n  type: reference\n"
        "---\n",
        "b.md": "---\nname: b\ndescription: Ana is a backend engineer new to the React frontend\n"
        "type: user\nmetadata:\n  type: user\n---\n",
    }
    index = "\n".join(entry(rel) for rel in files) + "\n"
    found = run(make_dir({"MEMORY.md": index, **files}))
    [conflict] = only(found, "MEM116")
    assert conflict.rel_path == "a.md"
    assert pos(conflict) == (4, 7, 4, 11)
    assert "reads `metadata.type` (reference)" in conflict.message
    assert [d.code for d in found] == ["MEM116"]


# --- what must not be flagged ---------------------------------------------------------------


def test_valid_variants_are_not_flagged(make_dir: MakeDir) -> None:
    files = {
        "a.md": (
            f"---\nname: Release merge freeze\ndescription: {GOOD}\nmetadata:\n  type: project\n"
            "modified: 2026-07-15T09:12:00Z\nowner: ana\ntags: [release, mobile]\n---\n"
            "# Freeze\nSee [[release-calendar]] (not written yet) and [[user-role]].\n"
        ),
        "b.md": topic("user-role", "Ana is a backend engineer new to the React frontend"),
        "c.md": "---\nname: c\ndescription: 'answer first, then at most three bullets'\n"
        'type: "feedback"\n---\n',
        # As the agent rewrites a file it writes (docs/agent.md).
        "d.md": "---\nname: terse-answers\ndescription: answer first, then three bullets at most\n"
        "metadata:\n  node_type: memory\n  type: feedback\n"
        "  originSessionId: 4f1c2e0a-9b7d-4c1e-8f3a-2d6b5e7c9a10\n"
        "  modified: 2026-12-03T12:24:00.780Z\n---\n\nAnswer first.\n",
    }
    index = "\n".join(entry(rel) for rel in files) + "\n"
    assert run(make_dir({"MEMORY.md": index, **files})) == []


def test_examples_memory_is_clean() -> None:
    examples = EXAMPLES
    assert run(examples) == []


# --- the registry -----------------------------------------------------------------------------


def test_every_rule_defined_is_registered_with_a_check_for_its_scope() -> None:
    defined = {
        value.code: value
        for area in (
            index_rules,
            frontmatter,
            descriptions,
            content,
            directory,
            citations,
            date_rules,
            write_rules,
            consistency,
            instructions,
        )
        for value in vars(area).values()
        if isinstance(value, Rule)
    }
    assert defined == RULES
    for rule in RULES.values():
        assert getattr(rule, rule.scope) is not None, rule.code


def test_severity_by_mode_is_what_the_engine_applies() -> None:
    modes: tuple[RecallMode, ...] = ("index", "prefetch")
    for mode in modes:
        context = LintContext.from_settings(Path("/m"), Settings(recall_mode=mode, preview=True))
        for code, rule in RULES.items():
            assert context.severities[code] == rule.severity_by_mode.get(mode, rule.severity)
    assert RULES["MEM107"].severity_in("prefetch") == "info"
    assert RULES["MEM108"].severity_in("prefetch") == "warning"
    overridden = Settings(recall_mode="prefetch", severity={"MEM107": "error"})
    assert LintContext.from_settings(Path("/m"), overridden).severities["MEM107"] == "error"


def test_each_check_reports_only_its_own_code_when_selected_alone(tmp_path: Path) -> None:
    root = generate_memdir(tmp_path / "gen", 260, seed=1)
    everything = run(root)
    for code in RULES:
        alone = run(root, Settings(select=(code,)))
        assert alone == [d for d in everything if d.code == code], code
    assert len({d.code for d in everything}) >= 15  # the generated dir exercises most rules


def test_parser_problems_say_which_field_and_what_without_message_text() -> None:
    fields = parse_topic_text("---\nname: [a]\ndescription: d\ntype: {x: 1}\n---\n", Path("a"), "a")
    assert {(p.kind, p.key) for p in fields.problems} == {
        ("bad-field", "name"),
        ("bad-field", "type"),
    }
    listed = parse_topic_text("---\n- a\n---\n", Path("a"), "a")
    assert [(p.kind, p.key) for p in listed.problems] == [("bad-field", None)]


def test_mem112_message_is_built_from_the_problems_detail(make_dir: MakeDir) -> None:
    root = make_dir({"MEMORY.md": entry("a.md") + "\n", "a.md": b"---\nname: caf\xe9\n---\n"})
    [found] = only(run(root), "MEM112")
    assert found.message.startswith("not valid UTF-8 (byte 0xe9 at offset 13): the agent reads")


# --- MEM129 ----------------------------------------------------------------------------------


LAUNCH = topic(
    "launch", "the launch moved to May 5", body="The launch moved to May 5, after the audit.\n"
)


def test_mem129_a_hook_left_behind_by_a_moved_deadline(make_dir: MakeDir) -> None:
    root = make_dir(
        {"MEMORY.md": "# Index\n- [Launch](launch.md) — due March 3\n", "launch.md": LAUNCH}
    )
    (found,) = only(run(root), "MEM129")
    assert found.rel_path == "MEMORY.md"
    assert pos(found) == (2, 25, 2, 36)  # the hook
    assert found.message == (
        "the index hook says 3 where the description of launch.md says 5, and launch.md says 3 "
        "nowhere: the agent loads this hook every session and believes it. Update the hook (the "
        "fix drafts one from the description)"
    )
    assert found.fix is not None and not found.fix.safe


@pytest.mark.parametrize(
    ("hook", "description", "body"),
    [
        ("tier 7 support plan", "the tier 5 support plan", "Tier 5."),
        ("schema checked against v2.4.1", "the export schema as of v2.3.0", "Notes."),
        ("共 8 條部署規則", "共 9 條部署規則的清單", "清單。"),
    ],
)
def test_mem129_fires_where_a_number_changed_in_its_place(
    make_dir: MakeDir, hook: str, description: str, body: str
) -> None:
    root = make_dir(
        {"MEMORY.md": f"- [A](a.md) — {hook}\n", "a.md": topic("a", description, body=body)}
    )
    assert len(only(run(root), "MEM129")) == 1


@pytest.mark.parametrize(
    ("hook", "description", "body"),
    [
        # The file still says it (the body): the hook agrees with the memory.
        ("due March 3", "the launch is due soon", "Due March 3.\n"),
        # A detail the memory lacks, with nothing against it: not a disagreement.
        ("1800+ tests in Jest", "testing standards for this project", "Use TDD.\n"),
        # Numbers in other places: a count against a date.
        ("18 projects and their state", "every project as of 05.06.2026", "Projects.\n"),
        # The same number written with a thousands separator.
        ("break-even 1600 GPU hours", "break-even at 1,600 GPU hours a month", "x\n"),
        # No digit at all.
        ("the launch date", "the launch moved to May 5", "May 5.\n"),
        # Digits inside a word: a commit hash, no number the hook states.
        ("header fix landed in `c47c9ba`", "part 2.2 c.1 of the export work", "Done.\n"),
    ],
)
def test_mem129_quiet_where_the_hook_and_the_memory_agree(
    make_dir: MakeDir, hook: str, description: str, body: str
) -> None:
    root = make_dir(
        {"MEMORY.md": f"- [A](a.md) — {hook}\n", "a.md": topic("a", description, body=body)}
    )
    assert only(run(root), "MEM129") == []
