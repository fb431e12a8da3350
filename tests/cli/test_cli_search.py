"""``memdir search``: the memory dir's lines matching a pattern; a catastrophic pattern is one line
on stderr and exit code 2 after the time limit, never a frozen terminal or a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from memdir.faces.cli import main

RULE = "-" * 32
FILES: dict[str, str | bytes] = {
    "MEMORY.md": "- [Rules](rules.md) — how we write\n- [Deploy](deploy.md) — staging first\n",
    "rules.md": f"---\nname: rules\ndescription: how we write\ntype: project\n---\nIntro\n{RULE}\n",
    "deploy.md": "---\nname: deploy\ndescription: d\ntype: project\n---\nDeploy to staging.\n",
    "notes.txt": "staging\n",
}


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memdir", "search", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        check=False,
    )


@pytest.fixture
def memdir(make_dir: Callable[[dict[str, str | bytes]], Path]) -> Path:
    return make_dir(FILES)


@pytest.mark.processes
def test_a_catastrophic_pattern_is_one_line_and_exit_2(memdir: Path) -> None:
    proc = run("(-+)+x", str(memdir), cwd=memdir.parent)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr == (
        "memdir search: error: the pattern took longer than 2 s on memory/rules.md; "
        "simplify it or search literally\n"
    )


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("a{99999999999}", "a repetition count is too large"),
        ("(" * 5000 + ")" * 5000, "the pattern nests too deeply"),
        ("(", "missing ), unterminated subpattern at position 0"),
    ],
)
def test_patterns_that_cannot_compile_say_why(
    memdir: Path, capsys: pytest.CaptureFixture[str], pattern: str, message: str
) -> None:
    assert main(["search", pattern, "--dir", str(memdir)]) == 2
    assert capsys.readouterr().err == (
        f"memdir search: error: PATTERN is not a valid regular expression: {message}\n"
    )


def test_matches_are_path_line_column_text(
    memdir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(memdir.parent)  # paths are named from the working directory
    assert main(["search", "stag+ing", str(memdir)]) == 0
    assert capsys.readouterr().out == (
        f"{memdir.name}/MEMORY.md:2:25: - [Deploy](deploy.md) — staging first\n"
        f"{memdir.name}/deploy.md:6:11: Deploy to staging.\n"
    )
    monkeypatch.chdir(memdir)
    assert main(["search", "DEPLOY TO", "-i", "--glob", "deploy.md", "--dir", str(memdir)]) == 0
    assert capsys.readouterr().out == "deploy.md:6:1: Deploy to staging.\n"
    assert main(["search", "^-{5,}$", "--dir", str(memdir), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "matches": [{"path": "rules.md", "line": 7, "character": 1, "text": RULE}],
        "truncated": False,
    }


def test_no_match_is_exit_1_and_no_output(memdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "nowhere+", "--dir", str(memdir)]) == 1
    assert capsys.readouterr() == ("", "")
    assert main(["search", "x", "--glob", "[z-a]x]", "--dir", str(memdir)]) == 2
    assert "--glob: invalid glob" in capsys.readouterr().err
