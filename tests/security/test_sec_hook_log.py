"""Issue 26, the hook's log: every value in it comes from stdin or a memory dir, so a newline in a
session id forged a whole line, and an ANSI escape could rewrite a terminal showing the log.
Each entry is one escaped line of bounded length, and the log is rotated."""

from __future__ import annotations

from pathlib import Path

import pytest
from memdir.faces import hook
from sec_hook_support import Scratch

FORGED = "s1\n2026-01-01T00:00:00Z session=admin all good\x1b[2K\r\u202eevil\u2028x"


def test_a_newline_in_session_id_cannot_forge_a_log_line(tmp_path: Path) -> None:
    scratch = Scratch(tmp_path)
    nowhere = tmp_path / "no-project"
    nowhere.mkdir()
    done = scratch.run(scratch.stdin(session_id=FORGED, cwd=nowhere))  # logs "no memory dir"
    assert (done.returncode, done.stdout) == (0, b"")
    [line] = scratch.log_lines()
    assert "no memory dir" in line
    assert (
        "session=s1\\n2026-01-01T00:00:00Z session=admin all good\\x1b[2K\\r\\u202eevil\\u2028x"
        in line
    )
    for raw in ("\x1b", "\r", "\u202e", "\u2028"):
        assert raw not in line


def test_every_logged_value_is_escaped(tmp_path: Path) -> None:
    # The cwd is in the message, not the session id: it is escaped all the same.
    scratch = Scratch(tmp_path)
    odd = tmp_path / "odd\nname\x1b[31m"
    odd.mkdir()
    done = scratch.run(scratch.stdin(cwd=odd))
    assert (done.returncode, done.stdout) == (0, b"")
    [line] = scratch.log_lines()
    assert "odd\\nname\\x1b[31m" in line


def test_a_huge_value_makes_one_bounded_entry(tmp_path: Path) -> None:
    scratch = Scratch(tmp_path)
    huge = tmp_path / ("d" * 200)
    huge.mkdir()
    # A session id of a megabyte and a message naming a long path: one short line.
    done = scratch.run(scratch.stdin(session_id="x" * 1_000_000, cwd=huge))
    assert (done.returncode, done.stdout) == (0, b"")
    [line] = scratch.log_lines()
    assert len(line) < 10 * (hook.LOG_LINE_MAX_CHARS + 300)


def test_log_line_cuts_the_message_and_escapes_the_cut() -> None:
    entry = hook.log_line("s", "\x1b" * (hook.LOG_LINE_MAX_CHARS + 50), now=0)
    assert entry.endswith("more characters]\n") and entry.count("\n") == 1
    assert "\x1b" not in entry and len(entry) < 5 * hook.LOG_LINE_MAX_CHARS


def test_the_log_stays_bounded_when_rotated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hook, "LOG_MAX_BYTES", 10_000)
    for _ in range(100):
        hook.append_log(tmp_path, "s", "y" * 5_000, now=0)
    sizes = [p.stat().st_size for p in tmp_path.iterdir()]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hook.log", "hook.log.1"]
    assert max(sizes) <= 10_000 + hook.LOG_LINE_MAX_CHARS + 100


def test_a_symlinked_log_is_not_written_through(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.write_text("", encoding="utf-8")
    states = tmp_path / "state"
    states.mkdir()
    (states / hook.LOG_FILENAME).symlink_to(target)
    hook.append_log(states, "s", "hello", now=0)
    assert target.read_text(encoding="utf-8") == ""
