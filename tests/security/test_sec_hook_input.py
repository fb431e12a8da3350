"""Issue 26, the hook's stdin: read with a cap, the prompt cut to a bound before the trigger and
the selector see it, and input that is not the hook's JSON (not UTF-8, not JSON, nested too
deep, endless) fails open: nothing printed, exit 0, one escaped line in the log."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

import pytest
from memdir import constants as C
from memdir.config import Settings
from memdir.faces import hook
from memdir.model import MemoryHeader
from memdir.recall.prefetch import bound_query
from memdir.recall.select import LexicalSelector, Selection
from sec_hook_support import DEPLOY_BODY, DEPLOY_PROMPT, Scratch

#: Address space for a hook run: ample for memdir and a capped stdin, far below what the whole
#: pipeline took on an uncapped 10 MB prompt (about 1 GB).
HOOK_MEMORY = 600 << 20
TEN_MB = 10 * 1024 * 1024


def huge_prompt() -> str:
    """10 MB of pasted log, with the question at its start and its end."""
    filler = "2026-01-01 INFO request served in 3 ms by worker seven\n" * (TEN_MB // 55)
    return f"{DEPLOY_PROMPT}\n{filler}{DEPLOY_PROMPT}"


def test_a_10_mb_prompt_is_answered_with_bounded_memory(tmp_path: Path) -> None:
    scratch = Scratch(tmp_path)
    done = scratch.run(scratch.stdin(huge_prompt()), memory_limit=HOOK_MEMORY)
    assert DEPLOY_BODY.strip() in scratch.context(done)
    assert scratch.log_lines() == []


class CountingSelector(LexicalSelector):
    """The offline selector, noting the length of every query it is given."""

    lengths: ClassVar[list[int]] = []

    def select_now(
        self, query: str, headers: Sequence[MemoryHeader], recent_tools: Sequence[str] = ()
    ) -> Selection:
        self.lengths.append(len(query))
        return super().select_now(query, headers, recent_tools)


def test_the_selector_gets_at_most_query_max_chars(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scratch = Scratch(tmp_path)
    CountingSelector.lengths = []

    def counting(settings: Settings, **_: object) -> CountingSelector:
        return CountingSelector()

    monkeypatch.setattr(hook, "selector_from_settings", counting)
    outcome = hook.user_prompt_submit(
        scratch.stdin(huge_prompt()), env={}, home=scratch.home, now=1_700_000_000.0
    )
    assert outcome.result is not None and outcome.output is not None
    assert CountingSelector.lengths and max(CountingSelector.lengths) <= C.QUERY_MAX_CHARS
    assert len(outcome.result.query) <= C.QUERY_MAX_CHARS
    # Both ends of the prompt are kept: the question may stand before or after the paste.
    assert outcome.result.query.startswith(DEPLOY_PROMPT)
    assert outcome.result.query.endswith(DEPLOY_PROMPT)


def test_bound_query_keeps_short_queries_whole() -> None:
    assert bound_query("how do I deploy?") == "how do I deploy?"
    cut = bound_query("a" * 100 + "b" * 100, limit=51)
    assert len(cut) == 51 and cut.startswith("a" * 24) and cut.endswith("b" * 24)


def test_stdin_over_the_cap_is_refused_unread(tmp_path: Path) -> None:
    scratch = Scratch(tmp_path)
    stdin = scratch.stdin("deploy " * ((hook.INPUT_MAX_BYTES // 7) + 10))
    assert len(stdin) > hook.INPUT_MAX_BYTES
    done = scratch.run(stdin)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    [line] = scratch.log_lines()
    assert f"over {hook.INPUT_MAX_BYTES:,} bytes" in line


def test_endless_stdin_is_not_read_to_its_end(tmp_path: Path) -> None:
    scratch = Scratch(tmp_path)
    with open("/dev/zero", "rb") as endless:
        done = scratch.run(stdin_file=endless, memory_limit=HOOK_MEMORY)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    [line] = scratch.log_lines()
    assert "over" in line and "\x00" not in line


@pytest.mark.parametrize(
    "stdin",
    [
        b"\xff\xfe{}",
        b"not json\n\x1b[31mred",
        b"[" * 100_000 + b"]" * 100_000,
        json.dumps(
            {"session_id": "s", "prompt": "p", "cwd": "/", "hook_event_name": "X\nY"}
        ).encode(),
        json.dumps({"session_id": 7, "prompt": "p", "cwd": "/"}).encode(),
    ],
    ids=["not-utf8", "not-json", "nested", "other-event", "bad-field"],
)
def test_bad_input_fails_open_with_one_escaped_log_line(tmp_path: Path, stdin: bytes) -> None:
    scratch = Scratch(tmp_path)
    done = scratch.run(stdin)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    [line] = scratch.log_lines()
    assert "\x1b" not in line and "error:" not in line  # a reason, not a crash
