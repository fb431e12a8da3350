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
#: A misspelled type is read as a typo only from this many characters (``use`` is no ``user``).
TYPE_TYPO_MIN_CHARS = 4
#: A drafted description needs this many words (a CJK character counts half a word) of its own
#: once links, URLs and code are taken out: fewer is a link line or a label, not a description.
DESCRIPTION_MIN_PROSE_WORDS = 4
#: Only the first lines of a file are searched for a stated type or a lead sentence.
DRAFT_HEAD_LINES = 40

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
_TYPES = "|".join(C.MEMORY_TYPES)
#: A heading that opens with a type and a colon or dash: ``# Feedback: no mocks``.
_TYPE_HEADING = re.compile(
    rf"^ {{0,3}}#{{1,6}}[ \t]+[*_]*({_TYPES})[*_]*[ \t]*[:—–]", re.IGNORECASE
)
#: A ``Type: project`` line (a bullet, bold or code marks allowed).
_TYPE_LINE = re.compile(
    rf"^[ \t]*(?:[-*+][ \t]+)?[*_]*type[*_]*[ \t]*:[*_]*[ \t]*[*_`]*({_TYPES})[*_`]*[ \t]*$",
    re.IGNORECASE,
)
#: A date where a line starts (``2026-03-01:``, ``**2026-03-01**``, ``[2026-03-01]``).
_DATED = re.compile(r"^[\W_]*(?:\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{4})\b")
#: ``Label: value`` lines that are bookkeeping, not a description of the memory.
_LABEL = re.compile(r"^[*_]*([^\W\d][\w .-]{0,30}?)[*_]*[ \t]*[:：][*_]*(?:[ \t]|$)")
_BOILERPLATE_LABELS = frozenset(
    (
        *("date", "updated", "last updated", "last update", "created", "modified", "author"),
        *("status", "tags", "tag", "source", "sources", "version", "see", "see also", "related"),
        *("todo", "tbd", "note", "notes", "type", "name", "links", "link", "ref", "refs", "owner"),
    )
)
_BOILERPLATE_START = re.compile(
    r"^(?:auto-?generated|generated (?:by|with|from)|do not edit|todo\b|tbd\b|wip\b"
    r"|see (?:also\b|\[)"
    r"|this (?:file|document|page) (?:is|was) (?:auto|generated|maintained|managed|updated))",
    re.IGNORECASE,
)
_CODE_SPAN = re.compile(r"`[^`\n]*`")


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


def _prose_words(line: str) -> float:
    """How many words of its own a line has once links, URLs and code are taken out (a wide
    CJK character counts half a word)."""
    text = _URL.sub(" ", _CODE_SPAN.sub(" ", _LINK_TEXT.sub(" ", line)))
    words = re.findall(r"[^\W\d_]+", text)
    return sum(1 if w.isascii() else max(1, len(w) / 2) for w in words)


def _describes(line: str) -> bool:
    """A line of prose that can describe the memory: not a heading, list item, quote, table,
    code or comment, not dated, not a link line and not bookkeeping (``Updated: ...``)."""
    stripped = line.strip()
    if not stripped or stripped.startswith((*_NOT_PROSE, ">", "[!", "!")) or BULLET.match(line):
        return False
    if _DATED.match(stripped) or _BOILERPLATE_START.match(plain_text(stripped)):
        return False
    label = _LABEL.match(stripped)
    if label and (
        label.group(1).strip().casefold() in _BOILERPLATE_LABELS
        or _DATED.match(stripped[label.end() :])
    ):
        return False
    return _prose_words(stripped) >= DESCRIPTION_MIN_PROSE_WORDS


def lead_sentence(text: str, limit: int = DRAFT_DESCRIPTION_CHARS) -> str:
    """The first sentence of the file's lead, as plain words: a draft description that a fix
    may write unattended; "" when the file has none.

    The lead is the prose a file opens with, above or under its title and before its second
    heading: what the file says it is about. Skipped on the way: list items (a dated log's
    ``- 2026-03-01: ...`` bullets), quotes, tables, code, comments, link lines and bookkeeping
    lines; a heading's words alone are a title, not a description. Prose under a later
    section describes that section, so it is never taken.
    """
    paragraph: list[str] = []
    headings = 0
    fence = ""
    for line in text.split("\n")[:DRAFT_HEAD_LINES]:
        stripped = line.strip()
        if fence:
            fence = "" if stripped.startswith(fence) else fence
            continue
        if stripped.startswith(("```", "~~~")):
            if paragraph:
                break
            fence = stripped[:3]
            continue
        if _describes(line) and not (paragraph and stripped.startswith(_NOT_PROSE)):
            paragraph.append(plain_text(stripped))
            continue
        if paragraph:
            break
        if _HEADING.match(line):
            headings += 1
            if headings > 1:
                break
    words = " ".join(p for p in paragraph if p)
    sentence = _SENTENCE_END.split(words, maxsplit=1)[0].rstrip(".。")
    return shorten(sentence, limit) if _prose_words(sentence) >= DESCRIPTION_MIN_PROSE_WORDS else ""


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
    """The memory type a file's name or folder states (``user_role.md``, ``feedback-tests.md``,
    ``reference/x.md``), or "": safe to write unattended, since the user chose that name.

    The type must be a whole word of the name (``users-api.md`` and ``projection.md`` say
    nothing) or a whole folder name.
    """
    first_word = re.split(r"[-_. ]", file_stem(rel_path).casefold(), maxsplit=1)[0]
    folders = [part.casefold() for part in rel_path.split("/")[:-1]]
    return next((t for t in C.MEMORY_TYPES if t == first_word or t in folders), "")


def stated_type(rel_path: str, text: str) -> str:
    """The type a file states, by its name or folder (:func:`type_from_path`), a heading that
    opens with it (``# Feedback: no mocks``) or a ``Type: project`` line; "" when it states none.

    Unlike :func:`guess_type` this never reads the type from what the memory talks about: a
    fix applied unattended writes only a type the file already says.
    """
    from_path = type_from_path(rel_path)
    if from_path:
        return from_path
    for line in text.split("\n"):
        said = _TYPE_HEADING.match(line) or _TYPE_LINE.match(line)
        if said:
            return said.group(1).casefold()
    return ""


def type_spelling(raw: str) -> str | None:
    """The one memory type ``raw`` is a misspelling of, or None.

    Another case (``Project``), a plural (``feedbacks``) or one letter added, dropped, changed
    or swapped (``refrence``, ``porject``) in a value of at least
    :data:`TYPE_TYPO_MIN_CHARS` characters, when exactly one type is that close. A synonym
    (``decision``) or a value near two types is a guess, not a spelling.
    """
    value = raw.strip().casefold()
    if value in C.MEMORY_TYPES:
        return value
    close = [t for t in C.MEMORY_TYPES if value == t + "s"]
    if not close and len(value) >= TYPE_TYPO_MIN_CHARS:
        close = [t for t in C.MEMORY_TYPES if _one_edit_apart(value, t)]
    return close[0] if len(close) == 1 else None


def _one_edit_apart(a: str, b: str) -> bool:
    """One insertion, deletion, substitution or swap of neighbours turns ``a`` into ``b``."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
        if len(diff) == 1:
            return True
        i = diff[0]
        return len(diff) == 2 and diff[1] == i + 1 and a[i : i + 2] == b[i + 1] + b[i]
    short, long = (a, b) if len(a) < len(b) else (b, a)
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))


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
