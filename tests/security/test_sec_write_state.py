"""Issue 26, the write path's bookkeeping: memdir's journal and locks live in its per-user state
folder, which is private and checked, and even a journal tampered with there acts on nothing
outside the memory dir: every field passes the one containment check, or the journal is reported
and dropped.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from memdir.config import Settings
from memdir.writing.journal import JOURNAL_NAME, WriteIntent, dir_state, intent_problem
from memdir.writing.writer import MemoryWriter
from sec_write_helpers import cli_tool, snapshot, topic
from test_sec_write_journal import CREATE, SECRET, scene


def tampered(memory: Path, key: Path) -> dict[str, dict[str, Any]]:
    (memory / "x.md").write_bytes(b"")
    (memory / "sub").mkdir()
    return {
        "temp outside": {
            "op": "create",
            "path": "y.md",
            "index": True,
            "temp": "../outside/victim.txt",
        },
        "temp absolute": {"op": "create", "path": "x.md", "index": True, "temp": str(key)},
        "temp in a folder": {
            "op": "create",
            "path": "y.md",
            "temp": "sub/.memdir-0123456789ab.tmp",
        },
        "temp with a newline": {
            "op": "create",
            "path": "y.md",
            "temp": ".memdir-0123456789ab.tmp\n",
        },
        "made outside": {"op": "create", "path": "y.md", "made": "../outside/tree"},
        "made absolute": {"op": "create", "path": "y.md", "made": str(key.parent.parent)},
        "made elsewhere inside": {"op": "create", "path": "y.md", "made": "sub"},
        "delete outside": {"op": "delete", "path": "../outside/victim.txt", "index": True},
        "rename outside": {
            "op": "rename",
            "path": "deploy.md",
            "new_path": "../outside/deploy.md",
            "index": True,
        },
        "rename out by absolute path": {
            "op": "rename",
            "path": "deploy.md",
            "new_path": str(key),
            "index": True,
        },
        "unknown op": {"op": "rmtree", "path": "sub"},
        "op of another type": {"op": ["delete"], "path": "sub"},
        "path of another type": {"op": "delete", "path": {"../outside": 1}},
        "delete the dir": {"op": "delete", "path": ".", "index": True},
    }


@pytest.mark.parametrize(
    "case",
    [
        "temp outside",
        "temp absolute",
        "temp in a folder",
        "temp with a newline",
        "made outside",
        "made absolute",
        "made elsewhere inside",
        "delete outside",
        "rename outside",
        "rename out by absolute path",
        "unknown op",
        "op of another type",
        "path of another type",
        "delete the dir",
    ],
)
def test_a_tampered_state_journal_is_reported_and_ignored(tmp_path: Path, case: str) -> None:
    memory, key = scene(tmp_path)
    intent = tampered(memory, key)[case]
    journal = dir_state(memory) / JOURNAL_NAME
    journal.write_text(json.dumps(intent))
    outside_before = snapshot(tmp_path / "outside")
    memory_before = snapshot(memory)

    result = MemoryWriter(memory, settings=Settings()).create("note.md", topic("note"))

    assert snapshot(tmp_path / "outside") == outside_before
    assert key.read_bytes() == SECRET
    after = snapshot(memory)
    del after["note.md"], after["MEMORY.md"]
    del memory_before["MEMORY.md"]
    assert after == memory_before  # nothing the journal names was touched
    assert any("ignored the journal of an interrupted write" in w for w in result.warnings)
    assert not journal.exists()  # reported once, then dropped
    assert "(note.md)" in (memory / "MEMORY.md").read_text()


def test_every_journal_field_passes_the_containment_check(tmp_path: Path) -> None:
    memory, key = scene(tmp_path)
    for case, data in tampered(memory, key).items():
        intent = WriteIntent.from_json(json.dumps(data).encode())
        assert intent is not None
        assert intent_problem(memory, intent) is not None, case
    # What the writer itself records passes.
    good = WriteIntent("create", "a/b/new.md", True, made="a", temp=".memdir-0123456789ab.tmp")
    assert intent_problem(memory, good) is None
    move = WriteIntent("rename", "deploy.md", True, new_path="ops/deploy.md", made="ops")
    assert intent_problem(memory, move) is None


def test_the_state_folder_is_private_and_refused_when_not_the_users(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory, _key = scene(tmp_path)
    state = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    MemoryWriter(memory, settings=Settings()).create("note.md", topic("note"))
    place = dir_state(memory)
    assert place.parent.parent == state / "memdir"
    for folder in (state / "memdir", place.parent, place):
        assert folder.stat().st_mode & 0o777 == 0o700
    # Nothing of memdir's in the memory dir.
    assert sorted(p.name for p in memory.iterdir()) == [
        "MEMORY.md",
        "deploy.md",
        "note.md",
        "orphan.md",
    ]

    # A symlinked state folder could hand the lock and the journal to someone else.
    other = tmp_path / "elsewhere"
    other.mkdir()
    os.rename(place, other / "moved")
    place.symlink_to(other / "moved")
    with pytest.raises(Exception, match=r"state folder .* is a symbolic link.*XDG_STATE_HOME"):
        MemoryWriter(memory, settings=Settings()).create("two.md", topic("two"))
    place.unlink()
    if os.getuid() == 0:  # root can hand the folder to another user
        place.mkdir(mode=0o700)
        os.chown(place, 4242, 4242)
        with pytest.raises(Exception, match=r"belongs to another user.*XDG_STATE_HOME"):
            MemoryWriter(memory, settings=Settings()).create("two.md", topic("two"))
    assert not (memory / "two.md").exists()


def test_an_unusable_state_dir_fails_the_write_naming_it_and_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory, _key = scene(tmp_path)
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("XDG_STATE_HOME", str(blocker))
    outcome = cli_tool(memory, CREATE)
    assert outcome.is_error
    assert str(blocker) in outcome.text and "XDG_STATE_HOME" in outcome.text
    assert not (memory / "note.md").exists()


def test_lint_reports_a_tampered_journal_as_one_memdir_will_not_act_on(tmp_path: Path) -> None:
    from memdir.lint import lint_directory

    memory, key = scene(tmp_path)
    (dir_state(memory) / JOURNAL_NAME).write_text(json.dumps(tampered(memory, key)["made outside"]))
    (finding,) = [d for d in lint_directory(memory).diagnostics if d.code == "MEM122"]
    assert "will not act on" in finding.message and "../outside/tree" in finding.message
    assert (tmp_path / "outside" / "tree" / "a" / "b").is_dir()
