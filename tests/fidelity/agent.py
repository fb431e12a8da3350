"""Run the real Claude Code CLI offline against a recording fake Messages API, and read what it
sent: the memory dir its system prompt names, the MEMORY.md text it injects (path A), its rules,
and on path B (the relevance prefetch) its memory selector's request and the memories it surfaced.

The CLI gets a minimal environment built here (nothing of the developer's: a ``CLAUDE_*``
variable or a real ``~/.claude`` would change what it does), so a run depends only on the
fixture. Every request body is recorded; the extractors below pick the turn's main request.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import tempfile
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fake_anthropic import Body, FakeAnthropic, Reply, message, text
from memdir.target import VERIFIED_AGENT_VERSION

#: The release the harness is pinned to: the one memdir's default target reproduces.
PINNED_VERSION = VERIFIED_AGENT_VERSION
#: What a run asks; the text does not matter, the agent must only complete one turn.
PROMPT = "hello there"

#: The default main model's wording, and the older one other models get.
_MEMORY_DIR = re.compile(
    r"You have a persistent,? file-based memory(?: system)? at `(?P<dir>[^`\n]*)/`"
)
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
#: How a selector request's last message (the query) starts.
SELECTOR_QUERY_PREFIX = "Select memories relevant to:\n"


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
    #: The user messages, one a turn.
    prompts: tuple[str, ...] = ()


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
    prompt: str | Sequence[str] = PROMPT,
    responder: Reply | None = None,
    timeout: float = 60.0,
    args: Sequence[str] = (),
) -> AgentRun:
    """Run ``claude -p PROMPT`` in ``cwd`` and record what it sent.

    Several prompts are the turns of one session in one process (the agent keeps per-session
    state in memory, path B's selector conversation among it): they go in as stream-json, each
    after the previous turn's result. Without ``responder`` every request ends its turn with a
    short text. ``args`` go on the command line after the prompt (``--mcp-config FILE``).
    """
    prompts = [prompt] if isinstance(prompt, str) else list(prompt)
    fake = _fake_api()
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    env = agent_env(home, fake.url, env_extra or {})
    with _running:
        fake.reset(responder=responder)
        if len(prompts) == 1:
            proc = subprocess.run(
                [str(binary), "-p", prompts[0], "--output-format", "json", *args],
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=timeout,
                check=False,
            )
            stdout, stderr, returncode = proc.stdout, proc.stderr, proc.returncode
        else:
            stdout, stderr, returncode = _converse(binary, cwd, env, prompts, timeout, args)
        return AgentRun(
            tuple(fake.requests),
            tuple(fake.paths),
            stdout.decode("utf-8", "replace"),
            stderr.decode("utf-8", "replace"),
            returncode,
            tuple(prompts),
        )


def _converse(
    binary: Path,
    cwd: Path,
    env: Mapping[str, str],
    prompts: Sequence[str],
    timeout: float,
    args: Sequence[str] = (),
) -> tuple[bytes, bytes, int]:
    """One process, one turn per prompt: each user message is written once the previous turn's
    ``result`` event is out (written all at once, the later ones would be dropped)."""
    command = [str(binary), "-p", "--input-format", "stream-json"]
    command += ["--output-format", "stream-json", "--verbose", *args]
    # stderr to a file: a pipe nobody reads while stdout is read could fill up and block.
    with (
        tempfile.TemporaryFile() as errors,
        subprocess.Popen(
            command,
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,
        ) as proc,
    ):
        assert proc.stdin is not None and proc.stdout is not None
        # The deadline kills the process, which ends the blocking reads below.
        killer = threading.Timer(timeout, proc.kill)
        killer.start()
        out: list[bytes] = []
        try:
            for prompt in prompts:
                user = {"type": "user", "message": {"role": "user", "content": prompt}}
                proc.stdin.write(json.dumps(user).encode() + b"\n")
                proc.stdin.flush()
                for line in proc.stdout:
                    out.append(line)
                    if line.startswith(b"{") and json.loads(line).get("type") == "result":
                        break
            proc.stdin.close()
            out.extend(proc.stdout)
            returncode = proc.wait()
        finally:
            killer.cancel()
        errors.seek(0)
        return b"".join(out), errors.read(), returncode


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


def switch_path_b_on(home: Path) -> None:
    """Put :data:`PATH_B_CONFIG` into ``home/.claude.json``, keeping what the agent wrote there
    (it rewrites the file, so this runs before every turn)."""
    config_file = home / ".claude.json"
    try:
        config = json.loads(config_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        config = {}
    if not isinstance(config, dict):
        config = {}
    for key, value in PATH_B_CONFIG.items():
        merged = config.get(key)
        if isinstance(value, dict) and isinstance(merged, dict):
            config[key] = {**merged, **value}
        else:
            config[key] = value
    config_file.write_text(json.dumps(config), encoding="utf-8")


def might_prefetch(prompt: str) -> bool:
    """Whether the agent's trigger lets ``prompt`` prefetch (it has whitespace inside): only a
    hint for the scripted loop (see :class:`PathBLoop`); what the agent did is what is compared."""
    return bool(re.search(r"\s", prompt.strip()))


def is_selector_request(request: Body) -> bool:
    """The memory selector's side request: its system prompt's last block is the selector's."""
    system: Any = request.get("system", "")
    blocks = [system] if isinstance(system, str) else [b.get("text", "") for b in system]
    return bool(blocks) and str(blocks[-1]).startswith(SELECTOR_PROMPT_START)


def selector_query(request: Body) -> str | None:
    """The message a selector request asks about (its last message's text, after the prefix)."""
    messages = request.get("messages") or [{}]
    texts = _message_texts(messages[-1])
    return texts[-1].removeprefix(SELECTOR_QUERY_PREFIX) if texts else None


def selector_requests(run: AgentRun, prompt: str | None = None) -> list[Body]:
    """The selector requests of the run, or only those asking about ``prompt``."""
    return [
        body
        for body in run.requests
        if is_selector_request(body) and (prompt is None or selector_query(body) == prompt)
    ]


def _message_texts(msg: Body) -> list[str]:
    content = msg.get("content")
    if isinstance(content, str):
        return [content]
    return [
        b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text"
    ]


def _system_messages(request: Body) -> list[str]:
    """The text of each ``role: "system"`` message (the default main model's meta messages)."""
    return [
        "".join(_message_texts(msg))
        for msg in request.get("messages", [])
        if msg.get("role") == "system"
    ]


_ATTACHMENT_START = re.compile(r"\n(?=" + re.escape(SURFACED_INTRO) + ")")
_REMINDER = re.compile(r"<system-reminder>\n(.*?)\n</system-reminder>", re.DOTALL)
#: How a memory's block in a tool result starts: its staleness note or its header.
_MEMORY_BLOCK = re.compile(r"This memory is \d+ days old\. |Memory: ")


def _tool_result_texts(request: Body) -> list[str]:
    return [
        block["content"]
        for msg in request.get("messages", [])
        if msg.get("role") == "user" and isinstance(msg.get("content"), list)
        for block in msg["content"]
        if isinstance(block, dict)
        and block.get("type") == "tool_result"
        and isinstance(block.get("content"), str)
    ]


def _in_tool_results(request: Body) -> list[str]:
    """Attachments some main models get inside a tool result: each memory in a system reminder
    of its own, the first with the intro. Returned as the system message form joins them."""
    found = []
    for result in _tool_result_texts(request):
        group: list[str] = []
        for reminder in _REMINDER.findall(result):
            if reminder.startswith(SURFACED_INTRO):
                if group:
                    found.append("\n".join(group))
                group = [reminder]
            elif group and _MEMORY_BLOCK.match(reminder):
                group.append(reminder)
        if group:
            found.append("\n".join(group))
    return found


def all_surfaced(request: Body) -> list[str]:
    """Path B's attachments in one main request, oldest first, in the system message form.

    The default main model gets a system message; the agent merges adjacent ones with a
    newline, so one may hold several (each starts with the intro). Other models get them in
    tool results (see :func:`_in_tool_results`).
    """
    in_system = [
        piece
        for found in _system_messages(request)
        for piece in _ATTACHMENT_START.split(found)
        if piece.startswith(SURFACED_INTRO)
    ]
    return in_system + _in_tool_results(request)


def surfaced_in(request: Body) -> str | None:
    """Path B's first attachment in one main request, or None when it carries none."""
    found = all_surfaced(request)
    return found[0] if found else None


def _is_main(request: Body) -> bool:
    return bool(request.get("tools")) and not is_selector_request(request)


def _carries(request: Body, prompt: str) -> bool:
    """Whether a request carries the user message ``prompt`` (as a text block: the agent merges
    a turn's message into the previous turn's tool results)."""
    return any(
        msg.get("role") == "user" and prompt in _message_texts(msg)
        for msg in request.get("messages", [])
    )


def surfaced_memories(run: AgentRun, prompt: str | None = None) -> str | None:
    """The memories the turn for ``prompt`` surfaced (default: the run's last turn): the first
    attachment its main requests carry beyond those the turn's first request already had (the
    agent moves earlier turns' attachments along, after the turn's message)."""
    if prompt is None and len(run.prompts) > 1:
        prompt = run.prompts[-1]
    mains = [
        body
        for body in run.requests
        if _is_main(body) and (prompt is None or _carries(body, prompt))
    ]
    earlier = len(all_surfaced(mains[0])) if mains else 0
    for body in mains:
        found = all_surfaced(body)
        if len(found) > earlier:
            return found[earlier]
    return None


_tool_ids = itertools.count(1)
#: Tool rounds the scripted loop runs at most while waiting for the prefetch to be consumed.
MAX_TOOL_ROUNDS = 3
#: How long a turn's request waits for the selector's answer before going on: it comes within
#: milliseconds when it comes at all (the session budget may stop it).
HOLD_SELECTOR_SECONDS = 5.0


class PathBLoop:
    """Answers path B turns by what each request is.

    ``turns`` maps each user message to the selector's answer for it. The selector gets the
    answer for the message it asks about. The main loop Reads ``read`` (the prefetch is consumed
    only after a tool round, and only once it has settled): when the message may prefetch, a
    request first waits for the selector's answer (a bounded wait: it may not come), and the
    loop Reads again, up to :data:`MAX_TOOL_ROUNDS`, while the memories have not arrived.
    Anything else gets a text.
    """

    def __init__(self, turns: Mapping[str, str], read: Path) -> None:
        self.turns = dict(turns)
        self.read = read
        self._answered = {prompt: threading.Event() for prompt in self.turns}
        #: Per turn: Reads answered so far, and attachments its first request already carried.
        #: Counted here, not in the messages: the agent merges and reorders them.
        self._reads = dict.fromkeys(self.turns, 0)
        self._before = dict.fromkeys(self.turns, 0)

    def __call__(self, body: Body) -> Body:
        if is_selector_request(body):
            query = selector_query(body)
            answer = self.turns.get(query or "", '{"selected_memories": []}')
            if query in self._answered:
                self._answered[query].set()
            return message(text(answer))
        carried = [p for p in self.turns if _carries(body, p)]
        if not body.get("tools") or not carried:
            return message(text("ok"))
        prompt = carried[-1]  # the latest turn the request carries
        reads, surfaced = self._reads[prompt], len(all_surfaced(body))
        if reads == 0:
            self._before[prompt] = surfaced
        elif surfaced > self._before[prompt] or reads >= MAX_TOOL_ROUNDS:
            return message(text("Done."))
        answered = self._answered[prompt]
        if might_prefetch(prompt):
            answered.wait(HOLD_SELECTOR_SECONDS)
        if reads and not answered.is_set():
            return message(text("Done."))  # no selector request: one round was the turn
        self._reads[prompt] += 1
        return self._read()

    def _read(self) -> Body:
        use = {
            "type": "tool_use",
            # Unique in a process: a session must not see a tool use id twice.
            "id": f"toolu_read_{next(_tool_ids)}",
            "name": "Read",
            "input": {"file_path": str(self.read)},
        }
        return message(use)
