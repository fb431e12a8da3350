"""What the soak and the content fuzz found, as plain regression tests.

A lone surrogate (``"\\ud800"``: a JSON string can carry one, a Python ``str`` can hold one, UTF-8
cannot encode one) in a text given to the core raises ``UnicodeEncodeError`` instead of being
linted. The language server is safe (``memdir_lsp.server`` replaces lone surrogates in
notifications by U+FFFD at its boundary, which the soak checks end to end), but the core's own
entry points (``DirState.update``, ``parse_index``: what an embedding tool calls with an editor's
text) are not. Found by ``tests/fuzz_content``; lengths now count a lone surrogate as the agent's
JavaScript does (one UTF-16 unit; three UTF-8 bytes, the U+FFFD it is written as).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from memdir.agent.index import parse_index
from memdir.config import Settings
from memdir.lint.state import DirState

TOPIC = "---\nname: a\ndescription: what a is about, in enough words\ntype: user\n---\n"


def _dir(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    root.mkdir()
    (root / "MEMORY.md").write_text("- [A](a.md) — a\n", encoding="utf-8")
    (root / "a.md").write_text(TOPIC + "Body.\n", encoding="utf-8")
    return root


def test_lone_surrogate_in_index_text_is_linted(tmp_path: Path) -> None:
    root = _dir(tmp_path)
    state = DirState(root, Settings(preview=True))  # MEM004 is a preview rule
    state.refresh()
    state.update(root / "MEMORY.md", "\ud800- [A](a.md) — a\n")
    assert [d.code for d in state.lint().diagnostics if d.rel_path == "MEMORY.md"] == ["MEM004"]


def test_lone_surrogate_parse_index() -> None:
    index = parse_index("- [A](a.md) — hook \udfff\n", Path("/m/MEMORY.md"))
    assert [e.target for e in index.entries] == ["a.md"]


def test_lone_surrogate_in_topic_text_is_linted(tmp_path: Path) -> None:
    root = _dir(tmp_path)
    state = DirState(root)
    state.refresh()
    state.update(root / "a.md", TOPIC + "\ud800" + "x" * 50_000)
    codes = {d.code for d in state.lint().diagnostics if d.rel_path == "a.md"}
    assert "MEM106" in codes  # the body is over the injection cap


@pytest.mark.parametrize("index", ["```\n", "<!--"])
def test_orphan_fix_after_an_unclosed_block_converges(tmp_path: Path, index: str) -> None:
    """Found by the content fuzz (thorough profile): MEMORY.md is a lone fence or ``<!--``."""
    from memdir.lint.fix import apply_fixes

    root = tmp_path / "memory"
    root.mkdir()
    (root / "MEMORY.md").write_text(index, encoding="utf-8")
    (root / "a.md").write_text(TOPIC + "Body.\n", encoding="utf-8")

    def fix() -> tuple[Path, ...]:
        state = DirState(root)
        state.refresh()
        return apply_fixes(state.lint().diagnostics).written

    assert fix()  # the entry for the orphan, before the block left open (not hidden in it)
    state = DirState(root)
    state.refresh()
    assert not [d for d in state.lint().diagnostics if d.code == "MEM107"]
    assert fix() == ()  # a second `memdir lint --fix` changes nothing
