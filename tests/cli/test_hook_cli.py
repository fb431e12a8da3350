"""``memdir hook user-prompt-submit`` as the agent runs it: JSON on stdin, the hook output on
stdout, and exit 0 with nothing printed whatever goes wrong (the reason goes to the log)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from memdir.agent.paths import locate_memory_dir
from memdir.faces import hook
from memdir.faces.cli import main
from memhelpers import topic


def scratch(tmp_path: Path) -> tuple[dict[str, str], Path, Path]:
    """(environment, project dir, state dir) of a scratch home with one project's memories."""
    home, cwd = tmp_path / "home", tmp_path / "proj"
    cwd.mkdir()
    memory = locate_memory_dir(cwd, env={}, home=home).memory_dir
    assert memory is not None
    memory.mkdir(parents=True)
    (memory / "MEMORY.md").write_text("- [Deploy](deploy.md) — staging\n", encoding="utf-8")
    (memory / "deploy.md").write_text(
        topic("deploy", "how to deploy the staging server", body="Run make deploy-staging.\n"),
        encoding="utf-8",
    )
    keep = {"PATH", "PYTHONPATH", "LANG", "LC_ALL", "SYSTEMROOT"}
    env = {k: v for k, v in os.environ.items() if k in keep}
    env["HOME"] = str(home)
    return env, cwd, home / ".local" / "state" / "memdir"


def run_hook(stdin: bytes, env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "memdir", "hook", "user-prompt-submit"],
        input=stdin,
        capture_output=True,
        env=env,
        check=False,
        timeout=60,
    )


def hook_input(cwd: Path, prompt: str) -> bytes:
    data = {
        "session_id": "5f1c1d9e-0000-4000-8000-000000000001",
        "transcript_path": "/nowhere/t.jsonl",
        "cwd": str(cwd),
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    }
    return json.dumps(data).encode()


def test_stdin_to_hook_output_then_dedupe(tmp_path: Path) -> None:
    env, cwd, states = scratch(tmp_path)
    first = run_hook(hook_input(cwd, "how do I deploy the staging server?"), env)
    assert (first.returncode, first.stderr) == (0, b"")
    output = json.loads(first.stdout)
    assert list(output) == ["hookSpecificOutput"]
    assert output["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    assert "Run make deploy-staging." in output["hookSpecificOutput"]["additionalContext"]
    # The same session in a new process: already surfaced, so nothing.
    second = run_hook(hook_input(cwd, "deploy the staging server again"), env)
    assert (second.returncode, second.stdout, second.stderr) == (0, b"", b"")
    assert list((states / "hook-sessions").iterdir())


@pytest.mark.parametrize("stdin", [b"", b"garbage", b"\xff\xfe", b'{"prompt": 3}'])
def test_garbage_exits_0_with_nothing_printed(tmp_path: Path, stdin: bytes) -> None:
    env, _, states = scratch(tmp_path)
    done = run_hook(stdin, env)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert (states / "hook.log").read_text(encoding="utf-8").strip()


def test_xdg_state_home_holds_the_log(tmp_path: Path) -> None:
    env, _, _ = scratch(tmp_path)
    env["XDG_STATE_HOME"] = str(tmp_path / "xdg")
    assert run_hook(b"nope", env).returncode == 0
    assert "not JSON" in (tmp_path / "xdg" / "memdir" / "hook.log").read_text(encoding="utf-8")


def test_a_bug_fails_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    env, cwd, states = scratch(tmp_path)
    monkeypatch.setenv("HOME", env["HOME"])
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)

    def broken(*args: object, **kwargs: object) -> hook.HookOutcome:
        raise RuntimeError("boom")

    monkeypatch.setattr(hook, "user_prompt_submit", broken)
    stdin = io.TextIOWrapper(io.BytesIO(hook_input(cwd, "deploy the staging server")))
    monkeypatch.setattr(sys, "stdin", stdin)
    assert main(["hook", "user-prompt-submit"]) == 0
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", "")
    assert "error: RuntimeError: boom" in (states / "hook.log").read_text(encoding="utf-8")


def test_help_names_the_event(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["hook", "--help"])
    assert exit_info.value.code == 0
    assert "user-prompt-submit" in capsys.readouterr().out
