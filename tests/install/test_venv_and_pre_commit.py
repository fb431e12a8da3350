"""pip into a virtual environment, and the pre-commit hook in both documented forms."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from conftest import Dist
from install_helpers import REPO, clean_env, module_file, run, shell

pytestmark = [pytest.mark.slow, pytest.mark.install]

ORPHAN = """---
name: deploy-notes
description: how the staging deploy is rolled back when the smoke tests fail after a release
type: project
---
Roll back with `make rollback ENV=staging`.
"""


def test_pip_installs_the_wheel_into_a_venv(dist: Dist, place: Path, tmp_path: Path) -> None:
    env = clean_env()
    venv = tmp_path / "memdir-venv"
    # docs/install.md's two lines, with this test's paths.
    shell(f"python3 -m venv {venv}", cwd=place, env=env)
    shell(f"{venv}/bin/pip install --quiet {dist.wheel}", cwd=place, env=env)
    origin = module_file(venv / "bin" / "python", "memdir", cwd=place, env=env)
    assert origin is not None and Path(origin).is_relative_to(venv)
    lint = run([venv / "bin" / "memdir", "lint", "memory"], cwd=place, env=env)
    assert "memdir lint: 12 topic files, no problems" in lint.stdout + lint.stderr
    # The core alone runs the memory tool: no SDK in this venv.
    assert module_file(venv / "bin" / "python", "anthropic", cwd=place, env=env) is None
    tool = [venv / "bin" / "memdir", "tool", "--dir", "memory"]
    text = "---\nname: venv\ndescription: made from a core-only venv\ntype: project\n---\nHi\n"
    create = json.dumps({"command": "create", "path": "/memories/venv-note.md", "file_text": text})
    made = run([*tool, create], cwd=place, env=env)
    lines = (place / "memory" / "MEMORY.md").read_text(encoding="utf-8").splitlines()
    [line] = [n for n, entry in enumerate(lines, 1) if "(venv-note.md)" in entry]
    assert made.stdout == (
        "File created successfully at: /memories/venv-note.md; "
        f"indexed in MEMORY.md at line {line} (no need to add a line)\n"
    )
    view = json.dumps({"command": "view", "path": "/memories/venv-note.md", "view_range": [6, 6]})
    shown = run([*tool, view], cwd=place, env=env)
    assert (
        shown.stdout
        == "Here's the content of /memories/venv-note.md with line numbers:\n     6\tHi\n"
    )
    index = (place / "memory" / "MEMORY.md").read_text(encoding="utf-8")
    assert "(venv-note.md) — made from a core-only venv" in index
    # Outside pipx and uv the message names this venv's pip.
    mcp = run([venv / "bin" / "memdir", "mcp", "--dir", "memory"], cwd=place, env=env, check=False)
    assert mcp.returncode == 2
    hint = mcp.stderr.split("add it with: ")[1].strip()
    assert re.fullmatch(rf"{venv}/bin/python3?(\.11)? -m pip install '{dist.wheel}\[mcp\]'", hint)


def git_project(root: Path) -> dict[str, str]:
    """A repository with its memory in .claude/memory; the environment for git and pre-commit."""
    env = clean_env(
        {
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@example.invalid",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.invalid",
            "PRE_COMMIT_HOME": root.parent / "pre-commit-home",
        }
    )
    shutil.copytree(REPO / "examples" / "memory", root / ".claude" / "memory")
    run(["git", "init", "--quiet", "--initial-branch=main"], cwd=root, env=env)
    return env


def lint_twice(project: Path, env: dict[str, str]) -> None:
    """The clean memory passes; an orphan topic file fails the hook with MEM107."""
    run(["git", "add", "--all"], cwd=project, env=env)
    first = run(["pre-commit", "run", "--all-files"], cwd=project, env=env)
    assert "memdir lint" in first.stdout and "Passed" in first.stdout
    (project / ".claude" / "memory" / "deploy-notes.md").write_text(ORPHAN, encoding="utf-8")
    run(["git", "add", "--all"], cwd=project, env=env)
    second = run(["pre-commit", "run", "--all-files"], cwd=project, env=env, check=False)
    assert second.returncode == 1, second.stdout + second.stderr
    assert "Failed" in second.stdout and "MEM107" in second.stdout


def test_pre_commit_installs_the_hook_from_a_clone(
    installers: Path, clone: Path, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    env = git_project(project)
    rev = run(["git", "rev-parse", "HEAD"], cwd=clone, env=env).stdout.strip()
    (project / ".pre-commit-config.yaml").write_text(
        f"""repos:
  - repo: {clone}
    rev: {rev}
    hooks:
      - id: memdir-lint
        args: [.claude/memory]
""",
        encoding="utf-8",
    )
    lint_twice(project, env)


def test_a_local_hook_runs_the_memdir_on_path(installers: Path, dist: Dist, tmp_path: Path) -> None:
    project = tmp_path / "project"
    env = git_project(project)
    tools = tmp_path / "uv"
    env |= {"UV_TOOL_DIR": str(tools / "tools"), "UV_TOOL_BIN_DIR": str(tools / "bin")}
    env["PATH"] = f"{tools / 'bin'}:{env['PATH']}"
    shell(f"uv tool install {dist.wheel}", cwd=project, env=env)
    (project / ".pre-commit-config.yaml").write_text(
        """repos:
  - repo: local
    hooks:
      - id: memdir-lint
        name: memdir lint
        entry: memdir lint
        language: system
        args: [.claude/memory]
        pass_filenames: false
        files: (\\.md|memdir\\.toml)$
""",
        encoding="utf-8",
    )
    lint_twice(project, env)
