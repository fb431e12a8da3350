"""Document symbols (index entries under their headings; a topic's fields and headings) and
workspace symbols (every memory by name, searchable by name, description and path)."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from lsprotocol import types
from memdir.model import IndexEntry, Span

from memdir_lsp.directory import MemoryDirectory
from memdir_lsp.server import MemoryServer

_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$")
#: At most this many workspace symbols per request.
MAX_WORKSPACE_SYMBOLS = 500


def _symbol(
    ls: MemoryServer,
    lines: list[str],
    name: str,
    kind: types.SymbolKind,
    span: Span,
    selection: Span | None = None,
    detail: str | None = None,
) -> types.DocumentSymbol:
    return types.DocumentSymbol(
        name=name or "(untitled)",
        kind=kind,
        range=ls.to_range(span, lines),
        selection_range=ls.to_range(selection or span, lines),
        detail=detail,
        children=[],
    )


def _headings(lines: list[str], start: int = 0) -> list[tuple[int, int, str]]:
    found = []
    in_fence = False
    for number in range(start, len(lines)):
        line = lines[number]
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
            continue
        match = None if in_fence else _HEADING.match(line)
        if match:
            found.append((number, len(match.group(1)), match.group(2)))
    return found


def _append(
    roots: list[types.DocumentSymbol],
    parent: types.DocumentSymbol | None,
    child: types.DocumentSymbol,
) -> None:
    if parent is None:
        roots.append(child)
    else:
        parent.children = [*(parent.children or []), child]


def index_symbols(
    ls: MemoryServer, directory: MemoryDirectory, path: Path
) -> list[types.DocumentSymbol]:
    """Headings as namespaces, entries as files nested under the heading above them."""
    index = directory.index()
    lines = list(index.lines)
    roots: list[types.DocumentSymbol] = []
    stack: list[tuple[int, types.DocumentSymbol]] = []
    items: list[tuple[int, tuple[int, str] | IndexEntry]] = [
        (number, (level, title)) for number, level, title in _headings(lines)
    ]
    items += [(e.line, e) for e in index.entries]
    for number, item in sorted(items, key=lambda pair: pair[0]):
        whole = Span.on_line(number, 0, len(lines[number]))
        if isinstance(item, IndexEntry):
            symbol = _symbol(
                ls, lines, item.title, types.SymbolKind.File, whole, item.title_span, item.path
            )
            _append(roots, stack[-1][1] if stack else None, symbol)
            continue
        level, title = item
        symbol = _symbol(ls, lines, title, types.SymbolKind.Namespace, whole)
        while stack and stack[-1][0] >= level:
            stack.pop()
        _append(roots, stack[-1][1] if stack else None, symbol)
        stack.append((level, symbol))
    return roots


def topic_symbols(
    ls: MemoryServer, directory: MemoryDirectory, path: Path
) -> list[types.DocumentSymbol]:
    topic = directory.topic(path)
    if topic is None:
        return []
    lines = topic.text.split("\n")
    symbols: list[types.DocumentSymbol] = []
    fm = topic.frontmatter
    if fm is not None:
        end = fm.close_line if fm.close_line is not None else fm.open_line
        block = _symbol(
            ls,
            lines,
            "frontmatter",
            types.SymbolKind.Struct,
            Span(fm.open_line, 0, end, len(lines[end])),
            detail=topic.name,
        )
        for key, key_span in fm.key_spans.items():
            if "." in key:
                continue
            value = fm.value_spans.get(key)
            line_text = lines[key_span.start_line]
            field_symbol = _symbol(
                ls,
                lines,
                key,
                types.SymbolKind.Property,
                Span.on_line(key_span.start_line, 0, len(line_text)),
                key_span,
                line_text[value.start_col : value.end_col] if value else None,
            )
            _append(symbols, block, field_symbol)
        symbols.append(block)
    for number, _level, title in _headings(lines, topic.body_line):
        symbols.append(
            _symbol(
                ls,
                lines,
                title,
                types.SymbolKind.String,
                Span.on_line(number, 0, len(lines[number])),
            )
        )
    return symbols


async def document_symbol(
    ls: MemoryServer, params: types.DocumentSymbolParams
) -> list[types.DocumentSymbol] | None:
    found = ls.memory_document(params.text_document.uri)
    if found is None:
        return None
    directory, path = found
    if directory.is_index(path):
        return index_symbols(ls, directory, path)
    return topic_symbols(ls, directory, path)


def _matches(query: str, *fields: str | None) -> bool:
    """Case-insensitive: every query word appears in the name, description or path."""
    words = query.casefold().split()
    haystack = " ".join(f for f in fields if f).casefold()
    return all(word in haystack for word in words)


async def workspace_symbol(
    ls: MemoryServer, params: types.WorkspaceSymbolParams
) -> list[types.WorkspaceSymbol] | None:
    token = params.work_done_token
    progress = token is not None and ls.client_supports("window.work_done_progress")
    directories = list(ls.directories.values())
    if progress and token is not None:
        ls.work_done_progress.begin(
            token, types.WorkDoneProgressBegin(title="Searching memories", percentage=0)
        )
    symbols: list[types.WorkspaceSymbol] = []
    try:
        for number, directory in enumerate(directories):
            topics = await asyncio.to_thread(directory.topics)
            for topic in topics:
                name = topic.name or Path(topic.rel_path).stem
                if not _matches(params.query, name, topic.description, topic.rel_path):
                    continue
                symbols.append(
                    types.WorkspaceSymbol(
                        name=name,
                        kind=types.SymbolKind.File,
                        location=types.Location(
                            uri=ls.path_to_uri(topic.path),
                            range=types.Range(
                                start=types.Position(line=0, character=0),
                                end=types.Position(line=0, character=0),
                            ),
                        ),
                        container_name=topic.description or topic.rel_path,
                    )
                )
            if progress and token is not None:
                ls.work_done_progress.report(
                    token,
                    types.WorkDoneProgressReport(
                        message=str(directory.root),
                        percentage=int(100 * (number + 1) / max(1, len(directories))),
                    ),
                )
    finally:
        if progress and token is not None:
            ls.work_done_progress.end(token, types.WorkDoneProgressEnd(message="done"))
    return symbols[:MAX_WORKSPACE_SYMBOLS]


def register(server: MemoryServer) -> None:
    server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)(server.guard(document_symbol))
    server.feature(types.WORKSPACE_SYMBOL, types.WorkspaceSymbolOptions(work_done_progress=True))(
        server.guard(workspace_symbol)
    )
