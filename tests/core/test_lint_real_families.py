"""Misfires and misses found on real memory directories (issue 28), each as a synthetic fixture.

Every text here is written for this test; none is copied from a real directory. Each test names
the family it guards: a finding that was wrong (a misfire) or a problem memdir did not report.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable
from pathlib import Path

import pytest
from memdir import constants as C
from memdir.agent.topic import parse_topic_text
from memdir.config import Settings
from memdir.fixes.apply import apply_text_edits
from memdir.lint import Diagnostic, DirState, LintContext
from memdir.lint.rules import check_topic
from memdir.lint.rules.descriptions import description_problem, length_problem
from memdir.secrets import find_secrets, redact

TODAY = dt.date(2026, 12, 3)


def lint(text: str, code: str, mtime: float = 0.0, today: dt.date = TODAY) -> list[Diagnostic]:
    """The findings of ``code`` in one topic file ``t.md`` with this text."""
    ctx = dataclasses.replace(
        LintContext.from_settings(Path("/m"), Settings(preview=True)), today=today
    )
    parsed = parse_topic_text(text, Path("/m/t.md"), "t.md", mtime, len(text.encode()))
    return [d for d in check_topic(parsed, ctx) if d.code == code]


def memory(description: str, body: str = "Body.\n", type_: str = "project", extra: str = "") -> str:
    return f"---\nname: t\ndescription: {description}\ntype: {type_}\n{extra}---\n{body}"


# --- MEM109: words in any script ---------------------------------------------------------------

#: Descriptions whose English translation (in the comment) says enough: none is "too short".
SPECIFIC_IN_ANY_SCRIPT = [
    # uk: run integration tests locally before a release
    "Перед релізом запускати інтеграційні тести локально",
    # ru: the user wants short answers, no emoji
    "Пользователь просит отвечать кратко и без эмодзи",
    "Οι αναπτύξεις γίνονται μόνο την Τρίτη",  # el: deployments happen on Tuesdays only
    "يتم نشر الإصدارات يوم الثلاثاء فقط",  # ar: releases are deployed on Tuesdays only
    "Luôn chạy kiểm thử trước khi đẩy mã",  # vi: always run the tests before pushing code
    "ทดสอบระบบก่อนปล่อยเวอร์ชันใหม่ทุกครั้ง",  # th: test the system before every new release
    "배포 전에 통합 테스트를 반드시 실행",  # ko: always run integration tests before deploying
    "हर रिलीज़ से पहले टेस्ट चलाना ज़रूरी है",  # hi: tests must run before every release
    "Préférences de déploiement du client",  # fr: the client's deployment preferences
]
#: ... and ones that say no more than "notes" or "project notes": still too short.
VAGUE_IN_ANY_SCRIPT = ["Заметки", "Σημειώσεις έργου", "บันทึก", "ملاحظات", "Ghi chú", "메모"]


@pytest.mark.parametrize("description", SPECIFIC_IN_ANY_SCRIPT)
def test_mem109_counts_words_in_every_script(description: str) -> None:
    assert lint(memory(description), "MEM109") == []


@pytest.mark.parametrize("description", VAGUE_IN_ANY_SCRIPT)
def test_mem109_short_descriptions_stay_short_in_every_script(description: str) -> None:
    (found,) = lint(memory(description), "MEM109")
    assert "too short" in found.message


def test_mem109_long_specific_descriptions_pass_and_length_is_in_characters() -> None:
    # ~230 characters, one specific rule: the kind of description real directories keep.
    specific = (
        "Never backfill old rows with a one-off script: this service has a single operator, so "
        "schema changes ship with a migration that fills the column on read, and the deploy "
        "checklist verifies the count of rows still empty"
    )
    assert 200 < len(specific) <= C.DESCRIPTION_MAX_CHARS
    assert description_problem(specific, "t", "t.md") is None
    # 150 Chinese characters are 150 characters (300 columns wide): not "too long".
    chinese = "发布前在本地运行全部集成测试并核对迁移脚本" * 7 + "确认回滚步骤可用并通知值班同事"
    assert len(chinese) < C.DESCRIPTION_MAX_CHARS
    assert description_problem(chinese, "t", "t.md") is None
    dump = "status: " + "phase two shipped, four follow-ups open, metrics pending; " * 6
    assert description_problem(dump, "t", "t.md") is None  # long, not vague: MEM131's
    reason = length_problem(dump)
    assert reason is not None and f"{len(dump)} characters long" in reason


# --- MEM124: a value cut by a YAML comment -----------------------------------------------------


def test_mem124_reports_a_description_cut_by_a_comment_and_quotes_it() -> None:
    text = memory("Issue #412 retry limits settled with the payments team")
    (found,) = lint(text, "MEM124")
    assert "` #` starts a comment, so the agent reads `Issue`" in found.message
    assert "quote the value" in found.message
    assert found.fix is not None and found.fix.safe  # "#412" starts a word: it is text
    fixed = apply_text_edits(text, list(found.fix.edits))
    assert 'description: "Issue #412 retry limits settled with the payments team"' in fixed
    assert lint(fixed, "MEM124") == []
    reread = parse_topic_text(fixed, Path("/m/t.md"), "t.md", 0.0, len(fixed))
    assert reread.description == "Issue #412 retry limits settled with the payments team"
    # MEM109 does not call the cut description "too short": MEM124 says why.
    assert lint(text, "MEM109") == []


def test_mem124_name_whole_value_and_spaced_comment() -> None:
    (name,) = lint(
        memory("retry limits agreed with payments").replace("name: t", "name: PR #9"), "MEM124"
    )
    assert "`name` cut" in name.message and "reads `PR`" in name.message
    (empty,) = lint(memory("#77 checkout timeouts raised to 30 seconds"), "MEM124")
    assert "reads no description at all" in empty.message
    # After "# " it may be a comment someone meant: offered in the editor, not applied by --fix.
    (spaced,) = lint(memory("checkout timeouts for the mobile app  # see runbook"), "MEM124")
    assert spaced.fix is not None and not spaced.fix.safe


@pytest.mark.parametrize(
    "description",
    [
        '"Issue #412 retry limits settled with the payments team"',
        "'Issue #412 retry limits settled with the payments team'",
        "C# services log through the shared Serilog sink",
        "Issue#412 retry limits settled with the payments team",
    ],
)
def test_mem124_silent_when_yaml_keeps_the_hash(description: str) -> None:
    assert lint(memory(description), "MEM124") == []


# --- MEM106: a marginal overshoot --------------------------------------------------------------


def test_mem106_ignores_an_overshoot_of_a_last_bullet_or_two() -> None:
    head = memory("release checklist for the mobile apps, step by step", body="")
    line = "- check the store listing, the screenshots and the release notes once more\n"
    fits = head + line * ((C.SURFACE_MAX_BYTES - len(head)) // len(line))
    marginal = fits + line * 2  # a few per cent of the file past the cut
    assert len(marginal.encode()) > C.SURFACE_MAX_BYTES
    assert lint(marginal, "MEM106") == []
    long = fits + line * 20  # about a quarter of the file is never injected
    (found,) = lint(long, "MEM106")
    assert "not injected from here on" in found.message


# --- MEM119: only running prose ----------------------------------------------------------------


def test_mem119_skips_headings_labels_and_quoted_titles() -> None:
    stamp = "modified: 2026-12-01T10:00:00.000Z\n"
    body = (
        "## 昨日回顾\n\n"
        "**Tomorrow:**\n\n"
        'The scoring table marks that row "retest next year" for the coach.\n'
        "The report template is titled “Next week at a glance”.\n"
    )
    assert lint(memory("fitness test scoring rules", body, extra=stamp), "MEM119") == []
    prose = memory("fitness test scoring rules", "We retest the group next week.\n", extra=stamp)
    (found,) = lint(prose, "MEM119")
    assert "its `modified` field" in found.message


def test_mem119_says_when_the_anchor_is_only_the_modification_time() -> None:
    mtime = dt.datetime(2026, 11, 30, 12, tzinfo=dt.UTC).timestamp()
    (found,) = lint(memory("fitness test scoring rules", "Retest tomorrow.\n"), "MEM119", mtime)
    assert "2026-12-01 if it was written on 2026-11-30" in found.message
    assert "a clone or copy resets that time" in found.message


def test_mem119_a_word_the_code_names_is_a_field_not_a_day() -> None:
    body = (
        "- Each report checks its inputs: the delta report compares with yesterday, the "
        "weekly one with the seven days before.\n\n"
        "```ts\nif (!stats.yesterday) throw new Error('missing');\n```\n"
    )
    assert lint(memory("report input checks", body), "MEM119") == []
    # Without the code, the same sentence speaks of a day.
    plain = "- The delta report compares with yesterday, the weekly one with the days before.\n"
    assert len(lint(memory("report input checks", plain), "MEM119")) == 1


# --- MEM121: a milestone reached is no deadline ------------------------------------------------


def test_mem121_skips_dates_of_work_reported_done() -> None:
    done = "Games came one at a time: the first (2026-03-02), the second added (by 2026-04-05).\n"
    assert lint(memory("multi-game support history", done), "MEM121") == []
    assert (
        lint(memory("multi-game support history", "✅ Port the parser by 2026-04-05.\n"), "MEM121")
        == []
    )
    plan = "Partners must move off the v1 endpoint by 2026-04-05. The importer shipped in May.\n"
    (found,) = lint(memory("v1 endpoint retirement plan", plan), "MEM121")
    assert "2026-04-05" in found.message


# --- MEM110: identifiers that look random ------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "- Session key: 5d0c2b7e-41f3-4a8e-9c61-2f7b0d3e8a94",
        "session_key = 5d0c2b7e-41f3-4a8e-9c61-2f7b0d3e8a94",
        "idempotencyKey: 5d0c2b7e-41f3-4a8e-9c61-2f7b0d3e8a94",
        "`py_compile` passed: every module under src/",
        "api_key: abc123xyz",
    ],
)
def test_mem110_identifiers_and_placeholders_are_no_secrets(line: str) -> None:
    assert find_secrets(line) == []


@pytest.mark.parametrize(
    "line",
    [
        "HEROKU_API_KEY=5d0c2b7e-41f3-4a8e-9c61-2f7b0d3e8a94",
        "api key: 5d0c2b7e-41f3-4a8e-9c61-2f7b0d3e8a94",
        "license_key = 5d0c2b7e-41f3-4a8e-9c61-2f7b0d3e8a94",
    ],
)
def test_mem110_a_uuid_named_as_a_credential_is_still_one(line: str) -> None:
    assert [m.kind for m in find_secrets(line)] != []


#: A random-looking value of 22 characters; a credential's name makes it one, a record's not.
RANDOM_ID = "Qm7Xc2LpR4vT9nWb8KdJ3z"


@pytest.mark.parametrize(
    "line",
    [
        f"Design file: fileKey={RANDOM_ID}, page Settings",
        f"cache_key = {RANDOM_ID}",
        f"PRIMARY_KEY: {RANDOM_ID}",
        f"The S3 object key is objectKey={RANDOM_ID}",
        # ... in prose too, and a key with no name before it.
        f"- Design file key: `{RANDOM_ID}`",
        f"- Wireframes live on the team board (key: `{RANDOM_ID}`)",
        # A name ending in "Pass" before a title, not a value.
        "| 7 | FastPass: Subscription tiers and billing |",
        # A known key's prefix cut with an ellipsis names a key kept elsewhere.
        "| Anthropic | `sk-ant-api03-Zx8Qw2Lr5Tn9Vb3Hk7Jp1Md4Fs6Gy0Ce...` (full key: vault) |",
        "OpenAI: sk-proj-Zx8Qw2Lr5Tn9Vb3Hk7Jp1Md4Fs6Gy0CeAa…",
        # Keys made to be public: shipped in every page of the app.
        "VITE_SUPABASE_ANON_KEY=sb_publishable_Zx8Qw2Lr5Tn9Vb3Hk7Jp1Md4Fs6",
        "STRIPE_PUBLISHABLE_KEY=pk_live_51Zx8Qw2Lr5Tn9Vb3Hk7Jp1Md4Fs6Gy0Ce",
    ],
)
def test_mem110_record_keys_and_cut_keys_are_no_secrets(line: str) -> None:
    assert find_secrets(line) == []


FIREBASE_KEY = "AIzaSyZx8Qw2Lr5Tn9Vb3Hk7Jp1Md4Fs6Gy0CeA"


@pytest.mark.parametrize(
    "text",
    [
        f"The tally app's Firebase web config uses the key {FIREBASE_KEY}.",
        f'const firebaseConfig = {{\n  apiKey: "{FIREBASE_KEY}",',
    ],
)
def test_mem110_a_firebase_web_key_is_public_but_still_redacted(text: str) -> None:
    # A Firebase web app's API key ships in its client config: lint leaves it alone (MEM110 and,
    # as a value under `apiKey`, MEM130); output still hides it, as a key of that format.
    topic_text = (
        f"---\nname: t\ndescription: the app's Firebase setup\ntype: reference\n---\n{text}\n"
    )
    assert lint(topic_text, "MEM110") == [] and lint(topic_text, "MEM130") == []
    assert [s.public for s in find_secrets(text)] == [True]
    assert FIREBASE_KEY not in redact(text)


@pytest.mark.parametrize(
    "line",
    [
        f"api_key={RANDOM_ID}",
        f"storageKey: {RANDOM_ID}",
        f"file_token = {RANDOM_ID}",
        f"Stripe secret key: {RANDOM_ID}",
        f"- API key: `{RANDOM_ID}`",
        "- Pass: `Harborlight2026`",
        "ANTHROPIC_API_KEY=sk-ant-api03-Zx8Qw2Lr5Tn9Vb3Hk7Jp1Md4Fs6Gy0CeAaBbCcDdEe",
        # The same format for a Maps key, with no Firebase around it, is a secret.
        "MAPS_KEY=AIzaSyZx8Qw2Lr5Tn9Vb3Hk7Jp1Md4Fs6Gy0CeA",
        # The user's name with a random tail is a password, not a default.
        "DATABASE_URL=postgresql://shop:shop_Zx8Qw2Lr5Tn9@db.internal:5432/shop",
    ],
)
def test_mem110_credentials_beside_them_are_still_secrets(line: str) -> None:
    assert find_secrets(line) != []


# --- files kept aside: archives, drafts, config --------------------------------------------------


def test_an_archive_drafts_or_config_folder_is_kept_aside(make_dir: Callable[..., Path]) -> None:
    """Files moved to ``legacy/`` (or ``_archived/``, ``retired/2026-05/``), and drafts in
    ``drafts/``, are out of the index on
    purpose: the rules tuning auto memory's recall (orphan, frontmatter, size, name) are not
    run on them; a secret there is still reported."""
    old_report = "# Billing audit, first pass\n\nSuperseded by the second pass.\n" + "x" * 5000
    files = {
        "MEMORY.md": "- [Deploys](deploys.md) — release trains\n",
        "deploys.md": memory("Release trains leave on Tuesdays after a day of canary"),
        "legacy/billing-audit.md": old_report,
        "_archived/retention.md": memory("保留", type_="audit"),
        "retired/2026-05-prune/keys.md": memory(
            "Old staging keys", body="token: ghp_4f9TzQ2mL8vR1xW7cK3nB6yH0pD5sJ9aE2uG\n"
        ),
        # Drafts being written beside the memories (a blog post): kept aside too, and so is a
        # copy of Claude Code's slash commands.
        "drafts/first-post.md": "# How we ship\n\nA draft for the team blog.\n" + "y" * 5000,
        "commands/status.md": "Report the state of every running job.\n\n## Steps\n",
        "unlisted.md": memory("A memory nobody indexed, about the on-call rota"),
    }
    state = DirState(make_dir(files), Settings())
    state.refresh()
    found = {(d.rel_path, d.code) for d in state.lint().diagnostics}
    assert found == {("unlisted.md", "MEM107"), ("retired/2026-05-prune/keys.md", "MEM110")}


def test_a_copy_kept_aside_is_no_duplicate(make_dir: Callable[..., Path]) -> None:
    """An old namespace's memories kept under ``_archive_old_profile/`` (a folder named
    by its first word) and two subagents' notes on one feature (``agents/<name>/``) are history
    or another scope (archive family): neither MEM111 nor MEM128 calls them copies; a stray
    copy beside the memories still is one."""
    rule = memory(
        "Never push to main without a green CI run",
        body="Wait for the whole CI run to pass before pushing to main; a red build on main "
        "blocks every other team's deploy for the rest of the day.\n",
    )
    files = {
        "MEMORY.md": "- [No push](no-push.md) — wait for green CI\n",
        "no-push.md": rule,
        "_archive_old_profile/notes/no-push.md": rule,
        "agents/reviewer/no-push.md": rule,
    }
    root = make_dir(files)

    def duplicates() -> set[tuple[str, str]]:
        state = DirState(root, Settings(preview=True))
        state.refresh()
        return {
            (d.rel_path, d.code) for d in state.lint().diagnostics if d.code in ("MEM111", "MEM128")
        }

    assert duplicates() == set()
    (root / "no-push-copy.md").write_text(rule, encoding="utf-8")
    assert duplicates() == {("no-push.md", "MEM111"), ("no-push.md", "MEM128")}


@pytest.mark.parametrize(
    "target",
    [
        "file:///home/dana/src/shop/.agent/memory/safety.md",
        "file:///C:/Users/dana/shop/memory/safety.md",
        "/home/dana/src/shop/.agent/memory/safety.md",
        "<file:///home/dana/my%20shop/memory/safety.md>",
    ],
)
def test_an_absolute_link_to_the_dirs_own_file_is_a_link(
    make_dir: Callable[..., Path], target: str
) -> None:
    """An index written on the author's machine links a memory by its absolute path or its
    ``file://`` URL: MEM007 asks for a relative link, and the file is no orphan (file-url
    family). A folder of another name before the file still leaves it unlinked."""
    files = {
        "MEMORY.md": f"- [Safety]({target}) — what never runs in prod\n"
        "- [Other](file:///home/dana/notes/other.md) — kept elsewhere\n",
        "safety.md": memory("Commands that must never run against production"),
        "other.md": memory("A memory whose link names another folder"),
    }
    root = make_dir(files)
    state = DirState(root, Settings())
    state.refresh()
    found = {(d.rel_path, d.code, d.span.start_line) for d in state.lint().diagnostics}
    assert found == {
        ("MEMORY.md", "MEM007", 0),
        ("MEMORY.md", "MEM007", 1),
        ("other.md", "MEM107", 0),
    }
    file_url = next(
        d for d in state.lint().diagnostics if d.code == "MEM007" and d.span.start_line == 1
    )
    assert file_url.message.startswith("a file:// URL is an absolute path on one machine")


def test_a_link_from_the_known_projects_root_is_not_dangling(
    make_dir: Callable[..., Path], tmp_path: Path
) -> None:
    """Auto memory whose index links a skill file by its path from the project's root, where
    the agent works (project-root link family): not dangling when the project is known, still
    dangling when it is not; a link to nothing stays dangling either way."""
    files = {
        "MEMORY.md": "- [Release skill](.claude/skills/release/SKILL.md) — how the skill runs\n"
        "- [Gone](gone.md) — a note deleted since\n",
    }
    root = make_dir(files)
    project = tmp_path / "proj"
    (project / ".claude" / "skills" / "release").mkdir(parents=True)
    (project / ".claude" / "skills" / "release" / "SKILL.md").write_text("# Release\n", "utf-8")

    def dangling(project_root: Path | None) -> list[str]:
        state = DirState(root, Settings(), project_root=project_root)
        state.refresh()
        return sorted(d.message.split()[2] for d in state.lint().diagnostics if d.code == "MEM005")

    assert dangling(project) == ["gone.md"]
    assert dangling(None) == [".claude/skills/release/SKILL.md", "gone.md"]


def test_a_past_deadline_kept_aside_is_history(make_dir: Callable[..., Path]) -> None:
    """A plan moved to ``legacy/`` was past its deadline when it was put there (MEM121's
    archive family); the same plan beside the memories is still reported."""
    plan = memory("The storage migration plan", body="Cut over to the new bucket due 2026-01-10.\n")
    root = make_dir({"MEMORY.md": "", "legacy/storage.md": plan, "storage.md": plan})
    state = DirState(root, Settings(preview=True))
    state.set_today(dt.date(2026, 12, 5))
    state.refresh()
    assert [d.rel_path for d in state.lint().diagnostics if d.code == "MEM121"] == ["storage.md"]
