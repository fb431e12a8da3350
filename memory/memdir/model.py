"""Plain data for a memory directory: topic files, index entries, positions and problems.

Positions are 0-based lines and 0-based columns counted in Python string indices (code points);
ends are exclusive. The language server converts columns to the client's encoding; every face
shown to people (the CLI, MCP) counts from 1: a view's field marked :data:`ZERO_BASED` gets one
added there, in one place (``memdir.faces.projections.cli_json``). Parse problems are values
carried by the objects, never exceptions, so one broken file can never abort a scan or a lint
run.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Field metadata of a view's 0-based line or column: the ``memory/*`` protocol sends it as it
#: is (LSP counts from 0), the CLI's ``--json`` and MCP's structured results 1-based.
ZERO_BASED: Mapping[str, object] = {"zero_based": True}


@dataclass(frozen=True, order=True, slots=True)
class Span:
    start_line: int
    start_col: int
    end_line: int
    end_col: int

    @classmethod
    def on_line(cls, line: int, start: int, end: int) -> Span:
        return cls(line, start, line, end)

    def to_json(self) -> dict[str, int]:
        return {
            "start_line": self.start_line,
            "start_col": self.start_col,
            "end_line": self.end_line,
            "end_col": self.end_col,
        }


@dataclass(frozen=True, slots=True)
class Problem:
    """Something wrong found while reading a file.

    ``kind`` is a stable machine name (``yaml-error``, ``no-frontmatter``,
    ``unclosed-frontmatter``, ``not-utf8``, ``binary``, ``unreadable``, ``too-large``,
    ``bad-field``); the lint rules map kinds to diagnostic codes. The fields after ``span`` say
    what exactly was found, so no reader needs to take ``message`` apart.
    """

    kind: str
    message: str
    span: Span
    #: ``bad-field``: the frontmatter key whose value is not a plain string (``type`` also when
    #: nested as ``metadata.type``); None when the frontmatter as a whole is not a mapping.
    key: str | None = None
    #: What was found, without what follows from it (``not-utf8``: ``byte 0xe9 at offset 3``).
    detail: str = ""


@dataclass(frozen=True, slots=True)
class WikiLink:
    """A ``[[name]]`` link to another memory by its ``name``; a missing target is intended."""

    name: str
    span: Span


@dataclass(frozen=True, slots=True)
class Frontmatter:
    """The YAML block at the top of a topic file, located in the raw text."""

    #: Everything the YAML parsed to (empty when it did not parse).
    data: dict[str, Any]
    #: Line of the opening and closing ``---`` (closing None when never closed).
    open_line: int
    close_line: int | None
    #: Where each top-level key's value sits, for diagnostics and edits.
    value_spans: dict[str, Span] = field(default_factory=dict)
    key_spans: dict[str, Span] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class TopicFile:
    """A topic file ``*.md`` of a memory directory, fully parsed."""

    path: Path
    rel_path: str
    name: str | None
    description: str | None
    #: A valid type (one of the four) or None; ``raw_type`` keeps what was written.
    type: str | None
    raw_type: str | None
    modified: str | None
    frontmatter: Frontmatter | None
    body: str
    #: Line on which the body starts (after the frontmatter).
    body_line: int
    links: tuple[WikiLink, ...]
    mtime: float
    size: int
    problems: tuple[Problem, ...]
    #: The decoded text (``\ufffd`` for undecodable bytes); empty for binary files.
    text: str = ""

    @property
    def has_frontmatter(self) -> bool:
        return self.frontmatter is not None


@dataclass(frozen=True, slots=True)
class MemoryHeader:
    """What the prefetch scan sees of a topic file: its first 30 lines (at most 64 KiB)."""

    path: Path
    rel_path: str
    mtime: float
    size: int
    name: str | None
    description: str | None
    type: str | None
    problems: tuple[Problem, ...] = ()
    #: The head of the body as the prefetch would inject it, read only for the offline
    #: selector (:func:`memdir.agent.topic.with_bodies`); None until read.
    body: str | None = None


#: A backslash escape in a link title (``\\]``); the index parser reads targets with it too.
TITLE_ESCAPE = re.compile(r"\\(.)")


@dataclass(slots=True, unsafe_hash=True)
class IndexEntry:
    """One ``- [Title](file.md) — hook`` line of MEMORY.md (never changed once parsed); also a
    link written elsewhere on a line (:attr:`memdir.index.Index.references`), with no bullet,
    separator or hook.

    Kept as the line and the columns of its parts: the title, target, hook and their spans are
    made from ``raw`` when asked, since a big index holds tens of thousands of entries and most
    of their parts are never looked at again. Not frozen: a frozen dataclass's ``__init__``
    assigns each field through ``object.__setattr__``, 8 times the cost of the parse's whole
    making of an entry (an edit of a 2,000-line index parses every line again).
    """

    line: int
    raw: str
    bullet: str
    #: The target decoded and normalised to a ``/``-separated path, without ``#fragment``.
    path: str
    separator: str
    title_start: int
    title_end: int
    target_start: int
    target_end: int
    hook_start: int
    hook_end: int

    @property
    def title(self) -> str:
        title = self.raw[self.title_start : self.title_end]
        return TITLE_ESCAPE.sub(r"\1", title) if "\\" in title else title

    @property
    def target(self) -> str:
        """The link target exactly as written (possibly URL-encoded)."""
        return self.raw[self.target_start : self.target_end]

    @property
    def hook(self) -> str:
        return self.raw[self.hook_start : self.hook_end]

    @property
    def title_span(self) -> Span:
        return Span(self.line, self.title_start, self.line, self.title_end)

    @property
    def target_span(self) -> Span:
        return Span(self.line, self.target_start, self.line, self.target_end)

    @property
    def hook_span(self) -> Span:
        return Span(self.line, self.hook_start, self.line, self.hook_end)


@dataclass(frozen=True, slots=True)
class IndexLine:
    """A line of MEMORY.md that is not an index entry.

    ``kind`` is one of ``blank``, ``heading``, ``frontmatter``, ``comment``, ``code``, ``text``,
    ``bullet`` (a bullet without a leading link: usually memory content written into the index),
    ``pointer`` (a bullet naming a file in code form, ``- `notes.md` — hook``, or an entry but
    for its form: ``- [notes.md] hook``, ``- ⭐ [Title](notes.md) — hook``), ``label`` (a line
    of bold text only, ``**Latest reports:**``), ``table`` (a table row), ``rule`` (``---``) or
    ``continuation`` (an indented line right after an entry or another continuation: the
    entry's hook wrapped onto the next line, one Markdown list item).
    """

    line: int
    raw: str
    kind: str
