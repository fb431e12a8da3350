"""Dates in memories: relative expressions (EN, ZH, JA), MEM119 and MEM120 with a frozen today."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable
from pathlib import Path

import pytest
from memdir.agent.topic import parse_topic_text
from memdir.config import Settings, settings_from_mapping
from memdir.dates import (
    find_days,
    find_deadlines,
    find_relative_dates,
    parse_day,
    render,
    resolve,
)
from memdir.fixes.apply import apply_text_edits
from memdir.lint import DirState
from memdir.lint.diagnostic import Diagnostic
from memdir.lint.engine import LintContext
from memdir.lint.fix import apply_fixes
from memdir.lint.rules import check_topic

ROOT = Path(__file__).resolve().parents[2]
#: A Thursday; the anchor of every resolution below.
THURSDAY = dt.date(2026, 12, 3)
TODAY = dt.date(2026, 12, 10)


def meanings(text: str, anchor: dt.date = THURSDAY) -> list[tuple[str, str]]:
    return [(r.text, render(r, anchor)) for r in find_relative_dates(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The freeze starts next Friday.", [("next Friday", "2026-12-11")]),
        ("We ship this Friday", [("this Friday", "2026-12-04")]),
        ("Decided last Monday", [("last Monday", "2026-11-23")]),
        (
            "Review tomorrow, retro the day after tomorrow",
            [
                ("tomorrow", "2026-12-04"),
                ("the day after tomorrow", "2026-12-05"),
            ],
        ),
        ("Launch in two weeks", [("in two weeks", "2026-12-17")]),
        ("Cut over in 3 days", [("in 3 days", "2026-12-06")]),
        ("Agreed 2 days ago", [("2 days ago", "2026-12-01")]),
        ("Budget review next month", [("next month", "January 2027")]),
        ("Planning happens next week", [("next week", "the week of 2026-12-07")]),
        ("Hiring freeze until next year", [("next year", "2027")]),
        ("下周五发布新版本", [("下周五", "2026-12-11")]),
        ("明天开评审会", [("明天", "2026-12-04")]),
        ("下个月迁移数据库", [("下个月", "2027年1月")]),
        ("下周开始冻结", [("下周", "2026-12-07 那一周")]),
        ("上星期三定的方案", [("上星期三", "2026-11-25")]),
        ("去年的数据要归档", [("去年", "2025年")]),
        ("来週の金曜にリリースする", [("来週の金曜", "2026-12-11")]),
        ("明日はレビューがある", [("明日", "2026-12-04")]),
        ("来月から新しいAPIを使う", [("来月", "2027年1月")]),
        ("先週の月曜日に決めた", [("先週の月曜日", "2026-11-23")]),
    ],
)
def test_relative_dates_resolve_from_their_anchor(
    text: str, expected: list[tuple[str, str]]
) -> None:
    assert meanings(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        # Durations, recurring days, offsets from an event, code: none is a date.
        "both versions run side by side for six months",
        "until the release is live and has been stable for one day",
        "standup every Friday at ten",
        "Session tokens expire in 7 days",
        "flags are removed two weeks after full rollout",
        "用户行为日志最多保留 90 天",
        "发布两周后再删除旧接口",
        "the cron `next month` string in `schedule.yaml`",
        "this week we use the new pipeline",
        "/v1/ shuts down on 2027-01-15",
        "毎週金曜に定例",
        "payroll runs on the last Friday of each month",
        "以上周期内的告警都要处理",
        "下周期的预算",
    ],
)
def test_not_relative_dates(text: str) -> None:
    assert find_relative_dates(text) == []


def test_weeks_start_on_monday() -> None:
    (friday,) = find_relative_dates("next Friday")
    sunday = dt.date(2026, 12, 6)
    monday = dt.date(2026, 12, 7)
    assert resolve(friday, sunday) == dt.date(2026, 12, 11)
    assert resolve(friday, monday) == dt.date(2026, 12, 18)
    (month,) = find_relative_dates("next month")
    assert resolve(month, dt.date(2026, 12, 31)) == dt.date(2027, 1, 1)


def test_parse_day() -> None:
    assert parse_day("2026-12-03T23:59:00.000Z") == THURSDAY
    assert parse_day(dt.date(2026, 12, 3)) == THURSDAY
    assert parse_day("2026-02-30") is None
    assert parse_day("soon") is None
    assert parse_day(None) is None


# --- the rules ---------------------------------------------------------------------------------


def context(today: dt.date = TODAY, verify_after_days: int = 180) -> LintContext:
    settings = Settings(verify_after_days=verify_after_days, preview=True)  # MEM121
    ctx = LintContext.from_settings(Path("/m"), settings)
    return dataclasses.replace(ctx, today=today)


def lint_text(text: str, ctx: LintContext | None = None, mtime: float = 0.0) -> list[Diagnostic]:
    topic = parse_topic_text(text, Path("/m/t.md"), "t.md", mtime, len(text))
    codes = ("MEM119", "MEM120", "MEM121")
    return [d for d in check_topic(topic, ctx or context()) if d.code in codes]


def project(body: str, extra: str = "", type_: str = "project") -> str:
    return (
        f"---\nname: freeze\ndescription: release freeze dates and who decides them\n"
        f"type: {type_}\nmodified: 2026-12-03T10:00:00.000Z\n{extra}---\n{body}"
    )


def test_mem119_fix_writes_the_date_it_meant() -> None:
    text = project("# Freeze\n\nThe freeze starts next Friday.\n")
    (found,) = lint_text(text)
    assert found.code == "MEM119" and found.severity == "warning"
    assert "“next Friday”" in found.message and "2026-12-11" in found.message
    assert not found.message.endswith("— a day already past")
    (later,) = lint_text(text, context(today=dt.date(2026, 12, 12)))
    assert later.message.endswith("— a day already past")
    assert found.fix is not None and not found.fix.safe
    assert apply_text_edits(text, list(found.fix.edits)) == text.replace(
        "next Friday", "2026-12-11"
    )


def test_mem119_chinese_and_japanese_and_only_project_memories() -> None:
    zh = project("# 冻结\n\n下周五开始冻结，下个月解冻。\n")
    assert [d.fix.edits[0].new_text for d in lint_text(zh) if d.fix] == ["2026-12-11", "2027年1月"]
    ja = project("# 凍結\n\n来週の金曜から凍結する。\n")
    assert [d.span.start_col for d in lint_text(ja)] == [0]
    assert lint_text(project("Answer tomorrow's questions tersely.\n", type_="feedback")) == []


def test_mem119_skips_code_and_uses_mtime_without_modified() -> None:
    fenced = project("```\nrun it tomorrow\n```\n`next week` is a cron word\n")
    assert lint_text(fenced) == []
    text = "---\nname: x\ndescription: freeze dates and owners\ntype: project\n---\nship tomorrow\n"
    mtime = dt.datetime(2026, 11, 30, 12, tzinfo=dt.UTC).timestamp()
    (found,) = lint_text(text, mtime=mtime)
    assert found.fix is not None and found.fix.edits[0].new_text == "2026-12-01"


def test_mem120_reads_last_verified_then_modified() -> None:
    old = project("Body.\n", "last_verified: 2026-01-02\n")
    (found,) = lint_text(old)
    assert found.code == "MEM120" and found.severity == "info"
    assert "last verified 2026-01-02, 342 days ago" in found.message
    fresh = project("Body.\n", "last_verified: 2026-12-01\n")
    assert lint_text(fresh) == []
    # No last_verified: the last change counts (modified 2026-12-03).
    assert lint_text(project("Body.\n")) == []
    assert lint_text(project("Body.\n"), context(today=dt.date(2027, 7, 1)))[0].message.startswith(
        "never verified, last changed 2026-12-03"
    )
    assert lint_text(old, context(verify_after_days=0)) == []
    # Neither last_verified nor modified: the mtime says nothing about a check.
    bare = "---\nname: x\ndescription: freeze dates and owners\ntype: project\n---\nBody.\n"
    assert lint_text(bare, mtime=0.0) == []


LATER = dt.date(2027, 12, 10)


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ("last_verified: 2026-01-02\n", "last_verified: 2027-12-10\n"),
        ("last_verified: 2026-01-02  # by Ana\n", "last_verified: 2027-12-10  # by Ana\n"),
        ("last_verified:\n", "last_verified: 2027-12-10\n"),
        (
            "metadata:\n  node_type: memory\n  last_verified: '2025-01-01'\n",
            "metadata:\n  node_type: memory\n  last_verified: 2027-12-10\n",
        ),
        ("", "last_verified: 2027-12-10\n"),
    ],
)
def test_mark_verified_edits_only_the_field(extra: str, expected: str) -> None:
    text = project("Body.\n", extra)
    ctx = context(today=LATER)
    (found,) = lint_text(text, ctx)
    assert found.fix is not None and not found.fix.safe
    fixed = apply_text_edits(text, list(found.fix.edits))
    assert fixed == project("Body.\n", expected)
    assert lint_text(fixed, ctx) == []  # once verified, the rule is quiet


def test_mark_verified_through_the_writer_keeps_crlf_and_bom(
    make_dir: Callable[..., Path],
) -> None:
    text = "\ufeff" + project("Body.\r\n", "last_verified: 2025-01-02\r\n").replace("\n", "\r\n")
    text = text.replace("\r\r\n", "\r\n")
    root = make_dir({"MEMORY.md": "- [F](f.md) — freeze dates\n", "f.md": text})
    state = DirState(root, settings_from_mapping({"verify_after_days": 30}))
    state.context = dataclasses.replace(state.context, today=TODAY)
    state.refresh()
    found = [d for d in state.lint().diagnostics if d.code == "MEM120"]
    assert len(found) == 1
    assert apply_fixes(found).applied == ()  # not safe: --fix leaves it
    report = apply_fixes(found, safe_only=False)
    assert len(report.applied) == 1
    data = (root / "f.md").read_bytes()
    assert data == text.replace("2025-01-02", "2026-12-10").encode("utf-8")


def test_setting_validation() -> None:
    assert settings_from_mapping({"verifyAfterDays": 30}).verify_after_days == 30
    bad = settings_from_mapping({"verify_after_days": -1})
    assert bad.verify_after_days == 180 and bad.errors


@pytest.mark.parametrize(
    "directory",
    [ROOT / "examples" / "memory", ROOT / "client-vscode" / "e2e" / "fixtures" / "memory"],
)
def test_example_directories_have_no_date_findings_for_a_year(directory: Path) -> None:
    """The README, the install tests and the VS Code e2e expect these directories clean. Their
    deadlines are real dates: this fails a year before one passes, in time to move it."""
    state = DirState(directory, Settings(preview=True))
    state.context = dataclasses.replace(
        state.context, today=dt.date.today() + dt.timedelta(days=365)
    )
    state.refresh()
    found = [d for d in state.lint().diagnostics if d.code in {"MEM119", "MEM120", "MEM121"}]
    assert found == [], f"move the example's dates further out: {found}"


# --- deadlines (MEM121) ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Payments migration due 2026-11-30", ["2026-11-30"]),
        ("/v1/ shuts down on 2027-01-15.", ["2027-01-15"]),
        ("Stripe retires the Charges API for our account on 2027-03-31.", ["2027-03-31"]),
        ("finish by 2026-11-01", ["2026-11-01"]),
        ("截止日期：2026年11月30日", ["2026年11月30日"]),
        ("接口 2026-11-30 下线", ["2026-11-30"]),
        ("2026/11/30までに提出する", ["2026/11/30"]),
        ("締め切りは2026-11-30", ["2026-11-30"]),
        # Not deadlines: a date that only dates something, "by" far from its date, code.
        ("decided by the CTO on 2026-01-02", []),
        ("released 2026-01-01", []),
        ("法务在 2026 年 9 月的合规审查后要求", []),
        ("2026-09-01 之前的数据", []),
        ("see `due 2020-01-01`", []),
        ("due 2026-02-30", []),
        # The end of a week is a deadline, a session's end written down is not (real dirs).
        ("the freeze ends on 2026-03-01", ["2026-03-01"]),
        ("ship it by end of this week (2026-02-20)", ["2026-02-20"]),
        ("End of session 2026-02-11: the importer is paused", []),
        ("End of the evening session 2026-02-12", []),
        ("End of work day 2026-02-13", []),
        ("a dead end (tried 2026-02-03)", []),
        ("| Sampling end | 2025-01-31 |", []),
        ("balance@end=2019-06-30", []),
    ],
)
def test_find_deadlines(text: str, expected: list[str]) -> None:
    assert [d.text for d in find_deadlines(text)] == expected


def test_mem121_only_past_deadlines_in_project_memories() -> None:
    text = project("# Freeze\n\nPartners must move off /v1/ by 2026-11-30; /v2/ ends 2027-06-01.\n")
    (found,) = lint_text(text, context(today=THURSDAY))
    assert found.code == "MEM121" and found.severity == "info" and found.fix is None
    assert "2026-11-30 passed 3 days ago" in found.message
    assert text.split("\n")[found.span.start_line][found.span.start_col : found.span.end_col] == (
        "2026-11-30"
    )
    assert lint_text(text, context(today=dt.date(2026, 11, 30))) == []
    assert lint_text(project("due 2026-11-30\n", type_="reference"), context(today=THURSDAY)) == []
    zh = project("新接口上线，旧接口截止 2026年11月1日。\n")
    assert [d.code for d in lint_text(zh, context(today=THURSDAY))] == ["MEM121"]


@pytest.mark.parametrize(
    ("text", "days"),
    [
        ("as of 2026-04-13 and 2026/5/2", [dt.date(2026, 4, 13), dt.date(2026, 5, 2)]),
        ("2026年5月21日 会话", [dt.date(2026, 5, 21)]),
        ("Status as of 14.02.2026: merged", [dt.date(2026, 2, 14)]),
        ("(as of March 9, 2026) then 6 Apr. 2026", [dt.date(2026, 3, 9), dt.date(2026, 4, 6)]),
        ("Sept 3rd, 2026", [dt.date(2026, 9, 3)]),
        # Which of day and month comes first cannot be told; a version is no day; nor is 31.02.
        ("07/16/2026, v1.2.2026, 31.02.2026, May 2026, 1.2.3.2026", []),
    ],
)
def test_find_days_reads_the_days_a_text_writes_out(text: str, days: list[dt.date]) -> None:
    assert [day for _, day in find_days(text)] == days
