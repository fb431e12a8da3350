"""Reading memory files defensively, and counting text the way the agent does.

Memory files come from agents and people; some are not UTF-8, some are binary, some are huge,
some vanish between listing and reading, some are FIFOs or devices named like a memory, some are
symlinks leading out of the memory dir. Every reader here returns what it could read plus
:class:`~memdir.model.Problem` values; none raises for a bad file, none blocks on one (only
regular files are opened) and none reads more than its cap.
"""

from __future__ import annotations

import os
import re
import stat as stat_module
from collections.abc import Iterable
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
    """Length in UTF-16 code units: what a JavaScript string's ``length`` reports (a lone
    surrogate, which an editor's JSON can carry, is one unit there too)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def utf8_len(text: str) -> int:
    """Length in UTF-8 bytes; a lone surrogate counts the 3 bytes of the U+FFFD it is written
    as, instead of failing."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-8", "surrogatepass"))


_SURROGATE = re.compile("[\ud800-\udfff]")


def lone_surrogate(text: str) -> str | None:
    """The first lone surrogate of ``text`` (a JSON ``"\\ud800"``, or a file name that is not
    UTF-8 as Python decodes it), which no UTF-8 encoder accepts; None for valid text."""
    if text.isascii():
        return None
    found = _SURROGATE.search(text)
    return found.group() if found else None


def without_surrogates(text: str) -> str:
    """``text`` with each lone surrogate as U+FFFD, so that it can be encoded (a pair split in
    two code points is joined); valid text is returned as is."""
    if lone_surrogate(text) is None:
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def utf16_prefix_index(text: str, units: int) -> int:
    """The largest string index whose prefix is at most ``units`` UTF-16 code units long."""
    if text.isascii() or max(text) <= "\uffff":  # one unit per character
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


#: Problem kinds meaning memdir did not read the file at all (its text is empty, not the file's).
NOT_READ_KINDS = frozenset(("unreadable", "outside"))
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_KIND_NAMES = (
    (stat_module.S_ISLNK, "a symbolic link"),
    (stat_module.S_ISFIFO, "a FIFO"),
    (stat_module.S_ISSOCK, "a socket"),
    (stat_module.S_ISCHR, "a character device"),
    (stat_module.S_ISBLK, "a block device"),
    (stat_module.S_ISDIR, "a directory"),
    (stat_module.S_ISLNK, "a symlink"),
)


def kind_name(mode: int) -> str:
    """What a stat's ``mode`` is, in words: "a FIFO", "a symlink", "a file" (a regular one)."""
    if stat_module.S_ISREG(mode):
        return "a file"
    return next((name for test, name in _KIND_NAMES if test(mode)), "a special file")


class NotRegularFileError(OSError):
    """A FIFO, socket, device or directory where a memory file was expected: never opened
    (a FIFO blocks a reader for good, a device may act on being opened)."""

    def __init__(self, mode: int) -> None:
        kind = kind_name(mode)
        super().__init__(f"not a regular file ({kind})")
        self.strerror = f"not a regular file ({kind})"


def require_regular(mode: int) -> None:
    """Raise :class:`NotRegularFileError` unless ``mode`` (a stat's) is a regular file's."""
    if not stat_module.S_ISREG(mode):
        raise NotRegularFileError(mode)


def open_regular(path: Path | str, *, follow_links: bool = True) -> tuple[int, os.stat_result]:
    """A read-only descriptor of ``path`` and its stat, for a regular file only.

    Checked before opening (a device may act on ``open`` itself) and again on the descriptor
    (the name may be swapped in between); opened non-blocking, so even a FIFO slipped in at
    that moment cannot hang the reader. Without ``follow_links`` a symlink is refused too
    (``O_NOFOLLOW``: not even one swapped in at that moment is followed). Raises
    :class:`NotRegularFileError` or another OSError.
    """
    if follow_links:
        require_regular(os.stat(path).st_mode)
        fd = os.open(path, _OPEN_FLAGS)
    else:
        mode = os.lstat(path).st_mode
        if stat_module.S_ISLNK(mode):
            raise SymlinkRefusedError()
        require_regular(mode)
        fd = os.open(path, _OPEN_FLAGS | _NOFOLLOW)
    try:
        stat = os.fstat(fd)
        require_regular(stat.st_mode)
    except BaseException:
        os.close(fd)
        raise
    return fd, stat


class SymlinkRefusedError(OSError):
    """A symlink where memdir reads only the file itself (it may lead anywhere)."""

    def __init__(self) -> None:
        super().__init__("a symbolic link: memdir does not follow it")
        self.strerror = "a symbolic link: memdir does not follow it"


class TooLargeError(OSError):
    """A file larger than its reader's cap (a settings file, where a prefix means nothing)."""

    def __init__(self, size: int, max_bytes: int) -> None:
        message = f"{size:,} bytes: larger than the {max_bytes:,} bytes memdir reads"
        super().__init__(message)
        self.strerror = message


def read_bytes(
    path: Path | str, max_bytes: int, *, follow_links: bool = True, truncate: bool = True
) -> bytes:
    """The bytes of the regular file ``path``: its first ``max_bytes`` (``truncate``), or the
    whole file, :class:`TooLargeError` when it is larger. Never blocks on a special file, never
    reads past the cap (see :func:`open_regular`); raises OSError for what it cannot read."""
    fd, stat = open_regular(path, follow_links=follow_links)
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        if not truncate:
            raise TooLargeError(max(stat.st_size, len(data)), max_bytes)
        data = data[:max_bytes]
    return data


def outside(path: Path, root: Path) -> Problem | None:
    """The problem of reading ``path`` for the memory dir ``root`` when it resolves outside it
    (a symlinked file or folder leading out), else None: memdir never reads through such a link.
    The check is :func:`memdir.containment.relative_inside`, the one confinement check."""
    from memdir.containment import relative_inside  # costs the import only to readers given a root

    if relative_inside(root, path) is not None:
        return None
    return Problem(
        "outside",
        f"{path.name}: symlink leads outside the memory dir: memdir does not follow it",
        Span(0, 0, 0, 0),
    )


def not_read(problems: Iterable[Problem]) -> Problem | None:
    """The problem that kept memdir from reading a file at all (unreadable, not a regular file,
    outside the memory dir), or None when it was read."""
    return next((p for p in problems if p.kind in NOT_READ_KINDS), None)


def _unreadable(path: Path, exc: OSError) -> ReadResult:
    reason = exc.strerror or type(exc).__name__
    return ReadResult(
        "", 0, 0.0, (Problem("unreadable", f"cannot read {path.name}: {reason}", Span(0, 0, 0, 0)),)
    )


def read_text(
    path: Path,
    max_bytes: int = MAX_PARSE_BYTES,
    keep_binary: bool = False,
    *,
    root: Path | None = None,
) -> ReadResult:
    """The whole file as text (at most ``max_bytes`` of it), with problems instead of errors.

    A binary file reads as empty unless ``keep_binary`` (the agent injects MEMORY.md whatever
    it holds, so memdir must read it the same way): then it is decoded anyway, still flagged.
    With ``root`` (the memory dir), a path resolving outside it is not read (an ``outside``
    problem); callers without it pass paths the confined walk produced.
    """
    refused = outside(path, root) if root is not None else None
    if refused is not None:
        return ReadResult("", 0, 0.0, (refused,))
    return read_text_stat(path, max_bytes, keep_binary)[0]


def read_text_stat(
    path: Path, max_bytes: int = MAX_PARSE_BYTES, keep_binary: bool = False
) -> tuple[ReadResult, os.stat_result | None]:
    """:func:`read_text` (without ``root``), and the stat of the very file read (None when it
    was not read): what a cache of files keys on."""
    try:
        fd, stat = open_regular(path)
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(max_bytes + 1)
    except OSError as exc:
        return _unreadable(path, exc), None
    return _finish(data, stat.st_size, stat.st_mtime, max_bytes, keep_binary), stat


def read_tail(
    path: Path | str, max_bytes: int, *, follow_links: bool = True
) -> tuple[bytes, os.stat_result, bool]:
    """The end of a regular file: its whole lines within the last ``max_bytes`` bytes.

    For append-only logs read for their recent records (a session transcript): a 1 GB file
    costs one seek and ``max_bytes`` of reading, and a line cut by the window's start is left
    out rather than parsed half. Returns the bytes, the file's stat and whether anything before
    them was left out. Raises :class:`NotRegularFileError` or another OSError, as
    :func:`open_regular` (``follow_links`` is its).
    """
    fd, stat = open_regular(path, follow_links=follow_links)
    with os.fdopen(fd, "rb") as handle:
        # One byte before the window tells whether the window starts at a line start.
        start = max(0, stat.st_size - max_bytes - 1)
        handle.seek(start)
        data = handle.read(max_bytes + 1)
    if start == 0 and len(data) <= max_bytes:
        return data, stat, False
    newline = data.find(b"\n")
    return (data[newline + 1 :] if newline >= 0 else b""), stat, True


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
        fd, stat = open_regular(path)
        with os.fdopen(fd, "rb") as handle:
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
        size = utf8_len(line) + (1 if kept else 0)
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
    data: bytes,
    size: int,
    mtime: float,
    max_bytes: int = MAX_PARSE_BYTES,
    keep_binary: bool = False,
) -> ReadResult:
    """Bytes already read from a file (``size``/``mtime`` from its stat) as :func:`read_text`
    would return them: binary sniffing, the size cap, UTF-8 decoding with problems, BOM removal.
    For callers that read files themselves (the lint engine reads each file once, as bytes)."""
    return _finish(data, size, mtime, max_bytes, keep_binary)


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
