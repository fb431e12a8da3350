"""The README's first command, ``bash scripts/demo.sh``, in a copy of the project without a venv:
it sets one up and runs the main job on the bundled example memory directory."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from install_helpers import REPO, clean_env, run

pytestmark = [pytest.mark.slow, pytest.mark.install]

#: What a clone does not have: made by installs, builds and test runs.
NOT_IN_A_CLONE = shutil.ignore_patterns(
    ".git", ".venv", "node_modules", "test-output", "data", "__pycache__", "*.egg-info", "site"
)


def test_the_demo_command_runs_the_main_job(tmp_path: Path) -> None:
    project = tmp_path / "memdir"
    shutil.copytree(REPO, project, ignore=NOT_IN_A_CLONE)
    assert not (project / ".venv").exists()
    demo = run(["bash", "scripts/demo.sh"], cwd=project, env=clean_env())
    out = demo.stdout
    # Summaries go to stderr, what a command shows to stdout.
    assert "memdir lint: 12 topic files, no problems" in demo.stderr
    assert "- [Release merge freeze](project-release-freeze.md)" in out  # the index
    assert "12/200 lines" in demo.stderr
    assert "[project] project-release-freeze.md (" in out  # the manifest
    # The recall of the Chinese question finds the English memory about the freeze.
    assert "Memory: " in out and "project-release-freeze.md:" in out.split("memdir recall")[1]
    assert (project / ".venv" / "bin" / "memdir").exists()
