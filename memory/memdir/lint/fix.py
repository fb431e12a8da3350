"""``memdir lint --fix``: the safe fixes of a lint run, written through the one writer.

Fixes are data (text edits and file creations against the text lint read). Which fixes go
together is :func:`memdir.fixes.apply.compatible`'s call (a fix overlapping one already taken
waits for the next run); every file is then read and written once, under the memory dir's lock,
through :class:`memdir.writing.writer.MemoryWriter` (confined, atomic, creations never overwrite).
What a file had is kept: its byte-order mark, its line endings (inserted text follows them), every
byte outside the edited ranges. A file that is not valid UTF-8 is never rewritten: decoding it would
replace bytes the user may still want.
"""

from __future__ import annotations

import functools
import os
import posixpath
from collections import Counter
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from memdir.agent.index import Index
from memdir.fixes.apply import FixError, apply_text_edits, overlaps, take
from memdir.fixes.model import Fix, TextEdit
from memdir.fixes.plan import (
    confined,
    dangling_fixes,
    distinct,
    skeleton_choices,
    skeleton_type,
    type_choices,
)
from memdir.lint.diagnostic import Diagnostic
from memdir.model import TopicFile

__all__ = ["FixError", "FixReport", "apply_fixes", "apply_text_edits"]

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


def _root_of(path: Path, rel_path: str) -> Path:
    """The memory dir ``path`` lies in, given its path ``rel_path`` relative to it."""
    return path.parents[len(PurePosixPath(rel_path).parts) - 1]


def _edited(text: str, edits: list[TextEdit]) -> str:
    """``text`` (as read, BOM and CRLF included) with ``edits`` applied in its own style."""
    bom = ""
    if text.startswith(_BOM):
        bom, text = _BOM, text[1:]
    if "\r\n" in text:
        edits = [
            TextEdit(e.path, e.rel_path, e.span, e.new_text.replace("\n", "\r\n")) for e in edits
        ]
    return bom + apply_text_edits(text, edits)


def apply_fixes(diagnostics: Iterable[Diagnostic], *, safe_only: bool = True) -> FixReport:
    """Apply the fixes of ``diagnostics`` (only the safe ones unless ``safe_only`` is False)."""
    chosen: list[Diagnostic] = []
    skipped: list[tuple[Diagnostic, str]] = []
    taken: dict[Path, list[tuple[int, int, int, int]]] = {}
    diagnostics = list(diagnostics)
    twice = _drafted_twice([d.fix for d in diagnostics if d.fix is not None and d.fix.safe])
    for diagnostic in diagnostics:
        fix = diagnostic.fix
        if fix is None:
            continue
        if safe_only and not fix.safe:
            skipped.append((diagnostic, "not a safe fix: apply it in an editor"))
            continue
        if safe_only and id(fix) in twice:
            skipped.append((diagnostic, "drafts a description another file drafts too: edit it"))
            continue
        if fix.deletes:
            skipped.append((diagnostic, "deletes a file: apply it in an editor"))
            continue
        if overlaps(fix, taken):
            skipped.append((diagnostic, "overlaps another fix: run --fix again"))
            continue
        take(fix, taken)
        chosen.append(diagnostic)

    # Per file: its creation text (when it is new), its edits, and the fixes that touch it.
    creations: dict[Path, str] = {}
    edits: dict[Path, list[TextEdit]] = {}
    names: dict[Path, tuple[Path, str]] = {}
    owners: dict[Path, list[Diagnostic]] = {}
    for diagnostic in chosen:
        assert diagnostic.fix is not None
        for create in diagnostic.fix.creates:
            if not os.path.lexists(create.path):
                creations.setdefault(create.path, create.text)
            names[create.path] = (_root_of(create.path, create.rel_path), create.rel_path)
            owners.setdefault(create.path, []).append(diagnostic)
        for edit in diagnostic.fix.edits:
            edits.setdefault(edit.path, []).append(edit)
            names[edit.path] = (_root_of(edit.path, edit.rel_path), edit.rel_path)
            owners.setdefault(edit.path, []).append(diagnostic)

    from memdir.config import Settings  # the writer and its lock: only when fixing
    from memdir.writing.results import NotUTF8Error, WriteError
    from memdir.writing.writer import MemoryWriter

    writers: dict[Path, MemoryWriter] = {}
    failed: dict[int, str] = {}
    written: list[Path] = []
    for path in sorted(names):
        root, rel = names[path]
        writer = writers.get(root)
        if writer is None:
            # Settings only steer index upkeep, which fixes (with their own edits) never ask for.
            writer = writers[root] = MemoryWriter(root, settings=Settings())
        file_edits = edits.get(path, [])
        if path not in creations and not file_edits:
            continue  # created meanwhile by someone else: nothing of ours to write
        try:
            if path in creations:
                writer.create(rel, apply_text_edits(creations[path], file_edits), maintain=False)
            else:
                writer.rewrite(rel, functools.partial(_edited, edits=file_edits), maintain=False)
        except NotUTF8Error:
            reason = f"{path.name} is unreadable or not UTF-8: left alone"
        except FixError as exc:
            reason = f"{path.name} changed since it was linted ({exc})"
        except WriteError as exc:
            reason = f"{path.name} left alone: {exc.message}"
        else:
            written.append(path)
            continue
        for diagnostic in owners[path]:
            failed[id(diagnostic)] = reason

    applied = tuple(d for d in chosen if id(d) not in failed)
    skipped.extend((d, failed[id(d)]) for d in chosen if id(d) in failed)
    return FixReport(applied, tuple(skipped), tuple(written))


# --- the fixes of a finding -------------------------------------------------------------------


def quick_fixes(
    diagnostic: Diagnostic,
    index: Index | None = None,
    topic: TopicFile | None = None,
    taken: Collection[str] = (),
) -> list[Fix]:
    """Every fix for one lint finding, the one lint attached first.

    The editor has what lint does not keep for every finding: the parsed ``index`` (for
    MEM005's "remove the entry"), the parsed ``topic`` (for MEM104's other types) and the names
    ``taken`` in the dir (so a created file never lands on one differing only in case).
    """
    attached = diagnostic.fix
    fixes: list[Fix] = []
    code = diagnostic.code
    if code == "MEM005" and index is not None:
        entry = next((e for e in index.entries if e.line == diagnostic.span.start_line), None)
        if entry is not None and entry.path:
            key = posixpath.normpath(entry.path)
            return distinct(dangling_fixes(index, entry, key, taken))
    if attached is not None:
        fixes.append(attached)
    if code == "MEM104" and topic is not None:
        suggested = attached.edits[0].new_text if attached is not None and attached.edits else None
        fixes += type_choices(topic, suggested)
    if code == "MEM101" and topic is not None and topic.frontmatter is None:
        # The attached skeleton's type comes first; the person may say it is another kind.
        fixes += skeleton_choices(topic, skeleton_type(topic)[0])
    return distinct(fixes)


def safe_fixes(diagnostics: Iterable[Diagnostic]) -> list[Fix]:
    """The fixes ``memdir lint --fix`` and the editor's "fix all" apply unattended.

    Each skeleton is planned from its own file; two that would draft the same description
    (two files with the same opening sentence) would leave a near-duplicate (MEM111) of the
    run's own making, so both are left to the editor."""
    fixes = [d.fix for d in diagnostics if d.fix is not None and d.fix.safe and confined(d.fix)]
    twice = _drafted_twice(fixes)
    return [fix for fix in fixes if id(fix) not in twice]


def _drafted_twice(fixes: list[Fix]) -> set[int]:
    """The ids of the skeletons whose drafted description another skeleton drafts too."""
    drafted = [(fix, _drafted_description(fix)) for fix in fixes]
    seen = Counter(d for _, d in drafted if d is not None)
    return {id(fix) for fix, d in drafted if d is not None and seen[d] > 1}


def _drafted_description(fix: Fix) -> str | None:
    """The description line a frontmatter skeleton writes, or None for any other fix."""
    for edit in fix.edits:
        if edit.new_text.startswith("---"):
            for line in edit.new_text.split("\n"):
                if line.startswith("description:"):
                    return line.strip()
    return None
