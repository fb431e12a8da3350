"""The server gives large blocks (a big MEMORY.md's text and lines, made anew on each edit)
back to the system when they are freed, instead of keeping them in the heap."""

from __future__ import annotations

import subprocess
import sys

import pytest

#: A large block freed behind small ones still in use: the heap cannot shrink past them.
SCENARIO = """
import re, sys
from memdir_lsp.__main__ import return_large_blocks

def rss():
    return int(re.search(r"VmRSS:\\s+(\\d+)", open("/proc/self/status").read()).group(1)) / 1024

if sys.argv[1] == "server":
    assert return_large_blocks()
text = "x" * (8 << 20); del text  # freed: glibc raises its threshold to 8 MiB
before = rss()
text = "y" * (8 << 20)
after = [bytes(600) + bytes([i % 256]) for i in range(2000)]
del text
print(round(rss() - before, 1))
"""


def kept_mb(mode: str) -> float:
    run = subprocess.run(
        [sys.executable, "-c", SCENARIO, mode], capture_output=True, text=True, check=True
    )
    return float(run.stdout)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_a_freed_large_block_is_returned() -> None:
    assert kept_mb("plain") > 6  # what the default allocator keeps (the 8 MiB block)
    assert kept_mb("server") < 4
