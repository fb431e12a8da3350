"""``memdir rule``: a rule's page, the list of rules, one-line errors."""

from __future__ import annotations

import subprocess
import sys

import pytest
from memdir.faces.cli import main
from memdir.lint.docs import rule_page
from memdir.lint.rules import RULES


def test_a_code_prints_its_page(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rule", "MEM001"]) == 0
    assert capsys.readouterr().out == rule_page(RULES["MEM001"])


def test_codes_are_case_insensitive(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rule", "mem107"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# MEM107 `orphan`\n")
    assert "## How to fix it" in out


def test_without_a_code_every_rule_is_listed(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rule"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == list(RULES)
    for line, rule in zip(lines, RULES.values(), strict=True):
        marked = ["preview", "(off", "unless", "--preview)"] if rule.preview else []
        assert line.split()[1:] == [rule.name, rule.severity, *marked]
    assert any(rule.preview for rule in RULES.values())


def test_an_unknown_code_is_one_line_and_exit_2() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "memdir", "rule", "MEM999"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "unknown rule code 'MEM999'" in proc.stderr


def test_lint_help_points_at_the_rule_command() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "memdir", "lint", "--help"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0
    assert "memdir rule CODE" in " ".join(proc.stdout.split())
    assert "docs/" not in proc.stdout
