"""MEM125 (contradicting memories) and MEM126 (stale snapshots), both preview rules: synthetic
directories, each misfire a person would expect next to each finding."""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable
from pathlib import Path

from memdir.config import Settings
from memdir.lint.diagnostic import Diagnostic
from memdir.lint.rules.consistency import STALE_SNAPSHOT_DAYS
from memdir.lint.state import DirState

MakeDir = Callable[[dict[str, str | bytes]], Path]
TODAY = dt.date(2026, 12, 5)


def topic(name: str, body: str, type_: str = "feedback", extra: str = "") -> str:
    head = f"---\nname: {name}\ndescription: how we handle {name}\ntype: {type_}\n{extra}"
    return f"{head}---\n{body}"


def index(*names: str) -> str:
    return "".join(f"- [{n}]({n}.md) — {n}\n" for n in names)


def lint(root: Path, code: str, preview: bool = True) -> list[Diagnostic]:
    state = DirState(root, Settings(preview=preview))
    state.set_today(TODAY)
    state.refresh()
    return [d for d in state.lint().diagnostics if d.code == code]


# --- MEM125 ------------------------------------------------------------------------------------


def test_always_and_never_about_the_same_thing_in_two_memories(make_dir: MakeDir) -> None:
    root = make_dir(
        {
            "MEMORY.md": index("installs", "ci"),
            "installs.md": topic("installs", "Always use pnpm for installs.\n"),
            "ci.md": topic(
                "ci",
                "- Builds are cached.\n- Never use pnpm for installs: npm's lockfile.\n",
            ),
        }
    )
    found = lint(root, "MEM125")
    assert [(d.rel_path, d.span.start_line) for d in found] == [("ci.md", 6), ("installs.md", 5)]
    assert "contradicts installs.md" in found[0].message
    assert "“Never use pnpm for installs”" in found[0].message
    assert "“Always use pnpm for installs”" in found[0].message
    assert "may follow either" in found[1].message
    assert lint(root, "MEM125", preview=False) == []


def test_an_imperative_bullet_and_a_dont(make_dir: MakeDir) -> None:
    root = make_dir(
        {
            "MEMORY.md": index("a", "b"),
            "a.md": topic("a", "- Run `make lint` before pushing\n"),
            "b.md": topic("b", "Don't run `make lint` before pushing, CI does it.\n"),
        }
    )
    assert sorted(d.rel_path for d in lint(root, "MEM125")) == ["a.md", "b.md"]


def test_no_contradiction_without_the_same_object(make_dir: MakeDir) -> None:
    root = make_dir(
        {
            "MEMORY.md": index("a", "b", "c"),
            # Same verb, different things; a qualifier makes it another directive.
            "a.md": topic("a", "Always use mocks in unit tests.\n"),
            "b.md": topic("b", "Never use mocks in integration tests.\n"),
            # One memory saying both (a rule and its exception) is not two memories.
            "c.md": topic("c", "Always use rebase. Never use rebase on main.\nNever use it.\n"),
        }
    )
    assert lint(root, "MEM125") == []


def test_must_not_is_the_negative_side(make_dir: MakeDir) -> None:
    root = make_dir(
        {
            "MEMORY.md": index("a", "b"),
            "a.md": topic("a", "You must not commit generated files.\n"),
            "b.md": topic("b", "We must commit generated files\n"),
        }
    )
    found = lint(root, "MEM125")
    assert len(found) == 2
    [on_a] = [d for d in found if d.rel_path == "a.md"]
    assert "“must not commit generated files”" in on_a.message


# --- MEM126 ------------------------------------------------------------------------------------


def test_a_months_old_next_session_plan(make_dir: MakeDir) -> None:
    root = make_dir(
        {
            "MEMORY.md": index("migration"),
            "migration.md": topic(
                "migration",
                # A deadline is no snapshot's day: the newest date written is still June's.
                "2026-06-02: moved the orders table; refunds due 2026-11-30.\n\n"
                "NEXT SESSION: backfill the refunds.\n",
                "project",
            ),
        }
    )
    [found] = lint(root, "MEM126")
    assert found.span.start_line == 7
    assert "the newest date in it is 2026-06-02" in found.message
    assert f"more than {STALE_SNAPSHOT_DAYS}" in found.message
    assert lint(root, "MEM126", preview=False) == []


def test_a_dated_status_heading_wins_over_other_dates(make_dir: MakeDir) -> None:
    root = make_dir(
        {
            "MEMORY.md": index("app"),
            "app.md": topic(
                "app",
                "## Current status (as of 2026-03-31)\nEarly prototype.\n\n"
                "Decided on 2026-11-30 to keep Postgres.\n",
                "project",
            ),
        }
    )
    [found] = lint(root, "MEM126")
    assert "dated 2026-03-31" in found.message and "249 days ago" in found.message


def test_a_recent_snapshot_is_fine(make_dir: MakeDir) -> None:
    recent = (TODAY - dt.timedelta(days=STALE_SNAPSHOT_DAYS)).isoformat()
    root = make_dir(
        {
            "MEMORY.md": index("app"),
            "app.md": topic("app", f"**Current status ({recent}):** tests pass.\n", "project"),
        }
    )
    assert lint(root, "MEM126") == []


def test_a_fresh_clone_without_dates_is_not_reported(make_dir: MakeDir) -> None:
    # No date in the text: the file's time decides, and a checkout makes it today's.
    root = make_dir(
        {
            "MEMORY.md": index("app"),
            "app.md": topic("app", "Where we left off: the parser.\n", "project"),
        }
    )
    today = dt.datetime(2026, 12, 5, 9, tzinfo=dt.UTC).timestamp()
    os.utime(root / "app.md", (today, today))
    assert lint(root, "MEM126") == []


def test_today_in_prose_and_other_types_are_not_snapshots(make_dir: MakeDir) -> None:
    root = make_dir(
        {
            "MEMORY.md": index("drivers", "style"),
            "drivers.md": topic(
                "drivers",
                "Written 2026-01-10. No such driver today; the old one runs tomorrow's jobs.\n",
                "project",
            ),
            # A feedback memory says how to work, not how things stand.
            "style.md": topic("style", "2026-01-10\n## Current status\nPrefer small PRs.\n"),
        }
    )
    assert lint(root, "MEM126") == []


def test_chinese_label(make_dir: MakeDir) -> None:
    root = make_dir(
        {
            "MEMORY.md": index("plan"),
            "plan.md": topic("plan", "## 当前状态（2026-04-01）\n- 接口已上线\n", "project"),
        }
    )
    [found] = lint(root, "MEM126")
    assert "当前状态" in found.message


def test_days_written_out_date_the_snapshot(make_dir: MakeDir) -> None:
    """Month names and day-first dotted days date a status line as ISO days do."""
    root = make_dir(
        {
            "MEMORY.md": index("app", "api"),
            "app.md": topic("app", "## Current status (as of March 9, 2026)\nBeta.\n", "project"),
            "api.md": topic("api", "## Status as of 14.02.2026: the v2 importer runs\n", "project"),
        }
    )
    found = {d.rel_path: d.message for d in lint(root, "MEM126")}
    assert "dated 2026-03-09" in found["app.md"]
    assert "dated 2026-02-14" in found["api.md"]


def test_closed_work_lasting_notes_app_screens_and_archives_are_no_snapshots(
    make_dir: MakeDir,
) -> None:
    """Misfires found on real directories: a status that reports the work closed is the
    lasting, dated fact the rule asks for; caveats "for next session" are reference; a screen
    called Today is a name; a file under ``archive/`` is history by its place."""
    old = "Written 2026-03-02.\n"
    root = make_dir(
        {
            "MEMORY.md": index("port", "ui", "gotchas", "open"),
            "port.md": topic("port", "**Status as of 2026-04-25:** rollout finished.\n", "project"),
            "gotchas.md": topic(
                "gotchas", old + "**Pitfalls to know next session:**\n- the cache lies\n", "project"
            ),
            "ui.md": topic("ui", old + "**Today tab layout** (today.ts)\n", "project"),
            "archive/handoff.md": topic("handoff", old + "## Current state\nWIP.\n", "project"),
            "open.md": topic(
                "open",
                "**Status as of 2026-04-25:** rollout finished, docs still pending.\n",
                "project",
            ),
        }
    )
    assert [d.rel_path for d in lint(root, "MEM126")] == ["open.md"]


def test_an_old_file_time_counts_when_the_memory_has_no_date(make_dir: MakeDir) -> None:
    root = make_dir(
        {
            "MEMORY.md": index("app"),
            "app.md": topic("app", "Where we left off: the parser.\n", "project"),
        }
    )
    old = dt.datetime(2026, 5, 1, tzinfo=dt.UTC).timestamp()
    os.utime(root / "app.md", (old, old))
    [found] = lint(root, "MEM126")
    assert "the file last changed 2026-05-01" in found.message


def test_rules_are_pure_functions_of_their_view(make_dir: MakeDir) -> None:
    """The directory rule reads the summaries' directives: an edit that changes them re-runs it."""
    root = make_dir(
        {
            "MEMORY.md": index("a", "b"),
            "a.md": topic("a", "Always use tabs.\n"),
            "b.md": topic("b", "Indent with spaces.\n"),
        }
    )
    state = DirState(root, Settings(preview=True))
    state.refresh()
    assert not [d for d in state.lint().diagnostics if d.code == "MEM125"]
    state.update(root / "b.md", topic("b", "Never use tabs.\n"))
    assert len([d for d in state.lint().diagnostics if d.code == "MEM125"]) == 2
    state.update(root / "b.md", topic("b", "Indent with spaces.\n"))
    assert not [d for d in state.lint().diagnostics if d.code == "MEM125"]
