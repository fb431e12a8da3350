"""Navigation and feedback: links, definition, hover, references, rename, the budget lens.

An index entry or a ``[[name]]`` link leads to its topic file; a topic file leads back to the
index lines and links that reach it. Hover answers the question a memory's author cannot see
from the file: will the agent ever see this memory? In the index and loaded by path A, or cut
off by the 200-line / 25,000-character cap; among the 200 newest files path B may select from;
injected whole or cut at 200 lines / 4096 bytes. The code lens on MEMORY.md's first line shows how
much of the load cap is used. Hover also tells how fresh a memory is: on its frontmatter, when it
was last verified and when it is due again; on a path or identifier its body cites, what the
project says of it (when the memory dir's project is known).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import posixpath
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types
from memdir import constants as C
from memdir.agent.index import Index
from memdir.agent.manifest import iso_mtime
from memdir.fixes.plan import entries_linking, rename_edits
from memdir.model import IndexEntry, Span, TopicFile, WikiLink
from memdir.textio import not_read

from memdir_lsp.convert import changes_edit, location, whole_line
from memdir_lsp.directory import MemoryDirectory
from memdir_lsp.protocol import CMD_SHOW_INDEX_BUDGET
from memdir_lsp.server import MemoryServer

if TYPE_CHECKING:
    from memdir.faces.visibility import Visibility

# memdir.faces.freshness and memdir.faces.visibility load the rules and the projections: imported
# where used, after initialize is answered.

_MD_LINK = re.compile(r"\[([^\]\n]*)\]\(([^()\s]+)\)")
#: Lines of a topic's body shown in a hover.
HOVER_BODY_LINES = 6


# --- what is under the cursor ----------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """A link under the cursor and the file it leads to (which may not exist)."""

    span: Span
    path: Path
    entry: IndexEntry | None = None
    wiki: WikiLink | None = None


def _in(span: Span, line: int, col: int) -> bool:
    return span.start_line == line and span.start_col <= col <= span.end_col


def _wiki_targets(directory: MemoryDirectory, link: WikiLink) -> list[TopicFile]:
    return directory.topic_names().get(link.name, [])


def links_in(directory: MemoryDirectory, path: Path) -> list[Target]:
    """Every link of a memory document that resolves to a file path."""
    targets: list[Target] = []
    if directory.is_index(path):
        index = directory.index()
        for entry in index.entries:
            if entry.path and "://" not in entry.target:
                targets.append(Target(entry.target_span, directory.root / entry.path, entry=entry))
        return targets
    topic = directory.topic(path)
    if topic is None:
        return targets
    for link in topic.links:
        for found in _wiki_targets(directory, link)[:1]:
            targets.append(Target(link.span, found.path, wiki=link))
    base = path.parent
    for number, line in enumerate(topic.text.split("\n")):
        for match in _MD_LINK.finditer(line):
            raw = match.group(2)
            if "://" in raw or raw.startswith(("#", "mailto:")):
                continue
            resolved = Path(posixpath.normpath(str(base / raw.split("#", 1)[0])))
            if resolved.suffix == ".md" and directory.contains(resolved):
                targets.append(Target(Span.on_line(number, match.start(2), match.end(2)), resolved))
    return targets


def target_at(directory: MemoryDirectory, path: Path, line: int, col: int) -> Target | None:
    if directory.is_index(path):
        index = directory.index()
        for entry in index.entries:
            if entry.line == line and entry.path:
                # Anywhere on the entry line: title, link or hook.
                return Target(entry.target_span, directory.root / entry.path, entry=entry)
        return None
    for target in links_in(directory, path):
        if _in(target.span, line, col):
            return target
    topic = directory.topic(path)
    if topic is not None:
        for link in topic.links:
            if _in(link.span, line, col):
                # A [[name]] with no memory of that name yet: intended, but nowhere to go.
                return Target(link.span, directory.root / f"{link.name}.md", wiki=link)
    return None


def _cursor(
    ls: MemoryServer, uri: str, position: types.Position
) -> tuple[MemoryDirectory, Path, int, Target | None] | None:
    """The memory document at the cursor: its directory, path, line, and the link under it."""
    found = ls.memory_document(uri)
    if found is None:
        return None
    directory, path = found
    line, col = ls.from_position(position, ls.lines_of(path))
    return directory, path, line, target_at(directory, path, line, col)


# --- visibility ------------------------------------------------------------------------------


def visibility_of(directory: MemoryDirectory, rel_path: str) -> Visibility:
    """Will the agent see ``rel_path``, as the editor shows the directory now."""
    from memdir.faces.visibility import prefetch_ranks, visibility

    result = directory.scan()
    text = directory.text(directory.root / rel_path)
    return visibility(
        directory.index(), rel_path, text, prefetch_ranks(result), len(result.candidates)
    )


def describe(directory: MemoryDirectory, rel_path: str) -> str:
    """The hover card of a topic file: frontmatter, first lines, and who will see it."""
    path = directory.root / rel_path
    # exists(), not is_file(): a FIFO named like a memory gets its message, not "does not exist".
    topic = directory.topic(path) if path.exists() or directory.text(path) is not None else None
    if topic is None:
        return f"**{rel_path}** does not exist yet."
    refused = not_read(topic.problems)
    if refused is not None:
        # What lint says of it (MEM113, MEM114), never what lies behind it.
        return f"**{rel_path}** is not read: {refused.message}."
    vis = visibility_of(directory, rel_path)
    title = topic.name or Path(rel_path).stem
    head = f"**{title}**" + (f" · `{topic.type}`" if topic.type else "") + f" · `{rel_path}`"
    parts = [head]
    if topic.description:
        parts.append(f"> {topic.description}")
    if topic.raw_type and not topic.type:
        parts.append(f"type `{topic.raw_type}` is not one of {', '.join(C.MEMORY_TYPES)}")
    body = [line for line in topic.body.split("\n") if line.strip()][:HOVER_BODY_LINES]
    if body:
        parts.append("```markdown\n" + "\n".join(body) + "\n```")
    parts.append(_visibility_lines(vis, topic))
    return "\n\n".join(parts)


def _visibility_lines(vis: Visibility, topic: TopicFile) -> str:
    if vis.index == "loaded":
        lines_text = ", ".join(str(line + 1) for line in vis.index_lines)
        index = f"in MEMORY.md (line {lines_text}), loaded by path A"
    elif vis.index == "cut":
        index = "in MEMORY.md but **past the load cap**: path A never shows it"
    else:
        index = "**not in MEMORY.md**: invisible to path A (index injection)"
    if vis.window_rank is not None:
        window = f"candidate #{vis.window_rank} of {vis.window_size} for path B (newest first)"
    else:
        window = f"**outside the {C.SCAN_MAX_FILES}-file prefetch window**: path B never selects it"
    if vis.truncated_reason:
        injection = f"injected **truncated** ({vis.truncated_reason})"
    else:
        injection = f"injected whole ({vis.bytes:,} bytes)"
    modified = f"modified {iso_mtime(topic.mtime)}" if topic.mtime else "unsaved"
    return "\n".join(f"- {item}" for item in (index, window, injection, modified))


# --- handlers --------------------------------------------------------------------------------


async def document_link(
    ls: MemoryServer, params: types.DocumentLinkParams
) -> list[types.DocumentLink] | None:
    found = ls.memory_document(params.text_document.uri)
    if found is None:
        return None
    directory, path = found
    lines = ls.lines_of(path)
    tooltips = ls.client_supports("text_document.document_link.tooltip_support")
    links: list[types.DocumentLink] = []
    for target in await asyncio.to_thread(links_in, directory, path):
        if not target.path.exists():
            continue
        links.append(
            types.DocumentLink(
                range=ls.to_range(target.span, lines),
                target=ls.path_to_uri(target.path),
                tooltip=directory.rel(target.path) if tooltips else None,
            )
        )
    return links


async def definition(
    ls: MemoryServer, params: types.DefinitionParams
) -> list[types.Location] | None:
    cursor = _cursor(ls, params.text_document.uri, params.position)
    if cursor is None:
        return None
    directory, _, _, target = cursor
    if target is None or not target.path.exists():
        return None
    if target.wiki is not None:
        # Several memories may share a name: offer them all.
        paths = [t.path for t in _wiki_targets(directory, target.wiki)] or [target.path]
    else:
        paths = [target.path]
    return [location(ls, p, Span(0, 0, 0, 0)) for p in paths]


async def hover(ls: MemoryServer, params: types.HoverParams) -> types.Hover | None:
    cursor = _cursor(ls, params.text_document.uri, params.position)
    if cursor is None:
        return None
    directory, path, line, target = cursor
    lines = ls.lines_of(path)
    col = ls.from_position(params.position, lines)[1]
    full_line = Span.on_line(line, 0, len(lines[line]))
    today = ls.today()
    if target is not None:
        subject, span = target.path, full_line if target.entry is not None else target.span
    elif _on_frontmatter_open(directory, path, line):
        # The frontmatter's first line answers "does the agent see this file?" and "is it
        # still true?".
        subject, span = path, full_line
    else:
        found = await asyncio.to_thread(freshness_hover, directory, path, line, col, today)
        if found is None:
            return None
        text, span = found
        return _hover(ls, text, span, lines)
    text = await asyncio.to_thread(describe, directory, directory.rel(subject))
    if subject == path:
        topic = directory.topic(path)
        if topic is not None and not_read(topic.problems) is None:
            from memdir.faces.freshness import verification_text

            verify_after = directory.settings.verify_after_days
            text += "\n\n" + verification_text(topic, today, verify_after)
    return _hover(ls, text, span, lines)


def _hover(ls: MemoryServer, text: str, span: Span, lines: list[str]) -> types.Hover:
    return types.Hover(
        contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text),
        range=ls.to_range(span, lines),
    )


def freshness_hover(
    directory: MemoryDirectory, path: Path, line: int, col: int, today: dt.date
) -> tuple[str, Span] | None:
    """On a frontmatter line: when the memory was verified; on a cited path or identifier in
    its body: what the project says of it (nothing when no project is known yet)."""
    from memdir.faces.freshness import citation_at, citation_text, verification_text

    if directory.is_index(path):
        return None
    topic = directory.topic(path)
    if topic is None:
        return None
    fm = topic.frontmatter
    if fm is not None and fm.close_line is not None and fm.open_line <= line <= fm.close_line:
        text = verification_text(topic, today, directory.settings.verify_after_days)
        return text, Span.on_line(line, 0, len(topic.text.split("\n")[line]))
    citation = citation_at(topic, line, col)
    if citation is None:
        return None
    from memdir.lint.rules.base import offset_span

    session = directory.session
    with session.project_lock:
        project = session.project
        if project is None:
            return None
        text = citation_text(project, topic, citation)
    return text, offset_span(topic.text, citation.start, citation.end)


def _on_frontmatter_open(directory: MemoryDirectory, path: Path, line: int) -> bool:
    if directory.is_index(path):
        return False
    topic = directory.topic(path)
    fm = topic.frontmatter if topic is not None else None
    return fm is not None and line == fm.open_line


async def references(
    ls: MemoryServer, params: types.ReferenceParams
) -> list[types.Location] | None:
    cursor = _cursor(ls, params.text_document.uri, params.position)
    if cursor is None:
        return None
    directory, path, _, target = cursor
    if directory.is_index(path):
        if target is None:
            return None
        subject = target.path
    else:
        subject = target.path if target is not None and target.wiki is not None else path
    return await asyncio.to_thread(_references_to, ls, directory, subject)


def _references_to(
    ls: MemoryServer, directory: MemoryDirectory, subject: Path
) -> list[types.Location]:
    rel = directory.rel(subject)
    found: list[types.Location] = []
    index = directory.index()
    for entry in entries_linking(index, rel):
        found.append(
            types.Location(
                uri=ls.path_to_uri(index.path), range=whole_line(ls, index.path, entry.line)
            )
        )
    topic = directory.topic(subject)
    names = {Path(rel).stem}
    if topic is not None and topic.name:
        names.add(topic.name)
    for other in directory.topics():
        for link in other.links:
            if link.name in names and other.path != subject:
                found.append(location(ls, other.path, link.span))
    return found


async def code_lens(ls: MemoryServer, params: types.CodeLensParams) -> list[types.CodeLens] | None:
    found = ls.memory_document(params.text_document.uri)
    if found is None:
        return None
    directory, path = found
    if not directory.is_index(path):
        return None
    index = directory.index()
    return [
        types.CodeLens(
            range=types.Range(
                start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)
            ),
            command=types.Command(
                title=budget_text(index),
                command=CMD_SHOW_INDEX_BUDGET,
                arguments=[params.text_document.uri],
            ),
        )
    ]


def budget_text(index: Index) -> str:
    """``142/200 lines · 18,310/25,000 chars``, plus what the cap cuts when it does."""
    load = index.load
    text = (
        f"{load.line_count}/{C.INDEX_MAX_LINES} lines · "
        f"{load.char_count:,}/{C.INDEX_MAX_CHARS:,} chars"
    )
    if load.truncated:
        text += f" · over the cap: {len(index.cut_entries)} entries never loaded"
    return text


async def will_rename_files(
    ls: MemoryServer, params: types.RenameFilesParams
) -> types.WorkspaceEdit | None:
    edits = []
    for item in params.files:
        old = ls.uri_to_path(item.old_uri)
        new = ls.uri_to_path(item.new_uri)
        if old is None or new is None:
            continue
        directory = ls.directory_for(old)
        if directory is None or not directory.contains(new) or directory.is_index(old):
            continue
        if old == directory.root:
            continue
        index = directory.index()
        topics = await asyncio.to_thread(directory.topics)
        edits += rename_edits(index, topics, directory.rel(old), directory.rel(new))
    return changes_edit(ls, edits)


async def show_index_budget(ls: MemoryServer, *args: object) -> dict[str, object] | None:
    """The lens's command: the budget summary of the index (clients may show it)."""
    uri = args[0] if args and isinstance(args[0], str) else None
    directory = None
    if uri is not None:
        found = ls.memory_document(uri)
        directory = found[0] if found else None
    directory = directory or ls.default_directory()
    if directory is None:
        return None
    index = directory.index()
    return {"summary": budget_text(index), "truncated": index.load.truncated}


def register(server: MemoryServer) -> None:
    g = server.guard
    server.feature(types.TEXT_DOCUMENT_DOCUMENT_LINK, types.DocumentLinkOptions())(g(document_link))
    server.feature(types.TEXT_DOCUMENT_DEFINITION)(g(definition))
    server.feature(types.TEXT_DOCUMENT_HOVER)(g(hover))
    server.feature(types.TEXT_DOCUMENT_REFERENCES)(g(references))
    server.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions())(g(code_lens))
    server.feature(
        types.WORKSPACE_WILL_RENAME_FILES,
        types.FileOperationRegistrationOptions(
            filters=[
                types.FileOperationFilter(
                    pattern=types.FileOperationPattern(
                        glob="**/*.md", matches=types.FileOperationPatternKind.File
                    )
                ),
                types.FileOperationFilter(
                    pattern=types.FileOperationPattern(
                        glob="**", matches=types.FileOperationPatternKind.Folder
                    )
                ),
            ]
        ),
    )(g(will_rename_files))
    server.command(CMD_SHOW_INDEX_BUDGET)(g(show_index_budget))
