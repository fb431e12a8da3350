"""Open documents: an incremental change gives the text an editor has (LSP line ends, every
position encoding), where pygls' own document does not (each case shown against it)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from lsprotocol import types
from memdir.model import Span
from memdir_lsp import positions as core_positions
from memdir_lsp.adapter import MemoryDocument
from memdir_lsp.positions import split_lines, unit_counter
from pygls.workspace import PositionCodec, TextDocument

#: Line ends of every kind, and the separators ``str.splitlines`` breaks at but the LSP does not.
PIECES = ["a", "b", " ", "\n", "\r\n", "\r", "é", "😀", "\u2028", "\x0c", "\x85"]
ENCODINGS = ["utf-8", "utf-16", "utf-32"]


def units(char: str, encoding: str) -> int:
    if encoding == "utf-8":
        return len(char.encode("utf-8"))
    return 2 if encoding == "utf-16" and ord(char) > 0xFFFF else 1


def offset(text: str, position: types.Position, encoding: str) -> int:
    """Where an editor puts ``position``: lines end at CRLF, CR or LF; a column past the line's
    end is its end; a line past the last is the end of the text."""
    lines = split_lines(text)
    if position.line >= len(lines):
        return len(text)
    start = sum(len(line) for line in lines[: position.line])
    content = lines[position.line].rstrip("\r\n")
    counted = 0
    for index, char in enumerate(content):
        if counted >= position.character:
            return start + index
        counted += units(char, encoding)
    return start + len(content)


def change(
    start: types.Position, end: types.Position, text: str
) -> types.TextDocumentContentChangePartial:
    return types.TextDocumentContentChangePartial(
        range=types.Range(start=start, end=end), text=text
    )


texts = st.lists(st.sampled_from(PIECES), max_size=14).map("".join)
positions = st.builds(types.Position, line=st.integers(0, 8), character=st.integers(0, 6))


@given(
    texts,
    st.sampled_from(ENCODINGS),
    st.lists(st.tuples(positions, positions, texts), min_size=1, max_size=4),
)
def test_changes_give_the_editors_text(
    text: str, encoding: str, edits: list[tuple[types.Position, types.Position, str]]
) -> None:
    doc = MemoryDocument("file:///m/MEMORY.md", source=text, position_codec=PositionCodec(encoding))
    for a, b, new in edits:
        start, end = sorted((a, b), key=lambda p: (p.line, p.character))
        first, last = offset(text, start, encoding), offset(text, end, encoding)
        doc.apply_change(change(start, end, new))
        text = text[:first] + new + text[last:]
        assert doc.source == text
        assert list(doc.lines) == split_lines(text)


def test_a_line_separator_is_no_line_end() -> None:
    """pygls splits at U+2028 (``str.splitlines``): every later edit landed a line off."""
    text = "- [A](a.md) — one\u2028two\n- [B](b.md) — three\n"
    doc = MemoryDocument("file:///m/MEMORY.md", source=text)
    at = types.Position(line=1, character=0)
    doc.apply_change(change(at, at, "X"))
    assert doc.source == "- [A](a.md) — one\u2028two\nX- [B](b.md) — three\n"
    plain = TextDocument("file:///m/MEMORY.md", source=text)
    plain.apply_change(change(at, at, "X"))
    assert plain.source != doc.source  # what this replaces got it wrong


def test_a_change_past_the_end_of_the_last_line_stops_there() -> None:
    """pygls kept the text: a deletion to a column past the last line's end removed nothing."""
    start, end = types.Position(line=0, character=0), types.Position(line=0, character=2)
    doc = MemoryDocument("file:///m/MEMORY.md", source="a")
    doc.apply_change(change(start, end, ""))
    assert doc.source == ""
    plain = TextDocument("file:///m/MEMORY.md", source="a")
    plain.apply_change(change(start, end, ""))
    assert plain.source != doc.source  # what this replaces got it wrong


def test_unit_counter_counts_as_pygls() -> None:
    for encoding in ENCODINGS:
        codec = PositionCodec(encoding)
        count = unit_counter(codec)
        for text in ["", "ascii", "é😀x", "\ud800", "数据 \u2028"]:
            assert count(text) == codec.client_num_units(text), (encoding, text)


def test_positions_follow_an_edit_that_makes_a_lone_cr() -> None:
    """Positions are mapped across lone CRs by the lines of the text the client has."""
    doc = MemoryDocument("file:///m/MEMORY.md", source="- [A](a.md) — one\n- [B](b.md) — two\n")
    span = Span(1, 2, 1, 5)
    lines = doc.source.split("\n")
    assert core_positions.for_client(span, lines) == (span, lines)
    at = types.Position(line=0, character=3)
    doc.apply_change(change(at, at, "\r"))  # line 0 now ends twice for the client
    moved, client = core_positions.for_client(span, doc.source.split("\n"))
    assert (moved.start_line, moved.start_col) == (2, 2)
    assert client[2] == "- [B](b.md) — two"
