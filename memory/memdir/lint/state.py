"""The lint engine's directory state: each file's findings, cached by (path, mtime, size).

The rules are pure functions (:mod:`memdir.lint.rules`); deciding what to run again is this
module's business. The language server keeps one :class:`DirState` per memory dir. When a
file changes (on disk or in the editor) only that file is read again and its rules run again;
the directory rules (orphans, dangling links, duplicates, the prefetch window) run from cached
per-file summaries, and only those whose inputs (:attr:`memdir.lint.rules.Rule.reads`)
changed, so no other file is re-read. The CLI uses the same object once: a cold run is a
refresh of an empty state.

Every topic file, however it arrives, becomes a :class:`~memdir.model.TopicFile` and is checked
by :func:`memdir.lint.rules.check_topic`, which runs every per-file rule of the registry.
"""

from __future__ import annotations

import datetime as dt
import functools
import itertools
import os
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING

from memdir import constants as C
from memdir.agent.index import Index, load_index, parse_index
from memdir.agent.scan import Skipped, iter_topic_entries
from memdir.agent.topic import parse_topic_text, topic_of_read
from memdir.config import Settings, load_settings
from memdir.lint.diagnostic import Diagnostic
from memdir.lint.engine import LintContext
from memdir.lint.rules import (
    TopicSummary,
    check_index,
    check_topic,
    directory_rules_reading,
    entry_links,
    fields_read,
    run_directory_rules,
    summarize,
)
from memdir.model import IndexEntry, TopicFile
from memdir.textio import read_text_stat

if TYPE_CHECKING:
    from memdir.agent.instructions import ReadByInstructions
    from memdir.project.lookup import Changed, Project


@dataclass(frozen=True, slots=True)
class FileResult:
    """One topic file as last linted."""

    #: ``(mtime_ns, size)`` of the file on disk when read; None for an editor's unsaved text.
    key: tuple[int, int] | None
    summary: TopicSummary
    diagnostics: tuple[Diagnostic, ...]


@dataclass(frozen=True)
class LintResult:
    """All diagnostics of one memory dir, by file and (:attr:`diagnostics`) in one sorted list."""

    root: Path
    #: Topic files linted (MEMORY.md not counted).
    files: int
    #: Relative paths whose diagnostics differ from the previous lint of the same state (every
    #: file with diagnostics on a first run): what a server must republish.
    changed: frozenset[str] = frozenset()
    #: The diagnostics by relative path, files with findings only, each sorted by position and
    #: code (not to be changed).
    grouped: Mapping[str, tuple[Diagnostic, ...]] = field(default_factory=dict)

    @functools.cached_property
    def diagnostics(self) -> tuple[Diagnostic, ...]:
        """Every diagnostic, sorted by file, position and code: made when first asked for (the
        CLI does; a server reads :attr:`grouped` and :attr:`changed`)."""
        grouped = self.grouped
        return tuple(d for rel in sorted(grouped) for d in grouped[rel])

    def by_file(self) -> dict[str, list[Diagnostic]]:
        return {rel: list(found) for rel, found in sorted(self.grouped.items())}

    def count(self, severity: str) -> int:
        return sum(1 for d in self.diagnostics if d.severity == severity)


@dataclass(frozen=True)
class _IndexResult:
    key: tuple[int, int] | None
    index: Index
    #: Each entry with its link key: what the index rules and the directory rules read.
    links: Sequence[tuple[IndexEntry, str | None]]
    diagnostics: tuple[Diagnostic, ...]
    #: The editor's text it was parsed from (None: the disk).
    overlay: str | None = None


class DirState:
    """Lint state of one memory directory, updated file by file."""

    def __init__(
        self,
        root: Path,
        settings: Settings | None = None,
        project: Project | None = None,
        *,
        project_root: Path | None = None,
    ) -> None:
        self.root = Path(os.path.abspath(root))
        self.settings = settings if settings is not None else Settings()
        #: The project the memories cite (MEM117, MEM118 check against it); None: not checked.
        self.project = project
        #: The project the directory belongs to when known without loading it (``--project``,
        #: the agent's): where to look for the instructions that may name it (else the git work
        #: tree above it).
        self.project_root = project_root
        #: The day the date rules judge against; None: the real date when the context is made.
        self._today: dt.date | None = None
        self.context = self._context()
        self._files: dict[str, FileResult] = {}
        self._overlays: dict[str, str] = {}
        self._index: _IndexResult | None = None
        self._skipped: tuple[Skipped, ...] = ()
        self._previous: dict[str, tuple[Diagnostic, ...]] = {}
        #: Files whose result was replaced or dropped since the last :meth:`lint`: all it
        #: looks at, so its bookkeeping is proportional to what changed.
        self._dirty: set[str] = set()
        #: What the last :meth:`lint` saw, to tell what changed since: the summaries the
        #: directory rules read, the index, context and skipped files, and each directory
        #: rule's findings by file.
        self._summaries: dict[str, TopicSummary] = {}
        self._linted_index: _IndexResult | None = None
        self._linted_context: LintContext | None = None
        self._linted_skipped: tuple[Skipped, ...] = ()
        self._by_rule: dict[str, dict[str, tuple[Diagnostic, ...]]] = {}
        #: A refresh happened since the last lint: the rules that read the disk run again.
        self._rescanned = True
        #: See :attr:`refresh_owed`.
        self._refresh_owed = False
        #: File -> the keys of what its check asked the project (:meth:`Project.recording`),
        #: for files that asked anything: a change of the project's files can change only the
        #: results of the files whose keys it concerns. MEMORY.md's are in ``_index_asks``.
        self._asks: dict[str, tuple[str, ...]] = {}
        self._index_asks: tuple[str, ...] = ()

    @classmethod
    def load(cls, root: Path, project_root: Path | None = None) -> DirState:
        """A state with the settings of the memory dir (memdir.toml or [tool.memdir])."""
        return cls(root, load_settings(root, project_root), project_root=project_root)

    # --- paths -------------------------------------------------------------------------------

    def rel(self, path: Path | str) -> str:
        """The ``/``-separated path of ``path`` inside the memory dir (ValueError outside it)."""
        candidate = Path(path)
        if not candidate.is_absolute():
            candidate = self.root / candidate
        absolute = Path(os.path.abspath(candidate))
        try:
            return absolute.relative_to(self.root).as_posix()
        except ValueError:
            real = Path(os.path.realpath(absolute))
            real_root = Path(os.path.realpath(self.root))
            try:
                return real.relative_to(real_root).as_posix()
            except ValueError:
                raise ValueError(f"{path} is not inside the memory dir {self.root}") from None

    def _disk(self, rel: str) -> str:
        """Where a file of the dir is on disk: made when needed, never kept (a string per file
        is megabytes in a large dir), as the scan makes it."""
        return os.path.join(self.root, rel)

    @staticmethod
    def _is_topic(rel: str) -> bool:
        return rel.endswith(".md") and rel != C.INDEX_FILENAME and not rel.startswith("../")

    # --- updates -----------------------------------------------------------------------------

    def _context(self) -> LintContext:
        context = LintContext.from_settings(self.root, self.settings, self._reading())
        if self._today is not None:
            context = replace(context, today=self._today)
        if self.project is not None:
            return replace(context, project=self.project, project_root=self.project.root)
        return (
            context
            if self.project_root is None
            else replace(context, project_root=self.project_root)
        )

    def _reading(self) -> ReadByInstructions | None:
        """How the agent reads the directory, unless forced to check it as auto memory
        (``any_format``): asked when the settings or the project change."""
        if self.settings.any_format:
            return None
        from memdir.agent.instructions import read_by_instructions

        root = self.project.root if self.project is not None else self.project_root
        return read_by_instructions(self.root, root)

    def set_settings(self, settings: Settings) -> None:
        """New settings: every result is recomputed (and files re-read) at the next refresh."""
        self.settings = settings
        self.context = self._context()
        self._dirty.update(self._files)
        self._files.clear()
        self._index = None

    def set_project(self, project: Project | None) -> None:
        """A new project: the rules run again at once, on the files that asked the previous
        one something, or on every file when there was none before (or is none now) or it
        was listed in part (then the citation rules asked it nothing)."""
        previous = self.project
        self.project = project
        self.context = self._context()
        every = previous is None or project is None or not previous.complete
        self._recheck(None if every else list(self._asks))

    def recheck_citations(self, changed: Changed | None = None) -> frozenset[str]:
        """The project's files changed (the same :class:`Project`, updated). Only files whose
        check asked about a word or path in ``changed`` (what :meth:`Project.update_file` and
        :meth:`Project.remove_file` returned) can have different results, so only they are
        checked again, MEMORY.md included; ``None``: every file that asked anything. Returns
        the files checked again."""
        if changed is None:
            rels, index = list(self._asks), True
        else:
            rels = [rel for rel, asked in self._asks.items() if changed.concerns(asked)]
            index = changed.concerns(self._index_asks)
        rechecked = self._recheck(rels, index)
        return rechecked | {C.INDEX_FILENAME} if index else rechecked

    def set_today(self, today: dt.date) -> None:
        """The date changed (midnight passed): every file is checked again, since any may
        have a date that just became stale."""
        if today == self.context.today:
            return
        self._today = today
        self.context = replace(self.context, today=today)
        self._recheck(None)

    def _recheck(self, rels: Iterable[str] | None, index: bool = True) -> frozenset[str]:
        """Run the rules again on ``rels`` (None: every file) from their editor text or disk,
        and on MEMORY.md when ``index``."""
        rels = list(self._files if rels is None else rels)
        for rel in rels:
            if rel not in self._files:
                continue
            path = self._disk(rel)
            overlay = self._overlays.get(rel)
            if overlay is not None:
                self._set_file(rel, self._load_text(path, rel, overlay))
            else:
                self._set_file(rel, self._load_disk(path, rel))
        if index and self._index is not None:
            self._refresh_index(force=True)
        return frozenset(rels)

    def refresh(
        self,
        stop: Callable[[], bool] | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> set[str]:
        """Bring the state up to date with the disk; returns the relative paths (re)read.

        Lists the directory and stats every file; only files that are new or whose
        (mtime, size) changed are read. Editor texts (see :meth:`update`) win over the disk.

        ``stop`` is asked before each file: once it says True the refresh returns, keeping
        what it read and dropping nothing (files not reached yet may still exist), and
        :attr:`refresh_owed` stays set until a refresh completes; the next one only stats the
        files read. ``progress(done, total)`` is told after each file (the listing is made
        first, to know the total).
        """
        # Set until the walk completes: a stopped (or failed) refresh is never taken for one.
        self._refresh_owed = True
        skipped: list[Skipped] = []
        seen: set[str] = set()
        reread: set[str] = set()
        entries: Iterable[tuple[str, str]] = iter_topic_entries(self.root, skipped)
        total = 0
        if progress is not None:
            entries = list(entries)
            total = len(entries)
        for done, (path, found) in enumerate(entries, 1):
            if stop is not None and stop():
                return reread
            # Interned, as the index's link keys are (the directory rules' set arithmetic).
            rel = sys.intern(found)
            seen.add(rel)
            if rel not in self._overlays and not self._unchanged(rel, path):
                self._set_file(rel, self._load_disk(path, rel))
                reread.add(rel)
            if progress is not None:
                progress(done, total)
        for rel in set(self._files) - seen - set(self._overlays):
            self._drop_file(rel)
            self._asks.pop(rel, None)
        self._skipped = tuple(skipped)
        self._rescanned = True
        if self._refresh_index():
            reread.add(C.INDEX_FILENAME)
        self._refresh_owed = False
        return reread

    def _unchanged(self, rel: str, path: str) -> bool:
        """Whether the file on disk is the one last read (same mtime and size)."""
        cached = self._files.get(rel)
        if cached is None or cached.key is None:
            return False
        try:
            stat = os.stat(path)
        except OSError:
            return False
        return (stat.st_mtime_ns, stat.st_size) == cached.key

    @property
    def refresh_owed(self) -> bool:
        """A :meth:`refresh` was stopped (or failed) and none completed since: the state may
        lack files not reached yet and keep files since deleted, so it must be refreshed
        before :meth:`lint` (which refuses)."""
        return self._refresh_owed

    def update(self, path: Path | str, text: str | None = None) -> None:
        """One file changed: re-read it (``text=None``) or take the editor's unsaved ``text``.

        A path that no longer exists (and has no text) is dropped. Nothing else is read.
        """
        from memdir.containment import relative_inside

        rel = sys.intern(self.rel(path))
        if text is not None and self._overlays.get(rel) == text and self._has_result(rel):
            return  # the editor's text as already checked: the same findings
        if text is not None:
            self._overlays[rel] = text
        else:
            self._overlays.pop(rel, None)
        if rel == C.INDEX_FILENAME:
            if text is not None and relative_inside(self.root, self.root / rel) is None:
                # An editor's MEMORY.md that leads out is not linted either (MEM114 says why).
                self._overlays.pop(rel, None)
            self._refresh_index(force=True)
            return
        if not self._is_topic(rel):
            return
        disk = self._disk(rel)
        if relative_inside(self.root, disk) is None:
            # A symlink leading out of the memory dir: never read through it (MEM114 on refresh).
            self._drop_file(rel)
            self._asks.pop(rel, None)
            return
        if text is not None:
            self._set_file(rel, self._load_text(disk, rel, text))
        elif os.path.isfile(disk):
            self._set_file(rel, self._load_disk(disk, rel))
        else:
            self.remove(rel)

    def _has_result(self, rel: str) -> bool:
        if rel == C.INDEX_FILENAME:
            return self._index is not None and self._index.overlay is not None
        return rel in self._files

    def close(self, path: Path | str) -> None:
        """The editor closed the file: forget its unsaved text and read the disk again."""
        self.update(path, None)

    def remove(self, path: Path | str) -> None:
        rel = self.rel(path)
        self._overlays.pop(rel, None)
        if rel == C.INDEX_FILENAME:
            self._refresh_index(force=True)
            return
        self._drop_file(rel)
        self._asks.pop(rel, None)

    def _set_file(self, rel: str, result: FileResult) -> None:
        self._files[rel] = result
        self._dirty.add(rel)

    def _drop_file(self, rel: str) -> None:
        if self._files.pop(rel, None) is not None:
            self._dirty.add(rel)

    # --- loading -----------------------------------------------------------------------------

    def _load_disk(self, path: str, rel: str) -> FileResult:
        read, stat = read_text_stat(Path(path))
        key = (stat.st_mtime_ns, stat.st_size) if stat is not None else None
        return self._check(key, topic_of_read(read, Path(path), rel))

    def _load_text(self, path: str, rel: str, text: str) -> FileResult:
        try:
            mtime = os.stat(path).st_mtime
        except OSError:
            mtime = time.time()  # a new file not saved yet: the newest of all
        size = len(text.encode("utf-8", "surrogatepass"))
        return self._check(None, parse_topic_text(text, Path(path), rel, mtime, size))

    def _check(self, key: tuple[int, int] | None, topic: TopicFile) -> FileResult:
        """The one way a topic file is checked, whether it came from the disk or an editor."""
        if self.project is None:
            self._asks.pop(topic.rel_path, None)
            found = check_topic(topic, self.context)
        else:
            with self.project.recording() as asked:
                found = check_topic(topic, self.context)
            if asked:
                self._asks[topic.rel_path] = tuple(asked)
            else:
                self._asks.pop(topic.rel_path, None)
        # Fields only some rules read (bodies' word runs, directives) are kept while one is on.
        read = fields_read(self.context.enabled)
        bodies, directives = "body_shingles" in read, "directives" in read
        summary = summarize(topic, self.root, bodies, directives, "numbers" in read)
        return FileResult(key, summary, tuple(found))

    def _check_index(self, key: tuple[int, int] | None, index: Index, overlay: str | None) -> None:
        links = entry_links(index.entries)
        if self.project is None:
            self._index_asks = ()
            found = check_index(index, self.context, links)
        else:
            with self.project.recording() as asked:
                found = check_index(index, self.context, links)
            self._index_asks = tuple(asked)
        self._index = _IndexResult(key, index, links, tuple(found), overlay)

    def _refresh_index(self, force: bool = False) -> bool:
        path = self.root / C.INDEX_FILENAME
        overlay = self._overlays.get(C.INDEX_FILENAME)
        if overlay is not None:
            before = self._index
            if not force and before is not None and before.overlay == overlay:
                return False  # a rescan: the editor's text is what was parsed
            index = parse_index(overlay, path, target=self.settings.agent_target)
            self._check_index(None, index, overlay)
            return True
        try:
            stat = path.stat()
        except OSError:
            stat = None
        # (-1, -1): no MEMORY.md, which is a state to cache too (prefetch-mode dirs lack one).
        key = (stat.st_mtime_ns, stat.st_size) if stat is not None else (-1, -1)
        if not force and self._index is not None and self._index.key == key:
            return False
        if stat is None:
            empty = parse_index("", path, target=self.settings.agent_target)
            index = Index(empty.path, "", empty.lines, (), empty.other, empty.load, exists=False)
        else:
            # As every reader of MEMORY.md reads it: capped, regular files only, never through a
            # link leading out (the walk reports that link as MEM114).
            index = load_index(self.root, self.settings.agent_target)
        self._check_index(key, index, None)
        return True

    # --- results -----------------------------------------------------------------------------

    @property
    def index(self) -> Index:
        if self._index is None:
            self._refresh_index()
        assert self._index is not None
        return self._index.index

    def own_findings(self, path: Path | str) -> tuple[Diagnostic, ...]:
        """The findings of ``path``'s own rules as last checked (not the directory rules'):
        what an editor can show for an open file before the rest of the directory is read."""
        rel = self.rel(path)
        if rel == C.INDEX_FILENAME:
            return self._index.diagnostics if self._index is not None else ()
        found = self._files.get(rel)
        return found.diagnostics if found is not None else ()

    def summaries(self) -> dict[str, TopicSummary]:
        return {rel: result.summary for rel, result in self._files.items()}

    def lint(self) -> LintResult:
        """Diagnostics for the whole directory from the cached state (reads nothing new).

        Proportional to what changed since the last call: only the files whose results were
        replaced are looked at, and a directory rule runs again only when what it reads
        (:attr:`Rule.reads`) changed: MEMORY.md, a summary field, which files there are, the
        skipped files, the disk (after a :meth:`refresh`), the settings or date. The other
        rules' findings are reused.
        """
        if self._refresh_owed:
            raise RuntimeError("lint() of a state whose refresh was stopped: refresh() first")
        index = self.index
        assert self._index is not None
        files = self._files
        summaries = self._summaries
        inputs: set[str] = set()
        if self._index is not self._linted_index:
            inputs.add("index")
        if self._skipped != self._linted_skipped:
            inputs.add("skipped")
        if self._rescanned:
            inputs.add("disk")
        regroup = set(self._dirty)
        for rel in self._dirty:
            old = summaries.get(rel)
            result = files.get(rel)
            if result is None or old is None:
                if result is not None:
                    summaries[rel] = result.summary
                elif old is not None:
                    del summaries[rel]
                else:
                    continue
                inputs.update(_EVERY_INPUT)
            elif result.summary != old:
                new = summaries[rel] = result.summary
                inputs.update(f for f in _SUMMARY_FIELDS if getattr(old, f) != getattr(new, f))
        self._dirty.clear()
        if self._index is not self._linted_index:
            regroup.add(C.INDEX_FILENAME)
        if self.context is not self._linted_context:
            codes = directory_rules_reading(_EVERY_INPUT | {"index", "skipped", "disk"})
        else:
            codes = directory_rules_reading(inputs)
        if codes:
            found = run_directory_rules(
                index, self._index.links, summaries, self._skipped, self.context, codes
            )
            for code in codes:
                grouped: dict[str, list[Diagnostic]] = {}
                for diagnostic in found.get(code, ()):
                    grouped.setdefault(diagnostic.rel_path, []).append(diagnostic)
                by_file = {rel: tuple(group) for rel, group in grouped.items()}
                before = self._by_rule.pop(code, {})
                regroup.update(
                    rel
                    for rel in by_file.keys() | before.keys()
                    if by_file.get(rel) != before.get(rel)
                )
                if by_file:
                    self._by_rule[code] = by_file
        self._rescanned = False
        self._linted_index = self._index
        self._linted_context = self.context
        self._linted_skipped = self._skipped
        # A copy (C speed): the grouped findings an earlier result holds stay as they were.
        current = dict(self._previous)
        changed: set[str] = set()
        by_rule = self._by_rule.values()
        for rel in regroup:
            own = self._index.diagnostics if rel == C.INDEX_FILENAME else ()
            if rel in files:
                own = files[rel].diagnostics
            theirs = [part for found_by_file in by_rule if (part := found_by_file.get(rel))]
            group = tuple(sorted(itertools.chain(own, *theirs), key=Diagnostic.sort_key))
            if group != current.get(rel, ()):
                changed.add(rel)
            if group:
                current[rel] = group
            else:
                current.pop(rel, None)
        self._previous = current
        return LintResult(self.root, len(files), frozenset(changed), current)


#: Every summary field, and ``files``: what a file added or removed changes.
_SUMMARY_FIELDS = tuple(f.name for f in fields(TopicSummary))
_EVERY_INPUT = frozenset({"files", *_SUMMARY_FIELDS})


def lint_directory(
    root: Path, settings: Settings | None = None, project_root: Path | None = None
) -> LintResult:
    """Lint a memory directory once (the CLI's cold run)."""
    state = (
        DirState(root, settings, project_root=project_root)
        if settings is not None
        else DirState.load(root, project_root)
    )
    state.refresh()
    return state.lint()
