"""The index rules on the layouts real MEMORY.md files use (issue 28): what is content and what
is the index's own structure (MEM004), which files the index points at however it links them
(MEM107, MEM005), and how far past the line limit MEM001 lets a line run.

Every fixture is synthetic, in the shape of a misfire family seen in real memory directories.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from memdir import constants as C
from memdir.agent.index import parse_index
from memdir.config import Settings
from memdir.fixes.plan import content_block, content_blocks, move_fixes
from memdir.lint import Diagnostic, DirState

MakeDir = Callable[..., Path]

DESCRIPTION = "release trains leave on Tuesdays once the canary has baked for a full day"


def topic(name: str, description: str = DESCRIPTION) -> str:
    return f"---\nname: {name}\ndescription: {description} ({name})\ntype: project\n---\nBody.\n"


def run(root: Path, settings: Settings | None = None) -> list[Diagnostic]:
    # MEM004 is a preview rule: on here, so its findings and its silences both mean something.
    state = DirState(root, settings or Settings(preview=True))
    state.refresh()
    return list(state.lint().diagnostics)


def codes(found: list[Diagnostic], code: str) -> list[Diagnostic]:
    return [d for d in found if d.code == code]


def lines_of(diagnostic: Diagnostic) -> tuple[int, int]:
    """1-based first and last line."""
    return diagnostic.span.start_line + 1, diagnostic.span.end_line + 1


# --- MEM001: a marginal overshoot is within "about 150" ------------------------------------


@pytest.mark.parametrize("limit", [C.INDEX_LINE_LIMIT, 80])
def test_mem001_lets_a_line_run_up_to_the_tolerance_past_the_limit(
    make_dir: MakeDir, limit: int
) -> None:
    head = "- [Deploys](deploys.md) — "
    within = head + "w" * (limit + C.INDEX_LINE_TOLERANCE - len(head))
    over = within + "!"
    root = make_dir({"MEMORY.md": f"{within}\n{over}\n", "deploys.md": topic("deploys")})
    [found] = codes(run(root, Settings(index_line_limit=limit)), "MEM001")
    assert found.span.start_line == 1
    # The range still starts at the limit itself: that is where the line should end.
    assert found.span.start_col == limit
    assert f"{len(over)} characters (limit {limit})" in found.message


def test_mem001_says_to_shorten_the_title_when_the_hook_is_short(make_dir: MakeDir) -> None:
    # The file's long name used again as the title makes the line long, not its hook: moving
    # detail out would not help.
    name = "feedback_run_the_whole_migration_suite_before_any_schema_change.md"
    other = "rules/archive/schema/the_whole_migration_suite_runs_before_any_schema_change.md"
    hook = "schema changes ship only after the full migration suite passed"
    index = f"- [{name}]({name}) — {hook}\n- [Schema changes, in full]({other}) — {hook}\n"
    root = make_dir({"MEMORY.md": index, name: topic("a"), other: topic("b")})
    found = codes(run(root), "MEM001")
    assert [d.span.start_line for d in found] == [0, 1]
    assert "the title repeats the file name" in found[0].message
    assert "a title of a few words makes it fit" in found[0].message
    head = len(f"- [Schema changes, in full]({other}) — ")
    assert f"the title and link take {head} characters" in found[1].message
    both = f"- [{name}]({name}) — {hook}, then the whole story of the migration\n"
    root = make_dir({"MEMORY.md": both, name: topic("a")})
    [found] = codes(run(root), "MEM001")
    assert "a title of a few words and a shorter hook make it fit" in found.message
    long_hook = f"- [Schema](s.md) — {hook}, then a long story of the whole migration"
    root = make_dir({"MEMORY.md": long_hook + "\n", "s.md": topic("s")})
    [detail] = codes(run(root, Settings(index_line_limit=60)), "MEM001")
    assert "move the detail into the topic file" in detail.message


# --- MEM004: one finding per block -----------------------------------------------------------

SECTION = """# Project memory

- [Deploys](deploys.md) — release trains

## Billing migration

We moved invoices to the new provider in the spring.

The old export stays until finance signs off.

---

- refunds go through the support queue
- the ledger job runs nightly

```
make ledger
```

## Later
- [Deploys again](deploys.md) — second mention
"""


def test_mem004_reports_a_section_of_content_once_with_its_size(make_dir: MakeDir) -> None:
    root = make_dir({"MEMORY.md": SECTION, "deploys.md": topic("deploys")})
    [found] = codes(run(root), "MEM004")
    assert lines_of(found) == (7, 18)
    assert "memory content in the index (7 lines)" in found.message


def test_mem004_fix_moves_the_whole_block_it_reports() -> None:
    index = parse_index(SECTION, Path("/m/MEMORY.md"))
    [block] = [b for b in content_blocks(index) if not b.note]
    assert (block.start, block.end) == (6, 17)
    # The cursor anywhere in the block (the finding's start, a blank line inside) moves all of it.
    assert content_block(index, 6) == content_block(index, 9) == (6, 17)
    [fix] = move_fixes(index, 6, 6, selection=False, taken=["deploys.md"])
    [edit] = fix.edits
    assert (edit.span.start_line, edit.span.end_line) == (6, 17)
    [created] = fix.creates
    assert "The old export stays" in created.text and "make ledger" in created.text


SUBSECTIONS = """# Project memory

- [Deploys](deploys.md) — release trains

## Bugs fixed

### 1. Parser
- a trailing comma in the config broke the loader
- fixed by reading the file with the strict parser

### 2. Cache
- stale entries survived a deploy; keys now carry the build number

## Endpoints

### [Billing API](billing.md)
- the sandbox rejects amounts under one cent

### [Search API](search.md)
- results are capped at one hundred

# Appendix

Old numbers from the first prototype.

## Load test

Peak was four hundred requests a second.
"""


def test_mem004_a_section_with_sub_headings_is_one_block(make_dir: MakeDir) -> None:
    """``## Bugs fixed`` with ``### 1.``, ``### 2.`` under it is one block to move into one
    topic file, its sub-headings included. A heading linking a topic file starts its own
    block; under a level-1 heading (the title), each ``##`` is a section of its own."""
    files = {"MEMORY.md": SUBSECTIONS, "deploys.md": topic("deploys")}
    files |= {"billing.md": topic("billing"), "search.md": topic("search")}
    found = codes(run(make_dir(files)), "MEM004")
    assert [lines_of(d) for d in found] == [(7, 12), (17, 17), (20, 20), (24, 24), (28, 28)]
    assert "(5 lines)" in found[0].message

    index = parse_index(SUBSECTIONS, Path("/m/MEMORY.md"))
    assert content_block(index, 6) == content_block(index, 9) == (6, 11)
    [fix] = move_fixes(index, 6, 6, selection=False, taken=["deploys.md"])
    [edit] = fix.edits
    assert (edit.span.start_line, edit.span.end_line) == (6, 11)
    [created] = fix.creates
    assert "### 1. Parser" in created.text and "keys now carry the build number" in created.text
    assert "## Endpoints" not in created.text


# --- MEM004: the index's own structure is no content -----------------------------------------


@pytest.mark.parametrize(
    "opening",
    [
        # A short intro paragraph under the title.
        "# Memory index\n\nShared knowledge of this repository. One line per memory; add a\n"
        "line here whenever you add a file.\n\n",
        # A one-line block quote note.
        "# 记忆索引\n\n> 每次会话都会加载这个目录。\n\n",
        # A note before the title, holding a quoted code block.
        "> **Sync note**\n>\n> A copy of this memory also lives in the client folder:\n>\n"
        "> ```\n> C:\\Users\\someone\\memory\n> ```\n\n# Memory\n\n",
        # A maintenance bullet under the title.
        "# Memory\n\n- **Upkeep**: when a memory changes here, update the copy in the repo too\n\n",
    ],
)
def test_mem004_a_short_preamble_is_structure(make_dir: MakeDir, opening: str) -> None:
    index = opening + "- [Deploys](deploys.md) — release trains\n"
    root = make_dir({"MEMORY.md": index, "deploys.md": topic("deploys")})
    assert codes(run(root), "MEM004") == []


def test_mem004_a_long_opening_or_one_with_nothing_after_it_is_content(
    make_dir: MakeDir,
) -> None:
    facts = "".join(
        f"- fact number {i} about the build\n" for i in range(C.INDEX_PREAMBLE_MAX_LINES + 1)
    )
    long_opening = f"# Memory\n\n{facts}\n- [Deploys](deploys.md) — release trains\n"
    root = make_dir({"MEMORY.md": long_opening, "deploys.md": topic("deploys")})
    [found] = codes(run(root), "MEM004")
    assert f"({C.INDEX_PREAMBLE_MAX_LINES + 1} lines)" in found.message
    # Nothing but a title and a few facts: that is no preamble to an index.
    root = make_dir({"MEMORY.md": "# Memory\n\nThe user prefers tabs.\n"})
    assert len(codes(run(root), "MEM004")) == 1


def test_mem004_content_after_a_section_heading_is_no_preamble(make_dir: MakeDir) -> None:
    index = "# Memory\n\n## Rules\n\n1. never push on Fridays\n\n- [Deploys](deploys.md) — trains\n"
    root = make_dir({"MEMORY.md": index, "deploys.md": topic("deploys")})
    [found] = codes(run(root), "MEM004")
    assert lines_of(found) == (5, 5)


def test_mem004_rules_and_pointer_lines_are_structure(make_dir: MakeDir) -> None:
    index = (
        "# Memory\n\n- [Deploys](deploys.md) — release trains\n\n---\n\n"
        "## Elsewhere\n"
        "- `~/.claude/knowledge/shell-quoting.md` — how to quote paths with spaces\n"
        "- Style guide: `~/guides/style.md` — the house tone\n"
        "1. `notes/ops.md`\n"
        "- [[release-checklist]] — what to walk through before a release\n"
        "- Onboarding: [[Welcome Notes|the welcome notes]]\n"
        "***\n"
    )
    root = make_dir({"MEMORY.md": index, "deploys.md": topic("deploys")})
    assert codes(run(root), "MEM004") == []


def test_mem004_a_folder_in_code_form_is_content(make_dir: MakeDir) -> None:
    # Bullets naming the project's folders describe its layout: memory content, unlike a
    # pointer to a file.
    index = (
        "# Memory\n\n- [Deploys](deploys.md) — release trains\n\n## Layout\n"
        "- `api/` — the HTTP handlers\n- `jobs/` — the nightly batch jobs\n"
    )
    root = make_dir({"MEMORY.md": index, "deploys.md": topic("deploys")})
    [found] = codes(run(root), "MEM004")
    assert lines_of(found) == (6, 7)


CLOSING = (
    "# Memory\n\n- [Deploys](deploys.md) — release trains\n\n---\n\n"
    "## How this index is kept\n\n### Adding a memory\n1. write a topic file with frontmatter\n"
    "2. add one line for it above\n\n### Types\n- **user**: who the user is\n"
    "- **project**: the work going on\n\n---\n\n*Last updated: 2026-03-02*\n"
)


def test_mem004_a_short_closing_note_after_a_rule_is_structure(make_dir: MakeDir) -> None:
    root = make_dir({"MEMORY.md": CLOSING, "deploys.md": topic("deploys")})
    assert codes(run(root), "MEM004") == []
    # A one-line note set off the same way.
    note = "- [Deploys](deploys.md) — trains\n\n---\n\n**Note:** kept under version control.\n"
    root = make_dir({"MEMORY.md": note, "deploys.md": topic("deploys")})
    assert codes(run(root), "MEM004") == []


def test_mem004_a_long_closing_section_or_one_with_no_rule_is_content(
    make_dir: MakeDir,
) -> None:
    facts = "".join(
        f"- fact number {i} about the build\n" for i in range(C.INDEX_CLOSING_MAX_LINES + 1)
    )
    long_tail = f"- [Deploys](deploys.md) — trains\n\n---\n\n## Notes\n{facts}"
    root = make_dir({"MEMORY.md": long_tail, "deploys.md": topic("deploys")})
    [found] = codes(run(root), "MEM004")
    assert f"({C.INDEX_CLOSING_MAX_LINES + 1} lines)" in found.message
    # Without the rule setting it off, a closing section is content however short.
    no_rule = "- [Deploys](deploys.md) — trains\n\n## Notes\n- the build needs Node 20\n"
    root = make_dir({"MEMORY.md": no_rule, "deploys.md": topic("deploys")})
    assert len(codes(run(root), "MEM004")) == 1
    # Content before the last entry is content, rule or not.
    between = "- [A](a.md) — a\n\n---\n\nThe build needs Node 20.\n\n- [Deploys](deploys.md) — t\n"
    root = make_dir({"MEMORY.md": between, "deploys.md": topic("deploys"), "a.md": topic("a")})
    assert len(codes(run(root), "MEM004")) == 1


# --- an index written as a table ---------------------------------------------------------------

TABLE = """# Memory

| Memory | What it holds |
|---|---|
| [Deploys](deploys.md) | release trains |
| [Billing](./billing.md) | invoice provider |
| [Calendar](calendar.md) | freeze windows |
"""


def test_a_table_of_links_is_an_index(make_dir: MakeDir) -> None:
    root = make_dir(
        {"MEMORY.md": TABLE, "deploys.md": topic("deploys"), "billing.md": topic("billing")}
    )
    found = run(root)
    assert codes(found, "MEM004") == []
    assert codes(found, "MEM107") == []
    [dangling] = codes(found, "MEM005")
    assert "calendar.md does not exist" in dangling.message
    line = TABLE.split("\n")[dangling.span.start_line]
    assert line[dangling.span.start_col : dangling.span.end_col] == "calendar.md"
    assert dangling.fix is not None
    [create] = dangling.fix.creates
    assert create.rel_path == "calendar.md" and "# Calendar" in create.text


@pytest.mark.parametrize(
    "index",
    [
        # A table naming topic files in code form.
        "# Memory\n\n| File | Type | Summary |\n|---|---|---|\n"
        "| `deploys.md` | project | release trains |\n| `billing.md` | reference | invoices |\n",
        # Entries marked with a symbol before their link.
        "- ⭐ [Billing](billing.md) — **never skip the review gate**\n"
        "- 🔴 [Deploys](deploys.md) — release trains\n",
    ],
)
def test_index_layouts_that_link_every_file_are_no_content(make_dir: MakeDir, index: str) -> None:
    root = make_dir(
        {"MEMORY.md": index, "deploys.md": topic("deploys"), "billing.md": topic("billing")}
    )
    found = run(root)
    assert codes(found, "MEM004") == [] and codes(found, "MEM107") == []


def test_mem004_a_note_opening_a_table_index_is_structure(make_dir: MakeDir) -> None:
    index = (
        "# Memory\n\n> This folder is committed: it comes along with every clone.\n"
        "> Last updated: 2026-04-01\n\n| File | Type | Holds |\n|---|---|---|\n"
        "| [deploys.md](deploys.md) | project | release trains |\n"
    )
    root = make_dir({"MEMORY.md": index, "deploys.md": topic("deploys")})
    assert codes(run(root), "MEM004") == []


def test_a_table_without_links_is_content_reported_once(make_dir: MakeDir) -> None:
    index = (
        "# Memory\n\n- [Deploys](deploys.md) — trains\n\n## Hosts\n\n"
        "| Host | Role |\n|---|---|\n| alpha | build |\n| beta | cache |\n"
    )
    root = make_dir({"MEMORY.md": index, "deploys.md": topic("deploys")})
    [found] = codes(run(root), "MEM004")
    assert lines_of(found) == (7, 10) and "(4 lines)" in found.message


# --- MEM107: whatever way the index points at a file --------------------------------------


@pytest.mark.parametrize(
    "index",
    [
        # A link in a sentence.
        "# Memory\n\n## API\n\nSee [the API notes](api-notes.md) for the endpoints.\n",
        # A numbered list of entries.
        "1. [API notes](api-notes.md) — endpoints\n2. [Deploys](deploys.md) — trains\n",
        # A nested entry, `./` and angle brackets.
        "- Services\n  - [API notes](./api-notes.md) — endpoints\n- [D](<deploys.md>) — trains\n",
        # A link in a heading.
        "## [API notes](api-notes.md)\n",
        # The name in code form.
        "- [Deploys](deploys.md) — trains\n\nDetails of the March fixes are in `api-notes.md`.\n",
        # A wiki-link by the file's name, Obsidian-style.
        "- [Deploys](deploys.md) — trains\n- Endpoints and their quirks: [[api-notes]]\n",
        # A path in code form from the repository's root, in a table cell ...
        "- [Deploys](deploys.md) — trains\n\n| file | what |\n|---|---|\n"
        "| `memory/api-notes.md` | endpoints |\n",
        # ... or in a sentence, from deeper still.
        "- [Deploys](deploys.md) — trains\n\nEndpoints: see `.claude/memory/api-notes.md`.\n",
    ],
)
def test_mem107_a_file_the_index_points_at_in_any_form_is_no_orphan(
    make_dir: MakeDir, index: str
) -> None:
    root = make_dir(
        {"MEMORY.md": index, "api-notes.md": topic("api-notes"), "deploys.md": topic("deploys")}
    )
    orphans = [d.rel_path for d in codes(run(root), "MEM107")]
    assert "api-notes.md" not in orphans


def test_mem107_a_wiki_link_names_a_memory_by_its_frontmatter_name(make_dir: MakeDir) -> None:
    """``[[name]]`` is how the agent links memories: the ``name`` of the frontmatter, whatever the
    file is called. A wiki-link or a path that names no topic file leaves the orphan reported."""
    index = (
        "- [Deploys](deploys.md) — trains\n"
        "- Before a release, walk through [[Release Checklist|the checklist]]\n"
        "- Someday: [[roadmap]]; old notes in `memory/api.md`, `memory/api-notes.txt`\n"
    )
    root = make_dir(
        {
            "MEMORY.md": index,
            "deploys.md": topic("deploys"),
            "ship.md": topic("release checklist"),
            "api-notes.md": topic("api-notes"),
        }
    )
    parsed = parse_index(index)
    assert parsed.wiki_named == ("Release Checklist", "roadmap")
    orphans = [d.rel_path for d in codes(run(root), "MEM107")]
    assert orphans == ["api-notes.md"]


def test_numbered_entries_are_entries(make_dir: MakeDir) -> None:
    index = "1. [Deploys](deploys.md) — trains\n2) [Billing](billing.md) — invoices\n"
    parsed = parse_index(index)
    assert [(e.bullet, e.path) for e in parsed.entries] == [
        ("1.", "deploys.md"),
        ("2)", "billing.md"),
    ]
    root = make_dir({"MEMORY.md": index, "deploys.md": topic("deploys")})
    found = run(root)
    assert codes(found, "MEM004") == []
    [dangling] = codes(found, "MEM005")
    assert "billing.md does not exist" in dangling.message


def test_links_outside_entries_are_no_entries(make_dir: MakeDir) -> None:
    """A prose link to a web page is no bad entry (MEM007), and a table row beside an entry for
    the same file is no duplicate (MEM006): those rules read entries only."""
    index = (
        "- [Deploys](deploys.md) — trains\n\n"
        "Background in [the guide](https://example.com/guide.md).\n\n"
        "| [Deploys](deploys.md) | again |\n"
    )
    root = make_dir({"MEMORY.md": index, "deploys.md": topic("deploys")})
    found = run(root)
    assert codes(found, "MEM007") == [] and codes(found, "MEM006") == []
    assert codes(found, "MEM005") == []


def test_mem107_a_document_for_people_is_no_orphan(make_dir: MakeDir) -> None:
    guide = "# Setting up a new machine\n\n1. Install the tools.\n"
    root = make_dir(
        {
            "MEMORY.md": "- [Deploys](deploys.md) — trains\n",
            "deploys.md": topic("deploys"),
            "SETUP.md": guide,
            "2026-03-13.md": "# Kickoff day\n\n- set up the repository\n",
            "NOTES.md": topic("notes"),
        }
    )
    # SETUP.md is a guide for people and 2026-03-13.md a day's log; NOTES.md has memory
    # frontmatter, so it is a memory.
    assert [d.rel_path for d in codes(run(root), "MEM107")] == ["NOTES.md"]
    # Nor is the guide a memory missing its frontmatter.
    assert codes(run(root), "MEM101") == []


# --- the index named in another case ---------------------------------------------------------


def test_an_index_named_in_lowercase_is_one_finding(make_dir: MakeDir) -> None:
    # Written on a case-insensitive system, where the agent loads it as MEMORY.md.
    index = "# MEMORY.md\n\n- [Deploys](deploys.md) — release trains\n- [Billing](billing.md) — x\n"
    root = make_dir(
        {"memory.md": index, "deploys.md": topic("deploys"), "billing.md": topic("billing")}
    )
    found = run(root)
    [named] = codes(found, "MEM123")
    assert named.rel_path == "memory.md" and "Rename it MEMORY.md" in named.message
    # Not a memory without frontmatter, and the files it links are no orphans.
    assert codes(found, "MEM101") == [] and codes(found, "MEM107") == []


# --- labels, half-written links and marked entries --------------------------------------------


def test_a_bold_label_heading_entries_is_structure(make_dir: MakeDir) -> None:
    # `**Latest reports:**` groups the entries under it, as a sub-heading would; before content
    # it is part of that content's block.
    index = (
        "# Memory\n\n## Reports\n**Latest reports:**\n- [Audit](audit.md) — the spring audit\n"
        "**Older ones：**\n- [Deploys](deploys.md) — release trains\n\n"
        "## Plans\n**Next quarter**\n- move billing to the new queue\n- retire the old export\n"
    )
    root = make_dir(
        {"MEMORY.md": index, "audit.md": topic("audit"), "deploys.md": topic("deploys")}
    )
    [found] = codes(run(root), "MEM004")
    assert lines_of(found) == (10, 12)
    assert "(3 lines)" in found.message


def test_a_hook_wrapped_onto_indented_lines_is_part_of_its_entry(make_dir: MakeDir) -> None:
    # A long hook broken over indented lines right under its entry: in Markdown the same list
    # item, so the entry's own words, not content. An indented bullet under an entry, or
    # indented text after a blank line, is content still.
    index = (
        "## Workflow\n\n"
        "- [Never push on Fridays](no_friday_push.md) — the release train leaves on\n"
        "  Thursday evenings; a Friday push waits for Monday's canary.\n"
        "  Hotfixes go through the on-call lead.\n"
        "- [Deploys](deploys.md) — release trains\n"
        "  - the canary bakes for a full day before the train\n"
        "\n"
        "  the queue was moved to the new cluster in spring\n"
    )
    files = {"MEMORY.md": index, "no_friday_push.md": topic("push"), "deploys.md": topic("d")}
    [found] = codes(run(make_dir(files)), "MEM004")
    assert lines_of(found) == (7, 9)
    kinds = {item.line: item.kind for item in parse_index(index).other}
    assert [kinds[3], kinds[4], kinds[6], kinds[8]] == ["continuation"] * 2 + ["bullet", "text"]


def test_an_entry_set_in_bold_is_an_entry(make_dir: MakeDir) -> None:
    # `- **[Title](file.md)** — hook`: emphasis around the link, an entry all the same (and a
    # long one is still too long).
    hook = "release trains leave on Tuesdays once the canary has baked for a full day"
    index = (
        "# Memory\n\nRead these first.\n\n"
        f"- **[Deploys — read first](deploys.md)** — {hook}\n"
        f"- **[Billing](billing.md)** — {hook}, {hook}\n"
    )
    root = make_dir({"MEMORY.md": index, "deploys.md": topic("d"), "billing.md": topic("b")})
    found = run(root)
    assert codes(found, "MEM004") == [] and codes(found, "MEM107") == []
    assert [d.span.start_line for d in codes(found, "MEM001")] == [5]
    entry = parse_index(index).entries[0]
    assert (entry.title, entry.path, entry.hook) == ("Deploys — read first", "deploys.md", hook)


def test_files_named_by_a_word_in_code_or_plainly_are_no_orphans(make_dir: MakeDir) -> None:
    # An index grouping files by type and naming each by its name without `.md` in code form,
    # with the type left out (`testing` for feedback_testing.md), or by its frontmatter name;
    # a heading naming a file plainly after an arrow. A file named nowhere is still an orphan.
    index = (
        "# Memory\n\n**Feedback:** `testing` (run the suite first) · `style-guide`\n"
        "**Reference:** `oncall_rota`\n\n## Queues → reference_queues.md\n"
        "See https://example.com/docs/other_notes.md for upstream.\n"
    )
    files = {
        "MEMORY.md": index,
        "feedback_testing.md": topic("testing"),
        "feedback_style.md": topic("style-guide"),
        "reference_oncall_rota.md": topic("rota"),
        "reference_queues.md": topic("queues"),
        "other_notes.md": topic("other"),
    }
    [orphan] = codes(run(make_dir(files)), "MEM107")
    assert orphan.rel_path == "other_notes.md"
    parsed = parse_index(index)
    assert parsed.code_words == ("testing", "style-guide", "oncall_rota")
    assert parsed.named == ("reference_queues.md",)


def test_every_link_on_an_entry_line_points_at_its_file(make_dir: MakeDir) -> None:
    # Several memories on one entry line (`- [A](a.md) / [B](b.md) · [C](c.md)`): the model
    # follows each link, so none of them is an orphan, and a later link to no file dangles.
    index = (
        "- [Deploys](deploys.md) / [Freeze](./freeze.md) · [Canary](canary.md)\n"
        "- [Billing](billing.md) — the queue; see also [Refunds](refunds.md)\n"
    )
    files = {"MEMORY.md": index, "deploys.md": topic("d"), "freeze.md": topic("f")}
    found = run(make_dir({**files, "canary.md": topic("c"), "billing.md": topic("b")}))
    assert codes(found, "MEM107") == []
    [dangling] = codes(found, "MEM005")
    assert "refunds.md does not exist" in dangling.message
    assert [r.path for r in parse_index(index).references] == [
        "freeze.md",
        "canary.md",
        "refunds.md",
    ]


def test_brackets_in_code_in_a_title_leave_the_entry_whole(make_dir: MakeDir) -> None:
    # `[[id:…]]` in code inside a title is the title's text, not a bracket of the link.
    index = "- [Notes `[[note-id]]` links kept](wiki_links.md) — rewritten before export\n"
    found = run(make_dir({"MEMORY.md": index, "wiki_links.md": topic("w")}))
    assert codes(found, "MEM004") == [] and codes(found, "MEM107") == []
    [entry] = parse_index(index).entries
    assert (entry.title, entry.path) == ("Notes `[[note-id]]` links kept", "wiki_links.md")


def test_a_file_named_in_brackets_without_a_target_is_pointed_at(make_dir: MakeDir) -> None:
    # A link half written, `[audit.md] hook`: the model reads the name, so the file is no
    # orphan and the line is no memory content.
    index = (
        "- [Deploys](deploys.md) — release trains\n"
        "- [audit.md] the spring audit of the billing tables\n"
        "- [./retention.md]: how long logs are kept\n"
    )
    files = {"MEMORY.md": index, "deploys.md": topic("deploys")}
    root = make_dir({**files, "audit.md": topic("audit"), "retention.md": topic("retention")})
    found = run(root)
    assert codes(found, "MEM004") == [] and codes(found, "MEM107") == []
    assert parse_index(index).named == ("audit.md", "retention.md")


def test_a_bracketed_title_is_not_a_name(make_dir: MakeDir) -> None:
    # Brackets around a title (not a file name), or a link's own title, name no file.
    index = "- [Deploys](deploys.md) — trains\n- [notes.md](notes.md) — x\n\n[draft] see audit\n"
    assert parse_index(index).named == ()


def test_a_link_written_from_the_repository_root_reaches_its_file(tmp_path: Path) -> None:
    # `.claude/memory/MEMORY.md` linking `.claude/memory/deploys.md`: written from the root,
    # where the agent works. A link spelling another folder stays dangling.
    root = tmp_path / "repo" / ".claude" / "memory"
    root.mkdir(parents=True)
    (root / "MEMORY.md").write_text(
        "- [Deploys](.claude/memory/deploys.md) — release trains\n"
        "- [Billing](docs/memory/billing.md) — invoices\n",
        encoding="utf-8",
    )
    (root / "deploys.md").write_text(topic("deploys"), encoding="utf-8")
    (root / "billing.md").write_text(topic("billing"), encoding="utf-8")
    found = run(root)
    assert [d.message.split(":")[1].split()[0] for d in codes(found, "MEM005")] == [
        "docs/memory/billing.md"
    ]
    assert [d.rel_path for d in codes(found, "MEM107")] == ["billing.md"]


@pytest.mark.parametrize(
    "named",
    ["- [review_a/b/c_2026-04.md] three passes", "- `review_{a,b,c}_2026-04.md`: three passes"],
)
def test_several_files_named_in_shorthand_are_pointed_at(make_dir: MakeDir, named: str) -> None:
    files = {f"review_{x}_2026-04.md": topic(f"review {x}") for x in "abc"}
    index = "- [Deploys](deploys.md) — release trains\n" + named + "\n"
    root = make_dir({"MEMORY.md": index, "deploys.md": topic("deploys"), **files})
    assert codes(run(root), "MEM107") == []


def test_a_file_in_a_folder_is_no_shorthand(make_dir: MakeDir) -> None:
    # `a/b.md` names b.md (a path from above the dir, like `memory/b.md`), never a.md.
    root = make_dir({"MEMORY.md": "- `a/b.md` — x\n", "a.md": topic("a"), "b.md": topic("b")})
    assert [d.rel_path for d in codes(run(root), "MEM107")] == ["a.md"]
