"""The bridge to the lint engine's incremental state (``memdir.lint.state.DirState``).

One ``DirState`` per memory directory, kept on the directory. The first run reads the whole
directory; after that a change re-reads only the files named, an editor's open buffer replaces
the file's disk text (``update(path, text)``), and closing the buffer goes back to the disk.
Watcher events also ``refresh()`` (a stat of every file) so files created or deleted in new
folders are noticed. Runs in a worker thread; callers serialise runs per server. A refresh
asks the caller's ``stop`` between files: stopped (a newer edit waits), the run lints nothing,
and the next one finishes that refresh (``DirState.refresh_owed``) before linting.

The directory's project (what MEM117/MEM118 check citations against) is loaded here too, in the
same thread, since listing it runs git; project file changes are applied to it here, between
runs, and only the files that cite something are checked again. "Today" is compared with the
state's on every run, so a run after midnight re-judges every date.
"""

from __future__ import annotations

import datetime as dt
import gc
import os
import weakref
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from memdir.lint.diagnostic import Diagnostic
from memdir.lint.state import DirState

from memdir_lsp.directory import MemoryDirectory

if TYPE_CHECKING:
    from memdir.project import Changed, Project

#: A project file event: the path relative to the project root and what happened to it.
ProjectEvent = tuple[str, str]

#: One file's findings: the state's own tuple, the same object while they stay the same.
Findings = tuple[Diagnostic, ...]
#: Asked between files by a refresh: stop now (a newer edit waits to go on from there).
Stop = Callable[[], bool]
#: Told ``(files done, files listed)`` by a refresh, after each file.
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Linted:
    """What a run found, by file (files with findings only), and which files' findings differ
    from the previous run's: None when every file may differ (the state was made anew)."""

    grouped: dict[Path, Findings]
    changed: frozenset[Path] | None


#: Each directory's latest run: what code actions fix, and what the next run starts from.
_latest: weakref.WeakKeyDictionary[MemoryDirectory, Linted] = weakref.WeakKeyDictionary()
#: Open files' own findings given before the directory's first run (:func:`own_findings`).
_first: weakref.WeakKeyDictionary[MemoryDirectory, dict[Path, Findings]] = (
    weakref.WeakKeyDictionary()
)


def _project(directory: MemoryDirectory, reload: bool = False) -> Project | None:
    """The directory's project, loaded (git runs here) when first needed or on ``reload``."""
    root = directory.project_root
    if root is None:
        directory.project = None
        return None
    current = directory.project
    if reload or current is None or os.path.realpath(current.root) != os.path.realpath(root):
        from memdir.lint.rules.citations import cited_words
        from memdir.project import Project  # only with a project: keep start-up light

        # The names the memories cite, looked up in one pass while git lists the project (as
        # the CLI does), not one by one as the rules ask; names typed later as they come.
        directory.project = Project.load(root, directory.root, cited_words(directory.root))
    return directory.project


def _state(
    directory: MemoryDirectory,
    open_paths: Iterable[Path],
    today: dt.date | None,
    stop: Stop | None,
    progress: Progress | None,
) -> DirState:
    state = directory.lint_state
    if isinstance(state, DirState) and state.settings == directory.settings:
        return state
    state = DirState(directory.root, directory.settings, _project(directory))
    if today is not None:
        state.set_today(today)
    # The editor's texts first: the refresh never reads an open file from disk.
    for path in open_paths:
        text = directory.text_of(path)
        if text is not None and path.suffix == ".md":
            state.update(path, text)
    # Kept before the refresh: what a stopped one read stays read (see DirState.refresh_owed).
    directory.lint_state = state
    state.refresh(stop, progress)
    return state


def apply_project_events(project: Project, events: Sequence[ProjectEvent]) -> Changed:
    """Bring ``project`` up to date with one batch of watcher events; returns what changed
    that citation findings may depend on. The disk decides, not the event kind: a path that
    exists is (re)read, a created directory is listed file by file, a path that is gone is removed
    (with every file under it, for a directory)."""
    from memdir.project import WALK_SKIP, Changed

    recheck = Changed()
    for rel, kind in dict.fromkeys(events):
        path = os.path.join(project.root, rel)
        if os.path.isdir(path) and not os.path.islink(path):
            if kind != "created":
                continue  # a directory's own "changed": its files send their own events
            for folder, subdirs, names in os.walk(path, followlinks=False):
                subdirs[:] = [d for d in subdirs if d not in WALK_SKIP]
                prefix = os.path.relpath(folder, project.root).replace(os.sep, "/")
                for name in names:
                    recheck |= project.update_file(f"{prefix}/{name}")
        elif os.path.lexists(path):
            recheck |= project.update_file(rel)
        elif rel in project.files:
            recheck |= project.remove_file(rel)
        else:
            under = rel + "/"
            for gone in [f for f in project.files if f.startswith(under)]:
                recheck |= project.remove_file(gone)
    return recheck


def run(
    directory: MemoryDirectory,
    changed: Iterable[Path],
    open_paths: Callable[[], list[Path]],
    rescan: bool = False,
    *,
    today: dt.date | None = None,
    project_events: Sequence[ProjectEvent] = (),
    reload_project: bool = False,
    stop: Stop | None = None,
    progress: Progress | None = None,
) -> Linted | None:
    """Bring the state up to date with ``changed`` files (and the project with
    ``project_events``, or reloaded) and lint.

    ``stop`` and ``progress`` go to the directory's refresh (the first check, a rescan, or
    the rest of a stopped one; see :meth:`DirState.refresh`). None: ``stop`` said stop, nothing
    was linted, and the next run goes on from where this one stopped.
    """
    with directory.project_lock:
        return _run(
            directory,
            changed,
            open_paths,
            rescan,
            today,
            project_events,
            reload_project,
            stop,
            progress,
        )


def _run(
    directory: MemoryDirectory,
    changed: Iterable[Path],
    open_paths: Callable[[], list[Path]],
    rescan: bool,
    today: dt.date | None,
    project_events: Sequence[ProjectEvent],
    reload_project: bool,
    stop: Stop | None,
    progress: Progress | None,
) -> Linted | None:
    fresh = not isinstance(directory.lint_state, DirState) or (
        directory.lint_state.settings != directory.settings
    )
    state = _state(directory, open_paths(), today, stop, progress)
    if not fresh:
        project = _project(directory, reload_project)
        if project is not state.project:
            state.set_project(project)
        elif project is not None and project_events:
            answers = apply_project_events(project, project_events)
            if answers:
                state.recheck_citations(answers)
        if today is not None:
            state.set_today(today)
        # The changed files before the refresh, which then only stats them, and a refresh that
        # stops loses none of them.
        for path in changed:
            if not directory.contains(path):
                continue
            try:
                # The editor's unsaved text when the file is open, else the disk (or removal).
                state.update(path, directory.text_of(path))
            except ValueError:
                continue  # not inside the directory after all (a symlinked spelling)
        if rescan or state.refresh_owed:
            state.refresh(stop, progress)
    if state.refresh_owed:
        return None  # stopped: no findings from a directory read in part
    result = state.lint()
    previous = _latest.get(directory)
    if fresh or previous is None:
        linted = Linted({group[0].path: group for group in result.grouped.values()}, None)
        # The first check leaves a few hundred thousand long-lived objects, which every full
        # collection then walked (0.6 s at 20,000 files, every few edits): frozen, they are
        # skipped. Frozen objects are still freed when no longer referenced; the state holds
        # no reference cycles, so none waits for a collection that will not come.
        gc.freeze()
    else:
        # Only the files whose findings changed: the rest keep their tuples (and so the
        # server's converted diagnostics of them).
        grouped = dict(previous.grouped)
        differ: set[Path] = set()
        for rel in result.changed:
            group = result.grouped.get(rel)
            path = group[0].path if group else Path(state.root) / rel
            if group:
                grouped[path] = group
            else:
                grouped.pop(path, None)
            differ.add(path)
        linted = Linted(grouped, frozenset(differ))
    _latest[directory] = linted
    return linted


def own_findings(directory: MemoryDirectory, path: Path, today: dt.date | None) -> Findings:
    """``path``'s own findings (its rules, not the directory's, no citations), from a state
    that reads that file alone: an open file's first answer while :func:`run` still reads the
    whole directory. Runs the same rules :func:`run` does for that file."""
    state = DirState(directory.root, directory.settings)
    if today is not None:
        state.set_today(today)
    try:
        state.update(path, directory.text_of(path))
    except ValueError:
        return ()  # not inside the directory after all (a symlinked spelling)
    found = state.own_findings(path)
    # What the editor shows until the first run is done: code actions fix these.
    _first.setdefault(directory, {})[path] = found
    return found


def latest(directory: MemoryDirectory, path: Path) -> Findings:
    """The findings for ``path`` of the directory's latest run; before the first, its own
    findings when :func:`own_findings` gave them (none otherwise)."""
    found = _latest.get(directory)
    if found is None:
        return _first.get(directory, {}).get(path, ())
    return found.grouped.get(path, ())
