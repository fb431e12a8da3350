"""memdir against the real Claude Code CLI, fixture by fixture: the memory dir it uses (or that
memory is off) and the exact text path A injects from MEMORY.md.

The CLI runs offline against a recording fake API (tests/fidelity/agent.py). The release is
``MEMDIR_AGENT_VERSION`` (default: the pinned one), installed by scripts/install-claude-code.sh;
without it these tests are skipped. scripts/agent-diff.sh runs the same comparisons and prints
every difference at once.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from fidelity.agent import (
    PINNED_VERSION,
    AgentRun,
    agent_binary,
    injected_index,
    main_request,
    memory_dir_in_system,
    memory_section,
)
from fidelity.compare import check, report
from fidelity.fixtures import FIXTURES

VERSION = os.environ.get("MEMDIR_AGENT_VERSION") or PINNED_VERSION


@pytest.fixture(scope="module")
def binary() -> Path:
    path = agent_binary(VERSION)
    if not path.exists():
        pytest.skip(
            f"Claude Code {VERSION} is not installed ({path}): "
            f"run `bash scripts/install-claude-code.sh {VERSION}` (needs npm)"
        )
    return path


@pytest.mark.parametrize("name", list(FIXTURES))
def test_memdir_matches_the_agent(name: str, binary: Path, tmp_path: Path) -> None:
    fixture = FIXTURES[name]
    run, differences = check(binary, fixture, tmp_path)
    assert run.returncode == 0, f"the agent failed ({run.returncode}):\n{run.stderr[-2000:]}"
    if differences:
        pytest.fail(
            f"memdir differs from Claude Code {VERSION} on {name!r} ({fixture.what}):\n"
            + report(differences),
            pytrace=False,
        )


# --- the extractors, on requests shaped like the agent's (no agent needed) ---------------------

_DIR = "/home/u/.claude/projects/-repo/memory"
_RULES = f"# Memory\n\nYou have a persistent file-based memory at `{_DIR}/`. Rules.\n"


def _request(*reminders: str, system: str = _RULES) -> dict[str, object]:
    blocks = [
        {"type": "text", "text": f"<system-reminder>\n{r}\n</system-reminder>"} for r in reminders
    ]
    return {
        "system": [{"type": "text", "text": "# Harness\n"}, {"type": "text", "text": system}],
        "messages": [{"role": "user", "content": [*blocks, {"type": "text", "text": "hi"}]}],
    }


def _section(path: str, kind: str, text: str) -> str:
    return f"Contents of {path} ({kind}):\n\n{text}"


_INDEX = _section(
    f"{_DIR}/MEMORY.md", "user's auto-memory, persists across conversations", "- [A](a.md)\n\nx"
)


@pytest.mark.parametrize(
    "context",
    [
        _INDEX,
        # CLAUDE.md files come first; a section after the index would end it too.
        "\n\n".join([_section("/r/CLAUDE.md", "project instructions", "# rules"), _INDEX]),
        "\n\n".join([_INDEX, _section("/r/CLAUDE.local.md", "private project notes", "n")]),
    ],
)
def test_injected_index_is_the_text_of_its_section(context: str) -> None:
    request = _request(context)
    assert injected_index(request) == (f"{_DIR}/MEMORY.md", "- [A](a.md)\n\nx")
    assert memory_dir_in_system(request) == _DIR
    assert memory_section(request) == _RULES.rstrip()


def test_no_memory_section_and_nothing_injected() -> None:
    request = _request("# gitStatus\nclean", system="# Environment\n")
    assert injected_index(request) is None
    assert memory_dir_in_system(request) is None
    assert memory_section(request) is None


def test_a_run_without_a_main_request_says_why() -> None:
    run = AgentRun((), (), stdout="", stderr="Invalid API key", returncode=1)
    with pytest.raises(AssertionError, match="Invalid API key"):
        main_request(run)
