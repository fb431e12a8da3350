"""memdir.fixes.plan.plan_new_memory: the editor's "New memory", planned by the core."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from memdir.agent.index import load_index, parse_index
from memdir.agent.topic import parse_topic_text
from memdir.fixes.apply import apply_text_edits
from memdir.fixes.plan import entries_linking, plan_new_memory
from memdir.textio import utf16_len

ROOT = Path("/mem")
INDEX = "# Memory index\n\n- [Terse answers](feedback-terse.md) — no recap at the end\n"


def test_creates_the_topic_file_and_adds_its_entry_after_the_last() -> None:
    index = parse_index(INDEX, ROOT / "MEMORY.md")
    plan = plan_new_memory(
        index,
        "Small pull requests",
        "keep pull requests under 300 lines and put the reason first",
        "feedback",
        taken=["MEMORY.md", "feedback-terse.md"],
    )
    assert plan.rel_path == "small-pull-requests.md"
    (created,) = plan.fix.creates
    assert (created.path, created.rel_path) == (ROOT / "small-pull-requests.md", plan.rel_path)
    assert created.text == (
        "---\nname: small-pull-requests\n"
        "description: keep pull requests under 300 lines and put the reason first\n"
        "type: feedback\n---\n# Small pull requests\n\n**Why:**\n\n**How to apply:**\n"
    )
    after = apply_text_edits(INDEX, list(plan.fix.edits))
    assert after == INDEX + (
        "- [Small pull requests](small-pull-requests.md) — keep pull requests under 300 lines"
        " and put the reason first\n"
    )
    assert [e.line for e in entries_linking(parse_index(after), plan.rel_path)] == [3]


def test_frontmatter_reads_back_as_typed() -> None:
    index = parse_index(INDEX, ROOT / "MEMORY.md")
    title = 'Deploys: "yes" means  staging\n'
    plan = plan_new_memory(index, title, "on: the   #deploy channel", "project")
    text = plan.fix.creates[0].text
    meta = yaml.safe_load(text.split("---\n")[1])
    assert meta == {
        "name": "deploys-yes-means-staging",
        "description": "on: the #deploy channel",
        "type": "project",
    }
    topic = parse_topic_text(text, ROOT / plan.rel_path, plan.rel_path)
    assert (topic.name, topic.description, topic.raw_type) == (
        meta["name"],
        meta["description"],
        "project",
    )


def test_a_name_taken_or_linked_gets_a_number() -> None:
    index = parse_index(INDEX + "- [Notes](notes-2.md) — not written yet\n", ROOT / "MEMORY.md")
    plan = plan_new_memory(index, "Notes", "what was said", "user", taken=["Notes.md"])
    # notes.md differs only in case from a file; notes-2.md is linked by an entry.
    assert plan.rel_path == "notes-3.md"


def test_body_is_kept_and_user_and_reference_memories_get_no_skeleton() -> None:
    index = parse_index(INDEX, ROOT / "MEMORY.md")
    plain = plan_new_memory(index, "Role", "backend engineer", "user")
    assert plain.fix.creates[0].text.endswith("---\n# Role\n")
    given = plan_new_memory(index, "Role", "backend", "project", "Owns the API.\n\n- billing\n")
    assert given.fix.creates[0].text.endswith("# Role\n\nOwns the API.\n\n- billing\n")


def test_without_an_index_the_index_is_created_too(tmp_path: Path) -> None:
    index = load_index(tmp_path)
    plan = plan_new_memory(index, "Role", "backend engineer", "user")
    assert [c.rel_path for c in plan.fix.creates] == ["role.md", "MEMORY.md"]
    assert apply_text_edits("", list(plan.fix.edits)) == "- [Role](role.md) — backend engineer\n"


def test_outside_index_mode_the_index_is_left_alone() -> None:
    index = parse_index(INDEX, ROOT / "MEMORY.md")
    plan = plan_new_memory(index, "Role", "backend engineer", "user", indexed=False)
    assert plan.fix.edits == ()
    assert [c.rel_path for c in plan.fix.creates] == ["role.md"]


@pytest.mark.parametrize("limit", [80, 150])
def test_the_entry_fits_the_line_limit(limit: int) -> None:
    index = parse_index(INDEX, ROOT / "MEMORY.md")
    description = "a description that goes on " * 10
    plan = plan_new_memory(index, "Release merge freeze", description, "project", limit=limit)
    line = apply_text_edits(INDEX, list(plan.fix.edits)).rstrip("\n").split("\n")[-1]
    assert line.startswith("- [Release merge freeze](release-merge-freeze.md) — a description")
    assert utf16_len(line) <= limit


@pytest.mark.parametrize(
    ("title", "name", "rel_path"),
    [
        ("Café notes: Q3", "cafe-notes-q3", "café-notes-q3.md"),
        # No ASCII letter or digit: the name stays the title (MEM115 says what the agent does).
        ("数据保留策略", "数据保留策略", "数据保留策略.md"),
        ("发布冻结 v2", "v2", "发布冻结-v2.md"),
    ],
)
def test_the_name_is_an_ascii_slug_the_agent_keeps(title: str, name: str, rel_path: str) -> None:
    index = parse_index(INDEX, ROOT / "MEMORY.md")
    plan = plan_new_memory(index, title, "what it holds", "project")
    assert plan.rel_path == rel_path
    topic = parse_topic_text(plan.fix.creates[0].text, ROOT / rel_path, rel_path)
    assert topic.name == name
