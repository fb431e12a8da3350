"""The bridge to the lint engine's incremental state (``memdir.lint.state.DirState``).

One ``DirState`` per memory directory, kept on the directory. The first run reads the whole
directory; after that a change re-reads only the files named, an editor's open buffer replaces
the file's disk text (``update(path, text)``), and closing the buffer goes back to the disk.
Watcher events also ``refresh()`` (a stat of every file) so files created or deleted in new
folders are noticed. Runs in a worker thread; callers serialise runs per server.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable
from pathlib import Path

from memdir.lint.diagnostic import Diagnostic
from memdir.lint.state import DirState

from memdir_lsp.directory import MemoryDirectory

#: Each directory's findings of its latest run, by file: what code actions fix.
_latest: weakref.WeakKeyDictionary[MemoryDirectory, dict[Path, list[Diagnostic]]] = (
    weakref.WeakKeyDictionary()
)


def _state(directory: MemoryDirectory, open_paths: Iterable[Path]) -> DirState:
    state = directory.lint_state
    if isinstance(state, DirState) and state.settings == directory.settings:
        return state
    state = DirState(directory.root, directory.settings)
    state.refresh()
    for path in open_paths:
        text = directory.text_of(path)
        if text is not None and path.suffix == ".md":
            state.update(path, text)
    directory.lint_state = state
    return state


def run(
    directory: MemoryDirectory,
    changed: Iterable[Path],
    open_paths: Callable[[], list[Path]],
    rescan: bool = False,
) -> dict[Path, list[Diagnostic]]:
    """Bring the state up to date with ``changed`` files and lint; diagnostics by file."""
    fresh = not isinstance(directory.lint_state, DirState) or (
        directory.lint_state.settings != directory.settings
    )
    state = _state(directory, open_paths())
    if not fresh:
        if rescan:
            state.refresh()
        for path in changed:
            if not directory.contains(path):
                continue
            try:
                # The editor's unsaved text when the file is open, else the disk (or removal).
                state.update(path, directory.text_of(path))
            except ValueError:
                continue  # not inside the directory after all (a symlinked spelling)
    result = state.lint()
    grouped: dict[Path, list[Diagnostic]] = {}
    for found in result.diagnostics:
        grouped.setdefault(found.path, []).append(found)
    _latest[directory] = grouped
    return grouped


def latest(directory: MemoryDirectory, path: Path) -> list[Diagnostic]:
    """The findings for ``path`` of the directory's latest run (none before the first)."""
    return _latest.get(directory, {}).get(path, [])
