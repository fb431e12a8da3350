"""Line breaks and columns as the core counts them and as an LSP client does.

The core breaks lines at LF only, as the agent does (it splits MEMORY.md with
``split("\\n")``), while an LSP client also ends a line at a CR not followed by LF (LSP 3.17:
``\\n``, ``\\r\\n`` and ``\\r``). In a text with a lone CR the two disagree, so every core
position bound for the client goes through :func:`for_client` and every client position through
:func:`client_lines` and :func:`to_core` (both in :class:`memdir_lsp.server.MemoryServer`'s
``to_range`` and ``from_position``). A text without a lone CR, nearly all, goes through unchanged.
Columns are counted in the client's position encoding by :func:`unit_counter`.
Kept apart from :mod:`memdir_lsp.convert` so the server imports only this before initialize.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from lsprotocol import types
from memdir.model import Span
from pygls.workspace import PositionCodec

_LONE_CR = re.compile(r"\r(?!\n)")
#: One line with its end, as the LSP counts lines; the last may have no end.
_LSP_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def split_lines(text: str) -> list[str]:
    """``text`` in lines with their ends, as the LSP breaks lines (``\\r\\n``, ``\\r``,
    ``\\n``; not U+2028 or a form feed, where ``str.splitlines`` breaks too); "" has none."""
    return _LSP_LINE.findall(text)


def unit_counter(codec: PositionCodec) -> Callable[[str], int]:
    """How many of the client's code units a string takes (pygls' count, without its loop).

    A lone surrogate counts as one UTF-16 unit and three UTF-8 bytes, as pygls counts it.
    """
    encoding = str(getattr(codec.encoding, "value", codec.encoding))
    if encoding == types.PositionEncodingKind.Utf32.value:
        return len
    if encoding == types.PositionEncodingKind.Utf8.value:
        return lambda text: (
            len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
        )
    return lambda text: (
        len(text) if text.isascii() else len(text.encode("utf-16-le", "surrogatepass")) // 2
    )


@dataclass(frozen=True)
class _LoneCRs:
    """The core's lines (split at LF) against the client's (split at CR too)."""

    #: The client's lines; a CRLF's CR stays at the end of its line, as in the core's lines.
    client: list[str]
    #: For each core line, the client line where it starts.
    first: list[int]
    #: For each core line with a lone CR, where its client lines start in it (0 first).
    starts: dict[int, list[int]]


def _lone_crs(lines: Sequence[str]) -> _LoneCRs | None:
    text = "\n".join(lines)
    if "\r" not in text or _LONE_CR.search(text) is None:
        return None
    client: list[str] = []
    first: list[int] = []
    starts: dict[int, list[int]] = {}
    last = len(lines) - 1
    for number, line in enumerate(lines):
        first.append(len(client))
        crlf = number < last and line.endswith("\r")
        body = line[:-1] if crlf else line
        if "\r" not in body:
            client.append(line)
            continue
        pieces = body.split("\r")
        if crlf:
            pieces[-1] += "\r"
        offsets = [0]
        for piece in pieces[:-1]:
            offsets.append(offsets[-1] + len(piece) + 1)
        starts[number] = offsets
        client.extend(pieces)
    return _LoneCRs(client, first, starts)


#: The last lines looked at and their map: the lines of a file are converted many times (every
#: diagnostic of a publish) from one list. Holding the list keeps its identity from being
#: reused.
_memo: tuple[Sequence[str], _LoneCRs | None] = ((), None)


def _map_of(lines: Sequence[str]) -> _LoneCRs | None:
    global _memo
    seen, found = _memo
    if seen is not lines:
        found = _lone_crs(lines)
        _memo = (lines, found)
    return found


def for_client(span: Span, lines: Sequence[str]) -> tuple[Span, Sequence[str]]:
    """``span`` over the core's ``lines`` as a span over the client's lines, and those lines
    (both unchanged without a lone CR): columns stay code points."""
    crs = _map_of(lines)
    if crs is None:
        return span, lines
    start_line, start_col = _client_point(crs, len(lines), span.start_line, span.start_col)
    end_line, end_col = _client_point(crs, len(lines), span.end_line, span.end_col)
    return Span(start_line, start_col, end_line, end_col), crs.client


def client_lines(lines: Sequence[str]) -> Sequence[str]:
    """The core's ``lines`` as the client counts lines (``lines`` itself without a lone CR)."""
    crs = _map_of(lines)
    return lines if crs is None else crs.client


def to_core(lines: Sequence[str], line: int, col: int) -> tuple[int, int]:
    """A (line, code-point column) over :func:`client_lines` as one over the core's ``lines``."""
    crs = _map_of(lines)
    if crs is None:
        return line, col
    if line >= len(crs.client):
        return len(lines) + line - len(crs.client), col
    number = bisect_right(crs.first, line) - 1
    offsets = crs.starts.get(number)
    if offsets is None:
        return number, col
    piece = line - crs.first[number]
    end = offsets[piece + 1] - 1 if piece + 1 < len(offsets) else len(lines[number])
    return number, min(offsets[piece] + col, end)


def _client_point(crs: _LoneCRs, count: int, line: int, col: int) -> tuple[int, int]:
    if not 0 <= line < count:
        return line + len(crs.client) - count, col
    offsets = crs.starts.get(line)
    if offsets is None:
        return crs.first[line], col
    piece = bisect_right(offsets, col) - 1
    return crs.first[line] + piece, col - offsets[piece]
