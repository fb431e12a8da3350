"""memdir as an MCP server: the memory tool, recall, search, lint and the index for chat agents.

A thin adapter over the core: each tool calls what ``memdir tool``, ``memdir recall``, the
editor's search, ``memdir lint`` and ``memdir index`` call, and returns the same projections
(:mod:`memdir.projections`, snake_case as the CLI's ``--json``). Only ``memdir mcp`` imports this
module: the ``mcp`` SDK is an optional extra and heavy to import.

Errors a model can correct (a bad pattern, an unknown command, a memory tool failure) come back
as tool results with ``isError`` set, as MCP asks for tool execution and input errors, so the
model reads them; an unknown resource is a protocol error.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from pathlib import Path
from typing import Annotated, Any, Final, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from mcp.types import CallToolResult, Resource, TextContent, ToolAnnotations
from pydantic import Field

from memdir import __version__
from memdir import constants as C
from memdir.config import load_settings
from memdir.memory_tool import MEMORIES_ROOT, MemdirMemoryTool
from memdir.projections import cli_json, index_summary, recall_view
from memdir.search import InvalidPatternError, compile_pattern, glob_matcher, search_files
from memdir.surface import Session
from memdir.write import MemoryWriter, WriteError

SERVER_NAME: Final = "memdir"
INDEX_URI: Final = "memdir://index"
#: Topic files: ``memdir://memory/<path relative to the memory dir>``.
MEMORY_URI_PREFIX: Final = "memdir://memory/"
#: Recall sessions kept at once (the oldest is forgotten first): an HTTP server may see many.
MAX_SESSIONS: Final = 256
#: The session a recall without ``session_id`` uses: over stdio one process is one agent session.
DEFAULT_SESSION: Final = ""

_WRITE_COMMANDS = ("create", "str_replace", "insert", "delete", "rename")
#: The fields of each command that put new text into the memory dir.

_MEMORY_DESCRIPTION = """\
Claude's memory tool (memory_20250818) over this project's memory directory, mapped to \
/memories: `view` lists a directory or shows a file with line numbers; `create` writes a new \
file (never overwrites); `str_replace` replaces one unique occurrence; `insert` adds text \
after a line (0 = top); `delete` removes a file or folder; `rename` moves one. Results and \
errors are the API memory tool's own strings. Memories are markdown files with YAML \
frontmatter (name, description, metadata.type), one fact per file; MEMORY.md is the index. \
Writes that would store a credential are refused."""

_READ_ONLY_MEMORY_DESCRIPTION = """\
Claude's memory tool (memory_20250818) over this project's memory directory, mapped to \
/memories, read-only: `view` lists a directory (two levels) or shows a file with line numbers \
(`view_range` [start, end], end -1 for the last line)."""

_RECALL_DESCRIPTION = """\
Recall the memories relevant to a message: exactly what Claude Code's relevance prefetch \
would inject now (at most 5 files a turn, within the session budget, never a file already \
surfaced in the same session). Returns the injected text."""


#: The ``_meta`` key of a recall's details (what was selected, left out, the budget).
RECALL_META_KEY: Final = "memdir/recall"


def _text_result(
    text: str, *, is_error: bool = False, data: Any = None, meta: dict[str, Any] | None = None
) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=data,
        is_error=is_error,
        _meta=meta,
    )


class MemdirMCP:
    """The tools and resources of one memory dir; :meth:`server` builds the MCP server."""

    def __init__(self, memory_dir: Path, *, read_only: bool = False) -> None:
        self.root = memory_dir
        self.read_only = read_only
        self.sessions: OrderedDict[str, Session] = OrderedDict()

    # -- the memory tool ------------------------------------------------------------------------

    async def memory(self, data: dict[str, Any]) -> CallToolResult:
        command = data.get("command")
        if self.read_only and command in _WRITE_COMMANDS:
            return _text_result(
                f"Error: this memdir server is read-only; `{command}` is not available "
                "(only `view` is)",
                is_error=True,
            )
        # One tool per call: its change log is not needed here and would only grow.
        result = await MemdirMemoryTool(self.root).arun(data)
        return _text_result(result.text, is_error=result.is_error)

    # -- recall (path B) ------------------------------------------------------------------------

    def session(self, session_id: str) -> Session:
        session = self.sessions.get(session_id)
        if session is None:
            session = self.sessions[session_id] = Session()
            while len(self.sessions) > MAX_SESSIONS:
                self.sessions.popitem(last=False)
        self.sessions.move_to_end(session_id)
        return session

    async def recall(
        self, query: str, recent_tools: list[str], session_id: str | None
    ) -> CallToolResult:
        from memdir.recall import prefetch  # the selector, and with a key the anthropic SDK

        if not query.strip():
            raise ToolError("`query` must not be empty: pass the user's message")
        session = self.session(session_id or DEFAULT_SESSION)
        result = await prefetch(query, self.root, session, recent_tools)
        if result.attachment:
            text = result.attachment
        elif not result.triggered:
            text = f"No memories recalled: {result.reason}."
        else:
            text = "No memories recalled: none relevant that this session has not seen."
        # The details go in `_meta`, not `structuredContent`: Claude Code shows the model the
        # structured content instead of the text when there is some, and the model must get
        # the memories exactly as path B injects them.
        return _text_result(text, meta={RECALL_META_KEY: cli_json(recall_view(result))})

    # -- search, lint, index --------------------------------------------------------------------

    def search(self, pattern: str, glob: str, ignore_case: bool) -> CallToolResult:
        from memdir.scan import scan
        from memdir.textio import read_text

        try:
            regex = compile_pattern(pattern, ignore_case=ignore_case)
        except InvalidPatternError as exc:
            raise ToolError(f"`pattern` is not a valid regular expression: {exc}") from None
        try:
            wanted = glob_matcher(glob)
        except InvalidPatternError as exc:
            raise ToolError(f"`glob`: {exc}") from None
        paths = [C.INDEX_FILENAME] if (self.root / C.INDEX_FILENAME).is_file() else []
        paths += [h.rel_path for h in scan(self.root).all_files]

        def read(rel: str) -> str | None:
            result = read_text(self.root / rel)
            return None if result.binary else result.text

        found = search_files([p for p in paths if wanted(p)], read, regex)
        data = {"matches": cli_json(found.matches), "truncated": found.truncated}
        lines = [f"{m.path}:{m.line + 1}:{m.character + 1}: {m.text}" for m in found.matches]
        if found.truncated:
            lines.append(f"[stopped after {len(found.matches)} matches]")
        return _text_result("\n".join(lines) if lines else "No matches.", data=data)

    def lint(self) -> CallToolResult:
        from memdir.lint.formats import Section, format_text
        from memdir.lint.state import DirState

        state = DirState(self.root, load_settings(self.root))
        state.refresh()
        result = state.lint()
        findings = [d.to_json() for d in result.diagnostics]
        # The command line's text format, one line per finding.
        text = format_text([Section(result)]).rstrip("\n")
        text = text or f"No problems in {result.files} topic files."
        return _text_result(text, data={"files": result.files, "diagnostics": findings})

    def index(self) -> CallToolResult:
        from memdir.index import load_index

        index = load_index(self.root, load_settings(self.root).agent_target)
        exists = index.exists or (self.root / C.INDEX_FILENAME).exists()
        summary = index_summary(self.root, index, exists=exists)
        data = cli_json(summary)
        data["level"] = summary.level  # the CLI leaves it out; a model can act on it
        head = (
            f"MEMORY.md: {summary.lines} lines, {summary.chars} characters; path A loads "
            f"{summary.loaded_lines} lines ({summary.max_lines} and {summary.max_chars} are the "
            "caps)."
        )
        if summary.cut_entries:
            cut = ", ".join(e.path or e.title for e in summary.cut_entries)
            head += f" Cut, never shown to the agent: {cut}."
        return _text_result(f"{head}\n\n{summary.text}", data=data)

    # -- resources ------------------------------------------------------------------------------

    def topic_paths(self) -> list[str]:
        from memdir.scan import scan

        return sorted(h.rel_path for h in scan(self.root).all_files)

    def read_file(self, rel: str) -> str:
        try:
            return MemoryWriter(self.root).read(rel)
        except WriteError as exc:
            raise ResourceNotFoundError(f"no memory {rel!r}: {exc.message}") from None

    # -- the server -----------------------------------------------------------------------------

    def server(self) -> MCPServer:
        return _build(self)


class _Server(MCPServer):
    """Lists each topic file as a resource (they come and go, so they are listed on demand)."""

    memdir: MemdirMCP

    async def list_resources(self) -> list[Resource]:
        static = await super().list_resources()
        paths = await asyncio.to_thread(self.memdir.topic_paths)
        return static + [
            Resource(
                uri=MEMORY_URI_PREFIX + rel,
                name=rel,
                description=f"The memory file {rel}",
                mime_type="text/markdown",
            )
            for rel in paths
        ]


_PathArg = Annotated[
    str,
    Field(description=f"A path under {MEMORIES_ROOT}, e.g. /memories/user_role.md"),
]


def _build(memdir: MemdirMCP) -> MCPServer:
    mode = "read-only" if memdir.read_only else "read-write"
    server = _Server(
        SERVER_NAME,
        version=__version__,
        # The SDK logs each failed call at INFO on stderr; a client shows stderr as errors.
        log_level="WARNING",
        instructions=(
            f"memdir serves the agent memory directory {memdir.root} ({mode}). Call "
            "memory_recall with the user's message to get the memories relevant to it; use the "
            "memory tool to view and (unless read-only) edit memories."
        ),
    )
    server.memdir = memdir

    if memdir.read_only:

        async def memory_view(
            command: Annotated[Literal["view"], Field(description="Only `view` here")],
            path: _PathArg = MEMORIES_ROOT,
            view_range: Annotated[
                list[int] | None,
                Field(description="[start, end] lines to show (1-based, end -1: to the end)"),
            ] = None,
        ) -> CallToolResult:
            data = {"command": command, "path": path, "view_range": view_range}
            return await memdir.memory({k: v for k, v in data.items() if v is not None})

        server.add_tool(
            memory_view,
            name="memory",
            description=_READ_ONLY_MEMORY_DESCRIPTION,
            annotations=ToolAnnotations(
                title="Memory (read-only)", read_only_hint=True, idempotent_hint=True
            ),
        )
    else:

        async def memory(
            command: Annotated[
                Literal["view", "create", "str_replace", "insert", "delete", "rename"],
                Field(description="The memory command"),
            ],
            path: Annotated[
                str | None,
                Field(description="view, create, str_replace, insert, delete: a /memories path"),
            ] = None,
            view_range: Annotated[
                list[int] | None, Field(description="view: [start, end] (end -1: to the end)")
            ] = None,
            file_text: Annotated[str | None, Field(description="create: the content")] = None,
            old_str: Annotated[
                str | None, Field(description="str_replace: text that occurs exactly once")
            ] = None,
            new_str: Annotated[str | None, Field(description="str_replace: its replacement")] = (
                None
            ),
            insert_line: Annotated[
                int | None, Field(description="insert: insert after this line (0: at the top)")
            ] = None,
            insert_text: Annotated[str | None, Field(description="insert: the text")] = None,
            old_path: Annotated[str | None, Field(description="rename: the path to move")] = None,
            new_path: Annotated[str | None, Field(description="rename: where to")] = None,
        ) -> CallToolResult:
            data = {
                "command": command,
                "path": path,
                "view_range": view_range,
                "file_text": file_text,
                "old_str": old_str,
                "new_str": new_str,
                "insert_line": insert_line,
                "insert_text": insert_text,
                "old_path": old_path,
                "new_path": new_path,
            }
            return await memdir.memory({k: v for k, v in data.items() if v is not None})

        server.add_tool(
            memory,
            name="memory",
            description=_MEMORY_DESCRIPTION,
            annotations=ToolAnnotations(
                title="Memory", read_only_hint=False, destructive_hint=True, idempotent_hint=False
            ),
        )

    async def memory_recall(
        query: Annotated[str, Field(description="The user's message to recall memories for")],
        recent_tools: Annotated[
            list[str] | None,
            Field(description="Tools used successfully in recent turns (their docs are skipped)"),
        ] = None,
        session_id: Annotated[
            str | None,
            Field(description="The conversation's id: dedupe and budget are kept per session"),
        ] = None,
    ) -> CallToolResult:
        return await memdir.recall(query, recent_tools or [], session_id)

    server.add_tool(
        memory_recall,
        name="memory_recall",
        description=_RECALL_DESCRIPTION,
        # Not idempotent: a memory surfaced once is not surfaced again in the same session.
        annotations=ToolAnnotations(
            title="Recall memories", read_only_hint=True, idempotent_hint=False
        ),
    )

    async def memory_search(
        pattern: Annotated[str, Field(description="A regular expression (Python syntax)")],
        glob: Annotated[
            str, Field(description="Which files: a glob over paths relative to the memory dir")
        ] = "**/*.md",
        ignore_case: Annotated[bool, Field(description="Match case-insensitively")] = False,
    ) -> CallToolResult:
        return await asyncio.to_thread(memdir.search, pattern, glob, ignore_case)

    server.add_tool(
        memory_search,
        name="memory_search",
        description=(
            "Search the memory files (MEMORY.md and the topic files) for lines matching a "
            "regular expression; returns path:line:column: text per match (at most 500)."
        ),
        annotations=ToolAnnotations(
            title="Search memories", read_only_hint=True, idempotent_hint=True
        ),
    )

    async def memory_lint() -> CallToolResult:
        return await asyncio.to_thread(memdir.lint)

    server.add_tool(
        memory_lint,
        name="memory_lint",
        description=(
            "Check the memory directory as `memdir lint` does: index entries past the load cap "
            "or pointing nowhere, files never indexed, broken frontmatter, vague descriptions, "
            "duplicates, secrets. Returns each finding (path, line, code, severity, message)."
        ),
        annotations=ToolAnnotations(
            title="Lint memories", read_only_hint=True, idempotent_hint=True
        ),
    )

    async def memory_index() -> CallToolResult:
        return await asyncio.to_thread(memdir.index)

    server.add_tool(
        memory_index,
        name="memory_index",
        description=(
            "What Claude Code injects of MEMORY.md at the start of a session (path A): the "
            "loaded text, its size against the caps (200 lines, 25,000 characters) and the "
            "index entries the cap cuts."
        ),
        annotations=ToolAnnotations(
            title="Memory index", read_only_hint=True, idempotent_hint=True
        ),
    )

    @server.resource(
        INDEX_URI,
        name="MEMORY.md",
        description="The memory index, MEMORY.md, as stored",
        mime_type="text/markdown",
    )
    async def index_resource() -> str:
        if not (memdir.root / C.INDEX_FILENAME).is_file():
            return ""
        return await asyncio.to_thread(memdir.read_file, C.INDEX_FILENAME)

    @server.resource(
        MEMORY_URI_PREFIX + "{+path}",
        name="memory file",
        description="A file of the memory directory, by its path relative to it",
        mime_type="text/markdown",
    )
    async def memory_resource(path: str) -> str:
        return await asyncio.to_thread(memdir.read_file, path)

    return server


def build_server(memory_dir: Path, *, read_only: bool = False) -> MCPServer:
    """The MCP server for ``memory_dir`` (run it, or connect a client to it in process)."""
    return MemdirMCP(memory_dir, read_only=read_only).server()
