"""The CLI never prints a traceback unasked: file-system refusals and bugs are one line each."""

from __future__ import annotations

import argparse
from pathlib import Path

import memdir.faces.cli.show
import pytest
from memdir.faces.cli import EXIT_INTERNAL, main


def index_only(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    root.mkdir()
    (root / "MEMORY.md").write_text("# Memory index\n", encoding="utf-8")
    return root


def test_a_name_too_long_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = index_only(tmp_path)
    assert main(["show", "--dir", str(root), "a" * 300 + ".md"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("memdir show: error: File name too long: aaa"), err
    assert len(err.splitlines()) == 1 and len(err) < 200, err
    assert "Traceback" not in err


def boom(_args: argparse.Namespace) -> int:
    raise RuntimeError("boom\nsecond line")


def test_a_bug_is_one_line_and_exit_70(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MEMDIR_DEBUG", raising=False)
    monkeypatch.setattr(memdir.faces.cli.show, "cmd_show", boom)
    root = index_only(tmp_path)
    assert main(["show", "--dir", str(root), "x.md"]) == EXIT_INTERNAL == 70
    err = capsys.readouterr().err
    assert err == "memdir: internal error: RuntimeError: boom; please report it\n"


@pytest.mark.parametrize("how", ["-v", "MEMDIR_DEBUG"])
def test_the_traceback_only_when_asked(
    how: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(memdir.faces.cli.show, "cmd_show", boom)
    root = index_only(tmp_path)
    argv = ["show", "--dir", str(root), "x.md"]
    if how == "-v":
        monkeypatch.delenv("MEMDIR_DEBUG", raising=False)
        argv.insert(0, "-v")
    else:
        monkeypatch.setenv("MEMDIR_DEBUG", "1")
    assert main(argv) == EXIT_INTERNAL
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err and "RuntimeError: boom" in err
    assert err.endswith("memdir: internal error: RuntimeError: boom; please report it\n")
