"""memdir against the real Claude Code CLI, fixture by fixture: the memory dir it uses (or that
memory is off), the exact text path A injects from MEMORY.md and, with the relevance prefetch on,
path B's selector request and surfaced memories.

The CLI runs offline against a recording fake API (tests/fidelity/agent.py). The release is
``MEMDIR_AGENT_VERSION`` (default: the pinned one), installed by scripts/install-claude-code.sh;
without it these tests are skipped. scripts/agent-diff.sh runs the same comparisons and prints
every difference at once.
"""

from __future__ import annotations

import json
import os
import urllib.request
from pathlib import Path

import fidelity.agent
import pytest
from fake_anthropic import FakeAnthropic, message, text
from fidelity.agent import (
    MAX_TOOL_ROUNDS,
    PINNED_VERSION,
    SELECTOR_PROMPT_START,
    SELECTOR_QUERY_PREFIX,
    SURFACED_INTRO,
    AgentRun,
    PathBLoop,
    all_surfaced,
    injected_index,
    is_selector_request,
    main_request,
    memory_dir_in_system,
    memory_section,
    selector_query,
    selector_requests,
    surfaced_in,
    surfaced_memories,
)
from fidelity.compare import check, render_messages, report, system_prompt_text
from fidelity.fixtures import FIXTURES

VERSION = os.environ.get("MEMDIR_AGENT_VERSION") or PINNED_VERSION


@pytest.mark.parametrize("name", list(FIXTURES))
def test_memdir_matches_the_agent(name: str, claude_code: Path, tmp_path: Path) -> None:
    fixture = FIXTURES[name]
    run, differences = check(claude_code, fixture, tmp_path)
    assert run.returncode == 0, f"the agent failed ({run.returncode}):\n{run.stderr[-2000:]}"
    if fixture.known is not None:
        # Kept on purpose; if the agent stops differing, the fixture and the docs must change.
        assert differences, f"{name!r} no longer differs: drop its known difference and docs"
        pytest.xfail(f"known difference: {fixture.known}")
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


# --- path B: the selector's request, the surfaced memories, the scripted loop ------------------

_SELECTOR_SYSTEM = f"{SELECTOR_PROMPT_START} as it processes a user's query.\n"
_QUERY = "how do I merge?"
_ATTACHMENT = f"{SURFACED_INTRO} — use only if it applies.\n\nMemory: /m/a.md:\n\nbody\n"


def _selector(system: object = None, query: str = _QUERY) -> dict[str, object]:
    billing = {"type": "text", "text": "x-anthropic-billing-header: cc_version=0;"}
    prompt = {"type": "text", "text": _SELECTOR_SYSTEM, "cache_control": {"type": "ephemeral"}}
    ask = {"type": "text", "text": f"{SELECTOR_QUERY_PREFIX}{query}"}
    return {
        "model": "claude-sonnet-5-5",
        "system": [billing, prompt] if system is None else system,
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Available memories:\nx"}]},
            {"role": "user", "content": [ask]},
        ],
    }


def _main(*messages: dict[str, object], query: str = _QUERY) -> dict[str, object]:
    user = {"role": "user", "content": [{"type": "text", "text": query}]}
    return {"tools": [{"name": "Read"}], "messages": [user, *messages]}


def _read_round() -> list[dict[str, object]]:
    use = {"type": "tool_use", "id": "t1", "name": "Read", "input": {}}
    result = {"type": "tool_result", "tool_use_id": "t1", "content": "x"}
    return [{"role": "assistant", "content": [use]}, {"role": "user", "content": [result]}]


def _system_message(value: str) -> dict[str, object]:
    return {"role": "system", "content": [{"type": "text", "text": value}]}


def test_a_selector_request_is_told_apart_by_its_prompt() -> None:
    assert is_selector_request(_selector())
    assert is_selector_request(_selector(system=_SELECTOR_SYSTEM))
    assert not is_selector_request(_main())
    assert not is_selector_request({"system": [{"type": "text", "text": "You are Claude Code"}]})
    assert not is_selector_request({"messages": []})
    assert system_prompt_text(_selector()) == _SELECTOR_SYSTEM
    assert system_prompt_text(_selector(system=_SELECTOR_SYSTEM)) == _SELECTOR_SYSTEM
    assert selector_query(_selector()) == _QUERY


def test_surfaced_memories_are_the_system_messages_with_the_intro() -> None:
    env = _system_message("# Environment\nlinux")
    request = _main(env, *_read_round(), _system_message(_ATTACHMENT))
    assert surfaced_in(request) == _ATTACHMENT
    assert surfaced_in(_main(env, *_read_round())) is None
    run = AgentRun((_main(env), _selector(), request), ("/v1/messages",) * 3, "", "", returncode=0)
    assert surfaced_memories(run) == _ATTACHMENT
    assert selector_requests(run) == [_selector()]
    assert selector_requests(run, "another message") == []


def test_a_later_turn_surfaces_what_its_requests_add() -> None:
    # The agent merges adjacent system messages with a newline: one holds both turns'.
    later = _ATTACHMENT.replace("a.md", "b.md")
    first, then = _main(), _main(*_read_round(), _system_message(_ATTACHMENT))
    second_turn = "and the database?"
    merged = _system_message(f"{_ATTACHMENT}\n{later}")
    opening = _main(*_read_round(), _system_message(_ATTACHMENT), query=second_turn)
    after = _main(*_read_round(), merged, query=second_turn)
    assert all_surfaced(after) == [_ATTACHMENT, later]
    requests = (first, then, opening, after)
    run = AgentRun(requests, ("/v1/messages",) * 4, "", "", returncode=0)
    assert surfaced_memories(run, second_turn) == later
    assert surfaced_memories(run, _QUERY) == _ATTACHMENT


def test_memories_in_a_tool_result_read_as_the_system_message_form() -> None:
    # Other main models get each memory in a system reminder appended to the tool result.
    first, second = _ATTACHMENT.rstrip("\n"), "Memory: /m/b.md:\n\nsecond"
    reminders = ["<total_tokens>9 tokens left</total_tokens>", first, second]
    result = "1\tx\n" + "".join(
        f"\n\n<system-reminder>\n{r}\n</system-reminder>" for r in reminders
    )
    block = {"type": "tool_result", "tool_use_id": "t1", "content": result}
    request = _main({"role": "user", "content": [block]})
    assert all_surfaced(request) == [f"{first}\n{second}"]


def _reply_kind(reply: dict[str, object]) -> str:
    content = reply["content"]
    assert isinstance(content, list)
    return str(content[0]["type"])


def test_the_path_b_loop_reads_until_the_memories_arrive() -> None:
    answer = '{"selected_memories": ["a.md"]}'
    loop = PathBLoop({_QUERY: answer}, Path("/p/notes.txt"))
    # The selector gets the scripted answer for its query; with it given, nothing waits.
    assert loop(_selector())["content"] == [{"type": "text", "text": answer}]
    assert "[]" in str(loop(_selector(query="unscripted"))["content"])
    first = loop(_main())
    assert first["stop_reason"] == "tool_use"
    assert first["content"][0]["input"] == {"file_path": "/p/notes.txt"}
    # No memories after a round: Read again (a new id each time), at most MAX_TOOL_ROUNDS.
    again = loop(_main(*_read_round()))
    assert _reply_kind(again) == "tool_use"
    assert again["content"][0]["id"] != first["content"][0]["id"]
    for _ in range(MAX_TOOL_ROUNDS - 2):
        assert _reply_kind(loop(_main(*_read_round()))) == "tool_use"
    assert _reply_kind(loop(_main(*_read_round()))) == "text"
    # Side requests (titles and the like) get a text.
    assert _reply_kind(loop({"messages": []})) == "text"


def test_the_path_b_loop_ends_the_turn_once_the_memories_arrive() -> None:
    loop = PathBLoop({_QUERY: "{}"}, Path("/p/notes.txt"))
    loop(_selector())
    assert _reply_kind(loop(_main())) == "tool_use"
    assert _reply_kind(loop(_main(*_read_round(), _system_message(_ATTACHMENT)))) == "text"


def test_when_no_selector_request_comes_the_loop_runs_one_round(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The session budget may stop a message that would prefetch: the wait is bounded.
    monkeypatch.setattr(fidelity.agent, "HOLD_SELECTOR_SECONDS", 0.0)
    loop = PathBLoop({_QUERY: "{}"}, Path("/p/notes.txt"))
    assert _reply_kind(loop(_main())) == "tool_use"
    assert _reply_kind(loop(_main(*_read_round()))) == "text"


def test_without_a_selector_the_loop_runs_one_round() -> None:
    # A single word does not prefetch: the first round does not wait for a selector.
    loop = PathBLoop({"hello": "{}"}, Path("/p/notes.txt"))
    assert _reply_kind(loop(_main(query="hello"))) == "tool_use"
    assert _reply_kind(loop(_main(*_read_round(), query="hello"))) == "text"


def test_messages_render_as_lines_with_their_block_metadata() -> None:
    cache = {"type": "ephemeral"}
    blocks = [
        {"role": "user", "content": [{"type": "text", "text": "a\nb", "cache_control": cache}]}
    ]
    assert render_messages(blocks) == (
        '== message 1 · user · block 1 · text · cache_control {"type": "ephemeral"}\na\nb'
    )
    assert render_messages([{"role": "user", "content": "a\nb"}]) == (
        "== message 1 · user · content is a string\na\nb"
    )


def test_the_fake_answers_by_its_responder_once_the_script_is_empty() -> None:
    fake = FakeAnthropic.shared()
    fake.reset(message(text("scripted")), responder=lambda body: message(text(body["model"])))

    def ask(model: str) -> object:
        request = urllib.request.Request(
            f"{fake.url}/v1/messages",
            data=json.dumps({"model": model, "messages": []}).encode(),
            headers={"content-type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.load(response)["content"][0]["text"]

    try:
        assert [ask("m1"), ask("m2"), ask("m3")] == ["scripted", "m2", "m3"]
        fake.reset()
        assert ask("m4") == "Nothing to save."
    finally:
        fake.reset()
