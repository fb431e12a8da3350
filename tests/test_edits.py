"""memdir.edits: the pure planners behind the editor's code actions and rename support."""

from __future__ import annotations

from pathlib import Path

import frontmatter
from hypothesis import given, settings
from hypothesis import strategies as st
from memdir.edits import (
    content_block,
    entries_linking,
    kebab_slug,
    orphan_entry,
    plan_create_missing,
    plan_frontmatter_skeleton,
    plan_move_to_topic,
    plan_remove_entry,
    plan_rename,
    plan_set_type,
    unique_file_name,
    yaml_scalar,
)
from memdir.index import fit_entry, parse_index
from memdir.model import Span
from memdir.textio import utf16_len
from memdir.topic import parse_topic_text

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


def test_unique_file_name_is_case_insensitive() -> None:
    assert unique_file_name("notes", []) == "notes.md"
    assert unique_file_name("notes", ["Notes.md"]) == "notes-2.md"
    assert unique_file_name("notes", ["notes.md", "notes-2.md"]) == "notes-3.md"
    assert unique_file_name("notes", [], "team/") == "team/notes.md"


def test_yaml_scalar_round_trips() -> None:
    for value in ("plain words", "a: b", "# hash", "[x]", "yes", "", "数据: 90 天", "'q'"):
        import yaml

        assert yaml.safe_load(f"k: {yaml_scalar(value)}") == {"k": value}


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
    moved = plan_move_to_topic(index, 6, 7, ["role.md"])
    assert moved is not None
    assert moved.rel_path == "we-deploy-on-tuesdays.md"
    post = frontmatter.loads(moved.topic_text)
    assert post.content == "We deploy on Tuesdays; never on Fridays.\n- a detail bullet"
    assert post["name"] == "we-deploy-on-tuesdays"
    assert post["type"] in ("project", "feedback", "user", "reference")
    (edit,) = moved.plan.edits
    result = apply(INDEX, edit.span, edit.new_text)
    assert result.split("\n")[6] == moved.index_line
    assert moved.index_line == (
        "- [We deploy on Tuesdays](we-deploy-on-tuesdays.md) — Never on Fridays."
    )


def test_move_avoids_names_linked_by_dangling_entries() -> None:
    text = "- [Gone](we-deploy.md) — x\n\nWe deploy.\n"
    moved = plan_move_to_topic(parse_index(text, ROOT / "MEMORY.md"), 2, 2, [])
    assert moved is not None and moved.rel_path == "we-deploy-2.md"


@settings(max_examples=60, deadline=None)
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
    moved = plan_move_to_topic(index, 0, len(lines) - 1, [])
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
    (edit,) = plan_remove_entry(index, dup, "duplicate entry").edits
    assert "Role again" not in apply(INDEX, edit.span, edit.new_text)
    gone = index.entries[2]
    plan = plan_create_missing(ROOT, gone, ["role.md"])
    assert plan is not None
    (creation,) = plan.creations
    assert creation.path == ROOT / "gone.md"
    assert frontmatter.loads(creation.text)["description"] == "missing"
    assert plan_create_missing(ROOT, gone, ["gone.md"]) is None  # never over a file


def test_entries_linking_and_orphan_entry() -> None:
    index = parse_index(INDEX, ROOT / "MEMORY.md")
    assert [e.line for e in entries_linking(index, "role.md")] == [2, 3]
    topic = parse_topic_text(
        "---\nname: oncall\ndescription: PagerDuty escalation\ntype: reference\n---\nx\n",
        ROOT / "oncall.md",
        "oncall.md",
    )
    assert orphan_entry(topic) == "- [oncall](oncall.md) — PagerDuty escalation"


def test_frontmatter_skeleton_and_set_type() -> None:
    topic = parse_topic_text(
        "# Deploys\n\nWe deploy on Tuesdays.\n", ROOT / "deploys.md", "deploys.md"
    )
    (edit,) = plan_frontmatter_skeleton(topic).edits
    fixed = apply(topic.text, edit.span, edit.new_text)
    post = frontmatter.loads(fixed)
    assert post["name"] == "deploys" and post.content.startswith("# Deploys")
    typed = parse_topic_text(
        "---\nname: x\ndescription: y\ntype: Project\n---\n", ROOT / "x.md", "x.md"
    )
    plan = plan_set_type(typed, "project")
    assert plan is not None
    (edit,) = plan.edits
    assert frontmatter.loads(apply(typed.text, edit.span, edit.new_text))["type"] == "project"


def test_rename_updates_index_and_relative_links() -> None:
    index = parse_index(
        "- [Role](role.md#why) — who\n- [Team](team/a.md) — t\n", ROOT / "MEMORY.md"
    )
    other = parse_topic_text(
        "---\nname: n\ndescription: d\ntype: user\n---\nSee [r](role.md) and [t](team/a.md).\n",
        ROOT / "notes.md",
        "notes.md",
    )
    edits = plan_rename(index, [other], "role.md", "people/role.md")
    assert [(e.path.name, e.new_text) for e in edits] == [
        ("MEMORY.md", "people/role.md#why"),
        ("notes.md", "people/role.md"),
    ]
    folder = plan_rename(index, [other], "team", "crew")
    assert [e.new_text for e in folder] == ["crew/a.md", "crew/a.md"]
    # A moved file's own relative links are rewritten from its new folder.
    moved = plan_rename(index, [other], "notes.md", "archive/notes.md")
    assert sorted(e.new_text for e in moved) == ["../role.md", "../team/a.md"]
