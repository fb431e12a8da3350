"""A user's regular expression run in a child process that the caller can kill.

Python's ``re`` backtracks (``(-+)+x`` on a line of 32 dashes runs for minutes) and holds the GIL
while it does, so a thread cannot bound it and nothing else in the process runs meanwhile. The
child is the same interpreter running the same :func:`memdir.search.lines.grep_lines`, so a search
means the same thing whichever way it runs; the parent only waits on a pipe, and kills the child
when one file takes longer than the time limit.

The parent writes one ASCII JSON line (``pattern``, ``flags``, ``limit``, ``chars``,
``line_chars``, ``seconds``), then each file as its size in bytes on a line and its text in UTF-8
(``surrogatepass``: a lone surrogate survives), then ``end``. Files are read and sent as the child
asks for them, so a search holds one file at a time, and stops reading when the child stops. The
child answers ``"ready"`` once it has compiled the pattern, then one line per file, the list of its
``[line, character, text]`` matches (ASCII JSON), and ``"done"``; it stops after ``limit + 1``
matches in all.
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
from collections.abc import Iterable
from pathlib import Path
from typing import IO

#: The child imports memdir from where this process found it (the bundle of the VS Code
#: extension has no site-packages: ``-I -S`` keeps the child as lean and as isolated).
_BOOT = "import sys; sys.path.insert(0, sys.argv[1]); from memdir.search.worker import main; main()"
#: Time allowed for the child to start and read its input (not a limit on the pattern).
START_SECONDS = 60.0

Match = tuple[int, int, str]


class SlowPatternError(ValueError):
    """A pattern that took longer than the time limit on one file; the message names the file,
    ``path``, relative to the memory dir (:meth:`naming` names it otherwise)."""

    def __init__(self, path: str, seconds: float) -> None:
        super().__init__(path, seconds)
        self.path, self.seconds = path, seconds

    def __str__(self) -> str:
        return self.naming(self.path)

    def naming(self, name: str) -> str:
        return (
            f"the pattern took longer than {self.seconds:g} s on {name}; "
            "simplify it or search literally"
        )


def run(
    files: Iterable[tuple[str, str]],
    pattern: str,
    flags: int,
    *,
    limit: int,
    chars: int,
    seconds: float,
    max_line_chars: int | None = None,
) -> list[tuple[str, list[Match]]]:
    """Each of ``files`` (``(path, text)``, consumed lazily) with its matches, in order, up to
    ``limit + 1`` matches in all (the list stops at the file that went over);
    :class:`SlowPatternError` when one file takes longer than ``seconds``."""
    if not sys.executable:
        raise RuntimeError("no Python interpreter to run the search in (sys.executable is empty)")
    header = {
        "pattern": pattern,
        "flags": flags,
        "limit": limit,
        "chars": chars,
        "line_chars": max_line_chars,
        "seconds": seconds,
    }
    child = subprocess.Popen(
        [sys.executable, "-I", "-S", "-c", _BOOT, str(Path(__file__).resolve().parents[2])],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        creationflags=getattr(subprocess, "CREATE_NO_WINDOW", 0),
    )
    assert child.stdin is not None and child.stdout is not None and child.stderr is not None
    state = _State()
    errors: list[bytes] = []
    first = json.dumps(header).encode("ascii") + b"\n"
    threads = [
        threading.Thread(target=_write, args=(child.stdin, first, files, state), daemon=True),
        threading.Thread(target=_collect, args=(child.stdout, state, limit), daemon=True),
        threading.Thread(target=_read_all, args=(child.stderr, errors), daemon=True),
    ]
    for thread in threads:
        thread.start()
    try:
        with state.changed:
            if not state.changed.wait_for(lambda: state.ready or state.ended, START_SECONDS):
                raise RuntimeError("the search process did not start")
            # The reader wakes this thread at the end only; the clock of a file starts when it
            # has been sent and the previous one answered.
            while not (state.done or state.ended or state.found > limit):
                pending = len(state.results)
                wait = seconds
                if pending < len(state.sent):
                    idle = time.monotonic() - max(state.last, state.sent[pending])
                    if idle >= seconds:
                        raise SlowPatternError(state.names[pending], seconds)
                    wait = seconds - idle
                state.changed.wait(wait)
            if state.failed is not None:
                raise state.failed
            if not (state.done or state.found > limit):
                raise _failure(child, threads, errors)
            return list(zip(state.names, state.results, strict=False))
    finally:
        child.kill()
        child.wait()
        for thread in threads:
            thread.join()
        for pipe in (child.stdin, child.stdout, child.stderr):
            with contextlib.suppress(OSError):  # unflushed input of a child that stopped reading
                pipe.close()


class _State:
    """What was sent to the child and what it answered, shared by the threads."""

    def __init__(self) -> None:
        self.changed = threading.Condition()
        self.ready = False
        self.done = False
        self.ended = False
        #: Paths of the files sent, and when each was (``time.monotonic``).
        self.names: list[str] = []
        self.sent: list[float] = []
        #: An exception of the files' iterable (reading a file), raised in the caller.
        self.failed: BaseException | None = None
        self.results: list[list[Match]] = []
        self.found = 0
        #: When the last answer arrived.
        self.last = time.monotonic()


def _write(pipe: IO[bytes], first: bytes, files: Iterable[tuple[str, str]], state: _State) -> None:
    items = iter(files)
    try:
        pipe.write(first)
        while True:
            try:
                item = next(items, None)
            except BaseException as exc:  # reading a file failed: raised in the caller's thread
                with state.changed:
                    state.failed = exc
                return
            if item is None:
                pipe.write(b"end\n")
                return
            body = item[1].encode("utf-8", "surrogatepass")
            with state.changed:
                state.names.append(item[0])
            pipe.write(b"%d\n" % len(body))
            pipe.write(body)
            pipe.flush()
            with state.changed:
                state.sent.append(time.monotonic())
    except OSError:
        pass  # the child stopped (at the limit) or was killed
    finally:
        with contextlib.suppress(OSError):
            pipe.close()  # the child sees the end of its input (and answers "done")


def _collect(pipe: IO[bytes], state: _State, limit: int) -> None:
    try:
        for line in pipe:
            answer = line.strip()  # \r\n on Windows
            if not state.ready:
                with state.changed:
                    state.ready = answer == b'"ready"'
                    state.last = time.monotonic()
                    state.changed.notify()
                if not state.ready:
                    break
            elif answer == b'"done"':
                with state.changed:
                    state.done = True
                    state.changed.notify()
            else:
                matches = [(int(n), int(c), str(t)) for n, c, t in json.loads(answer)]
                with state.changed:
                    state.results.append(matches)
                    state.found += len(matches)
                    state.last = time.monotonic()
                    if state.found > limit:
                        state.changed.notify()
    finally:  # also when a line does not parse: the waiting thread must not mistake it for slowness
        with state.changed:
            state.ended = True
            state.changed.notify()


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
    import math
    import re
    import signal

    from memdir.search.lines import grep_lines

    alarm = getattr(signal, "alarm", None)
    stdin = sys.stdin.buffer
    job = json.loads(stdin.readline())
    regex = re.compile(job["pattern"], job["flags"])
    out = sys.stdout
    out.write('"ready"\n')
    out.flush()
    left = job["limit"] + 1
    while left > 0:
        size = stdin.readline().strip()
        if not size.isdigit():  # "end", or the end of the input
            out.write('"done"\n')
            break
        text = stdin.read(int(size)).decode("utf-8", "surrogatepass")
        if alarm is not None:
            # Where the parent was killed before it could kill this process (POSIX only): the
            # default action of SIGALRM ends it, whatever the regex engine is doing.
            alarm(math.ceil(job["seconds"]) + 2)
        lines = grep_lines(text, regex, max_line_chars=job["line_chars"])
        found = list(itertools.islice(lines, left))
        if alarm is not None:
            alarm(0)  # waiting for the next file is not the pattern's time
        out.write(json.dumps([[n, c, t[: job["chars"]]] for n, c, t in found]) + "\n")
        out.flush()  # the parent names the file it waits on from the lines it has
        left -= len(found)
    out.close()
    os._exit(0)  # nothing left to tidy; skip interpreter teardown
