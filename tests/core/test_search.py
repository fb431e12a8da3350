"""One glob and grep engine: memory/search and the extraction agent's project tools share it."""

from __future__ import annotations

from pathlib import Path

import pytest
from memdir.extract.tools import ProjectTools
from memdir.search.grep import (
    InvalidPatternError,
    compile_glob,
    compile_pattern,
    glob_matcher,
    search_files,
)
from memdir.search.lines import grep_lines


@pytest.mark.parametrize(
    ("glob", "path", "matches"),
    [
        ("**/*.md", "a.md", True),
        ("**/*.md", "x/y/a.md", True),
        ("*.md", "x/y/a.md", True),  # no "/": the name, in any folder
        ("x/*.md", "x/y/a.md", False),  # "*" stays inside one name
        ("x/**/a.md", "x/y/z/a.md", True),
        ("user-?.md", "user-1.md", True),
        ("user-?.md", "user-12.md", False),
        ("[!a]*.md", "b.md", True),
        ("[!a]*.md", "a.md", False),
        ("{user,feedback}-*.md", "feedback-terse.md", True),
        ("{user,feedback}-*.md", "project-x.md", False),
        ("a+b.md", "a+b.md", True),
        ("a+b.md", "aab.md", False),
    ],
)
def test_glob(glob: str, path: str, matches: bool) -> None:
    assert glob_matcher(glob)(path) is matches


def test_invalid_patterns_say_why() -> None:
    with pytest.raises(InvalidPatternError, match="unterminated"):
        compile_pattern("(")
    with pytest.raises(InvalidPatternError, match="invalid glob"):
        compile_glob("[z-a]x]")


def test_grep_lines_count_lines_like_an_editor() -> None:
    text = "alpha\r\nbeta\x0cgamma\nALPHA\n"
    found = list(grep_lines(text, compile_pattern("alpha", ignore_case=True)))
    # \x0c is not a line break for an editor; the \r of a CRLF is not part of the text.
    assert found == [(0, 0, "alpha"), (2, 0, "ALPHA")]
    assert list(grep_lines("a\n", compile_pattern("^$"))) == []


def test_search_files_filters_by_glob_and_stops_at_the_limit() -> None:
    texts = {"MEMORY.md": "- x\n- x\n", "a.md": "x\n", "notes/b.md": "x\nx\n", "c.txt": "x\n"}
    result = search_files(texts, texts.get, compile_pattern("x"), "*.md")
    assert [(m.path, m.line) for m in result.matches] == [
        ("MEMORY.md", 0),
        ("MEMORY.md", 1),
        ("a.md", 0),
        ("notes/b.md", 0),
        ("notes/b.md", 1),
    ]
    assert result.truncated is False
    capped = search_files(texts, texts.get, compile_pattern("x"), limit=2)
    assert len(capped.matches) == 2 and capped.truncated is True


def test_the_extraction_tools_use_the_same_globs(tmp_path: Path) -> None:
    for rel in ("src/app.py", "src/util/helpers.py", "docs/user-guide.md", "docs/faq.md"):
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("TODO: one\n", encoding="utf-8")
    tools = ProjectTools(tmp_path)
    files = sorted(
        str(p.relative_to(tmp_path).as_posix()) for p in tmp_path.rglob("*") if p.is_file()
    )
    for glob in ("**/*.py", "docs/{user,faq}*.md", "src/*.py", "*.md", "[!f]*.md"):
        wanted = glob_matcher(glob)
        expected = [rel for rel in files if wanted(rel)]
        grep = tools.grep("TODO", glob=glob)
        assert sorted(line.split(":", 1)[0] for line in grep.splitlines() if ":" in line) == (
            expected
        ), glob
    # The glob tool matches whole paths under the folder (a glob without "/" stays at its top).
    assert tools.glob("**/*.py").splitlines() != []
    assert set(tools.glob("src/{app,util/helpers}.py").splitlines()) == {
        "src/app.py",
        "src/util/helpers.py",
    }
    assert tools.call("grep", {"pattern": "("}).text.startswith("Error: invalid regular expression")
    assert tools.call("glob", {"pattern": "[z-a]x]"}).is_error
