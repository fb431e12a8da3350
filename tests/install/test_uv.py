"""``uv tool install`` of the built wheel: docs/install.md's commands, run as shown."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import Dist
from install_helpers import clean_env, lsp_initialize, mcp_tools, module_file, run, shell

pytestmark = [pytest.mark.slow, pytest.mark.install]


def test_the_wheel_gives_memdir_and_memdir_lsp_and_the_extra_on_demand(
    installers: Path, dist: Dist, place: Path, tmp_path: Path
) -> None:
    root = tmp_path / "uv"
    env = clean_env({"UV_TOOL_DIR": root / "tools", "UV_TOOL_BIN_DIR": root / "bin"})
    shell(f"uv tool install {dist.wheel}", cwd=place, env=env)
    bin_dir, venv = root / "bin", root / "tools" / "memdir"

    origin = module_file(venv / "bin" / "python", "memdir", cwd=place, env=env)
    assert origin is not None and Path(origin).is_relative_to(venv)
    assert module_file(venv / "bin" / "python", "anthropic", cwd=place, env=env) is None
    lint = run([bin_dir / "memdir", "lint", "memory"], cwd=place, env=env)
    assert "memdir lint: 12 topic files, no problems" in lint.stdout + lint.stderr
    result = lsp_initialize([bin_dir / "memdir-lsp"], cwd=place, env=env)
    assert result["serverInfo"]["name"] == "memdir-lsp"

    # `memdir tool` is memdir's own, in the core: view and create without any extra.
    view = '{"command": "view", "path": "/memories"}'
    listing = run([bin_dir / "memdir", "tool", "--dir", "memory", view], cwd=place, env=env)
    assert "/memories/MEMORY.md" in listing.stdout
    create = '{"command": "create", "path": "/memories/uv-note.md", "file_text": "from uv\\n"}'
    made = run([bin_dir / "memdir", "tool", "--dir", "memory", create], cwd=place, env=env)
    # The API's words, then where memdir indexed the memory: the one line linking it.
    index = (place / "memory" / "MEMORY.md").read_text(encoding="utf-8").splitlines()
    [line] = [n for n, text in enumerate(index, 1) if "(uv-note.md)" in text]
    assert made.stdout == (
        "File created successfully at: /memories/uv-note.md; "
        f"indexed in MEMORY.md at line {line} (no need to add a line)\n"
    )
    assert (place / "memory" / "uv-note.md").read_text(encoding="utf-8") == "from uv\n"
    # The anthropic extra is on demand, for the model calls.
    shell(f"uv tool install --force '{dist.wheel}[anthropic]'", cwd=place, env=env)
    assert module_file(venv / "bin" / "python", "anthropic", cwd=place, env=env) is not None
    # The anthropic extra is not the mcp one.
    mcp = run([bin_dir / "memdir", "mcp", "--dir", "memory"], cwd=place, env=env, check=False)
    assert mcp.returncode == 2
    assert f"add it with: uv tool install --force '{dist.wheel}[mcp]'" in mcp.stderr


def test_a_clone_with_an_extra_then_uninstalled(
    installers: Path, clone: Path, place: Path, tmp_path: Path
) -> None:
    root = tmp_path / "uv"
    env = clean_env({"UV_TOOL_DIR": root / "tools", "UV_TOOL_BIN_DIR": root / "bin"})
    shell("uv tool install './memdir[mcp]'", cwd=clone.parent, env=env)
    memdir = root / "bin" / "memdir"
    tools = mcp_tools([memdir, "mcp", "--dir", "memory"], cwd=place, env=env)
    assert "memory_recall" in tools
    shell("uv tool uninstall memdir", cwd=place, env=env)
    assert not memdir.exists() and not (root / "tools" / "memdir").exists()


def test_uvx_runs_memdir_from_the_wheel_without_installing_it(
    installers: Path, dist: Dist, place: Path
) -> None:
    # docs/hook.md: the hook's command when nothing is installed but uv.
    lint = shell(f"uvx --from {dist.wheel} memdir lint memory", cwd=place, env=clean_env())
    assert "memdir lint: 12 topic files, no problems" in lint.stdout + lint.stderr
