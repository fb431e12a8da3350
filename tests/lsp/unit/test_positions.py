"""The core's LF-only lines against the client's LSP lines (``\\n``, ``\\r\\n``, ``\\r``).

Oracle: a core (line, column) and the client (line, column) it maps to name the same offset of
the text, each in its own line model; and mapping back gives the core position again.
"""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st
from memdir.model import Span
from memdir_lsp import positions

texts = st.text(alphabet=st.sampled_from("ab\r\n😀"), max_size=40)


def core_offset(text: str, line: int, col: int) -> int:
    return sum(len(part) + 1 for part in text.split("\n")[:line]) + col


def client_offset(text: str, line: int, col: int) -> int:
    starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", text)]
    return starts[line] + col


@given(texts)
def test_every_core_position_names_the_same_offset_for_the_client(text: str) -> None:
    lines = text.split("\n")
    client = positions.client_lines(lines)
    assert [line.removesuffix("\r") for line in client] == re.split(r"\r\n|\r|\n", text)
    for number, line in enumerate(lines):
        for col in range(len(line) + 1):
            if col and line[col - 1] == "\r" and col == len(line) and number < len(lines) - 1:
                continue  # between a CRLF's CR and LF: no client position
            mapped, _ = positions.for_client(Span(number, col, number, col), lines)
            at = core_offset(text, number, col)
            assert client_offset(text, mapped.start_line, mapped.start_col) == at
            assert positions.to_core(lines, mapped.start_line, mapped.start_col) == (number, col)


def test_without_a_lone_cr_the_lines_are_the_core_s() -> None:
    lines = ["a\r", "b", "c"]
    span = Span(1, 0, 2, 1)
    assert positions.for_client(span, lines) == (span, lines)
    assert positions.client_lines(lines) is lines
    assert positions.to_core(lines, 2, 1) == (2, 1)


def test_a_client_column_past_a_piece_stays_on_its_core_piece() -> None:
    lines = ["ab\rcd", ""]
    assert positions.to_core(lines, 0, 9) == (0, 2)
    assert positions.to_core(lines, 1, 9) == (0, 5)
