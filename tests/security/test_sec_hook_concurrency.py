"""Issue 26, concurrent hook runs of one session: each run loads the session's state, recalls and
saves it; without a lock, runs started together all saw an empty session and injected the same
memories (9 times in 10). Under the session's lock each memory is injected at most once."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from memdir.agent.paths import state_dir
from memdir.faces import hook
from memdir.recall import sessions
from memdir.recall.surface import Session
from memhelpers import topic
from sec_hook_support import HANG_GUARD_SECONDS, SESSION, Scratch, hook_command

RUNS = 8
NAMES = ("deploy.md", "deploy-rollback.md", "deploy-secrets.md")


@pytest.mark.processes
def test_concurrent_runs_of_one_session_inject_each_memory_once(tmp_path: Path) -> None:
    scratch = Scratch(tmp_path)
    scratch.write(
        "deploy-rollback.md",
        topic("rollback", "how to roll back a staging server deploy", body="Use make rollback.\n"),
    )
    scratch.write(
        "deploy-secrets.md",
        topic("secrets", "where the staging server deploy secrets live", body="In vault.\n"),
    )
    stdin = scratch.stdin("how do I deploy the staging server, roll back, and find secrets?")
    # Every process is started first and blocks on its stdin (a pipe); then all are given their
    # input at once, so their load → recall → save steps overlap as much as the machine allows.
    pipes = [os.pipe() for _ in range(RUNS)]
    runs = []
    for read_end, _ in pipes:
        runs.append(
            subprocess.Popen(
                hook_command(),
                stdin=read_end,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=scratch.env,
            )
        )
        os.close(read_end)
    for _, write_end in pipes:
        os.write(write_end, stdin)  # far below a pipe's buffer: never blocks
    for _, write_end in pipes:
        os.close(write_end)
    outputs: list[str] = []
    for run in runs:
        out, err = run.communicate(timeout=HANG_GUARD_SECONDS)
        assert (run.returncode, err) == (0, b"")
        if out:
            outputs.append(json.loads(out)["hookSpecificOutput"]["additionalContext"])
    injected = "\n".join(outputs)
    counts = {name: injected.count(f"{scratch.memory / name}:") for name in NAMES}
    assert max(counts.values()) == 1, counts  # injected, and never twice
    saved = Session.load(sessions.session_path(scratch.states, SESSION))
    assert {Path(p).name for p in saved.surfaced} == {n for n, c in counts.items() if c}
    assert scratch.log_lines() == []


def test_the_lock_file_sits_beside_the_session_file(tmp_path: Path) -> None:
    scratch = Scratch(tmp_path)
    scratch.run(scratch.stdin())
    path = sessions.session_path(state_dir(scratch.env, scratch.home), SESSION)
    assert path.exists()
    assert Path(str(path) + sessions.LOCK_SUFFIX).exists()


def test_a_session_held_too_long_gives_nothing_rather_than_a_duplicate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from filelock import FileLock

    scratch = Scratch(tmp_path)
    monkeypatch.setattr(sessions, "SESSION_LOCK_TIMEOUT_SECONDS", 0)
    path = sessions.session_path(scratch.states, SESSION)
    path.parent.mkdir(parents=True)
    with FileLock(str(path) + sessions.LOCK_SUFFIX):
        outcome = hook.user_prompt_submit(scratch.stdin(), env={}, home=scratch.home)
    assert outcome.output is None
    assert outcome.log is not None and "another run of this session" in outcome.log
    assert not path.exists()
