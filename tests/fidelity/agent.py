"""Run the real Claude Code CLI offline against a recording fake Messages API, and read what it
sent: the memory dir its system prompt names, the MEMORY.md text it injects (path A), its rules,
and on path B (the relevance prefetch) its memory selector's request and the memories it surfaced.

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

from fake_anthropic import Body, FakeAnthropic, Reply, message, text

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

#: How the memory selector's system prompt starts: what tells its side request apart.
SELECTOR_PROMPT_START = "You are selecting memories that will be useful to Claude Code"
#: ``~/.claude.json`` switching path B on: the GrowthBook disk cache holds ``tengu_moth_copse``
#: (docs/agent-fidelity.md says how the release reads it; the agent may rewrite the file).
PATH_B_CONFIG: dict[str, object] = {"cachedGrowthBookFeatures": {"tengu_moth_copse": True}}
#: Path B's attachment starts with this (the default main model gets it as a system message).
SURFACED_INTRO = "Retrieved for possible relevance"


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
    responder: Reply | None = None,
    timeout: float = 60.0,
) -> AgentRun:
    """Run ``claude -p PROMPT`` for one turn in ``cwd`` and record what it sent.

    Without ``responder`` every request ends the turn with a short text.
    """
    fake = _fake_api()
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    with _running:
        fake.reset(responder=responder)
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


# --- path B -------------------------------------------------------------------------------------


def is_selector_request(request: Body) -> bool:
    """The memory selector's side request: its system prompt's last block is the selector's."""
    system: Any = request.get("system", "")
    blocks = [system] if isinstance(system, str) else [b.get("text", "") for b in system]
    return bool(blocks) and str(blocks[-1]).startswith(SELECTOR_PROMPT_START)


def selector_requests(run: AgentRun) -> list[Body]:
    return [body for body in run.requests if is_selector_request(body)]


def _system_messages(request: Body) -> list[str]:
    """The text of each ``role: "system"`` message (the default main model's meta messages)."""
    found = []
    for msg in request.get("messages", []):
        if msg.get("role") != "system":
            continue
        content = msg.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        found.append("".join(b.get("text", "") for b in blocks or [] if b.get("type") == "text"))
    return found


def surfaced_in(request: Body) -> str | None:
    """Path B's attachment in one main request, or None when it carries none."""
    for found in _system_messages(request):
        if found.startswith(SURFACED_INTRO):
            return found
    return None


def surfaced_memories(run: AgentRun) -> str | None:
    """The memories the turn surfaced: the first attachment any main request carried."""
    for body in run.requests:
        if body.get("tools") and not is_selector_request(body):
            found = surfaced_in(body)
            if found is not None:
                return found
    return None


#: Tool rounds the scripted loop runs at most while waiting for the prefetch to be consumed.
MAX_TOOL_ROUNDS = 3


class PathBLoop:
    """Answers one path B turn by what each request is.

    The selector gets ``answer`` as its text. The main loop Reads ``read`` (the prefetch is
    consumed only after a tool round, and only once it has settled), so its first request waits
    for the selector's answer when one is expected, and it Reads again, up to
    :data:`MAX_TOOL_ROUNDS`, while the memories have not arrived. Anything else ends with a text.
    """

    def __init__(self, answer: str, read: Path, *, expect_selector: bool = True) -> None:
        self.answer = answer
        self.read = read
        self.expect_selector = expect_selector
        self._answered = threading.Event()

    def __call__(self, body: Body) -> Body:
        if is_selector_request(body):
            self._answered.set()
            return message(text(self.answer))
        if not body.get("tools"):
            return message(text("ok"))
        # Counted by block: the agent merges consecutive assistant messages.
        rounds = sum(
            1
            for msg in body.get("messages", [])
            if msg.get("role") == "assistant" and isinstance(msg.get("content"), list)
            for block in msg["content"]
            if isinstance(block, dict) and block.get("type") == "tool_use"
        )
        if rounds == 0:
            if self.expect_selector:
                self._answered.wait(HOLD_SELECTOR_SECONDS)
            return self._read(rounds)
        waiting = self._answered.is_set() and surfaced_in(body) is None
        if waiting and rounds < MAX_TOOL_ROUNDS:
            return self._read(rounds)
        return message(text("Done."))

    def _read(self, rounds: int) -> Body:
        use = {
            "type": "tool_use",
            "id": f"toolu_read_{rounds + 1}",
            "name": "Read",
            "input": {"file_path": str(self.read)},
        }
        return message(use)


#: How long the loop's first request waits for the selector's request before going on.
HOLD_SELECTOR_SECONDS = 30.0
