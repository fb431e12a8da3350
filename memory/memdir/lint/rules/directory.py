"""Rules that read the directory as a whole (MEM005, MEM107, MEM108, MEM111, MEM114, MEM123):
the index and a summary of every topic file together, so an incremental run can redo them
without re-reading any file.

MEM108 orders files with :func:`memdir.scan.window_order`, as the prefetch scan does.
"""

from __future__ import annotations

import heapq
import itertools
import posixpath
import sys
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from operator import itemgetter
from pathlib import Path
from typing import TYPE_CHECKING, cast

from memdir import constants as C
from memdir.fixes import plan
from memdir.fixes.model import Fix
from memdir.index import Index
from memdir.lint.diagnostic import Diagnostic
from memdir.lint.rules.base import DirectoryView, Rule, head_span
from memdir.lint.rules.descriptions import near_duplicate_pairs
from memdir.lint.rules.index import entry_links
from memdir.model import IndexEntry, Span, TopicFile
from memdir.paths import name_key, unportable_name
from memdir.scan import excluded_entry, window_order

if TYPE_CHECKING:
    from memdir.lint.engine import LintContext


# --- what the directory rules read ----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TopicSummary:
    """What the directory rules need of one topic file: no text, so it is cheap to keep."""

    #: The memory dir (one shared object: a Path per file costs more than reading the file).
    root: Path
    rel_path: str
    mtime: float
    name: str | None
    description: str | None
    #: Title for an index entry (the first ``# heading``, else the name, else the file name).
    title: str
    name_span: Span
    description_span: Span
    #: The first line, where file-level findings (orphan, window) are shown.
    head_span: Span
    #: False for files the scan skips (vanished or unreadable): never candidates.
    listed: bool = True
    #: False for binary or unreadable files (MEM113): no orphan or duplicate findings on top.
    usable: bool = True

    @property
    def path(self) -> Path:
        return self.root / self.rel_path


class DirectoryMemo:
    """What the directory rules can reuse from one run to the next (an incremental state).

    Entries are checked against the very objects they were made from (a summary is replaced,
    never changed, when its file changes), so a stale entry is never used, only not found.
    Each run keeps, for the rules it ran, just what they used, so deleted files do not linger.
    """

    def __init__(self) -> None:
        #: description text -> its tokens, for MEM111.
        self.tokens: dict[str, tuple[str, ...]] = {}
        #: code -> file (or index line) -> (what it was made from, the diagnostic).
        self._diagnostics: dict[str, dict[str, tuple[object, Diagnostic]]] = {}
        self._used: dict[str, dict[str, tuple[object, Diagnostic]]] = {}
        self._links_of: Index | None = None
        self._links: list[tuple[IndexEntry, str | None]] = []
        self._linked_of: Index | None = None
        self._linked: frozenset[str] = frozenset()
        #: MEM005's fixes of the last run, by what the entry says (key, title, hook).
        self.create_fixes: dict[tuple[str, str, str], Fix | None] = {}
        self._pairs_of: dict[str, str] | None = None
        self._pairs: list[tuple[str, str, float]] = []

    def duplicate_pairs(self, descriptions: dict[str, str]) -> list[tuple[str, str, float]]:
        """:func:`near_duplicate_pairs`, reused while no description changed (an edit of a body,
        a touch, a new orphan without a description: the common incremental case)."""
        if descriptions != self._pairs_of:
            self._pairs = near_duplicate_pairs(descriptions, self.tokens)
            self._pairs_of = descriptions
        return self._pairs

    def links(self, index: Index) -> list[tuple[IndexEntry, str | None]]:
        """Each entry with its link key (None for a link that is no topic file), per index.

        Entries an edit's re-parse took over (``parse_index(previous=)``) keep their pair:
        only the lines it changed or moved are checked.
        """
        if self._links_of is not index:
            # Looked up at C speed (map, list.index): an edit pays Python code for its lines only.
            # (The ids are those of entries alive in the old list: no new entry can share one.)
            known = dict(zip(map(id, map(itemgetter(0), self._links)), self._links, strict=True))
            entries = index.entries
            pairs = list(map(known.get, map(id, entries)))
            try:
                at = pairs.index(None)
                while True:
                    entry, key = entry_links((entries[at],))[0]
                    # Interned, as the files' paths are: set arithmetic on them compares
                    # identities, not text.
                    pairs[at] = (entry, key if key is None else sys.intern(key))
                    at = pairs.index(None, at + 1)
            except ValueError:
                pass
            self._links = cast("list[tuple[IndexEntry, str | None]]", pairs)
            self._links_of = index
        return self._links

    def linked(self, index: Index) -> frozenset[str]:
        """The link keys of the index's entries."""
        if self._linked_of is not index:
            self._linked = frozenset(filter(None, map(itemgetter(1), self.links(index))))
            self._linked_of = index
        return self._linked

    def get(self, code: str, rel: str, key: object) -> Diagnostic | None:
        cached = self._diagnostics.get(code, {}).get(rel)
        if cached is not None and cached[0] == key:
            self._used.setdefault(code, {})[rel] = cached
            return cached[1]
        return None

    def put(self, code: str, rel: str, key: object, diagnostic: Diagnostic) -> Diagnostic:
        self._used.setdefault(code, {})[rel] = (key, diagnostic)
        return diagnostic

    def finish(self, codes: Iterable[str]) -> None:
        """The run of the rules ``codes`` is over: keep what they used, forget the rest of
        theirs (the other rules' entries stay for their next run)."""
        for code in codes:
            self._diagnostics[code] = self._used.pop(code, {})
        self._used = {}


# --- MEM005 --------------------------------------------------------------------------------------


def _exists(view: DirectoryView, ctx: LintContext, key: str) -> bool:
    """Whether the topic file ``key`` exists, from what the scan found where it can tell.

    The scan lists every ``*.md`` in the folders it walks, so a key in such a folder that is
    neither a summary nor a skipped path is no file: no syscall for nearly every entry. The
    disk is asked only where the scan cannot tell: names it leaves out (hidden, the agent's
    own stores, MEMORY.md), paths it skipped (links), folders it did not walk (symlinked or
    empty ones).
    """
    if key in view.summaries:
        return True
    folder, _, name = key.rpartition("/")
    if (
        name != C.INDEX_FILENAME
        and key not in view.skipped_paths
        and (folder in view.folders if folder else "." not in view.skipped_paths)
        and not any(excluded_entry(p, top_level=i == 0) for i, p in enumerate(key.split("/")))
    ):
        return False
    return (ctx.root / key).is_file()


def _dangling_links(view: DirectoryView, ctx: LintContext) -> Iterator[Diagnostic]:
    # Set arithmetic first (C speed): an index without a dangling key costs no loop in Python.
    missing = {key for key in view.linked - view.summaries.keys() if not _exists(view, ctx, key)}
    if not missing:
        return
    # The entries of those keys, picked at C speed.
    picked = map(missing.__contains__, map(itemgetter(1), view.links))
    fixes, made = view.memo.create_fixes, {}
    for entry, key in itertools.compress(view.links, picked):
        if key is None:
            continue
        # The finding is made once while the entry's line stays; its fix (a whole topic file,
        # and a confinement check on disk) once while the entry says the same, wherever it moves.
        reuse = (entry, ctx)
        found = view.memo.get("MEM005", str(entry.line), reuse)
        if found is None:
            said = (key, entry.title, entry.hook)
            fix = fixes[said] if said in fixes else plan.create_missing(view.index, entry, key)
            made[said] = fix
            found = view.memo.put(
                "MEM005",
                str(entry.line),
                reuse,
                ctx.diag(
                    "MEM005",
                    ctx.index_path,
                    C.INDEX_FILENAME,
                    entry.target_span,
                    f"dangling link: {key} does not exist; the agent sees this hook every "
                    "session, but reading the memory fails. Write the file, fix the link or "
                    "remove the entry",
                    fix,
                ),
            )
        elif found.fix is not None:
            made[(key, entry.title, entry.hook)] = found.fix
        yield found
    view.memo.create_fixes = made


MEM005 = Rule(
    "MEM005",
    "dangling-index-link",
    "error",
    "directory",
    "An index entry links a topic file that does not exist.",
    "The agent sees the hook every session, but reading the memory fails; it may act on "
    "the hook alone.",
    "`- [Release calendar](release-calendar.md) — …` with no release-calendar.md",
    "Write the file, fix the link, or remove the entry.",
    "editor",
    reads=frozenset({"index", "files", "skipped", "disk"}),
    directory=_dangling_links,
)


# --- MEM107 --------------------------------------------------------------------------------------


def _orphans(view: DirectoryView, ctx: LintContext) -> Iterator[Diagnostic]:
    index, memo = view.index, view.memo
    # Where the fixes insert entries: every orphan's fix depends on it.
    insert_at = (plan.entry_insertion(index, "").span, index.exists)
    # The files no entry links, by set arithmetic (C speed): an index edit costs a loop over
    # the orphans only.
    summaries = view.summaries
    for rel in sorted(summaries.keys() - view.linked):
        summary = summaries[rel]
        if not (summary.listed and summary.usable):
            continue
        if ctx.prefetch_mode:
            why = (
                "not linked from MEMORY.md; recall_mode = prefetch, so the index is not "
                "injected and path B can still find this file (it matters if you switch "
                "back to index mode)"
            )
        else:
            why = (
                "invisible in index mode: not linked from MEMORY.md, and on path A the "
                "agent sees only the index"
            )
            if not index.exists:
                why += " (there is no MEMORY.md)"
        reuse = (summary, why, insert_at, ctx)
        diagnostic = memo.get("MEM107", summary.rel_path, reuse)
        if diagnostic is None:
            diagnostic = memo.put(
                "MEM107",
                summary.rel_path,
                reuse,
                ctx.diag(
                    "MEM107",
                    summary.path,
                    summary.rel_path,
                    summary.head_span,
                    f"orphan: {why}; add an entry for it",
                    plan.add_to_index(
                        index,
                        summary.rel_path,
                        summary.title,
                        summary.description or "",
                        ctx.line_limit,
                    ),
                ),
            )
        yield diagnostic


MEM107 = Rule(
    "MEM107",
    "orphan",
    "warning",
    "directory",
    "A topic file that no index entry links.",
    "On path A the agent sees only the index: a memory missing from it is invisible "
    'unless the agent happens to list the directory. With `recall_mode = "prefetch"` the '
    "index is not injected, so it is only a note.",
    "`old-notes.md`, linked from nowhere",
    "Add `- [Title](old-notes.md) — hook` (`--fix` adds it, with the description as hook).",
    "safe",
    severity_by_mode={"prefetch": "info"},
    reads=frozenset({"index", "files", "listed", "usable", "title", "description", "head_span"}),
    directory=_orphans,
)


# --- MEM108 --------------------------------------------------------------------------------------


def _outside_prefetch_window(view: DirectoryView, ctx: LintContext) -> Iterator[Diagnostic]:
    listed, memo = view.listed, view.memo
    if len(listed) <= C.SCAN_MAX_FILES:
        return
    # Membership is all that matters here (lint sorts its output): take the newest ones.
    window = {
        id(s)
        for s in heapq.nsmallest(
            C.SCAN_MAX_FILES, listed, key=lambda s: window_order(s.mtime, s.rel_path)
        )
    }
    mode = (
        ""
        if ctx.prefetch_mode
        else " (this matters when recall_mode = prefetch; MEMORY.md is what path A uses)"
    )
    message = (
        f"outside the prefetch window: {C.SCAN_MAX_FILES} newer topic files fill the scan, so "
        f"path B never offers this one to the selector{mode}; merge or delete stale "
        "memories, or update this one if it still matters"
    )
    for summary in listed:
        if id(summary) in window:
            continue
        window_key = (summary, message, ctx)
        diagnostic = memo.get("MEM108", summary.rel_path, window_key)
        if diagnostic is None:
            diagnostic = memo.put(
                "MEM108",
                summary.rel_path,
                window_key,
                ctx.diag("MEM108", summary.path, summary.rel_path, summary.head_span, message),
            )
        yield diagnostic


MEM108 = Rule(
    "MEM108",
    "outside-prefetch-window",
    "info",
    "directory",
    f"The file is not among the {C.SCAN_MAX_FILES} most recently modified topic files.",
    f"The prefetch scan offers only the {C.SCAN_MAX_FILES} newest files to the selector: this "
    'one is never a candidate on path B (with `recall_mode = "index"`, MEMORY.md is what '
    "the agent uses, so it is only a note).",
    f"any file older than the {C.SCAN_MAX_FILES} newest",
    "Merge or delete stale memories; touching a file moves it into the window.",
    severity_by_mode={"prefetch": "warning"},
    reads=frozenset({"files", "listed", "mtime", "head_span"}),
    directory=_outside_prefetch_window,
)


# --- MEM111 --------------------------------------------------------------------------------------


def _duplicate_memories(view: DirectoryView, ctx: LintContext) -> Iterator[Diagnostic]:
    usable = view.usable
    pairs = view.memo.duplicate_pairs({s.rel_path: s.description for s in usable if s.description})
    by_name: dict[str, list[TopicSummary]] = {}
    for summary in usable:
        if summary.name:
            by_name.setdefault(summary.name, []).append(summary)
    for name, group in by_name.items():
        if len(group) < 2:
            continue
        group.sort(key=lambda s: s.rel_path)  # the same message whatever order files came in
        for summary in group:
            others = [s.rel_path for s in group if s is not summary]
            shown = ", ".join(others[:3]) + (
                f" and {len(others) - 3} more" if len(others) > 3 else ""
            )
            yield ctx.diag(
                "MEM111",
                summary.path,
                summary.rel_path,
                summary.name_span,
                f"duplicate memory: `{name}` is also the name of {shown}; `[[{name}]]` links "
                "are ambiguous and updates may land in one copy while the agent reads the "
                "other. Merge them",
            )
    by_rel = {s.rel_path: s for s in usable}
    similar: dict[str, list[tuple[str, float]]] = {}
    for a, b, ratio in pairs:
        similar.setdefault(a, []).append((b, ratio))
        similar.setdefault(b, []).append((a, ratio))
    for rel in sorted(similar):
        summary = by_rel[rel]
        matches = sorted(similar[rel], key=lambda item: (-item[1], item[0]))
        other, ratio = matches[0]
        more = f" (and {len(matches) - 1} more)" if len(matches) > 1 else ""
        yield ctx.diag(
            "MEM111",
            summary.path,
            rel,
            summary.description_span,
            f"near-duplicate memory: its description is {ratio:.0%} the same as {other}'s"
            f"{more}; the selector sees two near-identical manifest lines and may surface the "
            "stale one. Merge them",
        )


MEM111 = Rule(
    "MEM111",
    "duplicate-memory",
    "warning",
    "directory",
    "Two topic files with the same `name`, or with near-identical descriptions "
    f"(≥ {C.DUPLICATE_RATIO:.0%} similar).",
    "`[[name]]` links become ambiguous, and the selector sees two near-identical "
    "manifest lines: it may surface the stale copy, and updates land in one of them.",
    "`name: user-role` in both user-role.md and people/user-role.md",
    "Merge the two files.",
    reads=frozenset(
        {"files", "listed", "usable", "name", "description", "name_span", "description_span"}
    ),
    directory=_duplicate_memories,
)


# --- MEM114 --------------------------------------------------------------------------------------


def _skipped_paths(view: DirectoryView, ctx: LintContext) -> Iterator[Diagnostic]:
    for skip in view.skipped:
        yield ctx.diag(
            "MEM114",
            ctx.root / skip.rel_path,
            skip.rel_path,
            Span(0, 0, 0, 0),
            f"{skip.reason}: memdir does not follow it, and whatever it points to is "
            "not a memory of this directory (a link out could expose or overwrite "
            "unrelated files); Claude Code's relevance prefetch does follow a link out and "
            "can inject what it points to",
        )


MEM114 = Rule(
    "MEM114",
    "skipped-path",
    "warning",
    "directory",
    "A path memdir refuses to follow: a symlink leading outside the memory dir, a "
    "broken symlink, a directory that cannot be listed.",
    "Memory must stay inside the memory dir: a link out could expose or overwrite "
    "unrelated files, and whatever it points to is not a memory here. Claude Code 2.1.328's "
    "relevance prefetch follows such links all the same, so the file it points to can be "
    "injected into a session.",
    "`shared.md -> /home/ana/notes/shared.md`",
    "Copy the file into the memory dir, or remove the link.",
    reads=frozenset({"skipped"}),
    directory=_skipped_paths,
)

# --- MEM123 --------------------------------------------------------------------------------------


def _escaped(name: str) -> str:
    """A name as it can be told apart: invisible and non-ASCII characters as escapes."""
    return name if name.isascii() else name.encode("ascii", "backslashreplace").decode()


def _unportable_names(view: DirectoryView, ctx: LintContext) -> Iterator[Diagnostic]:
    children: dict[str, set[str]] = {}
    for rel in view.summaries:
        parts = rel.split("/")
        for depth, part in enumerate(parts):
            children.setdefault("/".join(parts[:depth]), set()).add(part)
    if view.index.exists:
        children.setdefault("", set()).add(C.INDEX_FILENAME)
    for folder in sorted(children):
        names = children[folder]
        groups: dict[str, list[str]] = {}
        for name in names:
            groups.setdefault(name_key(name), []).append(name)
        for group in groups.values():
            if len(group) < 2:
                continue
            *others, last = sorted(group)
            composed = {unicodedata.normalize("NFC", name) for name in group}
            how = "Unicode normalisation" if len(composed) == 1 else "case"
            rel = posixpath.join(folder, last)
            yield ctx.diag(
                "MEM123",
                ctx.root / rel,
                rel,
                Span(0, 0, 0, 0),
                f"`{_escaped(last)}` and {', '.join(f'`{_escaped(o)}`' for o in others)} differ "
                f"only in {how}, which macOS and Windows ignore: there they are one name, and a "
                "checkout or copy keeps one and loses the other. Merge them or rename one",
            )
        for name in sorted(names):
            problem = unportable_name(name)
            if problem is None:
                continue
            rel = posixpath.join(folder, name)
            yield ctx.diag(
                "MEM123",
                ctx.root / rel,
                rel,
                Span(0, 0, 0, 0),
                f"`{_escaped(name)}` is no portable name: {problem}. The memory dir travels "
                "with the repository, and on another system this is not the same file (or no "
                "file at all). Rename it",
            )


MEM123 = Rule(
    "MEM123",
    "unportable-name",
    "warning",
    "directory",
    "A file or folder name that is not the same file on every system: two names that differ "
    "only in case (`a.md`, `A.md`) or in Unicode normalisation (`é.md` composed and "
    "decomposed), which macOS and Windows take for one; a Windows device name (`CON.md`, "
    "`nul.md`, `COM1.md`); a name ending with a dot or a space; a name holding an invisible "
    "character (zero-width space or joiners, word joiner, BOM, soft hyphen). Each group of "
    "colliding names is one finding, on its last name, naming the others.",
    "Memory directories travel with repositories: on a case-insensitive or normalising file "
    "system a checkout keeps one of two colliding memories and the other is lost or replaced, "
    "a device name cannot be checked out on Windows at all, and a name with an invisible "
    "character looks like another in MEMORY.md, to a person and to the agent. memdir's writer "
    "(the memory tool on every face, extraction, `memdir lint --fix`) refuses to make such "
    "names.",
    "`deploy.md` beside `Deploy.md`",
    "Merge the two memories, or rename one (and its MEMORY.md entry).",
    # MEMORY.md's own name is looked at on a rescan ("disk"), not on every edit of its text.
    reads=frozenset({"files", "disk"}),
    directory=_unportable_names,
)

RULES = (MEM005, MEM107, MEM108, MEM111, MEM114, MEM123)


# --- topic summaries -----------------------------------------------------------------------------


def heading_title(body_lines: Iterable[str], fallback: str) -> str:
    """A title for an index entry: the body's opening ``# heading``, else ``fallback``."""
    for line in body_lines:
        stripped = line.strip()
        if stripped.startswith("# "):
            return stripped[2:].strip()
        if stripped:
            break
    return fallback


def title_of(topic: TopicFile) -> str:
    """What an index entry for this file is called: its first heading, else its name."""
    stem = posixpath.splitext(posixpath.basename(topic.rel_path))[0]
    return heading_title(topic.body.split("\n", 8)[:8], topic.name or stem)


#: Span -> the one equal Span summaries keep: a dir's files open alike (``---``, then ``name:``
#: and ``description:`` values of a few hundred lengths), so 60,000 spans are a few hundred.
_SPANS: dict[Span, Span] = {}
_SPANS_LIMIT = 1 << 14


def _shared(span: Span) -> Span:
    if len(_SPANS) >= _SPANS_LIMIT:
        _SPANS.clear()  # hostile variety: start again rather than grow
    return _SPANS.setdefault(span, span)


def summarize(topic: TopicFile, root: Path) -> TopicSummary:
    fm = topic.frontmatter
    spans = fm.value_spans if fm is not None else {}
    head = _shared(head_span(topic.text))
    kinds = {p.kind for p in topic.problems}
    name_span = spans.get("name")
    description_span = spans.get("description")
    return TopicSummary(
        root=root,
        rel_path=topic.rel_path,
        mtime=topic.mtime,
        name=topic.name or None,
        description=topic.description or None,
        title=title_of(topic),
        name_span=head if name_span is None else _shared(name_span),
        description_span=head if description_span is None else _shared(description_span),
        head_span=head,
        listed=not ("unreadable" in kinds and topic.mtime == 0.0),
        usable=not kinds & {"unreadable", "binary"},
    )
