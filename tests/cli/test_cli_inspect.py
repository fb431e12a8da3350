from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import pytest
from memdir.agent.index import render_entry
from memdir.faces.cli import main
from memhelpers import EXAMPLES, run_memdir, topic


def test_where_prints_only_the_path(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    env = {**os.environ, "CLAUDE_CONFIG_DIR": str(tmp_path / "cfg")}
    proc = run_memdir("where", str(project / ".git" / ".."), env=env)
    assert proc.returncode == 0, proc.stderr
    slug = "-" + str(project.resolve()).strip("/").replace("/", "-").replace("_", "-")
    assert proc.stdout == f"{tmp_path / 'cfg' / 'projects' / slug / 'memory'}\n"
    data = json.loads(run_memdir("where", str(project), "--json", env=env).stdout)
    assert data["project_root"] == str(project.resolve())
    assert data["exists"] is False


def test_index_prints_exactly_the_injected_text(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["index", "--dir", str(EXAMPLES)]) == 0
    out, err = capsys.readouterr()
    assert out == (EXAMPLES / "MEMORY.md").read_text().strip() + "\n"
    assert "12/200 lines" in err and "12 entries" in err


def test_index_json_reports_cut_entries(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "MEMORY.md").write_text(
        "\n".join(render_entry(f"M{i}", f"m{i}.md", "h") for i in range(203))
    )
    assert main(["index", "--dir", str(tmp_path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["truncated"] is True
    assert data["reason"] == "203 lines (limit: 200)"
    assert [c["path"] for c in data["cut_entries"]] == ["m200.md", "m201.md", "m202.md"]
    assert data["cut_entries"][0]["line"] == 201
    assert data["text"].endswith("move detail into topic files.")


def test_manifest_text_and_json(make_dir, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    root = make_dir({"a.md": topic("a", "first"), "b.md": topic("b", "second", "user")})
    assert main(["manifest", "--dir", str(root)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("- [user] b.md (2023-11-14T22:13:21.000Z): second")
    assert main(["manifest", "--dir", str(root), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [c["path"] for c in data["candidates"]] == ["b.md", "a.md"]
    assert data["cut_off"] == []


def test_show_matches_surface_and_refuses_outside(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["show", "--dir", str(EXAMPLES), "reference/reference-linear.md", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["path"] == "reference/reference-linear.md"
    assert data["truncated"] is False
    assert data["text"].startswith("Memory: ")
    assert data["text"].split("\n")[0].endswith("reference/reference-linear.md:")
    assert main(["show", "--dir", str(EXAMPLES), "user-role.md", "--target", "seed"]) == 0
    assert capsys.readouterr().out.startswith("Memory (saved ")
    (tmp_path / "outside.md").write_text("x")
    proc = run_memdir("show", "--dir", str(EXAMPLES), str(tmp_path / "outside.md"))
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "outside the memory dir" in proc.stderr
    proc = run_memdir("show", "--dir", str(EXAMPLES), "../../README.md")
    assert proc.returncode == 2 and "outside the memory dir" in proc.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["index", "--dir", "/no/such/dir"], "no such directory"),
        (["show", "--dir", str(EXAMPLES), "missing.md"], "no such file"),
        (["show", "--dir", str(EXAMPLES), "MEMORY.md"], "never surfaced on path B"),
        (["where", "/no/such/project"], "no such path"),
        (["manifest", "--bogus"], "unrecognized arguments"),
    ],
)
def test_user_errors_are_one_line_exit_2(args: list[str], message: str) -> None:
    proc = run_memdir(*args)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert proc.stderr.count("\n") == 1
    assert "Traceback" not in proc.stderr


def test_default_dir_is_the_projects_memory_dir(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    env = {**os.environ, "CLAUDE_CONFIG_DIR": str(tmp_path / "cfg")}
    proc = run_memdir("manifest", cwd=project, env=env)
    assert proc.returncode == 2 and "has no memory dir yet" in proc.stderr
    slug = str(project.resolve()).replace("/", "-").replace("_", "-")
    memdir = tmp_path / "cfg" / "projects" / slug / "memory"
    memdir.mkdir(parents=True)
    (memdir / "a.md").write_text(topic("a", "hello"))
    proc = run_memdir("manifest", cwd=project, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.endswith("a.md (" + proc.stdout.split("(")[1].split(")")[0] + "): hello\n")


def _commands(parser: argparse.ArgumentParser) -> list[str]:
    [action] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return list(action.choices)


def test_a_run_parses_only_its_own_subcommand() -> None:
    from memdir.faces.cli import _MODULES, build_parser

    listed = [command for commands in _MODULES.values() for command in commands]
    assert _commands(build_parser()) == listed  # the table names what the modules register
    for commands in _MODULES.values():
        for command in commands:
            assert _commands(build_parser(command)) == list(commands)
