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
