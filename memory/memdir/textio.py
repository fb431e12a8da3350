"""Reading memory files defensively, and counting text the way the agent does.

Memory files come from agents and people; some are not UTF-8, some are binary, some are huge,
some vanish between listing and reading. Every reader here returns what it could read plus
:class:`~memdir.model.Problem` values; none raises for a bad file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from memdir.model import Problem, Span

#: Files larger than this are parsed only up to it (lint still reports their size).
MAX_PARSE_BYTES = 2 * 1024 * 1024
#: A NUL byte in this many leading bytes marks a file as binary, as git does.
BINARY_SNIFF_BYTES = 8192
#: Reading "the first 30 lines" never reads more than this, so a one-line 1 GB file stays cheap.
HEAD_MAX_BYTES = 64 * 1024


def utf16_len(text: str) -> int:
    """Length in UTF-16 code units: what a JavaScript string's ``length`` reports."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le")) // 2


def utf16_prefix_index(text: str, units: int) -> int:
    """The largest string index whose prefix is at most ``units`` UTF-16 code units long."""
    if text.isascii():
        return min(units, len(text))
    count = 0
    for index, char in enumerate(text):
        count += 2 if ord(char) > 0xFFFF else 1
        if count > units:
            return index
    return len(text)


@dataclass(frozen=True)
class ReadResult:
    text: str
    size: int
    mtime: float
    problems: tuple[Problem, ...]
    #: True when only a prefix of the file was read (head reads, or huge files).
    partial: bool = False
    binary: bool = False


def _decode(data: bytes, problems: list[Problem]) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        # Position the problem at the first bad byte so an editor can jump there.
        good = data[: exc.start].decode("utf-8", errors="replace")
        line = good.count("\n")
        col = len(good) - (good.rfind("\n") + 1)
        detail = f"byte 0x{data[exc.start]:02x} at offset {exc.start}"
        problems.append(
            Problem(
                "not-utf8",
                f"not valid UTF-8 ({detail}); undecodable bytes are shown as \ufffd",
                Span.on_line(line, col, col + 1),
                detail=detail,
            )
        )
        text = data.decode("utf-8", errors="replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    return text


def _unreadable(path: Path, exc: OSError) -> ReadResult:
    reason = exc.strerror or type(exc).__name__
    return ReadResult(
        "", 0, 0.0, (Problem("unreadable", f"cannot read {path.name}: {reason}", Span(0, 0, 0, 0)),)
    )


def read_text(
    path: Path, max_bytes: int = MAX_PARSE_BYTES, keep_binary: bool = False
) -> ReadResult:
    """The whole file as text (at most ``max_bytes`` of it), with problems instead of errors.

    A binary file reads as empty unless ``keep_binary`` (the agent injects MEMORY.md whatever
    it holds, so memdir must read it the same way): then it is decoded anyway, still flagged.
    """
    try:
        with path.open("rb") as handle:
            stat = os.fstat(handle.fileno())
            data = handle.read(max_bytes + 1)
    except OSError as exc:
        return _unreadable(path, exc)
    return _finish(data, stat.st_size, stat.st_mtime, max_bytes, keep_binary)


def read_head(path: Path, max_lines: int, max_bytes: int = HEAD_MAX_BYTES) -> ReadResult:
    """The first ``max_lines`` lines as the agent's head read returns them.

    A leading BOM is dropped and each line loses one trailing ``\\r``; lines are kept while the
    text (lines joined by ``\\n``, counted in UTF-8 bytes) stays within ``max_bytes``, and the first
    line that would pass it ends the read. When the file has fewer lines, the last (possibly
    empty) line after the final newline is kept, so a short file reads back with its newline.
    Binary files are decoded anyway (the agent reads whatever is there), still flagged.
    """
    # Enough raw bytes to decide: the decoded text is at most a BOM and a CR per line shorter.
    budget = max_bytes + 2 * max_lines + 8
    try:
        with path.open("rb") as handle:
            stat = os.fstat(handle.fileno())
            chunks: list[bytes] = []
            newlines = total = 0
            while newlines < max_lines and total <= budget:
                chunk = handle.read(4096)
                if not chunk:
                    break
                chunks.append(chunk)
                newlines += chunk.count(b"\n")
                total += len(chunk)
            at_end = total >= stat.st_size or not handle.read(1)
    except OSError as exc:
        return _unreadable(path, exc)
    data = b"".join(chunks)
    binary = b"\x00" in data[:BINARY_SNIFF_BYTES]
    problems: list[Problem] = []
    if binary:
        problems.append(
            Problem("binary", "binary file (contains NUL bytes): not a memory", Span(0, 0, 0, 0))
        )
    parts = data.removeprefix(b"\xef\xbb\xbf").split(b"\n", max_lines)
    # Lines past ``max_lines``, or cut off by the read's end before the file's, are not read.
    whole = at_end and len(parts) <= max_lines
    complete = len(parts) if whole else min(len(parts) - 1, max_lines)
    kept: list[str] = []
    used = 0
    stopped = False
    for line in _decode(b"\n".join(parts[:complete]), problems).split("\n"):
        line = line.removesuffix("\r")
        size = len(line.encode("utf-8")) + (1 if kept else 0)
        if used + size > max_bytes:
            stopped = True
            break
        used += size
        kept.append(line)
    # A line cut off by the read is longer than the raw budget: it would stop the read too.
    stopped = stopped or (complete < len(parts) and len(kept) < max_lines)
    partial = stopped or complete < len(parts)
    return ReadResult(
        "\n".join(kept), stat.st_size, stat.st_mtime, tuple(problems), partial, binary
    )


def decode_bytes(
    data: bytes, size: int, mtime: float, max_bytes: int = MAX_PARSE_BYTES
) -> ReadResult:
    """Bytes already read from a file (``size``/``mtime`` from its stat) as :func:`read_text`
    would return them: binary sniffing, the size cap, UTF-8 decoding with problems, BOM removal.
    For callers that read files themselves (the lint engine reads each file once, as bytes)."""
    return _finish(data, size, mtime, max_bytes)


def _finish(
    data: bytes, size: int, mtime: float, max_bytes: int, keep_binary: bool = False
) -> ReadResult:
    problems: list[Problem] = []
    binary = b"\x00" in data[:BINARY_SNIFF_BYTES]
    if binary:
        problems.append(
            Problem("binary", "binary file (contains NUL bytes): not a memory", Span(0, 0, 0, 0))
        )
        if not keep_binary:
            return ReadResult("", size, mtime, tuple(problems), binary=True)
    partial = len(data) > max_bytes
    if partial:
        data = data[:max_bytes]
        # Do not leave a broken multi-byte sequence at the cut.
        while data and (data[-1] & 0xC0) == 0x80:
            data = data[:-1]
        if data and data[-1] >= 0xC0:
            data = data[:-1]
        problems.append(
            Problem(
                "too-large",
                f"file is {size:,} bytes; only the first {max_bytes:,} were read",
                Span(0, 0, 0, 0),
            )
        )
    text = _decode(data, problems)
    return ReadResult(text, size, mtime, tuple(problems), partial=partial, binary=binary)
