"""Shared fixtures: small memory directories built on disk."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import settings

# Property tests take their example counts from a profile, never per test: `default` for every
# run, `thorough` (HYPOTHESIS_PROFILE=thorough) for a long hunt before a release. Deadlines are
# off: the machine is shared and timing is the benchmarks' business, not the tests'.
settings.register_profile("default", max_examples=300, deadline=None)
settings.register_profile("thorough", max_examples=3000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

_HERE = Path(__file__).resolve().parent
_STATE_KEY = pytest.StashKey[str]()


def pytest_configure(config: pytest.Config) -> None:
    """memdir's per-user state (write locks, journals, hook sessions) goes to a folder of the
    run's own, never the developer's ~/.local/state: set here, before any test module reads the
    environment, so in-process writers and every CLI, MCP and language server subprocess of a
    test share it (they serialise on the same locks) unless a test sets its own. Each
    pytest-xdist worker runs this too, so workers never meet at a lock or a journal."""
    state = tempfile.mkdtemp(prefix="memdir-test-state-")
    config.stash[_STATE_KEY] = state
    os.environ["XDG_STATE_HOME"] = state
    # The suite starts hundreds of Python processes (CLI, hook, servers): each would compile
    # memdir from source again where the environment turns bytecode caching off
    # (PYTHONDONTWRITEBYTECODE), and pytest would rewrite every test module on every run. The
    # suite caches bytecode as Python does by default (__pycache__, ignored by git).
    sys.dont_write_bytecode = False
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    # Run inside Claude Code, the suite would inherit the agent's session: every `memdir mcp`
    # and hook it starts would share it (memdir.recall.sessions), and tests would see each
    # other's recalls.
    for name in ("CLAUDE_CODE_SESSION_ID", "CLAUDE_PID"):
        os.environ.pop(name, None)


def pytest_unconfigure(config: pytest.Config) -> None:
    state = config.stash.get(_STATE_KEY, None)
    if state is not None:
        shutil.rmtree(state, ignore_errors=True)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Markers by layer and kind: `e2e` for the real server over stdio and the real editors,
    `agent` for the real Claude Code CLI, `property` for Hypothesis tests, `slow` for those three
    and for the tests marked `processes` by hand (`-m "not slow"` is the quick loop)."""
    for item in items:
        if item.get_closest_marker("processes"):
            item.add_marker(pytest.mark.slow)
        path = Path(str(item.fspath)).resolve()
        if (_HERE / "lsp" / "e2e") in path.parents:
            item.add_marker(pytest.mark.e2e)
            item.add_marker(pytest.mark.slow)
        if (_HERE / "fidelity") in path.parents or (_HERE / "agents") in path.parents:
            item.add_marker(pytest.mark.agent)
            item.add_marker(pytest.mark.slow)
        if getattr(getattr(item, "obj", None), "is_hypothesis_test", False):
            item.add_marker(pytest.mark.property)
            item.add_marker(pytest.mark.slow)


@pytest.fixture
def make_dir(tmp_path: Path) -> Callable[[dict[str, str | bytes]], Path]:
    """Build a memory dir from {relative path: text or bytes}; mtimes follow the dict order."""

    # Imported here: memhelpers loads memdir, which this root conftest otherwise leaves alone.
    from memhelpers import write_files

    def build(files: dict[str, str | bytes], base_mtime: float = 1_700_000_000.0) -> Path:
        root = tmp_path / "memory"
        root.mkdir(exist_ok=True)
        write_files(root, files, base_mtime)
        return root

    return build


@pytest.fixture
def agent_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The agent's config dir (``CLAUDE_CONFIG_DIR``) in tmp, and no other ``CLAUDE_*`` or any
    ``ANTHROPIC_*`` variable: no API key (recall stays lexical, in process), no setting of the
    developer's."""
    config = tmp_path / "claude"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    for name in list(os.environ):
        if name.startswith("ANTHROPIC_") or (
            name.startswith("CLAUDE_") and name != "CLAUDE_CONFIG_DIR"
        ):
            monkeypatch.delenv(name)
    return config


@pytest.fixture(scope="module")
def claude_code() -> Path:
    """The Claude Code CLI the agent tests run: ``MEMDIR_AGENT_VERSION``, else the pinned one;
    they are skipped, with the install command, when it is not installed."""
    from fidelity.agent import PINNED_VERSION, agent_binary

    version = os.environ.get("MEMDIR_AGENT_VERSION") or PINNED_VERSION
    path = agent_binary(version)
    if not path.exists():
        pytest.skip(
            f"Claude Code {version} is not installed ({path}): "
            f"run `bash scripts/install-claude-code.sh {version}` (needs npm)"
        )
    return path
