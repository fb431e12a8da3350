"""``recall --explain``: every number is the lexical selection's own, and a suggestion works.

The numbers are never written down here: each test asks :func:`select_lexical` what it computed
and checks the explanation says the same, so recalibrating the selector cannot make these tests
pass on stale figures.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from memdir import constants as C
from memdir.agent.scan import scan
from memdir.agent.topic import with_bodies
from memdir.faces.projections import cli_json, recall_view
from memdir.model import MemoryHeader
from memdir.recall.explain import Explanation, explain_recall, seen_before
from memdir.recall.lexical import LexicalSelection, select_lexical
from memdir.recall.prefetch import RecallResult, recall
from memdir.recall.select import LexicalSelector, Selection
from memdir.recall.surface import Session


def topic(name: str, description: str | None, type_: str = "project") -> str:
    desc = f"description: {description}\n" if description is not None else ""
    return f"---\nname: {name}\n{desc}type: {type_}\n---\nBody.\n"


FILES = {
    "deploy-staging.md": topic(
        "Staging deploys", "How deploys to the staging cluster work: helm chart and kubectl context"
    ),
    "staging-db.md": topic("Staging database", "Staging database credentials rotate weekly"),
    "ci-cache.md": topic("CI cache", "CI cache keys for the monorepo pipeline"),
    "oncall.md": topic("On-call", "Who is on call this week and how to page them", "reference"),
    "notes.md": topic("notes", None, "user"),
    "release-freeze.md": topic(
        "Release freeze", "版本发布前的代码冻结规则：冻结期间禁止合并到主干"
    ),
    "deploy-checklist.md": topic("部署检查单", "上线前的检查清单"),
}
#: Questions with one file just under the cut: it matches part of the question, not enough.
NEAR_MISSES = [
    "what are the rules for the staging database credentials and deploys?",
    "部署到预发环境要注意什么",
]


@pytest.fixture
def memdir(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    root.mkdir()
    for name, text in FILES.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


def run(
    root: Path,
    query: str,
    paths: Sequence[str],
    session: Session | None = None,
    tools: Sequence[str] = (),
    selector: object = None,
) -> tuple[RecallResult, tuple[Explanation, ...]]:
    session = session if session is not None else Session()
    result = recall(query, root, session, tools, selector=selector or LexicalSelector())  # type: ignore[arg-type]
    scanned = scan(root)
    seen = seen_before(session, scanned, result)
    return result, explain_recall(result, scanned, paths, recent_tools=tools, seen=seen)


def lexical(root: Path, query: str, tools: Sequence[str] = ()) -> LexicalSelection:
    return select_lexical(query, with_bodies(scan(root).candidates), tools, C.SELECT_MAX_FILES)


def near_miss(selection: LexicalSelection) -> str:
    """The best-scoring file left out for scoring under the threshold."""
    return next(m.rel_path for m in selection.considered if m.score < selection.threshold)


def set_description(root: Path, rel_path: str, description: str) -> None:
    path = root / rel_path
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines = [
        f"description: {description}\n" if ln.startswith("description:") else ln for ln in lines
    ]
    path.write_text("".join(lines), encoding="utf-8")


@pytest.mark.parametrize("query", NEAR_MISSES)
def test_numbers_are_the_selections_own(memdir: Path, query: str) -> None:
    selection = lexical(memdir, query)
    paths = [m.rel_path for m in selection.considered]
    result, explanations = run(memdir, query, paths)
    assert result.selector == "lexical"
    assert result.selected == tuple(m.rel_path for m in selection.selected)
    for rank, (match, explanation) in enumerate(
        zip(selection.considered, explanations, strict=True), 1
    ):
        view = explanation.lexical
        assert view is not None and view.exact
        assert view.score == match.score
        assert view.threshold == selection.threshold
        assert view.rank == rank
        assert view.matched == match.matched_terms
        assert f"score {match.score:.2f}" in explanation.lines[1]
        assert f"threshold {selection.threshold:.2f}" in explanation.lines[1]
        selected = any(m.rel_path == match.rel_path for m in selection.selected)
        assert explanation.verdict == ("surfaced" if selected else "not-selected")
        assert (view.cut is None) == selected


def test_words_found_only_in_the_body_are_named(memdir: Path) -> None:
    # The lexical selector reads the head of the body; the agent's own selector does not.
    (memdir / "pager.md").write_text(
        "---\nname: Pager escalation\ndescription: Who gets paged first for an outage\n"
        "type: project\n---\nThe sev1 playbook says: page the backend on-call first.\n",
        encoding="utf-8",
    )
    result, (explanation,) = run(
        memdir, "what does the sev1 playbook say about paging", ["pager.md"]
    )
    assert result.selected == ("pager.md",)
    view = explanation.lexical
    assert view is not None and view.in_body == ("sev1", "playbook", "say")
    assert set(view.matched) - set(view.in_body)  # paging: in the description too
    assert (
        "  only in its body: sev1, playbook, say (the agent's own selector reads names and "
        "descriptions, not bodies)" in explanation.lines
    )
    _, (described,) = run(memdir, "who gets paged first", ["pager.md"])
    assert described.lexical is not None and described.lexical.in_body == ()
    assert not any("only in its body" in line for line in described.lines)


def test_a_file_matched_on_two_body_words_is_told_why(memdir: Path) -> None:
    (memdir / "pager.md").write_text(
        "---\nname: Pager escalation\ndescription: Who gets paged first for an outage\n"
        "type: project\n---\nIn a sev1, follow the sev1 playbook: the playbook says who to "
        "page, and every sev1 gets a review.\n",
        encoding="utf-8",
    )
    result, (explanation,) = run(memdir, "the sev1 playbook", ["pager.md"])
    assert result.selected == ()
    view = explanation.lexical
    assert view is not None and view.in_body == ("sev1", "playbook")
    assert explanation.reason == (
        f"not selected: score {view.score:.2f} clears the threshold {view.threshold:.2f}, but "
        "it matches the question only in its body, on fewer than 3 of its words"
    )


@pytest.mark.parametrize("query", NEAR_MISSES)
def test_a_near_miss_says_so_and_its_suggestion_selects_it(memdir: Path, query: str) -> None:
    selection = lexical(memdir, query)
    path = near_miss(selection)
    score = next(m.score for m in selection.considered if m.rel_path == path)
    assert 0 < score < selection.threshold
    _, (explanation,) = run(memdir, query, [path])
    assert explanation.verdict == "not-selected"
    assert explanation.reason == (
        f"not selected: score {score:.2f} is below the threshold {selection.threshold:.2f}"
    )
    assert explanation.suggestion and explanation.suggestion_selects
    # The missing words are the question's own, in its language.
    assert all(word in query for word in explanation.suggestion)
    assert any("suggestion: add" in line for line in explanation.lines)

    # Round trip: write the suggested words into the description and ask again.
    header = next(h for h in scan(memdir).candidates if h.rel_path == path)
    set_description(memdir, path, f"{header.description} {' '.join(explanation.suggestion)}")
    result, (after,) = run(memdir, query, [path])
    assert path in result.selected
    assert after.verdict == "surfaced"
    assert after.lexical is not None and after.lexical.score >= after.lexical.threshold


def test_the_suggestion_is_short(memdir: Path) -> None:
    # Of the words the file lacks, only those needed are suggested.
    query = NEAR_MISSES[0]
    path = near_miss(lexical(memdir, query))
    _, (explanation,) = run(memdir, query, [path])
    assert explanation.lexical is not None
    assert len(explanation.suggestion) < len(explanation.lexical.missing)
    assert explanation.suggestion == explanation.lexical.missing[: len(explanation.suggestion)]


def test_chinese_question_lacks_chinese_words(memdir: Path) -> None:
    query = NEAR_MISSES[1]
    _, (explanation,) = run(memdir, query, ["deploy-checklist.md"])
    assert explanation.lexical is not None
    assert "部署" in explanation.lexical.matched
    assert "预发环境" in explanation.lexical.missing
    assert "预发环境" in explanation.suggestion


def test_bigrams_of_one_missing_phrase_are_joined(memdir: Path) -> None:
    _, (explanation,) = run(memdir, "监控看板的告警阈值怎么调", ["ci-cache.md"])
    assert explanation.lexical is not None
    # One word per phrase, never the bigram across two words.
    assert all(len(word) >= 2 for word in explanation.lexical.missing)
    assert not any(w in explanation.lexical.missing for w in ("控看", "板的"))


def test_no_description_is_pointed_out(memdir: Path) -> None:
    _, (explanation,) = run(memdir, NEAR_MISSES[0], ["notes.md"])
    assert not explanation.has_description
    assert explanation.lexical is not None and explanation.lexical.score == 0.0
    assert explanation.reason.startswith("not selected: it matched none of the question's words")
    assert any("no description" in line for line in explanation.lines)


def test_already_surfaced_is_seen(memdir: Path) -> None:
    session = Session()
    query = "how do deploys to the staging cluster work?"
    first, (explained,) = run(memdir, query, ["deploy-staging.md"], session)
    assert "deploy-staging.md" in first.selected and explained.verdict == "surfaced"
    _, (again,) = run(memdir, query, ["deploy-staging.md"], session)
    assert again.verdict == "seen"
    assert again.reason == "not surfaced again: already surfaced in this session"
    assert again.lexical is None


def test_top_limit(memdir: Path) -> None:
    root = memdir  # the other files make the Kafka words rare, so the Kafka files score high
    for n in range(C.SELECT_MAX_FILES + 2):
        (root / f"kafka-{n}.md").write_text(
            topic(f"Kafka topic {n}", f"Kafka consumer lag on topic {n}"), encoding="utf-8"
        )
    query = "why is kafka consumer lag growing?"
    selection = lexical(root, query)
    assert len(selection.selected) == C.SELECT_MAX_FILES
    left_out = [m.rel_path for m in selection.considered][C.SELECT_MAX_FILES :]
    assert left_out
    _, explanations = run(root, query, left_out)
    for explanation in explanations:
        assert explanation.verdict == "not-selected"
        assert explanation.lexical is not None and explanation.lexical.cut is not None
        assert f"fill the top {C.SELECT_MAX_FILES}" in explanation.lexical.cut


def test_recently_used_tools_rule(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    root.mkdir()
    (root / "terraform-usage.md").write_text(
        topic("terraform usage", "How to run terraform plan and apply for prod"), encoding="utf-8"
    )
    query = "run terraform apply for prod"
    selection = lexical(root, query, ["terraform"])
    (match,) = selection.considered
    assert match.dropped_reason
    _, (explanation,) = run(root, query, ["terraform-usage.md"], tools=["terraform"])
    assert explanation.lexical is not None and explanation.lexical.dropped_by_tools
    assert explanation.reason == (
        f"not selected: dropped by the recently-used-tools rule ({match.dropped_reason})"
    )
    assert any("warning, gotcha or known issue" in line for line in explanation.lines)


class ChoosingModel:
    """A model selector that picks one file."""

    name = "anthropic"

    def __init__(self, pick: str) -> None:
        self.pick = pick

    async def select(
        self, query: str, headers: Sequence[MemoryHeader], recent_tools: Sequence[str] = ()
    ) -> Selection:
        return Selection((self.pick,), {}, "anthropic", "anthropic", model="claude-test")


def test_model_selector_shows_lexical_as_a_hint(memdir: Path) -> None:
    query = NEAR_MISSES[0]
    selection = lexical(memdir, query)
    _, (chosen, other) = run(
        memdir, query, ["ci-cache.md", "staging-db.md"], selector=ChoosingModel("ci-cache.md")
    )
    assert chosen.verdict == "surfaced"
    assert chosen.reason == "selected by the anthropic selector (claude-test) and surfaced"
    assert other.verdict == "not-selected"
    assert other.reason == "not chosen by the anthropic selector (claude-test)"
    assert other.lexical is not None and not other.lexical.exact
    score = next(m.score for m in selection.considered if m.rel_path == "staging-db.md")
    assert other.lexical.score == score
    assert other.lines[1].startswith("  lexical view (a hint only: the model chose): ")


def test_not_candidates(memdir: Path, tmp_path: Path) -> None:
    (memdir / "MEMORY.md").write_text("- [x](x.md) — y\n", encoding="utf-8")
    (memdir / "readme.txt").write_text("hi\n", encoding="utf-8")
    (memdir / "logs").mkdir()
    (memdir / "logs" / "today.md").write_text(topic("log", "a log"), encoding="utf-8")
    outside = tmp_path / "elsewhere.md"
    outside.write_text(topic("x", "y"), encoding="utf-8")
    asked = ["MEMORY.md", "readme.txt", "logs/today.md", "gone.md", str(outside)]
    _, explanations = run(memdir, NEAR_MISSES[0], asked)
    reasons = {e.path: e.reason for e in explanations}
    assert all(e.verdict == "not-a-candidate" and e.lexical is None for e in explanations)
    assert "the index" in reasons["MEMORY.md"]
    assert "only *.md" in reasons["readme.txt"]
    assert "leaves out 'logs'" in reasons["logs/today.md"]
    assert reasons["gone.md"] == "not a candidate: no such file in the memory dir"
    assert reasons[str(outside)] == "not a candidate: outside the memory dir"


def test_past_the_scan_window(memdir: Path) -> None:
    result = recall(NEAR_MISSES[0], memdir, Session(), selector=LexicalSelector())
    narrow = scan(memdir, limit=2)
    late = narrow.cut_off[0].rel_path
    (explanation,) = explain_recall(result, narrow, [late])
    assert explanation.verdict == "not-a-candidate"
    assert f"past the {C.SCAN_MAX_FILES} newest" in explanation.reason


def test_not_triggered(memdir: Path) -> None:
    result, (explanation,) = run(memdir, "deploys", ["deploy-staging.md"])
    if result.triggered:  # the trigger rule decides; a one-word message may be skipped
        pytest.skip("this trigger rule runs on single words")
    assert explanation.verdict == "not-triggered"
    assert explanation.reason == f"the recall did not run: {result.reason}"
    assert explanation.lexical is not None and not explanation.lexical.exact


def test_json_carries_explanations(memdir: Path) -> None:
    result, explanations = run(memdir, NEAR_MISSES[0], ["staging-db.md"])
    data = cli_json(recall_view(result, explanations))
    (item,) = data["explanations"]
    assert item["path"] == "staging-db.md" and item["verdict"] == "surfaced"
    assert item["lexical"]["score"] == explanations[0].lexical.score  # type: ignore[union-attr]
    assert item["lines"] == list(explanations[0].lines)
    assert cli_json(recall_view(result))["explanations"] == []


@pytest.mark.parametrize(
    "query",
    [
        "can I merge while the trunk is frozen for the app-store release?",
        "how should I version the payments API during the migration?",
        "who is oncall tonight and where are the grafana dashboards?",
        "发布冻结期间可以合并代码吗",
        "数据保留多久",
    ],
)
def test_every_candidate_of_the_examples(query: str) -> None:
    from memhelpers import EXAMPLES

    candidates = with_bodies(scan(EXAMPLES).candidates)
    selection = select_lexical(query, candidates, (), C.SELECT_MAX_FILES)
    scores = {m.rel_path: m.score for m in selection.considered}
    chosen = [m.rel_path for m in selection.selected]
    result, explanations = run(EXAMPLES, query, [h.rel_path for h in candidates])
    assert list(result.selected) == chosen
    for explanation in explanations:
        view = explanation.lexical
        assert view is not None and view.exact
        assert view.score == scores.get(explanation.path, 0.0)
        assert view.threshold == selection.threshold
        assert (explanation.verdict == "surfaced") == (explanation.path in chosen)
        if explanation.path not in chosen:
            assert view.cut is not None and explanation.reason == f"not selected: {view.cut}"
            # Every question word the file lacks is one the question has, as typed.
            assert all(word in query.lower().replace("-", " ") for word in view.missing)


def test_selected_then_left_out(memdir: Path) -> None:
    # The model names a file the agent has read: the recall drops it after the selection.
    session = Session()
    session.mark_read([memdir / "ci-cache.md"])
    result, (explanation,) = run(
        memdir, NEAR_MISSES[0], ["ci-cache.md"], session, selector=ChoosingModel("ci-cache.md")
    )
    assert result.selected == ("ci-cache.md",) and not result.surfaced
    assert explanation.verdict == "selected"
    assert explanation.reason == "selected, then left out: already read or written by the agent"


def test_relative_cut(tmp_path: Path) -> None:
    from memhelpers import generate_memdir

    root = generate_memdir(tmp_path / "memory", 200, invalid_files=False)
    candidates = with_bodies(scan(root).candidates)
    # A file clearing the threshold that the selection still leaves out, the limit aside.
    for header in candidates:
        query = header.description or ""
        selection = select_lexical(query, candidates, (), C.SELECT_MAX_FILES)
        unlimited = select_lexical(query, candidates, (), len(candidates))
        kept = {m.rel_path for m in unlimited.selected}
        cut = [
            m
            for m in selection.considered
            if m.score >= selection.threshold and m.rel_path not in kept and not m.dropped_reason
        ]
        if cut:
            break
    else:
        pytest.skip("no file under the relative cut among these questions")
    match = cut[0]
    _, (explanation,) = run(root, query, [match.rel_path])
    assert explanation.lexical is not None and explanation.lexical.score == match.score
    assert explanation.reason.startswith(
        f"not selected: score {match.score:.2f} clears the threshold "
        f"{selection.threshold:.2f}, but not the relative cut"
    )


def test_not_triggered_hint_is_labelled(memdir: Path) -> None:
    result, (explanation,) = run(memdir, "deploys", ["deploy-staging.md"])
    if result.triggered:
        pytest.skip("this trigger rule runs on single words")
    assert explanation.lines[1].startswith("  lexical view (a hint only: had the recall run): ")


def test_crowded_out(memdir: Path) -> None:
    tails = ["", " and dashboards", ", dashboards and runbooks", ", dashboards, runbooks, pages"]
    for n, tail in enumerate(tails):
        (memdir / f"kafka-{n}.md").write_text(
            topic("Kafka consumer lag", f"Kafka consumer lag alerts{tail}"), encoding="utf-8"
        )
    query = "kafka consumer lag alerts"
    (crowded, *_) = lexical(memdir, query).crowded
    _, (explanation,) = run(memdir, query, [crowded])
    assert explanation.verdict == "not-selected"
    assert explanation.lexical is not None and explanation.lexical.cut is not None
    assert "a question matching that many selects only its best" in explanation.lexical.cut
