"""``memdir lint`` on a memory dir the project's instructions name (issue 28): one notice on
stderr, the auto memory rules not run, ``--any-format`` checks it as auto memory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from memdir.faces.cli import main
from memhelpers import write_files

LONG_BODY = "\n".join(f"- step {n}: check the staging deploy log for errors" for n in range(260))
FILES = {
    ".git/HEAD": "ref: refs/heads/main\n",
    "CLAUDE.md": "Read `.claude/memory/` before starting work.\n",
    ".claude/memory/MEMORY.md": "- [Deploys](deploys.md) — how staging deploys are checked\n"
    "- [Gone](gone.md) — a note deleted since\n",
    ".claude/memory/deploys.md": "How staging deploys are checked.\n\n" + LONG_BODY + "\n",
}


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def memory_dir(tmp_path: Path, agent_config: Path) -> Path:
    write_files(tmp_path / "proj", FILES)
    return tmp_path / "proj" / ".claude" / "memory"


def test_the_notice_once_and_only_the_rules_that_hold(
    memory_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(["lint", str(memory_dir), "--format", "json"], capsys)
    assert code == 1
    assert [d["code"] for d in json.loads(out)] == ["MEM005"]
    [notice] = [line for line in err.splitlines() if "notice" in line]
    assert notice == (
        f"memdir lint: notice: {memory_dir}: read by the project's instructions (CLAUDE.md "
        "names .claude/memory/), not loaded as Claude Code's auto memory on this machine: load "
        "caps and manifest rules not run (auto memory only); pass --any-format or set "
        "`any_format = true` in memdir.toml to check it as auto memory"
    )


def test_any_format_checks_it_as_auto_memory(
    memory_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(["lint", str(memory_dir), "--format", "json", "--any-format"], capsys)
    assert code == 1
    assert {"MEM005", "MEM101", "MEM106"} <= {d["code"] for d in json.loads(out)}
    assert "notice" not in err


def test_the_setting_checks_it_as_auto_memory(
    memory_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (memory_dir / "memdir.toml").write_text("any_format = true\n", encoding="utf-8")
    _code, out, err = run(["lint", str(memory_dir)], capsys)
    assert "MEM101" in out and "notice" not in err
