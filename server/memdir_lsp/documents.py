"""Open documents kept in lines, so an edit costs what it changes, not the document's size.

pygls' ``TextDocument`` splits the whole text into lines and writes it out again on every
change (a 2.9 MB MEMORY.md: twice per keystroke), and splits at every ``str.splitlines``
separator, so a U+2028 or form feed in the text shifts every later edit by a line. A
:class:`MemoryDocument` keeps its lines as the LSP defines them (ending at ``\\r\\n``, ``\\r`` or
``\\n``), replaces only the lines an edit touches, and joins the text once per version, when it
is asked for.

Columns are counted here too (:func:`unit_counter`): a line of ASCII needs no per-character
loop in any encoding.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from lsprotocol import types
from pygls.workspace import PositionCodec, TextDocument, Workspace

#: One line with its end, as the LSP counts lines; the last may have no end.
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def split_lines(text: str) -> list[str]:
    """``text`` in lines with their ends (``\\r\\n``, ``\\r``, ``\\n``); "" has none."""
    return _LINE.findall(text)


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


def _content(line: str) -> str:
    return line.rstrip("\r\n") if line.endswith(("\n", "\r")) else line


class MemoryDocument(TextDocument):
    """A ``TextDocument`` whose incremental changes replace lines (see the module)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._lines: list[str] | None = None
        #: ``source.split("\\n")``: the lines the core's spans count (it breaks at LF only).
        self._lf_lines: list[str] | None = None
        #: How many changes were applied: what caches of this document's text key on.
        self.revision = 0

    # --- text -------------------------------------------------------------------------------

    @property
    def source(self) -> str:
        if self._source is None and self._lines is not None:
            self._source = "".join(self._lines)
        return super().source

    @property
    def lines(self) -> Sequence[str]:
        return tuple(self._line_list())

    def lf_lines(self) -> list[str]:
        """The text split at ``\\n`` (once per revision); do not change the list."""
        if self._lf_lines is None:
            self._lf_lines = self.source.split("\n")
        return self._lf_lines

    def _line_list(self) -> list[str]:
        if self._lines is None:
            self._lines = split_lines(self.source)
        return self._lines

    # --- changes ----------------------------------------------------------------------------

    def _column(self, line: str, character: int) -> int:
        """A client column on ``line`` in code points, clamped to the line's content."""
        content = _content(line)
        if content.isascii() or self._position_codec.encoding == types.PositionEncodingKind.Utf32:
            return min(character, len(content))
        counted = 0
        for index, char in enumerate(content):
            if counted >= character:
                return index
            counted += self._position_codec.impl.code_units_for_char(char)
        return len(content)

    def _point(self, lines: list[str], position: types.Position) -> tuple[int, int]:
        """(line, code-point column); past the last line: (number of lines, 0), the end."""
        if position.line >= len(lines):
            return len(lines), 0
        return position.line, self._column(lines[position.line], position.character)

    def _apply_incremental_change(self, change: types.TextDocumentContentChangePartial) -> None:
        lines = self._line_list()
        start_line, start_col = self._point(lines, change.range.start)
        end_line, end_col = self._point(lines, change.range.end)
        if (end_line, end_col) < (start_line, start_col):
            start_line, start_col, end_line, end_col = end_line, end_col, start_line, start_col
        # Split again from one line before to one line after: an edit next to a line end can
        # join a "\r" and a "\n" into one end, or part them.
        first = max(start_line - 1, 0)
        last = min(end_line + 1, len(lines))
        segment = "".join(lines[first:last])
        start = sum(len(line) for line in lines[first:start_line]) + start_col
        end = sum(len(line) for line in lines[first:end_line]) + end_col
        lines[first:last] = split_lines(segment[:start] + change.text + segment[end:])
        self._changed()

    def _apply_full_change(self, change: types.TextDocumentContentChangeEvent) -> None:
        super()._apply_full_change(change)
        self._lines = None
        self._changed()

    def _changed(self) -> None:
        if self._lines is not None:
            self._source = None
        self._lf_lines = None
        self.revision += 1


class MemoryWorkspace(Workspace):
    """pygls' workspace with :class:`MemoryDocument` documents."""

    @classmethod
    def like(cls, other: Workspace) -> MemoryWorkspace:
        """A workspace for the same root, folders and position encoding as ``other`` (made
        while ``initialize`` is answered, before any document can be open)."""
        return cls(
            other.root_uri, other._sync_kind, list(other.folders.values()), other.position_encoding
        )

    def _create_text_document(
        self,
        doc_uri: str,
        source: str | None = None,
        version: int | None = None,
        language_id: str | None = None,
    ) -> TextDocument:
        return MemoryDocument(
            doc_uri,
            source=source,
            version=version,
            language_id=language_id,
            sync_kind=self._sync_kind,
            position_codec=self._position_codec,
        )
