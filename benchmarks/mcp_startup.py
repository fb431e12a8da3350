"""How long ``memdir mcp`` takes to answer ``initialize``, against the ``mcp`` SDK's own import.

An MCP client (Claude Code) starts the server and sends ``initialize``; until the answer comes,
the server's tools are not there, and a client that does not wait sends its first model request
without them. The floor is what no MCP server in Python can avoid: a fresh interpreter that
imports the SDK. In one run, each the median of ``--repeat`` fresh processes:

* **import mcp**: ``python -c "import mcp"``, from process start until the import is done;
* **import MCPServer**: ``python -c "from mcp.server.mcpserver import MCPServer"``, the server
  class memdir builds on, the same way;
* **memdir mcp initialize**: ``python -m memdir mcp --dir D`` (stdio), start until the
  ``initialize`` answer arrives, over a small generated memory dir.

The goal (issues 27 and 29) is memdir within 1.5x of ``import mcp``.

Usage::

    .venv/bin/python benchmarks/mcp_startup.py            # 15 starts each
    .venv/bin/python benchmarks/mcp_startup.py --repeat 30
"""

from __future__ import annotations

import argparse
import json
import select
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: The goal: ``memdir mcp`` answers ``initialize`` within this many times ``import mcp``.
GOAL = 1.5
#: Guards against a hung server only.
DEADLINE = 60.0

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "mcp_startup", "version": "1"},
    },
}


def time_import(statement: str) -> float:
    """Seconds from process start until a fresh interpreter has run ``statement`` (it then
    writes one byte; the interpreter's teardown is not counted, as the server's is not)."""
    code = f"{statement}\nimport os\nos.write(1, b'.')\nos._exit(0)"
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    assert proc.stdout is not None
    if proc.stdout.read(1) != b".":
        raise RuntimeError(f"{statement!r} failed ({proc.wait()})")
    elapsed = time.perf_counter() - start
    proc.wait(timeout=DEADLINE)
    return elapsed


def time_initialize(memory: Path) -> float:
    """Seconds from process start until ``memdir mcp`` answers ``initialize`` on stdio."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "memdir", "mcp", "--dir", str(memory)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        # Written at once, as a client does: the pipe holds it until the server reads.
        proc.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
        proc.stdin.flush()
        answer = b""
        deadline = time.monotonic() + DEADLINE
        while b"\n" not in answer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([proc.stdout], [], [], left)[0]:
                raise RuntimeError("memdir mcp did not answer initialize")
            chunk = proc.stdout.read1(1 << 16)
            if not chunk:
                raise RuntimeError(f"memdir mcp exited ({proc.wait()}) before answering")
            answer += chunk
        elapsed = time.perf_counter() - start
        reply = json.loads(answer.split(b"\n", 1)[0])
        if "result" not in reply:
            raise RuntimeError(f"initialize failed: {reply}")
        return elapsed
    finally:
        proc.kill()
        proc.wait(timeout=DEADLINE)


def make_dir(base: Path) -> Path:
    """A small memory dir like the median one: an index and a few topic files."""
    memory = base / "memory"
    memory.mkdir()
    lines = []
    for number in range(7):
        name = f"topic-{number}.md"
        (memory / name).write_text(
            f"---\nname: topic {number}\ndescription: fact number {number}\n"
            "metadata:\n  type: project\n---\nThe body.\n",
            encoding="utf-8",
        )
        lines.append(f"- [Topic {number}]({name}) — fact number {number}")
    (memory / "MEMORY.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return memory


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15, help="starts of each (default 15)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="mcp-startup-") as temp:
        memory = make_dir(Path(temp))
        # Warm the disk cache and the byte-code caches once; then interleave the three, so a
        # busy machine slows each of them alike.
        time_import("import mcp")
        time_initialize(memory)
        samples: dict[str, list[float]] = {"mcp": [], "server": [], "memdir": []}
        for _ in range(args.repeat):
            samples["mcp"].append(time_import("import mcp"))
            samples["server"].append(time_import("from mcp.server.mcpserver import MCPServer"))
            samples["memdir"].append(time_initialize(memory))
    floor, server, memdir = (statistics.median(samples[key]) for key in ("mcp", "server", "memdir"))
    print(f"median of {args.repeat} starts each (Python {sys.version.split()[0]})")
    print(f"{'import mcp':<28}{floor * 1000:>8.0f} ms   1.00x")
    print(f"{'import MCPServer':<28}{server * 1000:>8.0f} ms   {server / floor:.2f}x")
    print(f"{'memdir mcp initialize':<28}{memdir * 1000:>8.0f} ms   {memdir / floor:.2f}x")
    verdict = "meets" if memdir <= GOAL * floor else "misses"
    print(f"goal: memdir mcp within {GOAL}x of import mcp: {verdict} it")
    return 0


if __name__ == "__main__":
    sys.exit(main())
