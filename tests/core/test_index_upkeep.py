"""MEMORY.md kept the way the agent keeps it: every write says what memdir did to the index,
memdir rewrites only the lines it wrote itself, and a second entry for a file memdir indexed
replaces memdir's line (the agent's words win), whichever tool the agent used to add it."""

from __future__ import annotations

from pathlib import Path

import pytest
from memdir.agent.index import generated_entry, parse_index
from memdir.config import Settings
from memdir.fixes.plan import GeneratedDuplicate, generated_duplicates
from memdir.writing.memory_tool import MemdirMemoryTool, ToolResult
from memdir.writing.results import DroppedLine, IndexOutcome
from memdir.writing.writer import MemoryWriter

DEADLINE = (
    "---\nname: launch-deadline\ndescription: the launch is due on March 3\ntype: project\n---\n"
    "The launch is due on March 3.\n"
)
#: What memdir writes for DEADLINE.
MEMDIRS_LINE = "- [Launch deadline](launch-deadline.md) — the launch is due on March 3"
#: What the agent writes, as Claude Code tells it to ("add a pointer to that file in MEMORY.md").
AGENTS_LINE = "- [Launch](launch-deadline.md) — ship date agreed with sales"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    root.mkdir()
    (root / "MEMORY.md").write_text("- [Tea](tea.md) — green tea\n", encoding="utf-8")
    (root / "tea.md").write_text(
        "---\nname: tea\ndescription: green tea\ntype: user\n---\nTea.\n", encoding="utf-8"
    )
    return root


def index(root: Path) -> str:
    return (root / "MEMORY.md").read_text(encoding="utf-8")


def tool(root: Path, **settings: object) -> MemdirMemoryTool:
    return MemdirMemoryTool(root, settings=Settings(**settings))  # type: ignore[arg-type]


def create(path: str, text: str) -> dict[str, object]:
    return {"command": "create", "path": path, "file_text": text}


def replace(path: str, old: str, new: str) -> dict[str, object]:
    return {"command": "str_replace", "path": path, "old_str": old, "new_str": new}


# --- what every write result says ------------------------------------------------------------


def test_create_says_where_the_index_line_is(root: Path) -> None:
    result = tool(root).run(create("/memories/launch-deadline.md", DEADLINE))
    assert result == ToolResult(
        "File created successfully at: /memories/launch-deadline.md; indexed in MEMORY.md at "
        "line 2 (no need to add a line)",
        index="indexed in MEMORY.md at line 2 (no need to add a line)",
    )
    assert result.api_text == "File created successfully at: /memories/launch-deadline.md"
    assert index(root).split("\n")[1] == MEMDIRS_LINE


def test_an_edit_with_a_snippet_gets_the_clause_on_a_line_of_its_own(root: Path) -> None:
    memory = tool(root)
    memory.run(create("/memories/launch-deadline.md", DEADLINE))
    result = memory.run(replace("/memories/launch-deadline.md", "Launch is", "launch is"))
    assert result.is_error  # no such text: an error carries no clause
    assert result.index == ""
    result = memory.run(replace("/memories/launch-deadline.md", "due on March 3.\n", "due."))
    assert result.text.endswith(
        "\nmemdir: MEMORY.md line 2 already links it (no need to add a line)."
    )
    assert result.api_text.startswith("The memory file has been edited. Here is the snippet")
    assert "memdir:" not in result.api_text


def test_prefetch_mode_says_the_index_is_not_kept(root: Path) -> None:
    result = tool(root, recall_mode="prefetch").run(create("/memories/a.md", DEADLINE))
    assert result.text == (
        "File created successfully at: /memories/a.md; MEMORY.md not maintained "
        "(recall_mode = prefetch)"
    )


def test_a_file_that_is_no_memory_gets_no_clause(root: Path) -> None:
    result = tool(root).run(create("/memories/data.txt", "x\n"))
    assert result == ToolResult("File created successfully at: /memories/data.txt")


def test_delete_and_rename_say_what_they_did_to_the_index(root: Path) -> None:
    memory = tool(root)
    renamed = memory.run(
        {"command": "rename", "old_path": "/memories/tea.md", "new_path": "/memories/t.md"}
    )
    assert renamed.text == (
        "Successfully renamed /memories/tea.md to /memories/t.md; MEMORY.md line 1 now links "
        "the new path"
    )
    deleted = memory.run({"command": "delete", "path": "/memories/t.md"})
    assert deleted.text == "Successfully deleted /memories/t.md; its entry removed from MEMORY.md"


# --- provenance: memdir rewrites only its own lines ------------------------------------------


def test_a_new_description_rewrites_memdirs_own_line(root: Path) -> None:
    writer = MemoryWriter(root)
    writer.create("launch-deadline.md", DEADLINE)
    result = writer.str_replace("launch-deadline.md", "is due on March 3\n", "moved to May 5\n")
    assert index(root).split("\n")[1] == (
        "- [Launch deadline](launch-deadline.md) — the launch moved to May 5"
    )
    assert result.index == IndexOutcome("updated", 2)


def test_a_new_description_leaves_a_hand_written_line_alone(root: Path) -> None:
    (root / "launch-deadline.md").write_text(DEADLINE, encoding="utf-8")
    (root / "MEMORY.md").write_text(f"- [Tea](tea.md) — green tea\n{AGENTS_LINE}\n")
    memory = tool(root)
    result = memory.run(
        replace("/memories/launch-deadline.md", "is due on March 3\n", "moved to May 5\n")
    )
    assert index(root) == f"- [Tea](tea.md) — green tea\n{AGENTS_LINE}\n"
    assert result.index == (
        "MEMORY.md line 2 kept (written by hand; its hook may now disagree with the "
        "new description)"
    )


def test_a_body_only_edit_never_touches_the_line(root: Path) -> None:
    (root / "launch-deadline.md").write_text(DEADLINE, encoding="utf-8")
    hand = "- [Launch](launch-deadline.md) — due March 3"
    (root / "MEMORY.md").write_text(f"{hand}\n")
    result = MemoryWriter(root).str_replace("launch-deadline.md", "due on March 3.", "due.")
    assert index(root) == f"{hand}\n"
    assert result.index == IndexOutcome("unchanged", 1)
    assert not result.index_updated


def test_a_line_memdir_wrote_for_a_kebab_name_is_still_its_own(root: Path) -> None:
    # The title memdir gives a kebab name is the name as words: the line is still recognised.
    entry = parse_index(MEMDIRS_LINE + "\n").entries[0]
    assert generated_entry(
        "launch-deadline", "the launch is due on March 3", "launch-deadline.md", 150
    ) == (MEMDIRS_LINE)
    from memdir.agent.index import is_generated

    assert is_generated(
        entry, "launch-deadline", "the launch is due on March 3", "launch-deadline.md", 150
    )
    assert not is_generated(entry, "launch-deadline", "another text", "launch-deadline.md", 150)


# --- the agent's second entry replaces memdir's -----------------------------------------------


def test_the_agents_insert_through_the_memory_tool_replaces_memdirs_line(root: Path) -> None:
    memory = tool(root)
    memory.run(create("/memories/launch-deadline.md", DEADLINE))
    result = memory.run(
        {
            "command": "insert",
            "path": "/memories/MEMORY.md",
            "insert_line": 2,
            "insert_text": AGENTS_LINE,
        }
    )
    assert index(root) == f"- [Tea](tea.md) — green tea\n{AGENTS_LINE}\n"
    assert result.text == (
        "The file /memories/MEMORY.md has been edited.\nmemdir: dropped memdir's own MEMORY.md "
        "line for launch-deadline.md (line 2 links it now)."
    )


def test_the_agents_str_replace_snippet_shows_the_index_as_written(root: Path) -> None:
    memory = tool(root)
    memory.run(create("/memories/launch-deadline.md", DEADLINE))
    result = memory.run(
        replace("/memories/MEMORY.md", "— green tea\n", f"— green tea\n{AGENTS_LINE}\n")
    )
    assert index(root) == f"- [Tea](tea.md) — green tea\n{AGENTS_LINE}\n"
    assert f"     2\t{AGENTS_LINE}" in result.text
    assert MEMDIRS_LINE not in result.text


def test_an_edit_on_disk_is_reconciled_by_the_next_call(root: Path) -> None:
    """Claude Code's own Edit tool writes MEMORY.md without memdir: ``reconcile_index`` (the
    PostToolUse hook) or the next write through memdir drops memdir's line."""
    writer = MemoryWriter(root)
    writer.create("launch-deadline.md", DEADLINE)
    (root / "MEMORY.md").write_text(index(root) + AGENTS_LINE + "\n", encoding="utf-8")
    result = writer.reconcile_index()
    assert index(root) == f"- [Tea](tea.md) — green tea\n{AGENTS_LINE}\n"
    assert result.index == IndexOutcome("edited", dropped=(DroppedLine("launch-deadline.md", 2),))
    assert result.index_updated is False  # the target is MEMORY.md itself
    assert [c.path for c in result.changes] == ["MEMORY.md"]
    # Nothing to do: nothing written.
    assert writer.reconcile_index().changes == ()


def test_the_next_write_through_memdir_reconciles_too(root: Path) -> None:
    writer = MemoryWriter(root)
    writer.create("launch-deadline.md", DEADLINE)
    (root / "MEMORY.md").write_text(index(root) + AGENTS_LINE + "\n", encoding="utf-8")
    result = writer.create("b.md", DEADLINE.replace("launch-deadline", "b"))
    assert index(root).count("launch-deadline.md") == 1
    assert AGENTS_LINE in index(root)
    assert result.index is not None and result.index.dropped == (
        DroppedLine("launch-deadline.md", 2),
    )
    assert "dropped memdir's own MEMORY.md line for launch-deadline.md" in result.index.clause()


def test_two_hand_written_entries_are_both_kept(root: Path) -> None:
    (root / "launch-deadline.md").write_text(DEADLINE, encoding="utf-8")
    text = f"{AGENTS_LINE}\n- [Launch again](launch-deadline.md) — see above\n"
    (root / "MEMORY.md").write_text(text, encoding="utf-8")
    assert MemoryWriter(root).reconcile_index().changes == ()
    assert index(root) == text


def test_recall_mode_prefetch_never_reconciles(root: Path) -> None:
    writer = MemoryWriter(root)
    writer.create("launch-deadline.md", DEADLINE)
    doubled = index(root) + AGENTS_LINE + "\n"
    (root / "MEMORY.md").write_text(doubled, encoding="utf-8")
    prefetch = MemoryWriter(root, settings=Settings(recall_mode="prefetch"))
    assert prefetch.reconcile_index().changes == ()
    assert index(root) == doubled


def test_generated_duplicates_is_a_pure_plan(tmp_path: Path) -> None:
    text = f"{MEMDIRS_LINE}\n{MEMDIRS_LINE}\n- [Gone](gone.md) — x\n- [Gone](gone.md) — y\n"
    fields = {"launch-deadline.md": ("launch-deadline", "the launch is due on March 3")}
    found = generated_duplicates(parse_index(text), fields.get, 150)
    # Two copies of memdir's own line: the first stays. A file that cannot be read: untouched.
    assert found == [GeneratedDuplicate("launch-deadline.md", 1, 0)]
