"""``memdir mcp`` driven by the MCP Inspector's CLI, an MCP client written by others.

The Inspector starts ``python -m memdir mcp --dir <tmp>`` over stdio (its CLI mode: no browser,
no listening socket), lists the tools and calls two of them; the test checks the tool names and
that the results are memdir's own text. Skipped when the pinned Inspector is not installed
(scripts/install-mcp-inspector.sh).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from memdir.recall.prefetch import recall
from memdir.recall.surface import Session
from memhelpers import DEPLOY_MEMORY, DEPLOY_QUERY

INSTALL = Path(__file__).resolve().parents[2] / "scripts" / "install-mcp-inspector.sh"
TOOLS = {"memory", "memory_recall", "memory_search", "memory_lint", "memory_index"}


def _pinned_version() -> str:
    # The install script names the pinned release once.
    found = re.search(r"^INSPECTOR_VERSION=(\S+)$", INSTALL.read_text(), re.MULTILINE)
    assert found, f"no INSPECTOR_VERSION in {INSTALL}"
    return found.group(1)


@pytest.fixture(scope="module")
def inspector() -> Path:
    cache = Path(os.environ.get("MEMDIR_E2E_CACHE") or Path.home() / ".cache" / "memdir-e2e")
    version = _pinned_version()
    path = cache / "mcp-inspector" / version / "mcp-inspector"
    if not path.exists():
        pytest.skip(
            f"the MCP Inspector {version} is not installed ({path}): "
            "run `bash scripts/install-mcp-inspector.sh` (needs npm)"
        )
    return path


@pytest.fixture
def memory(tmp_path: Path) -> Path:
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "MEMORY.md").write_text("- [Deploy](deploy.md) — staging first\n")
    (memory / "deploy.md").write_text(DEPLOY_MEMORY)
    (memory / "memdir.toml").write_text('selector = "lexical"\n')  # recall stays offline
    return memory


def _inspect(inspector: Path, memory: Path, home: Path, *args: str) -> Any:
    """One Inspector CLI run against ``memdir mcp`` over stdio; its JSON answer."""
    home.mkdir(exist_ok=True)
    server = [sys.executable, "-m", "memdir", "mcp", "--dir", str(memory)]
    run = subprocess.run(
        [str(inspector), "--cli", *server, *args],
        # A scratch home: the Inspector keeps its catalog and secrets under ~/.mcp-inspector.
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, f"the Inspector failed ({run.returncode}):\n{run.stderr[-2000:]}"
    return json.loads(run.stdout)


def test_inspector_lists_memdir_tools(inspector: Path, memory: Path, tmp_path: Path) -> None:
    # --strict: the Inspector's tool-schema portability check fails the run (exit 6) on errors.
    listed = _inspect(inspector, memory, tmp_path / "home", "--method", "tools/list", "--strict")
    tools = {tool["name"]: tool for tool in listed["tools"]}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool["description"]
        assert tool["inputSchema"]["type"] == "object"
    assert tools["memory_recall"]["annotations"]["readOnlyHint"] is True
    assert "query" in tools["memory_recall"]["inputSchema"]["required"]


def test_inspector_calls_memory_recall(inspector: Path, memory: Path, tmp_path: Path) -> None:
    expected = recall(DEPLOY_QUERY, memory, Session()).attachment
    assert "Deploys go through the staging cluster first." in expected
    result = _inspect(
        inspector,
        memory,
        tmp_path / "home",
        *("--method", "tools/call", "--tool-name", "memory_recall"),
        *("--tool-arg", f"query={DEPLOY_QUERY}"),
    )
    assert result["isError"] is False
    assert [part["text"] for part in result["content"]] == [expected]


def test_inspector_calls_memory_index(inspector: Path, memory: Path, tmp_path: Path) -> None:
    result = _inspect(
        inspector,
        memory,
        tmp_path / "home",
        *("--method", "tools/call", "--tool-name", "memory_index"),
    )
    assert result["isError"] is False
    assert "- [Deploy](deploy.md) — staging first" in result["content"][0]["text"]
    index = result["structuredContent"]
    assert (index["entries"], index["truncated"], index["cut_entries"]) == (1, False, [])
