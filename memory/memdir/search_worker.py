"""A user's regular expression run in a child process that the caller can kill.

Python's ``re`` backtracks (``(-+)+x`` on a line of 32 dashes runs for minutes) and holds the GIL
while it does, so a thread cannot bound it and nothing else in the process runs meanwhile. The
child is the same interpreter running the same :func:`memdir.search.grep_lines`, so a search means
the same thing whichever way it runs; the parent only waits on a pipe, and kills the child when
one file takes longer than the time limit.

The parent writes one ASCII JSON line (``pattern``, ``flags``, ``limit``, ``chars``,
``line_chars``, ``sizes``), then the files' texts back to back in UTF-8 (``surrogatepass``: a
lone surrogate survives); ``sizes`` are their lengths in bytes. The child answers ``"ready"``
once it has compiled the pattern, then one line per file as it reads them: the list of its
``[line, character, text]`` matches (ASCII JSON); it stops after ``limit + 1`` matches in all.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import subprocess
import sys
import threading
import time
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
    max_line_chars: int | None = None,
) -> list[list[Match]]:
    """The matches of each of ``files`` (``(path, text)``), in order, up to ``limit + 1`` in all
    (the list stops at the file that went over); :class:`SlowPatternError` when one file takes
    longer than ``seconds``."""
    if not files:
        return []
    if not sys.executable:
        raise RuntimeError("no Python interpreter to run the search in (sys.executable is empty)")
    bodies = [text.encode("utf-8", "surrogatepass") for _, text in files]
    header: dict[str, object] = {"pattern": pattern, "flags": flags, "limit": limit, "chars": chars}
    header["line_chars"] = max_line_chars
    header["sizes"] = [len(body) for body in bodies]
    payload = [json.dumps(header).encode("ascii") + b"\n", *bodies]
    child = subprocess.Popen(
        [sys.executable, "-I", "-S", "-c", _BOOT, str(Path(__file__).resolve().parent.parent)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        creationflags=getattr(subprocess, "CREATE_NO_WINDOW", 0),
    )
    assert child.stdin is not None and child.stdout is not None and child.stderr is not None
    state = _State()
    errors: list[bytes] = []
    threads = [
        threading.Thread(target=_write, args=(child.stdin, payload), daemon=True),
        threading.Thread(target=_collect, args=(child.stdout, state), daemon=True),
        threading.Thread(target=_read_all, args=(child.stderr, errors), daemon=True),
    ]
    for thread in threads:
        thread.start()
    try:
        with state.changed:
            if not state.changed.wait_for(lambda: state.ready or state.ended, START_SECONDS):
                raise RuntimeError("the search process did not start")
            # The reader wakes this thread only at the end: it checks progress once in a while.
            while not state.ended and len(state.results) < len(files) and state.found <= limit:
                idle = time.monotonic() - state.last
                if idle >= seconds:
                    raise SlowPatternError(
                        f"the pattern took longer than {seconds:g} s on "
                        f"{files[len(state.results)][0]}; simplify it or search literally"
                    )
                state.changed.wait(seconds - idle)
            if not state.ready or (len(state.results) < len(files) and state.found <= limit):
                raise _failure(child, threads, errors)
            return state.results
    finally:
        child.kill()
        child.wait()
        for thread in threads:
            thread.join()
        for pipe in (child.stdin, child.stdout, child.stderr):
            with contextlib.suppress(OSError):  # unflushed input of a child that stopped reading
                pipe.close()


class _State:
    """What the child has answered so far, filled by the reader thread."""

    def __init__(self) -> None:
        self.changed = threading.Condition()
        self.ready = False
        self.ended = False
        self.results: list[list[Match]] = []
        self.found = 0
        #: When the last line arrived (``time.monotonic``).
        self.last = time.monotonic()


def _collect(pipe: IO[bytes], state: _State) -> None:
    try:
        for line in pipe:
            if not state.ready:
                with state.changed:
                    state.ready = line.strip() == b'"ready"'  # \r\n on Windows
                    state.last = time.monotonic()
                    state.changed.notify()
                if not state.ready:
                    break
                continue
            matches = [(int(n), int(c), str(t)) for n, c, t in json.loads(line)]
            with state.changed:
                state.results.append(matches)
                state.found += len(matches)
                state.last = time.monotonic()
    finally:  # also when a line does not parse: the waiting thread must not mistake it for slowness
        with state.changed:
            state.ended = True
            state.changed.notify()


def _write(pipe: IO[bytes], payload: list[bytes]) -> None:
    try:
        for chunk in payload:
            pipe.write(chunk)
        pipe.close()
    except OSError:
        pass  # the child died or was killed; the reader reports it


def _read_all(pipe: IO[bytes], into: list[bytes]) -> None:
    into.append(pipe.read())


def _failure(
    child: subprocess.Popen[bytes], threads: list[threading.Thread], errors: list[bytes]
) -> RuntimeError:
    child.kill()
    child.wait()
    threads[2].join()
    detail = b"".join(errors).decode("utf-8", "replace").strip().splitlines()
    last = detail[-1] if detail else "no output"
    return RuntimeError(f"the search process failed (exit code {child.returncode}): {last}")


def main() -> None:
    """The child: compile, answer ``ready``, then grep file after file."""
    import re

    from memdir.search import grep_lines

    stdin = sys.stdin.buffer
    job = json.loads(stdin.readline())
    regex = re.compile(job["pattern"], job["flags"])
    out = sys.stdout
    out.write('"ready"\n')
    out.flush()
    left = job["limit"] + 1
    for size in job["sizes"]:
        text = stdin.read(size).decode("utf-8", "surrogatepass")
        lines = grep_lines(text, regex, max_line_chars=job["line_chars"])
        found = list(itertools.islice(lines, left))
        out.write(json.dumps([[n, c, t[: job["chars"]]] for n, c, t in found]) + "\n")
        out.flush()  # the parent names the file it waits on from the lines it has
        left -= len(found)
        if left <= 0:
            break
    out.close()
    os._exit(0)  # nothing left to tidy; skip interpreter teardown
