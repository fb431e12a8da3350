"""memdir.fixes: the one planner behind lint's fixes, the editor's code actions and renames."""

from __future__ import annotations

from pathlib import Path

import frontmatter
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from memdir.agent.index import fit_entry, parse_index
from memdir.agent.topic import parse_topic_text
from memdir.fixes.apply import apply_text_edits, combine, compatible
from memdir.fixes.model import Fix, TextEdit
from memdir.fixes.plan import (
    add_to_index,
    content_block,
    create_missing,
    dangling_fixes,
    entries_linking,
    frontmatter_skeleton,
    move_fixes,
    move_to_topic,
    remove_duplicate,
    remove_entry,
    rename_edits,
    replace_hook,
    set_type,
    type_choices,
)
from memdir.fixes.text import (
    agent_name,
    ascii_slug,
    first_sentence,
    kebab_slug,
    memory_name,
    name_from_file,
    unique_file_name,
    yaml_scalar,
)
from memdir.model import Span
from memdir.textio import utf16_len

ROOT = Path("/mem")


def apply(text: str, span: Span, new_text: str) -> str:
    lines = text.split("\n")
    start = sum(len(line) + 1 for line in lines[: span.start_line]) + span.start_col
    end = sum(len(line) + 1 for line in lines[: span.end_line]) + span.end_col
    return text[:start] + new_text + text[end:]


def test_kebab_slug() -> None:
    assert kebab_slug("Release merge freeze!") == "release-merge-freeze"
    assert kebab_slug("Ana's role: backend") == "ana-s-role-backend"
    assert kebab_slug("数据保留策略") == "数据保留策略"
    assert kebab_slug("***") == "memory"
    long = kebab_slug("word " * 40)
    assert len(long) <= 60 and not long.endswith("-")


def test_agent_name_is_what_claude_code_writes_back() -> None:
    # Observed with Claude Code 2.1.328 (docs/agent.md).
    assert agent_name("Test Fact") == "test-fact"
    assert agent_name("quoted: name") == "quoted-name"
    assert agent_name("发布冻结") == ""
    assert agent_name("keep_this-1") == "keep_this-1"
    assert agent_name("___") == "___"


def test_new_names_are_ascii_slugs_the_agent_keeps() -> None:
    assert ascii_slug("Café notes: Q3") == "cafe-notes-q3"
    assert ascii_slug("数据保留策略") == ""
    assert memory_name("Release merge freeze!") == "release-merge-freeze"
    assert memory_name("数据保留策略", "data-retention.md") == "data-retention"
    assert memory_name("数据保留策略", "数据保留策略.md") == "数据保留策略"
    assert name_from_file("team/Straße notes.md") == "strasse-notes"
    assert name_from_file("值班 与 升级.md") == "值班-与-升级"
    for title in ("Release merge freeze!", "Café notes: Q3", "word " * 40, "v2 发布"):
        assert agent_name(memory_name(title)) == memory_name(title)


def test_unique_file_name_is_case_insensitive() -> None:
    assert unique_file_name("notes", []) == "notes.md"
    assert unique_file_name("notes", ["Notes.md"]) == "notes-2.md"
    assert unique_file_name("notes", ["notes.md", "notes-2.md"]) == "notes-3.md"
    assert unique_file_name("notes", [], "team/") == "team/notes.md"


@pytest.mark.parametrize(
    "value",
    [
        "plain words",
        "a: b",
        "# hash",
        "[x]",
        "yes",
        "No",
        "",
        "数据: 90 天",
        "'q'",
        "x #y",
        "a-b (c)",
    ],
)
def test_yaml_scalar_round_trips(value: str) -> None:
    assert yaml.safe_load(f"k: {yaml_scalar(value)}") == {"k": value}


def test_first_sentence_skips_headings_and_markup() -> None:
    text = "# Grafana\n\nThe **checkout** board is the [first stop](x.md). Then logs.\n"
    assert first_sentence(text) == "The checkout board is the first stop"
    assert first_sentence("# Only a heading\n") == ""
    wrapped = "Deploys go through\nthe pipeline. More.\n- a bullet\n"
    assert first_sentence(wrapped) == "Deploys go through the pipeline"


def test_index_line_stays_under_limit_in_utf16() -> None:
    line = fit_entry("数据" * 20, "data.md", "行为日志" * 40, 80)
    assert utf16_len(line) <= 80 and line.startswith("- [")
    assert "](data.md)" in line


INDEX = """# Index

- [Role](role.md) — who
- [Role again](role.md) — dup
- [Gone](gone.md) — missing

We deploy on Tuesdays; never on Fridays.
- a detail bullet
"""


def test_move_block_keeps_text_verbatim() -> None:
    index = parse_index(INDEX, ROOT / "MEMORY.md")
    assert content_block(index, 7) == (6, 7)
    moved = move_to_topic(index, 6, 7, ["role.md"])
    assert moved is not None
    assert moved.rel_path == "we-deploy-on-tuesdays.md"
    post = frontmatter.loads(moved.topic_text)
    assert post.content == "We deploy on Tuesdays; never on Fridays.\n- a detail bullet"
    assert post["name"] == "we-deploy-on-tuesdays"
    assert post["type"] in ("project", "feedback", "user", "reference")
    (edit,) = moved.fix.edits
    result = apply(INDEX, edit.span, edit.new_text)
    assert result.split("\n")[6] == moved.index_line
    assert moved.index_line == (
        "- [We deploy on Tuesdays](we-deploy-on-tuesdays.md) — Never on Fridays"
    )


def test_move_avoids_names_linked_by_dangling_entries() -> None:
    text = "- [Gone](we-deploy.md) — x\n\nWe deploy.\n"
    moved = move_to_topic(parse_index(text, ROOT / "MEMORY.md"), 2, 2, [])
    assert moved is not None and moved.rel_path == "we-deploy-2.md"


@given(
    st.lists(
        st.text(
            alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\n"),
            min_size=1,
            max_size=80,
        ).filter(lambda s: s.strip() and not s.lstrip().startswith(("#", "-", "*", "+", "<"))),
        min_size=1,
        max_size=5,
    )
)
def test_move_never_loses_text(lines: list[str]) -> None:
    text = "\n".join(lines) + "\n"
    index = parse_index(text, ROOT / "MEMORY.md")
    moved = move_to_topic(index, 0, len(lines) - 1, [])
    if moved is None:
        return
    body = "\n".join(lines)
    first = next(i for i, line in enumerate(lines) if line.strip())
    last = max(i for i, line in enumerate(lines) if line.strip())
    block = "\n".join(lines[first : last + 1])
    assert moved.topic_text.endswith(block + "\n") or moved.topic_text.endswith(block)
    assert block in moved.topic_text
    assert utf16_len(moved.index_line) <= 150
    topic = parse_topic_text(moved.topic_text, ROOT / moved.rel_path, moved.rel_path)
    assert topic.name and topic.description is not None and topic.type
    assert body


def test_remove_and_create_missing() -> None:
    index = parse_index(INDEX, ROOT / "MEMORY.md")
    dup = index.entries[1]
    (edit,) = remove_entry(index, dup, "Remove").edits
    assert "Role again" not in apply(INDEX, edit.span, edit.new_text)
    gone = index.entries[2]
    fix = create_missing(index, gone, "gone.md", ["role.md"])
    assert fix is not None and not fix.safe
    (creation,) = fix.creates
    assert creation.path == ROOT / "gone.md" and creation.rel_path == "gone.md"
    post = frontmatter.loads(creation.text)
    assert post["description"] == "missing" and post.content == "# Gone"
    assert create_missing(index, gone, "gone.md", ["Gone.md"]) is None  # never over a file
    assert create_missing(index, gone, "../out.md") is None
    # MEM005's menu: write the file, or drop the entry; without the file, only the drop.
    assert [f.title for f in dangling_fixes(index, gone, "gone.md")] == [
        "Create gone.md",
        "Remove the dangling entry for gone.md",
    ]
    assert len(dangling_fixes(index, gone, "gone.md", ["gone.md"])) == 1


def test_duplicate_removal_is_safe_only_when_nothing_is_lost() -> None:
    index = parse_index(INDEX, ROOT / "MEMORY.md")
    first, again = index.entries[0], index.entries[1]
    fix = remove_duplicate(index, again, first, "role.md")
    assert not fix.safe and "its hook: 'dup'" in fix.title
    same = parse_index("- [R](r.md) — h\n- [R](r.md) — h\n", ROOT / "MEMORY.md")
    fix = remove_duplicate(same, same.entries[1], same.entries[0], "r.md")
    assert fix.safe and apply_text_edits(same.text, fix.edits) == "- [R](r.md) — h\n"


def test_a_wrapped_hook_goes_with_its_entry() -> None:
    # The indented lines a hook wraps onto are the entry's: removed with it, replaced with its
    # hook, and a duplicate carrying them is no safe removal.
    text = "- [R](r.md) — h\n- [R](r.md) — h\n  more words\n  and more\n- [S](s.md) — s\n"
    index = parse_index(text, ROOT / "MEMORY.md")
    again = index.entries[1]
    fix = remove_duplicate(index, again, index.entries[0], "r.md")
    assert not fix.safe
    assert apply_text_edits(text, fix.edits) == "- [R](r.md) — h\n- [S](s.md) — s\n"
    fix = remove_entry(index, again, "drop")
    assert apply_text_edits(text, fix.edits) == "- [R](r.md) — h\n- [S](s.md) — s\n"
    fix = replace_hook(index, again, "the role", 150)
    assert apply_text_edits(text, fix.edits).split("\n")[1:3] == [
        "- [R](r.md) — the role",
        "- [S](s.md) — s",
    ]


def test_entries_linking_and_add_to_index() -> None:
    index = parse_index(INDEX, ROOT / "MEMORY.md")
    assert [e.line for e in entries_linking(index, "role.md")] == [2, 3]
    fix = add_to_index(index, "oncall.md", "oncall", "PagerDuty escalation")
    assert fix.safe and not fix.creates
    lines = apply_text_edits(INDEX, fix.edits).split("\n")
    # Right after the last entry, before the paragraph.
    assert lines[5] == "- [oncall](oncall.md) — PagerDuty escalation"
    missing = parse_index("", ROOT / "MEMORY.md")
    from dataclasses import replace

    fix = add_to_index(replace(missing, exists=False), "a.md", "a", "hook")
    assert [c.rel_path for c in fix.creates] == ["MEMORY.md"]
    assert apply_text_edits("", fix.edits) == "- [a](a.md) — hook\n"
    no_newline = parse_index("# Index", ROOT / "MEMORY.md")
    fix = add_to_index(no_newline, "a.md", "a", "hook")
    assert apply_text_edits("# Index", fix.edits) == "# Index\n- [a](a.md) — hook"


def test_frontmatter_skeleton_and_set_type() -> None:
    topic = parse_topic_text(
        "# Deploys\n\nWe deploy on Tuesdays.\n", ROOT / "deploys.md", "deploys.md"
    )
    skeleton = frontmatter_skeleton(topic, vague=lambda *_: None)
    # Nothing in the file says what kind of memory it is: the type is a guess, for the editor.
    assert not skeleton.safe
    (edit,) = skeleton.edits
    fixed = apply(topic.text, edit.span, edit.new_text)
    post = frontmatter.loads(fixed)
    assert post["name"] == "deploys" and post.content.startswith("# Deploys")
    assert post["description"] == "We deploy on Tuesdays"
    assert post["type"] == "project"
    text = "# Deploys\n\nWe deploy on Tuesdays after the canary bake.\n"
    named = parse_topic_text(text, ROOT / "reference/x.md", "reference/x.md")
    fix = frontmatter_skeleton(named, vague=lambda *_: None)
    assert fix.safe and "type: reference\n" in fix.edits[0].new_text
    # Without the description check (MEM109's) nothing is safe.
    assert not frontmatter_skeleton(named).safe
    typed = parse_topic_text(
        "---\nname: x\ndescription: y\ntype: Project\n---\n", ROOT / "x.md", "x.md"
    )
    fix = set_type(typed, "project")
    assert fix is not None
    (edit,) = fix.edits
    assert frontmatter.loads(apply(typed.text, edit.span, edit.new_text))["type"] == "project"
    # With both, the nested type is the one the agent reads, so it is the one changed.
    both_text = "---\nname: x\ndescription: y\ntype: user\nmetadata:\n  type: Project\n---\n"
    both = parse_topic_text(both_text, ROOT / "x.md", "x.md")
    fix = set_type(both, "project")
    assert fix is not None and fix.edits[0].span.start_line == 5
    # The editor's menu: every type once, the suggestion first.
    choices = type_choices(typed, "project")
    assert [f.edits[0].new_text for f in choices] == ["project", "user", "feedback", "reference"]
    assert len({f.effect() for f in choices}) == len(choices)


def test_move_fixes_at_a_cursor_and_a_selection() -> None:
    index = parse_index(INDEX, ROOT / "MEMORY.md")
    [at_cursor] = move_fixes(index, 7, 7, selection=False, taken=["role.md"])
    assert at_cursor.title == "Move to topic file we-deploy-on-tuesdays.md"
    assert move_fixes(index, 0, 0, selection=False, taken=[]) == []  # a heading moves nowhere
    [selected] = move_fixes(index, 7, 7, selection=True, taken=[])
    assert [c.rel_path for c in selected.creates] == ["a-detail-bullet.md"]


def test_overlapping_fixes_wait_for_the_next_run() -> None:
    path = ROOT / "MEMORY.md"
    whole = Fix("a", (TextEdit(path, "MEMORY.md", Span(0, 0, 0, 5), "x"),), safe=True)
    inside = Fix("b", (TextEdit(path, "MEMORY.md", Span(0, 2, 0, 3), "y"),), safe=True)
    insert = Fix("c", (TextEdit(path, "MEMORY.md", Span(0, 5, 0, 5), "z"),), safe=True)
    chosen, left = compatible([whole, inside, insert])
    assert chosen == [whole, insert] and left == [inside]
    combined = combine("all", [whole, inside, insert])
    assert combined is not None and combined.safe
    assert apply_text_edits("hello world", combined.edits) == "xz world"
    assert combine("all", []) is None


def test_rename_updates_index_and_relative_links() -> None:
    index = parse_index(
        "- [Role](role.md#why) — who\n- [Team](team/a.md) — t\n", ROOT / "MEMORY.md"
    )
    other = parse_topic_text(
        "---\nname: n\ndescription: d\ntype: user\n---\nSee [r](role.md) and [t](team/a.md).\n",
        ROOT / "notes.md",
        "notes.md",
    )
    edits = rename_edits(index, [other], "role.md", "people/role.md")
    assert [(e.path.name, e.new_text) for e in edits] == [
        ("MEMORY.md", "people/role.md#why"),
        ("notes.md", "people/role.md"),
    ]
    folder = rename_edits(index, [other], "team", "crew")
    assert [e.new_text for e in folder] == ["crew/a.md", "crew/a.md"]
    # A moved file's own relative links are rewritten from its new folder.
    moved = rename_edits(index, [other], "notes.md", "archive/notes.md")
    assert sorted(e.new_text for e in moved) == ["../role.md", "../team/a.md"]
