"""Listing a memory directory the way path B does, without ever leaving it.

Recursive ``*.md`` except ``MEMORY.md`` (at any depth) and what :func:`excluded_entry` leaves
out, the first 30 lines (at most 64 KiB) of each, newest first, at most 200 candidates (spec
section 6.2). Files beyond the cap are reported, not dropped silently. The walk survives
unreadable files, undecodable bytes, symlink loops and files deleted mid-scan, and it never
follows a symlink whose target lies outside the memory dir. A FIFO, socket or device named
``*.md`` is listed (its readers refuse to open it and say so), never read.
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from memdir import constants as C
from memdir.agent.topic import load_header
from memdir.model import MemoryHeader


@dataclass(frozen=True)
class Skipped:
    rel_path: str
    reason: str


@dataclass(frozen=True)
class ScanResult:
    root: Path
    #: At most ``limit`` headers, newest first: the prefetch candidates.
    candidates: tuple[MemoryHeader, ...]
    #: Topic files past the cap: never candidates for selection.
    cut_off: tuple[MemoryHeader, ...]
    #: Entries the walk refused or could not read (symlinks leaving the dir, loops, errors).
    skipped: tuple[Skipped, ...]

    @property
    def all_files(self) -> tuple[MemoryHeader, ...]:
        return self.candidates + self.cut_off


def excluded_entry(name: str, top_level: bool) -> bool:
    """Whether the agent's scan leaves out an entry (and everything under it) of this name.

    Any name starting with ``.``, and at the top of the memory dir ``logs``, ``sessions`` and
    ``proposals`` (the agent's own stores), compared as it compares them.
    """
    if name.startswith("."):
        return True
    if not top_level:
        return False
    folded = unicodedata.normalize("NFC", name).lower().rstrip(". ")
    return folded in C.SCAN_EXCLUDED_TOP_DIRS


def iter_topic_entries(
    root: Path, skipped: list[Skipped] | None = None
) -> Iterator[tuple[str, str]]:
    """Every topic file under ``root`` as ``(path, rel_path)`` strings, confined to ``root``.

    The walk behind :func:`iter_topic_paths`, without a ``Path`` per file: callers that list
    tens of thousands of files (lint, the language server) pay for strings only.
    """
    stack: list[tuple[str, str]] = [(os.fspath(root), "")]
    note = skipped.append if skipped is not None else (lambda _s: None)
    while stack:
        directory, prefix = stack.pop()
        try:
            with os.scandir(directory) as it:
                entries = sorted(it, key=lambda entry: entry.name)
        except OSError as exc:
            reason = f"cannot list directory: {exc.strerror or exc}"
            note(Skipped(prefix.rstrip("/") or ".", reason))
            continue
        for entry in entries:
            name = entry.name
            if excluded_entry(name, top_level=not prefix):
                continue
            rel = prefix + name
            try:
                is_link = entry.is_symlink()
                if is_link:
                    # Imported here: links are rare, and memdir.agent.paths costs every lint start.
                    from memdir.containment import relative_inside

                    target = Path(os.path.realpath(entry.path))
                    if relative_inside(root, target) is None:
                        if name.endswith(".md") or target.is_dir():
                            note(Skipped(rel, "symlink leads outside the memory dir"))
                        continue
                    if target.is_dir():
                        # Its target is inside the dir and scanned under its own path already;
                        # following it would list files twice or loop forever.
                        continue
                    if not target.exists():
                        note(Skipped(rel, "broken symlink"))
                        continue
                elif entry.is_dir(follow_symlinks=False):
                    stack.append((entry.path, rel + "/"))
                    continue
                # Not only regular files: a FIFO, socket or device named like a memory is
                # listed too, so its reader reports it (it is never opened).
                if not name.endswith(".md") or name == C.INDEX_FILENAME:
                    continue
            except OSError as exc:
                note(Skipped(rel, f"cannot stat: {exc.strerror or exc}"))
                continue
            yield entry.path, rel


def iter_topic_paths(root: Path, skipped: list[Skipped] | None = None) -> Iterator[Path]:
    """Every topic file under ``root`` (as a path inside ``root``), confined to ``root``."""
    for path, _rel in iter_topic_entries(root, skipped):
        yield Path(path)


def window_order(mtime: float, rel_path: str) -> tuple[float, str]:
    """The order of the prefetch window: newest first, ties broken by path.

    The first :data:`~memdir.constants.SCAN_MAX_FILES` files in this order are the candidates;
    lint (MEM108) uses the same key so it flags exactly the files the scan leaves out.
    """
    return (-mtime, rel_path)


def scan(root: Path, limit: int = C.SCAN_MAX_FILES) -> ScanResult:
    """Scan a memory directory for prefetch candidates."""
    skipped: list[Skipped] = []
    headers: list[MemoryHeader] = []
    for path in iter_topic_paths(root, skipped):
        header = load_header(path, root)
        if any(p.kind == "unreadable" for p in header.problems) and header.mtime == 0.0:
            # Deleted or unreadable between listing and reading: not a candidate.
            skipped.append(Skipped(header.rel_path, header.problems[0].message))
            continue
        headers.append(header)
    headers.sort(key=lambda h: window_order(h.mtime, h.rel_path))
    return ScanResult(root, tuple(headers[:limit]), tuple(headers[limit:]), tuple(skipped))
