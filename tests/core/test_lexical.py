"""The offline lexical selector: multilingual matching, threshold, tools rule, determinism."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from memdir.recall import lexical, lexical_vocab
from memdir.recall.lexical import (
    LexicalSelection,
    cache_info,
    clear_caches,
    explain_query,
    select_lexical,
    tokenize,
)
from memhelpers import load_recall_eval


@dataclass(frozen=True)
class Item:
    rel_path: str
    name: str | None
    description: str | None
    type: str | None
    body: str | None = None


MEMORIES = [
    Item(
        "deploy/staging.md",
        "Staging deploys",
        "Staging deploys go out automatically on every merge to main; the staging database is "
        "reset nightly",
        "project",
    ),
    Item(
        "deploy/production.md",
        "生产环境发布流程",
        "生产环境发布要在 #release 频道申请，只在周二和周四上午窗口，由值班工程师手动触发同步",
        "project",
    ),
    Item(
        "feedback/testing-real-db.md",
        "Integration tests hit a real database",
        "Integration tests must hit a real Postgres, never mock the database layer",
        "feedback",
    ),
    Item(
        "feedback/testing-style.md",
        "单元测试写法",
        "单元测试用 pytest 普通函数加 fixture，不要写 unittest.TestCase 类",
        "feedback",
    ),
    Item(
        "reference/grafana.md",
        "Grafana 监控看板",
        "监控看板在 Grafana：pay-overview 是支付总览，告警也在那里配置",
        "reference",
    ),
    Item(
        "tools/ruff-usage.md",
        "ruff usage",
        "How we run ruff: `ruff check --fix` then `ruff format`; config lives in pyproject.toml",
        "reference",
    ),
    Item(
        "tools/ruff-gotchas.md",
        "ruff gotchas",
        "ruff gotcha: run check --fix before format, never enable black alongside ruff format",
        "feedback",
    ),
    Item(
        "tools/linear-mcp.md",
        "Linear MCP server",
        "Linear MCP server: search issues with team key PAY, create issues with labels",
        "reference",
    ),
    Item(
        "tools/linear-mcp-known-issues.md",
        "Linear MCP 已知问题",
        "Linear MCP 已知问题：search 最多返回 50 条且不分页，别用它统计数量",
        "reference",
    ),
    Item(
        "reference/linear.md",
        "Linear project",
        "Bugs and feature work are tracked in Linear, team PAY",
        "reference",
    ),
    Item(
        "tools/bash-conventions.md",
        "Shell conventions",
        "Run Python via `uv run`, use `just` recipes for common tasks",
        "reference",
    ),
    Item(
        "tools/bash-warnings.md",
        "Bash 注意事项",
        "不要在仓库根目录跑 `docker compose down -v`，会删掉本地数据库的数据卷",
        "feedback",
    ),
    Item(
        "team/tokyo.md",
        "東京チーム",
        "東京チームはモバイルアプリのUIを担当",
        "reference",
    ),
    Item("user_role.md", "User role", "Backend lead on the payments team", "user"),
]


def paths(selection: LexicalSelection) -> list[str]:
    return [m.rel_path for m in selection.selected]


# --- multilingual matching -------------------------------------------------------------------
def test_chinese_question_without_spaces_finds_chinese_memory() -> None:
    assert paths(select_lexical("单元测试怎么写比较好", MEMORIES)) == ["feedback/testing-style.md"]
    assert paths(select_lexical("监控看板在哪", MEMORIES)) == ["reference/grafana.md"]


def test_chinese_question_reaches_english_memory_through_synonyms() -> None:
    selection = select_lexical("预发环境的数据库每天都会被清空吗", MEMORIES)
    assert paths(selection)[0] == "deploy/staging.md"
    assert any("→" in term for term in selection.selected[0].matched_terms)


def test_english_question_reaches_chinese_memory_through_synonyms() -> None:
    selection = select_lexical("when can I deploy to production?", MEMORIES)
    assert paths(selection) == ["deploy/production.md"]
    assert "production→生产" in selection.selected[0].matched_terms


def test_japanese_question_reaches_chinese_and_japanese_memories() -> None:
    assert paths(select_lexical("本番へのデプロイはいつできますか", MEMORIES)) == [
        "deploy/production.md"
    ]
    # Simplified 东京 meets Japanese 東京 through the character fold.
    assert "team/tokyo.md" in paths(select_lexical("东京团队负责什么", MEMORIES))


def test_mixed_script_tokenisation() -> None:
    assert tokenize("ruff的配置") == ["ruff", "配置"]
    assert tokenize("Deploying ＡＰＩ docs") == ["deploy", "api", "doc"]
    # Function words cut Han runs; bigrams overlap inside a piece.
    assert tokenize("监控看板在哪里") == ["监控", "控看", "看板"]
    assert tokenize("デプロイの手順") == ["デプロイ", "手順"]
    assert tokenize("PRs") == ["pr"]
    assert paths(select_lexical("ruff的配置怎么写", MEMORIES))[0] == "tools/ruff-usage.md"


def test_matched_terms_join_bigrams_back_into_the_typed_phrase() -> None:
    selection = select_lexical("上线要怎么手动触发", MEMORIES)
    assert selection.selected[0].rel_path == "deploy/production.md"
    assert "手动触发" in selection.selected[0].matched_terms
    # Two words of one synonym group (监控, 看板) are one idea, counted once.
    assert select_lexical("监控看板", MEMORIES).selected[0].matched_terms == ("监控",)


@pytest.mark.parametrize(
    "query",
    [
        "what's the weather in Paris",
        "今天午饭吃什么",
        "帮我写一首关于春天的诗",
        "recommend a good sci-fi novel",
        "今日の天気は？",
        # A generic noun of code (函数, function) matches testing-style's "普通函数", but says
        # nothing about which memory would help.
        "把这个函数重命名一下",
        "rename this function",
    ],
)
def test_unrelated_question_selects_nothing(query: str) -> None:
    assert select_lexical(query, MEMORIES).selected == ()


# --- vocabulary ------------------------------------------------------------------------------
VOCAB_MEMORIES = [
    Item(
        "deploy/rollback.md",
        "Rollback steps",
        "Roll back with Argo CD to the previous version; migrations are not reverted",
        "project",
    ),
    Item("project/release.md", "发版节奏", "每两周周三发版，周一切发布分支", "project"),
    Item(
        "reference/postmortems.md",
        "事故复盘",
        "线上事故一周内在 Notion 写复盘，列出教训和改进项",
        "reference",
    ),
    Item("feedback/pr-size.md", "PR 大小", "PR 要小：改动超过 400 行先拆分再提交评审", "feedback"),
    Item(
        "deploy/staging.md",
        "Staging deploys",
        "Staging deploys go out on every merge; the staging database is reset nightly",
        "project",
    ),
    *MEMORIES,
]


@pytest.mark.parametrize(
    ("query", "expected", "route"),
    [
        # Everyday English words for the word a memory uses, and across languages.
        ("回滚到上一个版本", "deploy/rollback.md", "回滚→rollback"),
        ("when do we cut the next release?", "project/release.md", "release→发版"),
        ("where are the postmortems?", "reference/postmortems.md", "postmortems→复盘"),
        ("is this PR too big?", "feedback/pr-size.md", "too big→大小"),
        ("staging 的数据每天都会清空吗", "deploy/staging.md", "清空→reset"),
        ("东京团队谁负责UI", "team/tokyo.md", "负责→担当"),
        ("集成测试能用假的数据库吗", "feedback/testing-real-db.md", "假的→mock"),
    ],
)
def test_vocabulary_bridges_everyday_words_and_languages(
    query: str, expected: str, route: str
) -> None:
    selection = select_lexical(query, VOCAB_MEMORIES)
    assert paths(selection)[:1] == [expected]
    assert route in selection.selected[0].matched_terms


def test_compound_cjk_words_are_one_idea() -> None:
    # 预发环境 is "staging", not "staging" plus "environment": a memory about environments
    # in general must not gain from it, and the question has one idea, not two.
    concepts = explain_query("预发环境的数据")
    assert [c.surface for c in concepts] == ["预发环境", "数据"]
    assert "staging" in {alt.surface for alt, _ in concepts[0].alternatives}
    assert [c.surface for c in explain_query("生产环境")] == ["生产环境"]


def test_question_word_phrases_match_only_through_their_translations() -> None:
    # 怎么用 ("how to use") is recognised as "usage"; what is left of it after its question
    # word, 用, is a character in half of all Chinese text and must not match by itself.
    (concept,) = explain_query("怎么用")
    assert "usage" in {alt.surface for alt, _ in concept.alternatives}
    assert all(len(token) > 1 for alt, _ in concept.alternatives for token in alt.tokens)
    only_yong = [Item("notes/run.md", "跑测试", "用 pytest 跑", "reference")]
    assert select_lexical("怎么用", only_yong).considered == ()
    usage = select_lexical("ruff怎么用", MEMORIES)
    assert paths(usage)[0] == "tools/ruff-usage.md"
    assert "怎么用→usage" in usage.selected[0].matched_terms


def test_request_words_and_generic_nouns_are_weak_in_every_form() -> None:
    weights = {c.surface: c.weight for c in explain_query("adding running changes")}
    assert weights == dict.fromkeys(("adding", "running", "changes"), lexical.WEAK_WEIGHT)
    for query in ("函数 部署", "function deploy"):
        weights = [c.weight for c in explain_query(query)]
        assert weights == [lexical.WEAK_WEIGHT, 1.0], query


def test_numbers_cost_little_when_missing_and_count_when_matched() -> None:
    concepts = {c.surface: c for c in explain_query("PR 482")}
    assert concepts["482"].weight == 1.0
    assert concepts["482"].charge == lexical.WEAK_WEIGHT * lexical.UNMATCHED_CHARGE
    assert concepts["pr"].charge == lexical.UNMATCHED_CHARGE
    # A PR number no memory has barely lowers the PR memory's score...
    with_number = select_lexical("PR 482 too big", VOCAB_MEMORIES).selected[0]
    without = select_lexical("PR too big", VOCAB_MEMORIES).selected[0]
    assert with_number.rel_path == without.rel_path == "feedback/pr-size.md"
    assert with_number.score > 0.85 * without.score
    # ... while a number a memory has decides between two otherwise equal memories.
    postgres = [
        Item(
            "project/pg-upgrade.md", "Postgres upgrade", "Postgres 14 to 16 in October", "project"
        ),
        Item("project/pg-tuning.md", "Postgres tuning", "Postgres memory settings", "project"),
    ]
    assert paths(select_lexical("postgres 16", postgres)) == ["project/pg-upgrade.md"]


def test_a_kind_of_tool_finds_the_tool_but_not_the_other_way() -> None:
    selection = select_lexical("how do I run the linter", MEMORIES)
    assert paths(selection)[0] == "tools/ruff-usage.md"
    assert "linter→ruff" in selection.selected[0].matched_terms
    lint_only = Item("project/ci.md", "CI", "CI runs lint and tests on every PR", "project")
    assert [m.rel_path for m in select_lexical("ruff", [lint_only, *MEMORIES]).considered] == [
        "tools/ruff-usage.md",
        "tools/ruff-gotchas.md",
    ]


def test_a_typed_tool_is_not_counted_again_through_its_kind() -> None:
    alembic = tuple(tokenize("alembic"))
    concepts = {c.surface: c for c in explain_query("alembic 迁移")}
    assert alembic not in {alt.tokens for alt, _ in concepts["迁移"].alternatives}
    assert alembic in {alt.tokens for alt, _ in explain_query("迁移")[0].alternatives}


# --- indexing --------------------------------------------------------------------------------
def test_batched_indexing_matches_one_memory_at_a_time() -> None:
    """Unseen memories are cut and stemmed together; none may lose or gain a token to a
    neighbour, so selecting over them indexed in one batch or one by one gives the same."""
    texts = (
        "Deploying PRs to staging",
        "",
        "ruff的配置 and MRs",
        "a\0b deploys",  # a NUL, the batch's own separator, in a text
        "東京チームはモバイルアプリのUIを担当",
        "pytest 的坑：xdist 并行时共享的数据库会串数据",
        "ＡＰＩ docs",
        "the of and",
    )
    items = [Item(f"notes/n{i}.md", text, texts[-1 - i], None) for i, text in enumerate(texts)]
    queries = ["deploy PRs to staging", "ruff 配置 MR", "東京 UI 担当", "xdist 数据库", "API docs"]

    clear_caches()
    for item in items:
        select_lexical("deploy", [item])
    assert cache_info().indexed == len(items)
    alone = [select_lexical(q, items) for q in queries]
    assert cache_info().indexed == len(items)  # every memory came from the cache

    clear_caches()
    assert [select_lexical(q, items) for q in queries] == alone
    assert all(selection.considered for selection in alone)
    assert tokenize("Deploying PRs to staging") == ["deploy", "pr", "stage"]
    assert tokenize("a\0b deploys") == ["deploy"]
    assert tokenize("ruff的配置 and MRs") == ["ruff", "配置", "mr"]


def test_full_caches_are_emptied_without_losing_the_call(monkeypatch: pytest.MonkeyPatch) -> None:
    expected = select_lexical("how do we deploy to staging", MEMORIES)
    monkeypatch.setattr(lexical, "_STEM_CACHE_SIZE", 3)
    monkeypatch.setattr(lexical, "_DOCUMENT_CACHE_SIZE", 4)
    clear_caches()
    select_lexical("how do we deploy to staging", MEMORIES[:3])
    # Now both caches are full while this call has both cached and unseen entries.
    assert select_lexical("how do we deploy to staging", MEMORIES) == expected
    assert select_lexical("how do we deploy to staging", MEMORIES) == expected


def test_selection_from_many_threads_with_full_caches(monkeypatch: pytest.MonkeyPatch) -> None:
    # Recall runs the selector in worker threads; a cache one thread empties must not break
    # another thread's call.
    queries = ["how do we deploy to staging", "单元测试怎么写比较好", "ruff format gotcha"]
    expected = {q: select_lexical(q, MEMORIES) for q in queries}
    monkeypatch.setattr(lexical, "_STEM_CACHE_SIZE", 2)
    monkeypatch.setattr(lexical, "_DOCUMENT_CACHE_SIZE", 3)

    def run(n: int) -> bool:
        query = queries[n % len(queries)]
        return select_lexical(query, MEMORIES[n % 5 :]) == select_lexical(query, MEMORIES[n % 5 :])

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads often enough to interleave inside a call
    try:
        with ThreadPoolExecutor(max_workers=6) as pool:
            assert all(pool.map(run, range(120)))
    finally:
        sys.setswitchinterval(interval)
    assert all(select_lexical(q, MEMORIES) == expected[q] for q in queries)


def test_documents_are_cached_by_content() -> None:
    clear_caches()
    assert cache_info() == lexical.CacheInfo(documents=0, indexed=0)
    item = Item("notes/deploy.md", "Deploy", "How we deploy", "project")
    first = select_lexical("deploy", [item])
    assert cache_info().indexed == 1
    # The same memory again, even as an equal but new object: its indexed form is reused.
    again = Item("notes/deploy.md", "Deploy", "How we deploy", "project")
    assert select_lexical("deploy", [again]) == first
    assert cache_info().indexed == 1
    edited = Item("notes/deploy.md", "Deploy", "How we deploy to staging", "project")
    select_lexical("deploy", [edited])
    assert cache_info() == lexical.CacheInfo(documents=2, indexed=2)
    clear_caches()
    assert select_lexical("deploy", [item]) == first
    assert cache_info() == lexical.CacheInfo(documents=1, indexed=1)


# --- the body's head ----------------------------------------------------------------------------
def _with_body(item: Item, body: str | None) -> Item:
    return Item(item.rel_path, item.name, item.description, item.type, body)


#: A memory whose description says what it is about but not the word a question uses for it.
PAGER = Item(
    "project/pager.md",
    "Pager escalation",
    "Who gets paged first for a payments outage",
    "project",
    "Page the on-call backend engineer first; after 15 minutes escalate to Dana.\n\n"
    "**Why:** the Sev1 playbook says so.\n\n**How to apply:** raise it in the incident channel.",
)


def test_a_body_word_finds_a_memory_its_description_does_not_name() -> None:
    query = "what does the sev1 playbook say"
    assert paths(select_lexical(query, [*MEMORIES, _with_body(PAGER, "")])) == []
    assert paths(select_lexical(query, [*MEMORIES, PAGER])) == ["project/pager.md"]
    # None (not read) and "" (read, empty) are the same: no body words.
    unread = select_lexical(query, [*MEMORIES, _with_body(PAGER, None)])
    assert unread == select_lexical(query, [*MEMORIES, _with_body(PAGER, "")])


def test_a_file_matched_only_in_its_body_needs_three_of_the_questions_words() -> None:
    # One or two common words ("good", "button") are in many bodies: not enough on their own.
    few = select_lexical("is the sev1 playbook any good", [*MEMORIES, PAGER])
    assert "project/pager.md" in [m.rel_path for m in few.considered]
    assert paths(few) == [] and few.body_only == ("project/pager.md",)
    assert lexical.BODY_ONLY_CONCEPTS == 3
    enough = select_lexical("does the sev1 playbook escalate to dana", [*MEMORIES, PAGER])
    assert paths(enough) == ["project/pager.md"] and enough.body_only == ()
    # One word in its name or description, and the body may add the rest.
    described = select_lexical("who gets paged in a sev1", [*MEMORIES, PAGER])
    assert paths(described) == ["project/pager.md"]
    # Chinese words alike: two in the body alone are not enough, three are.
    zh = Item(
        "project/pager-zh.md",
        "Pager",
        "Who gets paged first",
        "project",
        "故障手册：先呼叫后端值班，故障手册放在共享盘。故障手册每季度更新。",
    )
    assert select_lexical("故障手册", [*MEMORIES, zh]).body_only == ("project/pager-zh.md",)
    assert paths(select_lexical("故障手册在哪个共享盘", [*MEMORIES, zh])) == ["project/pager-zh.md"]
    # A one-character word is looked up in the text, and in the body's only when it is there.
    lock = Item(
        "project/pager-zh.md",
        "Pager",
        "Who gets paged first",
        "project",
        "上线前先加锁；锁由值班持有，锁要及时释放。",
    )
    assert select_lexical("锁", [*MEMORIES, lock]).body_only == ("project/pager-zh.md",)


def test_the_description_outweighs_the_body() -> None:
    described = Item("a/flaky.md", "Flaky suites", "Quarantine flaky suites", "feedback", "")
    mentioned = Item(
        "b/ci.md", "CI runners", "Self-hosted CI runners", "reference", "Retries hide flaky suites."
    )
    selection = select_lexical("flaky suites", [described, mentioned])
    assert [m.rel_path for m in selection.considered] == ["a/flaky.md", "b/ci.md"]
    assert paths(selection) == ["a/flaky.md"]


def test_the_labels_every_body_carries_are_not_words() -> None:
    labelled = _with_body(MEMORIES[0], "**Why:** nightly reset.\n**How to apply:** re-seed.")
    selection = select_lexical("apply", [*MEMORIES[1:], labelled])
    assert all(m.rel_path != labelled.rel_path for m in selection.considered)


# --- limits, edge cases, determinism ---------------------------------------------------------
def test_at_most_limit_files() -> None:
    many = [
        Item(f"deploy/note-{i:02d}.md", f"Deploy note {i}", "How we deploy to staging", "project")
        for i in range(12)
    ]
    assert len(select_lexical("how do we deploy to staging", many).selected) == 5
    assert len(select_lexical("how do we deploy to staging", many, limit=2).selected) == 2
    assert select_lexical("how do we deploy to staging", many, limit=0).selected == ()
    # Every candidate scoring above 0 is still reported for diagnostics.
    assert len(select_lexical("how do we deploy to staging", many).considered) == 12


@pytest.mark.parametrize("query", ["", "   ", "\n", "the of and", "的了吗"])
def test_empty_or_stopword_query_selects_nothing(query: str) -> None:
    selection = select_lexical(query, MEMORIES)
    assert selection.selected == () and selection.considered == ()


def test_no_candidates() -> None:
    assert select_lexical("deploy to staging", []) == LexicalSelection((), (), lexical.MIN_SCORE)


def test_missing_fields_are_tolerated() -> None:
    items = [Item("notes/deploy-staging.md", None, None, None), Item("x.md", None, None, "bogus")]
    assert paths(select_lexical("deploy staging", items)) == ["notes/deploy-staging.md"]


def test_ties_are_broken_by_path_and_input_order_does_not_matter() -> None:
    twins = [
        Item(f"{c}/deploy.md", "Deploy", "How we deploy to staging", "project") for c in "dbca"
    ]
    expected = ["a/deploy.md", "b/deploy.md", "c/deploy.md", "d/deploy.md"]
    assert paths(select_lexical("deploy to staging", twins)) == expected
    shuffled = list(MEMORIES)
    random.Random(7).shuffle(shuffled)
    for query in ("ruff format gotcha", "单元测试", "deploy production"):
        assert select_lexical(query, shuffled) == select_lexical(query, MEMORIES)


def test_scores_are_sorted_and_threshold_is_respected() -> None:
    selection = select_lexical("how do we deploy to staging", MEMORIES)
    scores = [m.score for m in selection.considered]
    assert scores == sorted(scores, reverse=True)
    assert all(m.score >= selection.threshold for m in selection.selected)
    assert all(m.score > 0 for m in selection.considered)


DOCKER_MEMORIES = [
    Item(
        "tools/docker-local-stack.md",
        "Local Docker stack",
        "Local stack: `docker compose up -d db redis`; the app itself runs outside Docker",
        "reference",
    ),
    Item(
        "tools/bash-warnings.md",
        "Bash 注意事项",
        "不要在仓库根目录跑 `docker compose down -v`，会删掉本地开发数据库的数据卷",
        "feedback",
    ),
    Item(
        "project/redis-session-incident.md",
        "Redis eviction incident",
        "March outage: Redis allkeys-lru eviction dropped session keys",
        "project",
    ),
    Item("user_role.md", "User role", "Backend lead on the payments team", "user"),
]


def test_second_file_sharing_the_best_files_topic_needs_a_lower_share() -> None:
    # bash-warnings scores between SHARED_CUT and RELATIVE_CUT of the best file, and matches
    # its strongest concept (docker): kept.
    selection = select_lexical("restart the local docker containers", DOCKER_MEMORIES)
    best, second = selection.considered[0], selection.considered[1]
    assert second.rel_path == "tools/bash-warnings.md"
    assert lexical.SHARED_CUT * best.score <= second.score < lexical.RELATIVE_CUT * best.score
    assert paths(selection) == ["tools/docker-local-stack.md", "tools/bash-warnings.md"]
    assert selection.threshold == round(lexical.SHARED_CUT * best.score, 6)
    # The Redis incident scores in the same band but only matches "redis", not the best
    # file's strongest concept: left out.
    selection = select_lexical("docker redis setup", DOCKER_MEMORIES)
    scores = {m.rel_path: m.score for m in selection.considered}
    top = scores["tools/docker-local-stack.md"]
    incident = scores["project/redis-session-incident.md"]
    assert lexical.SHARED_CUT * top <= incident < lexical.RELATIVE_CUT * top
    assert paths(selection) == ["tools/docker-local-stack.md"]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("能不能直接推到远程分支", "feedback/no-push.md"),  # 推到: push, not only 推送
        ("出问题了先看什么", "reference/runbooks.md"),  # 出问题: incident, 故障
        ("服务挂了先看哪里", "reference/runbooks.md"),  # 挂了: outage
    ],
)
def test_everyday_chinese_variants_of_synonyms(query: str, expected: str) -> None:
    items = [
        Item(
            "feedback/no-push.md",
            "不要自己推送",
            "不要自己 git push 或强推；由用户决定何时推送",
            "feedback",
        ),
        Item("reference/runbooks.md", "故障处理手册", "故障处理手册在 Notion", "reference"),
        *MEMORIES,
    ]
    assert paths(select_lexical(query, items)) == [expected]


# --- recently used tools (spec 6.4) ----------------------------------------------------------
def test_tools_rule_drops_usage_doc_and_keeps_gotcha() -> None:
    selection = select_lexical("ruff format keeps reordering imports", MEMORIES, ["ruff"])
    assert "tools/ruff-usage.md" not in paths(selection)
    assert "tools/ruff-gotchas.md" in paths(selection)
    dropped = {m.rel_path: m.dropped_reason for m in selection.considered}
    assert dropped["tools/ruff-usage.md"] == "recently used tool 'ruff': plain usage doc"
    assert dropped["tools/ruff-gotchas.md"] is None
    # Without the tool in use, the usage doc is a normal candidate.
    assert "tools/ruff-usage.md" in paths(select_lexical("ruff format usage", MEMORIES))


def test_tools_rule_for_mcp_tools_spares_the_project_reference() -> None:
    selection = select_lexical("search Linear issues", MEMORIES, ["mcp__linear__search"])
    reasons = {m.rel_path: m.dropped_reason for m in selection.considered}
    assert reasons["tools/linear-mcp.md"] is not None
    assert reasons["tools/linear-mcp-known-issues.md"] is None  # 已知问题 = known issues
    assert reasons["reference/linear.md"] is None  # about Linear the tracker, not the MCP tool
    # claude.ai connectors name the server "claude_ai_<System>": only <System> identifies it.
    connector = select_lexical("search Linear issues", MEMORIES, ["mcp__claude_ai_Linear__search"])
    assert {m.rel_path for m in connector.considered if m.dropped_reason} == {"tools/linear-mcp.md"}


def test_tools_rule_understands_bash_and_chinese_warnings() -> None:
    selection = select_lexical("shell just recipes docker compose", MEMORIES, ["Bash"])
    reasons = {m.rel_path: m.dropped_reason for m in selection.considered}
    assert reasons["tools/bash-conventions.md"] is not None
    assert reasons["tools/bash-warnings.md"] is None  # 注意 / 不要


NEXT_STEP_MEMORIES = [
    Item(
        "tools/terraform-gotchas.md",
        "terraform gotchas",
        "terraform pitfall: never apply a plan older than the lock; the state bucket is shared",
        "feedback",
    ),
    Item("tools/terraform.md", "terraform usage", "How we run terraform plan and apply", None),
    Item(
        "tools/docker-build.md",
        "docker 注意事项",
        "docker 注意：镜像只能推到内网 registry，不要推到 Docker Hub",
        "feedback",
    ),
    Item("tools/docker-usage.md", "docker 用法", "docker build 和 docker compose 的常用命令", None),
    Item(
        "deploy/production.md",
        "Production deploys",
        "Production deploys only on Tuesday and Thursday mornings",
        "project",
    ),
]


@pytest.mark.parametrize(
    ("query", "tool", "expected"),
    [
        ("looks fine, apply it to prod", "terraform", "tools/terraform-gotchas.md"),
        ("好了，推到仓库吧", "docker", "tools/docker-build.md"),
    ],
)
def test_a_tool_just_used_brings_its_warnings_to_a_next_step_question(
    query: str, tool: str, expected: str
) -> None:
    # The question does not name the tool: its warnings are selected on the rule alone...
    selection = select_lexical(query, NEXT_STEP_MEMORIES, [tool])
    assert expected in paths(selection)
    match = next(m for m in selection.selected if m.rel_path == expected)
    assert f"{tool} (recently used)" in match.matched_terms
    # ... its plain usage doc stays dropped, and without the tool in use nothing of it comes.
    assert not {"tools/terraform.md", "tools/docker-usage.md"} & set(paths(selection))
    assert expected not in paths(select_lexical(query, NEXT_STEP_MEMORIES))


def test_the_tool_rule_does_not_push_out_what_the_question_asked_for() -> None:
    # The production note the question's words found stays beside the tool's warning.
    selection = select_lexical("looks fine, apply it to prod", NEXT_STEP_MEMORIES, ["terraform"])
    assert set(paths(selection)) == {"tools/terraform-gotchas.md", "deploy/production.md"}


def test_general_purpose_tools_raise_only_warnings_the_question_matches() -> None:
    # Bash runs nearly every turn: its warnings are not selected for any question at all...
    selection = select_lexical("looks fine, apply it to prod", MEMORIES, ["Bash"])
    assert "tools/bash-warnings.md" not in {m.rel_path for m in selection.considered}
    # ... but one the question matches ranks higher than without it.
    query = "restart the local docker containers"
    plain = {m.rel_path: m.score for m in select_lexical(query, MEMORIES).considered}
    used = {m.rel_path: m.score for m in select_lexical(query, MEMORIES, ["Bash"]).considered}
    assert used["tools/bash-warnings.md"] == pytest.approx(
        plain["tools/bash-warnings.md"] + lexical.GENERIC_TOOL_BONUS
    )


# --- the synonym table -----------------------------------------------------------------------
def test_synonym_groups_never_merge_by_accident() -> None:
    """Stemming can fold two surfaces into one key ("localization" -> "local"), and a word read
    as another line's word is offered that line's translations; only the overlaps listed here
    are intended."""
    groups = lexical_vocab.SYNONYM_GROUPS
    shared: set[str] = set()
    for group in groups:
        line = set(group) | {tool for s in group for tool in lexical_vocab.NARROWER.get(s, ())}
        for surface in group:
            # Every surface, even one of function words only (まとめ is hiragana, 多少个 a
            # question word), is read as one idea with the words it stands for.
            concepts = explain_query(surface)
            assert len(concepts) == 1 and concepts[0].alternatives, surface
            if {alt.surface for alt, _ in concepts[0].alternatives} - line:
                shared.add(surface)
    assert shared == {"单测", "ship", "发布"}


def test_module_import_does_not_load_the_stemmer() -> None:
    code = "import sys, memdir.recall.lexical; print('Stemmer' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# --- the benchmark ---------------------------------------------------------------------------
def test_benchmark_quality_does_not_regress() -> None:
    """Floors a little under the measured figures (see benchmarks/recall_eval.py)."""
    report = load_recall_eval().evaluate(systems=["lexical"], timing=False)
    assert report["memories"] >= 50 and report["queries"] >= 100
    lex = report["systems"]["lexical"]
    floors = {  # slice: (recall, precision); en and zh at the 0.9 / 0.7 and more
        "all": (0.92, 0.81),
        "en": (0.90, 0.82),
        "zh": (0.93, 0.82),
        "mixed": (0.95, 0.81),
        "ja": (0.93, 0.77),
        "split:test": (0.87, 0.87),
        "split:fresh2": (0.96, 0.84),
    }
    for key, (recall, precision) in floors.items():
        assert lex[key]["recall"] >= recall, (key, lex[key])
        assert lex[key]["precision"] >= precision, (key, lex[key])
    assert round(lex["all"]["unrelated_empty"] * lex["all"]["unrelated"]) >= 37
    baseline = load_recall_eval().evaluate(systems=["bm25-whitespace+skip"], timing=False)
    assert lex["zh"]["recall"] > baseline["systems"]["bm25-whitespace+skip"]["zh"]["recall"] + 0.5


def _lexical_on(sets: str) -> dict[str, Any]:
    """The lexical selector's figures on ``recall_eval.CORPORA`` or ``.SEALED``, combined."""
    recall_eval = load_recall_eval()
    reports = [
        recall_eval.evaluate(
            systems=["lexical"],
            queries=[q for path in files for q in recall_eval.load_queries(path)],
            candidates=recall_eval.load_candidates(directory),
            timing=False,
        )
        for directory, files in getattr(recall_eval, sets)
    ]
    lexical: dict[str, Any] = recall_eval.combine(reports)["systems"]["lexical"]
    return lexical


def _assert_floors(lex: dict[str, Any], floors: dict[str, tuple[float, float, float]]) -> None:
    """Each slice's (recall, precision, unrelated questions selecting nothing) at its floor."""
    for key, (recall, precision, rejected) in floors.items():
        assert lex[key]["recall"] >= recall, (key, lex[key])
        assert lex[key]["precision"] >= precision, (key, lex[key])
        assert (lex[key]["unrelated_empty"] or 0.0) >= rejected, (key, lex[key])


def test_benchmark_quality_on_every_development_set() -> None:
    """Floors a little under the figures measured on all the default sets of both directories
    together (issue 16's calibration; docs/performance.md#recall)."""
    lex = _lexical_on("CORPORA")
    floors = {  # slice: (recall, precision, unrelated questions selecting nothing)
        "all": (0.74, 0.79, 0.85),
        "en": (0.73, 0.78, 0.80),
        "zh": (0.69, 0.79, 0.87),
        "kind:tools": (0.83, 0.79, 0.0),
        "kind:paraphrase": (0.60, 0.84, 0.0),
        "kind:multi-memory": (0.53, 0.86, 0.0),
    }
    _assert_floors(lex, floors)


def test_benchmark_quality_on_the_sealed_sets() -> None:
    """Floors a little under what the four sealed sets of issue 16 measure together
    (docs/performance.md#recall): each measured once after a tuning round; a guard against
    regressions, not a target."""
    lex = _lexical_on("SEALED")
    floors = {  # slice: (recall, precision, unrelated questions selecting nothing)
        "all": (0.72, 0.68, 0.78),
        "en": (0.70, 0.63, 0.83),
        "zh": (0.75, 0.77, 0.77),
        "kind:tools": (0.66, 0.62, 0.0),
        "kind:multi-memory": (0.39, 0.62, 0.0),
    }
    _assert_floors(lex, floors)


def test_benchmark_sets_are_sound() -> None:
    """Every question file of every corpus loads, ids are unique, every gold file exists, and
    ``tools`` questions name their tools: a renamed memory must not silently become a miss."""
    recall_eval = load_recall_eval()
    for directory, files in (*recall_eval.CORPORA, *recall_eval.SEALED):
        candidates = {c.rel_path for c in recall_eval.load_candidates(directory)}
        assert len(candidates) >= 50, directory
        ids: set[str] = set()
        asked = 0
        for path in files:
            queries = recall_eval.load_queries(path)
            assert len(queries) >= 20, path
            asked += len(queries)
            for q in queries:
                assert q.id not in ids, (path, q.id)
                ids.add(q.id)
                assert set(q.gold) <= candidates, (path, q.id, set(q.gold) - candidates)
                assert q.lang in recall_eval.LANGS, (path, q.id)
                assert bool(q.recent_tools) == (q.kind == "tools"), (path, q.id)
        assert asked >= 100, directory


def test_benchmark_reports_ranking_recall() -> None:
    recall_eval = load_recall_eval()
    report = recall_eval.evaluate(
        systems=["lexical", "bm25-whitespace"],
        queries=recall_eval.load_queries(recall_eval.QUERIES_MEMDIR2),
        candidates=recall_eval.load_candidates(recall_eval.MEMORY_DIR2),
        timing=False,
    )
    for system in ("lexical", "bm25-whitespace"):
        ranked = report["systems"][system]["all"]["ranking_recall"]
        # A longer prefix of one ranking holds at least the gold files of a shorter one.
        assert 0 < ranked["1"] <= ranked["3"] <= ranked["5"] <= 1
    # bm25's selection is its top 5, so its recall is its ranking recall at 5.
    bm25 = report["systems"]["bm25-whitespace"]["all"]
    assert bm25["recall"] == bm25["ranking_recall"]["5"]


def test_stemmer_collisions_are_kept_apart() -> None:
    # Snowball folds "locale" into "local" and "settings" into "set" (a request word): a
    # question about the locale file must find the translation note, not the local dev stack.
    assert "local" not in tokenize("locale files")
    assert tokenize("localization") == tokenize("locale")
    memories = [
        Item(
            "tools/local-stack.md", "Local stack", "Run the local stack with docker compose", None
        ),
        Item(
            "project/translations.md", "Translations", "App translation goes through Crowdin", None
        ),
    ]
    assert paths(select_lexical("fix the typo in the German locale file", memories)) == [
        "project/translations.md"
    ]
    settings = next(c for c in explain_query("edit settings.json") if c.surface == "settings")
    assert settings.weight == 1.0
    # "response" (what an API returns) and "responsible" (who owns it) share Snowball's stem.
    assert tokenize("response") != tokenize("responsible")
    assert tokenize("responsibility") == tokenize("responsible")
    owners = [
        Item("team/owners.md", "Owners", "Who is responsible for each service", None),
        Item("project/api-shapes.md", "API shapes", "Typed response bodies", None),
    ]
    assert paths(select_lexical("type the response of this endpoint", owners)) == [
        "project/api-shapes.md"
    ]


@pytest.mark.parametrize(
    ("query", "absent"),
    [
        ("I'll pull in tenacity for the retry logic, fine?", {"ill", "fine"}),
        ("it's already there since last week", {"already", "since"}),
        ("モバイルの画面、誰に確認すればいい？", {"誰", "谁"}),
    ],
)
def test_contractions_fillers_and_question_words_are_not_topics(
    query: str, absent: set[str]
) -> None:
    surfaces = {c.surface for c in explain_query(query)}
    assert not surfaces & absent


@pytest.mark.parametrize(
    ("query", "expected", "route"),
    [
        ("rebase onto main and force-push the branch", "feedback/no-push.md", "force push→推送"),
        ("can I annotate this param as Any?", "feedback/typing.md", "annotate→typing"),
        ("I'll pull in a retry library, ok?", "feedback/deps.md", "pull in→依赖"),
        ("purge the old audit rows", "project/retention.md", "purge→delete"),
        ("测试里把key写死行不行", "feedback/secrets.md", "写死→paste into code"),
        ("give me the rundown", "feedback/no-summary.md", "rundown→summary"),
        ("想把文件存到美东的桶里", "project/residency.md", "美东→欧盟"),
    ],
)
def test_everyday_paraphrases_reach_the_note(query: str, expected: str, route: str) -> None:
    memories = [
        Item("feedback/no-push.md", "不要自己推送", "不要自己 git push 或强推", "feedback"),
        Item("feedback/typing.md", "Typing", "New code must be fully typed; avoid Any", "feedback"),
        Item("feedback/deps.md", "新增依赖", "加第三方依赖前先问用户，不要引入同类库", "feedback"),
        Item("project/retention.md", "Retention", "Audit rows are deleted after 7 years", None),
        Item("feedback/secrets.md", "Secrets", "Never paste API keys into code or tests", None),
        Item("feedback/no-summary.md", "No summary", "Don't end with a recap of changes", None),
        Item("project/residency.md", "数据驻留", "客户数据必须留在欧盟，新增存储先确认", None),
        Item("tools/docker.md", "Docker", "Start the database with docker compose up", None),
    ]
    selection = select_lexical(query, memories)
    assert paths(selection)[:1] == [expected]
    assert route in selection.selected[0].matched_terms


def test_at_most_max_word_matches_files_on_the_question_words() -> None:
    # Four files clear the cuts, the longer descriptions a little lower: too many to tell apart,
    # so only the best is selected and the others are crowded out; files tying with it stay.
    tails = ["", " and dashboards", ", dashboards and runbooks", ", dashboards, runbooks, pages"]
    memories = [
        *(
            Item(f"{n}.md", "Kafka consumer lag", f"Kafka consumer lag alerts{tail}", None)
            for n, tail in enumerate(tails)
        ),
        *(Item(f"x{n}.md", f"Other {n}", f"Unrelated note {n}", None) for n in range(8)),
    ]
    query = "kafka consumer lag alerts"
    selection = select_lexical(query, memories)
    assert lexical.MAX_WORD_MATCHES == 3
    assert paths(selection) == ["0.md"]
    assert selection.crowded == ("1.md", "2.md", "3.md")
    # Three are not too many.
    three = select_lexical(query, [m for m in memories if m.rel_path != "3.md"])
    assert paths(three) == ["0.md", "1.md", "2.md"] and not three.crowded
    same = [Item(f"k{n}.md", "Kafka lag", "Kafka consumer lag alerts", None) for n in range(6)]
    tied = select_lexical(query, same)
    assert len(tied.selected) == 5 and not tied.crowded


def test_benchmark_reports_multi_memory_questions_and_halves(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Questions needing several memories are a slice of their own (across kinds), and
    ``--half`` splits every set by its ids' multiples of 3, as the dev / held-out split."""
    recall_eval = load_recall_eval()
    rows = [
        ("q001", "how do we deploy to staging?", ["deploy/staging.md"]),
        ("q002", "staging broke, roll it back", ["deploy/staging.md", "deploy/rollback.md"]),
        ("q003", "roll back staging", ["deploy/staging.md", "deploy/rollback.md"]),
        ("q004", "what's the capital of Portugal?", []),
        ("q006", "how do I roll back?", ["deploy/rollback.md"]),
    ]
    questions = tmp_path / "questions.jsonl"
    questions.write_text(
        "".join(
            json.dumps({"id": i, "query": q, "lang": "en", "gold": g, "kind": "direct"}) + "\n"
            for i, q, g in rows
        ),
        encoding="utf-8",
    )
    memory = recall_eval.MEMORY_DIR
    slices = {}
    for half in ("dev", "held-out"):
        args = ["--set", str(memory), str(questions), "--half", half, "--no-timing", "--json"]
        assert recall_eval.main(args) == 0
        slices[half] = json.loads(capsys.readouterr().out)["systems"]["lexical"]
    dev, held_out = slices["dev"], slices["held-out"]
    assert dev["all"]["queries"] == 3 and held_out["all"]["queries"] == 2
    assert (dev["kind:multi-memory"]["queries"], dev["kind:multi-memory"]["gold"]) == (1, 2)
    assert (dev["kind:single-memory"]["queries"], dev["kind:single-memory"]["gold"]) == (1, 1)
    assert held_out["kind:multi-memory"]["queries"] == held_out["kind:single-memory"]["queries"]
    # A question with nothing to find needs no memory: it is in neither slice.
    assert dev["kind:direct"]["queries"] == 3 and dev["kind:direct"]["unrelated"] == 1
    assert dev["en/multi-memory"]["queries"] == 1
