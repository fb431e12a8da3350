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
        return data.decode("utf-8")
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
    """Only the first ``max_lines`` lines (the scan never needs more)."""
    try:
        with path.open("rb") as handle:
            stat = os.fstat(handle.fileno())
            chunks: list[bytes] = []
            newlines = 0
            total = 0
            while newlines < max_lines and total <= max_bytes:
                chunk = handle.read(4096)
                if not chunk:
                    break
                chunks.append(chunk)
                newlines += chunk.count(b"\n")
                total += len(chunk)
    except OSError as exc:
        return _unreadable(path, exc)
    data = b"".join(chunks)
    cut = -1
    for _ in range(max_lines):
        cut = data.find(b"\n", cut + 1)
        if cut < 0:
            break
    partial = cut >= 0 and cut + 1 < stat.st_size
    if cut >= 0:
        data = data[: cut + 1]
    result = _finish(data[: max_bytes + 1], stat.st_size, stat.st_mtime, max_bytes)
    return ReadResult(
        result.text,
        result.size,
        result.mtime,
        result.problems,
        partial or result.partial,
        result.binary,
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
