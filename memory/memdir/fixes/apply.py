"""Fixes applied to text, and the one rule for which fixes can be applied together.

Everything that applies several fixes at once (``memdir lint --fix``, the editor's "fix all")
takes them through :func:`compatible`: a fix whose edits overlap one already taken waits for the
next run, which plans it again against the new text, rather than risking a garbled file.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from memdir.fixes.model import Fix, TextEdit


class FixError(ValueError):
    """An edit that does not fit the text it is meant for."""


def _line_starts(text: str) -> list[int]:
    starts = [0]
    at = text.find("\n")
    while at >= 0:
        starts.append(at + 1)
        at = text.find("\n", at + 1)
    return starts


def _offset(text: str, starts: Sequence[int], line: int, col: int) -> int:
    if not 0 <= line < len(starts):
        raise FixError(f"line {line + 1} is past the end of the text")
    end = starts[line + 1] - 1 if line + 1 < len(starts) else len(text)
    if not 0 <= col <= end - starts[line]:
        raise FixError(f"column {col + 1} is past the end of line {line + 1}")
    return starts[line] + col


def apply_text_edits(text: str, edits: Sequence[TextEdit]) -> str:
    """``text`` with non-overlapping ``edits`` applied; inserts at one position keep their order.

    Raises :class:`FixError` when an edit lies outside the text or edits overlap.
    """
    starts = _line_starts(text)
    ranges = []
    for order, edit in enumerate(edits):
        span = edit.span
        start = _offset(text, starts, span.start_line, span.start_col)
        end = _offset(text, starts, span.end_line, span.end_col)
        if end < start:
            raise FixError("an edit ends before it starts")
        ranges.append((start, end, order, edit.new_text))
    ranges.sort()
    out: list[str] = []
    position = 0
    for start, end, _order, new_text in ranges:
        if start < position:
            raise FixError("edits overlap")
        out.append(text[position:start])
        out.append(new_text)
        position = end
    out.append(text[position:])
    return "".join(out)


Taken = dict[Path, list[tuple[int, int, int, int]]]


def overlaps(fix: Fix, taken: Taken) -> bool:
    """True when an edit of ``fix`` overlaps a range in ``taken``; inserts at a point never do."""
    for edit in fix.edits:
        s = edit.span
        mine = (s.start_line, s.start_col, s.end_line, s.end_col)
        for other in taken.get(edit.path, ()):
            if mine[:2] < other[2:] and other[:2] < mine[2:]:
                return True
    return False


def take(fix: Fix, taken: Taken) -> None:
    for edit in fix.edits:
        s = edit.span
        taken.setdefault(edit.path, []).append((s.start_line, s.start_col, s.end_line, s.end_col))


def compatible(fixes: Iterable[Fix]) -> tuple[list[Fix], list[Fix]]:
    """``fixes`` split into those that apply together (first come, first taken) and the rest."""
    taken: Taken = {}
    chosen: list[Fix] = []
    left: list[Fix] = []
    for fix in fixes:
        if overlaps(fix, taken):
            left.append(fix)
            continue
        take(fix, taken)
        chosen.append(fix)
    return chosen, left


def combine(title: str, fixes: Iterable[Fix]) -> Fix | None:
    """The :func:`compatible` part of ``fixes`` as one fix (for the editor's "fix all")."""
    # A deletion is a person's decision about one pair of memories, never part of "fix all".
    chosen, _ = compatible(f for f in fixes if not f.deletes)
    if not chosen:
        return None
    edits = tuple(e for f in chosen for e in f.edits)
    creates = tuple({c.path: c for f in chosen for c in f.creates}.values())
    return Fix(title, edits, creates, safe=all(f.safe for f in chosen))
