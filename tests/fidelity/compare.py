"""memdir against the agent on one scenario: the memory dir's location (and whether memory is on)
and the text path A injects from MEMORY.md, byte for byte.

memdir's side goes through the core API only (``locate_memory_dir``, ``load_index``), called after
the agent ran: the agent creates its memory dir on a first run, which is how a user's machine
looks when memdir finds a long-path directory by its prefix.
"""

from __future__ import annotations

import difflib
import fnmatch
import os
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from fidelity.agent import (
    AgentRun,
    injected_index,
    main_request,
    memory_dir_in_system,
    run_agent,
)
from fidelity.fixtures import Fixture, Scenario
from memdir.index import load_index
from memdir.paths import locate_memory_dir

#: How "memory is off" and "nothing injected" read in a difference.
NO_MEMORY = "(no memory section: auto memory off)"
NOTHING = "(nothing injected)"
#: A difference shows at most this many diff lines (a CRLF file differs on every line).
MAX_DIFF_LINES = 30


@dataclass(frozen=True)
class Difference:
    fixture: str
    #: ``location`` or ``path A``.
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

    injected = injected_index(request)
    agent_text = injected[1] if injected else NOTHING
    if location.enabled and memdir_dir is not None:
        memdir_text = load_index(memdir_dir).load.text or NOTHING
    else:
        memdir_text = NOTHING
    if agent_text != memdir_text:
        differ("path A", agent_text, memdir_text)
    return differences


def check(binary: Path, fixture: Fixture, scratch: Path) -> tuple[AgentRun, list[Difference]]:
    """Build the fixture in ``scratch``, run the agent there, compare memdir with it."""
    scenario = fixture(scratch)
    run = run_agent(binary, home=scenario.home, cwd=scenario.cwd, env_extra=scenario.env)
    return run, compare(scenario, run)


def report(differences: list[Difference]) -> str:
    return "\n\n".join(d.render() for d in differences)
