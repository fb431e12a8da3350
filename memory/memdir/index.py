"""MEMORY.md: parsing index entries, rendering them, and the load cap of path A.

The load cap is reproduced exactly (spec section 3): frontmatter and block-level HTML comments are
stripped, the rest is trimmed, cut to 200 lines, then cut at the last newline at or below 25,000
UTF-16 code units, and a warning line follows. Every loaded line is mapped back to its line in
the file, so memdir can say precisely which entries the agent never sees.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from memdir import constants as C
from memdir.model import IndexEntry, IndexLine, Problem, Span
from memdir.textio import read_text, utf16_len, utf16_prefix_index

#: An entry line; ``lead`` is the separator before the hook with the blanks around it, when the
#: rest of the line starts with one. Title and target are runs of plain characters, escapes and
#: bracketed (parenthesised) parts; each run is possessive because the first character decides
#: which part comes next, so giving back never helps.
_ENTRY = re.compile(
    r"^(?P<indent>[ \t]*)(?P<bullet>[-*+])[ \t]+"
    r"\[(?P<title>(?:[^\\\[\]]++|\\.|\[(?:[^\\\[\]]++|\\.)*+\])*+)\]"
    r"\((?P<target><[^<>\n]*>|(?:[^()\s\\]++|\\.|\([^()\s]*+\))++)(?:[ \t]+\"[^\"]*\")?\)"
    r"(?P<rest>(?P<lead>[ \t]*(?P<sep>—|–|--|-|:)(?=[ \t]|$)[ \t]*)?.*)$"
)
_HEADING = re.compile(r"^ {0,3}#{1,6}(?:[ \t]|$)")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")
#: A list item marker (``-``, ``*``, ``+``, ``1.``, ``1)``) with its indent and spacing.
BULLET = re.compile(r"^[ \t]*(?:[-*+]|\d+[.)])[ \t]+")
_FM_BOUNDARY = re.compile(r"^-{3,}\s*$")
_COMMENT_OPEN = re.compile(r"^ {0,3}<!--")
_COMMENT_SPAN = re.compile(r"<!--.*?-->", re.DOTALL)
_TITLE_ESCAPE = re.compile(r"\\(.)")
#: Characters that would break a Markdown link target; everything else (incl. CJK) stays readable.
_TARGET_UNSAFE = re.compile(r"[%\s()<>\[\]\\]")


def normalize_target(target: str) -> str:
    """A link target as a ``/``-separated path relative to the memory dir."""
    if target.startswith("<") and target.endswith(">"):
        target = target[1:-1]
    target = target.split("#", 1)[0]
    # Raw backslashes are Windows separators; an encoded %5C is a literal character.
    # (Tested first: the substitution costs more than the rest and most targets have none.)
    if "\\" in target:
        target = _TITLE_ESCAPE.sub(r"\1", target).replace("\\", "/")
    if "%" in target:
        # Imported here: most targets are plain, and urllib.parse costs every lint start.
        from urllib.parse import unquote

        target = unquote(target)
    while target.startswith("./"):
        target = target[2:]
    return target


def parse_entry(line: str, number: int) -> IndexEntry | None:
    """Parse one line as an index entry, or None when it is not one."""
    match = _ENTRY.match(line)
    if match is None:
        return None
    _indent, bullet, raw_title, target, rest, _lead, separator = match.groups()
    if separator is not None:
        hook_start = match.end("lead")
    else:
        separator = ""
        hook_start = match.start("rest") + (len(rest) - len(rest.lstrip()))
    hook = line[hook_start:].rstrip()
    title_start, title_end = match.span("title")
    target_start, target_end = match.span("target")
    return IndexEntry(
        number,
        line,
        bullet,
        _TITLE_ESCAPE.sub(r"\1", raw_title) if "\\" in raw_title else raw_title,
        target,
        normalize_target(target),
        separator,
        hook,
        Span(number, title_start, number, title_end),
        Span(number, target_start, number, target_end),
        Span(number, hook_start, number, hook_start + len(hook)),
    )


def encode_target(path: str) -> str:
    """URL-encode only what a Markdown link target cannot hold."""
    return _TARGET_UNSAFE.sub(lambda m: "".join(f"%{b:02X}" for b in m.group().encode()), path)


def render_entry(title: str, path: str, hook: str = "", bullet: str = "-") -> str:
    """``- [Title](file.md) — hook``, the line format the agent is told to write."""
    escaped = title.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")
    line = f"{bullet} [{escaped}]({encode_target(path)})"
    return f"{line} — {hook}" if hook else line


def shorten_units(text: str, units: int) -> str:
    """``text`` on one line, cut at a word boundary to at most ``units`` UTF-16 units, ending
    in "…" when cut."""
    text = " ".join(text.split())
    if utf16_len(text) <= units:
        return text
    if units <= 1:
        return ""
    cut = text[: utf16_prefix_index(text, units - 1)]
    space = cut.rfind(" ")
    if space > len(cut) // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:—–-") + "…"


def fit_entry(title: str, path: str, hook: str, limit: int, bullet: str = "-") -> str:
    """``- [Title](file.md) — hook`` within ``limit`` UTF-16 units (as the agent counts) when
    at all possible: the one way memdir writes an index line (lint fixes, editor actions, the
    memory tool).

    The hook is shortened first (it must keep a few words to be worth having), then dropped,
    then the title is shortened; a path too long for the limit is kept whole, since a link
    that does not resolve is worse than a long line.
    """
    hook = " ".join(hook.split())
    title = " ".join(title.split())
    line = render_entry(title, path, hook, bullet)
    if utf16_len(line) <= limit:
        return line
    room = limit - utf16_len(render_entry(title, path, "", bullet)) - len(" — ")
    if room >= 12 and hook:
        return render_entry(title, path, shorten_units(hook, room), bullet)
    room = limit - utf16_len(render_entry("", path, "", bullet))
    short_title = shorten_units(title, room) if room >= 8 else ""
    return render_entry(short_title or title[:8], path, "", bullet)


#: How close MEMORY.md is to path A's load cap.
LoadLevel = Literal["within", "near", "over"]


@dataclass(frozen=True)
class IndexLoad:
    """What path A loads of MEMORY.md, and what it leaves out."""

    #: Exactly the text injected (the warning line included when the cap was hit).
    text: str
    #: Lines and UTF-16 units of the stripped, trimmed content, before the cap.
    line_count: int
    char_count: int
    #: Lines and UTF-16 units actually loaded (without the warning).
    loaded_lines: int
    loaded_chars: int
    line_truncated: bool
    char_truncated: bool
    #: ``None`` when nothing was cut, else the reason shown in the warning.
    reason: str | None
    warning: str | None
    #: 0-based file line of the first content line not loaded (None when all loaded).
    first_cut_line: int | None
    #: File line numbers of every loaded content line, in order.
    loaded_source_lines: tuple[int, ...]

    @property
    def truncated(self) -> bool:
        return self.reason is not None

    @property
    def level(self) -> LoadLevel:
        """Past the cap, near it, or within it.

        Near follows the agent's own nudge (rewrite the index under 140 lines) and 90% of the
        character cap: MEM003's threshold, and the editor's status bar.
        """
        if self.truncated:
            return "over"
        near_chars = int(C.INDEX_MAX_CHARS * C.INDEX_NEAR_CAP_RATIO)
        if self.line_count > C.INDEX_REWRITE_TARGET_LINES or self.char_count > near_chars:
            return "near"
        return "within"


@dataclass(frozen=True)
class Index:
    path: Path
    text: str
    lines: tuple[str, ...]
    entries: tuple[IndexEntry, ...]
    other: tuple[IndexLine, ...]
    load: IndexLoad
    problems: tuple[Problem, ...] = ()
    #: Entries whose line is not (fully) loaded by path A.
    cut_entries: tuple[IndexEntry, ...] = field(default_factory=tuple)
    exists: bool = True


def format_size(units: int) -> str:
    """The agent's file-size wording (1 KB = 1,024), e.g. ``24.4KB``."""
    kb = units / 1024
    if kb < 1:
        return f"{units} bytes"
    if kb < 1024:
        return f"{kb:.1f}".removesuffix(".0") + "KB"
    return f"{kb / 1024:.1f}".removesuffix(".0") + "MB"


def _strip_for_load(lines: list[str]) -> list[tuple[int, str]]:
    """Drop frontmatter and block-level HTML comments; keep each surviving line's number."""
    kept: list[tuple[int, str]] = []
    start = 0
    if lines and _FM_BOUNDARY.match(lines[0]):
        close = next((i for i in range(1, len(lines)) if _FM_BOUNDARY.match(lines[i])), None)
        if close is not None:
            start = close + 1
    in_fence = False
    number = start
    while number < len(lines):
        line = lines[number]
        if _FENCE.match(line):
            in_fence = not in_fence
        if not in_fence and _COMMENT_OPEN.match(line):
            end = number
            while end < len(lines) and "-->" not in lines[end]:
                end += 1
            if end < len(lines):
                block = "\n".join(lines[number : end + 1])
                residue = _COMMENT_SPAN.sub("", block)
                if residue.strip():
                    # Text after the comment on the same lines stays, as the agent keeps it.
                    for offset, rest in enumerate(residue.split("\n")):
                        if rest.strip():
                            kept.append((number + offset, rest))
                number = end + 1
                continue
        kept.append((number, line))
        number += 1
    return kept


def load_cap(
    text: str,
    max_lines: int = C.INDEX_MAX_LINES,
    max_chars: int = C.INDEX_MAX_CHARS,
) -> IndexLoad:
    """Apply path A's load cap to the text of MEMORY.md."""
    kept = _strip_for_load(text.split("\n"))
    # Trim like JavaScript's String.prototype.trim: whitespace (incl. newlines) at both ends.
    while kept and not kept[0][1].strip():
        kept.pop(0)
    while kept and not kept[-1][1].strip():
        kept.pop()
    if kept:
        kept[0] = (kept[0][0], kept[0][1].lstrip())
        kept[-1] = (kept[-1][0], kept[-1][1].rstrip())
    content_lines = [line for _, line in kept]
    trimmed = "\n".join(content_lines)
    line_count = len(content_lines) if trimmed else 0
    char_count = utf16_len(trimmed)
    line_truncated = line_count > max_lines
    char_truncated = char_count > max_chars
    if not line_truncated and not char_truncated:
        return IndexLoad(
            trimmed,
            line_count,
            char_count,
            line_count,
            char_count,
            False,
            False,
            None,
            None,
            None,
            tuple(n for n, _ in kept),
        )

    loaded = content_lines[:max_lines] if line_truncated else content_lines
    loaded_text = "\n".join(loaded)
    partial_last = False
    if utf16_len(loaded_text) > max_chars:
        # lastIndexOf('\n', max_chars): the last newline at a UTF-16 offset <= max_chars.
        offset = 0
        cut_line = None
        for number, line in enumerate(loaded[:-1]):
            offset += utf16_len(line)
            if offset > max_chars:
                break
            cut_line = number
            offset += 1
        if cut_line is not None:
            loaded = loaded[: cut_line + 1]
        else:
            head = loaded_text[: utf16_prefix_index(loaded_text, max_chars)]
            loaded = head.split("\n")
            partial_last = True
        loaded_text = "\n".join(loaded)

    if char_truncated and not line_truncated:
        reason = (
            f"{format_size(char_count)} (limit: {format_size(max_chars)})"
            " — index entries are too long"
        )
    elif line_truncated and not char_truncated:
        reason = f"{line_count} lines (limit: {max_lines})"
    else:
        reason = f"{line_count} lines and {format_size(char_count)}"
    warning = C.INDEX_WARNING_TEMPLATE.format(reason=reason)
    full_lines = len(loaded) - (1 if partial_last else 0)
    sources = tuple(n for n, _ in kept[:full_lines])
    first_cut = kept[full_lines][0] if full_lines < len(kept) else None
    return IndexLoad(
        text=f"{loaded_text}\n\n{warning}",
        line_count=line_count,
        char_count=char_count,
        loaded_lines=len(loaded),
        loaded_chars=utf16_len(loaded_text),
        line_truncated=line_truncated,
        char_truncated=char_truncated,
        reason=reason,
        warning=warning,
        first_cut_line=first_cut,
        loaded_source_lines=sources,
    )


def classify_lines(lines: list[str]) -> tuple[list[IndexEntry], list[IndexLine]]:
    entries: list[IndexEntry] = []
    other: list[IndexLine] = []
    in_fence = False
    in_comment = False
    fm_close: int | None = None
    if lines and _FM_BOUNDARY.match(lines[0]):
        fm_close = next((i for i in range(1, len(lines)) if _FM_BOUNDARY.match(lines[i])), None)
    for number, line in enumerate(lines):
        if fm_close is not None and number <= fm_close:
            other.append(IndexLine(number, line, "frontmatter"))
            continue
        if in_comment or (not in_fence and _COMMENT_OPEN.match(line)):
            in_comment = "-->" not in line[line.find("<!--") + 4 if not in_comment else 0 :]
            other.append(IndexLine(number, line, "comment"))
            continue
        if _FENCE.match(line):
            in_fence = not in_fence
            other.append(IndexLine(number, line, "code"))
            continue
        if in_fence:
            other.append(IndexLine(number, line, "code"))
            continue
        kind = _line_kind(line)
        if kind in ("bullet", "text"):  # a blank line or a heading is never an entry
            entry = parse_entry(line, number)
            if entry is not None:
                entries.append(entry)
                continue
        other.append(IndexLine(number, line, kind))
    return entries, other


def _line_kind(line: str) -> str:
    """What a line that is no entry is, outside frontmatter, fences and comments."""
    if not line.strip():
        return "blank"
    if _HEADING.match(line):
        return "heading"
    return "bullet" if BULLET.match(line) else "text"


def parse_index(text: str, path: Path | None = None, problems: tuple[Problem, ...] = ()) -> Index:
    """Parse the text of MEMORY.md: entries, other lines, and what path A loads of it."""
    lines = text.split("\n")
    entries, other = classify_lines(lines)
    load = load_cap(text)
    loaded = set(load.loaded_source_lines)
    cut = tuple(e for e in entries if e.line not in loaded) if load.truncated else ()
    return Index(
        path=path or Path(C.INDEX_FILENAME),
        text=text,
        lines=tuple(lines),
        entries=tuple(entries),
        other=tuple(other),
        load=load,
        problems=problems,
        cut_entries=cut,
    )


def load_index(memory_dir: Path) -> Index:
    """Read ``MEMORY.md`` of a memory dir; a missing index is an empty one (``exists=False``)."""
    path = memory_dir / C.INDEX_FILENAME
    if not path.exists():
        index = parse_index("", path)
        return Index(index.path, "", index.lines, (), index.other, index.load, (), (), exists=False)
    result = read_text(path)
    return parse_index(result.text, path, result.problems)
