"""Hostile files on the read side: links leading out, FIFOs, huge files, billion laughs.

Every reader agrees with lint: a symlink leading out of the memory dir is never read through
(lint reports it as MEM114; the others say the same instead of showing content), only regular
files are opened (a FIFO named like a memory would block a reader for good), reads are capped,
and frontmatter YAML is bounded. FIFO checks run in a subprocess: a reader that blocked would
hang the test run, so the subprocess timeout is only a safety net.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml
from memdir import constants as C
from memdir.agent.index import load_index
from memdir.agent.scan import Skipped, iter_topic_entries
from memdir.agent.topic import agent_fields, load_agent_yaml, load_topic, parse_topic_text
from memdir.agent.yaml_loaders import YAML_MAX_CHARS
from memdir.lint.state import DirState, lint_directory
from memdir.textio import not_read, read_head, read_text
from memhelpers import SECRET, linked_out, topic

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")


@pytest.fixture
def linked(tmp_path: Path) -> Path:
    """A memory dir whose MEMORY.md, ``secret.md`` and folder ``linked`` lead out of it."""
    root = linked_out(tmp_path)
    (root / "own.md").write_text(topic("own", "a memory of this dir, linked from nowhere"))
    return root


# --- links leading out -------------------------------------------------------------------------


def test_index_through_a_link_out_is_not_read(linked: Path) -> None:
    index = load_index(linked)
    refused = not_read(index.problems)
    assert refused is not None and refused.kind == "outside"
    assert "symlink leads outside the memory dir: memdir does not follow it" in refused.message
    assert index.text == "" and index.entries == () and index.load.text == ""


@pytest.mark.parametrize("rel", ["secret.md", "linked/secret.md"])
def test_topic_through_a_link_out_is_not_read(linked: Path, rel: str) -> None:
    loaded = load_topic(linked / rel, linked)
    assert SECRET not in loaded.text and loaded.name is None and loaded.description is None
    refused = not_read(loaded.problems)
    assert refused is not None and refused.kind == "outside"
    result = read_text(linked / rel, root=linked)
    assert result.text == "" and not_read(result.problems) is not None


def test_lint_reports_the_links_and_reads_nothing_behind_them(linked: Path) -> None:
    result = lint_directory(linked)
    skipped = {(d.rel_path, d.code) for d in result.diagnostics if d.code == "MEM114"}
    assert skipped == {("MEMORY.md", "MEM114"), ("secret.md", "MEM114"), ("linked", "MEM114")}
    # Nothing from behind the links: no finding about the outside index's lines or entries.
    assert all(SECRET not in d.message for d in result.diagnostics)
    assert not any(d.rel_path == "MEMORY.md" and d.code != "MEM114" for d in result.diagnostics)


def test_dir_state_update_refuses_a_link_out(linked: Path) -> None:
    state = DirState(linked)
    state.refresh()
    state.update(linked / "secret.md")
    state.update(linked / "linked" / "secret.md", f"---\nname: x\ndescription: {SECRET}\n---\n")
    assert set(state.summaries()) == {"own.md"}
    assert state.index.text == ""
    # An editor showing the MEMORY.md behind the link: its text is not linted either.
    state.update(linked / "MEMORY.md", f"- [Secret](secret.md) — {SECRET}\n{SECRET}\n")
    assert state.index.text == ""
    found = state.lint().diagnostics
    assert {d.code for d in found if d.rel_path == "MEMORY.md"} == {"MEM114"}


def test_walk_skips_links_out_with_a_reason(linked: Path) -> None:
    skipped: list[Skipped] = []
    listed = [rel for _path, rel in iter_topic_entries(linked, skipped)]
    assert listed == ["own.md"]
    assert {s.rel_path for s in skipped} == {"MEMORY.md", "linked", "secret.md"}
    assert all(s.reason == "symlink leads outside the memory dir" for s in skipped)


def test_walk_from_a_relative_root_still_confines(linked: Path) -> None:
    os.chdir(linked.parent)
    assert [rel for _path, rel in iter_topic_entries(Path("memory"))] == ["own.md"]


# --- FIFOs -------------------------------------------------------------------------------------


def _run(code: str) -> subprocess.CompletedProcess[str]:
    """``code`` in a fresh interpreter; the timeout is a safety net against a blocked reader."""
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@needs_fifo
def test_fifo_index_and_topic_are_refused_not_opened(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    root.mkdir()
    os.mkfifo(root / "MEMORY.md")
    os.mkfifo(root / "pipe.md")
    (root / "own.md").write_text(topic("own", "a memory next to two FIFOs"))
    proc = _run(
        f"""
        from pathlib import Path
        from memdir.agent.index import load_index
        from memdir.lint.state import lint_directory
        from memdir.agent.scan import scan
        from memdir.textio import not_read, read_head, read_text
        from memdir.agent.topic import load_topic
        root = Path({str(root)!r})
        print("index:", not_read(load_index(root).problems).message)
        print("topic:", not_read(load_topic(root / "pipe.md", root).problems).message)
        print("head:", not_read(read_head(root / "pipe.md", 30).problems).message)
        print("text:", not_read(read_text(root / "pipe.md").problems).message)
        found = scan(root)
        print("scan:", [h.rel_path for h in found.candidates], [s.rel_path for s in found.skipped])
        for d in lint_directory(root).diagnostics:
            print("lint:", d.rel_path, d.code, d.message)
        """
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "index: cannot read MEMORY.md: not a regular file (a FIFO)" in out
    assert "topic: cannot read pipe.md: not a regular file (a FIFO)" in out
    assert "head: cannot read pipe.md: not a regular file (a FIFO)" in out
    assert "text: cannot read pipe.md: not a regular file (a FIFO)" in out
    assert "scan: ['own.md'] ['pipe.md']" in out
    assert "lint: MEMORY.md MEM113 cannot read MEMORY.md: not a regular file (a FIFO)" in out
    assert "lint: pipe.md MEM113 cannot read pipe.md: not a regular file (a FIFO)" in out


# --- size caps ---------------------------------------------------------------------------------


def _huge(path: Path, size: int = 100 * 1024 * 1024) -> None:
    """A ``size``-byte file that costs almost nothing to make: a line of text, then a hole."""
    with path.open("wb") as handle:
        handle.write(b"- [Entry](entry.md) - a hook\n")
        handle.truncate(size)


def test_lint_reads_a_huge_index_only_up_to_the_agents_cap(tmp_path: Path) -> None:
    _huge(tmp_path / "MEMORY.md")
    state = DirState(tmp_path)
    state.refresh()
    assert len(state.index.text) <= C.INDEX_MAX_READ_BYTES
    found = {d.code: d.message for d in state.lint().diagnostics}
    assert "100MB, over the 4MB the agent reads at all" in found["MEM002"]


def test_a_huge_topic_file_is_read_up_to_the_cap(tmp_path: Path) -> None:
    path = tmp_path / "huge.md"
    with path.open("wb") as handle:
        handle.write(topic("huge", "a topic file of 100 MB").encode())
        handle.write(b"line\n" * 1_000_000)
        handle.truncate(100 * 1024 * 1024)
    loaded = load_topic(path, tmp_path)
    assert loaded.size == 100 * 1024 * 1024
    assert len(loaded.text) <= C.SURFACE_MAX_BYTES * 1024  # the 2 MB parse cap, not the file
    assert "too-large" in {p.kind for p in loaded.problems}
    head = read_head(path, C.SCAN_MAX_LINES)
    assert head.partial and head.text.count("\n") < C.SCAN_MAX_LINES


# --- YAML bombs --------------------------------------------------------------------------------


def laughs(levels: int = 9) -> str:
    """A billion laughs: ten aliases per level, so ``levels`` levels stand for 10**levels."""
    lines = ['l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for level in range(1, levels + 1):
        lines.append(f"l{level}: &l{level} [{','.join([f'*l{level - 1}'] * 10)}]")
    return "name: laughs\ndescription: a billion laughs\ntype: user\n" + "\n".join(lines)


def test_billion_laughs_is_a_frontmatter_problem() -> None:
    with pytest.raises(yaml.YAMLError, match="through its aliases"):
        load_agent_yaml(laughs())
    parsed = parse_topic_text(f"---\n{laughs()}\n---\nbody\n", Path("laughs.md"), "laughs.md")
    problems = [p for p in parsed.problems if p.kind == "yaml-error"]
    assert problems and "through its aliases" in problems[0].message
    fields, head_problems = agent_fields(f"---\n{laughs()}\n---\n")
    assert fields["name"] is None and "through its aliases" in head_problems[0].message


def test_a_few_aliases_still_load() -> None:
    data, _parsed = load_agent_yaml("base: &b [1, 2]\nmore: [*b, *b]\nname: ok")
    assert data["more"] == [[1, 2], [1, 2]] and data["name"] == "ok"


def test_deep_nesting_is_a_frontmatter_problem() -> None:
    # On its own line: the agent's retry (which quotes a `key: value` line) does not apply.
    block = "name: deep\nnested:\n  " + "[" * 500 + "]" * 500
    parsed = parse_topic_text(f"---\n{block}\n---\n", Path("deep.md"), "deep.md")
    problems = [p for p in parsed.problems if p.kind == "yaml-error"]
    assert problems and "nested deeper than" in problems[0].message


def test_a_huge_frontmatter_is_not_parsed() -> None:
    block = "name: big\nlist:\n" + "  - item\n" * (YAML_MAX_CHARS // 4)
    parsed = parse_topic_text(f"---\n{block}---\n", Path("big.md"), "big.md")
    problems = [p for p in parsed.problems if p.kind == "yaml-error"]
    assert problems and "frontmatter too large" in problems[0].message
