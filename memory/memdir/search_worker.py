"""A user's regular expression run in a child process that the caller can kill.

Python's ``re`` backtracks (``(-+)+x`` on a line of 32 dashes runs for minutes) and holds the GIL
while it does, so a thread cannot bound it and nothing else in the process runs meanwhile. The
child is the same interpreter running the same :func:`memdir.search.grep_lines`, so a search means
the same thing whichever way it runs; the parent only waits on a pipe, and kills the child when
one file takes longer than the time limit.

Wire format, ASCII JSON (so lone surrogates and any console encoding survive): the parent writes
one document ``{"pattern", "flags", "limit", "chars", "files": [text, ...]}`` to stdin and closes
it; the child answers ``"ready"`` once it has compiled the pattern, then one line per file, the
list of its ``[line, character, text]`` matches, and stops after ``limit + 1`` matches in all.
"""

from __future__ import annotations

import itertools
import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import IO

#: The child imports memdir from where this process found it (the bundle of the VS Code
#: extension has no site-packages: ``-I -S`` keeps the child as lean and as isolated).
_BOOT = "import sys; sys.path.insert(0, sys.argv[1]); from memdir.search_worker import main; main()"
#: Time allowed for the child to start and read its input (not a limit on the pattern).
START_SECONDS = 60.0

Match = tuple[int, int, str]


class SlowPatternError(ValueError):
    """A pattern that took longer than the time limit on one file; the message names the file."""


def run(
    files: Sequence[tuple[str, str]],
    pattern: str,
    flags: int,
    *,
    limit: int,
    chars: int,
    seconds: float,
) -> list[list[Match]]:
    """The matches of each of ``files`` (``(path, text)``), in order, up to ``limit + 1`` in all
    (the list stops at the file that went over); :class:`SlowPatternError` when one file takes
    longer than ``seconds``."""
    if not files:
        return []
    if not sys.executable:
        raise RuntimeError("no Python interpreter to run the search in (sys.executable is empty)")
    payload = json.dumps(
        {
            "pattern": pattern,
            "flags": flags,
            "limit": limit,
            "chars": chars,
            "files": [text for _, text in files],
        }
    ).encode("ascii")
    child = subprocess.Popen(
        [sys.executable, "-I", "-S", "-c", _BOOT, str(Path(__file__).resolve().parent.parent)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        creationflags=getattr(subprocess, "CREATE_NO_WINDOW", 0),
    )
    assert child.stdin is not None and child.stdout is not None and child.stderr is not None
    lines: queue.Queue[bytes] = queue.Queue()
    errors: list[bytes] = []
    threads = [
        threading.Thread(target=_write, args=(child.stdin, payload), daemon=True),
        threading.Thread(target=_read_lines, args=(child.stdout, lines), daemon=True),
        threading.Thread(target=_read_all, args=(child.stderr, errors), daemon=True),
    ]
    for thread in threads:
        thread.start()
    results: list[list[Match]] = []
    try:
        try:
            ready = lines.get(timeout=START_SECONDS)
        except queue.Empty:
            raise RuntimeError("the search process did not start") from None
        if ready.strip() != b'"ready"':
            raise _failure(child, threads, errors, ready)
        found = 0
        while len(results) < len(files) and found <= limit:
            try:
                line = lines.get(timeout=seconds)
            except queue.Empty:
                raise SlowPatternError(
                    f"the pattern took longer than {seconds:g} s on {files[len(results)][0]}; "
                    "simplify it or search literally"
                ) from None
            if not line:
                raise _failure(child, threads, errors, line)
            matches = [(int(n), int(c), str(t)) for n, c, t in json.loads(line)]
            results.append(matches)
            found += len(matches)
        return results
    finally:
        child.kill()
        child.wait()
        for thread in threads:
            thread.join()
        for pipe in (child.stdin, child.stdout, child.stderr):
            pipe.close()


def _write(pipe: IO[bytes], payload: bytes) -> None:
    try:
        pipe.write(payload)
        pipe.close()
    except OSError:
        pass  # the child died or was killed; the reader reports it


def _read_lines(pipe: IO[bytes], lines: queue.Queue[bytes]) -> None:
    for line in pipe:
        lines.put(line)
    lines.put(b"")


def _read_all(pipe: IO[bytes], into: list[bytes]) -> None:
    into.append(pipe.read())


def _failure(
    child: subprocess.Popen[bytes], threads: list[threading.Thread], errors: list[bytes], got: bytes
) -> RuntimeError:
    child.kill()
    child.wait()
    threads[2].join()
    detail = b"".join(errors).decode("utf-8", "replace").strip().splitlines()
    last = detail[-1] if detail else got.decode("ascii", "replace").strip() or "no output"
    return RuntimeError(f"the search process failed (exit code {child.returncode}): {last}")


def main() -> None:
    """The child: compile, answer ``ready``, then grep file after file."""
    import re

    from memdir.search import grep_lines

    job = json.loads(sys.stdin.buffer.read())
    regex = re.compile(job["pattern"], job["flags"])
    out = sys.stdout
    out.write('"ready"\n')
    out.flush()
    left = job["limit"] + 1
    for text in job["files"]:
        found = list(itertools.islice(grep_lines(text, regex), left))
        out.write(json.dumps([[n, c, t[: job["chars"]]] for n, c, t in found]) + "\n")
        out.flush()
        left -= len(found)
        if left <= 0:
            break
    out.close()
    os._exit(0)  # nothing left to tidy; skip interpreter teardown
