"""Rules that read MEMORY.md alone (MEM001-MEM004, MEM006, MEM007): path A, the index.

The caps are never reimplemented here: MEM002 and MEM003 read :func:`memdir.agent.index.load_cap`'s
result (``index.load``).
"""

from __future__ import annotations

import itertools
import posixpath
import re
from collections.abc import Iterator
from operator import attrgetter
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from memdir import constants as C
from memdir.fixes import plan
from memdir.lint.diagnostic import Diagnostic
from memdir.lint.rules.base import IndexView, Rule, count, line_span
from memdir.model import IndexEntry, Span
from memdir.textio import utf16_len, utf16_prefix_index

if TYPE_CHECKING:
    from memdir.lint.engine import LintContext

_LINE = attrgetter("line")

#: For the examples in the docs: the first line past the cap, and past the rewrite target.
_FULL_AT = C.INDEX_MAX_LINES + 1
_NEAR_AT = C.INDEX_REWRITE_TARGET_LINES + 1


def link_key(path: str) -> str:
    """An index link's target as a path inside the memory dir, for comparing links and files."""
    parts = path.split("/")
    if "" in parts or "." in parts or ".." in parts:
        return posixpath.normpath(path) if path else path
    return path  # already normal: normpath would return it unchanged


_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_DRIVE = re.compile(r"[A-Za-z]:[\\/]")


def link_problem(entry: IndexEntry) -> str | None:
    """Why an entry's target is not a topic file of this dir (MEM007), or None."""
    raw = entry.target[1:-1] if entry.target.startswith("<") else entry.target
    return path_problem(raw, entry.path)


def _is_file_url(raw: str) -> bool:
    return raw[:7].lower() == "file://"


def path_problem(raw: str, path: str) -> str | None:
    """Why a target, as written (``raw``) and normalised (``path``), is not a topic file of
    this dir, or None."""
    if not path:
        return "the link has no file name: it points nowhere the agent can read"
    if _is_file_url(raw):
        return (
            "a file:// URL is an absolute path on one machine: links in MEMORY.md are relative "
            "to the memory dir, and this one breaks as soon as the directory moves or syncs to "
            "another machine"
        )
    if _SCHEME.match(raw) and not _DRIVE.match(raw):
        return (
            "links a URL: the agent reads memories from the memory dir only, so this entry is "
            "never a memory"
        )
    if path.startswith(("/", "~")) or _DRIVE.match(path):
        return (
            "absolute path: links in MEMORY.md are relative to the memory dir, and an absolute "
            "one breaks as soon as the directory moves or syncs to another machine"
        )
    normal = link_key(path)
    if normal == ".." or normal.startswith("../"):
        return (
            "leaves the memory dir with `..`: the agent reads memories only inside it "
            "(and memdir never follows links out of it)"
        )
    if normal == C.INDEX_FILENAME:
        return "links MEMORY.md itself: the index is not a memory"
    if not normal.endswith(".md"):
        return "not a Markdown topic file: the scan and the agent only treat `*.md` as memories"
    return None


def entry_links(entries: tuple[IndexEntry, ...]) -> list[tuple[IndexEntry, str | None]]:
    """Each entry with its link key, None for a link that is no topic file of this dir."""
    return [(entry, _plain_key(entry.path) or _checked_key(entry)) for entry in entries]


def _plain_key(path: str) -> str | None:
    """The key of a link to a ``.md`` file of the dir's top folder, written plainly (nearly
    every link): nothing for :func:`link_problem` to find. None for any other path."""
    if (
        path.endswith(".md")
        and path != C.INDEX_FILENAME
        and not path.startswith((".", "~"))
        and ":" not in path
        and "/" not in path
    ):
        return path
    return None


def _checked_key(entry: IndexEntry) -> str | None:
    return None if link_problem(entry) is not None else link_key(entry.path)


def absolute_key(entry: IndexEntry) -> str | None:
    """The path of an absolute link (``/home/me/proj/memory/notes.md``, or the same as a
    ``file://`` URL) without its root, where the lint finds the dir's own file (MEM107); None
    for any other link."""
    raw = entry.target[1:-1] if entry.target.startswith("<") else entry.target
    if _is_file_url(raw):
        path = unquote(urlsplit(raw).path)
    elif entry.path.startswith("/") or _DRIVE.match(entry.path):
        path = entry.path
    else:
        return None
    path = path.replace("\\", "/").lstrip("/")
    return path[2:].lstrip("/") if _DRIVE.match(path) else path


def path_key(path: str) -> str | None:
    """The key of the topic file a normalised path names (written in code form, say), or None
    when it names no topic file of this dir."""
    return _plain_key(path) or (None if path_problem(path, path) else link_key(path))


# --- MEM001 --------------------------------------------------------------------------------------


def _line_length(view: IndexView, ctx: LintContext) -> Iterator[Diagnostic]:
    """Entry and heading lines longer than the limit plus the tolerance (UTF-16 units, like
    the cap); the range is everything past the limit itself."""
    index, limit = view.index, ctx.line_limit
    headings = (o.line for o in index.other if o.kind == "heading")
    entries = {entry.line: entry for entry in index.entries}
    for number in sorted(itertools.chain(entries, headings)):
        line = index.lines[number].rstrip()
        length = utf16_len(line)
        if length <= limit + C.INDEX_LINE_TOLERANCE:
            continue
        start = utf16_prefix_index(line, limit)
        entry = entries.get(number)
        yield ctx.diag(
            "MEM001",
            ctx.index_path,
            C.INDEX_FILENAME,
            Span(number, start, number, len(line)),
            f"index line is {length} characters (limit {limit}): the agent is told to keep "
            "each entry to one short line, and long lines use up the load budget every entry "
            f"shares; {_shorter(entry, length, limit)}",
        )


#: A title of a few words, for telling whether a shorter title alone makes a line fit.
_SHORT_TITLE = 20


def _shorter(entry: IndexEntry | None, length: int, limit: int) -> str:
    """What to shorten: the title where it repeats the file name (with the hook, when a short
    title alone would not do), the title and link where the hook is short, else the hook."""
    if entry is None:
        return "move the detail into the topic file"
    hook = utf16_len(entry.hook)
    title = utf16_len(entry.title)
    head = length - hook
    fits = length - title + _SHORT_TITLE <= limit + C.INDEX_LINE_TOLERANCE
    repeats = entry.title.strip().lower() in (
        entry.path.lower(),
        posixpath.basename(entry.path).lower(),
    )
    if repeats:
        also = "makes it fit" if fits or hook <= limit // 2 else "and a shorter hook make it fit"
        return (
            f"the title repeats the file name ({head} characters before the hook): a title of "
            f"a few words {also}"
        )
    if hook <= limit // 2:
        return f"the title and link take {head} characters before the hook: shorten the title"
    return "move the detail into the topic file"


MEM001 = Rule(
    code="MEM001",
    auto_memory_only=(
        "the line length is auto memory's rule for the index it injects in every session"
    ),
    name="index-line-too-long",
    severity="warning",
    scope="index",
    summary=f"An index line is more than {C.INDEX_LINE_TOLERANCE} characters longer than the "
    f'limit ({C.INDEX_LINE_LIMIT} characters, `index_line_limit`): the agent is told "about '
    f'{C.INDEX_LINE_LIMIT} characters or less", so a line up to {C.INDEX_LINE_TOLERANCE} '
    "over is let be. The range is the part past the limit.",
    why=f"The agent is told to keep each entry to one line of about {C.INDEX_LINE_LIMIT} "
    f"characters; long hooks use up the {C.INDEX_MAX_CHARS:,}-character load budget that every "
    "entry shares.",
    example="`- [Payments](payments.md) — Stripe Charges → PaymentIntents by 2027-03-31, "
    "then a long story of the whole migration…`",
    remedy="Keep the hook to one short clause; move the detail into the topic file. Where the "
    "hook is short and the title and link make the line long (the file name again as the "
    "title), the message says so: a title of a few words makes it fit.",
    index=_line_length,
)


# --- MEM002, MEM003 ------------------------------------------------------------------------------


def _past_load_cap(view: IndexView, ctx: LintContext) -> Iterator[Diagnostic]:
    """Once, at the first line not loaded."""
    index = view.index
    load = index.load
    if not load.truncated:
        return
    first = load.first_cut_line if load.first_cut_line is not None else len(index.lines) - 1
    cut = index.cut_entries
    if cut:
        lost = (
            f"the agent never sees the last {count(len(cut), 'entry', 'entries')} "
            f"(lines {cut[0].line + 1}-{cut[-1].line + 1})"
        )
    else:
        lost = "the agent never sees the text from here on (no entries are lost yet)"
    yield ctx.diag(
        "MEM002",
        ctx.index_path,
        C.INDEX_FILENAME,
        line_span(index.lines, first),
        f"past the load cap: MEMORY.md is {load.reason}; path A loads only the first "
        f"{load.loaded_lines} lines, so {lost}. Merge or drop stale entries and keep the "
        f"index under {C.INDEX_REWRITE_TARGET_LINES} lines",
    )


MEM002 = Rule(
    code="MEM002",
    auto_memory_only=(
        "the load cap is where auto memory cuts the index it injects; a file read with tools is "
        "read whole"
    ),
    name="index-past-load-cap",
    severity="error",
    scope="index",
    summary=f"MEMORY.md is over the load cap ({C.INDEX_MAX_LINES} lines or {C.INDEX_MAX_CHARS:,} "
    "UTF-16 units after stripping frontmatter and comments); reported once, on the first line "
    "not loaded, with the number of entries lost.",
    why="Path A loads only the part before the cap: the agent never sees the entries past "
    "it, and nothing tells the user.",
    example=f"line {_FULL_AT} of a {_FULL_AT + 42}-line MEMORY.md",
    remedy=f"Merge or drop stale entries; rewrite the index under "
    f"{C.INDEX_REWRITE_TARGET_LINES} lines.",
    index=_past_load_cap,
)


def _near_load_cap(view: IndexView, ctx: LintContext) -> Iterator[Diagnostic]:
    """At the line past the rewrite target, or where the text passes the near-cap share."""
    index = view.index
    load = index.load
    if load.truncated:
        return  # MEM002's
    near_chars = int(C.INDEX_MAX_CHARS * C.INDEX_NEAR_CAP_RATIO)
    sources = load.loaded_source_lines
    line: int | None = None
    if load.line_count > C.INDEX_REWRITE_TARGET_LINES:
        line = sources[C.INDEX_REWRITE_TARGET_LINES]
    elif load.char_count > near_chars:
        used = 0
        for number in sources:
            used += utf16_len(index.lines[number]) + 1
            if used > near_chars:
                line = number
                break
        else:
            line = sources[-1] if sources else 0
    if line is None:
        return
    yield ctx.diag(
        "MEM003",
        ctx.index_path,
        C.INDEX_FILENAME,
        line_span(index.lines, line),
        f"near the load cap: {load.line_count}/{C.INDEX_MAX_LINES} lines, "
        f"{load.char_count:,}/{C.INDEX_MAX_CHARS:,} characters; past the cap the agent "
        "silently loses the last entries. Merge or drop stale entries now (the agent is told "
        f"to keep the index under {C.INDEX_REWRITE_TARGET_LINES} lines)",
    )


MEM003 = Rule(
    code="MEM003",
    auto_memory_only="it warns of auto memory's load cap",
    name="index-near-load-cap",
    severity="warning",
    scope="index",
    summary=f"MEMORY.md is over {C.INDEX_REWRITE_TARGET_LINES} lines or "
    f"{C.INDEX_NEAR_CAP_RATIO:.0%} of the {C.INDEX_MAX_CHARS:,} characters, still under the cap.",
    why="The next entries the agent adds will push the oldest past the cap and out of its "
    "context; the agent itself is told to rewrite the index under "
    f"{C.INDEX_REWRITE_TARGET_LINES} lines.",
    example=f"line {_NEAR_AT} of a {_NEAR_AT + 19}-line MEMORY.md",
    remedy="Merge related entries and drop stale ones before the cap is reached.",
    index=_near_load_cap,
)


# --- MEM004 --------------------------------------------------------------------------------------


def _content_in_index(view: IndexView, ctx: LintContext) -> Iterator[Diagnostic]:
    """Content written into MEMORY.md, one diagnostic per block (:func:`plan.content_blocks`):
    a section's text, code and detail bullets together. The index's own structure is none:
    headings, blank lines, rules, comments, a short opening or closing note, pointer lines and
    tables of links."""
    index = view.index
    if not any(o.kind in ("text", "bullet", "code", "table") for o in index.other):
        return
    linking = {ref.line for ref in index.references}
    for block in plan.content_blocks(index):
        if block.note:
            continue
        first, last = block.start, block.end
        span = Span(first, 0, last, len(index.lines[last].rstrip("\r")))
        if block.lines == 1 and first in linking:
            message = (
                "not in the entry form `- [Title](file.md) — hook`: the agent writes and reads "
                "index entries in exactly that form, and memdir cannot tell which memory this "
                "line is for"
            )
        else:
            what = "code block" if block.kinds == {"code"} else "memory content"
            size = count(block.lines, "line", "lines")
            message = (
                f"{what} in the index ({size}): MEMORY.md should hold "
                "only `- [Title](file.md) — hook` entries; this text is loaded into every "
                "session against the cap, yet the agent cannot find, update or recall it as a "
                "memory. Move it into a topic file"
            )
        yield ctx.diag("MEM004", ctx.index_path, C.INDEX_FILENAME, span, message)


MEM004 = Rule(
    code="MEM004",
    auto_memory_only=(
        "only auto memory injects the index in every session, so only there does content in it cost"
        " every session"
    ),
    name="content-in-index",
    severity="warning",
    scope="index",
    summary="Memory content written into MEMORY.md instead of a topic file: paragraphs, code "
    "blocks, detail bullets, tables without links, links in another form. One diagnostic per "
    "block, with its number of lines: a section's content, up to the next entry or heading of "
    "the section's level or above (`## Bugs fixed` with `### 1.`, `### 2.` under it is one "
    "block, which moves into one topic file; a heading linking a topic file starts a block of "
    "its own). The "
    "index's own structure is not content: headings, blank lines, `---`, comments, a note of "
    f"at most {C.INDEX_PREAMBLE_MAX_LINES} lines opening the index (under at most a title, "
    f"before the first entry), a note of at most {C.INDEX_CLOSING_MAX_LINES} lines closing it "
    '(set off by `---` after the last entry: how to add a memory, a "last updated" stamp), '
    "lines pointing at a file in code form (`` - `notes.md` — hook ``; a folder in code form "
    "is the project's layout, content) or in an entry's form but for a detail (`- [notes.md] "
    "hook` with no link target, `- ⭐ [Title](notes.md) — hook` marked with a symbol), an "
    "entry's hook wrapped onto indented lines right under it (one Markdown list item), a bold "
    "label heading entries (`**Latest reports:**`) and tables whose rows link or name topic "
    "files.",
    why="Content in the index is loaded into every session against the cap, yet it is not "
    "a memory: the agent cannot find it by name, update it, or recall it on path B.",
    example="`We decided to keep the old billing export until Q3 because finance…`",
    remedy="Move the text into a topic file and link it with one `- [Title](file.md) — hook` line.",
    fixable="editor",
    preview=True,
    precision="130 of 157 judged findings right (83%) on the 554 real memory dirs of the "
    "samples (2026-12): notes about the index itself in its middle (how to use the memory "
    "tooling, a pointer to a docs folder, a template's note on how to grow the index), lines "
    "pointing at pages of another knowledge store and entries marked with a bold label read "
    "as content",
    index=_content_in_index,
)


# --- MEM006, MEM007 ------------------------------------------------------------------------------


def _duplicate_entries(view: IndexView, ctx: LintContext) -> Iterator[Diagnostic]:
    index = view.index
    first: dict[str, IndexEntry] = {}
    for entry, key in view.links:
        if key is None:
            continue
        earlier = first.setdefault(key, entry)
        if earlier is entry:
            continue
        yield ctx.diag(
            "MEM006",
            ctx.index_path,
            C.INDEX_FILENAME,
            Span(entry.line, 0, entry.line, len(entry.raw.rstrip("\r"))),
            f"duplicate entry: {key} is already linked on line {earlier.line + 1}; each copy "
            "spends load budget, and two hooks for one file read like two memories",
            plan.remove_duplicate(index, entry, earlier, key),
        )


MEM006 = Rule(
    code="MEM006",
    name="duplicate-index-entry",
    severity="warning",
    scope="index",
    summary="The same topic file is linked by more than one entry.",
    why="Each copy spends load budget, and two hooks for one file read like two memories.",
    example="`- [Terse answers](feedback-terse.md)` on lines 4 and 19",
    remedy="Keep one entry (`--fix` removes exact duplicates).",
    fixable="safe",
    index=_duplicate_entries,
)


def _bad_links(view: IndexView, ctx: LintContext) -> Iterator[Diagnostic]:
    for entry, key in view.links:
        if key is None:
            if _pointer(entry):
                continue
            problem = link_problem(entry)
            assert problem is not None
            yield ctx.diag("MEM007", ctx.index_path, C.INDEX_FILENAME, entry.target_span, problem)


def _pointer(entry: IndexEntry) -> bool:
    """A relative link to a file that is no memory: one beside the memories (``../docs/api.md``)
    or one kept with them that is not Markdown (``report.html``, ``schema.sql``). The model can
    open either with its tools: not a memory, but no mistake either (on real dirs most of these
    were intended: docs/real-dirs.md)."""
    raw = entry.target[1:-1] if entry.target.startswith("<") else entry.target
    path = entry.path
    if not path or (_SCHEME.match(raw) and not _DRIVE.match(raw)):
        return False
    if path.startswith(("/", "~")) or _DRIVE.match(path):
        return False
    normal = link_key(path)
    if normal == ".." or normal.startswith("../"):
        return True
    return normal != C.INDEX_FILENAME and not normal.endswith(".md")


MEM007 = Rule(
    code="MEM007",
    auto_memory_only=(
        "only auto memory's index is limited to the topic files of its directory; an agent reading "
        "with its tools follows any path"
    ),
    name="bad-index-link",
    severity="error",
    scope="index",
    summary="An index entry links something that is not a topic file of this directory: a URL, "
    "an absolute path, or MEMORY.md itself. A relative path leaving the directory "
    "(`../docs/api.md`) or naming a file that is not Markdown (`report.html`) is a pointer to "
    "a file beside or among the memories, which the model can open: not reported.",
    why="The agent reads memories from the memory dir only; such an entry is never a "
    "memory, and absolute paths break when the directory moves.",
    example="`- [Notes](https://example.com/notes.md)` or `- [Old](/home/me/notes.md)`",
    remedy="Link a `.md` file inside the memory dir with a relative path.",
    index=_bad_links,
)

RULES = (MEM001, MEM002, MEM003, MEM004, MEM006, MEM007)
