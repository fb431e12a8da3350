"""Will the agent see this memory? The answer for one topic file, and for a whole directory.

Path A shows a memory when an index entry linking it lies within MEMORY.md's load cap; path B
can choose it when it is among the newest files the prefetch scan keeps; either way it is
injected whole or cut at the injection caps. The hover, ``memory/list`` and the Memories view all
ask here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

from memdir import constants as C
from memdir.agent.index import Index
from memdir.agent.manifest import iso_mtime
from memdir.agent.scan import ScanResult
from memdir.faces.projections import SkippedFile, skipped_files
from memdir.fixes.plan import entries_linking
from memdir.recall.surface import cut_for_injection
from memdir.textio import utf8_len

IndexState = Literal["loaded", "cut", "missing"]


@dataclass(frozen=True)
class Visibility:
    """How the agent's two paths see one topic file."""

    #: Some MEMORY.md entry links it.
    in_index: bool
    #: ``loaded``: path A shows an entry; ``cut``: every entry is past the load cap; ``missing``.
    index: IndexState
    #: 0-based MEMORY.md lines of the entries linking it.
    index_lines: tuple[int, ...]
    #: Among the newest-first prefetch candidates (path B can choose it).
    in_window: bool
    #: 1-based rank among the prefetch candidates, newest first; null outside the window.
    window_rank: int | None
    #: How many candidates the window holds.
    window_size: int
    #: ``truncated`` when injecting it cuts it at the line or byte cap.
    injection: Literal["whole", "truncated"]
    #: Which cap cut it.
    truncated_reason: str | None
    #: UTF-8 size of the file.
    bytes: int
    #: The file exists (on disk or as an unsaved buffer).
    exists: bool


def prefetch_ranks(result: ScanResult) -> dict[str, int]:
    """1-based rank of every prefetch candidate, newest first."""
    return {h.rel_path: n for n, h in enumerate(result.candidates, 1)}


def visibility(
    index: Index, rel_path: str, text: str | None, ranks: Mapping[str, int], window_size: int
) -> Visibility:
    """The visibility of ``rel_path`` whose current text is ``text`` (None: no such file)."""
    entries = entries_linking(index, rel_path)
    cut_lines = {e.line for e in index.cut_entries}
    state: IndexState = "missing"
    if entries:
        state = "loaded" if any(e.line not in cut_lines for e in entries) else "cut"
    reason: str | None = None
    size = 0
    if text is not None:
        _content, reason = cut_for_injection(text)
        size = utf8_len(text)
    rank = ranks.get(rel_path)
    return Visibility(
        in_index=bool(entries),
        index=state,
        index_lines=tuple(e.line for e in entries),
        in_window=rank is not None,
        window_rank=rank,
        window_size=window_size,
        injection="truncated" if reason else "whole",
        truncated_reason=reason,
        bytes=size,
        exists=text is not None,
    )


@dataclass(frozen=True)
class ListedMemory:
    """A topic file as the prefetch scan reads it, with its visibility."""

    #: Relative to the memory dir, ``/``-separated.
    path: str
    name: str | None
    type: str | None
    description: str | None
    #: Last modified, ISO 8601 UTC with milliseconds.
    mtime: str
    #: Size in bytes on disk.
    size: int
    visibility: Visibility


@dataclass(frozen=True)
class MemoryListing:
    """Every topic file of one directory with its visibility."""

    directory: str
    #: Prefetch candidates first (newest first), then the files past the window.
    memories: tuple[ListedMemory, ...]
    #: How many files the prefetch window holds at most.
    window_size: int
    skipped: tuple[SkippedFile, ...]


def list_memories(
    result: ScanResult, index: Index, text_of: Callable[[str], str | None]
) -> MemoryListing:
    """Every topic file of a scan, each with its visibility."""
    ranks = prefetch_ranks(result)
    memories = tuple(
        ListedMemory(
            path=h.rel_path,
            name=h.name,
            type=h.type,
            description=h.description,
            mtime=iso_mtime(h.mtime),
            size=h.size,
            visibility=visibility(
                index, h.rel_path, text_of(h.rel_path), ranks, len(result.candidates)
            ),
        )
        for h in result.all_files
    )
    return MemoryListing(str(result.root), memories, C.SCAN_MAX_FILES, skipped_files(result))
