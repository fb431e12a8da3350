"""Every fix memdir offers, planned in one place: pure functions from parsed files to :class:`Fix`.

Lint attaches these fixes to its diagnostics; the editor's quick fixes, "fix all", "move to a
topic file" and rename support come from here too, so one problem never gets two different
fixes. Nothing here writes, and nothing here reads the disk except through the ``read_topic``
callback a caller passes. The rules the fixes follow are the memory system's (spec sections 3
and 4): one index line per topic file, ``- [Title](file.md) — hook`` under the line limit; topic
files open with ``name``/``description``/``type`` frontmatter; moved text lands verbatim in its
new file so nothing is ever lost.

A planned :class:`CreateFile` names a plain path inside the memory dir: never one through a
symlink (a folder or a dangling link leading out, which an editor applying the edit would
follow), never a name the writer refuses; that one check (:func:`creatable`) is the only disk
access besides ``read_topic``.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from memdir import constants as C
from memdir.agent.index import (
    Index,
    code_names,
    encode_target,
    entry_end,
    fit_entry,
    is_generated,
    normalize_target,
    shorten_units,
)
from memdir.agent.topic import field_key
from memdir.fixes.model import CreateFile, DeleteFile, Fix, TextEdit
from memdir.fixes.text import (
    DRAFT_HEAD_LINES,
    agent_name,
    first_sentence,
    guess_title,
    guess_type,
    hook_after_title,
    kebab_slug,
    lead_sentence,
    memory_name,
    name_from_file,
    render_frontmatter,
    render_topic,
    stated_type,
    type_from_path,
    type_spelling,
    unique_file_name,
    yaml_scalar,
)
from memdir.model import IndexEntry, Span, TopicFile
from memdir.textio import utf16_len

if TYPE_CHECKING:
    from pathlib import Path


#: Codes whose fix is "move to a topic file", planned from the cursor (:func:`move_fixes`).
MOVE_CODES = frozenset({"MEM001", "MEM004"})

_MD_LINK = re.compile(r"\[([^\]\n]*)\]\(([^()\s]+)\)")


# --- spans -----------------------------------------------------------------------------------


def line_span(lines: Sequence[str], start: int, end: int | None = None) -> Span:
    """Whole lines ``start..end`` (inclusive) without the final newline."""
    last = start if end is None else end
    return Span(start, 0, last, len(lines[last]))


def delete_lines_span(lines: Sequence[str], start: int, end: int | None = None) -> Span:
    """Lines ``start..end`` including their newline, so deleting leaves no blank line behind."""
    last = start if end is None else end
    if last + 1 < len(lines):
        return Span(start, 0, last + 1, 0)
    if start > 0:
        # The last line of the file: take the newline before it instead.
        return Span(start - 1, len(lines[start - 1]), last, len(lines[last]))
    return Span(start, 0, last, len(lines[last]))


def _index_edit(index: Index, span: Span, new_text: str) -> TextEdit:
    return TextEdit(index.path, C.INDEX_FILENAME, span, new_text)


# --- topic files -----------------------------------------------------------------------------


#: Checks a drafted description as MEM109 does: ``(description, name, rel_path)`` to why it is
#: vague, or None. Lint passes its own, so that the fixes never import the rules.
DescriptionCheck = Callable[[str, str, str], str | None]


def _head(text: str) -> str:
    return "\n".join(text.split("\n", DRAFT_HEAD_LINES)[:DRAFT_HEAD_LINES])


def skeleton_type(topic: TopicFile) -> tuple[str, bool]:
    """The type a skeleton for ``topic`` writes, and whether the file states it (else it is a
    guess from the words: :func:`guess_type`)."""
    stated = stated_type(topic.rel_path, _head(topic.text))
    return (stated, True) if stated else (guess_type(topic.text), False)


def frontmatter_skeleton(
    topic: TopicFile, type_: str | None = None, *, vague: DescriptionCheck | None = None
) -> Fix:
    """MEM101's fix: a frontmatter block above the untouched text.

    ``name`` is the file name as a slug (:func:`name_from_file`); ``description`` the first
    sentence of the file's lead (:func:`lead_sentence`: never a dated bullet, a heading alone,
    a link line or bookkeeping), else empty for a person to write; ``type`` is ``type_``, else
    the type the file states (:func:`stated_type`), else a guess from its words.

    Safe (``memdir lint --fix`` applies it) only when the result is finished: the type is the
    one the file states, the description is drafted and ``vague`` (MEM109's check; without it
    nothing is safe) finds nothing wrong with it, and the agent keeps the name as it is. Any
    other skeleton would leave a finding of its own making (MEM103, MEM109, MEM115), so it is
    left to the editor, where a person chooses the type (:func:`skeleton_choices`).
    """
    head = _head(topic.text)
    guessed, stated = skeleton_type(topic)
    chosen = type_ or guessed
    name = name_from_file(topic.rel_path)
    description = lead_sentence(head)
    safe = (
        stated
        and chosen == guessed
        and bool(description)
        and agent_name(name) == name
        and vague is not None
        and vague(description, name, topic.rel_path) is None
    )
    block = render_frontmatter(name, description, chosen)
    edit = TextEdit(topic.path, topic.rel_path, Span(0, 0, 0, 0), block)
    return Fix(f"Add frontmatter as a `{chosen}` memory", (edit,), safe=safe)


def skeleton_choices(topic: TopicFile, first: str | None = None) -> list[Fix]:
    """One :func:`frontmatter_skeleton` per memory type, ``first`` first: the editor's MEM101
    menu, for a person to say what kind of memory the file is."""
    order = [first] if first in C.MEMORY_TYPES else []
    order += [t for t in C.MEMORY_TYPES if t != first]
    return [frontmatter_skeleton(topic, t) for t in order]


def set_type(topic: TopicFile, new_type: str, *, safe: bool = False) -> Fix | None:
    """Replace a topic's (unknown) type value; None when there is no type value to replace."""
    fm = topic.frontmatter
    if fm is None:
        return None
    span = fm.value_spans.get(field_key(fm, "type")) or fm.value_spans.get("type")
    if span is None:
        return None
    edit = TextEdit(topic.path, topic.rel_path, span, new_type)
    return Fix(f"Change the type to `{new_type}`", (edit,), safe=safe)


def correct_type(topic: TopicFile, suggestion: str) -> Fix | None:
    """MEM104's fix: the suggested type; safe only when the value is that type misspelled
    (:func:`type_spelling`: another case, a plural, one letter off), so nothing is guessed.
    A synonym (``decision`` for ``project``) is the editor's, for a person to confirm."""
    return set_type(topic, suggestion, safe=type_spelling(topic.raw_type or "") == suggestion)


def set_name(topic: TopicFile, new_name: str, reason: str) -> Fix | None:
    """Replace a topic's ``name`` value; None when it has none to replace. Not safe: ``[[name]]``
    links elsewhere keep the old name."""
    fm = topic.frontmatter
    span = fm.value_spans.get("name") if fm is not None else None
    if span is None:
        return None
    edit = TextEdit(topic.path, topic.rel_path, span, yaml_scalar(new_name))
    return Fix(f"{reason}: rename to `{new_name}`", (edit,))


def quote_value(topic: TopicFile, key: str, value: str, safe: bool) -> Fix | None:
    """Write a top-level field's whole line ``value`` as a quoted scalar, so YAML keeps what a
    `` #`` would otherwise cut as a comment (MEM124)."""
    fm = topic.frontmatter
    span = fm.value_spans.get(key) if fm is not None else None
    if span is None:
        return None
    edit = TextEdit(topic.path, topic.rel_path, span, yaml_scalar(value))
    return Fix(f"Quote the {key} so YAML keeps it whole", (edit,), safe=safe)


def type_choices(topic: TopicFile, suggested: str | None = None) -> list[Fix]:
    """One :func:`set_type` fix per memory type, ``suggested`` first: the editor's MEM104 menu."""
    order = [suggested] if suggested in C.MEMORY_TYPES else []
    order += [t for t in C.MEMORY_TYPES if t != suggested]
    fixes = [set_type(topic, t) for t in order if t != topic.raw_type]
    return [f for f in fixes if f is not None]


# --- the index -------------------------------------------------------------------------------


def entries_linking(index: Index, rel_path: str, *, folder: bool = False) -> list[IndexEntry]:
    """Index entries whose link resolves to ``rel_path`` (relative to the memory dir), or with
    ``folder`` to anything inside the folder ``rel_path``."""
    want = posixpath.normpath(rel_path)
    prefix = want + "/"
    found = []
    for entry in index.entries:
        target = posixpath.normpath(entry.path) if entry.path else ""
        if target == want or (folder and target.startswith(prefix)):
            found.append(entry)
    return found


@dataclass(frozen=True)
class GeneratedDuplicate:
    """memdir's own entry for ``path`` (0-based line ``drop``), which another entry (``keep``)
    links too."""

    path: str
    drop: int
    keep: int


def generated_duplicates(
    index: Index,
    frontmatter: Callable[[str], tuple[str | None, str | None] | None],
    limit: int,
) -> list[GeneratedDuplicate]:
    """The lines memdir wrote for files another entry links too: what to drop so that a file
    memdir indexed and the agent (or a person) then indexed again keeps one entry, theirs.

    A line is memdir's when it is what memdir writes for the file's current ``name`` and
    ``description`` (``frontmatter(path)``, None when the file cannot be read: left alone).
    Where every entry of a file is memdir's, the first stays.
    """
    groups: dict[str, list[IndexEntry]] = {}
    for entry in index.entries:
        if entry.path:
            groups.setdefault(posixpath.normpath(entry.path), []).append(entry)
    found: list[GeneratedDuplicate] = []
    for rel, entries in groups.items():
        if len(entries) < 2:
            continue
        fields = frontmatter(rel)
        if fields is None:
            continue
        name, description = fields
        ours = [e for e in entries if is_generated(e, name, description, rel, limit)]
        theirs = [e for e in entries if e not in ours]
        keep = theirs[0] if theirs else ours[0]
        found += [GeneratedDuplicate(rel, e.line, keep.line) for e in ours if e is not keep]
    return found


def replace_hook(index: Index, entry: IndexEntry, description: str, limit: int) -> Fix:
    """MEM129's fix: the entry's hook drafted again from its file's description, the title and
    link kept, within the line limit. Never safe: the hook someone wrote is replaced."""
    hook = hook_after_title(entry.title, description)
    # The line stays within the limit where a hook of a few words still fits.
    hook = shorten_units(hook, max(limit - utf16_len(entry.raw[: entry.hook_start]), 12))
    end = entry_end(index, entry)  # a hook wrapped onto indented lines is replaced whole
    span = (
        entry.hook_span
        if end == entry.line
        else Span(entry.line, entry.hook_start, end, len(index.lines[end].rstrip("\r")))
    )
    edit = _index_edit(index, span, hook)
    return Fix("Replace the index hook with the description", (edit,))


def entry_insertion(index: Index, line: str) -> TextEdit:
    """Insert an index line after the last entry, else after the last non-blank line (before
    a fenced block or comment left open at the end, where the line would be hidden)."""
    lines = index.lines
    if index.entries:
        last = index.entries[-1].line  # entries are parsed in line order
    elif index.open_block is not None:
        return _index_edit(index, Span(index.open_block, 0, index.open_block, 0), line + "\n")
    else:
        last = len(lines) - 1
        while last >= 0 and not lines[last].strip():
            last -= 1
    if last < 0:
        return _index_edit(index, Span(0, 0, 0, 0), line + "\n")
    if last + 1 < len(lines):
        # Before the next line, so the new line takes the newline that follows it.
        return _index_edit(index, Span(last + 1, 0, last + 1, 0), line + "\n")
    end = len(lines[last])
    return _index_edit(index, Span(last, end, last, end), "\n" + line)


def add_to_index(
    index: Index,
    rel_path: str,
    title: str,
    description: str,
    limit: int = C.INDEX_LINE_LIMIT,
    room: IndexRoom | None = None,
) -> Fix:
    """MEM107's fix: an entry for an orphan topic file (and MEMORY.md when there is none); safe
    unless ``room`` (shared by the orphans of one run) has no room left for it."""
    entry = fit_entry(title, rel_path, description, limit)
    creates = () if index.exists else (CreateFile(index.path, C.INDEX_FILENAME, ""),)
    safe = room is None or room.take(entry)
    return Fix(f"Add {rel_path} to MEMORY.md", (entry_insertion(index, entry),), creates, safe=safe)


class IndexRoom:
    """How many more entries ``memdir lint --fix`` may add to MEMORY.md unattended: as many as
    keep it within the agent's rewrite target and the near-cap share of its characters (MEM003),
    so that adding orphans never pushes the index near or past its load cap. Entries past that
    are the editor's: which memories the index shows is then a person's choice."""

    def __init__(self, index: Index) -> None:
        load = index.load
        self.lines = C.INDEX_REWRITE_TARGET_LINES - load.line_count
        self.chars = int(C.INDEX_MAX_CHARS * C.INDEX_NEAR_CAP_RATIO) - load.char_count

    def take(self, entry_line: str) -> bool:
        """Whether ``entry_line`` still fits; if it does, its room is taken."""
        size = utf16_len(entry_line) + 1
        if self.lines < 1 or self.chars < size:
            return False
        self.lines -= 1
        self.chars -= size
        return True


def remove_entry(index: Index, entry: IndexEntry, title: str, safe: bool = False) -> Fix:
    """Delete an entry's whole line (and the lines its hook wraps onto), leaving no blank line
    behind."""
    span = delete_lines_span(index.lines, entry.line, entry_end(index, entry))
    edit = _index_edit(index, span, "")
    return Fix(title, (edit,), safe=safe)


def remove_duplicate(index: Index, entry: IndexEntry, first: IndexEntry, key: str) -> Fix:
    """MEM006: drop a second entry for ``key``; safe when it says nothing ``first`` does not."""
    same = (
        entry.title == first.title
        and entry.hook in ("", first.hook)
        and entry_end(index, entry) == entry.line
    )
    title = f"Remove the duplicate entry for {key} (line {entry.line + 1})"
    if not same:
        # Redacted where every diagnostic is made (LintContext.diag).
        title += f" and its hook: {entry.hook!r}"
    return remove_entry(index, entry, title, safe=same)


def merge_memories(keep: TopicFile, copy: TopicFile, index: Index) -> Fix:
    """MEM111's merge: ``copy`` into ``keep``. ``keep``'s body gains the lines of ``copy``'s
    body it lacks (blank lines and lines already in ``keep`` dropped), ``copy`` is deleted and
    its index entries are removed. Never safe: a person checks the merged text."""
    have = {line.strip() for line in keep.text.split("\n")}
    extra: list[str] = []
    for line in copy.body.split("\n"):
        if line.strip() and line.strip() not in have:
            have.add(line.strip())
            extra.append(line)
    edits: list[TextEdit] = []
    if extra:
        lines = keep.text.split("\n")
        last = len(lines) - 1
        added = "\n".join(extra)
        if keep.text.endswith("\n"):  # before the empty last line: one final newline kept
            edits.append(TextEdit(keep.path, keep.rel_path, Span(last, 0, last, 0), f"\n{added}\n"))
        else:
            end = len(lines[last])
            edits.append(
                TextEdit(keep.path, keep.rel_path, Span(last, end, last, end), f"\n\n{added}")
            )
    for entry in sorted(entries_linking(index, copy.rel_path), key=lambda e: -e.line):
        span = delete_lines_span(index.lines, entry.line, entry_end(index, entry))
        edits.append(_index_edit(index, span, ""))
    return Fix(
        f"Merge {copy.rel_path} into {keep.rel_path} (and delete {copy.rel_path})",
        tuple(edits),
        deletes=(DeleteFile(copy.path, copy.rel_path),),
    )


def creatable(root: Path, rel: str) -> bool:
    """Whether a file may be planned at ``rel`` in the memory dir ``root``: a plain relative path
    without hidden names (reserved for memdir) that resolves to itself inside the dir, so no
    symlink on the way leads anywhere else (out of the dir above all)."""
    # Imported here: memdir.agent.paths costs every lint start, and few findings plan a file.
    from memdir.containment import relative_inside

    if not rel or posixpath.isabs(rel) or any(p.startswith(".") for p in rel.split("/")):
        return False
    return relative_inside(root, rel, follow_links=True) == posixpath.normpath(rel)


def create_missing(
    index: Index, entry: IndexEntry, key: str, taken: Collection[str] = ()
) -> Fix | None:
    """MEM005: write the file a dangling entry links, from its title and hook.

    None when the link leaves the dir or names a file in ``taken`` (compared case-insensitively:
    a file differing only in case is the same file on macOS and Windows).
    """
    rel = posixpath.normpath(key)
    if not rel or rel == ".." or rel.startswith("../") or posixpath.isabs(rel):
        return None
    if rel.casefold() in {t.casefold() for t in taken} or not creatable(index.path.parent, rel):
        return None
    body = f"# {entry.title}\n" if entry.title else ""
    type_ = type_from_path(rel) or (guess_type(entry.hook) if entry.hook else "")
    text = render_topic(name_from_file(rel), entry.hook, type_, body)
    return Fix(f"Create {rel}", creates=(CreateFile(index.path.parent / rel, rel, text),))


def dangling_fixes(
    index: Index, entry: IndexEntry, key: str, taken: Collection[str] = ()
) -> list[Fix]:
    """MEM005's choices: write the missing file, or drop the entry."""
    created = create_missing(index, entry, key, taken)
    removed = remove_entry(index, entry, f"Remove the dangling entry for {key}")
    return [created, removed] if created is not None else [removed]


# --- new memories ----------------------------------------------------------------------------

#: Where feedback and project memories say why and how to apply them (spec section 4); the
#: skeleton a new one starts with when the user gave no body.
REASON_SKELETON = "**Why:**\n\n**How to apply:**\n"


@dataclass(frozen=True)
class NewMemoryPlan:
    fix: Fix
    #: The new file, relative to the memory dir.
    rel_path: str


def plan_new_memory(
    index: Index,
    title: str,
    description: str,
    type_: str,
    body: str = "",
    *,
    taken: Collection[str] = (),
    limit: int = C.INDEX_LINE_LIMIT,
    indexed: bool = True,
) -> NewMemoryPlan:
    """The editor's "New memory": a topic file named from ``title``, and its index entry.

    The file is ``<slug>.md`` (``-2``, ``-3`` ... when the name is in ``taken`` or an entry
    already links it) with frontmatter from what the user typed (the name an ASCII slug of the
    title, which the agent keeps: :func:`memory_name`), the title as a heading and
    ``body`` (else the why/how skeleton for feedback and project memories). ``indexed`` is the
    recall mode's ``index``: then MEMORY.md gets the entry (and is created when missing), as
    :class:`memdir.writing.writer.MemoryWriter` does for every created topic file.
    """
    title = " ".join(title.split())
    description = " ".join(description.split())
    linked = [posixpath.normpath(e.path) for e in index.entries if e.path]
    rel = unique_file_name(kebab_slug(title), [*taken, *linked])
    if not body.strip():
        body = REASON_SKELETON if type_ in ("feedback", "project") else ""
    parts = (f"# {title}" if title else "", body.strip("\n"))
    text = render_topic(
        memory_name(title, rel), description, type_, "\n\n".join(p for p in parts if p)
    )
    topic = CreateFile(index.path.parent / rel, rel, text)
    if not indexed:
        return NewMemoryPlan(Fix(f"Create {rel}", creates=(topic,)), rel)
    entry = add_to_index(index, rel, title, description, limit)
    return NewMemoryPlan(Fix(f"Create {rel}", entry.edits, (topic, *entry.creates)), rel)


# --- moving content out of the index ----------------------------------------------------------


@dataclass(frozen=True)
class MovePlan:
    fix: Fix
    rel_path: str
    index_line: str
    topic_text: str


def move_to_topic(
    index: Index,
    start_line: int,
    end_line: int,
    taken: Collection[str],
    limit: int = C.INDEX_LINE_LIMIT,
    title: str | None = None,
    read_topic: Callable[[str], str | None] | None = None,
) -> MovePlan | None:
    """Move lines ``start_line..end_line`` of MEMORY.md into a new topic file.

    The new file gets frontmatter (name from the title, description from the first sentence,
    a guessed type) and the moved text verbatim as its body; the lines are replaced by one index
    entry under ``limit`` that links the new file. A single over-long entry moves its hook: the
    hook becomes the body (verbatim) and the entry keeps its title with a shortened hook; when
    the entry's file already exists (``read_topic`` returns its text) the hook is appended to it
    instead of starting a second file. Returns None for a block with nothing to move.
    """
    lines = index.lines
    if not (0 <= start_line <= end_line < len(lines)):
        return None
    while start_line < end_line and not lines[start_line].strip():
        start_line += 1
    while end_line > start_line and not lines[end_line].strip():
        end_line -= 1
    block = "\n".join(lines[start_line : end_line + 1])
    if not block.strip():
        return None
    entry = next((e for e in index.entries if e.line == start_line), None)
    if entry is not None and start_line == end_line:
        entry_title = title or entry.title or guess_title(entry.hook)
        body = entry.hook or entry.raw.strip()
        target_rel = posixpath.normpath(entry.path) if entry.path else ""
        existing = read_topic(target_rel) if read_topic and target_rel else None
        if existing is not None:
            return _append_hook(index, entry, target_rel, existing, limit)
        if (
            target_rel
            and target_rel.casefold() not in {t.casefold() for t in taken}
            and creatable(index.path.parent, target_rel)
        ):
            # The entry links a file that does not exist yet: create exactly that file.
            rel = target_rel
        else:
            rel = unique_file_name(kebab_slug(entry_title), taken)
    else:
        entry_title = title or guess_title(block)
        body = block
        # Names that entries already point at are taken too, even when the file is missing.
        linked = [posixpath.normpath(e.path) for e in index.entries if e.path]
        rel = unique_file_name(kebab_slug(entry_title), [*taken, *linked])
    # Text without prose (a table row, a lone symbol) still gets a description: the title, which
    # MEM109 then asks a person to improve, rather than an empty field the agent cannot read.
    description = first_sentence(body, limit) or entry_title
    topic_text = render_topic(name_from_file(rel), description, guess_type(body), body)
    bullet = entry.bullet if entry is not None else "-"
    new_line = fit_entry(
        entry_title, rel, hook_after_title(entry_title, description), limit, bullet
    )
    fix = Fix(
        f"Move to topic file {rel}",
        (_index_edit(index, line_span(lines, start_line, end_line), new_line),),
        (CreateFile(index.path.parent / rel, rel, topic_text),),
    )
    return MovePlan(fix, rel, new_line, topic_text)


def _append_hook(index: Index, entry: IndexEntry, rel: str, existing: str, limit: int) -> MovePlan:
    file_lines = existing.split("\n")
    last = len(file_lines) - 1
    # Keep one blank line between the file's text and the moved hook.
    lead = "\n" if existing.endswith("\n") else "\n\n"
    appended = TextEdit(
        index.path.parent / rel,
        rel,
        Span.on_line(last, len(file_lines[last]), len(file_lines[last])),
        lead + entry.hook + "\n",
    )
    new_line = fit_entry(
        entry.title, entry.target and rel, first_sentence(entry.hook, limit), limit, entry.bullet
    )
    fix = Fix(
        f"Move detail to topic file {rel}",
        (_index_edit(index, line_span(index.lines, entry.line), new_line), appended),
    )
    return MovePlan(fix, rel, new_line, existing + lead + entry.hook + "\n")


#: Lines that are memory content when they stand in MEMORY.md (a table only when no row of it
#: links a file: then it is an index in table form).
_CONTENT_KINDS = frozenset({"text", "bullet", "code", "table"})
#: Lines that end a block: the index's own structure (a heading only at its section's level or
#: above: see :func:`content_blocks`).
_BLOCK_ENDS = frozenset({"heading", "frontmatter", "entry"})
_HEADING_LEVEL = re.compile(r"^ {0,3}(#{1,6})")


@dataclass(frozen=True)
class ContentBlock:
    """A run of content in MEMORY.md: a section's content, from the heading or entry before it
    to the next entry or heading of the section's level or above (blank lines, rules, comments,
    pointer lines and deeper headings inside it do not split it), from its first content line
    to its last."""

    start: int
    end: int
    #: Content lines in it, the deeper headings inside it included (blank lines and the
    #: structure between them not counted).
    lines: int
    #: The kinds of its content lines (``text``, ``bullet``, ``code``, ``table``).
    kinds: frozenset[str]
    #: A short note opening the index (at most :data:`C.INDEX_PREAMBLE_MAX_LINES` lines under at
    #: most a title, before the first entry and followed by more), or closing it (at most
    #: :data:`C.INDEX_CLOSING_MAX_LINES` lines after the last entry, set off from it by ``---``):
    #: how the index is kept or used, not a memory.
    note: bool


def _heading_level(line: str) -> int:
    match = _HEADING_LEVEL.match(line)
    return len(match.group(1)) if match is not None else 0


def content_blocks(index: Index) -> list[ContentBlock]:
    """The blocks of content written into MEMORY.md, in order: what MEM004 reports (one finding
    a block) and what "move to a topic file" moves from a cursor.

    A block is a section's content: ``## Bugs fixed`` followed by ``### 1. parser``, text,
    ``### 2. cache``, text is one block, from ``### 1. parser`` on, to move into one topic file.
    Under a section heading of level 2 or more (the last heading that is no part of content),
    a deeper heading stays in the block, or opens it when content follows; a level-1 heading is
    the index's title, and the ``##`` under it are its sections. An entry, or a heading of the
    section's level or above, ends the block, and so does a heading that links a topic file
    (``### [Deploys](deploys.md)``: an entry in the form of a heading, whose content is its
    own); headings after its last content line are no part of it."""
    kinds = {item.line: item.kind for item in index.other}
    linking = {ref.line for ref in index.references}
    index_rows = _index_tables(kinds, index.lines, linking)
    blocks: list[ContentBlock] = []
    start = end = -1
    count = 0
    found: set[str] = set()
    headings = 0
    opened = True  # no entry or second heading seen yet: a block here may be the preamble
    first = True
    section = 0  # the level of the section heading the content is under (0: none)
    under = False  # only blank lines and deeper headings since that heading
    held_start, held = -1, 0  # deeper headings not yet followed by content

    def close(followed: bool) -> None:
        nonlocal start, count, first, held_start, held
        if start >= 0:
            preamble = first and opened and followed and count <= C.INDEX_PREAMBLE_MAX_LINES
            blocks.append(ContentBlock(start, end, count, frozenset(found), preamble))
            first = False
        start, count = -1, 0
        held_start, held = -1, 0
        found.clear()

    for number in range(len(index.lines)):
        kind = kinds.get(number, "entry")
        if kind == "heading":
            level = _heading_level(index.lines[number])
            if section >= 2 and level > section and (start >= 0 or under) and number not in linking:
                # A sub-heading of the section's content: held until content follows it.
                if held_start < 0:
                    held_start = number
                held += 1
            else:
                close(followed=True)
                section, under = level, True
            headings += 1
            opened = opened and headings <= 1
        elif kind == "label":
            # A bold label (``**Latest reports:**``) belongs to the content after it, if any,
            # and is structure when entries follow it.
            if held_start < 0:
                held_start = number
            held += 1
        elif kind in _BLOCK_ENDS or number in index_rows:
            # A row of an index table is an entry too.
            close(followed=True)
            under = False
            opened = opened and kind == "frontmatter"
        elif kind in _CONTENT_KINDS and number not in index_rows:
            if start < 0:
                start = held_start if held_start >= 0 else number
            end = number
            count += 1 + held
            held_start, held = -1, 0
            under = False
            found.add(kind)
    close(followed=False)
    return _closing_note(blocks, kinds, [e.line for e in index.entries] + [*linking, *index_rows])


def _closing_note(
    blocks: list[ContentBlock], kinds: dict[int, str], anchors: list[int]
) -> list[ContentBlock]:
    """``blocks`` with a closing note marked as a note: the blocks after the first ``---``
    that follows the last entry (or link, or index table row), when they are short, e.g. a
    "how to add a memory" section or a "last updated" stamp ending the index."""
    last = max(anchors, default=-1)
    rules = (n for n, kind in sorted(kinds.items()) if kind == "rule" and n > last)
    rule = next(rules, None)
    if last < 0 or rule is None:
        return blocks
    tail = [block for block in blocks if block.start > rule]
    if not tail or sum(block.lines for block in tail) > C.INDEX_CLOSING_MAX_LINES:
        return blocks
    return [replace(block, note=True) if block.start > rule else block for block in blocks]


def _index_tables(kinds: dict[int, str], lines: Sequence[str], linking: set[int]) -> set[int]:
    """The rows of tables that point at files, by link or by a name in code form (an index
    written as a table), header rows included."""
    rows: set[int] = set()
    run: list[int] = []
    for number in [*sorted(n for n, kind in kinds.items() if kind == "table"), -2]:
        if run and number != run[-1] + 1:
            if any(row in linking or code_names(lines[row]) for row in run):
                rows.update(run)
            run = []
        run.append(number)
    return rows


def content_block(index: Index, line: int) -> tuple[int, int] | None:
    """The block of content (:func:`content_blocks`) that ``line`` is in, if any: content
    written straight into MEMORY.md is what the agent is told never to do, and it is what "move
    to a topic file" is for."""
    for block in content_blocks(index):
        if block.start <= line <= block.end:
            return block.start, block.end
    return None


def move_fixes(
    index: Index,
    start: int,
    end: int,
    *,
    selection: bool,
    taken: Collection[str],
    limit: int = C.INDEX_LINE_LIMIT,
    read_topic: Callable[[str], str | None] | None = None,
) -> list[Fix]:
    """What "move to a topic file" does at a cursor (``start``) or a selection in MEMORY.md.

    A selection that holds content moves as it is; a selected entry or heading is no memory
    body (and the range of a diagnostic sent with a quick-fix request is no selection), so
    otherwise the cursor's line decides: the block of content around it, or an over-long entry.
    """
    kinds = {item.line: item.kind for item in index.other}
    if selection and any(kinds.get(n) in _CONTENT_KINDS for n in range(start, end + 1)):
        moved = move_to_topic(index, start, end, taken, limit, read_topic=read_topic)
        return [moved.fix] if moved is not None else []
    plans: list[MovePlan | None] = []
    block = content_block(index, start)
    if block is not None:
        plans.append(move_to_topic(index, *block, taken, limit, read_topic=read_topic))
    entry = next((e for e in index.entries if e.line == start), None)
    if entry is not None and utf16_len(entry.raw.rstrip()) > limit:
        plans.append(move_to_topic(index, start, start, taken, limit, read_topic=read_topic))
    return distinct(p.fix for p in plans if p is not None)


# --- what the editor offers for one finding ----------------------------------------------------


def _edits_inside(edit: TextEdit) -> bool:
    """The file ``edit`` changes resolves inside its memory dir."""
    from memdir.containment import relative_inside  # see creatable

    root = edit.path.parents[len(PurePosixPath(edit.rel_path).parts) - 1]
    return relative_inside(root, edit.rel_path, follow_links=True) is not None


def confined(fix: Fix) -> bool:
    """Whether an editor applying ``fix`` stays inside the memory dir: every file it edits
    resolves inside (MEMORY.md or a topic file may be a symlink leading out, which lint does
    not follow but an editor would), every file it creates is :func:`creatable`."""
    if not all(_edits_inside(edit) for edit in fix.edits):
        return False
    for create in fix.creates:
        root = create.path.parents[len(PurePosixPath(create.rel_path).parts) - 1]
        if not creatable(root, create.rel_path):
            return False
    for delete in fix.deletes:
        from memdir.containment import relative_inside  # see creatable

        root = delete.path.parents[len(PurePosixPath(delete.rel_path).parts) - 1]
        if relative_inside(root, delete.rel_path, follow_links=True) is None:
            return False
    return True


def distinct(fixes: Iterable[Fix]) -> list[Fix]:
    """``fixes`` without repeats (a fix with the same effect as an earlier one is dropped), and
    without a fix that would write through a symlink leading out (:func:`confined`)."""
    seen: set[object] = set()
    kept: list[Fix] = []
    for fix in fixes:
        if not confined(fix):
            continue
        effect = fix.effect()
        if effect not in seen:
            seen.add(effect)
            kept.append(fix)
    return kept


# --- renaming ---------------------------------------------------------------------------------


def _rename_target(path: str, old_rel: str, new_rel: str) -> str | None:
    path = posixpath.normpath(path)
    if path == old_rel:
        return new_rel
    if path.startswith(old_rel + "/"):
        return new_rel + path[len(old_rel) :]
    return None


def _keep_fragment(target: str, new_path: str) -> str:
    raw = target[1:-1] if target.startswith("<") and target.endswith(">") else target
    fragment = "#" + raw.split("#", 1)[1] if "#" in raw else ""
    return encode_target(new_path) + fragment


def rename_edits(
    index: Index | None, topics: Iterable[TopicFile], old_rel: str, new_rel: str
) -> list[TextEdit]:
    """Edits that keep every link valid when ``old_rel`` (a file or folder) becomes ``new_rel``.

    Covers index entries and relative Markdown links in topic files, whose targets resolve from
    the linking file's folder. ``[[name]]`` links use the frontmatter name, which a rename does
    not change.
    """
    old_rel = posixpath.normpath(old_rel)
    new_rel = posixpath.normpath(new_rel)
    edits: list[TextEdit] = []
    if index is not None:
        for entry in index.entries:
            renamed = _rename_target(entry.path, old_rel, new_rel) if entry.path else None
            if renamed is not None:
                new_target = _keep_fragment(entry.target, renamed)
                edits.append(_index_edit(index, entry.target_span, new_target))
    for topic in topics:
        # A moved topic's own relative links are resolved from where it now lives.
        topic_dir = posixpath.dirname(topic.rel_path)
        renamed_self = _rename_target(topic.rel_path, old_rel, new_rel)
        new_dir = posixpath.dirname(renamed_self) if renamed_self is not None else topic_dir
        for number, line in enumerate(topic.text.split("\n")):
            for match in _MD_LINK.finditer(line):
                target = match.group(2)
                if "://" in target or target.startswith(("#", "/", "mailto:")):
                    continue
                resolved = posixpath.normpath(posixpath.join(topic_dir, normalize_target(target)))
                moved_to = _rename_target(resolved, old_rel, new_rel) or (
                    resolved if new_dir != topic_dir else None
                )
                if moved_to is None:
                    continue
                replacement = _keep_fragment(target, posixpath.relpath(moved_to, new_dir or "."))
                if replacement != target:
                    span = Span.on_line(number, match.start(2), match.end(2))
                    edits.append(TextEdit(topic.path, topic.rel_path, span, replacement))
    # An editor would apply them through a symlink leading out (a MEMORY.md linked elsewhere).
    return [edit for edit in edits if _edits_inside(edit)]
