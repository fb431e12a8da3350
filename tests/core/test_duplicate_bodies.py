"""MEM128 (preview) on two memories saying the same thing in two files (and its merge, editor-only
fix), and MEM127 on a memory repeating the project's instructions (CLAUDE.md, .claude/rules/),
with its "delete this copy" fix. All texts are written here."""

from __future__ import annotations

from pathlib import Path

from memdir.config import Settings
from memdir.faces.cli import main
from memdir.fixes.apply import apply_text_edits, combine
from memdir.lint.diagnostic import Diagnostic
from memdir.lint.fix import apply_fixes
from memdir.lint.state import DirState
from memdir.project.lookup import Project
from memhelpers import write_files

STEPS = (
    "The staging deploy runs from the release branch every Tuesday afternoon.\n"
    "First the database migrations run against the staging replica, then the workers restart.\n"
    "The smoke suite must pass before anyone announces the release in the team channel.\n"
)


def topic(name: str, description: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: {description}\ntype: project\n---\n{body}"


def lint(
    directory: Path, project: Path | None = None, codes: tuple[str, ...] = ("MEM128",)
) -> list[Diagnostic]:
    state = DirState(
        directory,
        Settings(preview=True),
        project=Project.load(project, directory) if project else None,
    )
    state.refresh()
    return [d for d in state.lint().diagnostics if d.code in codes]


def two_copies(tmp_path: Path) -> Path:
    directory = tmp_path / "memory"
    write_files(
        directory,
        {
            "MEMORY.md": "- [Deploy](deploy.md) — the staging deploy, step by step\n"
            "- [Release](release.md) — releasing the billing service to staging\n",
            "deploy.md": topic("deploy", "How the staging deploy runs, step by step", STEPS),
            "release.md": topic(
                "release",
                "What to do when releasing the billing service to staging",
                STEPS + "Ping the on-call engineer afterwards.\n",
            ),
        },
    )
    return directory


def test_two_bodies_saying_the_same_thing(tmp_path: Path) -> None:
    directory = two_copies(tmp_path)
    [finding] = lint(directory)
    # The shorter one is the copy; the other keeps what both say.
    assert finding.rel_path == "deploy.md"
    assert "100% of its body is also in release.md" in finding.message
    fix = finding.fix
    assert fix is not None and not fix.safe
    assert [d.rel_path for d in fix.deletes] == ["deploy.md"]
    assert fix.to_json()["deletes"] == [{"path": "deploy.md"}]


def test_merge_keeps_the_copys_own_lines(tmp_path: Path) -> None:
    directory = two_copies(tmp_path)
    (directory / "deploy.md").write_text(
        topic(
            "deploy",
            "How the staging deploy runs, step by step",
            STEPS + "Rollbacks need a ticket.\n",
        )
    )
    (directory / "release.md").write_text(
        topic(
            "release",
            "Releasing the billing service",
            STEPS + STEPS.splitlines()[0] + "\nAsk QA to sign off the release notes by Friday.\n",
        )
    )
    [finding] = lint(directory)
    assert finding.rel_path == "deploy.md" and finding.fix is not None
    edits = {e.rel_path: [] for e in finding.fix.edits}
    for edit in finding.fix.edits:
        edits[edit.rel_path].append(edit)
    merged = apply_text_edits((directory / "release.md").read_text(), edits["release.md"])
    assert merged.endswith("by Friday.\n\nRollbacks need a ticket.\n")
    assert merged.count("The staging deploy runs") == 2  # nothing of the keeper is touched
    index = apply_text_edits((directory / "MEMORY.md").read_text(), edits["MEMORY.md"])
    assert index == "- [Release](release.md) — releasing the billing service to staging\n"


def test_lint_fix_never_merges(tmp_path: Path) -> None:
    directory = two_copies(tmp_path)
    before = {p.name: p.read_text() for p in directory.iterdir()}
    findings = lint(directory)
    apply_fixes(findings)
    apply_fixes(findings, safe_only=False)  # even when asked: a person merges
    assert {p.name: p.read_text() for p in directory.iterdir()} == before
    assert combine("all", [f.fix for f in findings if f.fix]) is None
    assert main(["lint", "--fix", "--preview", str(directory)]) == 1
    assert {p.name: p.read_text() for p in directory.iterdir()} == before


def test_chinese_bodies_and_unrelated_memories(tmp_path: Path) -> None:
    body = (
        "发布流程：每周二下午从发布分支部署到预发环境，先跑数据库迁移，"
        "再重启工作进程，冒烟测试通过后才能在群里宣布。\n"
    )
    directory = tmp_path / "memory"
    write_files(
        directory,
        {
            "a.md": topic("发布", "预发环境的发布流程和注意事项", body),
            "b.md": topic(
                "上线", "计费服务上线到预发环境时要做的事", body + "记得通知值班同学。\n"
            ),
            "c.md": topic(
                "c",
                "The on-call rotation and who to page",
                "Paging goes through the core rota; weekends rotate monthly between the two "
                "backend teams.\n",
            ),
            "d.md": topic("d", "Short note", "See the README.\n"),
            "e.md": topic("e", "Another short note", "See the README.\n"),
        },
    )
    # Near-identical CJK bodies are found; short bodies sharing a phrase are not.
    assert [(d.rel_path, d.code) for d in lint(directory)] == [("a.md", "MEM128")]


INSTRUCTIONS = (
    "# Working here\n\n"
    "## Tests\n"
    "Always run the test suite inside the dev shell with `make check`; running python directly "
    "misses the native libraries and skips half of the integration tests.\n"
)


def project_with_memory(tmp_path: Path, where: str) -> tuple[Path, Path]:
    root = tmp_path / "project"
    write_files(root, {where: INSTRUCTIONS, "src/app.py": "x = 1\n"})
    directory = root / ".claude" / "memory"
    write_files(
        directory,
        {
            "MEMORY.md": "- [Dev shell](dev-shell.md) — tests run in the dev shell\n"
            "- [Oncall](oncall.md) — who to page\n",
            "dev-shell.md": topic(
                "dev-shell",
                "Tests must run inside the dev shell",
                "Always run the test suite inside the dev shell with `make check`: running "
                "python directly misses the native libraries and skips half of the "
                "integration tests. The user asked for this.\n",
            ),
            "oncall.md": topic(
                "oncall",
                "Who to page for the billing service at night",
                "Paging goes through the core rota; weekends rotate monthly between the two "
                "backend teams, and the payments lead is the last escalation step.\n",
            ),
        },
    )
    return root, directory


def test_a_memory_repeating_claude_md(tmp_path: Path) -> None:
    for where in ("CLAUDE.md", ".claude/rules/testing.md", "CLAUDE.local.md"):
        root, directory = project_with_memory(tmp_path / where.replace("/", "_"), where)
        [finding] = lint(directory, root, ("MEM127",))
        assert finding.rel_path == "dev-shell.md" and finding.severity == "info"
        assert f"already in {where}" in finding.message
        fix = finding.fix
        assert (
            fix is not None
            and not fix.safe
            and [d.rel_path for d in fix.deletes] == ["dev-shell.md"]
        )
        index = apply_text_edits((directory / "MEMORY.md").read_text(), list(fix.edits))
        assert index == "- [Oncall](oncall.md) — who to page\n"


def test_no_project_no_instructions_finding(tmp_path: Path) -> None:
    root, directory = project_with_memory(tmp_path, "CLAUDE.md")
    assert lint(directory, None, ("MEM127",)) == []
    # A project without instruction files: nothing to repeat.
    (root / "CLAUDE.md").unlink()
    assert lint(directory, root, ("MEM127",)) == []


def test_instructions_outside_the_project_are_not_read(tmp_path: Path) -> None:
    root, directory = project_with_memory(tmp_path, "elsewhere/CLAUDE.md")
    (root / "CLAUDE.md").symlink_to(root / "elsewhere" / "CLAUDE.md")
    outside = tmp_path / "outside.md"
    outside.write_text(INSTRUCTIONS)
    (root / ".claude" / "rules").mkdir(parents=True)
    (root / ".claude" / "rules" / "linked.md").symlink_to(outside)
    # The link inside the project counts; the rule file leading out does not.
    [finding] = lint(directory, root, ("MEM127",))
    assert "already in CLAUDE.md" in finding.message
    (root / "CLAUDE.md").unlink()
    assert lint(directory, root, ("MEM127",)) == []


def test_a_project_memory_sharing_its_background_is_no_repeat(tmp_path: Path) -> None:
    """A third of the body is the instructions' rule, the rest the memory's own state: a repeat
    for a feedback memory (a rule, as the instructions are), not for a project memory, which
    often shares its background with CLAUDE.md and goes on with what is its own."""
    body = (
        "Always run the test suite inside the dev shell with `make check`; running python "
        "directly misses the native libraries.\n"
        "The billing migration is half done: invoices moved in March, refunds wait for the "
        "ledger owners to sign off, and the export job still reads the old tables nightly.\n"
    )
    shares = {}
    for type_ in ("feedback", "project"):
        root = tmp_path / type_
        write_files(root, {"CLAUDE.md": INSTRUCTIONS})
        directory = root / ".claude" / "memory"
        write_files(
            directory,
            {
                "MEMORY.md": "- [Billing](billing.md) — where the billing migration stands\n",
                "billing.md": topic("billing", "Where the billing migration stands", body).replace(
                    "type: project", f"type: {type_}"
                ),
            },
        )
        found = lint(directory, root, ("MEM127",))
        shares[type_] = [d.message.split("instructions: ")[1].split(" ")[0] for d in found]
    # Between the two bars (25% for feedback, 40% for the other types).
    [share] = shares["feedback"]
    assert 25 <= int(share.rstrip("%")) < 40
    assert shares["project"] == []
