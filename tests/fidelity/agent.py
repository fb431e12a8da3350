"""Run the real Claude Code CLI offline against a recording fake Messages API, and read what it
sent: the memory dir its system prompt names, the MEMORY.md text it injects (path A), its rules.

The CLI gets a minimal environment built here (nothing of the developer's: a ``CLAUDE_*``
variable or a real ``~/.claude`` would change what it does), so a run depends only on the
fixture. Every request body is recorded; the extractors below pick the turn's main request.
"""

from __future__ import annotations

import os
import re
import subprocess
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fake_anthropic import Body, FakeAnthropic

#: The release the harness is pinned to (scripts/install-claude-code.sh reads it from here).
PINNED_VERSION = "2.1.328"
#: What a run asks; the text does not matter, the agent must only complete one turn.
PROMPT = "hello there"

_MEMORY_DIR = re.compile(r"You have a persistent file-based memory at `(?P<dir>[^`\n]*)/`")
_INDEX_HEADER = re.compile(
    r"Contents of (?P<path>[^\n]*/MEMORY\.md) \(user's auto-memory, persists across "
    r"conversations\):\n\n"
)
#: Where a user-context section ends: the next "Contents of …" section or the reminder's end.
_SECTION_END = re.compile(r"\n\nContents of [^\n]* \([^\n]*\):\n\n|\n</system-reminder>")
_MEMORY_RULES = re.compile(r"^# (?:auto )?memory\b", re.IGNORECASE | re.MULTILINE)
_NEXT_HEADING = re.compile(r"^# ", re.MULTILINE)


def cache_dir() -> Path:
    """Where scripts/install-claude-code.sh installs releases."""
    configured = os.environ.get("MEMDIR_E2E_CACHE")
    base = Path(configured) if configured else Path.home() / ".cache" / "memdir-e2e"
    return base / "claude-code"


def agent_binary(version: str = PINNED_VERSION) -> Path:
    """The platform binary of an installed release (the path may not exist).

    npm installs exactly one platform package (``claude-code-linux-x64`` here); which one is
    scripts/install-claude-code.sh's business, so any is taken.
    """
    packages = cache_dir() / version / "node_modules" / "@anthropic-ai"
    found = sorted(packages.glob("claude-code-*/claude"))
    return found[0] if found else packages / "claude-code-linux-x64" / "claude"


@dataclass(frozen=True)
class AgentRun:
    """One turn of the CLI: every request it sent (with its path) and how it ended."""

    requests: tuple[Body, ...]
    paths: tuple[str, ...]
    stdout: str
    stderr: str
    returncode: int


_fake: FakeAnthropic | None = None
#: One run at a time: the fake records into one list.
_running = threading.Lock()


def _fake_api() -> FakeAnthropic:
    global _fake
    if _fake is None:
        _fake = FakeAnthropic()
    return _fake


def agent_env(home: Path, base_url: str, env_extra: Mapping[str, str]) -> dict[str, str]:
    """The whole environment of a run: a search path, the scratch home, the fake API."""
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": "sk-ant-test-dummy",
        # The CLI keeps temp files in $TMPDIR/claude-<uid>: in the scratch home, not /tmp.
        "TMPDIR": str(home / "tmp"),
    }
    env.update(dict(env_extra))
    return env


def run_agent(
    binary: Path,
    *,
    home: Path,
    cwd: Path,
    env_extra: Mapping[str, str] | None = None,
    prompt: str = PROMPT,
    timeout: float = 60.0,
) -> AgentRun:
    """Run ``claude -p PROMPT`` for one turn in ``cwd`` and record what it sent."""
    fake = _fake_api()
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    with _running:
        fake.reset()
        proc = subprocess.run(
            [str(binary), "-p", prompt, "--output-format", "json"],
            cwd=cwd,
            env=agent_env(home, fake.url, env_extra or {}),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            check=False,
        )
        return AgentRun(
            tuple(fake.requests),
            tuple(fake.paths),
            proc.stdout.decode("utf-8", "replace"),
            proc.stderr.decode("utf-8", "replace"),
            proc.returncode,
        )


def main_request(run: AgentRun) -> Body:
    """The turn's own request: the first ``/v1/messages`` call carrying the prompt and tools.

    Side requests (token counts, titles, selectors) have no tools or are counted on another path.
    """
    for path, body in zip(run.paths, run.requests, strict=True):
        if path.split("?", 1)[0] == "/v1/messages" and body.get("tools"):
            return body
    raise AssertionError(
        f"the agent sent no main request (exit {run.returncode}); paths: {list(run.paths)}\n"
        f"stderr: {run.stderr[-2000:]}\nstdout: {run.stdout[-2000:]}"
    )


def system_text(request: Body) -> str:
    """The system prompt as one string (its blocks joined by blank lines)."""
    system: Any = request.get("system", "")
    if isinstance(system, str):
        return system
    return "\n\n".join(block.get("text", "") for block in system if isinstance(block, dict))


def _texts(request: Body) -> list[str]:
    """Every text block of every message, in order."""
    texts: list[str] = []
    for msg in request.get("messages", []):
        content = msg.get("content")
        if isinstance(content, str):
            texts.append(content)
            continue
        for block in content or []:
            if isinstance(block, dict) and block.get("type") == "text":
                texts.append(block["text"])
    return texts


def memory_dir_in_system(request: Body) -> str | None:
    """The memory dir the system prompt names, or None when it has no memory section."""
    match = _MEMORY_DIR.search(system_text(request))
    return match["dir"] if match else None


def injected_index(request: Body) -> tuple[str, str] | None:
    """(path of MEMORY.md, the exact text injected from it), or None when nothing was."""
    for block in _texts(request):
        header = _INDEX_HEADER.search(block)
        if header is None:
            continue
        end = _SECTION_END.search(block, header.end())
        return header["path"], block[header.end() : end.start() if end else len(block)]
    return None


def memory_section(request: Body) -> str | None:
    """The system prompt's memory section (its rules), up to the next top-level heading."""
    system = system_text(request)
    start = _MEMORY_RULES.search(system)
    if start is None:
        return None
    end = _NEXT_HEADING.search(system, start.end())
    return system[start.start() : end.start() if end else len(system)].rstrip()
