"""memdir against the agent on one scenario: the memory dir's location (and whether memory is on)
and the text path A injects from MEMORY.md, byte for byte; on path B scenarios, instead of path A,
the selector's request and the memories surfaced.

memdir's side goes through the core API only (``locate_memory_dir``, ``load_index``), called after
the agent ran: the agent creates its memory dir on a first run, which is how a user's machine
looks when memdir finds a long-path directory by its prefix. Path B's side is ``memdir recall``
run as a user runs it, its selector pointed at a second recording fake that gives the same scripted
answer, so what is compared is the request on the wire.
"""

from __future__ import annotations

import difflib
import fnmatch
import json
import os
import re
import subprocess
import sys
import threading
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fake_anthropic import Body, FakeAnthropic, message, text
from fidelity.agent import (
    AgentRun,
    PathBLoop,
    injected_index,
    main_request,
    memory_dir_in_system,
    memory_section,
    run_agent,
    selector_requests,
    surfaced_memories,
    switch_path_b_on,
)
from fidelity.fixtures import Fixture, PathB, Scenario
from memdir import constants as C
from memdir.agent.index import load_index, render_entry
from memdir.agent.paths import locate_memory_dir
from memdir.extract.prompt import build_system_prompt

#: How "memory is off" and "nothing injected" read in a difference.
NO_MEMORY = "(no memory section: auto memory off)"
NOTHING = "(nothing injected)"
#: A difference shows at most this many diff lines (a CRLF file differs on every line).
MAX_DIFF_LINES = 30


@dataclass(frozen=True)
class Difference:
    fixture: str
    #: ``location``, ``path A``, ``path A off in B mode`` or ``path B …``.
    aspect: str
    agent: str
    memdir: str

    def render(self) -> str:
        """A readable block: one-line values side by side, texts as a unified diff."""
        head = f"--- {self.fixture}: {self.aspect}"
        if "\n" not in self.agent + self.memdir and max(len(self.agent), len(self.memdir)) < 300:
            # Strings that differ only in Unicode normalisation look alike: spell them out.
            alike = _nfc(self.agent) == _nfc(self.memdir)
            shown = ascii if alike else visible
            return f"{head}\n  agent:  {shown(self.agent)}\n  memdir: {shown(self.memdir)}"
        diff = difflib.unified_diff(
            [visible(line) + "\n" for line in self.agent.split("\n")],
            [visible(line) + "\n" for line in self.memdir.split("\n")],
            "agent",
            "memdir",
            n=2,
        )
        lines = [_clip(line) for line in diff]
        if len(lines) > MAX_DIFF_LINES:
            more = len(lines) - MAX_DIFF_LINES
            lines = [*lines[:MAX_DIFF_LINES], f"… {more} more diff lines\n"]
        return head + "\n" + "".join(lines).rstrip("\n")


def visible(text: str) -> str:
    """Control, format and separator characters spelled out, so a diff shows them."""
    return "".join(
        repr(ch)[1:-1] if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") else ch
        for ch in text
    )


def _nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def _clip(line: str, width: int = 240) -> str:
    return line if len(line) <= width else line[: width - 1] + "…\n"


def _same_dir(agent_dir: str, memdir_dir: Path, cwd: Path) -> bool:
    # A relative dir (CLAUDE_CONFIG_DIR relative, or ~ which the agent does not expand) is the
    # agent's cwd's; memdir names it absolute.
    return os.path.realpath(os.path.join(cwd, agent_dir)) == os.path.realpath(memdir_dir)


def compare(scenario: Scenario, run: AgentRun) -> list[Difference]:
    request = main_request(run)
    location = locate_memory_dir(scenario.cwd, env=scenario.env, home=scenario.home)
    agent_dir = memory_dir_in_system(request)
    differences: list[Difference] = []

    def differ(aspect: str, agent: str, memdir: str) -> None:
        differences.append(Difference(scenario.name, aspect, agent, memdir))

    memdir_dir = location.memory_dir
    if not location.enabled:
        memdir_where = f"(disabled) {memdir_dir}"
    elif memdir_dir is None:
        memdir_where = f"(no directory matches {location.prefix_pattern})"
    else:
        memdir_where = str(memdir_dir)
    if agent_dir is None:
        if location.enabled:
            differ("location", NO_MEMORY, memdir_where)
    elif not location.enabled:
        differ("location", agent_dir, memdir_where)
    elif memdir_dir is None:
        pattern = location.prefix_pattern or ""
        if not fnmatch.fnmatchcase(Path(agent_dir).parent.name, pattern):
            differ("location", agent_dir, memdir_where)
    elif not _same_dir(agent_dir, memdir_dir, scenario.cwd):
        differ("location", agent_dir, memdir_where)

    if scenario.rules:
        agent_rules = rule_facts(memory_section(request) or "")
        memdir_rules = memdir_rule_facts(index_mode=scenario.path_b is None)
        if agent_rules != memdir_rules:
            differ("memory rules", agent_rules, memdir_rules)
    injected = injected_index(request)
    agent_text = injected[1] if injected else NOTHING
    if scenario.path_b is not None:
        # With path B on the agent injects no index; memdir has no observable for that (its
        # recall_mode setting only changes lint severities and the extraction prompt).
        if injected is not None:
            differ("path A off in B mode", agent_text, NOTHING)
        differences.extend(compare_path_b(scenario, scenario.path_b, run))
        return differences
    if location.enabled and memdir_dir is not None:
        memdir_text = load_index(memdir_dir).load.text or NOTHING
    else:
        memdir_text = NOTHING
    if agent_text != memdir_text:
        differ("path A", agent_text, memdir_text)
    return differences


# --- memory rules -------------------------------------------------------------------------------

_FENCED = re.compile(r"```markdown\n(.*?)```", re.DOTALL)
_TEMPLATE_KEY = re.compile(r"^( *)([A-Za-z_]+):(.*)$")
_SIZE_RULE = re.compile(r"under (\d+) ?KB")


def _template(lines: list[str]) -> tuple[list[str], list[str]]:
    """The key paths of a frontmatter template (``metadata.type``) and the types it names."""
    keys: list[str] = []
    types: list[str] = []
    parent = ""
    inside = False
    for line in lines:
        if line.strip() == "---":
            if inside:
                break
            inside = True
            continue
        match = _TEMPLATE_KEY.match(line) if inside else None
        if match is None:
            continue
        indent, key, value = match.groups()
        path = f"{parent}.{key}" if indent and parent else key
        parent = key if not indent else parent
        keys.append(path)
        if key == "type":
            types = re.findall(r"[a-z]+", value)
    return keys, types


def _facts(template: list[str], text: str, index_line: bool) -> str:
    keys, types = _template(template)
    size = _SIZE_RULE.search(text)
    return "\n".join(
        [
            f"frontmatter keys: {', '.join(keys) or '(none)'}",
            f"types: {' '.join(types) or '(none)'}",
            f"index line taught: {index_line}",
            f"size limit: {size.group(1) + ' KB' if size else '(none)'}",
            f"[[name]] links: {'[[' in text}",
        ]
    )


def rule_facts(rules: str) -> str:
    """What memdir relies on in the agent's memory rules, one fact per line: the frontmatter
    layout and types it teaches, whether it keeps MEMORY.md, the size rule, ``[[name]]`` links."""
    fenced = _FENCED.search(rules)
    block = fenced.group(1) if fenced else rules
    return _facts(block.split("\n"), rules, render_entry("Title", "file.md", "hook") in rules)


def memdir_rule_facts(*, index_mode: bool) -> str:
    """The same facts of memdir's extraction prompt (memdir writes the index lines itself, so
    "index line taught" means that memdir maintains MEMORY.md in that mode)."""
    prompt = build_system_prompt("", index_mode=index_mode, max_turns=C.EXTRACTION_MAX_TURNS)
    lines = [line.removeprefix("  ") for line in prompt.split("\n")]
    return _facts(lines, prompt, index_mode)


# --- path B --------------------------------------------------------------------------------------

#: How "no selector request" and "nothing surfaced" read in a difference.
NO_REQUEST = "(no selector request)"
NOTHING_SURFACED = "(nothing surfaced)"
#: The parts of the selector request compared, besides the system prompt.
REQUEST_KEYS = ("model", "max_tokens", "output_config", "messages")


@dataclass(frozen=True)
class MemdirRecall:
    """``memdir recall`` on a path B scenario: what it printed and the selector request it sent."""

    #: stdout: the attachment exactly as injected, empty when nothing surfaces.
    attachment: str
    request: Body | None
    #: The summary on stderr (it says why recall did not trigger).
    stderr: str

    @property
    def not_triggered(self) -> str | None:
        for line in self.stderr.splitlines():
            if line.startswith("-- not triggered: "):
                return line.removeprefix("-- ")
        return None


_memdir_fake: FakeAnthropic | None = None
_memdir_running = threading.Lock()


def memdir_recall(scenario: Scenario, setup: PathB) -> MemdirRecall:
    """Run ``memdir recall`` as a user would (default target, the agent's trigger rule), its
    model selector answered by a recording fake with the agent's scripted answer; earlier turns
    first, with a session file kept across them."""
    global _memdir_fake
    if _memdir_fake is None:
        _memdir_fake = FakeAnthropic()
    fake = _memdir_fake
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(scenario.home),
        "ANTHROPIC_BASE_URL": fake.url,
        "ANTHROPIC_API_KEY": "sk-ant-test-dummy",
    }
    session = scenario.home / "memdir-session.json"
    recalled: MemdirRecall | None = None
    for prompt, answer in [*setup.earlier, (scenario.prompt, setup.answer)]:
        command = [sys.executable, "-m", "memdir", "recall", prompt]
        command += ["--dir", str(setup.memory_dir), "--selector", "anthropic"]
        command += ["--trigger", "claude-code", "--session", str(session)]
        if setup.read.is_relative_to(setup.memory_dir):
            # The agent's tool rounds Read this memory: memdir is told it was read.
            command += ["--mark-read", str(setup.read.relative_to(setup.memory_dir))]
        with _memdir_running:
            fake.reset(responder=lambda _body, answer=answer: message(text(answer)))
            proc = subprocess.run(command, env=env, capture_output=True, timeout=60, check=False)
            requests = [
                body
                for path, body in zip(fake.paths, fake.requests, strict=True)
                if path.split("?", 1)[0] == "/v1/messages"
            ]
        stderr = proc.stderr.decode("utf-8", "replace")
        if proc.returncode != 0:
            raise AssertionError(f"memdir recall failed ({proc.returncode}):\n{stderr[-2000:]}")
        recalled = MemdirRecall(
            proc.stdout.decode("utf-8"), requests[0] if requests else None, stderr
        )
    assert recalled is not None
    return recalled


def system_prompt_text(request: Body) -> str:
    """The selector's own prompt: the system string, or its last block (the agent's first block
    is a billing header)."""
    system: Any = request.get("system", "")
    if isinstance(system, str):
        return system
    return str(system[-1].get("text", "")) if system else ""


def _json(value: object) -> str:
    return json.dumps(value, indent=1, ensure_ascii=False, sort_keys=True)


def render_messages(messages: object) -> str:
    """Messages as readable text: a line per message and block (role, type, cache_control),
    then the text itself, so a manifest difference shows as lines, not one long JSON string."""
    if not isinstance(messages, list):
        return _json(messages)
    out: list[str] = []
    for number, msg in enumerate(messages, 1):
        content = msg.get("content") if isinstance(msg, dict) else msg
        role = msg.get("role") if isinstance(msg, dict) else "?"
        if isinstance(content, str):
            out += [f"== message {number} · {role} · content is a string", content]
            continue
        for index, block in enumerate(content if isinstance(content, list) else [content], 1):
            if not isinstance(block, dict) or set(block) - {"type", "text", "cache_control"}:
                out += [f"== message {number} · {role} · block {index}", _json(block)]
                continue
            cache = block.get("cache_control")
            extra = f" · cache_control {json.dumps(cache)}" if cache is not None else ""
            kind = block.get("type")
            out += [f"== message {number} · {role} · block {index} · {kind}{extra}", block["text"]]
    return "\n".join(out)


def compare_path_b(scenario: Scenario, setup: PathB, run: AgentRun) -> list[Difference]:
    """The selector's request (system prompt, messages with the manifest, model, max_tokens,
    output format) and the surfaced memories' text, byte for byte."""
    differences: list[Difference] = []

    def differ(aspect: str, agent: str, memdir: str) -> None:
        differences.append(Difference(scenario.name, aspect, agent, memdir))

    ours = memdir_recall(scenario, setup)
    asked = selector_requests(run, scenario.prompt)
    agent_request = asked[0] if asked else None
    sent = "(selector request sent)"
    if (agent_request is None) != (ours.request is None):
        memdir_said = sent if ours.request is not None else f"{NO_REQUEST}: {ours.not_triggered}"
        differ("path B trigger", sent if asked else NO_REQUEST, memdir_said)
    if agent_request is not None and ours.request is not None:
        agent_system = system_prompt_text(agent_request)
        memdir_system = system_prompt_text(ours.request)
        if agent_system != memdir_system:
            differ("path B selector system", agent_system, memdir_system)
        for key in REQUEST_KEYS:
            theirs, mine = agent_request.get(key), ours.request.get(key)
            if _json(theirs) == _json(mine):
                continue
            shown_theirs, shown_mine = _json(theirs), _json(mine)
            if key == "messages" and render_messages(theirs) != render_messages(mine):
                shown_theirs, shown_mine = render_messages(theirs), render_messages(mine)
            differ(f"path B selector {key}", shown_theirs, shown_mine)
    agent_text = surfaced_memories(run, scenario.prompt) or NOTHING_SURFACED
    memdir_text = ours.attachment or NOTHING_SURFACED
    if agent_text != memdir_text:
        differ("path B surfaced", agent_text, memdir_text)
    return differences


def run_scenario(binary: Path, scenario: Scenario) -> AgentRun:
    """Run the agent on a scenario: one turn, or on path B the scenario's earlier turns and its
    own in one session, scripted as path B turns."""
    setup = scenario.path_b
    if setup is None:
        return run_agent(binary, home=scenario.home, cwd=scenario.cwd, env_extra=scenario.env)
    turns = dict([*setup.earlier, (scenario.prompt, setup.answer)])
    if setup.flag:
        switch_path_b_on(scenario.home)
    return run_agent(
        binary,
        home=scenario.home,
        cwd=scenario.cwd,
        env_extra=scenario.env,
        prompt=list(turns),
        responder=PathBLoop(turns, setup.read),
    )


def check(binary: Path, fixture: Fixture, scratch: Path) -> tuple[AgentRun, list[Difference]]:
    """Build the fixture in ``scratch``, run the agent there, compare memdir with it."""
    scenario = fixture(scratch)
    run = run_scenario(binary, scenario)
    return run, compare(scenario, run)


def report(differences: list[Difference]) -> str:
    return "\n\n".join(d.render() for d in differences)
