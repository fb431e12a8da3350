"""``memdir mcp`` answers ``initialize`` before its heavy imports, and needs no anthropic SDK.

An MCP client sends its first model request once the server answers ``initialize`` (or stops
waiting): what loads before that answer is on the agent's critical path. The time itself is
measured by benchmarks/mcp_startup.py (docs/performance.md); here, what is loaded by then, in a
process where the anthropic SDK cannot be imported at all, whose memory tool still works.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from memhelpers import McpStdio

#: Runs ``memdir mcp`` as the console script does, with ``anthropic`` not importable, and prints
#: to stderr the modules loaded when the first answer (the ``initialize`` one) is written.
SPY = """
import io, sys
sys.modules["anthropic"] = None

class Spy(io.RawIOBase):
    seen = False
    def writable(self):
        return True
    def write(self, data):
        if not Spy.seen:
            Spy.seen = True
            loaded = sorted(name for name, module in sys.modules.items() if module is not None)
            print("LOADED " + " ".join(loaded), file=sys.stderr, flush=True)
        return out.write(data)

out = io.FileIO(1, "w", closefd=False)
sys.stdout = io.TextIOWrapper(io.BufferedWriter(Spy()), encoding="utf-8", write_through=True)
from memdir.faces.cli import main
sys.exit(main(["mcp", "--dir", sys.argv[1]]))
"""

#: Loaded on the first call that needs them, never for ``initialize``.
HEAVY = [
    "anthropic",
    "memdir.writing.writer",
    "memdir.writing.memory_tool",
    "memdir.faces.projections",
    "memdir.search.grep",
    "memdir.recall.prefetch",
    "memdir.lint.engine",
    "memdir.agent.index",
]
#: Guards against a hang only.
DEADLINE = 60.0


def call(wire: McpStdio, arguments: dict[str, Any]) -> tuple[str, bool]:
    """The memory tool's text and whether it is an error."""
    result = wire.ask("tools/call", {"name": "memory", "arguments": arguments})[1]["result"]
    return result["content"][0]["text"], bool(result.get("isError"))


def test_initialize_comes_before_the_heavy_imports_and_the_tool_needs_no_sdk(
    tmp_path: Path,
) -> None:
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "MEMORY.md").write_text("", encoding="utf-8")
    with subprocess.Popen(
        [sys.executable, "-c", SPY, str(memory)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as proc:
        try:
            wire = McpStdio(proc, DEADLINE)
            assert wire.initialize()["result"]["serverInfo"]["name"] == "memdir"
            text = "---\nname: pnpm\ndescription: the user prefers pnpm\ntype: user\n---\nUse it\n"
            created = call(
                wire, {"command": "create", "path": "/memories/pnpm.md", "file_text": text}
            )
            assert created == (
                "File created successfully at: /memories/pnpm.md; indexed in MEMORY.md at line 1 "
                "(no need to add a line)",
                False,
            )
            viewed = call(
                wire, {"command": "view", "path": "/memories/pnpm.md", "view_range": [6, 6]}
            )
            assert viewed == (
                "Here's the content of /memories/pnpm.md with line numbers:\n     6\tUse it",
                False,
            )
        finally:
            assert proc.stdin is not None and proc.stderr is not None
            proc.stdin.close()
            proc.wait(timeout=DEADLINE)
            log = proc.stderr.read().decode()
    [loaded] = [line.split()[1:] for line in log.splitlines() if line.startswith("LOADED ")]
    assert "memdir.faces.mcp_server" in loaded  # the spy saw the initialize answer
    assert [name for name in HEAVY if name in loaded] == []
    assert "pnpm.md" in (memory / "MEMORY.md").read_text(encoding="utf-8")
