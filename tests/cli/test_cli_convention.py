"""One command-line convention: every command that works on a memory dir takes it the same way
(a positional ``DIR`` after the command's own positionals, ``--dir`` its alias, the current
project's memory dir without either) and every human output names a file the same way
(relative to the working directory when it lies there, else absolute)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from memdir.agent.index import render_entry
from memdir.faces.cli import main
from memhelpers import topic

MakeDir = Callable[[dict[str, str | bytes]], Path]

#: Each command that works on one memory dir: its own positionals, then options that may stand
#: between them and DIR. Each finishes here (no model, no server).
FINISHING: dict[str, tuple[list[str], list[str]]] = {
    "index": ([], ["--json"]),
    "manifest": ([], ["--json"]),
    "show": (["deploy.md"], ["--json"]),
    "search": (["stag+ing"], ["--glob", "*.md"]),
    "recall": (["how do we deploy to staging?"], ["--selector", "lexical"]),
    "tool": (['{"command": "view", "path": "/memories"}'], []),
    "lint": ([], ["--format", "json", "--exit-zero"]),
}
#: Every command that takes a memory dir. `where` takes a project path, `rule` no dir and
#: `hook` the hook input's cwd, so they are not among them.
ALL = [*FINISHING, "extract", "mcp"]

FILES: dict[str, str | bytes] = {
    "MEMORY.md": render_entry("Deploy", "deploy.md", "how we deploy to staging") + "\n",
    "deploy.md": topic("deploy", "how we deploy to staging", body="Deploy to staging first.\n"),
}


@pytest.fixture
def memdir(make_dir: MakeDir) -> Path:
    return make_dir(FILES)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def own_positionals(command: str, tmp_path: Path) -> list[str]:
    if command in FINISHING:
        return FINISHING[command][0]
    if command == "extract":
        transcript = tmp_path / "session.jsonl"
        transcript.write_text("", encoding="utf-8")
        return [str(transcript)]
    return []


@pytest.mark.parametrize("command", list(FINISHING))
def test_every_command_takes_the_dir_positionally_or_with_dir(
    command: str, memdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before, options = FINISHING[command]
    forms = {
        "DIR last": [command, *before, *options, str(memdir)],
        "DIR before the options": [command, *before, str(memdir), *options],
        "--dir": [command, *before, "--dir", str(memdir), *options],
        "--dir first": [command, "--dir", str(memdir), *before, *options],
    }
    results = {form: run(capsys, *argv) for form, argv in forms.items()}
    code, out, err = results["--dir"]
    assert code == 0, err
    assert out.strip(), f"memdir {command} printed nothing"
    for form, (other_code, other_out, other_err) in results.items():
        assert (other_code, other_out) == (code, out), f"{form}: {other_err}"


@pytest.mark.parametrize("command", ALL)
@pytest.mark.parametrize("form", ["DIR", "--dir"])
def test_a_missing_dir_is_the_same_error_everywhere(
    command: str, form: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "no-such-memory"
    given = [str(missing)] if form == "DIR" else ["--dir", str(missing)]
    code, out, err = run(capsys, command, *own_positionals(command, tmp_path), *given)
    assert (code, out) == (2, "")
    assert err == f"memdir {command}: error: no such directory: {missing}\n"


@pytest.mark.parametrize("command", ALL)
def test_the_dir_given_twice_is_refused(
    command: str, memdir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [command, *own_positionals(command, tmp_path), str(memdir), "--dir", str(memdir)]
    code, out, err = run(capsys, *argv)
    assert (code, out) == (2, "")
    assert err == (
        f"memdir {command}: error: the memory dir is given both as DIR and with --dir: "
        "give it once\n"
    )


def test_mcp_serves_every_dir_in_order(
    make_dir: MakeDir,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # A stand-in server: the SDK is not imported here (imported under capsys, its stdio client
    # would keep the captured stderr as its default errlog for every later test).
    import memdir.faces.cli.mcp

    served: list[list[Path]] = []

    class Server:
        def run(self, transport: str) -> None:
            assert transport == "stdio"

    def build_server(directories: list[Path], **_: Any) -> Server:
        served.append(directories)
        return Server()

    monkeypatch.setattr(memdir.faces.cli.mcp, "require", lambda extra, what: None)
    monkeypatch.setitem(
        sys.modules, "memdir.faces.mcp_server", SimpleNamespace(build_server=build_server)
    )
    first, second = make_dir(FILES), tmp_path / "second"
    second.mkdir()
    assert run(capsys, "mcp", str(first), "--read-only", str(second))[0] == 0
    assert run(capsys, "mcp", "--dir", str(first), "--dir", str(second))[0] == 0
    assert served == [[first, second], [first, second]]


def test_lint_takes_several_dirs_either_way(
    make_dir: MakeDir, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = make_dir(FILES), tmp_path / "second"
    second.mkdir()
    (second / "orphan.md").write_text(topic("orphan", "a memory no index links"), "utf-8")
    outputs = [
        run(capsys, "lint", *argv, "--format", "json")
        for argv in (
            [str(first), str(second)],
            [str(first), "--select", "MEM1", str(second)],
            ["--dir", str(first), "--dir", str(second)],
        )
    ]
    [(code, out, _)] = {(code, out, "") for code, out, _ in outputs}
    assert code == 1
    assert {(d["root"], d["path"]) for d in json.loads(out)} == {(str(second), "orphan.md")}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A project as the working directory, and where the agent keeps its memory (not made)."""
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    config = tmp_path / "claude"
    slug = "".join(c if c.isalnum() and c.isascii() else "-" for c in str(root.resolve()))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(root)
    return root, config / "projects" / slug / "memory"


@pytest.mark.parametrize("command", ALL)
def test_without_a_dir_every_command_takes_the_projects(
    command: str,
    project: tuple[Path, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, memory = project
    code, out, err = run(capsys, command, *own_positionals(command, tmp_path))
    assert (code, out) == (2, "")
    assert err == (
        f"memdir {command}: error: this project has no memory dir yet ({memory}); pass a DIR\n"
    )
    if command not in FINISHING:
        return
    memory.mkdir(parents=True)
    for name, text in FILES.items():
        (memory / name).write_text(str(text), "utf-8")
    code, out, err = run(capsys, command, *own_positionals(command, tmp_path))
    assert code == 0, err
    given = run(capsys, command, *own_positionals(command, tmp_path), str(memory))
    assert given[:2] == (code, out)


def path_layout(make_dir: MakeDir, tmp_path: Path) -> Path:
    """A dir where each command has a file to name: an index over the load cap (lint, index and
    search name its line 201), a topic file recall surfaces, a link the scan skips (manifest)."""
    lines = [render_entry(f"M{i}", f"m{i}.md", f"memory number {i}") for i in range(205)]
    outside = tmp_path / "outside.md"
    outside.write_text(topic("outside", "somebody else's file"), "utf-8")
    root = make_dir(
        {
            "MEMORY.md": "\n".join(lines) + "\n",
            "deploy.md": topic("deploy", "how we deploy to staging on fridays"),
        }
    )
    (root / "escape.md").symlink_to(outside)
    return root


@pytest.mark.parametrize("where", ["beside the dir", "elsewhere"])
def test_every_command_names_a_file_the_same_way(
    where: str,
    make_dir: MakeDir,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    root = path_layout(make_dir, tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(root.parent if where == "beside the dir" else elsewhere)
    # As typed from the working directory: `memory/…` beside it, else the absolute path.
    named = "memory" if where == "beside the dir" else str(root)
    index = f"{named}/MEMORY.md"

    lint = run(capsys, "lint", named, "--select", "MEM002")[1]
    assert lint.startswith(f"{index}:201:1: error MEM002 "), lint
    search = run(capsys, "search", "number 200$", named)[1]
    assert search.startswith(f"{index}:201:"), search
    cut = run(capsys, "index", named)[2]
    assert f"--   {index}:201: - [M200](m200.md)" in cut.splitlines()[2], cut
    recall = run(capsys, "recall", "how do we deploy to staging on fridays", named)[2]
    assert any(line.startswith(f"--   {named}/deploy.md (") for line in recall.splitlines())
    manifest = run(capsys, "manifest", named)[2]
    assert f"-- skipped {named}/escape.md: " in manifest
    missing = run(capsys, "show", "gone.md", named)[2]
    assert missing == f"memdir show: error: no such file: {named}/gone.md\n"


def test_a_pattern_that_starts_with_a_dash_after_double_dash(
    memdir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(memdir)
    (memdir / "dash.md").write_text(topic("dash", "flags", body="use -x here\n"), "utf-8")
    found = (0, "dash.md:6:5: use -x here\n")
    assert run(capsys, "search", "--", "-x", str(memdir))[:2] == found
    assert run(capsys, "search", "--glob", "d*.md", "--", "-x", str(memdir))[:2] == found
