"""Fixtures of the install tests: the installers, the built wheel and sdist, a clean place.

The wheel is built once per session by ``scripts/build-dist.sh``, into a temporary directory.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from install_helpers import CACHE, REPO, TOOLS, TOOLS_BIN, TOOLS_VENV, clean_env, run


@dataclass(frozen=True)
class Dist:
    wheel: Path
    sdist: Path


@pytest.fixture(scope="session")
def installers() -> Path:
    """pipx, uv and pre-commit at :data:`TOOLS`'s versions, in a cached venv; its bin dir."""
    stamp = TOOLS_VENV / "memdir-tools.json"
    wanted = json.dumps(TOOLS, sort_keys=True)
    if not (stamp.is_file() and stamp.read_text() == wanted):
        shutil.rmtree(TOOLS_VENV, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", TOOLS_VENV], check=True, timeout=300)
        pins = [f"{name}=={version}" for name, version in TOOLS.items()]
        run(
            [TOOLS_VENV / "bin" / "python", "-m", "pip", "install", "--quiet", *pins],
            cwd=CACHE,
            env=clean_env(),
        )
        stamp.write_text(wanted)
    TOOLS_BIN.mkdir(parents=True, exist_ok=True)
    for name in ("pipx", "uv", "uvx", "pre-commit"):
        link = TOOLS_BIN / name
        if not link.is_symlink():  # another session may be making it at the same moment
            with contextlib.suppress(FileExistsError):
                link.symlink_to(TOOLS_VENV / "bin" / name)
    return TOOLS_BIN


@pytest.fixture(scope="session")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Dist:
    """The wheel and sdist scripts/build-dist.sh builds from this checkout."""
    out = tmp_path_factory.mktemp("dist")
    listed = run(["bash", REPO / "scripts" / "build-dist.sh", out], cwd=REPO, env=clean_env())
    wheel, sdist = (Path(line) for line in listed.stdout.split())
    assert wheel.name.endswith("-py3-none-any.whl") and sdist.name.endswith(".tar.gz")
    return Dist(wheel, sdist)


@pytest.fixture(scope="session")
def clone(dist: Dist, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A stand-in for a clone of this repository, named ``memdir``: the sdist, unpacked, as a
    git repository (pre-commit clones its repositories)."""
    parent = tmp_path_factory.mktemp("clone")
    with tarfile.open(dist.sdist) as archive:
        archive.extractall(parent, filter="data")
    [unpacked] = parent.iterdir()
    target = unpacked.rename(parent / "memdir")
    env = clean_env({"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid"})
    env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    run(["git", "init", "--quiet", "--initial-branch=main"], cwd=target, env=env)
    run(["git", "add", "--all"], cwd=target, env=env)
    run(["git", "commit", "--quiet", "--message", "memdir"], cwd=target, env=env)
    return target


@pytest.fixture
def place(tmp_path: Path) -> Path:
    """A working directory outside the checkout holding a copy of the bundled example memory."""
    work = tmp_path / "work"
    shutil.copytree(REPO / "examples" / "memory", work / "memory")
    return work
