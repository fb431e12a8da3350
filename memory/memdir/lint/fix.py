"""Applying fixes: the safe ones for ``memdir lint --fix``, any chosen one for other callers.

Fixes are data (text edits and file creations against the text lint read), so this module is the
only place that writes. It groups the edits by file, skips a fix whose edits overlap one already
taken (the next run offers it again), and writes each file once with
:func:`memdir.atomic.write_atomic`. What a file had is kept: its byte-order mark, its line endings
(inserted text follows them), every byte outside the edited ranges. A file that is not valid
UTF-8 is never rewritten: decoding it would replace bytes the user may still want.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from memdir.lint.diagnostic import Diagnostic, Fix, TextEdit

_BOM = "\ufeff"


@dataclass(frozen=True)
class FixReport:
    """What :func:`apply_fixes` did."""

    #: Diagnostics whose fix was applied, in order.
    applied: tuple[Diagnostic, ...]
    #: Diagnostics with a fix that was not applied, and why.
    skipped: tuple[tuple[Diagnostic, str], ...]
    #: Absolute paths of the files written (created or changed).
    written: tuple[Path, ...]


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


def _overlaps(fix: Fix, taken: dict[Path, list[tuple[int, int, int, int]]]) -> bool:
    for edit in fix.edits:
        s = edit.span
        mine = (s.start_line, s.start_col, s.end_line, s.end_col)
        for other in taken.get(edit.path, ()):
            # Strict overlap of half-open ranges; inserts at one point never overlap.
            if mine[:2] < other[2:] and other[:2] < mine[2:]:
                return True
    return False


def _read_for_edit(path: Path) -> tuple[str, str, str] | None:
    """(text without BOM, BOM, newline) of an existing file, or None if it must not be edited."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    bom = ""
    if text.startswith(_BOM):
        bom, text = _BOM, text[1:]
    newline = "\r\n" if "\r\n" in text else "\n"
    return text, bom, newline


def apply_fixes(diagnostics: Iterable[Diagnostic], *, safe_only: bool = True) -> FixReport:
    """Apply the fixes of ``diagnostics`` (only the safe ones unless ``safe_only`` is False)."""
    chosen: list[Diagnostic] = []
    skipped: list[tuple[Diagnostic, str]] = []
    taken: dict[Path, list[tuple[int, int, int, int]]] = {}
    for diagnostic in diagnostics:
        fix = diagnostic.fix
        if fix is None:
            continue
        if safe_only and not fix.safe:
            skipped.append((diagnostic, "not a safe fix: apply it in an editor"))
            continue
        if _overlaps(fix, taken):
            skipped.append((diagnostic, "overlaps another fix: run --fix again"))
            continue
        chosen.append(diagnostic)
        for edit in fix.edits:
            s = edit.span
            taken.setdefault(edit.path, []).append(
                (s.start_line, s.start_col, s.end_line, s.end_col)
            )

    # Per file: the text to start from (existing file, or a creation) and the edits.
    creations: dict[Path, str] = {}
    edits: dict[Path, list[TextEdit]] = {}
    owners: dict[Path, list[Diagnostic]] = {}
    for diagnostic in chosen:
        assert diagnostic.fix is not None
        for create in diagnostic.fix.creates:
            if not os.path.lexists(create.path):
                creations.setdefault(create.path, create.text)
            owners.setdefault(create.path, []).append(diagnostic)
        for edit in diagnostic.fix.edits:
            edits.setdefault(edit.path, []).append(edit)
            owners.setdefault(edit.path, []).append(diagnostic)

    from memdir.atomic import write_atomic  # tempfile and friends: only when fixing

    failed: dict[int, str] = {}
    written: list[Path] = []
    for path in sorted(set(creations) | set(edits)):
        if path in creations:
            base: tuple[str, str, str] | None = (creations[path], "", "\n")
        else:
            base = _read_for_edit(path)
        if base is None:
            for diagnostic in owners[path]:
                failed[id(diagnostic)] = f"{path.name} is unreadable or not UTF-8: left alone"
            continue
        text, bom, newline = base
        file_edits = edits.get(path, [])
        if newline != "\n":
            file_edits = [
                TextEdit(e.path, e.rel_path, e.span, e.new_text.replace("\n", newline))
                for e in file_edits
            ]
        try:
            new_text = apply_text_edits(text, file_edits)
        except FixError as exc:
            for diagnostic in owners[path]:
                failed[id(diagnostic)] = f"{path.name} changed since it was linted ({exc})"
            continue
        if path in creations:
            path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, bom + new_text)
        written.append(path)

    applied = tuple(d for d in chosen if id(d) not in failed)
    skipped.extend((d, failed[id(d)]) for d in chosen if id(d) in failed)
    return FixReport(applied, tuple(skipped), tuple(written))
