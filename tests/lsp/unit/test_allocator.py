"""The server gives freed memory back to the system instead of keeping it in the heap: large
blocks (a big MEMORY.md's text and lines, made anew on each edit) when they are freed, and the
free pages between kept blocks (what the first check read) when it asks."""

from __future__ import annotations

import subprocess
import sys

import pytest

#: Each scenario runs in a fresh interpreter, as the server ("server") or not ("plain"), and
#: prints how many MB its resident size changed.
PRELUDE = """
import re, sys
from memdir_lsp.allocator import give_back_free_pages, return_large_blocks

def rss():
    return int(re.search(r"VmRSS:\\s+(\\d+)", open("/proc/self/status").read()).group(1)) / 1024

server = sys.argv[1] == "server"
"""

#: A large block freed behind small ones still in use: the heap cannot shrink past them.
KEPT = """
if server:
    assert return_large_blocks()
text = "x" * (8 << 20); del text  # freed: glibc raises its threshold to 8 MiB
before = rss()
text = "y" * (8 << 20)
after = [bytes(600) + bytes([i % 256]) for i in range(2000)]
del text
print(round(rss() - before, 1))
"""

#: Many small texts freed between small objects still in use (a first check's file texts
#: between the summaries it keeps): their pages stay in the heap until given back.
GIVEN_BACK = """
texts, kept = [], []
for i in range(20000):
    texts.append(bytes(3000) + bytes([i % 256]))
    if i % 10 == 0:
        kept.append(bytes(700) + bytes([i % 256]))
before = rss()
del texts
if server:
    give_back_free_pages()
print(round(before - rss(), 1))
"""


def megabytes(scenario: str, mode: str) -> float:
    run = subprocess.run(
        [sys.executable, "-c", PRELUDE + scenario, mode], capture_output=True, text=True, check=True
    )
    return float(run.stdout)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_a_freed_large_block_is_returned() -> None:
    assert megabytes(KEPT, "plain") > 6  # what the default allocator keeps (the 8 MiB block)
    assert megabytes(KEPT, "server") < 4


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim")
def test_free_pages_between_kept_blocks_are_given_back() -> None:
    assert megabytes(GIVEN_BACK, "plain") < 10  # the 60 MB freed stay in the process
    assert megabytes(GIVEN_BACK, "server") > 40
