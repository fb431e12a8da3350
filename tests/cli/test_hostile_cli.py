"""The CLI on hostile memory dirs: links leading out, FIFOs, a 100 MB index, billion laughs.

Each command runs in a subprocess; its timeout is only a safety net (a reader blocked on a FIFO
or a YAML bomb would otherwise hang the run), never a speed check. Memory is checked as a
resource: the peak RSS of the child, read with ``getrusage`` by a small wrapper process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from memhelpers import SECRET, linked_out, run_memdir

#: Generous: the safety net against a hang, far above any normal run on a busy machine.
SAFETY_NET = 180


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return run_memdir(*args, timeout=SAFETY_NET)


@pytest.fixture
def linked(tmp_path: Path) -> Path:
    """A memory dir whose MEMORY.md, ``secret.md`` and folder ``linked`` lead out of it."""
    return linked_out(tmp_path)


def test_index_of_a_link_out_says_so_and_prints_nothing(linked: Path) -> None:
    for extra in ([], ["--json"]):
        proc = run("index", "--dir", str(linked), *extra)
        assert proc.returncode == 2
        assert proc.stdout == ""
        assert "MEMORY.md: symlink leads outside the memory dir: memdir does not follow it" in (
            proc.stderr
        )
        assert SECRET not in proc.stderr


def test_lint_reports_the_links_and_nothing_behind_them(linked: Path) -> None:
    proc = run("lint", "--format", "json", str(linked))
    assert SECRET not in proc.stdout + proc.stderr
    found = json.loads(proc.stdout)
    rows = found if isinstance(found, list) else found["diagnostics"]
    codes = {(Path(row["path"]).name, row["code"]) for row in rows}
    assert codes == {("MEMORY.md", "MEM114"), ("secret.md", "MEM114"), ("linked", "MEM114")}


def test_search_finds_nothing_behind_a_link_out(linked: Path) -> None:
    proc = run("search", SECRET, "--dir", str(linked))
    assert SECRET not in proc.stdout + proc.stderr


@pytest.mark.parametrize("name", ["secret.md", "linked/secret.md"])
def test_show_refuses_a_link_out(linked: Path, name: str) -> None:
    proc = run("show", "--dir", str(linked), name)
    assert proc.returncode == 2
    assert proc.stdout == "" and SECRET not in proc.stderr
    assert "is outside the memory dir" in proc.stderr


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_fifos_named_like_memories_do_not_hang(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "MEMORY.md")
    os.mkfifo(tmp_path / "pipe.md")
    proc = run("index", "--dir", str(tmp_path))
    assert proc.returncode == 2
    assert "cannot read MEMORY.md: not a regular file (a FIFO)" in proc.stderr
    proc = run("lint", str(tmp_path))
    assert proc.returncode == 1
    assert "MEM113 cannot read MEMORY.md: not a regular file (a FIFO)" in proc.stdout
    assert "MEM113 cannot read pipe.md: not a regular file (a FIFO)" in proc.stdout
    proc = run("show", "--dir", str(tmp_path), "pipe.md")
    assert proc.returncode == 2 and "not a file" in proc.stderr


def _peak_rss_mb(*args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    """Run ``memdir *args`` from a wrapper that reports the child's peak RSS (MB)."""
    wrapper = (
        "import resource, subprocess, sys\n"
        "proc = subprocess.run([sys.executable, '-m', 'memdir', *sys.argv[1:]],"
        " capture_output=True, text=True)\n"
        "sys.stdout.write(proc.stdout[-20000:])\n"
        "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
        "scale = 1 if sys.platform == 'darwin' else 1024\n"
        "sys.stderr.write(f'{peak * scale / 2**20:.1f}')\n"
        "sys.exit(proc.returncode)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", wrapper, *args],
        capture_output=True,
        text=True,
        timeout=SAFETY_NET,
        check=False,
    )
    return proc, float(proc.stderr.strip().splitlines()[-1])


def test_lint_of_a_100_mb_index_stays_small(tmp_path: Path) -> None:
    line = b"plain text that is not an entry, written to make the index huge " * 15 + b"\n"
    with (tmp_path / "MEMORY.md").open("wb") as handle:
        handle.write(line * (100 * 1024 * 1024 // len(line)))
    proc, peak = _peak_rss_mb("lint", str(tmp_path))
    assert "MEM002" in proc.stdout and "100MB, over the 4MB the agent reads at all" in proc.stdout
    # The agent reads at most 4 MB of it; lint reads no more (it read 64 MB, at 370 MB RSS).
    assert peak < 200, f"peak RSS {peak} MB"


def laughs() -> str:
    lines = ['l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for level in range(1, 10):
        lines.append(f"l{level}: &l{level} [{','.join([f'*l{level - 1}'] * 10)}]")
    block = "name: laughs\ndescription: a billion laughs\ntype: user\n" + "\n".join(lines)
    return f"---\n{block}\n---\nbody text\n"


def test_billion_laughs_is_reported_and_edited_without_a_hang(tmp_path: Path) -> None:
    (tmp_path / "laughs.md").write_text(laughs())
    (tmp_path / "MEMORY.md").write_text("- [Laughs](laughs.md) — a billion of them\n")
    command = {
        "command": "str_replace",
        "path": "/memories/laughs.md",
        "old_str": "body text",
        "new_str": "body text, edited",
    }
    proc = run("tool", "--dir", str(tmp_path), json.dumps(command))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "body text, edited" in (tmp_path / "laughs.md").read_text()
    proc = run("lint", str(tmp_path))
    assert "MEM102" in proc.stdout and "through its aliases" in proc.stdout
