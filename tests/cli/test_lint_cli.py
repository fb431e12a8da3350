"""``memdir lint`` on the command line: formats, exit codes, select/ignore and settings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from memdir.faces.cli import main
from memhelpers import EXAMPLES

MakeDir = Callable[..., Path]

GOOD = "integration tests must hit a real Postgres through testcontainers, never a mock"


def topic(name: str, description: str = GOOD, type_: str = "project") -> str:
    return f"---\nname: {name}\ndescription: {description}\ntype: {type_}\n---\nBody.\n"


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["lint", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def messy(make_dir: MakeDir) -> Path:
    return make_dir(
        {
            "MEMORY.md": "- [A](a.md) — alpha\n- [Gone](gone.md) — never written\n",
            "a.md": topic("a"),
            "b.md": topic("b", "deploys go out on Tuesdays after the canary bake", "Project"),
        }
    )


def test_text_format_and_exit_1(
    messy: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(messy)
    code, out, err = run(["."], capsys)
    assert code == 1
    # The severity of each finding, and [*] where `--fix` fixes it (ruff style).
    assert out.splitlines() == [
        "MEMORY.md:2:10: error MEM005 dangling link: gone.md does not exist; the agent sees this "
        "hook every session, but reading the memory fails. Write the file, fix the link or remove "
        "the entry",
        "b.md:1:1: warning MEM107 [*] orphan: invisible in index mode: not linked from MEMORY.md, "
        "and on path A the agent sees only the index; add an entry for it",
        "b.md:4:7: warning MEM104 [*] unknown type `Project`: the agent accepts only user, "
        "feedback, project or reference (case matters) and treats anything else as no type, so the "
        "manifest shows no [type] tag; did you mean `project`?",
    ]
    assert err.splitlines() == [
        "memdir lint: 2 topic files, 1 error, 2 warnings",
        "[*] 2 fixable with `memdir lint --fix`",
    ]


def test_clean_dir_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    examples = EXAMPLES
    code, out, err = run([str(examples)], capsys)
    assert (code, out) == (0, "")
    assert "12 topic files, no problems" in err


def test_info_only_exits_0_and_exit_zero(
    make_dir: MakeDir, capsys: pytest.CaptureFixture[str]
) -> None:
    long_body = "".join(f"line {i}\n" for i in range(300))
    root = make_dir(
        {"MEMORY.md": "- [A](a.md) — alpha\n", "a.md": topic("a").replace("Body.\n", long_body)}
    )
    code, out, _ = run([str(root)], capsys)
    assert code == 0 and " MEM106 " in out
    code, _, _ = run([str(root), "--select", "MEM1"], capsys)
    assert code == 0


def test_exit_zero(messy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run([str(messy), "--exit-zero"], capsys)
    assert code == 0 and "MEM005" in out


def test_select_and_ignore(messy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run([str(messy), "--select", "MEM1"], capsys)
    assert {line.split()[2] for line in out.splitlines()} == {"MEM104", "MEM107"}
    _, out, _ = run([str(messy), "--select", "mem104,MEM005"], capsys)
    assert {line.split()[2] for line in out.splitlines()} == {"MEM104", "MEM005"}
    _, out, _ = run([str(messy), "--ignore", "MEM107,MEM005"], capsys)
    assert {line.split()[2] for line in out.splitlines()} == {"MEM104"}


@pytest.mark.parametrize(
    "argv", [["--select", "MEM999"], ["--ignore", "MEM2"], ["--select", "E501"]]
)
def test_unknown_codes_exit_2_with_one_line(
    messy: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    code, out, err = run([str(messy), *argv], capsys)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert err.startswith(f"memdir lint: error: unknown code {argv[1]} in {argv[0]}")


def test_unknown_format_exits_2(messy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["lint", str(messy), "--format", "xml"])
    assert exc.value.code == 2
    assert "invalid choice: 'xml'" in capsys.readouterr().err


def test_bad_dir_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run([str(tmp_path / "nope")], capsys)
    assert code == 2 and out == ""
    assert err.strip() == f"memdir lint: error: no such directory: {tmp_path / 'nope'}"
    (tmp_path / "file.md").write_text("x", encoding="utf-8")
    code, _, err = run([str(tmp_path / "file.md")], capsys)
    assert code == 2 and "not a directory" in err


def test_unreadable_config_exits_2(messy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (messy / "memdir.toml").write_text("index_line_limit = [oops\n", encoding="utf-8")
    code, out, err = run([str(messy)], capsys)
    assert code == 2 and out == ""
    assert err.startswith("memdir lint: error: cannot read settings: ")
    assert len(err.strip().splitlines()) == 1


def test_settings_from_memdir_toml(messy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (messy / "memdir.toml").write_text(
        'ignore = ["MEM107"]\n[severity]\nMEM005 = "info"\nMEM104 = "off"\n', encoding="utf-8"
    )
    code, out, _ = run([str(messy), "--format", "json"], capsys)
    data = json.loads(out)
    assert [(d["code"], d["severity"]) for d in data] == [("MEM005", "info")]
    assert code == 0  # only info left


def test_settings_from_pyproject_and_unknown_keys_warn(
    make_dir: MakeDir, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_dir({"MEMORY.md": "- [A](a.md) — " + "x" * 100 + "\n", "a.md": topic("a")})
    (root.parent / "pyproject.toml").write_text(
        "[tool.memdir]\nindex_line_limit = 80\nbogus = 1\n", encoding="utf-8"
    )
    code, out, err = run([str(root)], capsys)
    assert code == 1 and "MEM001 index line is 114 characters (limit 80)" in out
    assert "warning" in err and "unknown setting `bogus`" in err


def test_prefetch_mode_downgrades_orphans(
    make_dir: MakeDir, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_dir({"a.md": topic("a")})
    (root / "memdir.toml").write_text('recall_mode = "prefetch"\n', encoding="utf-8")
    code, out, _ = run([str(root), "--format", "json"], capsys)
    [item] = json.loads(out)
    assert (item["code"], item["severity"]) == ("MEM107", "info")
    assert "recall_mode = prefetch" in item["message"]
    assert code == 0


def test_several_dirs_name_each_file_by_its_path(
    messy: Path, make_dir: MakeDir, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "x.md").write_text("# x\n", encoding="utf-8")
    code, out, _ = run([str(messy), str(other)], capsys)
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith(f"{messy}/MEMORY.md:2:10: error MEM005")
    assert any(line.startswith(f"{other}/x.md:1:1: error MEM101 ") for line in lines)
    _, out, _ = run([str(messy), str(other), "--format", "json"], capsys)
    roots = {item["root"] for item in json.loads(out)}
    assert roots == {str(messy), str(other)}


def test_paths_from_a_repository_root_as_pre_commit_runs_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """pre-commit runs `memdir lint .claude/memory` (its `args`) from the repository root: the
    paths printed, and those `--fix` reports, open from there."""
    repo = tmp_path / "repo"
    memory = repo / ".claude" / "memory"
    memory.mkdir(parents=True)
    (memory / "MEMORY.md").write_text("- [Gone](gone.md) — never written\n", encoding="utf-8")
    (memory / "feedback_bare.md").write_text(
        "# Reviews\n\nKeep review comments short and name the failing test.\n", encoding="utf-8"
    )
    monkeypatch.chdir(repo)
    code, out, _ = run([".claude/memory", "--select", "MEM005,MEM101"], capsys)
    assert code == 1
    assert [line.split(" ", 1)[0] for line in out.splitlines()] == [
        ".claude/memory/MEMORY.md:1:10:",
        ".claude/memory/feedback_bare.md:1:1:",
    ]
    # From a subdirectory: relative to it.
    monkeypatch.chdir(repo / ".claude")
    _, out, _ = run(["memory", "--select", "MEM005"], capsys)
    assert out.startswith("memory/MEMORY.md:1:10: error MEM005 ")
    # A memory dir outside the cwd, or --absolute-paths: absolute.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    _, out, _ = run([str(memory), "--select", "MEM005"], capsys)
    assert out.startswith(f"{memory / 'MEMORY.md'}:1:10: error MEM005 ")
    monkeypatch.chdir(repo)
    _, out, _ = run([".claude/memory", "--select", "MEM005", "--absolute-paths"], capsys)
    assert out.startswith(f"{memory / 'MEMORY.md'}:1:10: error MEM005 ")
    # JSON keeps its contract: paths relative to the memory dir.
    _, out, _ = run([".claude/memory", "--select", "MEM005", "--format", "json"], capsys)
    assert [item["path"] for item in json.loads(out)] == ["MEMORY.md"]
    _, _, err = run([".claude/memory", "--fix", "--select", "MEM101"], capsys)
    assert err.splitlines()[0] == (
        "fixed .claude/memory/feedback_bare.md (MEM101): Add frontmatter as a `feedback` memory"
    )


def test_default_dir_is_the_projects_memory_dir(
    make_dir: MakeDir,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    config = tmp_path / "claude"
    slug = "".join(c if c.isalnum() and c.isascii() else "-" for c in str(project.resolve()))
    memory = config / "projects" / slug / "memory"
    memory.mkdir(parents=True)
    (memory / "user_a.md").write_text(
        "# Ana\n\nAna reviews the backend and is new to React.\n", encoding="utf-8"
    )
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(project)
    code, out, _ = run([], capsys)
    # The memory dir is outside the project (the cwd): absolute paths, which a terminal follows.
    assert code == 1 and out.startswith(f"{memory / 'user_a.md'}:1:1: error MEM101 [*] ")


def test_no_memory_dir_yet_exits_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(project)
    code, _, err = run([], capsys)
    assert code == 2 and "no memory dir yet" in err


def test_console_script_end_to_end(messy: Path) -> None:
    """The installed entry point, as pre-commit and CI run it: no traceback, the same codes."""
    env = {**os.environ, "PYTHONWARNINGS": "error"}
    result = subprocess.run(
        [sys.executable, "-m", "memdir", "lint", str(messy), "--format", "github"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert result.stdout.startswith("::error file=")
    bad = subprocess.run(
        [sys.executable, "-m", "memdir", "lint", str(messy / "missing")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr
