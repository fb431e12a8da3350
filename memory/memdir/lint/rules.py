"""The lint rules: pure functions from the core dataclasses to diagnostics.

Three families, by what they read:

* index rules (MEM001-MEM004, MEM006, MEM007) read one parsed :class:`~memdir.index.Index`;
* topic rules (MEM101-MEM106, MEM109, MEM110, MEM112, MEM113) read one
  :class:`~memdir.model.TopicFile`;
* directory rules (MEM005, MEM107, MEM108, MEM111, MEM114) read the index together with a
  summary of every topic file (:class:`TopicSummary`), so an incremental run can redo them
  without re-reading any file.

Every message says why the finding matters to the agent. The caps are never reimplemented here:
MEM002/MEM003 read :func:`memdir.index.load_cap`'s result, MEM106 calls
:func:`memdir.surface.cut_for_injection`, MEM108 orders files with :func:`memdir.scan.window_order`.
"""

from __future__ import annotations

import functools
import heapq
import itertools
import math
import posixpath
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from memdir import constants as C
from memdir.fixes import plan
from memdir.index import Index
from memdir.lint.diagnostic import Diagnostic
from memdir.lint.engine import LintContext
from memdir.lint.secrets import SecretMatch, find_secrets
from memdir.model import IndexEntry, Problem, Span, TopicFile
from memdir.scan import Skipped, window_order
from memdir.textio import MAX_PARSE_BYTES, utf16_len, utf16_prefix_index

#: A description wider than this (East Asian wide characters count twice) crowds the manifest.
DESCRIPTION_MAX_WIDTH = 200
#: Fewer informative words than this (two CJK characters count as one word) says too little.
DESCRIPTION_MIN_WORDS = 4
#: Near-identical descriptions: at least this similar (difflib ratio of the normalised text).
DUPLICATE_RATIO = 0.9
#: ... and share at least this much of their content words (Jaccard), checked first: cheap.
DUPLICATE_JACCARD = 0.7
#: Tokens in more descriptions than this are not used to find candidates (see
#: :func:`near_duplicate_pairs`).
DUPLICATE_MAX_POSTINGS = 16


# --- shared helpers ------------------------------------------------------------------------


def _offset_span(text: str, start: int, end: int) -> Span:
    """A span from string offsets (lines split on ``\\n``, code-point columns)."""
    start_line = text.count("\n", 0, start)
    start_col = start - (text.rfind("\n", 0, start) + 1)
    end_line = start_line + text.count("\n", start, end)
    end_col = end - (text.rfind("\n", 0, end) + 1)
    return Span(start_line, start_col, end_line, end_col)


def _line_span(lines: Sequence[str], line: int) -> Span:
    text = lines[line] if 0 <= line < len(lines) else ""
    return Span(line, 0, line, len(text.rstrip("\r")))


def _count(count: int, singular: str, plural: str) -> str:
    return f"{count} {singular if count == 1 else plural}"


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
    path = entry.path
    if not path:
        return "the link has no file name: it points nowhere the agent can read"
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


# --- index rules -----------------------------------------------------------------------------


def check_line_length(index: Index, ctx: LintContext) -> Iterator[Diagnostic]:
    """MEM001: entry and heading lines longer than the limit (UTF-16 units, like the cap)."""
    limit = ctx.line_limit
    headings = (o.line for o in index.other if o.kind == "heading")
    for number in sorted({*(e.line for e in index.entries), *headings}):
        line = index.lines[number].rstrip()
        length = utf16_len(line)
        if length <= limit:
            continue
        start = utf16_prefix_index(line, limit)
        yield ctx.diag(
            "MEM001",
            ctx.index_path,
            C.INDEX_FILENAME,
            Span(number, start, number, len(line)),
            f"index line is {length} characters (limit {limit}): the agent is told to keep "
            "each entry to one short line, and long hooks use up the load budget every entry "
            "shares; move the detail into the topic file",
        )


def check_load_cap(index: Index, ctx: LintContext) -> Iterator[Diagnostic]:
    """MEM002 past the cap (once, at the first line not loaded); MEM003 near it."""
    load = index.load
    if load.truncated:
        if not ctx.on("MEM002"):
            return
        first = load.first_cut_line if load.first_cut_line is not None else len(index.lines) - 1
        cut = index.cut_entries
        if cut:
            lost = (
                f"the agent never sees the last {_count(len(cut), 'entry', 'entries')} "
                f"(lines {cut[0].line + 1}-{cut[-1].line + 1})"
            )
        else:
            lost = "the agent never sees the text from here on (no entries are lost yet)"
        yield ctx.diag(
            "MEM002",
            ctx.index_path,
            C.INDEX_FILENAME,
            _line_span(index.lines, first),
            f"past the load cap: MEMORY.md is {load.reason}; path A loads only the first "
            f"{load.loaded_lines} lines, so {lost}. Merge or drop stale entries and keep the "
            f"index under {C.INDEX_REWRITE_TARGET_LINES} lines",
        )
        return
    if not ctx.on("MEM003"):
        return
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
        _line_span(index.lines, line),
        f"near the load cap: {load.line_count}/{C.INDEX_MAX_LINES} lines, "
        f"{load.char_count:,}/{C.INDEX_MAX_CHARS:,} characters; past the cap the agent "
        "silently loses the last entries. Merge or drop stale entries now (the agent is told "
        f"to keep the index under {C.INDEX_REWRITE_TARGET_LINES} lines)",
    )


_LINKISH = re.compile(r"\[[^\]]*\]\([^)]*\.md[^)]*\)")


def check_content_in_index(index: Index, ctx: LintContext) -> Iterator[Diagnostic]:
    """MEM004: paragraphs, code and detail bullets in MEMORY.md, one diagnostic per block."""
    content = {o.line: o for o in index.other if o.kind in ("text", "bullet", "code")}
    if not content:
        return
    numbers = sorted(content)
    blocks: list[list[int]] = []
    for number in numbers:
        if blocks and blocks[-1][-1] == number - 1:
            blocks[-1].append(number)
        else:
            blocks.append([number])
    for block in blocks:
        first, last = block[0], block[-1]
        span = Span(first, 0, last, len(index.lines[last].rstrip("\r")))
        kinds = {content[n].kind for n in block}
        if len(block) == 1 and _LINKISH.search(index.lines[first]):
            message = (
                "not in the entry form `- [Title](file.md) — hook`: the agent writes and reads "
                "index entries in exactly that form, and memdir cannot tell which memory this "
                "line is for"
            )
        else:
            what = "code block" if kinds == {"code"} else "memory content"
            size = _count(len(block), "line", "lines")
            message = (
                f"{what} in the index ({size}): MEMORY.md should hold "
                "only `- [Title](file.md) — hook` entries; this text is loaded into every "
                "session against the cap, yet the agent cannot find, update or recall it as a "
                "memory. Move it into a topic file"
            )
        yield ctx.diag("MEM004", ctx.index_path, C.INDEX_FILENAME, span, message)


def check_index_links(
    index: Index, ctx: LintContext, links: Sequence[tuple[IndexEntry, str | None]] | None = None
) -> Iterator[Diagnostic]:
    """MEM006 duplicate entries and MEM007 links that are not topic files of this dir.

    ``links``: :meth:`DirectoryMemo.links` of this index, when the caller has it already.
    """
    if links is None:
        links = DirectoryMemo().links(index)
    seen: dict[str, IndexEntry] = {}
    for entry, key in links:
        if key is None:
            problem = link_problem(entry)
            assert problem is not None
            if ctx.on("MEM007"):
                yield ctx.diag(
                    "MEM007", ctx.index_path, C.INDEX_FILENAME, entry.target_span, problem
                )
            continue
        first = seen.get(key)
        if first is None:
            seen[key] = entry
            continue
        if not ctx.on("MEM006"):
            continue
        yield ctx.diag(
            "MEM006",
            ctx.index_path,
            C.INDEX_FILENAME,
            Span(entry.line, 0, entry.line, len(entry.raw.rstrip("\r"))),
            f"duplicate entry: {key} is already linked on line {first.line + 1}; each copy "
            "spends load budget, and two hooks for one file read like two memories",
            plan.remove_duplicate(index, entry, first, key),
        )


def check_index(
    index: Index, ctx: LintContext, links: Sequence[tuple[IndexEntry, str | None]] | None = None
) -> list[Diagnostic]:
    """Every rule that reads MEMORY.md alone (plus secrets and encoding of its text).

    ``links``: :meth:`DirectoryMemo.links` of this index, which the directory rules use too.
    """
    found: list[Diagnostic] = []
    if ctx.on("MEM001"):
        found.extend(check_line_length(index, ctx))
    found.extend(check_load_cap(index, ctx))
    if ctx.on("MEM004"):
        found.extend(check_content_in_index(index, ctx))
    found.extend(check_index_links(index, ctx, links))
    for problem in index.problems:
        found.extend(_problem_diagnostics(problem, ctx, ctx.index_path, C.INDEX_FILENAME))
    if ctx.on("MEM110"):
        secrets = find_secrets(index.text)
        found.extend(secret_diagnostics(index.text, secrets, ctx, ctx.index_path, C.INDEX_FILENAME))
    return found


# --- topic rules -----------------------------------------------------------------------------


def _problem_diagnostics(
    problem: Problem, ctx: LintContext, path: Path, rel: str
) -> Iterator[Diagnostic]:
    """Read problems of the core that are not frontmatter-specific (encoding, binary, access)."""
    kind = problem.kind
    if kind == "not-utf8" and ctx.on("MEM112"):
        yield ctx.diag(
            "MEM112",
            path,
            rel,
            problem.span,
            f"{problem.message.split(';')[0]}: the agent reads undecodable bytes as U+FFFD, so "
            "this text reaches the model garbled; re-save the file as UTF-8",
        )
    elif kind == "binary" and ctx.on("MEM113"):
        yield ctx.diag(
            "MEM113",
            path,
            rel,
            problem.span,
            "binary file (contains NUL bytes) named like a memory: the scan lists it, but it "
            "holds nothing the agent can use; remove or rename it",
        )
    elif kind == "unreadable" and ctx.on("MEM113"):
        yield ctx.diag(
            "MEM113",
            path,
            rel,
            problem.span,
            f"{problem.message}: the agent cannot read this memory either",
        )


_TYPE_SYNONYMS: dict[str, str] = {
    "preference": "user",
    "preferences": "user",
    "profile": "user",
    "role": "user",
    "person": "user",
    "correction": "feedback",
    "corrections": "feedback",
    "guidance": "feedback",
    "style": "feedback",
    "workflow": "feedback",
    "decision": "project",
    "decisions": "project",
    "background": "project",
    "context": "project",
    "note": "project",
    "notes": "project",
    "link": "reference",
    "links": "reference",
    "docs": "reference",
    "dashboard": "reference",
    "external": "reference",
    "resource": "reference",
}


def suggest_type(raw: str) -> str | None:
    """The nearest of the four types: case fixed, close spelling, or a common synonym."""
    lowered = raw.strip().lower()
    if lowered in C.MEMORY_TYPES:
        return lowered
    if lowered in _TYPE_SYNONYMS:
        return _TYPE_SYNONYMS[lowered]
    import difflib  # only for an unknown type: lint of a clean dir never needs it

    close = difflib.get_close_matches(lowered, C.MEMORY_TYPES, n=1, cutoff=0.6)
    return close[0] if close else None


_WORD = re.compile(r"[^\W_]+")
_GENERIC_WORDS = frozenset(
    (
        *("note", "notes", "misc", "miscellaneous", "stuff", "things", "thing", "todo", "todos"),
        *("info", "information", "memory", "memories", "general", "various", "random", "tbd"),
        *("important", "remember", "preferences", "preference", "user", "project", "feedback"),
        *("reference", "details", "detail", "context", "background", "summary", "update"),
        *("updates", "file", "see", "n", "a", "na", "wip", "temp", "tmp", "draft", "test"),
    )
)
_STOP_WORDS = frozenset(
    (
        *("the", "a", "an", "and", "or", "of", "to", "for", "in", "on", "at", "by", "with"),
        *("about", "from", "is", "are", "this", "that", "these", "some", "my", "our", "your"),
    )
)


#: East Asian Wide and Fullwidth characters (CJK, kana, hangul, fullwidth forms): each one
#: takes two columns and carries about half a word. A character class, not a per-character
#: unicodedata call: it runs on every description.
_WIDE_CLASS = (
    "[\u1100-\u115f\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf"
    "\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6"
    "\U00020000-\U0003fffd]"
)


@functools.cache
def _wide() -> re.Pattern[str]:
    # Compiled on first use: the class takes milliseconds to compile, ASCII-only dirs never need it.
    return re.compile(_WIDE_CLASS)


#: Where the wide class can match at all: U+1100-U+115F and from U+2E80 on. (Written as the
#: complement: the positive range up to U+10FFFF takes milliseconds to compile.)
_MAYBE_WIDE = re.compile("[^\x00-\u10ff\u1160-\u2e7f]")


def _wide_count(text: str) -> int:
    # Text without such a character (ASCII plus dashes, quotes, accents) has no wide one, and
    # needs no compiled class.
    if text.isascii() or _MAYBE_WIDE.search(text) is None:
        return 0
    return len(_wide().findall(text))


def description_words(text: str) -> tuple[str, ...]:
    """The lowercased words of a description (MEM109 and MEM111 read it in words)."""
    return tuple(_WORD.findall(text.lower()))


def description_problem(description: str, name: str | None, rel_path: str) -> str | None:
    """Why a description is too vague for the selector (MEM109), or None."""
    if "\n" in description:
        return "it spans several lines, but the manifest gives each memory one line"
    ascii_only = description.isascii()
    wide = 0 if ascii_only else _wide_count(description)
    width = len(description) + wide
    if width > DESCRIPTION_MAX_WIDTH:
        return (
            f"{width} characters wide, longer than a manifest line should be "
            f"({DESCRIPTION_MAX_WIDTH}); the selector reads one line per memory"
        )
    words = description_words(description)
    informative = len(words) if ascii_only else sum(map(str.isascii, words)) + wide / 2
    if informative < DESCRIPTION_MIN_WORDS:
        return "too short to say what the memory covers or when it applies"
    # all() stops at the first specific word: cheap for every real description (and most
    # start with one, which is tested before any generator is made).
    first = words[0] if words else ""
    if (first in _GENERIC_WORDS or first in _STOP_WORDS or first.isdigit()) and all(
        w in _GENERIC_WORDS or w in _STOP_WORDS or w.isdigit() for w in words
    ):
        return "too generic: it names a kind of memory, not what this one says"
    normal = " ".join(words)
    # Normalising cannot lengthen a label, so a description longer than the name and the path
    # cannot repeat either: the common case, decided before any path is taken apart.
    if len(normal) > len(rel_path) and (not name or len(normal) > len(name)):
        return None
    stem = posixpath.splitext(posixpath.basename(rel_path))[0]
    for label in (name, stem):
        if label and len(normal) <= len(label) and normal == " ".join(_WORD.findall(label.lower())):
            return "it only repeats the file's name"
    return None


def secret_diagnostics(
    text: str, secrets: list[SecretMatch], ctx: LintContext, path: Path, rel: str
) -> Iterator[Diagnostic]:
    """MEM110 for each of ``secrets`` (from :func:`find_secrets` on ``text``)."""
    for secret in secrets:
        yield ctx.diag(
            "MEM110",
            path,
            rel,
            _offset_span(text, secret.start, secret.end),
            f"likely secret: {secret.kind} ({secret.label}, {secret.end - secret.start} "
            "characters); memories are injected into model context and often synced or "
            "committed, so it leaks to every session and every copy. Remove it and rotate the "
            "credential",
        )


def injection_cut(text: str, size: int) -> tuple[int, int, str] | None:
    """Where path B stops injecting this file: (line, column, reason), or None if it fits."""
    if size <= C.SURFACE_MAX_BYTES and text.count("\n") < C.SURFACE_MAX_LINES:
        return None  # cannot exceed either cap: skip the line-by-line cut
    from memdir.surface import cut_for_injection  # only for files over a cap: keep start-up light

    kept, reason = cut_for_injection(text)
    if reason is None:
        return None
    kept_lines = kept.split("\n")
    lines = text.split("\n", len(kept_lines))
    last = len(kept_lines) - 1
    if len(kept_lines[last]) < len(lines[last]):
        return last, len(kept_lines[last]), reason  # cut inside one giant line
    return len(kept_lines), 0, reason


def _field_span(topic: TopicFile, key: str) -> Span:
    fm = topic.frontmatter
    if fm is not None:
        if key in fm.value_spans and fm.data.get(key) is not None:
            return fm.value_spans[key]
        if key in fm.key_spans:
            return fm.key_spans[key]
        if key == "type" and "metadata.type" in fm.value_spans:
            return fm.value_spans["metadata.type"]
    return Span(0, 0, 0, 3)


def check_topic(topic: TopicFile, ctx: LintContext) -> list[Diagnostic]:
    """Every rule that reads one topic file."""
    found: list[Diagnostic] = []
    path, rel = topic.path, topic.rel_path
    kinds = {p.kind for p in topic.problems}
    for problem in topic.problems:
        found.extend(_problem_diagnostics(problem, ctx, path, rel))
    if kinds & {"binary", "unreadable"}:
        return found
    fm = topic.frontmatter

    if "no-frontmatter" in kinds and ctx.on("MEM101"):
        found.append(
            ctx.diag(
                "MEM101",
                path,
                rel,
                Span(0, 0, 0, len(topic.text.split("\n", 1)[0].rstrip("\r"))),
                "no frontmatter: the prefetch manifest shows this file without type or "
                "description, and the selector (which never sees bodies) has no reason to pick "
                "it; add name, description and type",
                plan.frontmatter_skeleton(topic),
            )
        )

    yaml_errors = [p for p in topic.problems if p.kind == "yaml-error"]
    not_mapping = fm is not None and not fm.data and "bad-field" in kinds
    if ctx.on("MEM102"):
        for problem in yaml_errors:
            found.append(
                ctx.diag(
                    "MEM102",
                    path,
                    rel,
                    problem.span,
                    f"{problem.message}: the agent reads no name, description or type from "
                    "this file",
                )
            )
        if not_mapping:
            problem = next(p for p in topic.problems if p.kind == "bad-field")
            found.append(
                ctx.diag(
                    "MEM102",
                    path,
                    rel,
                    problem.span,
                    f"{problem.message}: the agent reads no name, description or type from it",
                )
            )

    if "unclosed-frontmatter" in kinds and ctx.on("MEM105"):
        found.append(
            ctx.diag(
                "MEM105",
                path,
                rel,
                Span(0, 0, 0, 3),
                "frontmatter opened with --- is never closed: the scan reads no name, "
                "description or type, and the whole file counts as body",
            )
        )
    elif (
        ctx.on("MEM105")
        and fm is not None
        and fm.close_line is not None
        and fm.close_line >= C.SCAN_MAX_LINES
    ):
        found.append(
            ctx.diag(
                "MEM105",
                path,
                rel,
                Span(fm.close_line, 0, fm.close_line, 3),
                f"frontmatter closes on line {fm.close_line + 1}, past the first "
                f"{C.SCAN_MAX_LINES} lines the prefetch scan reads: the scan sees no "
                "description or type for this file. Move notes out of the frontmatter",
            )
        )

    readable = fm is not None and fm.close_line is not None and not yaml_errors
    if readable and not not_mapping:
        assert fm is not None
        bad_fields = {
            key
            for p in topic.problems
            if p.kind == "bad-field"
            for key in ("name", "description", "type")
            if p.message.startswith(f"`{key}`")
        }
        if ctx.on("MEM103"):
            found.extend(_missing_fields(topic, ctx, bad_fields))
        if ctx.on("MEM104") and topic.raw_type and topic.type is None:
            found.append(_unknown_type(topic, ctx))
        if ctx.on("MEM109") and topic.description:
            reason = description_problem(topic.description, topic.name, rel)
            if reason is not None:
                found.append(
                    vague_description(ctx, path, rel, _field_span(topic, "description"), reason)
                )

    if ctx.on("MEM106"):
        cut = injection_cut(topic.text, topic.size)
        if cut is not None:
            found.append(
                not_injected(ctx, path, rel, topic.text, topic.size, cut, "too-large" in kinds)
            )

    if ctx.on("MEM110"):
        found.extend(secret_diagnostics(topic.text, find_secrets(topic.text), ctx, path, rel))
    return found


def vague_description(
    ctx: LintContext, path: Path, rel: str, span: Span, reason: str
) -> Diagnostic:
    """MEM109 at the description's value, for ``reason`` from :func:`description_problem`."""
    return ctx.diag(
        "MEM109",
        path,
        rel,
        span,
        f"vague description: {reason}. The selector chooses memories from their one-line "
        "descriptions alone, never the body; say what this memory covers and when it applies",
    )


def not_injected(
    ctx: LintContext,
    path: Path,
    rel: str,
    text: str,
    size: int,
    cut: tuple[int, int, str],
    too_large: bool = False,
) -> Diagnostic:
    """MEM106 at ``cut`` (from :func:`injection_cut`): where path B stops injecting the file."""
    line, col, reason = cut
    lines = text.split("\n", line + 1)
    end = len(lines[line].rstrip("\r")) if line < len(lines) else col
    note = ""
    if too_large:
        note = f" (the file is {size:,} bytes; lint read the first {MAX_PARSE_BYTES:,})"
    return ctx.diag(
        "MEM106",
        path,
        rel,
        Span(line, col, line, max(end, col)),
        f"not injected from here on: path B injects only the first "
        f"{C.SURFACE_MAX_LINES} lines or {C.SURFACE_MAX_BYTES:,} bytes of a memory "
        f"and this file is {reason}; the agent sees the part above this line and a "
        f"note to read the rest itself{note}. Keep the essentials above it or split "
        "the file",
    )


_FIELD_WHY = {
    "description": (
        "the prefetch manifest line shows no description, so the selector cannot tell what "
        "this memory holds and will rarely choose it"
    ),
    "type": (
        "the manifest line has no [type] tag (user, feedback, project or reference), so the "
        "selector cannot tell a preference from a project fact"
    ),
    "name": "`[[name]]` links cannot reach this memory and duplicates cannot be told apart",
}


def _missing_fields(topic: TopicFile, ctx: LintContext, bad: set[str]) -> Iterator[Diagnostic]:
    fm = topic.frontmatter
    assert fm is not None
    values = {"description": topic.description, "type": topic.raw_type, "name": topic.name}
    for key in ("description", "type", "name"):
        if key in bad:
            problem = next(p for p in topic.problems if p.message.startswith(f"`{key}`"))
            yield ctx.diag(
                "MEM103",
                topic.path,
                topic.rel_path,
                problem.span,
                f"{problem.message}, so the agent reads no {key}: {_FIELD_WHY[key]}",
            )
            continue
        if values[key]:
            continue
        present = key in fm.data or (key == "type" and "metadata.type" in fm.key_spans)
        state = "empty" if present else "missing"
        yield ctx.diag(
            "MEM103",
            topic.path,
            topic.rel_path,
            _field_span(topic, key),
            f"{state} `{key}`: {_FIELD_WHY[key]}",
        )


def _unknown_type(topic: TopicFile, ctx: LintContext) -> Diagnostic:
    raw = topic.raw_type or ""
    fm = topic.frontmatter
    assert fm is not None
    key = "type" if fm.data.get("type") is not None else "metadata.type"
    span = fm.value_spans.get(key, _field_span(topic, "type"))
    suggestion = suggest_type(raw)
    hint = f"; did you mean `{suggestion}`?" if suggestion else ""
    fix = plan.set_type(topic, suggestion) if suggestion is not None else None
    return ctx.diag(
        "MEM104",
        topic.path,
        topic.rel_path,
        span,
        f"unknown type `{raw}`: the agent accepts only user, feedback, project or reference "
        f"(case matters) and treats anything else as no type, so the manifest shows no "
        f"[type] tag{hint}",
        fix,
    )


# --- directory rules -------------------------------------------------------------------------


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


def _tokens(words: Iterable[str], ascii_only: bool = False) -> frozenset[str]:
    """Content words; runs of a script written without spaces become character bigrams.

    ``ascii_only`` (the words come from an ASCII text) skips the search for such runs.
    """
    if ascii_only:
        return frozenset(words).difference(_STOP_WORDS)
    tokens = set(words)
    tokens -= _STOP_WORDS
    for word in [w for w in tokens if len(w) > 1 and not w.isascii() and _wide().search(w)]:
        tokens.discard(word)
        tokens.update(word[i : i + 2] for i in range(len(word) - 1))
    return frozenset(tokens)


def prepare_description(text: str) -> tuple[str, frozenset[str]]:
    """A description as :func:`near_duplicate_pairs` compares it: normalised text and tokens."""
    words = description_words(text)
    joined = " ".join(words)
    # (The words of "a — b" are ASCII though the text is not: test the words.)
    return joined, _tokens(words, joined.isascii())


def near_duplicate_pairs(
    descriptions: Mapping[str, str], memo: dict[str, tuple[str, frozenset[str]]] | None = None
) -> list[tuple[str, str, float]]:
    """Pairs of files whose descriptions are near-identical, with their similarity.

    Near-identical: both have at least :data:`DESCRIPTION_MIN_WORDS` content words, the tokens
    overlap by at least :data:`DUPLICATE_JACCARD` (Jaccard)
    and difflib's ratio of the normalised texts is at least :data:`DUPLICATE_RATIO`. Prefix
    filtering finds the candidates without comparing every pair: with each token set ordered
    rarest first, two sets that similar always share one of their first few tokens, so only
    those first tokens are indexed and probed. Tokens in more than
    :data:`DUPLICATE_MAX_POSTINGS` descriptions are too common to tell anything apart and are
    not probed, which bounds the work on directories of near-templated descriptions.
    """
    normal: dict[str, str] = {}
    tokens: dict[str, frozenset[str]] = {}
    seen: dict[str, tuple[str, frozenset[str]]] = {}
    for rel, text in descriptions.items():
        prepared = memo.get(text) if memo is not None else None
        if prepared is None:
            prepared = prepare_description(text)
        seen[text] = prepared
        # "notes" twice is two vague descriptions (MEM109), not one memory saved twice.
        if len(prepared[1]) >= DESCRIPTION_MIN_WORDS:
            normal[rel], tokens[rel] = prepared
    if memo is not None:
        memo.clear()
        memo.update(seen)
    frequency = Counter(itertools.chain.from_iterable(tokens.values()))
    # One global order, rarest first (ties by text), as prefix filtering requires. Tokens are
    # replaced by their rank, which also orders each description's tokens.
    order = sorted(frequency, key=lambda token: (frequency[token], token))
    rank = {t: i for i, t in enumerate(order)}
    # Tokens of one description only (numbers, names) rank first and can pair it with nothing:
    # they are neither indexed nor probed.
    unique = sum(1 for count in frequency.values() if count == 1)
    postings: dict[int, list[str]] = {}
    sizes: dict[str, int] = {}
    pairs: list[tuple[str, str, float]] = []
    threshold = DUPLICATE_JACCARD
    for rel in sorted(tokens):
        mine = tokens[rel]
        size = sizes[rel] = len(mine)
        ordered = sorted(map(rank.__getitem__, mine))
        keep = size - math.ceil(threshold * size) + 1
        if ordered[keep - 1] < unique:
            continue  # its whole prefix is its own
        candidates: set[str] = set()
        for token in ordered[:keep]:
            if token < unique:
                continue
            posting = postings.get(token)
            if posting is None:
                postings[token] = [rel]
            elif len(posting) <= DUPLICATE_MAX_POSTINGS:
                # (A longer posting is never probed again: it is not extended either.)
                candidates.update(posting)
                posting.append(rel)
        if not candidates:
            continue
        matched: list[str] = []
        for other in candidates:
            theirs = sizes[other]
            # Jaccard >= t needs the sizes within a factor t of each other: a free filter.
            if min(size, theirs) < threshold * max(size, theirs):
                continue
            shared = len(mine & tokens[other])
            if shared >= threshold * (size + theirs - shared):
                matched.append(other)
        for other in sorted(matched):
            import difflib  # reached only by token-similar pairs: rare

            matcher = difflib.SequenceMatcher(None, normal[other], normal[rel], autojunk=False)
            # (The bound from the lengths alone first: it is never below quick_ratio.)
            if matcher.real_quick_ratio() < DUPLICATE_RATIO or matcher.quick_ratio() < (
                DUPLICATE_RATIO
            ):
                continue
            ratio = matcher.ratio()
            if ratio >= DUPLICATE_RATIO:
                pairs.append((other, rel, ratio))
    return pairs


Pairs = list[tuple[str, str, float]]


class DirectoryMemo:
    """What the directory rules can reuse from one run to the next (an incremental state).

    Entries are checked against the very objects they were made from (a summary is replaced,
    never changed, when its file changes), so a stale entry is never used, only not found.
    Each run keeps just what it used, so deleted files do not linger.
    """

    def __init__(self) -> None:
        #: description text -> (normalised text, tokens), for MEM111.
        self.tokens: dict[str, tuple[str, frozenset[str]]] = {}
        self._diagnostics: dict[tuple[str, str], tuple[object, Diagnostic]] = {}
        self._used: dict[tuple[str, str], tuple[object, Diagnostic]] = {}
        self._links_of: Index | None = None
        self._links: list[tuple[IndexEntry, str | None]] = []
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
        """Each entry with its link key (None for a link that is no topic file), per index."""
        if self._links_of is not index:
            self._links = [
                (entry, None if link_problem(entry) is not None else link_key(entry.path))
                for entry in index.entries
            ]
            self._links_of = index
        return self._links

    def get(self, code: str, rel: str, key: object) -> Diagnostic | None:
        cached = self._diagnostics.get((code, rel))
        if cached is not None and cached[0] == key:
            self._used[(code, rel)] = cached
            return cached[1]
        return None

    def put(self, code: str, rel: str, key: object, diagnostic: Diagnostic) -> Diagnostic:
        self._used[(code, rel)] = (key, diagnostic)
        return diagnostic

    def finish(self) -> None:
        self._diagnostics, self._used = self._used, {}


def check_directory(
    index: Index,
    summaries: Mapping[str, TopicSummary],
    skipped: Iterable[Skipped],
    ctx: LintContext,
    memo: DirectoryMemo | None = None,
) -> list[Diagnostic]:
    """MEM005 dangling links, MEM107 orphans, MEM108 the window, MEM111 duplicates, MEM114.

    ``memo`` (optional) lets an incremental caller reuse the diagnostics of unchanged files.
    """
    memo = memo if memo is not None else DirectoryMemo()
    found: list[Diagnostic] = []
    listed = [s for s in summaries.values() if s.listed]
    usable = [s for s in listed if s.usable]
    pairs = (
        memo.duplicate_pairs({s.rel_path: s.description for s in usable if s.description})
        if ctx.on("MEM111")
        else None
    )
    linked: set[str] = set()
    for entry, key in memo.links(index):
        if key is None:
            continue
        linked.add(key)
        if ctx.on("MEM005") and key not in summaries and not (ctx.root / key).is_file():
            found.append(_dangling(index, entry, key, ctx))

    if ctx.on("MEM107"):
        # Where the fixes insert entries: every orphan's fix depends on it.
        insert_at = (plan.entry_insertion(index, "").span, index.exists)
        for summary in usable:
            if summary.rel_path in linked:
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
            found.append(diagnostic)

    if ctx.on("MEM108") and len(listed) > C.SCAN_MAX_FILES:
        # Membership is all that matters here (lint sorts its output): take the newest 200.
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
            found.append(diagnostic)

    if pairs is not None:
        found.extend(_duplicates(usable, ctx, pairs))

    if ctx.on("MEM114"):
        for skip in skipped:
            found.append(
                ctx.diag(
                    "MEM114",
                    ctx.root / skip.rel_path,
                    skip.rel_path,
                    Span(0, 0, 0, 0),
                    f"{skip.reason}: memdir does not follow it, and whatever it points to is "
                    "not a memory of this directory (a link out could expose or overwrite "
                    "unrelated files)",
                )
            )
    memo.finish()
    return found


def _dangling(index: Index, entry: IndexEntry, key: str, ctx: LintContext) -> Diagnostic:
    return ctx.diag(
        "MEM005",
        ctx.index_path,
        C.INDEX_FILENAME,
        entry.target_span,
        f"dangling link: {key} does not exist; the agent sees this hook every session, but "
        "reading the memory fails. Write the file, fix the link or remove the entry",
        plan.create_missing(index, entry, key),
    )


def _duplicates(
    listed: Sequence[TopicSummary], ctx: LintContext, pairs: Pairs
) -> Iterator[Diagnostic]:
    by_name: dict[str, list[TopicSummary]] = {}
    for summary in listed:
        if summary.name:
            by_name.setdefault(summary.name, []).append(summary)
    for name, group in by_name.items():
        if len(group) < 2:
            continue
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
    by_rel = {s.rel_path: s for s in listed}
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


# --- topic summaries -------------------------------------------------------------------------


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


def summarize(topic: TopicFile, root: Path) -> TopicSummary:
    fm = topic.frontmatter
    spans = fm.value_spans if fm is not None else {}
    head = Span(0, 0, 0, len(topic.text.split("\n", 1)[0].rstrip("\r")))
    kinds = {p.kind for p in topic.problems}
    return TopicSummary(
        root=root,
        rel_path=topic.rel_path,
        mtime=topic.mtime,
        name=topic.name or None,
        description=topic.description or None,
        title=title_of(topic),
        name_span=spans.get("name", head),
        description_span=spans.get("description", head),
        head_span=head,
        listed=not ("unreadable" in kinds and topic.mtime == 0.0),
        usable=not kinds & {"unreadable", "binary"},
    )
