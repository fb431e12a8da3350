"""Reading and checking the files of a large memory dir on several cores (the CLI's cold run).

The per-file work (read, parse, per-file rules) is independent from file to file, so a cold
lint of thousands of files splits it between forked worker processes: each worker takes every
n-th file, and sends its results back through a pipe as plain tuples with :mod:`marshal` (an
order of magnitude cheaper than pickling the dataclasses). Meanwhile the parent parses
MEMORY.md. The directory-level rules still run once, in the parent, over all results; the
largest of them, MEM111's comparison of every description, in a child of its own
(:func:`in_child`) while the parent does the others.

Only where ``os.fork`` is safe and cheap: Linux, and a process without other threads (the
command line; never the language server). Any failure of a worker (it dies, it raises, its
output does not decode) is not an error: the parent does that share itself, so the result is
always the sequential one.
"""

from __future__ import annotations

import marshal
import os
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from memdir.lint.diagnostic import CreateFile, Diagnostic, Fix, TextEdit
from memdir.lint.rules import TopicSummary, prepare_description
from memdir.model import Span

#: Below this many files to read, forking costs more than it saves (measured: ~10 ms to fork and
#: collect, against ~60 µs of work per file on one core).
PARALLEL_MIN_FILES = 1000
#: More workers than this stop paying off: the parent still decodes every result alone.
MAX_WORKERS = 8

Loaded = tuple[Any, ...]
#: What a worker's ``load`` returns for an entry it leaves to the parent (no result is empty).
DEFER: Loaded = ()


def available() -> bool:
    """Whether forking workers is safe here (Linux, and this process runs no other thread)."""
    return sys.platform == "linux" and hasattr(os, "fork") and threading.active_count() == 1


def default_workers() -> int:
    """One worker per core the process may use, at most :data:`MAX_WORKERS`."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(cores, MAX_WORKERS))


# --- plain-tuple form of a file's result ------------------------------------------------------


def _span(span: Span) -> tuple[int, int, int, int]:
    return (span.start_line, span.start_col, span.end_line, span.end_col)


def _fix(fix: Fix | None) -> tuple[Any, ...] | None:
    if fix is None:
        return None
    return (
        fix.title,
        tuple((str(e.path), e.rel_path, _span(e.span), e.new_text) for e in fix.edits),
        tuple((str(c.path), c.rel_path, c.text) for c in fix.creates),
        fix.safe,
    )


def _unfix(data: tuple[Any, ...] | None) -> Fix | None:
    if data is None:
        return None
    title, edits, creates, safe = data
    return Fix(
        title,
        tuple(TextEdit(Path(p), rel, Span(*span), text) for p, rel, span, text in edits),
        tuple(CreateFile(Path(p), rel, text) for p, rel, text in creates),
        safe,
    )


def encode(
    key: tuple[int, int] | None, summary: TopicSummary, diagnostics: Sequence[Diagnostic]
) -> Loaded:
    """A file's lint result as tuples of str, int, float, bool and None (marshal-able), with
    its description already prepared for MEM111 (:func:`~memdir.lint.rules.prepare_description`),
    the one directory-rule step that is per file."""
    description = summary.description
    return (
        key,
        summary.rel_path,
        summary.mtime,
        summary.name,
        summary.description,
        summary.title,
        _span(summary.name_span),
        _span(summary.description_span),
        _span(summary.head_span),
        summary.listed,
        summary.usable,
        encode_diagnostics(diagnostics),
        _prepared(description) if description and summary.usable else None,
    )


def encode_canonical(
    key: tuple[int, int],
    rel: str,
    mtime: float,
    name: str,
    description: str,
    title: str,
    diagnostics: Sequence[Diagnostic],
) -> Loaded:
    """:func:`encode` of a file with the canonical frontmatter, from its parts: the summary
    :func:`memdir.lint.state.canonical_summary` would build, without building it."""
    return (
        key,
        rel,
        mtime,
        name,
        description,
        title,
        (1, 6, 1, 6 + len(name)),
        (2, 13, 2, 13 + len(description)),
        (0, 0, 0, 3),
        True,
        True,
        encode_diagnostics(diagnostics) if diagnostics else (),
        _prepared(description),
    )


def encode_diagnostics(diagnostics: Sequence[Diagnostic]) -> tuple[Any, ...]:
    return tuple(
        (str(d.path), d.rel_path, _span(d.span), d.code, d.severity, d.message, _fix(d.fix))
        for d in diagnostics
    )


def _prepared(description: str) -> tuple[str, frozenset[str]]:
    # The words are interned (rules.description_words), so marshal writes each distinct one
    # once and later ones as references: the parent unpacks a few thousand words, not one
    # string per word of every description.
    return prepare_description(description)


Prepared = tuple[str, frozenset[str]]


def decode(
    data: Loaded, root: Path, spans: dict[tuple[int, int, int, int], Span] | None = None
) -> tuple[tuple[int, int] | None, TopicSummary, tuple[Diagnostic, ...], Prepared | None]:
    """The inverse of :func:`encode`; ``root`` is the state's own (shared) root path.

    ``spans`` lets a caller that decodes many results share one Span per position: most files
    have their name and description at the same few places, and a Span is immutable.
    """
    key, rel, mtime, name, description, title, name_span, description_span, head_span = data[:9]
    listed, usable, diagnostics, prepared = data[9:]
    if spans is None:
        spans = {}
    summary = TopicSummary(
        root,
        rel,
        mtime,
        name,
        description,
        title,
        spans.get(name_span) or spans.setdefault(name_span, Span(*name_span)),
        spans.get(description_span) or spans.setdefault(description_span, Span(*description_span)),
        spans.get(head_span) or spans.setdefault(head_span, Span(*head_span)),
        listed,
        usable,
    )
    return (
        tuple(key) if key is not None else None,
        summary,
        tuple(
            Diagnostic(Path(p), r, Span(*span), code, severity, message, _unfix(fix))
            for p, r, span, code, severity, message, fix in diagnostics
        )
        if diagnostics
        else (),
        prepared,
    )


# --- the workers ------------------------------------------------------------------------------


def _read_all(fd: int) -> bytes:
    chunks: list[bytes] = []
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _serve(read_end: int, write_end: int, produce: Callable[[], Any]) -> NoReturn:
    """In a forked child: send ``produce()`` through the pipe with marshal, then exit.

    Never returns into the caller's code, whatever ``produce`` does: a child that raises exits
    with status 1 and the parent redoes its work.
    """
    status = 1
    try:
        os.close(read_end)
        view = memoryview(marshal.dumps(produce()))
        while view:
            view = view[os.write(write_end, view) :]
        status = 0
    finally:
        os._exit(status)


def in_child(call: Callable[[], Any]) -> Callable[[], Any]:
    """Start ``call()`` in a forked process; the function returned waits for its value.

    When forking fails, or the child does (it dies, raises, or sends what does not decode),
    the call runs in this process when its value is asked for: the value is the same.
    """
    if not available():
        return call
    try:
        read_end, write_end = os.pipe()
    except OSError:
        return call
    try:
        pid = os.fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        return call
    if pid == 0:
        _serve(read_end, write_end, call)
    os.close(write_end)

    def wait() -> Any:
        try:
            payload = _read_all(read_end)
        finally:
            os.close(read_end)
            _, status = os.waitpid(pid, 0)
        if status == 0:
            try:
                return marshal.loads(payload)
            except (EOFError, ValueError, TypeError):
                pass
        return call()

    return wait


def load_shares(
    entries: Sequence[tuple[str, str]],
    load: Callable[[str, str], Loaded],
    workers: int,
    meanwhile: Callable[[], object] | None = None,
    start_worker: Callable[[], object] | None = None,
) -> list[Loaded]:
    """``load(path, rel)`` for every entry, in entry order, spread over ``workers`` processes.

    Without ``meanwhile`` the parent loads the first share itself while the forked workers load
    the others. With it, every share goes to a worker and the parent runs ``meanwhile()`` (work
    of its own, such as the index) while they read. A share whose worker fails is loaded by the
    parent afterwards, and so is an entry for which a worker's ``load`` returns :data:`DEFER`.
    ``start_worker()`` runs in each worker before its first load.
    """
    workers = max(1, min(workers, len(entries)))
    shares = [list(range(start, len(entries), workers)) for start in range(workers)]
    results: list[Loaded | None] = [None] * len(entries)
    children: list[tuple[int, int, list[int]]] = []
    mine = list(shares[0]) if meanwhile is None else []
    try:
        for share in shares[1:] if meanwhile is None else shares:
            try:
                read_end, write_end = os.pipe()
            except OSError:
                mine += share  # out of descriptors: the parent does this share
                continue
            try:
                pid = os.fork()
            except OSError:
                os.close(read_end)
                os.close(write_end)
                mine += share
                continue
            if pid == 0:

                def work(share: list[int] = share) -> list[Loaded]:
                    if start_worker is not None:
                        start_worker()
                    return [load(*entries[i]) for i in share]

                _serve(read_end, write_end, work)
            os.close(write_end)
            children.append((pid, read_end, share))
        if meanwhile is not None:
            meanwhile()
        for i in mine:
            results[i] = load(*entries[i])
        while children:
            pid, read_end, share = children.pop(0)
            try:
                payload = _read_all(read_end)
            finally:
                os.close(read_end)
                _, status = os.waitpid(pid, 0)
            loaded: list[Loaded] | None = None
            if status == 0:
                try:
                    loaded = marshal.loads(payload)
                except (EOFError, ValueError, TypeError):
                    loaded = None
            if not isinstance(loaded, list) or len(loaded) != len(share):
                loaded = [load(*entries[i]) for i in share]  # the worker failed: do it here
            for i, item in zip(share, loaded, strict=True):
                results[i] = item if item else load(*entries[i])
    finally:
        for pid, read_end, _ in children:  # left only when the parent itself raised
            os.close(read_end)
            os.waitpid(pid, 0)
    done = [item for item in results if item is not None]
    assert len(done) == len(entries)
    return done
