"""Issue 26, the write path's journal: a journal planted in the memory dir is never acted on, by
any face, and a journal in memdir's own state folder acts on nothing outside the dir however it
was tampered with.

Before: recovery trusted the ``temp`` and ``made`` fields of ``.memdir-intent.json`` in the
memory dir, so a repository carrying one made the next ordinary write delete a file outside the
dir, move the user's SSH key into the dir (and index it), or remove a folder outside.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from memdir.config import Settings
from memdir.lint import lint_directory
from memdir.writing.writer import MemoryWriter
from memhelpers import run_memdir
from sec_write_helpers import DEADLINE, Outcome, cli_tool, lsp_tool, mcp_tool, snapshot, topic

SECRET = b"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n"


def scene(tmp_path: Path) -> tuple[Path, Path]:
    """A memory dir beside things of the user's it must never touch: a file and a tree of
    empty folders outside it, and a private key in a home folder. Returns (memory dir, key)."""
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "MEMORY.md").write_text("# Memory\n\n- [Deploy](deploy.md) — deploys\n")
    (memory / "deploy.md").write_text(topic("deploy", "how deploys work"))
    (memory / "orphan.md").write_text(topic("orphan", "no index line yet"))  # for lint --fix
    outside = tmp_path / "outside"
    (outside / "tree" / "a" / "b").mkdir(parents=True)
    (outside / "victim.txt").write_text("the user's file\n")
    key = tmp_path / "home" / ".ssh" / "id_rsa"
    key.parent.mkdir(parents=True)
    key.write_bytes(SECRET)
    return memory, key


def planted(kind: str, memory: Path, key: Path) -> dict[str, Any]:
    """The journals of the attack run, as an older memdir kept them (in the dir)."""
    if kind == "temp-outside":
        return {"op": "create", "path": "x.md", "index": True, "temp": "../outside/victim.txt"}
    if kind == "temp-absolute":
        (memory / "x.md").write_bytes(b"")  # the placeholder the old recovery replaced
        return {"op": "create", "path": "x.md", "index": True, "temp": str(key)}
    assert kind == "made-outside"
    return {"op": "create", "path": "x.md", "index": True, "made": "../outside/tree"}


CREATE = {"command": "create", "path": "/memories/note.md", "file_text": topic("note")}


async def through(face: str, memory: Path) -> Outcome:
    """An ordinary write of ``face``: the memory tool's create, or ``memdir lint --fix``."""
    if face == "writer":
        result = MemoryWriter(memory, settings=Settings()).create("note.md", topic("note"))
        return Outcome(result.path, False, "\n".join(result.warnings))
    if face == "cli tool":
        return cli_tool(memory, CREATE)
    if face == "cli lint --fix":
        done = run_memdir("lint", "--fix", "--exit-zero", str(memory), timeout=DEADLINE)
        return Outcome(done.stdout, done.returncode != 0, done.stderr)
    if face == "mcp":
        return await mcp_tool(memory, CREATE)
    assert face == "lsp"
    return await lsp_tool(memory, CREATE)


KINDS = ["temp-outside", "temp-absolute", "made-outside"]
#: Every planted journal through the in-process faces; each subprocess face (seconds each) with
#: one of them in turn, so every face and every kind is run.
CASES = [(kind, face) for face in ("writer", "mcp") for kind in KINDS] + [
    ("temp-outside", "cli tool"),
    ("made-outside", "cli lint --fix"),
    ("temp-absolute", "lsp"),
]


@pytest.mark.parametrize(("kind", "face"), CASES)
async def test_a_journal_planted_in_the_dir_is_never_acted_on(
    tmp_path: Path, kind: str, face: str
) -> None:
    memory, key = scene(tmp_path)
    journal = memory / ".memdir-intent.json"
    journal.write_text(json.dumps(planted(kind, memory, key)))
    outside_before = snapshot(tmp_path / "outside")
    memory_before = snapshot(memory)

    outcome = await through(face, memory)

    assert not outcome.is_error, outcome
    assert snapshot(tmp_path / "outside") == outside_before
    assert key.read_bytes() == SECRET
    after = snapshot(memory)
    assert after[".memdir-intent.json"] == memory_before[".memdir-intent.json"]  # not consumed
    assert SECRET not in b"".join(v for v in after.values() if v)
    if face != "cli lint --fix":  # which gives an empty x.md a frontmatter skeleton
        assert after.get("x.md") == memory_before.get("x.md")
    # The ordinary write itself was made.
    if face == "cli lint --fix":
        assert "(orphan.md)" in (memory / "MEMORY.md").read_text()
    else:
        assert (memory / "note.md").read_text() == topic("note")


def test_lint_reports_the_planted_journal_and_lock(tmp_path: Path) -> None:
    memory, _key = scene(tmp_path)
    (memory / ".memdir-intent.json").write_text(json.dumps({"op": "delete", "path": "x.md"}))
    (memory / ".memdir.lock").write_text("")
    (memory / ".memdir-0123456789ab.tmp").write_text("half")
    (finding,) = [d for d in lint_directory(memory).diagnostics if d.code == "MEM122"]
    for name in (".memdir-intent.json", ".memdir.lock", ".memdir-0123456789ab.tmp"):
        assert name in finding.message
    assert "never opens" in finding.message and "delete them" in finding.message
