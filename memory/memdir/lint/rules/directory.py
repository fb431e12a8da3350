"""Rules that read the directory as a whole (MEM005, MEM107, MEM108, MEM111, MEM114, MEM123):
the index and a summary of every topic file together, so the engine can run them again
without re-reading any file.

MEM108 orders files with :func:`memdir.agent.scan.window_order`, as the prefetch scan does.
"""

from __future__ import annotations

import heapq
import itertools
import posixpath
import re
import unicodedata
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from memdir import constants as C
from memdir.agent.paths import name_key, unportable_name
from memdir.agent.scan import excluded_entry, window_order
from memdir.agent.topic import load_topic
from memdir.containment import relative_inside
from memdir.fixes import plan
from memdir.lint.diagnostic import Diagnostic, Fix
from memdir.lint.rules.base import (
    DirectoryView,
    Rule,
    head_span,
    index_in_other_case,
    kept_aside,
    named_as_no_memory,
)
from memdir.lint.rules.consistency import Directive, directives
from memdir.lint.rules.descriptions import near_duplicate_pairs
from memdir.lint.rules.index import absolute_key, entry_links, path_key
from memdir.lint.rules.overlap import duplicate_pairs, pack, shingles, unpack
from memdir.model import Span, TopicFile
from memdir.textio import not_read

if TYPE_CHECKING:
    from memdir.agent.index import Index
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
    #: The frontmatter's ``type`` (MEM127 asks a feedback memory for less).
    type: str | None
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
    #: The "always/never <verb> X" the memory states (MEM125); nearly always none.
    directives: tuple[Directive, ...] = ()
    #: The body's runs of words, packed (:func:`memdir.lint.rules.overlap.pack`): MEM127, MEM128.
    body_shingles: bytes = b""
    #: Every run of digits in the file, thousands separators dropped (MEM129).
    numbers: frozenset[str] = frozenset()

    @property
    def path(self) -> Path:
        return self.root / self.rel_path


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


def _in_project(root: Path, key: str) -> bool:
    rel = relative_inside(root, key)
    return rel is not None and (root / rel).is_file()


def from_above(key: str, root: Path, summaries: Mapping[str, object]) -> str | None:
    """The topic file a link names when it is written from a folder above the memory dir, the
    repository's root where the agent works: ``.claude/memory/notes.md`` in
    ``.claude/memory/MEMORY.md``. Only a link spelling the memory dir's own path before the
    file's counts; None otherwise."""
    parts = key.split("/")
    above = root.parts
    for depth in range(1, min(len(parts), len(above))):
        rel = "/".join(parts[depth:])
        if rel in summaries and tuple(parts[:depth]) == above[-depth:]:
            return rel
    return None


def _own_file(path: str, root: Path, summaries: Mapping[str, object]) -> str | None:
    """The topic file an absolute path names on the author's machine: the path ends with a
    folder named like the memory dir, then the file's path in it."""
    parts = path.split("/")
    for depth in range(1, len(parts)):
        rel = "/".join(parts[depth:])
        if parts[depth - 1] == root.name and rel in summaries:
            return rel
    return None


def _dangling_links(view: DirectoryView, ctx: LintContext) -> Iterator[Diagnostic]:
    references = entry_links(view.index.references)
    linked = view.linked.union(key for _, key in references if key is not None)
    # Set arithmetic first: an index without a dangling key costs no loop over its entries.
    missing = {
        key
        for key in linked - view.summaries.keys()
        if from_above(key, ctx.root, view.summaries) is None and not _exists(view, ctx, key)
    }
    working_root = ctx.working_root
    if missing and working_root is not None:
        # The agent opens a link from the project's root too, where it works
        # (`memory/MEMORY.md` linking `.claude/agents-memory/notes.md`).
        missing = {key for key in missing if not _in_project(working_root, key)}
    if not missing:
        return
    for entry, key in itertools.chain(view.links, references):
        if key in missing:
            what = "hook" if entry.bullet else "link"
            yield ctx.diag(
                "MEM005",
                ctx.index_path,
                C.INDEX_FILENAME,
                entry.target_span,
                f"dangling link: {key} does not exist; the agent sees this {what} every "
                "session, but reading the memory fails. Write the file, fix the link or "
                "remove the entry",
                plan.create_missing(view.index, entry, key),
            )


MEM005 = Rule(
    code="MEM005",
    name="dangling-index-link",
    severity="error",
    scope="directory",
    summary="An index entry links a topic file that does not exist; so does a link to a `.md` "
    "file anywhere else in MEMORY.md (a table cell, a sentence, a later link on an entry's "
    "line). Where the project is known (the project of the agent's own memory dir, "
    "`--project`, the editor's workspace folder, or a directory the agent reads on the project's "
    "instructions), a link to a file that exists from the project's root is followed from "
    "there, where the agent works; in any directory, so is a link spelling the memory dir's own "
    "path before the file's (`.claude/memory/notes.md` in `.claude/memory/MEMORY.md`): it is "
    "written from the repository's root.",
    why="The agent sees the hook every session, but reading the memory fails; it may act on "
    "the hook alone.",
    example="`- [Release calendar](release-calendar.md) — …` with no release-calendar.md",
    remedy="Write the file, fix the link, or remove the entry.",
    fixable="editor",
    reads=frozenset({"index", "files", "skipped", "disk"}),
    directory=_dangling_links,
)


# --- MEM107 --------------------------------------------------------------------------------------


#: Several files named at once: ``audit_a/b/c_2026.md`` or ``audit_{a,b,c}_2026.md``.
_SLASHED = re.compile(
    r"(?P<head>[^/]*[_\-])(?P<alts>[A-Za-z0-9]{1,3}(?:/[A-Za-z0-9]{1,3})+)(?P<tail>[_\-.][^/]*)"
)
_BRACED = re.compile(r"(?P<head>[^{}]*)\{(?P<alts>[^{}/]+(?:,[^{}/]+)+)\}(?P<tail>[^{}]*)")


def shorthand(path: str) -> list[str]:
    """The names a shorthand for several files stands for (``audit_a/b_2026.md``:
    ``audit_a_2026.md`` and ``audit_b_2026.md``; ``{a,b}`` likewise); none for a plain name."""
    for pattern, sep in ((_SLASHED, "/"), (_BRACED, ",")):
        match = pattern.fullmatch(path)
        if match is not None:
            head, tail = match.group("head"), match.group("tail")
            return [head + alt + tail for alt in match.group("alts").split(sep)]
    return []


def referenced(index: Index, summaries: Mapping[str, TopicSummary]) -> set[str]:
    """The topic files MEMORY.md points at outside its entries: links in table cells, prose or
    headings, paths named in code form (`` `notes.md` ``) or plainly, ``[[name]]`` links and
    names in code form (`` `notes` ``). The model reads the raw index and follows any of them,
    so none of these files is invisible.

    A path in code form names a topic file when it ends with the file's path in the dir: an
    index often names a file from the repository's root (`` `memory/notes.md` `` in
    ``memory/MEMORY.md``). A ``[[name]]`` names the file whose frontmatter ``name``, or whose
    path without ``.md``, it is (case aside, as Obsidian-style links match), and so does a word
    in code form; either may leave out the type the file name starts with (`` `testing` `` for
    ``feedback_testing.md``)."""
    keys = {key for _, key in entry_links(index.references) if key is not None}
    for path in index.named:
        if (key := path_key(path)) is not None:
            keys.add(key)
        if key not in summaries:
            keys.update(name for name in shorthand(path) if name in summaries)
        parts = [part for part in path.split("/") if part not in ("", ".", "..")]
        keys.update(
            suffix for i in range(1, len(parts)) if (suffix := "/".join(parts[i:])) in summaries
        )
    if index.wiki_named or index.code_words:
        wanted = {name.casefold().removesuffix(".md") for name in index.wiki_named}
        wanted.update(word.casefold() for word in index.code_words)
        for rel, summary in summaries.items():
            stem = rel.removesuffix(".md").rpartition("/")[2].casefold()
            if (
                rel.removesuffix(".md").casefold() in wanted
                or stem in wanted
                or _TYPE_PREFIX.sub("", stem) in wanted
                or (summary.name is not None and summary.name.strip().casefold() in wanted)
            ):
                keys.add(rel)
    return keys


#: The type a file name starts with, as the agent names memories (``feedback_testing.md``): an
#: index that groups files by type may name them without it (`` `testing` `` under Feedback).
_TYPE_PREFIX = re.compile(r"^(?:user|feedback|project|reference)[_\-](?=.)")


def _orphans(view: DirectoryView, ctx: LintContext) -> Iterator[Diagnostic]:
    index = view.index
    summaries = view.summaries
    # Only the dir's top: the agent writes its memories there. A file in a folder was put there
    # by a person (an archive, a copy of the dir, notes kept beside a sub-project) and is no
    # orphan of this index: on real dirs such findings were right once in 33.
    unlinked = {rel for rel in summaries.keys() - view.linked if "/" not in rel}
    if not index.exists and any(index_in_other_case(rel) for rel in summaries):
        return  # the index under another case: MEM123 says so, and links count once renamed
    if unlinked and (index.references or index.named or index.wiki_named or index.code_words):
        unlinked -= referenced(index, summaries)
    if unlinked and (outside := view.linked - summaries.keys()):
        unlinked -= {rel for key in outside if (rel := from_above(key, ctx.root, summaries))}
    if unlinked:
        # An absolute link to the dir's own file is a link (MEM007 asks for a relative one).
        absolute = (absolute_key(e) for e in (*index.entries, *index.references))
        unlinked -= {
            rel for key in absolute if key and (rel := _own_file(key, ctx.root, summaries))
        }
    room = plan.IndexRoom(index)
    for rel in sorted(unlinked):
        summary = summaries[rel]
        for_people = summary.name is None and summary.description is None
        if not (summary.listed and summary.usable) or (
            for_people and named_as_no_memory(summary.rel_path)
        ):
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
        yield ctx.diag(
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
                room,
            ),
        )


MEM107 = Rule(
    code="MEM107",
    auto_memory_only=(
        "an orphan is invisible to auto memory's index; the instructions say what the agent reads"
    ),
    name="orphan",
    severity="warning",
    scope="directory",
    summary="A topic file that MEMORY.md does not point at: no entry links it, and no other "
    "link (a table cell, a sentence, a later link on an entry's line), name in code form "
    "(`` `notes.md` ``, or a path ending with the file's, like `` `memory/notes.md` `` "
    "written from the repository's root, or a link so written; an absolute or `file://` link "
    "from the author's machine through a folder named like the memory dir, which MEM007 "
    "reports), name in brackets "
    "(`[notes.md]`, a link with no target), name written plainly (`## Queues → queues.md`), "
    "shorthand for several files (`review_a/b/c_2026.md`, `review_{a,b,c}_2026.md`), "
    "`[[name]]` link or word in code form (`` `testing` ``: the file's frontmatter `name`, or "
    "its name without `.md`, the type it starts with left out or not) in the index "
    "names it. Only files at the top of the dir are checked: the agent writes its memories "
    "there, and a file in a folder was put there by a person (an archive, a copy of the dir, "
    "notes beside a sub-project). A file named in capitals without frontmatter (`README.md`, "
    "`RESTORE.md`) is taken for a document for people, not a memory, and one named for a day "
    "(`2026-03-13.md`) for a session log.",
    why="On path A the agent sees only the index: a memory missing from it is invisible "
    'unless the agent happens to list the directory. With `recall_mode = "prefetch"` the '
    "index is not injected, so it is only a note.",
    example="`old-notes.md`, linked from nowhere",
    remedy="Add `- [Title](old-notes.md) — hook` (`--fix` adds it, with the description as hook).",
    fixable="safe",
    safe_when=f"the index stays within {C.INDEX_REWRITE_TARGET_LINES} lines and "
    f"{C.INDEX_NEAR_CAP_RATIO:.0%} of its character cap (MEM003) with the entry added",
    severity_by_mode={"prefetch": "info"},
    reads=frozenset(
        {"index", "files", "listed", "usable", "name", "title", "description", "head_span"}
    ),
    directory=_orphans,
)


# --- MEM108 --------------------------------------------------------------------------------------


def _outside_prefetch_window(view: DirectoryView, ctx: LintContext) -> Iterator[Diagnostic]:
    listed = view.listed
    if len(listed) <= C.SCAN_MAX_FILES:
        return
    # Membership is all that matters here (lint sorts its output): take the newest ones.
    window = {
        s.rel_path
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
        if summary.rel_path not in window:
            yield ctx.diag("MEM108", summary.path, summary.rel_path, summary.head_span, message)


MEM108 = Rule(
    code="MEM108",
    auto_memory_only="the window is the prefetch scan's",
    name="outside-prefetch-window",
    severity="info",
    scope="directory",
    summary=f"The file is not among the {C.SCAN_MAX_FILES} most recently modified topic files.",
    why=f"The prefetch scan offers only the {C.SCAN_MAX_FILES} newest files to the selector: this "
    'one is never a candidate on path B (with `recall_mode = "index"`, MEMORY.md is what '
    "the agent uses, so it is only a note).",
    example=f"any file older than the {C.SCAN_MAX_FILES} newest",
    remedy="Merge or delete stale memories; touching a file moves it into the window.",
    severity_by_mode={"prefetch": "warning"},
    reads=frozenset({"files", "listed", "mtime", "head_span"}),
    directory=_outside_prefetch_window,
)


# --- MEM111 --------------------------------------------------------------------------------------


def _duplicate_memories(view: DirectoryView, ctx: LintContext) -> Iterator[Diagnostic]:
    """One finding per problem: on the last file (by path) of a group sharing a name, naming
    the others, and on the later file of a pair of near-identical descriptions, unless the
    pair shares a name too (reported already). A file kept aside (an archive) is history, no
    duplicate."""
    usable = [s for s in view.usable if not kept_aside(s.rel_path)]
    pairs = near_duplicate_pairs({s.rel_path: s.description for s in usable if s.description})
    by_name: dict[str, list[TopicSummary]] = {}
    for summary in usable:
        if summary.name:
            by_name.setdefault(summary.name, []).append(summary)
    same_name: set[frozenset[str]] = set()
    for name, group in by_name.items():
        if len(group) < 2:
            continue
        group.sort(key=lambda s: s.rel_path)  # the same message whatever order files came in
        *firsts, last = group
        same_name.update(frozenset((s.rel_path, t.rel_path)) for s in group for t in group)
        others = [s.rel_path for s in firsts]
        shown = ", ".join(others[:3]) + (f" and {len(others) - 3} more" if len(others) > 3 else "")
        yield ctx.diag(
            "MEM111",
            last.path,
            last.rel_path,
            last.name_span,
            f"duplicate memory: `{name}` is also the name of {shown}; `[[{name}]]` links "
            "are ambiguous and updates may land in one copy while the agent reads the "
            "other. Merge them",
        )
    by_rel = {s.rel_path: s for s in usable}
    similar: dict[str, list[tuple[str, float]]] = {}
    for a, b, ratio in pairs:
        if frozenset((a, b)) in same_name:
            continue
        first, later = sorted((a, b))
        similar.setdefault(later, []).append((first, ratio))
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


def _merge_fix(root: Path, keep: str, copy: str, view: DirectoryView) -> Fix | None:
    """The editor's merge of ``copy`` into ``keep``, planned from the two files as they are
    on disk (read only for a pair found: rare); None when one cannot be read."""
    try:
        kept = load_topic(root / keep, root)
        copied = load_topic(root / copy, root)
    except OSError:
        return None
    if not_read(kept.problems) or not_read(copied.problems):
        return None
    return plan.merge_memories(kept, copied, view.index)


MEM111 = Rule(
    code="MEM111",
    name="duplicate-memory",
    severity="warning",
    scope="directory",
    summary="Two topic files with the same `name`, or with near-identical descriptions "
    f"(≥ {C.DUPLICATE_RATIO:.0%} similar): one finding per group, on its last file, naming the "
    "others. Two bodies saying the same thing are MEM128's. A file kept aside (an archive, "
    "`legacy/`, a subagent's folder) is history or another scope, no duplicate.",
    why="`[[name]]` links become ambiguous, and the selector sees two near-identical "
    "manifest lines: it may surface the stale copy, and updates land in one of them.",
    example="`name: user-role` in both user-role.md and people/user-role.md",
    remedy="Merge the two files.",
    preview=True,
    precision="20 of 25 judged findings right (80%) on the real memory dirs of the samples "
    "(2026-12), 16 of them in one directory holding a stale copy of itself; memories made "
    "from one template (the same description under machine-made names), two series files "
    "differing in a project's name, and names cut short by a YAML comment read as pairs",
    reads=frozenset(
        {"files", "listed", "usable", "name", "description", "name_span", "description_span"}
    ),
    directory=_duplicate_memories,
)


# --- MEM128 --------------------------------------------------------------------------------------


def _duplicate_bodies(view: DirectoryView, ctx: LintContext) -> Iterator[Diagnostic]:
    usable = [s for s in view.usable if not kept_aside(s.rel_path)]
    by_rel = {s.rel_path: s for s in usable}
    for copy, keep, share in duplicate_pairs({s.rel_path: unpack(s.body_shingles) for s in usable}):
        summary = by_rel[copy]
        yield ctx.diag(
            "MEM128",
            summary.path,
            copy,
            summary.head_span,
            f"near-duplicate memory: {share:.0%} of its body is also in {keep}; the agent "
            "reads the same memory twice, and an update lands in one copy while the other "
            f"stays stale. Merge it into {keep}",
            _merge_fix(ctx.root, keep, copy, view),
        )


MEM128 = Rule(
    code="MEM128",
    name="duplicate-body",
    severity="warning",
    scope="directory",
    summary=f"Two topic files saying the same thing: at least {C.DUPLICATE_BODY_SHARE:.0%} of the "
    f"shorter body's runs of {C.DUPLICATE_SHINGLE_WORDS} words are in the other (bodies of at "
    f"least {C.DUPLICATE_BODY_MIN_SHINGLES} runs; a CJK character counts as a word). The "
    "shorter one is reported as the copy. A file kept aside (an archive, `legacy/`, a "
    "subagent's folder) is history or another scope, no duplicate.",
    why="The agent reads the same memory twice, and an update lands in one copy while the "
    "other stays stale.",
    example="`deploy-notes.md` pasted into `release-process.md` with a line or two changed",
    remedy="Merge the copy into the other: the editor offers it (the other's body gains the "
    "copy's lines it lacks, the copy is deleted and its MEMORY.md entry removed). `memdir lint "
    "--fix` does not apply it: a person checks the merged text.",
    fixable="editor",
    preview=True,
    precision="17 of 20 judged findings right (85%) on the real memory dirs of the samples "
    "(2026-12), 16 of them in one directory holding a stale copy of itself: too few "
    "directories to put it on by default; three memories made from one template read as copies",
    reads=frozenset({"files", "listed", "usable", "head_span", "body_shingles", "index"}),
    directory=_duplicate_bodies,
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
    code="MEM114",
    name="skipped-path",
    severity="warning",
    scope="directory",
    summary="A path memdir refuses to follow: a symlink leading outside the memory dir, a "
    "broken symlink, a directory that cannot be listed.",
    why="Memory must stay inside the memory dir: a link out could expose or overwrite "
    "unrelated files, and whatever it points to is not a memory here. Claude Code 2.1.328's "
    "relevance prefetch follows such links all the same, so the file it points to can be "
    "injected into a session.",
    example="`shared.md -> /home/ana/notes/shared.md`",
    remedy="Copy the file into the memory dir, or remove the link.",
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
            if not folder and not view.index.exists and index_in_other_case(name):
                yield ctx.diag(
                    "MEM123",
                    ctx.root / name,
                    name,
                    Span(0, 0, 0, 0),
                    f"`{_escaped(name)}` is the index under another case: the agent opens "
                    f"{C.INDEX_FILENAME}, which finds this file only where case is ignored "
                    "(macOS, Windows); on Linux it loads no index at all. Rename it "
                    f"{C.INDEX_FILENAME}",
                )
                continue
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
    code="MEM123",
    name="unportable-name",
    severity="warning",
    scope="directory",
    summary="A file or folder name that is not the same file on every system: two names that "
    "differ only in case (`a.md`, `A.md`) or in Unicode normalisation (`é.md` composed and "
    "decomposed), which macOS and Windows take for one; a Windows device name (`CON.md`, "
    "`nul.md`, `COM1.md`); a name ending with a dot or a space; a name holding an invisible "
    "character (zero-width space or joiners, word joiner, BOM, soft hyphen); the index named "
    "in another case (`memory.md`), which only a case-insensitive system loads as MEMORY.md "
    "(the files it links are then no orphans, and it no memory without frontmatter). Each "
    "group of colliding names is one finding, on its last name, naming the others.",
    why="Memory directories travel with repositories: on a case-insensitive or normalising file "
    "system a checkout keeps one of two colliding memories and the other is lost or replaced, "
    "a device name cannot be checked out on Windows at all, and a name with an invisible "
    "character looks like another in MEMORY.md, to a person and to the agent. memdir's writer "
    "(the memory tool on every face, extraction, `memdir lint --fix`) refuses to make such "
    "names.",
    example="`deploy.md` beside `Deploy.md`",
    remedy="Merge the two memories, or rename one (and its MEMORY.md entry).",
    # MEMORY.md's own name is looked at on a rescan ("disk"), not on every edit of its text.
    reads=frozenset({"files", "disk"}),
    directory=_unportable_names,
)

# --- MEM129 --------------------------------------------------------------------------------------

#: A number as written: ``3``, ``2.4.1``, ``2026-05-05``, ``13-20``, ``1,600``.
_NUMBER = re.compile(r"\d+(?:[.,:/-]\d+)*")
_DIGITS = re.compile(r"\d+")
#: A comma between thousands: ``1,600`` is ``1600``.
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_WORD_BEFORE = re.compile(r"([^\W\d_]+)[ \t]*$")
_WORD_AFTER = re.compile(r"[ \t]*([^\W\d_]+)")
#: Month names: "March 3" and "May 5" state the same thing (a day), so they are one slot.
_MONTHS = frozenset(
    [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
        "jan",
        "feb",
        "mar",
        "apr",
        "jun",
        "jul",
        "aug",
        "sep",
        "sept",
        "oct",
        "nov",
        "dec",
    ]
)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


def digit_runs(text: str) -> frozenset[str]:
    """The runs of digits in ``text``, thousands separators dropped (``1,600`` gives 1600)."""
    return frozenset(_DIGITS.findall(_THOUSANDS.sub("", text)))


@dataclass(frozen=True)
class StatedNumber:
    """A number in a text and what it counts: the word just before it and just after it."""

    text: str
    runs: frozenset[str]
    before: str | None
    after: str | None

    def same_slot(self, other: StatedNumber) -> bool:
        return (self.before is not None and self.before == other.before) or (
            self.after is not None and self.after == other.after
        )


def stated_numbers(text: str) -> list[StatedNumber]:
    """Each number of ``text`` with the words next to it ("tier 7": before ``tier``; "8 條":
    after ``條``, a CJK word's first character; a month name is any month); digits inside a
    word (``e5f7a21``) state no number."""
    found = []
    for match in _NUMBER.finditer(text):
        start, end = match.span()
        if start and end < len(text) and text[start - 1].isalpha() and text[end].isalpha():
            continue  # inside a word: a commit hash (`e5f7a21`), an identifier, no count
        before = _WORD_BEFORE.search(text, max(0, match.start() - 24), match.start())
        after = _WORD_AFTER.match(text, match.end())
        word_before = before.group(1).casefold() if before else None
        word_after = after.group(1).casefold() if after else None
        if word_before in _MONTHS:
            word_before = "(month)"
        if word_after is not None and _CJK.match(word_after):
            word_after = word_after[0]
        number = match.group()
        found.append(StatedNumber(number, digit_runs(number), word_before, word_after))
    return found


def stale_number(hook: str, description: str, numbers: frozenset[str]) -> tuple[str, str] | None:
    """(what the hook says, what the description says) where an index hook and its memory
    disagree, or None.

    They disagree when the hook states a number the memory's file no longer holds anywhere
    (``numbers``: its digit runs) while the description states another number in the same
    place: after the same word or before it ("tier 7" against "tier 5", "v2.4.1" against
    "v2.3.0", "due March 3" against "due May 5"). A hook that only adds a detail the file
    lacks, or a number the description does not put against another, is no disagreement.
    """
    stale = [n for n in stated_numbers(hook) if not n.runs <= numbers]
    if not stale:
        return None
    hook_runs = digit_runs(hook)
    current = [n for n in stated_numbers(description) if not n.runs <= hook_runs]
    for old in stale:
        for new in current:
            if old.same_slot(new):
                return old.text, new.text
    return None


def _hooks_disagree(view: DirectoryView, ctx: LintContext) -> Iterator[Diagnostic]:
    summaries = view.summaries
    for entry, key in view.links:
        summary = summaries.get(key) if key is not None else None
        if summary is None or not summary.description or not entry.bullet:
            continue
        hook = entry.hook
        # Most hooks hold no digit at all: nothing more to read.
        if not any(c.isdigit() for c in hook):
            continue
        found = stale_number(hook, summary.description, summary.numbers)
        if found is None:
            continue
        said, says = found
        yield ctx.diag(
            "MEM129",
            ctx.index_path,
            C.INDEX_FILENAME,
            entry.hook_span,
            f"the index hook says {said} where the description of {key} says {says}, and "
            f"{key} says {said} nowhere: the agent loads this hook every session and believes "
            "it. Update the hook (the fix drafts one from the description)",
            plan.replace_hook(view.index, entry, summary.description, ctx.line_limit),
        )


MEM129 = Rule(
    code="MEM129",
    name="index-hook-disagrees",
    severity="warning",
    scope="directory",
    summary="An index hook states a number (a count, a version, a day) that its memory no "
    "longer holds anywhere, where the memory's description states another in the same place: "
    "after the same word or before it (`tier 7` against `tier 5`, `v2.4.1` against "
    "`v2.3.0`, `due March 3` against `due May 5`; any month name is the same word). A hook "
    "that only adds a detail the memory lacks is not one.",
    why="MEMORY.md is loaded into every session, the memory only when it is read: a hook left "
    "behind when the memory changed (a deadline moved, a version bumped) is what the agent "
    "believes. memdir's writer rewrites only the index lines it wrote itself, so a line someone "
    "wrote keeps its words after the memory changes, and this rule says when they no longer "
    "agree.",
    example="`- [Launch](launch.md) — due March 3`, where launch.md's description says "
    "`the launch moved to May 5` and the file says March 3 nowhere",
    remedy="Update the hook; the editor's fix replaces it with one drafted from the description "
    "(never applied by `--fix`: the hook someone wrote is theirs).",
    fixable="editor",
    reads=frozenset({"index", "files", "description", "numbers"}),
    directory=_hooks_disagree,
)

RULES = (MEM005, MEM107, MEM108, MEM111, MEM114, MEM123, MEM128, MEM129)


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


def summarize(
    topic: TopicFile,
    root: Path,
    bodies: bool = True,
    directives_on: bool = True,
    numbers_on: bool = True,
) -> TopicSummary:
    """What the directory rules read of ``topic``. ``bodies``, ``directives_on`` and
    ``numbers_on``: keep its bodies' shingles, its directives and its numbers, which only some
    rules read (the engine asks their :attr:`Rule.reads`); the first two are each a tenth or
    more of a cold lint's time at 2,000 files."""
    fm = topic.frontmatter
    spans = fm.value_spans if fm is not None else {}
    head = head_span(topic.text)
    kinds = {p.kind for p in topic.problems}
    name_span = spans.get("name")
    description_span = spans.get("description")
    return TopicSummary(
        root=root,
        rel_path=topic.rel_path,
        mtime=topic.mtime,
        name=topic.name or None,
        description=topic.description or None,
        type=topic.type,
        title=title_of(topic),
        name_span=head if name_span is None else name_span,
        description_span=head if description_span is None else description_span,
        head_span=head,
        listed=not ("unreadable" in kinds and topic.mtime == 0.0),
        usable=not kinds & {"unreadable", "binary"},
        directives=directives(topic) if directives_on else (),
        body_shingles=pack(shingles(topic.body)) if bodies else b"",
        numbers=digit_runs(topic.text) if numbers_on else frozenset(),
    )
