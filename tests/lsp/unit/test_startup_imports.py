"""``initialize`` is answered before the heavy imports: the lint engine and its rules, the
writer, the ``memory/*`` handlers and what they read load when first used, not at startup."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

#: Runs the server as ``memdir-lsp`` does and, when the initialize answer is sent, prints the
#: memdir modules loaded at that moment to stderr.
SPY = """
import sys
from memdir_lsp import __main__ as main
from memdir_lsp.adapter import MemoryProtocol

send = MemoryProtocol._send_response

def spy(self, msg_id, result=None, error=None):
    if type(result).__name__ == "InitializeResult":
        loaded = sorted(m for m in sys.modules if m.startswith("memdir"))
        print("LOADED " + " ".join(loaded), file=sys.stderr, flush=True)
    send(self, msg_id, result, error)

MemoryProtocol._send_response = spy
sys.exit(main.main(["--stdio"]))
"""

#: Loaded only when first used (each took 10-75 ms to import).
HEAVY = [
    "memdir.lint.state",
    "memdir.lint.engine",
    "memdir.lint.rules",
    "memdir.writing.writer",
    "memdir.faces.freshness",
    "memdir.faces.visibility",
    "memdir.faces.projections",
    "memdir.search.grep",
    "memdir_lsp.memory_protocol.handlers",
    "memdir_lsp.memory_protocol.types",
]


def frame(message: dict[str, object]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def test_initialize_is_answered_before_the_heavy_imports(tmp_path: Path) -> None:
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}},
    }
    proc = subprocess.Popen(
        [sys.executable, "-c", SPY],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    proc.stdin.write(frame(initialize))
    proc.stdin.flush()
    length = 0
    while line := proc.stdout.readline().strip():
        name, _, value = line.decode().partition(":")
        if name.lower() == "content-length":
            length = int(value)
    answer = json.loads(proc.stdout.read(length))
    proc.stdin.close()
    proc.wait(timeout=30)
    log = proc.stderr.read().decode()
    assert "memory/index" in answer["result"]["capabilities"]["experimental"]["memdir"]["methods"]
    [loaded] = [line.split()[1:] for line in log.splitlines() if line.startswith("LOADED ")]
    assert "memdir_lsp.code_actions" in loaded  # every feature is registered
    assert [name for name in HEAVY if name in loaded] == []
