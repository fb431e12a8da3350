"""The text a fix writes: file names, YAML scalars, frontmatter, and drafts of titles,
descriptions and types taken from the memory's own words.

Drafts are a start for a person (or the agent) to edit, never a claim: a description is the
first sentence, a type is read from the file name, or guessed from the words when a new file
needs one.
"""

from __future__ import annotations

import json
import posixpath
import re
import unicodedata
from collections.abc import Collection

from memdir import constants as C
from memdir.agent.index import BULLET
from memdir.agent.yaml_loaders import _YAML_AWKWARD, _simple_scalar

#: File names made from titles are cut to this many characters before ``.md`` (kept readable).
SLUG_MAX_CHARS = 60
#: Fallback when a title has no letter or digit at all.
DEFAULT_SLUG = "memory"
#: A drafted description is cut to this many characters: a manifest line, not a paragraph.
DRAFT_DESCRIPTION_CHARS = 100
#: Titles drafted from moved text are cut to this many characters.
TITLE_MAX_CHARS = 60
UNTITLED = "Untitled memory"

_NOT_WORD = re.compile(r"[^\w]+|_+")
_NOT_ASCII_ALNUM = re.compile(r"[^a-z0-9]+")
#: Names the agent's rewrite leaves as they are.
_AGENT_KEPT_NAME = re.compile(r"[a-z0-9_-]+")
_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.*?)[ \t#]*$")
_MARKUP = re.compile(r"[*_`~]+|\[\[|\]\]")
_LINK_TEXT = re.compile(r"\[([^\]\n]*)\]\([^)\n]*\)")
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s")
_CLAUSE_END = re.compile(r"\s*[;—–(]\s*|:\s+|\s+-\s+|[；：]")
_URL = re.compile(r"https?://\S+")
#: Lines that are not prose: headings, fences, HTML comments, rules, tables.
_NOT_PROSE = ("#", "```", "~~~", "<!--", "---", "|")
#: Plain YAML scalars that need no parser to be sure they read back as the same string.
_SURELY_PLAIN = re.compile(r"[^\W\d_][\w ,'()/-]*[\w)]", re.ASCII)
_YAML_WORDS = frozenset(("true", "false", "yes", "no", "on", "off", "null", "y", "n"))


# --- names -----------------------------------------------------------------------------------


def kebab_slug(title: str, max_chars: int = SLUG_MAX_CHARS) -> str:
    """``Release merge freeze!`` → ``release-merge-freeze``; letters of any script are kept
    (file names; a memory's ``name`` is :func:`memory_name`)."""
    text = unicodedata.normalize("NFKC", title).casefold()
    return _cut(_NOT_WORD.sub("-", text).strip("-"), max_chars) or DEFAULT_SLUG


def ascii_slug(title: str, max_chars: int = SLUG_MAX_CHARS) -> str:
    """``Café notes: Q3`` → ``cafe-notes-q3``: accents dropped, anything but ``a-z0-9``
    between words a single ``-``; "" when ``title`` has no ASCII letter or digit."""
    text = unicodedata.normalize("NFKD", title)
    text = "".join(c for c in text if not unicodedata.combining(c)).lower()
    return _cut(_NOT_ASCII_ALNUM.sub("-", text).strip("-"), max_chars)


def agent_name(name: str) -> str:
    """The ``name`` Claude Code writes back when it first rewrites a memory's frontmatter.

    A name of only ``a-z0-9_-`` is kept; any other is lowercased with each run of other
    characters turned into ``-`` and trimmed, so a name without an ASCII letter or digit
    becomes "" (docs/agent.md).
    """
    if _AGENT_KEPT_NAME.fullmatch(name):
        return name
    return _NOT_ASCII_ALNUM.sub("-", name.lower()).strip("-")


def memory_name(title: str, rel_path: str = "") -> str:
    """The ``name`` of a new memory: one the agent keeps as it is.

    The ASCII slug of ``title``, else of the file name; a title with no ASCII letter or digit
    in either is kept as written (MEM115 explains what the agent does to it).
    """
    return ascii_slug(title) or ascii_slug(file_stem(rel_path)) or title


def name_from_file(rel_path: str) -> str:
    """The ``name`` of a memory made for an existing file name: :func:`memory_name` of it,
    falling back to its :func:`kebab_slug` (letters of any script)."""
    return memory_name(kebab_slug(file_stem(rel_path)), rel_path)


def _cut(slug: str, max_chars: int) -> str:
    if len(slug) > max_chars:
        slug = slug[:max_chars]
        # Cut at a word boundary when one is near, so names do not end mid-word.
        dash = slug.rfind("-")
        if dash > max_chars // 2:
            slug = slug[:dash]
        slug = slug.strip("-")
    return slug


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


def file_stem(rel_path: str) -> str:
    return posixpath.splitext(posixpath.basename(rel_path))[0]


# --- YAML ------------------------------------------------------------------------------------


def yaml_scalar(value: str) -> str:
    """``value`` as a one-line YAML scalar: plain when that reads back unchanged, else quoted."""
    if value.casefold() in _YAML_WORDS:
        pass
    elif _SURELY_PLAIN.fullmatch(value) or (
        # Beyond ASCII (a dash, an accent): what memdir's own loader reads back unchanged.
        _YAML_AWKWARD.search(value) is None and _simple_scalar(value) == (True, value)
    ):
        return value
    single_line = " ".join(value.split())
    if single_line and single_line == value:
        import yaml  # only for values the pattern above cannot vouch for

        try:
            if yaml.safe_load(f"k: {value}") == {"k": value}:
                return value
        except yaml.YAMLError:
            pass
    # A JSON string is a valid YAML double-quoted scalar.
    return json.dumps(value, ensure_ascii=False)


def render_frontmatter(name: str, description: str, type_: str) -> str:
    """A frontmatter block; an empty value is left empty for a person to fill in."""
    fields = (("name", name), ("description", description), ("type", type_))
    lines = [f"{key}: {yaml_scalar(value)}" if value else f"{key}: " for key, value in fields]
    return "---\n" + "\n".join(lines) + "\n---\n"


def render_topic(name: str, description: str, type_: str, body: str) -> str:
    """A new topic file: frontmatter, then ``body`` exactly as given (plus a final newline)."""
    text = render_frontmatter(name, description, type_) + body
    return text if text.endswith("\n") else text + "\n"


# --- drafts from the memory's words ------------------------------------------------------------


def plain_text(line: str) -> str:
    """A Markdown line as words: no bullet, heading marks, emphasis or link syntax."""
    heading = _HEADING.match(line)
    text = heading.group(1) if heading else BULLET.sub("", line)
    text = _LINK_TEXT.sub(r"\1", text.lstrip("> "))
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


def first_sentence(text: str, limit: int = DRAFT_DESCRIPTION_CHARS) -> str:
    """The first sentence of the opening prose of ``text`` (headings and code skipped), as
    plain words without its final period; "" when there is no prose."""
    paragraph: list[str] = []
    for line in text.split("\n"):
        stripped = line.strip()
        if paragraph and (not stripped or stripped.startswith(_NOT_PROSE) or BULLET.match(line)):
            break
        if stripped and not stripped.startswith(_NOT_PROSE):
            paragraph.append(plain_text(stripped))
    words = " ".join(p for p in paragraph if p)
    sentence = _SENTENCE_END.split(words, maxsplit=1)[0].rstrip(".")
    return shorten(sentence, limit)


def first_heading(text: str) -> str:
    """The words of the first Markdown heading of ``text``, or ""."""
    for line in text.split("\n"):
        heading = _HEADING.match(line)
        if heading and heading.group(1).strip():
            return plain_text(line)
    return ""


def guess_title(block: str) -> str:
    """A title for moved text: its first heading, else its first line's lead or first clause."""
    lines = [line for line in block.split("\n") if line.strip()]
    heading = first_heading(block)
    if heading:
        return shorten(heading, TITLE_MAX_CHARS)
    if not lines:
        return UNTITLED
    # A "**Lead:** rest" line is titled by its lead.
    lead = re.match(r"^\s*(?:[-*+]\s+)?\*\*([^*]+?)\*\*", lines[0])
    if lead:
        return shorten(lead.group(1).rstrip(":").strip(), TITLE_MAX_CHARS) or UNTITLED
    # Otherwise the first clause of the first sentence: short enough for a title and a name.
    sentence = _SENTENCE_END.split(plain_text(lines[0]), maxsplit=1)[0]
    clause = _CLAUSE_END.split(sentence, maxsplit=1)[0].rstrip(".!?。！？ ")
    return shorten(clause, TITLE_MAX_CHARS) or UNTITLED


def type_from_path(rel_path: str) -> str:
    """The memory type a file's name or folder states (``user-notes.md``, ``reference/x.md``),
    or "": safe to write unattended, since the user chose that name."""
    stem = file_stem(rel_path)
    return next((t for t in C.MEMORY_TYPES if stem.startswith(t) or f"{t}/" in rel_path), "")


def guess_type(text: str) -> str:
    """A plausible memory type for new text; the user can change it in the new file.

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
