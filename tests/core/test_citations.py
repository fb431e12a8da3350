"""MEM117 and MEM118 on real git histories made here: renames (committed and staged), deletions,
a removed function, a moved directory; English and Chinese memories; no finding on memories that
cite only what exists."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from memdir.config import Settings
from memdir.faces.cli import main
from memdir.fixes.citations import Form, renamed_text
from memdir.lint.diagnostic import Diagnostic
from memdir.lint.fix import apply_fixes, quick_fixes, safe_fixes
from memdir.lint.state import DirState
from memdir.project.citations import extract_citations, identifier_target, path_target
from memdir.project.listing import list_project, parse_name_status, resolve_renames
from memdir.project.lookup import Project
from memhelpers import EXAMPLES, ROOT, git, git_project, write_files

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
#: MEM117 and MEM118 are preview rules: on only with preview.
PREVIEW = Settings(preview=True)


def memory(tmp_path: Path, topics: dict[str, str]) -> Path:
    directory = tmp_path / "memory"
    write_files(directory, {"MEMORY.md": "".join(f"- [{n}]({n}) — x\n" for n in topics)})
    write_files(
        directory,
        {
            name: f"---\nname: {name}\ndescription: a fact about the project\n"
            f"type: project\n---\n{body}\n"
            for name, body in topics.items()
        },
    )
    return directory


def findings(directory: Path, project_root: Path | None) -> list[tuple[str, str, str]]:
    """(file, code, message) of every MEM117/MEM118."""
    project = Project.load(project_root, directory) if project_root is not None else None
    state = DirState(directory, PREVIEW, project)
    state.refresh()
    return [
        (d.rel_path, d.code, d.message)
        for d in state.lint().diagnostics
        if d.code in ("MEM117", "MEM118")
    ]


CODE = {
    "src/app/old.py": "def retry_payment(order):\n    return charge_card(order)\n",
    "src/app/cards.py": "def charge_card(order):\n    pass\n",
    "lib/util.py": "MAX_RETRIES = 3\n",
    "lib/text.py": "def slugify(x):\n    return x\n",
    "Makefile": "deploy:\n\t./scripts/deploy.sh --dry-run\n",
    "scripts/deploy.sh": "#!/bin/sh\n",
    "jobs/retention.yaml": "retention_days: 90\n",
}


# --- extraction ----------------------------------------------------------------------------------


def test_extraction_is_conservative() -> None:
    text = (
        "See `src/app/old.py:12`, [the cards](src/app/cards.py#L3) and lib/util.py. Run "
        "`make deploy`, pass `--dry-run`, call `retry_payment()`, `stripe.Charge`, `DirState`.\n"
        "Not: `true`, `v1.2.3`, `path/to/file.py`, `foo/bar`, `git log --oneline`, `lint`, "
        "`e.g.`, https://github.com/a/b.py, `~/.claude/settings.json`, `/etc/hosts`, "
        "`../up.py`, `*.py`, `settings.json`, `well-known`, read/write, `-v`, `<dir>/x.py`.\n"
        "```\nsrc/in_a_fence.py `fenced_name`\n```\n"
    )
    cited = [(c.kind, c.target) for c in extract_citations(text)]
    assert cited == [
        ("path", "src/app/old.py"),
        ("path", "src/app/cards.py"),
        ("path", "lib/util.py"),
        ("identifier", "deploy"),
        ("identifier", "dry-run"),
        ("identifier", "retry_payment"),
        ("identifier", "Charge"),
        ("identifier", "DirState"),
    ]


@pytest.mark.parametrize("blank", ["\u3000", "\t", " \u00a0 "])
def test_a_code_span_of_blanks_cites_nothing(blank: str) -> None:
    # Shift names split by a full-width space, written `　`: no citation, and no crash (it
    # was an internal error of `memdir lint --preview` on a real directory).
    text = f"The export separates shifts with `{blank}` and then calls `split_shifts()`.\n"
    assert [(c.kind, c.target) for c in extract_citations(text)] == [("identifier", "split_shifts")]


def test_extraction_in_chinese_text() -> None:
    text = (
        "新建日志表时，在`jobs/retention.yaml`里加一条；代码见src/app/cards.py的`charge_card`函数。"
    )
    cited = [(c.kind, c.text) for c in extract_citations(text)]
    assert cited == [
        ("path", "jobs/retention.yaml"),
        ("path", "src/app/cards.py"),
        ("identifier", "charge_card"),
    ]
    # A path that runs on in Chinese characters is not cut into a shorter, wrong one.
    assert extract_citations("见src/app/新模块.py") == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("./src/a.py", "src/a.py"),
        ("src/a.py:3:4", "src/a.py"),
        ("web/", "web/"),
        ("cards.py", "cards.py"),
        ("settings.json", None),
        ("github.com/a/b", None),
        ("your-project/src/a.py", None),
    ],
)
def test_path_target(text: str, expected: str | None) -> None:
    assert path_target(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("snake_case", "snake_case"),
        ("camelCase", "camelCase"),
        ("--flag-name", "flag-name"),
        ("main()", "main"),
        ("Charge", None),
        ("NULL", None),
        ("memdir.toml", None),
        ("1.2.3", None),
        ("CONSTANT", None),
    ],
)
def test_identifier_target(text: str, expected: str | None) -> None:
    assert identifier_target(text) == expected


# --- renames -------------------------------------------------------------------------------------


def test_rename_parsing_follows_chains_and_moved_directories() -> None:
    raw = b"R100\0a.py\0b.py\0R090\0lib/x.py\0pkg/x.py\0M\0c.py\0"
    pairs = parse_name_status(raw)
    assert pairs == [("a.py", "b.py"), ("lib/x.py", "pkg/x.py")]
    files = frozenset({"c.py", "pkg/x.py", "pkg/y.py"})
    renames = resolve_renames([("a.py", "b.py"), ("b.py", "c.py"), *pairs[1:]], files)
    assert renames == {"a.py": "c.py", "b.py": "c.py", "lib/x.py": "pkg/x.py", "lib": "pkg"}


def test_committed_rename_says_where_the_file_went(tmp_path: Path) -> None:
    root = git_project(tmp_path, CODE)
    directory = memory(
        tmp_path,
        {"retry.md": "Retries live in `src/app/old.py`; see also [cards](src/app/cards.py)."},
    )
    assert findings(directory, root) == []
    git(root, "mv", "src/app/old.py", "src/app/new.py")
    git(root, "commit", "-q", "-m", "rename")
    assert findings(directory, root) == [
        (
            "retry.md",
            "MEM117",
            "`src/app/old.py` no longer exists in the project; git shows it was renamed to "
            "`src/app/new.py`: update the memory, or the agent will look for the old path",
        )
    ]


def test_staged_rename_is_seen_before_the_commit(tmp_path: Path) -> None:
    root = git_project(tmp_path, CODE)
    directory = memory(tmp_path, {"retry.md": "Retries: src/app/old.py."})
    git(root, "mv", "src/app/old.py", "src/app/retry.py")
    [(_, code, message)] = findings(directory, root)
    assert code == "MEM117" and "renamed to `src/app/retry.py`" in message


def test_deleted_file_and_ignored_file(tmp_path: Path) -> None:
    root = git_project(tmp_path, {**CODE, ".gitignore": "build/\n"})
    write_files(root, {"build/out.js": "x", "notes/draft.py": "untracked = 1\n"})
    directory = memory(
        tmp_path,
        {
            "a.md": "The job is in `jobs/retention.yaml`; the bundle is `build/out.js`; "
            "draft in `notes/draft.py`.",
        },
    )
    assert findings(directory, root) == []
    git(root, "rm", "-q", "jobs/retention.yaml")
    git(root, "commit", "-q", "-m", "drop retention job")
    [(_, code, message)] = findings(directory, root)
    assert code == "MEM117"
    assert message.startswith(
        "`jobs/retention.yaml` no longer exists in the project; git shows it was deleted"
    )


def test_paths_that_may_live_elsewhere_are_left_alone(tmp_path: Path) -> None:
    root = git_project(tmp_path, CODE)
    directory = memory(
        tmp_path,
        {
            "a.md": "CI is `fleet-backend/.github/workflows/ci.yml`; branch `release/app-x.y`; "
            "`read/write`; see `src/app/missing.py` and `src/gone/`.",
        },
    )
    # Only paths inside the project's own top-level directories are reported without git's word.
    assert [m.split("`")[1] for _, _, m in findings(directory, root)] == [
        "src/app/missing.py",
        "src/gone/",
    ]


def test_moved_directory(tmp_path: Path) -> None:
    root = git_project(tmp_path, CODE)
    directory = memory(tmp_path, {"util.md": "Helpers are in `lib/`, limits in lib/util.py."})
    assert findings(directory, root) == []
    git(root, "mv", "lib", "pkg")
    git(root, "commit", "-q", "-m", "move lib")
    messages = [message for _, _, message in findings(directory, root)]
    assert messages == [
        "`lib/` no longer exists in the project; git shows it was renamed to `pkg`: update the "
        "memory, or the agent will look for the old path",
        "`lib/util.py` no longer exists in the project; git shows it was renamed to "
        "`pkg/util.py`: update the memory, or the agent will look for the old path",
    ]


def test_removed_function_and_flag(tmp_path: Path) -> None:
    root = git_project(tmp_path, CODE)
    directory = memory(
        tmp_path,
        {
            "pay.md": "Call `retry_payment()` before `charge_card()`; deploy with `make deploy` "
            "and `--dry-run`.",
        },
    )
    assert findings(directory, root) == []
    write_files(
        root, {"src/app/old.py": "def retry_order(order):\n    pass\n", "Makefile": "ship:\n"}
    )
    git(root, "mv", "scripts/deploy.sh", "scripts/ship.sh")
    git(root, "commit", "-q", "-am", "rename things")
    found = findings(directory, root)
    assert [(code, message.split("`")[1]) for _, code, message in found] == [
        ("MEM118", "retry_payment()"),
        ("MEM118", "deploy"),
        ("MEM118", "--dry-run"),
    ]
    assert "appears nowhere in the project any more" in found[0][2]


def test_chinese_memory(tmp_path: Path) -> None:
    root = git_project(tmp_path, CODE)
    directory = memory(
        tmp_path,
        {
            "保留.md": "新建日志表时，同时在 `jobs/retention.yaml` 里加一条 90 天的清理任务；"
            "重试逻辑见src/app/old.py的`retry_payment`。",
        },
    )
    assert findings(directory, root) == []
    git(root, "mv", "jobs/retention.yaml", "jobs/cleanup.yaml")
    write_files(root, {"src/app/old.py": "def retry(order):\n    pass\n"})
    git(root, "commit", "-q", "-am", "重命名")
    found = findings(directory, root)
    assert [code for _, code, _ in found] == ["MEM117", "MEM118"]
    assert "renamed to `jobs/cleanup.yaml`" in found[0][2]


def test_memory_dir_inside_the_project_does_not_vouch_for_itself(tmp_path: Path) -> None:
    root = git_project(tmp_path, CODE)
    directory = root / ".claude" / "memory"
    write_files(
        directory,
        {
            "MEMORY.md": "- [a](a.md) — x\n",
            "a.md": "---\nname: a\ndescription: d\ntype: project\n---\n"
            "Use `gone_helper()`; see [b](b.md), `reference/x.md`, [gone](notes/gone.md).\n",
            "b.md": "---\nname: b\ndescription: d\ntype: project\n---\nMentions gone_helper.\n",
            "reference/x.md": "x\n",
        },
    )
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "memory")
    assert [(rel, code) for rel, code, _ in findings(directory, root)] == [("a.md", "MEM118")]


# --- no false findings ---------------------------------------------------------------------------


def test_examples_against_the_project_they_describe(tmp_path: Path) -> None:
    root = git_project(
        tmp_path,
        {
            "internal/store/orders.go": "type OrderRepository struct{}\n",
            "jobs/retention.yaml": "days: 90\n",
            "payments/intents.go": "// replaces stripe.Charge\n",
            "web/index.ts": "export {}\n",
        },
    )
    copy = tmp_path / "examples"
    shutil.copytree(EXAMPLES, copy)
    assert findings(copy, root) == []


def test_a_memory_citing_only_what_exists_in_this_repository(tmp_path: Path) -> None:
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    directory = memory(
        tmp_path,
        {
            "lint.md": "The cache is `DirState` in `memory/memdir/lint/state.py` (also "
            "lint/state.py); rule pages come from `memdir/lint/docs.py` via "
            "`python -m memdir.lint.docs`. See [the CLI docs](docs/cli.md) and `--project`.",
            "中文.md": "规则注册在`memory/memdir/lint/rules/__init__.py`的`check_topic`里。",
        },
    )
    assert findings(directory, ROOT) == []


def test_no_project_no_findings_and_nothing_loaded(tmp_path: Path) -> None:
    directory = memory(tmp_path, {"a.md": "See `src/gone.py` and `gone_function()`."})
    assert findings(directory, None) == []
    script = (
        "import sys\nfrom memdir.faces.cli import main\n"
        f"main(['lint', {str(directory)!r}, '--exit-zero', '--preview'])\n"
        "assert 'memdir.project.lookup' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True, capture_output=True)


# --- outside git, and incremental updates --------------------------------------------------------


def test_plain_directory_is_walked(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    write_files(
        root,
        {
            "src/a.py": "def keep_me():\n    pass\n",
            "src/b.py": "",
            "node_modules/x/gone.js": "gone_js\n",
        },
    )
    listing = list_project(root)
    assert not listing.git and listing.complete
    assert listing.files == {"src/a.py", "src/b.py"}
    directory = memory(
        tmp_path, {"a.md": "`src/a.py` has `keep_me()`; `node_modules/x/gone.js` too."}
    )
    # Skipped by the walk, but on disk: not reported.
    assert findings(directory, root) == []
    (root / "src" / "a.py").unlink()
    assert [code for _, code, _ in findings(directory, root)] == ["MEM117", "MEM118"]


def test_project_updates_one_file_at_a_time(tmp_path: Path) -> None:
    root = git_project(tmp_path, CODE)
    project = Project.load(root)
    assert project.has_word("retry_payment")
    project.update_file("src/app/old.py", b"def other():\n    pass\n")
    assert not project.has_word("retry_payment") and project.has_word("other")
    project.update_file("src/new.py", b"retry_payment = None\n")
    assert project.has_word("retry_payment") and project.exists("src/new.py")
    project.remove_file("src/new.py")
    assert not project.has_word("retry_payment") and not project.exists("src/new.py")


# --- the command line ----------------------------------------------------------------------------


def test_cli_project_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = git_project(tmp_path, CODE)
    directory = memory(tmp_path, {"a.md": "See `src/app/gone.py`."})
    assert main(["lint", str(directory), "--project", str(root), "--preview"]) == 1
    out, _ = capsys.readouterr()
    assert "MEM117 `src/app/gone.py` does not exist in the project" in out
    # No project: not checked, and said when the codes are asked for.
    assert main(["lint", str(directory), "--preview"]) == 0
    assert main(["lint", str(directory), "--select", "MEM117", "--preview"]) == 0
    _, err = capsys.readouterr()
    assert err.count("pass --project ROOT") == 1
    assert main(["lint", str(directory), "--project", str(tmp_path / "nope")]) == 2


def test_names_of_other_systems_are_left_alone(tmp_path: Path) -> None:
    root = git_project(tmp_path, {**CODE, "src/app/redact.py": "def phone(x):\n    return x\n"})
    directory = memory(
        tmp_path,
        {"a.md": "Query `tracks.gps_points_all`; call `redact.address()`, not `redact.phone()`."},
    )
    write_files(
        directory,
        {
            "grafana.md": "---\nname: grafana\ndescription: dashboards\ntype: reference\n---\n"
            "Panel `dispatch_is_leader` on the fleet board.\n"
        },
    )
    # The table's schema is not in this project; `redact` is, and has no `address` any more.
    assert [m.split("`")[1] for _, _, m in findings(directory, root)] == ["redact.address()"]


def test_cli_default_is_the_project_of_the_agents_memory_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = git_project(tmp_path, CODE)
    config = tmp_path / "claude"
    slug = "".join(c if c.isalnum() and c.isascii() else "-" for c in str(root.resolve()))
    agent_memory = config / "projects" / slug / "memory"
    write_files(
        agent_memory,
        {
            "MEMORY.md": "- [a](a.md) — where retries live\n",
            "a.md": "---\nname: a\ndescription: where retries live\ntype: project\n---\n"
            "Retries: `src/app/gone.py`, `retry_payment()`.\n",
        },
    )
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(root)
    assert main(["lint", "--select", "MEM117,MEM118", "--preview"]) == 1
    out, err = capsys.readouterr()
    assert [line.split(" ")[2] for line in out.splitlines()] == ["MEM117"]
    assert "pass --project" not in err


def test_one_pass_lookup_agrees_with_the_word_index(tmp_path: Path) -> None:
    root = git_project(tmp_path, {**CODE, ".gitignore": "ignored/\n"})
    write_files(
        root, {".claude/memory/a.md": "only_in_memory\n", "ignored/x.py": "only_ignored = 1\n"}
    )
    write_files(root, {"untracked.py": "only_untracked = 1\n"})
    words = ["retry_payment", "deploy", "dry-run", "only_in_memory", "only_ignored"]
    words += ["only_untracked", "nothing_here"]
    batch = Project.load(root, root / ".claude" / "memory")
    batch.find_words(words)
    index = Project.load(root, root / ".claude" / "memory")
    verdicts = {word: batch.has_word(word) for word in words}
    assert verdicts == {word: index.has_word(word) for word in words}
    assert verdicts == {
        "retry_payment": True,
        "deploy": True,
        "dry-run": True,
        "only_in_memory": False,
        "only_ignored": False,
        "only_untracked": True,
        "nothing_here": False,
    }


def test_the_index_is_checked_too(tmp_path: Path) -> None:
    root = git_project(tmp_path, CODE)
    directory = memory(tmp_path, {"a.md": "Nothing cited."})
    with (directory / "MEMORY.md").open("a", encoding="utf-8") as index:
        index.write("- [Retries](a.md) — retries live in `src/app/old.py`\n")
    assert findings(directory, root) == []
    git(root, "mv", "src/app/old.py", "src/app/retry.py")
    [(rel, code, message)] = findings(directory, root)
    assert (rel, code) == ("MEMORY.md", "MEM117") and "`src/app/retry.py`" in message


# --- the fix: replace a renamed path with its new one -----------------------------------------


def diagnostics(directory: Path, project_root: Path) -> list[Diagnostic]:
    state = DirState(directory, PREVIEW, Project.load(project_root, directory))
    state.refresh()
    return [d for d in state.lint().diagnostics if d.code in ("MEM117", "MEM118")]


def fix_all(directory: Path, project_root: Path) -> None:
    """Every MEM117 fix applied through the one write path (what a person accepts in the
    editor); then the rule is clean."""
    found = diagnostics(directory, project_root)
    assert found and all(d.fix is not None and not d.fix.safe for d in found)
    # `memdir lint --fix` leaves them alone: git's rename detection is a guess.
    assert apply_fixes(found).applied == ()
    report = apply_fixes(found, safe_only=False)
    assert len(report.applied) == len(found) and not report.skipped
    assert diagnostics(directory, project_root) == []


def body(directory: Path, name: str) -> str:
    return (directory / name).read_text(encoding="utf-8").split("---\n", 2)[2]


@pytest.mark.parametrize(
    ("cited", "new", "form", "tail", "expected"),
    [
        ("src/app/old.py", "src/app/new.py", "code", False, "src/app/new.py"),
        ("./src/app/old.py:12", "src/app/new.py", "code", False, "./src/app/new.py:12"),
        ("src/app/old.py:12:3", "src/app/new.py", "bare", False, "src/app/new.py:12:3"),
        ("src/app/old.py#L10-L20", "src/app/new.py", "code", False, "src/app/new.py#L10-L20"),
        ("lib/", "pkg", "code", False, "pkg/"),
        ("app/old.py", "src/app/new.py", "code", True, "app/new.py"),
        ("src/app/old.py", "src/app/new name.py", "link", False, "src/app/new%20name.py"),
    ],
)
def test_renamed_text_keeps_the_form(
    cited: str, new: str, form: Form, tail: bool, expected: str
) -> None:
    assert renamed_text(cited, new, form, tail=tail, unique_tail=lambda _: True) == expected


def test_renamed_text_falls_back_to_the_full_path_or_nothing() -> None:
    # A tail that names more than one project path, or a new path shorter than the tail.
    assert renamed_text("lint/state.py", "pkg/check/state.py", "code", tail=True,
                        unique_tail=lambda _: False) == "pkg/check/state.py"  # fmt: skip
    assert renamed_text("a/b/c.py", "c.py", "code", tail=True, unique_tail=lambda _: True) == (
        "c.py"
    )
    # What the form cannot hold: a backtick in a code span, a space in a bare path.
    assert renamed_text("src/a.py", "src/a`b.py", "code") is None
    assert renamed_text("src/a.py", "src/a b.py", "bare") is None
    assert renamed_text("src/a.py", "src/a b.py", "code") == "src/a b.py"


def test_fix_for_a_renamed_file_in_every_form(tmp_path: Path) -> None:
    root = git_project(tmp_path, CODE)
    directory = memory(
        tmp_path,
        {
            "retry.md": "Retries: `src/app/old.py:12`, [the loop](src/app/old.py#L3), "
            "see ./src/app/old.py and `src/app/old.py#L10`.",
        },
    )
    git(root, "mv", "src/app/old.py", "src/app/retry.py")
    git(root, "commit", "-q", "-m", "rename")
    [first, *_] = diagnostics(directory, root)
    assert first.fix is not None
    assert first.fix.title == (
        "Replace `src/app/old.py:12` with `src/app/retry.py:12` (git shows it was renamed)"
    )
    fix_all(directory, root)
    assert body(directory, "retry.md") == (
        "Retries: `src/app/retry.py:12`, [the loop](src/app/retry.py#L3), "
        "see ./src/app/retry.py and `src/app/retry.py#L10`.\n"
    )


def test_fix_for_a_file_cited_by_its_tail(tmp_path: Path) -> None:
    files = {**CODE, "pkg/lint/state.py": "class DirState: ...\n", "tools/check/state.py": ""}
    root = git_project(tmp_path, files)
    directory = memory(tmp_path, {"a.md": "The cache is in `lint/state.py`."})
    assert diagnostics(directory, root) == []
    git(root, "mv", "pkg/lint", "pkg/cache")
    git(root, "commit", "-q", "-m", "move")
    fix_all(directory, root)
    assert body(directory, "a.md") == "The cache is in `cache/state.py`.\n"
    # The same tail would name two files: the full new path instead.
    git(root, "mv", "pkg/cache", "pkg/check")
    git(root, "commit", "-q", "-m", "move again")
    (directory / "a.md").write_text(
        (directory / "a.md").read_text(encoding="utf-8").replace("cache/state.py", "lint/state.py"),
        encoding="utf-8",
    )
    fix_all(directory, root)
    assert body(directory, "a.md") == "The cache is in `pkg/check/state.py`.\n"


def test_fix_for_a_moved_directory(tmp_path: Path) -> None:
    root = git_project(tmp_path, CODE)
    directory = memory(
        tmp_path,
        {"util.md": "Helpers are in `lib/`, limits in lib/util.py:1 and [text](lib/text.py)."},
    )
    git(root, "mv", "lib", "pkg")
    git(root, "commit", "-q", "-m", "move lib")
    fix_all(directory, root)
    assert body(directory, "util.md") == (
        "Helpers are in `pkg/`, limits in pkg/util.py:1 and [text](pkg/text.py).\n"
    )


def test_fix_in_a_chinese_memory_and_in_the_index(tmp_path: Path) -> None:
    root = git_project(tmp_path, CODE)
    directory = memory(
        tmp_path,
        {"保留.md": "新建日志表时，同时在`jobs/retention.yaml:2`里加一条；代码见src/app/old.py。"},
    )
    with (directory / "MEMORY.md").open("a", encoding="utf-8") as index:
        index.write("- [重试](保留.md) — 见 `src/app/old.py`\n")
    git(root, "mv", "jobs/retention.yaml", "jobs/cleanup.yaml")
    git(root, "mv", "src/app/old.py", "src/app/retry.py")
    git(root, "commit", "-q", "-m", "重命名")
    fix_all(directory, root)
    assert body(directory, "保留.md") == (
        "新建日志表时，同时在`jobs/cleanup.yaml:2`里加一条；代码见src/app/retry.py。\n"
    )
    assert "— 见 `src/app/retry.py`\n" in (directory / "MEMORY.md").read_text(encoding="utf-8")


def test_no_fix_without_a_rename(tmp_path: Path) -> None:
    root = git_project(tmp_path, CODE)
    directory = memory(
        tmp_path, {"a.md": "The job is `jobs/retention.yaml`; see `src/app/gone.py`."}
    )
    git(root, "rm", "-q", "jobs/retention.yaml")
    git(root, "commit", "-q", "-m", "drop")
    found = diagnostics(directory, root)
    assert [d.code for d in found] == ["MEM117", "MEM117"]
    assert all(d.fix is None for d in found)


def test_the_editor_offers_the_fix(tmp_path: Path) -> None:
    root = git_project(tmp_path, CODE)
    directory = memory(tmp_path, {"a.md": "See `src/app/old.py`."})
    git(root, "mv", "src/app/old.py", "src/app/new.py")
    [found] = diagnostics(directory, root)
    assert quick_fixes(found) == [found.fix]
    assert safe_fixes([found]) == []


# --- flags of other programs ---------------------------------------------------------------------


def test_flags_of_other_programs_are_not_checked(tmp_path: Path) -> None:
    root = git_project(tmp_path, CODE)
    directory = memory(
        tmp_path,
        {
            "tools.md": "Hooks hang: `git commit --no-verify`. Run `npm install "
            "--legacy-peer-deps`, `pytest -x --lf` and `docker run --rm`.\n"
            "Commit with `git commit` and `--no-verify`. Or git commit `--no-verify-hooks`.\n"
            "`npm install` needs `--legacy-peer-deps`; run pytest with `--last-failed`.\n"
            "`FOO=1 ./vendor/bin/tool --x` takes `--other-flag`.\n"
            "用 git 提交时别加`--no-verify`。",
        },
    )
    assert findings(directory, root) == []


def test_flags_of_the_projects_own_programs_are_checked(tmp_path: Path) -> None:
    root = git_project(tmp_path, {**CODE, "src/app/cli.py": "prog = 'shipit'\n"})
    directory = memory(
        tmp_path,
        {
            "deploy.md": "Run `./scripts/deploy.sh` with `--dry-run-all`. "
            "Run `shipit now` with `--gone-flag`. Always pass `--removed-flag`.\n"
            "`make deploy` takes `--dry-run`; git is not named in this sentence, but is here: "
            "git `--amend`.",
        },
    )
    found = [message.split("`")[1] for _, _, message in findings(directory, root)]
    assert found == ["--dry-run-all", "--gone-flag", "--removed-flag"]


def test_examples_and_this_repository_as_the_project(tmp_path: Path) -> None:
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    copy = tmp_path / "examples"
    shutil.copytree(EXAMPLES, copy)
    assert findings(copy, ROOT) == []


# --- issue 28: the misfire families of real directories ------------------------------------------


@pytest.mark.parametrize("in_git", [True, False])
def test_ignored_build_output_and_runtime_data_are_not_missing(
    tmp_path: Path, in_git: bool
) -> None:
    """A fresh checkout lacks what the project ignores (a build, a cache, runtime data): the
    memory is right that the machine running the project has it. In git, git says; in a plain
    copy (an unpacked archive), the .gitignore files are read."""
    files = {
        **CODE,
        ".gitignore": "# runtime data\nvar/sessions/\n*.sqlite\n",
        "web/.gitignore": "dist/\n",
        "web/main.ts": "export const x = 1\n",
        "var/keep.txt": "",
    }
    if in_git:
        root = git_project(tmp_path, files)
    else:
        root = tmp_path / "plain"
        write_files(root, files)
    directory = memory(
        tmp_path,
        {
            "deploy.md": "nginx serves `web/dist` after the build; sessions land in "
            "`var/sessions/today.json` and the cache in `var/cache.sqlite`. "
            "The entry point is `web/app.ts`.",
        },
    )
    assert [m.split("`")[1] for _, _, m in findings(directory, root)] == ["web/app.ts"]


def test_gitignore_reading() -> None:
    from memdir.project.ignore import parse

    patterns = parse("# c\n/build\n**/tmp/**\n*.log\n!keep.log\nout/\n\\#literal\n")
    kinds = [(p.pattern, negated, dir_only) for p, negated, dir_only in patterns]
    assert kinds[0][0].startswith("build") and not kinds[0][1]
    assert [k[1] for k in kinds] == [False, False, False, True, False, False]
    assert [k[2] for k in kinds] == [False, False, False, False, True, False]


def test_ignored_checks_every_level(tmp_path: Path) -> None:
    from memdir.project.ignore import ignored

    write_files(
        tmp_path,
        {
            ".gitignore": "/build\n*.log\n!important.log\nlogs/**/raw/\n",
            "app/.gitignore": "generated/\n",
        },
    )
    assert ignored(tmp_path, "build/x.js") and not ignored(tmp_path, "src/build/x.js")
    assert ignored(tmp_path, "a/b/debug.log") and not ignored(tmp_path, "important.log")
    assert ignored(tmp_path, "logs/2026/raw/x.txt") and not ignored(tmp_path, "logs/x.txt")
    assert ignored(tmp_path, "app/generated/api.ts") and not ignored(tmp_path, "generated/a.ts")
    assert ignored(tmp_path, "app/generated")  # cited without a slash: may be the directory
    assert not ignored(tmp_path, "app/../build/x.js")


def test_templates_and_placeholders_are_not_paths_or_names(tmp_path: Path) -> None:
    root = git_project(tmp_path, CODE)
    directory = memory(
        tmp_path,
        {
            "checklist.md": "1. Write today's log to `src/logs/YYYY-MM-DD.md`.\n"
            "2. Create the view `src/views/NombreView.jsx` and `src/app/xxx_handler.py`.\n"
            "3. Name handlers like `CreateSomethingHandler`, clients like `FooApiClient`.\n",
        },
    )
    assert findings(directory, root) == []


def test_history_plans_and_other_places_are_not_claims(tmp_path: Path) -> None:
    """A sentence telling that a path or name was deleted, renamed or is deprecated, that it is
    planned, or that it lives on another branch or repository claims nothing about the project
    now; the sentence beside it still does."""
    root = git_project(tmp_path, CODE)
    directory = memory(
        tmp_path,
        {
            "story.md": "We deleted `src/app/legacy_sync.py` last spring. "
            "The report is `src/app/report.md` on the release branch. "
            "`src/app/plan.py` will hold the scheduler. "
            "Retry used `retry_forever()` before it was removed; "
            "the next step is a `pause_queue()` helper (planned). "
            "`lib/old_shim.py` is deprecated. "
            "The writer is `src/app/writer.py`.",
            "renames.md": "- `fetch_all` → `load_all` in the client.\n"
            "- `src/app/viz.sh` and `src/app/viz_node.py` are historical/deprecated now.\n",
        },
    )
    assert [m.split("`")[1] for _, _, m in findings(directory, root)] == ["src/app/writer.py"]


def test_shorthand_is_found_and_an_extension_variant_suggested(tmp_path: Path) -> None:
    root = git_project(
        tmp_path, {**CODE, "db/054_seed_plans.sql": "", "web/App.tsx": "export {}\n"}
    )
    directory = memory(tmp_path, {"db.md": "Seed data: `db/054`. The shell is `web/App.jsx`."})
    [(_, code, message)] = findings(directory, root)
    assert code == "MEM117"
    assert message.startswith(
        "`web/App.jsx` does not exist in the project; did you mean `web/App.tsx`?"
    )


def test_a_dated_log_tells_history(tmp_path: Path) -> None:
    root = git_project(tmp_path, CODE)
    directory = memory(
        tmp_path,
        {
            "2026-03-14.md": "- `src/app/since_removed.py` — modified\n- called `gone_helper()`\n",
            "notes.md": "`src/app/since_removed.py` holds the sync.",
        },
    )
    assert [(rel, code) for rel, code, _ in findings(directory, root)] == [("notes.md", "MEM117")]


def test_names_of_code_kept_elsewhere_are_not_checked(tmp_path: Path) -> None:
    """A memory dir whose cited names the project mostly lacks (a dotfiles repository holding
    the memory of other work, notes on an upstream codebase) is about code kept elsewhere: a
    missing name there says nothing. Claude Code's own tools are never the project's."""
    root = git_project(tmp_path, CODE)
    elsewhere = [f"`kernel_probe_{i}()`" for i in range(12)]
    directory = memory(
        tmp_path,
        {
            "kernel.md": "Upstream driver work: " + ", ".join(elsewhere) + ", `charge_card()`.",
            "agent.md": "Never use `AskUserQuestion`; send `SendMessage` to the subagent.",
            "accounts.md": "The ad account is `act_313402723484124` (an id, not a name).",
        },
    )
    assert findings(directory, root) == []
    # The same names in a memory dir that is about this project: reported.
    own = ["`charge_card()`, `retry_payment()`, `slugify()`, `MAX_RETRIES`"] * 4
    directory2 = memory(
        tmp_path / "two",
        {"a.md": " ".join(own) + " and `vanished_helper()`."},
    )
    assert [m.split("`")[1] for _, _, m in findings(directory2, root)] == ["vanished_helper()"]
