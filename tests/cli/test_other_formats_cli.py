"""``memdir`` on another agent's memory: one notice, no finding, nothing written (issue 28)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from memdir.agent.formats import recognise_dir
from memdir.faces.cli import main
from other_formats import OTHER_FORMATS, make_format_dir, tree_bytes


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("key", sorted(OTHER_FORMATS))
def test_lint_prints_the_notice_and_nothing_else(
    tmp_path: Path, key: str, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_format_dir(tmp_path / key, OTHER_FORMATS[key])
    code, out, err = run(["lint", str(root)], capsys)
    assert code == 0
    assert out == ""
    [line] = err.splitlines()
    assert line.startswith(f"memdir lint: notice: {root}: looks like ")
    assert "fixable" not in err


@pytest.mark.parametrize("key", sorted(OTHER_FORMATS))
def test_fix_changes_no_byte(tmp_path: Path, key: str, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_format_dir(tmp_path / key, OTHER_FORMATS[key])
    before = tree_bytes(tmp_path)
    code, out, err = run(["lint", str(root), "--fix"], capsys)
    assert code == 0 and out == ""
    assert "fixed" not in err
    assert tree_bytes(tmp_path) == before


def test_any_format_checks_it_as_claude_codes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_format_dir(tmp_path / "h", OTHER_FORMATS["hermes"])
    # MEM004 is a preview rule.
    code, out, err = run(["lint", str(root), "--any-format", "--preview"], capsys)
    assert code == 1 and "MEM004" in out and "notice" not in err


def test_the_setting_checks_it_as_claude_codes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_format_dir(tmp_path / "h", OTHER_FORMATS["hermes"])
    # MEM004 is a preview rule.
    (root / "memdir.toml").write_text("any_format = true\npreview = true\n", encoding="utf-8")
    code, out, _err = run(["lint", str(root)], capsys)
    assert code == 1 and "MEM004" in out


def test_json_stays_an_array_and_the_notice_goes_to_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_format_dir(tmp_path / "oc", OTHER_FORMATS["openclaw"])
    code, out, err = run(["lint", str(root), "--format", "json"], capsys)
    assert code == 0 and json.loads(out) == []
    assert "memdir lint: notice:" in err and "OpenClaw" in err


def test_sarif_says_it_as_a_tool_notification(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_format_dir(tmp_path / "oc", OTHER_FORMATS["openclaw"])
    code, out, _err = run(["lint", str(root), "--format", "sarif"], capsys)
    run_ = json.loads(out)["runs"][0]
    assert code == 0 and run_["results"] == []
    [invocation] = run_["invocations"]
    [note] = invocation["toolExecutionNotifications"]
    assert invocation["executionSuccessful"] is True
    assert note["level"] == "note" and note["descriptor"]["id"] == "not-claude-code-memory"
    assert note["message"]["text"].startswith("looks like OpenClaw's workspace memory")


def test_github_says_it_as_a_notice(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_format_dir(tmp_path / "oc", OTHER_FORMATS["openclaw"])
    code, out, _err = run(["lint", str(root), "--format", "github"], capsys)
    [line] = out.splitlines()
    assert code == 0 and line.startswith("::notice title=memdir%3A ")
    assert "::looks like OpenClaw's workspace memory" in line


def test_a_claude_code_dir_beside_it_is_still_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = make_format_dir(tmp_path / "bank", OTHER_FORMATS["cline-memory-bank"])
    mine = make_format_dir(tmp_path / "mem", {"MEMORY.md": "- [Gone](gone.md) — never written\n"})
    code, out, err = run(["lint", str(other), str(mine)], capsys)
    assert code == 1 and "MEM005" in out and "bank" not in out
    assert "memdir lint: notice:" in err and "1 error" in err


def test_writing_commands_refuse(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_format_dir(tmp_path / "oc", OTHER_FORMATS["openclaw"])
    before = tree_bytes(tmp_path)
    command = json.dumps({"command": "create", "path": "/memories/x.md", "file_text": "hi\n"})
    code, _out, err = run(["tool", command, str(root)], capsys)
    assert code == 2 and "looks like OpenClaw's workspace memory" in err
    assert tree_bytes(tmp_path) == before
    assert recognise_dir(root) is not None
    code, out, _err = run(["tool", command, str(root), "--any-format"], capsys)
    assert code == 0, out
    assert (root / "x.md").is_file()
