"""Issue 26, hangs: a FIFO where memdir once kept its journal or lock blocks nothing.

Before: a FIFO named ``.memdir-intent.json`` in the memory dir blocked ``memdir lint`` (MEM122
opened it), ``memdir lint --fix`` and every write (recovery opened it), on every face, for good.
Now nothing opens memdir's old names in the dir (lint reports them from an ``lstat``), and the
journal in memdir's state folder is opened non-blocking, without following links, and only
when it is a regular file. Each run has a deadline that turns a hang into a failure.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from memhelpers import run_memdir
from sec_write_helpers import DEADLINE, cli_tool, lsp_tool, topic

CREATE = {"command": "create", "path": "/memories/note.md", "file_text": topic("note")}


@pytest.fixture
def memory(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    root.mkdir()
    (root / "MEMORY.md").write_text("# Memory\n\n- [Deploy](deploy.md) — deploys\n")
    (root / "deploy.md").write_text(topic("deploy", "how deploys work"))
    (root / "orphan.md").write_text(topic("orphan", "not in the index yet"))
    for name in (".memdir-intent.json", ".memdir.lock", ".memdir-extract.lock"):
        os.mkfifo(root / name)
    return root


def test_lint_reports_the_fifos_without_opening_them(memory: Path) -> None:
    done = run_memdir("lint", "--format", "json", "--exit-zero", str(memory), timeout=DEADLINE)
    assert done.returncode == 0, done.stderr
    findings = [d for d in json.loads(done.stdout) if d["code"] == "MEM122"]
    assert len(findings) == 1, findings
    assert ".memdir-intent.json (a FIFO)" in findings[0]["message"]
    assert ".memdir.lock (a FIFO)" in findings[0]["message"]


def test_lint_fix_writes(memory: Path) -> None:
    done = run_memdir("lint", "--fix", "--exit-zero", str(memory), timeout=DEADLINE)
    assert done.returncode == 0, done.stderr
    assert "(orphan.md)" in (memory / "MEMORY.md").read_text()


def test_the_cli_memory_tool_writes(memory: Path) -> None:
    outcome = cli_tool(memory, CREATE)
    assert not outcome.is_error, outcome
    assert (memory / "note.md").exists()


@pytest.mark.processes
async def test_the_language_server_writes(memory: Path) -> None:
    outcome = await lsp_tool(memory, CREATE)
    assert not outcome.is_error, outcome
    assert (memory / "note.md").exists()


def test_a_fifo_in_the_state_folder_blocks_nothing(tmp_path: Path) -> None:
    """Even where memdir keeps its journal now, a FIFO (or a link) is no journal: dropped."""
    from memdir.writing.journal import JOURNAL_NAME, dir_state
    from memdir.writing.writer import LOCK_NAME

    root = tmp_path / "memory"
    root.mkdir()
    state = dir_state(root)
    os.mkfifo(state / JOURNAL_NAME)
    os.mkfifo(state / LOCK_NAME)
    outcome = cli_tool(root, CREATE)
    assert not outcome.is_error, outcome
    assert (root / "note.md").exists()
    assert "ignored the journal" in outcome.warnings
    assert not (state / JOURNAL_NAME).exists()


DRY_RUN = """
import asyncio, sys
import anthropic, fake_anthropic, httpx2
from memdir.config import Settings
from memdir.extract.loop import run_extraction

reply = fake_anthropic.message({"type": "text", "text": "Nothing to save."})
client = anthropic.AsyncAnthropic(
    api_key="k", base_url="http://fake-api.test", max_retries=0,
    http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(
        lambda _request: httpx2.Response(200, json=reply)
    )),
)
result = asyncio.run(run_extraction(
    sys.argv[1], sys.argv[2], client=client, settings=Settings(), dry_run=True
))
print(result.status, result.reason)
"""


@pytest.mark.processes
def test_an_extraction_dry_run_copies_around_a_fifo(memory: Path, tmp_path: Path) -> None:
    """The dry run copies the dir; a FIFO named like a memory is no memory and is not opened."""
    os.mkfifo(memory / "pipe.md")
    transcript = tmp_path / "t.jsonl"
    said = {"role": "user", "content": "We deploy on Tuesdays."}
    transcript.write_text(json.dumps({"type": "user", "message": said}) + "\n")
    tests = str(Path(__file__).resolve().parents[1])  # fake_anthropic
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([tests, os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-c", DRY_RUN, str(transcript), str(memory)],
        env=env,
        capture_output=True,
        text=True,
        timeout=DEADLINE,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("completed"), done.stdout
