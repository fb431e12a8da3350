"""Open documents kept in lines, so an edit costs what it changes, not the document's size.

pygls' ``TextDocument`` splits the whole text into lines and writes it out again on every
change (a 2.9 MB MEMORY.md: twice per keystroke), and splits at every ``str.splitlines``
separator, so a U+2028 or form feed in the text shifts every later edit by a line. A
:class:`MemoryDocument` keeps its text split at LF (the lines the core counts, and the LSP's
lines too unless the text has a CR not followed by LF; then an edit is applied by offsets),
replaces only the lines an edit touches, and joins the text once per version, when asked.

Columns are counted here too (:func:`unit_counter`): a line of ASCII needs no per-character
loop in any encoding.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from lsprotocol import types
from pygls.workspace import PositionCodec, TextDocument, Workspace

from memdir_lsp import positions

#: One line with its end, as the LSP counts lines; the last may have no end.
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_LONE_CR = re.compile(r"\r(?!\n)")


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


class MemoryDocument(TextDocument):
    """A ``TextDocument`` whose incremental changes replace lines (see the module)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: ``source.split("\n")``: the lines the core's spans count (it breaks at LF only),
        #: which are the LSP's lines too while the text has no lone CR (a CRLF line keeps its
        #: CR). One list for both: at 20,000 lines each list of a MEMORY.md takes 7 MB.
        self._lf: list[str] | None = None
        #: Whether the text has a CR not followed by LF (None: not looked at yet).
        self._lone_cr: bool | None = None
        #: How many changes were applied: what caches of this document's text key on.
        self.revision = 0

    # --- text -------------------------------------------------------------------------------

    @property
    def source(self) -> str:
        if self._source is None and self._lf is not None:
            self._source = "\n".join(self._lf)
        return super().source

    @property
    def lines(self) -> Sequence[str]:
        return tuple(split_lines(self.source))

    def lf_lines(self) -> list[str]:
        """The text split at LF, one list per version; do not change it."""
        if self._lf is None:
            self._lf = self.source.split("\n")
        return self._lf

    def share_lines(self, text: str, lines: Sequence[str]) -> None:
        """Keep ``lines``, ``text`` split at LF by someone else (the core's parse of this
        version's text), instead of an equal list of this document's own: a big MEMORY.md's
        lines are then held once. Only while ``text`` is this version's text."""
        if self._source is not text:
            return
        own = self._lf
        if own is None:
            if len(lines) == text.count("\n") + 1:
                self._lf = list(lines)
        elif len(own) == len(lines) and (own[0] is not lines[0] or own[-1] is not lines[-1]):
            self._lf = list(lines)
        self._vouch()

    def _vouch(self) -> None:
        """Tell :mod:`positions` this version's list has no lone CR when that is known, so it
        does not join and search the whole text to find out."""
        if self._lone_cr is False and self._lf is not None:
            positions.without_lone_cr(self._lf)

    # --- changes ----------------------------------------------------------------------------

    def _column(self, content: str, character: int) -> int:
        """A client column on a line's ``content`` in code points, clamped to its end."""
        if content.isascii() or self._position_codec.encoding == types.PositionEncodingKind.Utf32:
            return min(character, len(content))
        counted = 0
        for index, char in enumerate(content):
            if counted >= character:
                return index
            counted += self._position_codec.impl.code_units_for_char(char)
        return len(content)

    def _apply_incremental_change(self, change: types.TextDocumentContentChangePartial) -> None:
        lines = self.lf_lines()
        if self._lone_cr is None:
            self._lone_cr = "\r" in self.source and _LONE_CR.search(self.source) is not None
        if self._lone_cr:
            self._apply_by_offsets(change)
            return
        # Without a lone CR the LSP's lines are these; a CRLF line's CR is not in its columns.
        points = []
        for position in (change.range.start, change.range.end):
            if position.line >= len(lines):
                points.append((len(lines) - 1, len(lines[-1])))
            else:
                line = lines[position.line]
                content = line[:-1] if line.endswith("\r") else line
                points.append((position.line, self._column(content, position.character)))
        (start_line, start_col), (end_line, end_col) = sorted(points)
        segment = "\n".join(lines[start_line : end_line + 1])
        end = sum(len(line) + 1 for line in lines[start_line:end_line]) + end_col
        new = segment[:start_col] + change.text + segment[end:]
        follows = "\n" if end_line + 1 < len(lines) else ""
        self._lone_cr = "\r" in new and _LONE_CR.search(new + follows) is not None
        # A new list, not the old one changed: a list is one version (positions' memo of its
        # lone CRs goes by identity); copying 20,000 references costs 0.1 ms.
        self._lf = [*lines[:start_line], *new.split("\n"), *lines[end_line + 1 :]]
        self._changed()
        self._vouch()

    def _apply_by_offsets(self, change: types.TextDocumentContentChangePartial) -> None:
        """The change by offsets in the whole text: with a lone CR, where the LSP's lines and
        the LF lines differ (rare enough to pay a split of the text)."""
        text = self.source
        lines = split_lines(text)
        offsets = []
        for position in (change.range.start, change.range.end):
            if position.line >= len(lines):
                offsets.append(len(text))
                continue
            line = lines[position.line]
            content = line.rstrip("\r\n") if line.endswith(("\n", "\r")) else line
            before = sum(len(line) for line in lines[: position.line])
            offsets.append(before + self._column(content, position.character))
        start, end = sorted(offsets)
        self._source = text[:start] + change.text + text[end:]
        self._lf = None
        self._lone_cr = None
        self._changed()

    def _apply_full_change(self, change: types.TextDocumentContentChangeEvent) -> None:
        super()._apply_full_change(change)
        self._lf = None
        self._lone_cr = None
        self._changed()

    def _changed(self) -> None:
        if self._lf is not None:
            self._source = None
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
