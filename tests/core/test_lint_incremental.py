"""What an edit costs the DirState, told by what it re-reads and re-runs (test doubles around the
engine's readers and the registry's checks, never time): an open file's own findings need only
that file, a directory rule runs again only when what it reads changed, and the results always
equal a cold run's."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from memdir.config import Settings
from memdir.lint import DirState
from memhelpers import count_disk_reads, count_rule_runs

MakeDir = Callable[..., Path]


def topic(name: str) -> str:
    return f"---\nname: {name}\ndescription: what {name} is about\ntype: project\n---\nBody.\n"


INDEX = (
    "- [A](a.md) — first\n"
    "- [Gone](gone.md) — a memory not written yet\n"
    "- [B](b.md) — second\n"
    "A paragraph of memory content.\nAnd another line of it.\n"
)


def test_an_open_files_own_findings_need_only_that_file(
    make_dir: MakeDir, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads = count_disk_reads(monkeypatch.setattr)
    root = make_dir({"MEMORY.md": INDEX, "a.md": topic("a"), "b.md": "# no frontmatter\n"})
    preview = Settings(preview=True)  # MEM004 is a preview rule
    state = DirState(root, preview)
    state.update(root / "MEMORY.md")
    state.update(root / "b.md")
    assert dict(reads) == {"MEMORY.md": 1, "b.md": 1}
    own = {d.code for d in state.own_findings(root / "MEMORY.md")}
    assert "MEM004" in own  # memory content in the index: MEMORY.md's own rule
    assert "MEM005" not in own  # a directory rule: needs every file, comes with the full run
    assert {d.code for d in state.own_findings(root / "b.md")} == {"MEM101"}
    assert state.own_findings(root / "a.md") == ()  # not read: nothing known of it
    # The same rules as the full run: its findings of these files include them.
    full = DirState(root, preview)
    full.refresh()
    by_file = full.lint().by_file()
    for rel in ("MEMORY.md", "b.md"):
        assert set(state.own_findings(root / rel)) <= set(by_file[rel])


def test_a_body_edit_runs_only_the_body_readers_a_description_edit_more(
    make_dir: MakeDir, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = count_rule_runs(monkeypatch)
    root = make_dir({"MEMORY.md": INDEX, "a.md": topic("a"), "b.md": topic("b")})
    state = DirState(root)
    state.refresh()
    first = state.lint()
    assert runs["MEM107"] == 1
    state.update(root / "a.md", topic("a") + "A new line of body.\n")
    second = state.lint()
    # No directory rule runs again: the rest of the summary is the same, and the rules that
    # compare bodies are off (MEM127 needs a project, MEM128 is a preview rule).
    body_readers: set[str] = set()
    assert {code for code, n in runs.items() if n > 1} == body_readers
    assert all(n == 1 for code, n in runs.items() if code not in body_readers)
    assert second.diagnostics == first.diagnostics and second.changed == frozenset()
    state.update(root / "a.md", topic("a").replace("what a is", "what b is"))
    state.lint()
    assert runs["MEM107"] == 2  # a description changed: the orphan fix's drafted hook may too
    state.update(root / "MEMORY.md", INDEX + "- [C](c.md) — third\n")
    assert {d.code for d in state.lint().diagnostics if d.rel_path == "MEMORY.md"} >= {"MEM005"}
    # Dangling entries read the index.
    assert runs["MEM005"] == 2
    state.refresh()  # a rescan: the directory rules may look at the disk
    state.lint()
    assert runs["MEM005"] == 3


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
