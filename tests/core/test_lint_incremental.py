"""What an edit costs the incremental DirState, told by what it re-reads and re-makes (counters
and object identity, never time): a dangling entry's finding (whose fix renders a whole topic
file) is made once while its line stays, and an open file's own findings need only that file."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from memdir.lint import DirState
from memdir.lint.diagnostic import Diagnostic

MakeDir = Callable[..., Path]


def topic(name: str) -> str:
    return f"---\nname: {name}\ndescription: what {name} is about\ntype: project\n---\nBody.\n"


INDEX = (
    "- [A](a.md) — first\n"
    "- [Gone](gone.md) — a memory not written yet\n"
    "- [B](b.md) — second\n"
    "A paragraph of memory content.\nAnd another line of it.\n"
)


def dangling(state: DirState) -> Diagnostic:
    return next(d for d in state.lint().diagnostics if d.code == "MEM005")


def test_a_dangling_entrys_finding_is_made_once_while_its_line_stays(make_dir: MakeDir) -> None:
    root = make_dir({"MEMORY.md": INDEX, "a.md": topic("a"), "b.md": topic("b")})
    state = DirState(root)
    state.refresh()
    first = dangling(state)
    assert first.fix is not None and first.fix.creates  # the fix writes gone.md
    # A topic file edited, then MEMORY.md edited below the entry: the same finding, not remade.
    state.update(root / "a.md", topic("a") + "More body.\n")
    assert dangling(state) is first
    state.update(root / "MEMORY.md", INDEX + "- [C](c.md) — third\n")
    assert dangling(state) is first
    # A line inserted above it moves it: made again, at its new line.
    state.update(root / "MEMORY.md", "# Index\n" + INDEX)
    moved = dangling(state)
    assert moved is not first and moved.span.start_line == first.span.start_line + 1


def test_an_open_files_own_findings_need_only_that_file(make_dir: MakeDir) -> None:
    root = make_dir({"MEMORY.md": INDEX, "a.md": topic("a"), "b.md": "# no frontmatter\n"})
    state = DirState(root)
    state.update(root / "MEMORY.md")
    state.update(root / "b.md")
    assert dict(state.reads) == {"MEMORY.md": 1, "b.md": 1}
    own = {d.code for d in state.own_findings(root / "MEMORY.md")}
    assert "MEM004" in own  # memory content in the index: MEMORY.md's own rule
    assert "MEM005" not in own  # a directory rule: needs every file, comes with the full run
    assert {d.code for d in state.own_findings(root / "b.md")} == {"MEM101"}
    assert state.own_findings(root / "a.md") == ()  # not read: nothing known of it
    # The same rules as the full run: its findings of these files include them.
    full = DirState(root)
    full.refresh()
    by_file = full.lint().by_file()
    for rel in ("MEMORY.md", "b.md"):
        assert set(state.own_findings(root / rel)) <= set(by_file[rel])


def test_a_body_edit_runs_no_directory_rule_a_description_edit_does(make_dir: MakeDir) -> None:
    root = make_dir({"MEMORY.md": INDEX, "a.md": topic("a"), "b.md": topic("b")})
    state = DirState(root)
    state.refresh()
    first = state.lint()
    assert state.directory_runs == 1
    state.update(root / "a.md", topic("a") + "A new line of body.\n")
    second = state.lint()
    assert state.directory_runs == 1  # the summary (name, description, title...) is the same
    assert second.diagnostics == first.diagnostics and second.changed == frozenset()
    state.update(root / "a.md", topic("a").replace("what a is", "what b is"))
    state.lint()
    assert state.directory_runs == 2  # a description changed: duplicates may have too
    state.update(root / "MEMORY.md", INDEX + "- [C](c.md) — third\n")
    assert {d.code for d in state.lint().diagnostics if d.rel_path == "MEMORY.md"} >= {"MEM005"}
    assert state.directory_runs == 3
    state.refresh()  # a rescan: the directory rules may look at the disk
    state.lint()
    assert state.directory_runs == 4


def test_incremental_results_equal_a_cold_run_after_every_edit(make_dir: MakeDir) -> None:
    import random

    files: dict[str, str] = {f"t{i:02d}.md": topic(f"t{i:02d}") for i in range(30)}
    files["MEMORY.md"] = "".join(f"- [T{i}](t{i:02d}.md) — hook {i}\n" for i in range(25))
    root = make_dir(files)
    state = DirState(root)
    state.refresh()
    state.lint()
    rng = random.Random(7)
    texts: dict[str, str] = {}
    for step in range(60):
        rel = rng.choice([*sorted(files), "new.md"])
        kind = rng.randrange(5)
        text = texts.get(rel, files.get(rel, topic(rel[:-3])))
        if rel == "MEMORY.md":
            lines = text.splitlines(keepends=True)
            lines.insert(rng.randrange(len(lines) + 1), f"- [X{step}](x{step % 3}.md) — x\n")
            text = "".join(lines)
        elif kind == 0:
            text += f"Body line {step}.\n"
        elif kind == 1:
            text = text.replace("what ", f"what {step} ", 1)
        elif kind == 2:
            text = text.replace("name: ", f"name: t{step % 4}", 1)
        elif kind == 3:
            text = f"# no frontmatter {step}\n"
        else:
            text = topic("t00")  # a duplicate name
        texts[rel] = text
        state.update(root / rel, text)
        cold = DirState(root)
        cold.refresh()
        for other, other_text in texts.items():
            cold.update(root / other, other_text)
        assert state.lint().diagnostics == cold.lint().diagnostics, step


def test_an_index_edit_reparses_only_the_lines_it_changed_or_moved() -> None:
    from memdir.index import parse_index

    text = "# Index\n" + "".join(f"- [T{i}](t{i}.md) — hook {i}\n" for i in range(50))
    before = parse_index(text)
    lines = text.split("\n")
    lines[10] = "- [T9 renamed](t9.md) — a new hook"
    edited = "\n".join(lines) + "- [New](new.md) — appended\n"
    after = parse_index(edited, previous=before)
    assert after == parse_index(edited)  # the same index as a parse from scratch
    kept = {id(e) for e in before.entries}
    reparsed = [e.line for e in after.entries if id(e) not in kept]
    assert reparsed == [10, 51]
    # A line inserted at the top moves every entry: each is parsed again, at its new line.
    moved = parse_index("\n" + text, previous=before)
    assert not kept & {id(e) for e in moved.entries}
    assert [e.line for e in moved.entries] == [e.line + 1 for e in before.entries]


def test_an_index_edit_checks_the_links_of_the_lines_it_changed_only() -> None:
    from memdir.index import parse_index
    from memdir.lint.rules import DirectoryMemo

    text = "".join(f"- [T{i}](t{i}.md) — hook {i}\n" for i in range(20))
    memo = DirectoryMemo()
    first = parse_index(text)
    before = memo.links(first)
    edited = text.replace("(t5.md)", "(../t5.md)")
    after = memo.links(parse_index(edited, previous=first))
    assert [i for i, pair in enumerate(after) if pair is not before[i]] == [5]
    assert after[5][1] is None  # leaves the dir: no topic file
    assert after == memo.links(parse_index(edited)) == DirectoryMemo().links(parse_index(edited))
