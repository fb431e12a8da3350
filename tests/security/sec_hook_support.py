"""A scratch home for the hook's security tests, and the hook run as Claude Code runs it: a
subprocess, JSON on stdin, with a deadline that only turns a hang into a failure."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import IO

from memdir.agent.paths import locate_memory_dir
from memhelpers import topic

#: Only a guard against hangs: a healthy run takes well under a second.
HANG_GUARD_SECONDS = 120
SESSION = "5f1c1d9e-0000-4000-8000-00000000aaaa"
DEPLOY_PROMPT = "how do I deploy the staging server?"
DEPLOY_BODY = "Run make deploy-staging.\n"


class Scratch:
    """A home with one project's memory dir (``deploy.md`` and whatever tests add), the hook's
    environment and its state dir."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp = tmp_path
        self.home = tmp_path / "home"
        self.cwd = tmp_path / "proj"
        self.cwd.mkdir(parents=True)
        found = locate_memory_dir(self.cwd, env={}, home=self.home).memory_dir
        assert found is not None
        self.memory = found
        self.memory.mkdir(parents=True)
        self.write("MEMORY.md", "- [Deploy](deploy.md) — staging\n")
        self.write(
            "deploy.md", topic("deploy", "how to deploy the staging server", body=DEPLOY_BODY)
        )
        keep = {"PATH", "PYTHONPATH", "LANG", "LC_ALL", "SYSTEMROOT"}
        self.env = {k: v for k, v in os.environ.items() if k in keep}
        self.env["HOME"] = str(self.home)
        self.states = self.home / ".local" / "state" / "memdir"

    def write(self, name: str, text: str) -> Path:
        path = self.memory / name
        path.write_text(text, encoding="utf-8")
        return path

    def stdin(
        self,
        prompt: str = DEPLOY_PROMPT,
        session_id: str = SESSION,
        transcript: Path | str | None = None,
        cwd: Path | str | None = None,
    ) -> bytes:
        data = {
            "session_id": session_id,
            "transcript_path": str(transcript or self.tmp / "no-transcript.jsonl"),
            "cwd": str(cwd or self.cwd),
            "hook_event_name": "UserPromptSubmit",
            "prompt": prompt,
        }
        return json.dumps(data, ensure_ascii=False).encode("utf-8")

    def run(
        self,
        stdin: bytes | None = None,
        *,
        stdin_file: IO[bytes] | None = None,
        memory_limit: int | None = None,
    ) -> subprocess.CompletedProcess[bytes]:
        """The hook on ``stdin`` (or reading ``stdin_file``), in at most ``memory_limit`` bytes
        of address space when given (a bound on the work done, not a timing)."""
        return subprocess.run(
            hook_command(),
            input=stdin,
            stdin=stdin_file,
            capture_output=True,
            env=self.env,
            check=False,
            timeout=HANG_GUARD_SECONDS,
            preexec_fn=None if memory_limit is None else limit_memory(memory_limit),
        )

    def log_lines(self) -> list[str]:
        log = self.states / "hook.log"
        return log.read_text(encoding="utf-8").splitlines() if log.exists() else []

    def context(self, done: subprocess.CompletedProcess[bytes]) -> str:
        """The additionalContext a run printed ("" when it printed nothing)."""
        assert done.returncode == 0, done.stderr
        if not done.stdout:
            return ""
        text = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
        assert isinstance(text, str)
        return text


def hook_command() -> list[str]:
    return [sys.executable, "-m", "memdir", "hook", "user-prompt-submit"]


def limit_memory(limit: int) -> Callable[[], None]:
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return apply


def read_record(path: Path, tool: str = "Read") -> str:
    """A transcript line: the assistant calling ``tool`` on ``path``."""
    data = {
        "type": "assistant",
        "message": {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "t1", "name": tool, "input": {"file_path": str(path)}}
            ],
        },
    }
    return json.dumps(data)
