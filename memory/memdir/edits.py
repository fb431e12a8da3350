"""Planning edits to a memory directory: pure functions that return text and spans, never write.

The language server's code actions and rename support are built from these, and so can any other
front end (a CLI ``--fix``, an agent tool): each planner returns :class:`EditPlan` values made of
text replacements and new files, with 0-based code-point spans like the rest of ``memdir``. Nothing
here knows about LSP, and nothing here touches the disk except to ask which names are taken.

The rules they follow come from the memory system (spec sections 3 and 4): one index line per
topic file, ``- [Title](file.md) — hook`` under the line limit; topic files open with
``name``/``description``/``type`` frontmatter; moved text lands verbatim in its new file so nothing
is ever lost.
"""

from __future__ import annotations

import json
import posixpath
import re
import unicodedata
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from memdir import constants as C
from memdir.index import BULLET, Index, encode_target, fit_entry, normalize_target
from memdir.model import IndexEntry, Span, TopicFile

#: File names made from titles are cut to this many characters before ``.md`` (kept readable).
SLUG_MAX_CHARS = 60
#: Fallback when a title has no letter or digit at all.
DEFAULT_SLUG = "memory"

_NOT_WORD = re.compile(r"[^\w]+|_+")
_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.*?)[ \t#]*$")
_MARKUP = re.compile(r"[*_`~]+|\[\[|\]\]")
_MD_LINK = re.compile(r"\[([^\]\n]*)\]\(([^()\s]+)\)")
_LINK_TEXT = re.compile(r"\[([^\]\n]*)\]\([^)\n]*\)")
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s")
_CLAUSE_END = re.compile(r"\s*[;—–(]\s*|:\s+|\s+-\s+|[；：]")
_URL = re.compile(r"https?://\S+")


@dataclass(frozen=True)
class TextEdit:
    """Replace ``span`` of the file at ``path`` with ``new_text`` (an insertion when empty)."""

    path: Path
    span: Span
    new_text: str


@dataclass(frozen=True)
class FileCreation:
    """A new file; a planner never proposes one over an existing file."""

    path: Path
    text: str


@dataclass(frozen=True)
class EditPlan:
    title: str
    edits: tuple[TextEdit, ...] = ()
    creations: tuple[FileCreation, ...] = ()


# --- names -----------------------------------------------------------------------------------


def kebab_slug(title: str, max_chars: int = SLUG_MAX_CHARS) -> str:
    """``Release merge freeze!`` → ``release-merge-freeze``; letters of any script are kept.

    File names of CJK titles stay readable (``数据保留策略``); only characters that are not
    letters or digits become ``-``.
    """
    text = unicodedata.normalize("NFKC", title).casefold()
    slug = _NOT_WORD.sub("-", text).strip("-")
    if len(slug) > max_chars:
        slug = slug[:max_chars]
        # Cut at a word boundary when one is near, so names do not end mid-word.
        dash = slug.rfind("-")
        if dash > max_chars // 2:
            slug = slug[:dash]
        slug = slug.strip("-")
    return slug or DEFAULT_SLUG


def unique_file_name(slug: str, taken: Collection[str], directory: str = "") -> str:
    """``<directory>/<slug>.md``, or ``<slug>-2.md`` ... when a name is taken.

    Compared case-insensitively: on macOS and Windows ``Foo.md`` and ``foo.md`` are one file.
    """
    taken_folded = {t.casefold() for t in taken}
    prefix = f"{directory.strip('/')}/" if directory.strip("/") else ""
    candidate = f"{prefix}{slug}.md"
    number = 2
    while candidate.casefold() in taken_folded or candidate == C.INDEX_FILENAME:
        candidate = f"{prefix}{slug}-{number}.md"
        number += 1
    return candidate


# --- text helpers ----------------------------------------------------------------------------


def plain_text(line: str) -> str:
    """A Markdown line as words: no bullet, heading marks, emphasis or link syntax."""
    heading = _HEADING.match(line)
    text = heading.group(1) if heading else BULLET.sub("", line)
    text = _LINK_TEXT.sub(r"\1", text)
    text = _MARKUP.sub("", text)
    return " ".join(text.split())


def shorten(text: str, limit: int) -> str:
    """Cut ``text`` to at most ``limit`` characters at a word boundary, marking the cut with …."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    if limit <= 1:
        return "…"[:limit]
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:—–-") + "…"


def first_sentence(text: str, limit: int = C.INDEX_LINE_LIMIT) -> str:
    """The first sentence of a block (as plain words), shortened to ``limit`` characters."""
    words = " ".join(plain_text(line) for line in text.split("\n") if line.strip())
    parts = _SENTENCE_END.split(words, maxsplit=1)
    return shorten(parts[0] if parts else words, limit)


def guess_title(block: str) -> str:
    """A title for moved text: its first heading, else its first line's words."""
    lines = [line for line in block.split("\n") if line.strip()]
    for line in lines:
        heading = _HEADING.match(line)
        if heading and heading.group(1).strip():
            return shorten(plain_text(line), 60)
    if not lines:
        return "Untitled memory"
    # A "**Lead:** rest" line is titled by its lead.
    lead = re.match(r"^\s*(?:[-*+]\s+)?\*\*([^*]+?)\*\*", lines[0])
    if lead:
        return shorten(lead.group(1).rstrip(":").strip(), 60) or "Untitled memory"
    # Otherwise the first clause of the first sentence: short enough for a title and a name.
    sentence = _SENTENCE_END.split(plain_text(lines[0]), maxsplit=1)[0]
    clause = _CLAUSE_END.split(sentence, maxsplit=1)[0].rstrip(".!?。！？ ")
    return shorten(clause, 60) or "Untitled memory"


def guess_type(text: str) -> str:
    """A plausible memory type for text being moved; the user can change it in the new file.

    Links to external systems make a ``reference``; first-person preferences a ``user`` memory;
    corrections of how the agent works (always/never/don't) ``feedback``; anything else is
    project background, the most common kind.
    """
    lowered = text.casefold()
    if _URL.search(text) or any(w in lowered for w in ("dashboard", "runbook", "linear ")):
        return "reference"
    if re.search(r"\b(i am|i'm|my role|i prefer|the user is|user prefers)\b", lowered):
        return "user"
    if re.search(r"\b(always|never|don't|do not|stop)\b", lowered):
        return "feedback"
    return "project"


def hook_after_title(title: str, description: str) -> str:
    """The index hook: the description, without repeating the title it may start with."""
    if description.casefold().startswith(title.casefold()):
        rest = description[len(title) :].lstrip(" ;:,.—–-").strip()
        if rest:
            return rest[0].upper() + rest[1:] if title[:1].isupper() else rest
        return ""  # the title says it all
    return description


def yaml_scalar(value: str) -> str:
    """``value`` as a one-line YAML scalar: plain when that reads back unchanged, else quoted."""
    single_line = " ".join(value.split())
    if single_line and single_line == value:
        try:
            if yaml.safe_load(f"k: {value}") == {"k": value}:
                return value
        except yaml.YAMLError:
            pass
    # A JSON string is a valid YAML double-quoted scalar.
    return json.dumps(value, ensure_ascii=False)


def render_frontmatter(name: str, description: str, type_: str) -> str:
    return (
        f"---\nname: {yaml_scalar(name)}\ndescription: {yaml_scalar(description)}\n"
        f"type: {yaml_scalar(type_)}\n---\n"
    )


def render_topic(name: str, description: str, type_: str, body: str) -> str:
    """A new topic file: frontmatter, then ``body`` exactly as given (plus a final newline)."""
    text = render_frontmatter(name, description, type_) + body
    return text if text.endswith("\n") else text + "\n"


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


# --- the index -------------------------------------------------------------------------------


def entries_linking(index: Index, rel_path: str) -> list[IndexEntry]:
    """Index entries whose link resolves to ``rel_path`` (a path relative to the memory dir)."""
    want = posixpath.normpath(rel_path)
    return [e for e in index.entries if e.path and posixpath.normpath(e.path) == want]


def append_entry_edit(index: Index, line: str) -> TextEdit:
    """Insert an index line after the last entry (or at the end of the index)."""
    lines = list(index.lines)
    if index.entries:
        after = max(e.line for e in index.entries)
        span = Span.on_line(after, len(lines[after]), len(lines[after]))
        return TextEdit(index.path, span, "\n" + line)
    # No entries yet: append after the last non-blank line.
    last = len(lines) - 1
    while last >= 0 and not lines[last].strip():
        last -= 1
    if last < 0:
        return TextEdit(index.path, Span(0, 0, 0, 0), line + "\n")
    return TextEdit(index.path, Span.on_line(last, len(lines[last]), len(lines[last])), "\n" + line)


def orphan_entry(topic: TopicFile, limit: int = C.INDEX_LINE_LIMIT) -> str:
    """The index line for a topic file that no entry links yet."""
    title = topic.name or Path(topic.rel_path).stem.replace("-", " ").replace("_", " ")
    hook = topic.description or first_sentence(topic.body, limit)
    return fit_entry(title, topic.rel_path, hook, limit)


def plan_add_to_index(index: Index, topic: TopicFile, limit: int = C.INDEX_LINE_LIMIT) -> EditPlan:
    return EditPlan(
        f"Add {topic.rel_path} to MEMORY.md",
        (append_entry_edit(index, orphan_entry(topic, limit)),),
    )


def plan_remove_entry(index: Index, entry: IndexEntry, why: str = "entry") -> EditPlan:
    span = delete_lines_span(index.lines, entry.line)
    return EditPlan(f"Remove {why} {entry.target}", (TextEdit(index.path, span, ""),))


def plan_create_missing(
    root: Path, entry: IndexEntry, taken: Collection[str] = ()
) -> EditPlan | None:
    """A topic file for an entry whose link points nowhere; None when the link leaves the dir."""
    rel = posixpath.normpath(entry.path)
    if not rel or rel.startswith("../") or rel == ".." or posixpath.isabs(rel):
        return None
    if rel.casefold() in {t.casefold() for t in taken}:
        return None
    name = kebab_slug(Path(rel).stem)
    description = entry.hook or entry.title
    body = f"# {entry.title}\n" if entry.title else ""
    text = render_topic(name, description, guess_type(description), body)
    return EditPlan(f"Create {rel}", creations=(FileCreation(root / rel, text),))


def plan_frontmatter_skeleton(topic: TopicFile) -> EditPlan:
    """Frontmatter for a topic file that has none, from its file name and first sentence."""
    name = kebab_slug(Path(topic.rel_path).stem)
    body = topic.text if topic.text else topic.body
    description = first_sentence(body) or "TODO: one line saying when this memory helps"
    skeleton = render_frontmatter(name, description, guess_type(body))
    return EditPlan(
        "Add frontmatter (name, description, type)",
        (TextEdit(topic.path, Span(0, 0, 0, 0), skeleton),),
    )


def plan_set_type(topic: TopicFile, new_type: str) -> EditPlan | None:
    """Replace a topic's (unknown) type value; None when there is no type field to fix."""
    fm = topic.frontmatter
    if fm is None:
        return None
    span = fm.value_spans.get("type") or fm.value_spans.get("metadata.type")
    if span is None:
        return None
    return EditPlan(f"Change type to `{new_type}`", (TextEdit(topic.path, span, new_type),))


# --- moving content out of the index ----------------------------------------------------------


@dataclass(frozen=True)
class MovePlan:
    plan: EditPlan
    rel_path: str
    index_line: str
    topic_text: str


def plan_move_to_topic(
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
    lines = list(index.lines)
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
    root = index.path.parent
    if entry is not None and start_line == end_line:
        entry_title = title or entry.title or guess_title(entry.hook)
        body = entry.hook or entry.raw.strip()
        target_rel = posixpath.normpath(entry.path) if entry.path else ""
        existing = read_topic(target_rel) if read_topic and target_rel else None
        if existing is not None:
            return _append_hook(index, entry, target_rel, existing, root, limit)
        if target_rel and target_rel.casefold() not in {t.casefold() for t in taken}:
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
    description = first_sentence(body)
    slug = kebab_slug(Path(rel).stem)
    topic_text = render_topic(slug, description, guess_type(body), body)
    bullet = entry.bullet if entry is not None else "-"
    new_line = fit_entry(
        entry_title, rel, hook_after_title(entry_title, description), limit, bullet
    )
    plan = EditPlan(
        f"Move to topic file {rel}",
        (TextEdit(index.path, line_span(lines, start_line, end_line), new_line),),
        (FileCreation(root / rel, topic_text),),
    )
    return MovePlan(plan, rel, new_line, topic_text)


def _append_hook(
    index: Index, entry: IndexEntry, rel: str, existing: str, root: Path, limit: int
) -> MovePlan:
    file_lines = existing.split("\n")
    last = len(file_lines) - 1
    # Keep one blank line between the file's text and the moved hook.
    lead = "\n" if existing.endswith("\n") else "\n\n"
    appended = TextEdit(
        root / rel,
        Span.on_line(last, len(file_lines[last]), len(file_lines[last])),
        lead + entry.hook + "\n",
    )
    new_line = fit_entry(
        entry.title, entry.target and rel, first_sentence(entry.hook), limit, entry.bullet
    )
    plan = EditPlan(
        f"Move detail to topic file {rel}",
        (TextEdit(index.path, line_span(index.lines, entry.line), new_line), appended),
    )
    return MovePlan(plan, rel, new_line, existing + lead + entry.hook + "\n")


def content_block(index: Index, line: int) -> tuple[int, int] | None:
    """The run of non-index content (text, bullets without links) around ``line``, if any.

    Headings, blank lines and entries bound a block: content written straight into MEMORY.md
    is what the agent is told never to do, and it is what "move to a topic file" is for.
    """
    kinds = {item.line: item.kind for item in index.other}
    movable = {"text", "bullet"}
    if kinds.get(line) not in movable:
        return None
    start = line
    while start - 1 >= 0 and kinds.get(start - 1) in movable:
        start -= 1
    end = line
    while end + 1 < len(index.lines) and kinds.get(end + 1) in movable:
        end += 1
    return start, end


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


def plan_rename(
    index: Index | None,
    topics: Iterable[TopicFile],
    old_rel: str,
    new_rel: str,
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
                edits.append(
                    TextEdit(index.path, entry.target_span, _keep_fragment(entry.target, renamed))
                )
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
                new_target = _rename_target(resolved, old_rel, new_rel) or (
                    resolved if new_dir != topic_dir else None
                )
                if new_target is None:
                    continue
                relative = posixpath.relpath(new_target, new_dir or ".")
                replacement = _keep_fragment(target, relative)
                if replacement != target:
                    span = Span.on_line(number, match.start(2), match.end(2))
                    edits.append(TextEdit(topic.path, span, replacement))
    return edits
