"""Path B end to end: trigger, dedupe, caps, budget, exact injection, cancellation, non-blocking.

A scripted selector stands in for the model so each rule is pinned down on its own; a few tests run
the real lexical selector on the example directory. Concurrency is driven by asyncio Events,
never by sleeping.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from memdir import constants as C
from memdir.agent.manifest import format_manifest
from memdir.agent.scan import scan
from memdir.config import Settings
from memdir.faces.projections import SurfacedView, cli_json, recall_view
from memdir.model import MemoryHeader
from memdir.recall.prefetch import RecallResult, prefetch, recall, start_prefetch
from memdir.recall.select import LexicalSelector, Selection
from memdir.recall.surface import Session, render_attachment, surface_file, wrap_attachment
from memdir.target import CLAUDE_CODE_2_1_328, SEED, Target
from memhelpers import EXAMPLES

#: Defined here rather than imported from conftest: another conftest.py in a subdirectory would
#: shadow the module name ``conftest`` and break the import.


def topic(name: str, description: str, type_: str = "project", body: str = "Body.\n") -> str:
    return f"---\nname: {name}\ndescription: {description}\ntype: {type_}\n---\n{body}"


NOW = 1_700_100_000.0
MakeDir = Callable[..., Path]
LEXICAL = Settings(selector="lexical")


class Scripted:
    """A selector that picks what the test says, records what it was shown, and can be held."""

    name = "scripted"

    def __init__(
        self,
        pick: Sequence[str] | Callable[[Sequence[MemoryHeader]], Sequence[str]] = (),
        *,
        gate: asyncio.Event | None = None,
        during: Callable[[], None] | None = None,
    ) -> None:
        self.pick = pick
        self.gate = gate
        self.during = during
        self.entered = asyncio.Event()
        self.calls: list[tuple[str, tuple[str, ...], tuple[str, ...]]] = []

    async def select(
        self, query: str, headers: Sequence[MemoryHeader], recent_tools: Sequence[str] = ()
    ) -> Selection:
        self.calls.append((query, tuple(h.rel_path for h in headers), tuple(recent_tools)))
        self.entered.set()
        if self.gate is not None:
            await self.gate.wait()
        if self.during is not None:
            self.during()  # what the agent does while the selector thinks
        chosen = tuple(self.pick(headers) if callable(self.pick) else self.pick)
        return Selection(chosen, {p: "scripted" for p in chosen}, self.name, self.name)

    @property
    def shown(self) -> tuple[str, ...]:
        return self.calls[-1][1]


async def until_entered(selector: Scripted, task: asyncio.Task[RecallResult]) -> None:
    """Wait until ``selector`` is running inside ``task``; if the task ends first, surface why.

    Waiting on the event alone would hang the test run when the prefetch fails early.
    """
    entered = asyncio.ensure_future(selector.entered.wait())
    done, _ = await asyncio.wait({entered, task}, return_when=asyncio.FIRST_COMPLETED)
    if entered not in done:
        entered.cancel()
        task.result()  # re-raises the prefetch's error
        raise AssertionError("the prefetch finished without calling the selector")


def first_unseen(count: int) -> Callable[[Sequence[MemoryHeader]], list[str]]:
    return lambda headers: [h.rel_path for h in headers[:count]]


FILES = {
    "a.md": topic("a", "alpha deploy notes"),
    "b.md": topic("b", "beta review habits", "user"),
    "c.md": topic("c", "gamma gotchas", "feedback"),
    "sub/d.md": topic("d", "delta dashboard", "reference"),
}


async def run(
    root: Path,
    session: Session,
    selector: Scripted,
    query: str = "how do we deploy alpha?",
    **kw: object,
) -> RecallResult:
    return await prefetch(query, root, session, selector=selector, settings=LEXICAL, now=NOW, **kw)  # type: ignore[arg-type]


# --- trigger -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "rule", "triggered"),
    [
        ("how do we deploy alpha?", "multilingual", True),
        ("how do we deploy alpha?", "claude-code", True),
        ("部署流程是什么", "multilingual", True),  # Chinese without spaces: memdir's fix
        ("部署流程是什么", "claude-code", False),  # ... the agent's rule skips it
        ("デプロイの手順を教えて", "multilingual", True),
        ("好的", "multilingual", False),
        ("continue", "multilingual", False),
        ("continue", "claude-code", False),
        ("   ", "multilingual", False),
    ],
)
async def test_trigger_rules(make_dir: MakeDir, query: str, rule: str, triggered: bool) -> None:
    root = make_dir(FILES)
    selector = Scripted(["a.md"])
    result = await run(root, Session(), selector, query, trigger_rule=rule)
    assert result.triggered is triggered
    assert result.reason
    assert bool(selector.calls) is triggered  # no scan, no selector call when not triggered
    if not triggered:
        assert result.surfaced == () and result.attachment == "" and result.candidates == ()


async def test_trigger_rule_defaults_to_the_settings(make_dir: MakeDir) -> None:
    root = make_dir(FILES)
    result = await prefetch(
        "部署流程是什么",
        root,
        Session(),
        selector=Scripted(),
        settings=Settings(trigger="claude-code"),
    )
    assert not result.triggered and "single word" in result.reason


async def test_spent_budget_means_no_prefetch(make_dir: MakeDir) -> None:
    root = make_dir(FILES)
    session = Session(budget_used=C.SESSION_BUDGET_BYTES)
    selector = Scripted(["a.md"])
    result = await run(root, session, selector)
    assert not result.triggered
    assert "budget spent" in result.reason
    assert selector.calls == []
    assert result.budget_left == 0


# --- dedupe ------------------------------------------------------------------------------------


async def test_seed_dedupes_before_selection(make_dir: MakeDir) -> None:
    root = make_dir(FILES)
    session = Session()
    session.mark_read([root / "a.md"])  # the agent read it
    session.mark_surfaced(surface_file(root / "c.md", root, NOW))  # surfaced on an earlier turn
    selector = Scripted(first_unseen(5))
    result = await run(root, session, selector, target=SEED)
    assert set(selector.shown) == {"b.md", "sub/d.md"}
    assert result.manifest == format_manifest(
        h for h in scan(root).candidates if h.rel_path in {"b.md", "sub/d.md"}
    )
    assert [c.rel_path for c in result.candidates] == list(selector.shown)
    before = {d.rel_path: d.reason for d in result.dropped if d.stage == "before-select"}
    assert before == {
        "a.md": "already read or written by the agent",
        "c.md": "already surfaced in this session",
    }
    assert set(result.surfaced_paths) == {"b.md", "sub/d.md"}


async def test_claude_code_shows_every_file_and_drops_seen_ones_after(make_dir: MakeDir) -> None:
    root = make_dir(FILES)
    session = Session()
    session.mark_read([root / "a.md"])
    session.mark_surfaced(surface_file(root / "c.md", root, NOW))
    selector = Scripted(["c.md", "a.md", "b.md"])
    result = await run(root, session, selector, target=CLAUDE_CODE_2_1_328)
    assert result.manifest == format_manifest(scan(root).candidates)
    assert len(result.candidates) == len(FILES)
    # A selector other than the model's has no "do not re-select" rule: it sees new files only.
    assert set(selector.shown) == {"b.md", "sub/d.md"}
    assert [d.stage for d in result.dropped] == ["after-select", "after-select"]
    assert result.surfaced_paths == ("b.md",)


async def test_claude_code_caps_at_five_after_dropping_seen_files(make_dir: MakeDir) -> None:
    root = make_dir({f"m{i}.md": topic(f"m{i}", f"memory {i}") for i in range(7)})
    session = Session()
    session.mark_read([root / "m0.md", root / "m1.md"])
    selector = Scripted([f"m{i}.md" for i in range(7)])
    result = await run(root, session, selector, target=CLAUDE_CODE_2_1_328)
    assert result.surfaced_paths == ("m2.md", "m3.md", "m4.md", "m5.md", "m6.md")


async def test_dedupe_after_selection(make_dir: MakeDir) -> None:
    root = make_dir(FILES)
    session = Session()
    # While the selector is thinking, the agent reads a.md itself.
    selector = Scripted(
        ["a.md", "ghost.md", "b.md", "b.md"], during=lambda: session.mark_read([root / "a.md"])
    )
    result = await run(root, session, selector)
    assert "a.md" in selector.shown
    assert result.selected == ("a.md", "ghost.md", "b.md", "b.md")
    # A name the selector repeats surfaces twice, as in the agent.
    assert result.surfaced_paths == ("b.md", "b.md")
    after = {d.rel_path: d.reason for d in result.dropped if d.stage == "after-select"}
    assert after == {
        "a.md": "already read or written by the agent",
        "ghost.md": "not among the candidates",
    }


@pytest.mark.parametrize("target", [SEED, CLAUDE_CODE_2_1_328], ids=lambda t: t.name)
async def test_second_turn_never_resurfaces(make_dir: MakeDir, target: Target) -> None:
    root = make_dir(FILES)
    session = Session()
    first = await run(root, session, Scripted(["a.md", "b.md"]), target=target)
    assert first.surfaced_paths == ("a.md", "b.md")
    again = Scripted(["a.md", "b.md", "c.md"])
    second = await run(root, session, again, target=target)
    assert "a.md" not in again.shown and "b.md" not in again.shown
    listed = {c.rel_path for c in second.candidates} >= {"a.md", "b.md"}
    assert listed is not target.manifest_excludes_seen
    assert second.surfaced_paths == ("c.md",)


async def test_everything_seen_means_no_selector_call(make_dir: MakeDir) -> None:
    root = make_dir(FILES)
    session = Session()
    session.mark_read(root / rel for rel in FILES)
    selector = Scripted(["a.md"])
    result = await run(root, session, selector)
    assert result.triggered and selector.calls == [] and result.surfaced == ()
    assert result.notes == ("all surfaced or read: no selector call",)
    assert len(result.candidates) == len(FILES)  # the agent's manifest would still list them


async def test_symlinked_alias_counts_as_read(make_dir: MakeDir, tmp_path: Path) -> None:
    root = make_dir(FILES)
    alias = tmp_path / "alias"
    alias.symlink_to(root, target_is_directory=True)
    session = Session()
    session.mark_read([alias / "a.md"])  # the agent read it through another path
    selector = Scripted(first_unseen(5))
    result = await run(root, session, selector)
    assert "a.md" not in selector.shown and "a.md" not in result.surfaced_paths


# --- caps and budget ---------------------------------------------------------------------------


async def test_at_most_five_a_turn(make_dir: MakeDir) -> None:
    root = make_dir({f"m{i}.md": topic(f"m{i}", f"memory {i}") for i in range(8)})
    selector = Scripted(lambda headers: [h.rel_path for h in headers])  # all 8
    result = await run(root, Session(), selector)
    assert len(result.selected) == 8
    assert len(result.surfaced) == C.SELECT_MAX_FILES == 5
    assert result.surfaced_paths == result.selected[:5]
    over = [d for d in result.dropped if d.reason == "over 5 files this turn"]
    assert [d.rel_path for d in over] == list(result.selected[5:])


def big_topic(i: int, size: int) -> str:
    head = topic(f"big{i}", f"big memory {i}", body="")
    return head + ("x" * 99 + "\n") * ((size - len(head)) // 100)


@pytest.mark.parametrize(
    ("target", "counts"),
    [(SEED, [5, 5, 5, 1, 0, 0]), (CLAUDE_CODE_2_1_328, [5, 5, 5, 5, 0, 0])],
    ids=["seed", "claude-code"],
)
async def test_budget_runs_out_across_calls_and_compaction_resets_it(
    make_dir: MakeDir, target: Target, counts: list[int]
) -> None:
    # 25 files of ~4 KB: five a turn is ~20 KB, so the 60 KB budget lasts three turns and a bit.
    root = make_dir({f"big{i:02}.md": big_topic(i, 4000) for i in range(25)})
    session = Session()
    surfaced_so_far: list[str] = []
    results: list[RecallResult] = []

    def new_ones(headers: Sequence[MemoryHeader]) -> list[str]:
        return [h.rel_path for h in headers if not session.seen(h.path)][:5]

    for _turn in range(6):
        result = await run(root, session, Scripted(new_ones), target=target)
        results.append(result)
        surfaced_so_far.extend(result.surfaced_paths)
        assert session.budget_used == sum(
            surface_file(root / p, root, NOW, target).cost for p in surfaced_so_far
        )
        assert result.budget_used == session.budget_used
        assert result.budget_left == max(0, C.SESSION_BUDGET_BYTES - session.budget_used)
    triggered = [r.triggered for r in results]
    # Turns 1-3 surface 5 each (~60,000 < 61,440); turn 4 starts with budget left: the spec's
    # agent stops admitting once it is spent (after one more), 2.1.328 admits the turn's 5.
    # After that the prefetch does not even start.
    assert [len(r.surfaced) for r in results] == counts
    assert triggered == [True, True, True, True, False, False]
    assert [d.reason for d in results[3].dropped if d.stage == "budget"] == [
        "session budget spent"
    ] * (5 - counts[3])
    assert "budget spent" in results[4].reason
    assert session.spent and len(set(surfaced_so_far)) == sum(counts)

    session.compact()
    assert session.budget_used == 0
    again = Scripted(new_ones)
    after = await run(root, session, again, target=target)
    assert after.triggered and len(after.surfaced) == 5
    # Compaction dropped the old attachments: earlier memories are candidates again.
    assert set(again.shown) == {f"big{i:02}.md" for i in range(25)}
    assert set(after.surfaced_paths) & set(surfaced_so_far)


# --- what is injected --------------------------------------------------------------------------


async def test_surfaced_text_is_exactly_surface_file(make_dir: MakeDir) -> None:
    long_body = "".join(f"line {n}\n" for n in range(400))  # over 200 lines: truncated
    root = make_dir({**FILES, "long.md": topic("long", "very long notes", body=long_body)})
    result = await run(root, Session(), Scripted(["long.md", "sub/d.md"]), target=SEED)
    expected = [surface_file(root / p, root, NOW, SEED) for p in ("long.md", "sub/d.md")]
    assert list(result.surfaced) == expected
    assert result.attachment == wrap_attachment(m.text for m in expected)
    assert result.surfaced[0].truncated and not result.surfaced[1].truncated
    assert result.attachment.startswith("<system-reminder>\nMemory (saved ")
    assert f"{root / 'sub/d.md'}:" in result.attachment
    assert recall_view(result).surfaced == tuple(
        SurfacedView(m.rel_path, m.bytes, m.truncated, m.text, m.truncation_note) for m in expected
    )
    note = recall_view(result).surfaced[0].truncation_note
    assert note is not None and note.startswith("> This memory file was truncated (over 200 lines)")


async def test_claude_code_attachment_is_its_system_message(make_dir: MakeDir) -> None:
    root = make_dir(FILES)
    result = await run(root, Session(), Scripted(["sub/d.md", "a.md"]))
    expected = [
        surface_file(root / p, root, NOW, CLAUDE_CODE_2_1_328) for p in ("sub/d.md", "a.md")
    ]
    assert list(result.surfaced) == expected
    assert result.attachment == render_attachment(expected, CLAUDE_CODE_2_1_328)
    d_text, a_text = (root / "sub/d.md").read_text(), (root / "a.md").read_text()
    assert result.attachment == (
        f"{C.RELEVANT_MEMORIES_INTRO}\n\nMemory: {root / 'sub/d.md'}:\n\n{d_text}"
        f"\nMemory: {root / 'a.md'}:\n\n{a_text}"
    )


async def test_unreadable_selected_file_is_skipped(make_dir: MakeDir) -> None:
    root = make_dir(FILES)
    # The file disappears between the scan and the read.
    selector = Scripted(["a.md", "b.md"], during=lambda: (root / "a.md").unlink())
    result = await run(root, Session(), selector)
    assert result.surfaced_paths == ("b.md",)
    assert [(d.rel_path, d.stage) for d in result.dropped] == [("a.md", "read")]


async def test_result_records_everything(make_dir: MakeDir) -> None:
    root = make_dir(FILES)
    selector = Scripted(["sub/d.md"])
    result = await run(root, Session(), selector, recent_tools=["Bash", " ", "Bash", "psql"])
    assert selector.calls[0][2] == ("Bash", "psql")
    assert result.triggered and result.reason
    assert result.selected == ("sub/d.md",)
    assert result.why == {"sub/d.md": "scripted"}
    assert result.selector == result.requested_selector == "scripted"
    assert result.degraded is None
    first = result.candidates[0]
    assert (first.rel_path, first.type, first.description) == (
        "sub/d.md",
        "reference",
        "delta dashboard",
    )
    assert result.timings.total_ms >= result.timings.select_ms >= 0
    payload = cli_json(recall_view(result))
    assert str(payload["candidates"][0]["mtime"]).endswith("Z")
    json.dumps(payload)  # serialisable as is
    assert payload["budget"] == {
        "used": result.budget_used,
        "left": result.budget_left,
        "limit": C.SESSION_BUDGET_BYTES,
        "surfaced_now": result.surfaced_bytes,
    }


# --- real selectors ----------------------------------------------------------------------------


async def test_lexical_on_the_example_directory() -> None:
    session = Session()
    result = await prefetch(
        "can I merge while the trunk is frozen for the app-store release?",
        EXAMPLES,
        session,
        selector=LexicalSelector(),
        settings=LEXICAL,
    )
    assert result.triggered and result.selector == "lexical"
    assert "project-release-freeze.md" in result.selected
    assert set(result.surfaced_paths) <= set(result.selected)
    assert "MEMORY.md" not in [c.rel_path for c in result.candidates]
    assert all(result.why[p].startswith("lexical score") for p in result.selected)


async def test_chinese_question_without_spaces_end_to_end() -> None:
    result = await prefetch(
        "用户行为日志保留多久", EXAMPLES, Session(), selector=LexicalSelector(), settings=LEXICAL
    )
    assert result.triggered
    assert "project-data-retention.md" in result.selected


async def test_default_selector_without_a_key_is_lexical(
    make_dir: MakeDir, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    root = make_dir(FILES)
    result = await prefetch("how do we deploy alpha?", root, Session())
    assert result.selector == "lexical" and result.degraded is None


async def test_unrelated_question_selects_nothing() -> None:
    result = await prefetch(
        "what's the weather in Paris tomorrow?",
        EXAMPLES,
        Session(),
        selector=LexicalSelector(),
        settings=LEXICAL,
    )
    assert result.triggered and result.selected == () and result.attachment == ""


def test_sync_wrapper(make_dir: MakeDir) -> None:
    root = make_dir(FILES)
    session = Session()
    result = recall(
        "how do we deploy alpha?", root, session, selector=Scripted(["a.md"]), settings=LEXICAL
    )
    assert result.surfaced_paths == ("a.md",)
    assert session.seen(root / "a.md")


# --- asynchrony --------------------------------------------------------------------------------


async def test_cancellation_leaves_the_session_untouched(make_dir: MakeDir) -> None:
    root = make_dir(FILES)
    session = Session()
    session.mark_read([root / "c.md"])
    before = session.to_json()
    selector = Scripted(["a.md", "b.md"], gate=asyncio.Event())  # the gate never opens
    task = start_prefetch(
        "how do we deploy alpha?", root, session, selector=selector, settings=LEXICAL
    )
    await until_entered(selector, task)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert task.cancelled()
    assert session.to_json() == before


async def test_caller_is_not_blocked_by_a_slow_selector(make_dir: MakeDir) -> None:
    root = make_dir(FILES)
    session = Session()
    gate = asyncio.Event()
    selector = Scripted(["a.md"], gate=gate)
    task = start_prefetch(
        "how do we deploy alpha?", root, session, selector=selector, settings=LEXICAL
    )
    assert not task.done()  # start_prefetch returned at once

    # The caller's own turn goes on: here, the main model's "tool calls".
    progress: list[str] = []
    await until_entered(selector, task)  # the prefetch is now pending on the selector
    for step in ("tool call 1", "tool call 2"):
        progress.append(await asyncio.to_thread(str.upper, step))
    assert progress == ["TOOL CALL 1", "TOOL CALL 2"]
    assert not task.done() and session.surfaced == {}  # nothing half-recorded while pending

    gate.set()  # the model answers
    result = await task
    assert result.surfaced_paths == ("a.md",)
    assert session.seen(root / "a.md")


async def test_concurrent_prefetches_never_double_surface(make_dir: MakeDir) -> None:
    root = make_dir(FILES)
    session = Session()
    gate = asyncio.Event()
    one = Scripted(["a.md", "b.md"], gate=gate)
    two = Scripted(["b.md", "c.md"], gate=gate)
    first = start_prefetch("deploy alpha now?", root, session, selector=one, settings=LEXICAL)
    second = start_prefetch("review beta please?", root, session, selector=two, settings=LEXICAL)
    await until_entered(one, first)
    await until_entered(two, second)
    gate.set()
    results = await asyncio.gather(first, second)
    surfaced = [p for r in results for p in r.surfaced_paths]
    assert sorted(surfaced) == ["a.md", "b.md", "c.md"]
    assert session.budget_used == sum(m.bytes for r in results for m in r.surfaced)


def test_importing_recall_does_not_import_anthropic() -> None:
    code = (
        "import sys, memdir.recall.prefetch, memdir.recall.select, memdir.faces.cli; "
        "print(sorted(m for m in ('anthropic', 'httpx2', 'httpx') if m in sys.modules))"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC")}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    assert out.stdout.strip() == "[]"


async def test_a_failing_selector_selects_nothing(make_dir: MakeDir) -> None:
    class Broken:
        name = "broken"

        async def select(
            self, query: str, headers: Sequence[MemoryHeader], recent_tools: Sequence[str] = ()
        ) -> Selection:
            raise RuntimeError("index out of\nrange")

    root = make_dir(FILES)
    session = Session()
    result = await prefetch(
        "how do we deploy alpha?", root, session, selector=Broken(), settings=LEXICAL
    )
    assert result.triggered and result.surfaced == ()
    assert result.selector == "none" and result.requested_selector == "broken"
    assert result.degraded == "selector broken failed: RuntimeError: index out of range"
    assert session.to_json() == Session().to_json()


async def test_model_selector_conversation_carries_earlier_turns(make_dir: MakeDir) -> None:
    import anthropic
    import httpx2
    from memdir.recall.select import AnthropicSelector

    root = make_dir(FILES)
    bodies: list[dict[str, object]] = []
    answers = iter(['{"selected_memories": ["a.md"]}', '{"selected_memories": ["a.md", "b.md"]}'])

    def respond(request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        bodies.append(body)
        content = [{"type": "text", "text": next(answers, '{"selected_memories": []}')}]
        document = {"id": "m", "type": "message", "role": "assistant", "model": "x"}
        document |= {"content": content, "stop_reason": "end_turn", "stop_sequence": None}
        document |= {"usage": {"input_tokens": 1, "output_tokens": 1}}
        return httpx2.Response(200, json=document)

    client = anthropic.AsyncAnthropic(
        api_key="sk-test-key-123456",
        base_url="http://anthropic.memdir.test",
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(respond)),
    )
    selector = AnthropicSelector(client=client, target=CLAUDE_CODE_2_1_328)
    session = Session()
    first = await prefetch("how do we deploy alpha?", root, session, selector=selector, now=NOW)
    second = await prefetch("and the beta review?", root, session, selector=selector, now=NOW)
    assert first.surfaced_paths == ("a.md",) and second.surfaced_paths == ("b.md",)
    texts = [[m["content"][0]["text"] for m in b["messages"]] for b in bodies]  # type: ignore[index]
    assert texts[1][1:] == [
        "Select memories relevant to:\nhow do we deploy alpha?",
        '{"selected_memories": ["a.md"]}',
        "Select memories relevant to:\nand the beta review?",
    ]
    assert session.selector_turns == [
        ("how do we deploy alpha?", '{"selected_memories": ["a.md"]}'),
        ("and the beta review?", '{"selected_memories": ["a.md", "b.md"]}'),
    ]
    assert Session.from_json(json.loads(json.dumps(session.to_json()))) == session
    session.compact()  # the agent's selector conversation restarts with compaction
    await prefetch("how do we deploy alpha?", root, session, selector=selector, now=NOW)
    assert len(bodies[2]["messages"]) == 2  # type: ignore[arg-type]
