"""MEMORY.md: parsing index entries, rendering them, and the load cap of path A.

The load cap is reproduced exactly (spec section 3): frontmatter and block-level HTML comments are
stripped, the rest is trimmed, cut to 200 lines, then cut at the last newline at or below 25,000
UTF-16 code units, and a warning line follows. Every loaded line is mapped back to its line in
the file, so memdir can say precisely which entries the agent never sees.
"""

from __future__ import annotations

import re
import sys
from bisect import bisect_left
from dataclasses import dataclass, field
from operator import attrgetter
from pathlib import Path
from typing import Literal

from memdir import constants as C
from memdir.agent.sanitize import for_model
from memdir.agent.topic import JS_SPACE as _JS_SPACE
from memdir.agent.topic import agent_frontmatter, wiki_names
from memdir.model import TITLE_ESCAPE, IndexEntry, IndexLine, Problem
from memdir.target import DEFAULT_TARGET, Target
from memdir.textio import decode_bytes, read_text, utf8_len, utf16_len, utf16_prefix_index

#: An entry line; ``lead`` is the separator before the hook with the blanks around it, when the
#: rest of the line starts with one. Title and target are runs of plain characters, escapes and
#: bracketed (parenthesised) parts; each run is possessive because the first character decides
#: which part comes next, so giving back never helps. Brackets in code in a title are the
#: title's (``[`[[id]]` links](links.md)``), and a link set in bold
#: (``- **[Title](file.md)** — hook``) is an entry all the same.
_ENTRY = re.compile(
    r"^(?P<indent>[ \t]*)(?P<bullet>[-*+]|\d{1,9}[.)])[ \t]+(?:\*\*)?"
    r"\[(?P<title>(?:[^\\\[\]`]++|`(?:[^`\n\]]|\](?!\())*+`|`|\\.|\[(?:[^\\\[\]]++|\\.)*+\])*+)\]"
    r"\((?P<target><[^<>\n]*>|(?:[^()\s\\]++|\\.|\([^()\s]*+\))++)(?:[ \t]+\"[^\"]*\")?\)(?:\*\*)?"
    r"(?P<rest>(?P<lead>[ \t]*(?P<sep>—|–|--|-|:)(?=[ \t]|$)[ \t]*)?.*)$"
)
_HEADING = re.compile(r"^ {0,3}#{1,6}(?:[ \t]|$)")
#: How nearly every entry line starts (a numbered entry, ``1. [Title](file.md)``, is read too).
_ENTRY_STARTS = ("- [", "* [", "+ [")
#: A Markdown link anywhere on a line (a table cell, prose): the title and the target, with the
#: target grammar of :data:`_ENTRY`.
_LINK = re.compile(
    r"\[(?P<title>(?:[^\\\[\]`]++|`(?:[^`\n\]]|\](?!\())*+`|`|\\.|\[(?:[^\\\[\]]++|\\.)*+\])*+)\]"
    r"\((?P<target><[^<>\n]*>|(?:[^()\s\\]++|\\.|\([^()\s]*+\))++)(?:[ \t]+\"[^\"]*\")?\)"
)
#: A file named in code form, ``notes.md`` in backticks: the model reads the name as a pointer.
_CODE_NAME = re.compile(r"`(?:\./)?([^`\s]+\.md)(?:#[^`]*)?`")
#: A file named plainly in a sentence or heading (``→ reference_queues.md``), not in a link, a
#: URL or a longer path: the model reads the name as a pointer too.
_BARE_NAME = re.compile(r"(?<![\w\-./\\\[(`<:])((?:[\w\-]+/)*[\w\-][\w.\-]*\.md)(?![\w(\]`>/])")
#: A word in code form (`` `deploy_notes` ``): a memory named by its file name without ``.md``
#: or by its ``name``, as ``[[name]]`` does (matched against the files by MEM107).
_CODE_WORD = re.compile(r"`([^\W_][\w\-]{2,80})`")
#: A file named in brackets with no link target, ``[notes.md]``: a link half written, whose
#: name the model reads all the same.
_BRACKET_NAME = re.compile(r"(?<![\[!])\[(?:\./)?([^\[\]\s`]+\.md)\](?![(\[])")
#: A list item that points at a file in code form or by a ``[[name]]`` link instead of a
#: Markdown link, e.g. ``- `notes/deploy.md` — how to deploy``, ``- Guide: `~/guides/x.md` — …``
#: or ``- [[deploy]] — how to deploy``: a short label may come first, a hook after. (A folder in
#: code form is not one: in real indexes such lines describe the project's layout.)
_POINTER = re.compile(
    r"^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+(?:[^`]{0,40}?[:\uff1a][ \t]*)?"
    r"(?:`[^`]+\.md`|\[\[[^\[\]\n]+\]\])"
    r"[ \t]*(?:(?:—|–|--|-|:)(?:[ \t]|$).*)?$"
)
#: A list item that is an entry but for its form: one opening with a file named in brackets and
#: no link target (``- [notes.md] how to deploy``), or an entry marked with a symbol before its
#: link (``- ⭐ [Deploys](deploys.md) — hook``). The model reads the file's name in both.
_ENTRY_LIKE = re.compile(
    r"^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+"
    r"(?:\[(?:\./)?[^\[\]\s`]+\.md\](?![(\[])"
    r"|[^\w\s\[\]()`*_~<>|#\\]{1,3}[ \t]*\[[^\[\]\n]+\]\([^()\s]+\.md(?:#[^()\s]*)?\))"
)
#: A line that is only bold text, ``**Latest reports:**``: a label heading the lines below it.
_LABEL = re.compile(r"^ {0,3}(\*\*|__)(?:(?!\1).)+\1[ \t]*[:\uff1a]?[ \t]*$")
#: A table row (or its delimiter row), e.g. ``| [Title](file.md) | hook |``.
_TABLE_ROW = re.compile(r"^[ \t]*\|")
#: A thematic break, ``---``, ``***`` or ``___``: structure, never content.
_RULE = re.compile(r"^ {0,3}([-*_])[ \t]*(?:\1[ \t]*){2,}$")
#: A fenced code block's opening or closing line; the group is the fence (a closing one is at
#: least as long, of the same character). :class:`Fences` tracks it. Any indent: a fence nested
#: in a list item is indented as deep as the item's text.
FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})")
#: A list item marker (``-``, ``*``, ``+``, ``1.``, ``1)``) with its indent and spacing.
BULLET = re.compile(r"^[ \t]*(?:[-*+]|\d+[.)])[ \t]+")
_FM_BOUNDARY = re.compile(r"^-{3,}\s*$")
_COMMENT_OPEN = re.compile(r"^ {0,3}<!--")
_COMMENT_SPAN = re.compile(r"<!--.*?-->", re.DOTALL)
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
        target = TITLE_ESCAPE.sub(r"\1", target).replace("\\", "/")
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
    _indent, bullet, _title, target, rest, _lead, separator = match.groups()
    # (Groups by number: quicker than by name, for every line of the index.)
    if separator is not None:
        hook_start = match.end(6)  # lead
    else:
        separator = ""
        hook_start = match.start(5) + (len(rest) - len(rest.lstrip()))  # rest
    hook_end = max(hook_start, len(line.rstrip()))
    title_start, title_end = match.span(3)
    target_start, target_end = match.span(4)
    return IndexEntry(
        number,
        line,
        bullet,
        # Interned: the same object as the directory's file keys, not a copy per entry.
        sys.intern(normalize_target(target)),
        sys.intern(separator),
        title_start,
        title_end,
        target_start,
        target_end,
        hook_start,
        hook_end,
    )


def encode_target(path: str) -> str:
    """URL-encode only what a Markdown link target cannot hold."""
    return _TARGET_UNSAFE.sub(
        lambda m: "".join(f"%{b:02X}" for b in m.group().encode("utf-8", "surrogatepass")), path
    )


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


_KEBAB = re.compile(r"^[a-z0-9]+(?:[-_][a-z0-9]+)*$")


def topic_title(name: str | None, rel: str) -> str:
    """The index title memdir gives a memory: its ``name``, read as words when it is a kebab
    slug, else its file name as words."""
    if name and name.strip():
        name = " ".join(name.split())
        if not _KEBAB.match(name):
            return name
        words = " ".join(re.split(r"[-_]", name))
        return words[:1].upper() + words[1:]
    stem = rel.rpartition("/")[2].removesuffix(".md")
    words = " ".join(re.split(r"[-_\s]+", stem)).strip() or stem
    return words[:1].upper() + words[1:]


def generated_entry(
    name: str | None, description: str | None, rel: str, limit: int, bullet: str = "-"
) -> str:
    """The index line memdir writes for a memory with this ``name`` and ``description``."""
    return fit_entry(topic_title(name, rel), rel, description or "", limit, bullet)


def is_generated(
    entry: IndexEntry, name: str | None, description: str | None, rel: str, limit: int
) -> bool:
    """Whether ``entry`` is the line memdir would write for this frontmatter: how memdir knows
    a line is its own (no marker in MEMORY.md), so that it rewrites only its own lines."""
    return entry.raw.strip() == generated_entry(name, description, rel, limit, entry.bullet)


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
    #: The line opening a fenced block or HTML comment left open at the end of the text: a line
    #: appended after it would be hidden in it (not an entry), so new entries go before it.
    open_block: int | None = None
    #: Links to ``.md`` files written outside entry lines (table cells, prose, headings), as
    #: entries without bullet or hook: the model follows a link wherever the index has it.
    references: tuple[IndexEntry, ...] = ()
    #: ``.md`` paths the index names outside links and code blocks: in code form
    #: (`` `notes.md` ``), in brackets (``[notes.md]``) or plainly (``see notes.md``).
    named: tuple[str, ...] = ()
    #: Names the index links as ``[[name]]``, outside code blocks: a memory's ``name`` or its
    #: file name without ``.md``, as the agent links memories in topic files.
    wiki_named: tuple[str, ...] = ()
    #: Words in code form (`` `deploy_notes` ``), outside code blocks: an index may name a
    #: memory by its file name without ``.md`` or by its ``name``, as ``[[name]]`` does.
    code_words: tuple[str, ...] = ()


def _to_fixed_1(value: float) -> str:
    """JavaScript's ``toFixed(1)``: ties round up (Python's format rounds them to even)."""
    from decimal import ROUND_HALF_UP, Decimal  # only indexes past the cap are sized

    return str(Decimal(value).quantize(Decimal("0.1"), ROUND_HALF_UP)).removesuffix(".0")


def format_size(units: int) -> str:
    """The agent's file-size wording (1 KB = 1,024), e.g. ``24.4KB``."""
    kb = units / 1024
    if kb < 1:
        return f"{units} bytes"
    if kb < 1024:
        return _to_fixed_1(kb) + "KB"
    return _to_fixed_1(kb / 1024) + "MB"


#: ``String.prototype.trim``'s set: JavaScript's ``\s`` (the agent is JavaScript), the
#: characters of :data:`memdir.agent.topic.JS_SPACE` spelled out for ``str.strip``.
_JS_SPACE_CHARS = (
    "\t\n\v\f\r \u00a0\u1680"
    + "".join(map(chr, range(0x2000, 0x200B)))
    + "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_CR = re.compile("\r\n|\r")
_COMMENT_START = re.compile(r" {0,3}<!--")
_LIST_ITEM = re.compile(r"( {0,3})([-*+]|\d{1,9}[.)])( *)(?=\S|$)")
_BLOCK_START = re.compile(r" {0,3}(?:#{1,6}(?:[ \t]|$)|>|```|~~~|(?:[-*_][ \t]*){3,}$)")
_HTML_TAG_LINE = re.compile(r" {0,3}</?[A-Za-z][A-Za-z0-9-]*(?:\s[^\n]*)?/?>[ \t]*$")


def js_trim(text: str) -> str:
    """``String.prototype.trim``: Python's ``strip`` misses U+FEFF and strips \\x1c-\\x1f."""
    return text.strip(_JS_SPACE_CHARS)


def _frontmatter_end(text: str) -> int:
    """Where the agent's view of MEMORY.md starts: after its frontmatter, if it sees one."""
    if not text.startswith("---", 1 if text.startswith("\ufeff") else 0):
        return 0  # the agent's frontmatter opens the text: no search of the rest for a "---"
    match = agent_frontmatter(text)
    return match.end() if match else 0


def _comment_blocks(text: str) -> list[tuple[int, int]]:
    """The HTML comment blocks the agent's Markdown lexer (marked, top level only) finds.

    Each runs from a line starting with ``<!--`` (at most three spaces in, and not inside a
    list item, block quote, fence or other HTML block) through the line with the first ``-->``
    after it, plus the empty lines that follow. An unclosed comment is no block.
    """
    blocks: list[tuple[int, int]] = []
    pos = 0
    fence: str | None = None
    list_indent: int | None = None
    in_html = False
    previous_blank = True
    # No line after the last ``<!--`` can open a block: the lexer need not read them.
    last = text.rfind("<!--")
    while pos <= last:
        end = text.find("\n", pos)
        end = len(text) if end < 0 else end
        line = text[pos:end]
        blank = not line.strip(" \t")
        indent = len(line) - len(line.lstrip(" "))
        if fence is not None:
            if line.lstrip(" ").startswith(fence) and not line.strip(" \t").strip(fence[0]):
                fence = None
        elif in_html:
            in_html = not blank
        elif blank:
            pass
        elif list_indent is not None and indent >= list_indent:
            stripped = line.lstrip(" ")
            if stripped.startswith(("```", "~~~")):
                fence = stripped[:3]
        elif _COMMENT_START.match(line):
            close = text.find("-->", pos + indent + 4)
            if text.startswith(("<!-->", "<!--->"), pos + indent):
                close = text.find(">", pos + indent + 4) - 2
            if close < 0:
                break  # unclosed: the rest is one html token the agent keeps
            stop = text.find("\n", close + 3)
            stop = len(text) if stop < 0 else stop
            while stop < len(text) and text[stop] == "\n":
                stop += 1
            blocks.append((pos, stop))
            list_indent = None
            previous_blank = True
            pos = stop
            continue
        elif (item := _LIST_ITEM.match(line)) is not None:
            lead, marker, gap = item.groups()
            width = len(gap) if 1 <= len(gap) <= 4 else 1
            list_indent = len(lead) + len(marker) + width
        elif _BLOCK_START.match(line):
            list_indent = None
            stripped = line.lstrip(" ")
            if stripped.startswith(("```", "~~~")):
                fence = stripped[:3]
        elif _HTML_TAG_LINE.match(line) and previous_blank and list_indent is None:
            in_html = True
        elif previous_blank:
            list_indent = None
        previous_blank = blank
        pos = end + 1
    return blocks


@dataclass(frozen=True)
class _Visible:
    """What the agent keeps of MEMORY.md before the cap, with where each part came from."""

    text: str
    #: (offset in ``text``, offset in the file) where each kept part starts, in order.
    origins: tuple[tuple[int, int], ...]

    def source(self, offset: int) -> int:
        """The file offset of ``text[offset]`` (approximate inside line-break rewrites)."""
        best = self.origins[0] if self.origins else (0, 0)
        for start, origin in self.origins:
            if start > offset:
                break
            best = (start, origin)
        return best[1] + (offset - best[0])


def _visible(text: str) -> _Visible:
    """Frontmatter and top-level comment blocks removed, as the agent reads MEMORY.md."""
    start = _frontmatter_end(text)
    body = text[start:]
    if "<!--" not in body:
        return _Visible(body, ((0, start),))
    # The lexer sees (and returns) the text with CR line breaks unified; the origins below
    # stay exact for LF files, which is every file where line numbers matter.
    normalized = _CR.sub("\n", body) if "\r" in body else body
    parts: list[str] = []
    origins: list[tuple[int, int]] = []
    length = cursor = 0
    for block_start, block_end in _comment_blocks(normalized):
        for piece, origin in (
            (normalized[cursor:block_start], cursor),
            (_COMMENT_SPAN.sub("", normalized[block_start:block_end]), -1),
        ):
            if origin < 0:
                if not js_trim(piece):
                    continue
                origin = block_end - len(piece)
            if piece:
                origins.append((length, start + origin))
                parts.append(piece)
                length += len(piece)
        cursor = block_end
    tail = normalized[cursor:]
    if tail:
        origins.append((length, start + cursor))
        parts.append(tail)
    return _Visible("".join(parts), tuple(origins))


def _first_line_preview(text: str, units: int = 80) -> str:
    """The agent's one-line preview: at most ``units`` UTF-16 units, cut at a word if the word
    boundary keeps over half, ending in "…"."""
    if utf16_len(text) <= units:
        return text
    head = text[: utf16_prefix_index(text, units - 1)]
    match = re.search(f"[{_JS_SPACE}][^{_JS_SPACE}]*$", head)
    words = head[: match.start()].rstrip(_JS_SPACE_CHARS) if match else ""
    return f"{words if utf16_len(words) > units / 2 else head.rstrip(_JS_SPACE_CHARS)}…"


_CONTENT = re.compile(f"[^{re.escape(_JS_SPACE_CHARS)}]")


def _content_start(text: str, start: int) -> int:
    """Where the text from ``start`` stops being blank (as ``js_trim`` sees blanks)."""
    match = _CONTENT.search(text, start)
    return match.start() if match is not None else len(text)


def _blank_end(text: str, start: int) -> int:
    """How many blank characters end the text (none before ``start``), read from its end."""
    size = 64
    while True:
        begin = max(start, len(text) - size)
        kept = text[begin:].rstrip(_JS_SPACE_CHARS)
        if kept or begin == start:
            return len(text) - begin - len(kept)
        size *= 4


def _line_end(text: str, start: int, lines: int = 1) -> int:
    """Where the ``lines``-th line from ``start`` ends (its ``\\n``, or the text's end)."""
    end = start - 1
    for _ in range(lines):
        end = text.find("\n", end + 1)
        if end < 0:
            return len(text)
    return end


def load_cap(
    text: str,
    max_lines: int = C.INDEX_MAX_LINES,
    max_chars: int = C.INDEX_MAX_CHARS,
    target: Target = DEFAULT_TARGET,
) -> IndexLoad:
    """Apply path A's load cap to the text of MEMORY.md, as ``target`` does."""
    if "<!--" in text:
        visible = _visible(text)
        shown = visible.text
        lead = _content_start(shown, 0)
        end = len(shown) - _blank_end(shown, lead)
        newlines = shown.count("\n", lead, end)
        char_count = utf16_len(shown[lead:end])
    else:
        # No comment block: the agent sees the text after its frontmatter, offsets unchanged.
        visible = _Visible(text, ((0, 0),))
        shown = text
        lead = _content_start(text, _frontmatter_end(text))
        end = len(text) - _blank_end(text, lead)
        newlines = text.count("\n", lead, end)
        char_count = utf16_len(text[lead:end])
    # The trimmed text is shown[lead:end]; only what is loaded of it is copied.
    line_count = newlines + 1 if end > lead else 0
    line_truncated = line_count > max_lines
    char_truncated = char_count > max_chars
    loaded = shown[lead:end] if not (line_truncated or char_truncated) else ""
    reason: str | None = None
    warning: str | None = None
    partial_line = False
    if line_truncated or char_truncated:
        # At most the lines the agent keeps, and never more characters than units it keeps.
        stop = min(_line_end(shown, lead, max_lines), end) if line_truncated else end
        loaded = shown[lead : min(stop, lead + max_chars + 1)]
        if utf16_len(loaded) > max_chars:
            # lastIndexOf('\n', max_chars), in UTF-16 units; none (or at 0): cut mid-line.
            limit = utf16_prefix_index(loaded, max_chars)
            newline = loaded.rfind("\n", 0, limit + 1)
            loaded = loaded[:newline] if newline > 0 else loaded[:limit]
        if char_truncated and not line_truncated:
            reason = (
                f"{format_size(char_count)} (limit: {format_size(max_chars)})"
                " — index entries are too long"
            )
        elif line_truncated and not char_truncated:
            reason = f"{line_count} lines (limit: {max_lines})"
        else:
            reason = f"{line_count} lines and {format_size(char_count)}"
        after = lead + len(loaded)
        partial_line = after >= end or shown[after] != "\n"
        detail = ""
        if target.cut_detail:
            if partial_line:
                # Only a first line longer than the cap is cut inside; JavaScript's slice
                # keeps exactly ``max_chars`` units of it.
                detail = (
                    f": everything after the first {max_chars} characters of line 1 was cut off"
                )
            else:
                kept = loaded.count("\n") + 1
                next_line = js_trim(shown[after + 1 : min(_line_end(shown, after + 1), end)])
                quoted = f' ("{_first_line_preview(next_line)}")' if next_line else ""
                detail = (
                    f": {line_count - kept} of {line_count} lines were cut off, "
                    f"starting at line {kept + 1}{quoted}"
                )
        warning = C.INDEX_WARNING_TEMPLATE.format(reason=reason, detail=detail)
    injected = f"{loaded}\n\n{warning}" if warning else loaded
    if target.sanitize_index:
        # Applied once where the file is read and once where the context is assembled.
        injected = js_trim(for_model(for_model(injected)))

    # Map what was loaded back to file lines, for the entries the agent never sees: the loaded
    # lines and the first one cut, not the rest (a long index is cut after 200 lines): each
    # line's number is the previous one's plus the newlines between them.
    full = (loaded.count("\n") + 1 if loaded else 0) - (1 if partial_line else 0)
    file_lines: list[int] = []
    offset = at = number = 0
    while end > lead and len(file_lines) <= full and offset <= end - lead:
        source = visible.source(offset + lead)
        if source >= at:
            number += text.count("\n", at, source)
        else:  # inside a rewritten line break: the approximation may step back
            number -= text.count("\n", source, at)
        at = source
        file_lines.append(number)
        offset = min(_line_end(shown, lead + offset), end) - lead + 1
    first_cut = file_lines[full] if reason and full < len(file_lines) else None
    return IndexLoad(
        text=injected,
        line_count=line_count,
        char_count=char_count,
        loaded_lines=loaded.count("\n") + 1 if loaded else 0,
        loaded_chars=utf16_len(loaded),
        line_truncated=line_truncated,
        char_truncated=char_truncated,
        reason=reason,
        warning=warning,
        first_cut_line=first_cut,
        loaded_source_lines=tuple(file_lines[:full]),
    )


class Fences:
    """Which lines of a Markdown text are fenced code, fed one line at a time in order.

    CommonMark's rule: a fence closes only on the same character, at least as long, so a
    `````` block can quote a ``` one. Every reader that skips code blocks (the index, the
    citation and date rules) asks this one.
    """

    __slots__ = ("open",)

    def __init__(self) -> None:
        #: The fence of the block the last line was in, or None outside code.
        self.open: str | None = None

    def is_code(self, line: str) -> bool:
        """Whether ``line`` is a fence line or inside a fenced block."""
        match = FENCE.match(line)
        if self.open is not None:
            fence = match.group(1) if match is not None else ""
            if fence[:1] == self.open[0] and len(fence) >= len(self.open):
                self.open = None
            return True
        if match is not None:
            self.open = match.group(1)
            return True
        return False


def _classify(
    lines: tuple[str, ...],
) -> tuple[tuple[IndexEntry, ...], tuple[IndexLine, ...], int | None]:
    """Entries, other lines, and the line opening a block still open at the end (see
    :attr:`Index.open_block`)."""
    entries: list[IndexEntry] = []
    other: list[IndexLine] = []
    fences = Fences()
    in_comment = False
    block_start = 0
    fm_close: int | None = None
    if lines and _FM_BOUNDARY.match(lines[0]):
        fm_close = next((i for i in range(1, len(lines)) if _FM_BOUNDARY.match(lines[i])), None)
    for number, line in enumerate(lines):
        if fm_close is not None and number <= fm_close:
            other.append(IndexLine(number, line, "frontmatter"))
            continue
        if not in_comment and fences.open is None and line.startswith(_ENTRY_STARTS):
            # The usual line: no fence, comment, blank or heading starts this way.
            entry = parse_entry(line, number)
            if entry is not None:
                entries.append(entry)
                continue
        if in_comment or (fences.open is None and _COMMENT_OPEN.match(line)):
            if not in_comment:
                block_start = number
            in_comment = "-->" not in line[line.find("<!--") + 4 if not in_comment else 0 :]
            other.append(IndexLine(number, line, "comment"))
            continue
        was_open = fences.open is not None
        if fences.is_code(line):
            if not was_open:
                block_start = number
            other.append(IndexLine(number, line, "code"))
            continue
        kind = _line_kind(line)
        # A blank line or a heading is never an entry.
        entry = parse_entry(line, number) if kind in ("bullet", "text") else None
        if entry is None:
            if kind == "text" and line[:1] in (" ", "\t") and _continues(entries, other, number):
                # An entry's hook wrapped onto an indented next line: in Markdown the same list
                # item's paragraph, so part of the entry, not content.
                kind = "continuation"
            other.append(IndexLine(number, line, kind))
        else:
            entries.append(entry)
    open_block = block_start if in_comment or fences.open is not None else None
    return tuple(entries), tuple(other), open_block


_LINE = attrgetter("line")


def _continues(entries: list[IndexEntry], other: list[IndexLine], number: int) -> bool:
    """Whether line ``number - 1`` is an entry or an entry's continuation line."""
    if entries and entries[-1].line == number - 1:
        return True
    return bool(other) and other[-1].line == number - 1 and other[-1].kind == "continuation"


def entry_end(index: Index, entry: IndexEntry) -> int:
    """The last line of ``entry``: its own, or that of the last indented line its hook wraps
    onto (``continuation`` lines)."""
    kinds = {item.line: item.kind for item in index.other if item.line > entry.line}
    end = entry.line
    while kinds.get(end + 1) == "continuation":
        end += 1
    return end


def _line_kind(line: str) -> str:
    """What a line that is no entry is, outside frontmatter, fences and comments."""
    if not line.strip():
        return "blank"
    if _HEADING.match(line):
        return "heading"
    if _RULE.match(line):
        return "rule"
    if _TABLE_ROW.match(line):
        return "table"
    if BULLET.match(line):
        pointer = ("`" in line or "[[" in line) and _POINTER.match(line)
        return "pointer" if pointer or _ENTRY_LIKE.match(line) else "bullet"
    if ("**" in line or "__" in line) and _LABEL.match(line):
        return "label"
    return "text"


def _references(
    entries: tuple[IndexEntry, ...], other: tuple[IndexLine, ...]
) -> tuple[tuple[IndexEntry, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """The links to ``.md`` files on lines that are no entries, the ``.md`` paths named (in
    code form, in brackets, or plainly in a sentence), the ``[[name]]`` links and the words in
    code form, anywhere outside code blocks and comments (see :attr:`Index.references`,
    :attr:`Index.named`, :attr:`Index.wiki_named`, :attr:`Index.code_words`)."""
    links: list[IndexEntry] = []
    named: list[str] = []
    wiki: list[str] = []
    words: list[str] = []
    for item in other:
        if item.kind not in _READ_KINDS:
            continue
        line = item.raw
        if "](" in line:
            links += _links(item.line, line, 0)
        if "`" in line:
            named += code_names(line)
            words += _CODE_WORD.findall(line)
        if "[" in line:
            named += [normalize_target(m) for m in _BRACKET_NAME.findall(line)]
        if ".md" in line:
            named += _BARE_NAME.findall(line)
        wiki += wiki_names(line)
    for entry in entries:
        if "](" in entry.hook:
            # More links after the entry's own (`- [A](a.md) / [B](b.md)`): the model follows
            # each of them.
            links += _links(entry.line, entry.raw, entry.hook_start)
        if "`" in entry.raw:
            named += code_names(entry.hook)
            words += _CODE_WORD.findall(entry.hook)
        wiki += wiki_names(entry.hook)
    return tuple(links), tuple(named), tuple(wiki), tuple(words)


def _links(number: int, line: str, start: int) -> list[IndexEntry]:
    """The links to ``.md`` files on ``line`` from ``start`` on, as entries without bullet or
    hook (see :attr:`Index.references`)."""
    found: list[IndexEntry] = []
    for match in _LINK.finditer(line, start):
        path = normalize_target(match.group(2))
        if not path.lower().endswith(".md"):
            continue
        title_start, title_end = match.span(1)
        target_start, target_end = match.span(2)
        end = len(line.rstrip())
        found.append(
            IndexEntry(
                number, line, "", sys.intern(path), "",
                title_start, title_end, target_start, target_end, end, end,
            )
        )  # fmt: skip
    return found


def code_names(text: str) -> list[str]:
    """The ``.md`` paths ``text`` names in code form (```notes.md```): the model reads them as
    pointers to files."""
    return [normalize_target(m) for m in _CODE_NAME.findall(text)] if "`" in text else []


#: The lines whose links and code names the model reads as pointers to files.
_READ_KINDS = frozenset({"text", "continuation", "bullet", "pointer", "table", "heading", "label"})


def _not_loaded(load: IndexLoad, size: int, limit: int) -> IndexLoad:
    """The agent skips a MEMORY.md over ``limit`` bytes altogether: nothing is injected."""
    return IndexLoad(
        text="",
        line_count=load.line_count,
        char_count=load.char_count,
        loaded_lines=0,
        loaded_chars=0,
        line_truncated=load.line_truncated,
        char_truncated=True,
        reason=f"{format_size(size)}, over the {format_size(limit)} the agent reads at all",
        warning=None,
        first_cut_line=load.loaded_source_lines[0] if load.loaded_source_lines else None,
        loaded_source_lines=(),
    )


def parse_index(
    text: str,
    path: Path | None = None,
    problems: tuple[Problem, ...] = (),
    target: Target = DEFAULT_TARGET,
    size: int | None = None,
) -> Index:
    """Parse the text of MEMORY.md: entries, other lines, and what path A loads of it as
    ``target`` does.

    ``size`` is the file's size in bytes when ``text`` is what :func:`load_index` read of it;
    without it ``text`` is the whole content (an editor's), capped here as that read caps the
    file, so the index is the same whether it came from the disk or an editor.
    """
    if size is None:
        text, problems, size = _read_cap(text, problems)
    lines = tuple(text.split("\n"))
    entries, other, open_block = _classify(lines)
    references, named, wiki_named, code_words = _references(entries, other)
    load = load_cap(text, target=target)
    limit = target.index_max_file_bytes
    if limit is not None and size is not None and size > limit:
        load = _not_loaded(load, size, limit)
    cut: tuple[IndexEntry, ...] = ()
    if load.truncated:
        # Every entry past the last loaded line is cut; before it, those on lines not loaded.
        sources = load.loaded_source_lines
        past = bisect_left(entries, sources[-1] + 1, key=_LINE) if sources else 0
        loaded = set(sources)
        cut = tuple(e for e in entries[:past] if e.line not in loaded) + entries[past:]
    return Index(
        path=path or Path(C.INDEX_FILENAME),
        text=text,
        lines=lines,
        entries=entries,
        other=other,
        load=load,
        problems=problems,
        cut_entries=cut,
        open_block=open_block,
        references=references,
        named=named,
        wiki_named=wiki_named,
        code_words=code_words,
    )


def _read_cap(
    text: str, problems: tuple[Problem, ...]
) -> tuple[str, tuple[Problem, ...], int | None]:
    """``text`` as :func:`load_index` would read it from a file holding it, and its size in
    bytes (None when it cannot reach the cap): cut at the agent's read cap by the one reader
    (:func:`memdir.textio.decode_bytes`)."""
    limit = C.INDEX_MAX_READ_BYTES
    if len(text) <= limit // 4:  # at most 4 bytes a character: within the cap
        return text, problems, None
    size = utf8_len(text)
    if size <= limit:
        return text, problems, size
    data = text.encode("utf-8", "surrogatepass")[: limit + 1]
    read = decode_bytes(data, size, 0.0, limit, keep_binary=True)
    return read.text, problems + read.problems, size


def load_index(memory_dir: Path, target: Target = DEFAULT_TARGET) -> Index:
    """Read ``MEMORY.md`` of a memory dir; a missing index is an empty one (``exists=False``).

    Every reader of the index reads it here: at most the agent's read cap, a regular file only,
    never through a symlink leading out of the dir. One memdir does not read is an empty index
    whose problems say why (:func:`memdir.textio.not_read`), never the content behind it.
    """
    path = memory_dir / C.INDEX_FILENAME
    if not path.exists():
        index = parse_index("", path, target=target)
        return Index(index.path, "", index.lines, (), index.other, index.load, (), (), exists=False)
    result = read_text(path, C.INDEX_MAX_READ_BYTES, keep_binary=True, root=memory_dir)
    return parse_index(result.text, path, result.problems, target, result.size)
