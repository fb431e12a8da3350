"""Completion where memory files have a closed vocabulary.

* After ``](`` in MEMORY.md: topic files, those not yet in the index first.
* In frontmatter: the keys the agent reads (and ``last_verified``, with today's date), and the
  four ``type`` values (the set is closed: anything else counts as no type).
* After ``[[``: the names of existing memories (a link to a name that does not exist yet is
  allowed, so nothing is forced).
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from lsprotocol import types
from memdir import constants as C
from memdir.agent.index import encode_target
from memdir.agent.topic import parse_frontmatter
from memdir.fixes.dates import VERIFIED_FIELD
from memdir.fixes.plan import entries_linking
from memdir.model import Span, TopicFile

from memdir_lsp.directory import MemoryDirectory
from memdir_lsp.server import MemoryServer

TYPE_DOCS = {
    "user": "The user's role, goals, preferences and knowledge level.",
    "feedback": "The user's corrections and approvals of how the agent works.",
    "project": "Background and decisions that cannot be derived from the code.",
    "reference": "Entry points to external systems (a tracker project, a dashboard).",
}
KEY_DOCS = {
    "name": "The memory's name: a title or a kebab-case slug; `[[name]]` links use it.",
    "description": "One line the selector reads to decide relevance: be specific.",
    "type": "One of user, feedback, project, reference.",
    "modified": "ISO 8601 time of the last write (set by the agent).",
    "metadata": "Nested fields; `metadata.type` is read before a top-level `type`.",
    VERIFIED_FIELD: "The day someone last checked this memory against the project (MEM120); "
    "for people and memdir only: the agent ignores it.",
}
TRIGGER_CHARACTERS = ["(", "[", ":", " "]

_LINK_START = re.compile(r"\]\(([^()\s]*)$")
_WIKI_START = re.compile(r"\[\[([^\[\]\n]*)$")
_TYPE_VALUE = re.compile(r"^(\s*)type\s*:\s*(\S*)$")
_KEY_START = re.compile(r"^([A-Za-z_]*)$")


def _item_range(ls: MemoryServer, lines: list[str], line: int, start: int, end: int) -> types.Range:
    return ls.to_range(Span.on_line(line, start, end), lines)


def _file_items(
    ls: MemoryServer,
    directory: MemoryDirectory,
    lines: list[str],
    line: int,
    start: int,
    col: int,
) -> list[types.CompletionItem]:
    index = directory.index()
    rest = lines[line][col:]
    # Replace what was typed plus the rest of the old target, up to the closing parenthesis.
    end = col + (rest.index(")") if ")" in rest and " " not in rest[: rest.index(")")] else 0)
    items: list[types.CompletionItem] = []
    for topic in directory.topics():
        indexed = bool(entries_linking(index, topic.rel_path))
        target = encode_target(topic.rel_path)
        items.append(
            types.CompletionItem(
                label=topic.rel_path,
                kind=types.CompletionItemKind.File,
                detail=("in index · " if indexed else "not in index · ")
                + (topic.type or "no type"),
                documentation=topic.description,
                # Files missing from the index are what one is most likely adding.
                sort_text=("1" if indexed else "0") + topic.rel_path,
                filter_text=target,
                text_edit=types.TextEdit(
                    range=_item_range(ls, lines, line, start, end), new_text=target
                ),
            )
        )
    return items


def _names(directory: MemoryDirectory) -> dict[str, TopicFile]:
    names: dict[str, TopicFile] = {}
    for topic in directory.topics():
        names.setdefault(topic.name or Path(topic.rel_path).stem, topic)
    return names


def _wiki_items(
    ls: MemoryServer,
    directory: MemoryDirectory,
    lines: list[str],
    line: int,
    start: int,
    col: int,
    current: Path,
) -> list[types.CompletionItem]:
    closing = "" if lines[line][col:].startswith("]]") else "]]"
    items = []
    for name, topic in sorted(_names(directory).items()):
        if topic.path == current:
            continue
        items.append(
            types.CompletionItem(
                label=name,
                kind=types.CompletionItemKind.Reference,
                detail=topic.rel_path,
                documentation=topic.description,
                text_edit=types.TextEdit(
                    range=_item_range(ls, lines, line, start, col), new_text=name + closing
                ),
            )
        )
    return items


def _frontmatter_items(
    ls: MemoryServer, lines: list[str], line: int, col: int, today: str
) -> list[types.CompletionItem] | None:
    """Keys and type values, when the cursor is inside the frontmatter block."""
    fm, _ = parse_frontmatter(lines)
    if fm is None or line == fm.open_line:
        return None
    if fm.close_line is not None and line >= fm.close_line:
        return None
    before = lines[line][:col]
    typed = _TYPE_VALUE.match(before)
    if typed:
        start = col - len(typed.group(2))
        return [
            types.CompletionItem(
                label=value,
                kind=types.CompletionItemKind.EnumMember,
                documentation=TYPE_DOCS[value],
                text_edit=types.TextEdit(
                    range=_item_range(ls, lines, line, start, col), new_text=value
                ),
            )
            for value in C.MEMORY_TYPES
        ]
    key = _KEY_START.match(before)
    if key:
        present = set(fm.key_spans)
        start = col - len(key.group(1))
        return [
            types.CompletionItem(
                label=name,
                kind=types.CompletionItemKind.Property,
                documentation=doc,
                detail=today if name == VERIFIED_FIELD else None,
                text_edit=types.TextEdit(
                    range=_item_range(ls, lines, line, start, col),
                    new_text=f"{name}: {today}" if name == VERIFIED_FIELD else f"{name}: ",
                ),
            )
            for name, doc in KEY_DOCS.items()
            if name not in present
        ]
    return None


async def completion(
    ls: MemoryServer, params: types.CompletionParams
) -> types.CompletionList | None:
    found = ls.memory_document(params.text_document.uri)
    if found is None:
        return None
    directory, path = found
    lines = ls.lines_of(path)
    line, col = ls.from_position(params.position, lines)
    if line >= len(lines):
        return None
    before = lines[line][:col]
    items: list[types.CompletionItem] | None = None
    wiki = _WIKI_START.search(before)
    if wiki:
        items = await asyncio.to_thread(
            _wiki_items, ls, directory, lines, line, col - len(wiki.group(1)), col, path
        )
    elif directory.is_index(path):
        link = _LINK_START.search(before)
        if link:
            items = await asyncio.to_thread(
                _file_items, ls, directory, lines, line, col - len(link.group(1)), col
            )
    else:
        items = _frontmatter_items(ls, lines, line, col, ls.today().isoformat())
    if items is None:
        return None
    return types.CompletionList(is_incomplete=False, items=items)


def register(server: MemoryServer) -> None:
    server.feature(
        types.TEXT_DOCUMENT_COMPLETION,
        types.CompletionOptions(trigger_characters=TRIGGER_CHARACTERS),
    )(server.guard(completion))
