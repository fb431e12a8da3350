"""memdir as an MCP server: the memory tool, recall, search, lint and the index for chat agents.

A thin adapter over the core: each tool calls what ``memdir tool``, ``memdir recall``, the
editor's search, ``memdir lint`` and ``memdir index`` call, and returns the same projections
(:mod:`memdir.faces.projections`, snake_case as the CLI's ``--json``). Only ``memdir mcp`` imports
this module: the ``mcp`` SDK is an optional extra and heavy to import.

Errors a model can correct (a bad pattern, an unknown command, a memory tool failure) come back
as tool results with ``isError`` set, as MCP asks for tool execution and input errors, so the
model reads them; an unknown resource is a protocol error.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Final, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import (
    ResourceNotFoundError,
    ToolError,
    UnexpectedToolError,
)
from mcp.types import CallToolResult, InputRequiredResult, Resource, TextContent, ToolAnnotations
from pydantic import Field, ValidationError
from starlette.applications import Starlette

from memdir import __version__
from memdir import constants as C
from memdir.config import load_settings
from memdir.faces.cli.common import describe_os_error, shorten
from memdir.faces.mcp_transport import (
    HTTP_SESSION_IDLE_SECONDS,
    MAX_HTTP_SESSIONS,
    http_app,
    serve_stdio,
    valid_unicode_out,
)
from memdir.recall.surface import Session, SessionStore
from memdir.writing.memory_commands import MEMORIES_ROOT, WRITE_COMMANDS

if TYPE_CHECKING:
    from memdir.recall.prefetch import RecallResult

logger = logging.getLogger(__name__)

SERVER_NAME: Final = C.MCP_SERVER_NAME
#: The first (default) memory dir's index and files.
INDEX_URI: Final = "memdir://index"
#: Topic files: ``memdir://memory/<path relative to the memory dir>``.
MEMORY_URI_PREFIX: Final = "memdir://memory/"
#: When several dirs are served, each one's: ``memdir://dir/<label>/index`` and
#: ``memdir://dir/<label>/memory/<path>``.
DIR_URI_PREFIX: Final = "memdir://dir/"
#: The session a recall without ``session_id`` uses: over stdio one process is one agent session.
DEFAULT_SESSION: Final = ""
#: Longer than any path (Linux's PATH_MAX): a ``directory`` this long names no served dir.
MAX_PATH_CHARS: Final = 4096

# What the model reads (docs/mcp.md, "What the model sees"): Claude Code shows the server's
# instructions in a system message, and the tool descriptions once a tool is loaded (at once
# with its tool search off), so each description stands alone. Every request carries them:
# short. Arguments are named in backticks, and only arguments (tests/mcp/test_mcp_text.py).
_TYPES = ", ".join(C.MEMORY_TYPES[:-1]) + f" or {C.MEMORY_TYPES[-1]}"
_MEMORY_FILES = (
    f"Markdown files under {MEMORIES_ROOT}, one fact per file, each opening with YAML "
    "frontmatter: name; description (one line: when the memory is relevant); type "
    f"({_TYPES})."
)
_VIEW_FIELDS = (
    "`path` (a file, or a folder to list); optional `view_range` [first, last], 1-based, "
    "last -1 for the end"
)

_MEMORY_DESCRIPTION = f"""\
The user's long-term memory for this project: {_MEMORY_FILES} memdir keeps \
{C.INDEX_FILENAME}'s entry for each file it writes.
Each `command` takes:
- view: {_VIEW_FIELDS}
- create: `path`, `file_text` (the whole file; never overwrites one)
- str_replace: `path`, `old_str` (must occur exactly once), `new_str`
- insert: `path`, `insert_line` (the text goes after this line; 0 for the top), `insert_text`
- delete: `path` (a file, or a folder holding only memories)
- rename: `old_path`, `new_path`
Results and errors are those of Claude's memory tool; a write that would store a credential \
is refused."""

_READ_ONLY_MEMORY_DESCRIPTION = f"""\
The user's long-term memory for this project, read-only: {_MEMORY_FILES}
`command` is view: {_VIEW_FIELDS}."""

_RECALL_DESCRIPTION = f"""\
Call before answering a question about the user, the project or past decisions: returns the \
memories relevant to `query` that this conversation has not been shown yet (at most \
{C.SELECT_MAX_FILES}), as Claude Code's own memory recall injects them, or why there are none."""

_SEARCH_DESCRIPTION = """\
Lines of the memory files (MEMORY.md and the topic files) matching `pattern`, a Python \
regular expression: path:line:column: text per match, 1-based as the memory tool's view \
numbers lines (at most 500). Use it to find a memory before editing or creating one."""


#: The ``_meta`` key of a recall's details (what was selected, left out, the budget).
RECALL_META_KEY: Final = "memdir/recall"


@dataclass(frozen=True)
class ServedDir:
    """A memory dir this server serves, and the short name tools and URIs use for it."""

    label: str
    root: Path


def served_dirs(roots: Sequence[Path]) -> list[ServedDir]:
    """Each dir once, named for its project: ``<project>/memory`` is ``<project>``.

    Agent memory dirs are all called ``memory``, so the folder above says which project; a
    name two dirs share gets ``-2``, ``-3``.
    """
    dirs: list[ServedDir] = []
    seen: set[str] = set()
    labels: set[str] = set()
    for root in roots:
        key = os.path.realpath(root)
        if key in seen:
            continue
        seen.add(key)
        base = root.parent.name if root.name == "memory" and root.parent.name else root.name
        base = base or "memory"
        label, n = base, 1
        while label in labels:
            n += 1
            label = f"{base}-{n}"
        labels.add(label)
        dirs.append(ServedDir(label, root))
    return dirs


def argument_problems(exc: ValidationError) -> list[str]:
    """Pydantic's report as phrases a model can act on (no type codes, no URLs)."""
    problems = []
    for error in exc.errors():
        name = ".".join(str(part) for part in error["loc"]) or "arguments"
        if error["type"] == "missing":
            problems.append(f"`{name}` is required")
        else:
            # The input as sent, kept short: it may be megabytes.
            problems.append(f"`{name}`: {error['msg']} (got {shorten(repr(error['input']), 80)})")
    return problems


def _text_result(
    text: str, *, is_error: bool = False, data: Any = None, meta: dict[str, Any] | None = None
) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=data,
        is_error=is_error,
        _meta=meta,
    )


def read_only_refusal(command: str) -> CallToolResult:
    return _text_result(
        f"Error: this memdir server is read-only; `{command}` is not available (only `view` is)",
        is_error=True,
    )


class MemdirMCP:
    """The tools and resources of the served memory dirs; :meth:`server` builds the MCP server.

    Every tool takes an optional ``directory`` (a label or a path); without it the first dir
    is meant, so a server of one dir reads as if there were no choice.

    With ``agent_sessions`` (a server over stdio, started by one agent process) a recall
    without ``session_id`` belongs to the agent's session when the agent names it
    (:func:`memdir.recall.sessions.agent_session_id`): it is kept on disk with the prompt
    hook's, so neither gives a memory the other already gave. Otherwise sessions are kept in
    memory (:class:`SessionStore`).
    """

    def __init__(
        self,
        memory_dirs: Sequence[Path],
        *,
        read_only: bool = False,
        clock: Callable[[], float] = time.monotonic,
        agent_sessions: bool = False,
        environ: Mapping[str, str] | None = None,
        home: Path | None = None,
    ) -> None:
        if not memory_dirs:
            raise ValueError("memdir mcp serves at least one memory dir")
        self.dirs = served_dirs(memory_dirs)
        self.read_only = read_only
        #: Recall sessions by (dir, session id), bounded in number and idle time.
        self.sessions = SessionStore(clock=clock)
        #: The agent process that started this server (its parent) and when: which session it
        #: is in is asked at each recall, since it changes (``/clear``).
        self.agent: tuple[int, float] | None = (
            (os.getppid(), time.time()) if agent_sessions else None
        )
        self.environ = os.environ if environ is None else environ
        self.home = home

    @property
    def root(self) -> Path:
        """The default memory dir: the first one given."""
        return self.dirs[0].root

    def pick(self, directory: str | None) -> Path:
        """The memory dir a tool call means: by label or by path, the first without either."""
        if directory is None or not directory.strip():
            return self.root
        for served in self.dirs:
            if directory == served.label:
                return served.root
        wanted = None
        # Longer than any path can be: resolving it would take seconds (a stat per component).
        if len(directory) <= MAX_PATH_CHARS:
            # A NUL byte, a name the file system refuses: not a served dir either.
            with contextlib.suppress(ValueError, OSError):
                wanted = os.path.realpath(os.path.expanduser(directory))
        for served in self.dirs:
            if wanted == os.path.realpath(served.root):
                return served.root
        choices = ", ".join(f"{d.label} ({d.root})" for d in self.dirs)
        raise ToolError(
            f"`directory` {shorten(repr(directory), 120)} is not served here; choose one of: "
            f"{choices}"
        )

    def served(self, label: str) -> Path:
        for served in self.dirs:
            if served.label == label:
                return served.root
        raise ResourceNotFoundError(f"no memory dir {label!r} is served here")

    # -- the memory tool ------------------------------------------------------------------------

    def declined(self, root: Path) -> str | None:
        """The notice for a served dir that holds another agent's memory (None: Claude Code's,
        or forced by its ``any_format`` setting): recall, lint and writes decline with it."""
        from memdir.agent.formats import declined

        sentence = declined(root, load_settings(root).any_format)
        return None if sentence is None else f"{root}: {sentence}"

    async def memory(self, data: dict[str, Any], directory: str | None = None) -> CallToolResult:
        root = self.pick(directory)
        command = data.get("command")
        if self.read_only and command in WRITE_COMMANDS:
            return read_only_refusal(str(command))
        if command in WRITE_COMMANDS:
            notice = await asyncio.to_thread(self.declined, root)
            if notice is not None:
                return _text_result(f"Error: `{command}` declined: {notice}", is_error=True)
        # Here, not at startup: the writer behind the tool is the heaviest of memdir's imports.
        from memdir.writing.memory_tool import MemdirMemoryTool

        # One tool per call: its change log is not needed here and would only grow.
        result = await MemdirMemoryTool(root).arun(data)
        if not result.is_error and self.agent is not None:
            await asyncio.to_thread(self._note_shown, root, data)
        # MCP has no place for warnings beside the text: they follow it, so the model sees them.
        notes = "".join(f"\n\nWarning: {warning}" for warning in result.warnings)
        return _text_result(result.text + notes, is_error=result.is_error)

    # -- recall (path B) ------------------------------------------------------------------------

    def session(self, root: Path, session_id: str) -> Session:
        """The recall session of this id, created on first use (see :class:`SessionStore`)."""
        return self.sessions.get(root, session_id)

    async def recall(
        self,
        query: str,
        recent_tools: list[str],
        session_id: str | None,
        directory: str | None = None,
    ) -> CallToolResult:
        from memdir.faces.projections import cli_json, recall_view
        from memdir.recall.prefetch import (
            prefetch,  # the selector, and with a key the anthropic SDK
        )

        if not query.strip():
            raise ToolError("`query` must not be empty: pass the user's message")
        root = self.pick(directory)
        notice = await asyncio.to_thread(self.declined, root)
        if notice is not None:
            return _text_result(
                f"No memories recalled: {notice}", meta={RECALL_META_KEY: {"notice": notice}}
            )
        shared: dict[str, Any] = {}
        agent = await asyncio.to_thread(self.agent_session_id) if self.agent else None
        result = None
        if agent is not None and session_id in (None, agent):
            notes: list[str] = []
            result = await asyncio.to_thread(
                self._recall_in_agent_session, query, root, recent_tools, agent, notes
            )
            shared = {"agent_session": agent, **({"notes": notes} if notes else {})}
        if result is None:
            session = self.session(root, session_id or DEFAULT_SESSION)
            result = await prefetch(query, root, session, recent_tools)
        if result.attachment:
            text = result.attachment
        elif not result.triggered:
            text = f"No memories recalled: {result.reason}."
        else:
            text = "No memories recalled: none relevant that this session has not seen."
        # The details go in `_meta`, not `structuredContent`: Claude Code shows the model the
        # structured content instead of the text when there is some, and the model must get
        # the memories exactly as path B injects them.
        details = cli_json(recall_view(result))
        return _text_result(text, meta={RECALL_META_KEY: {**details, **shared}})

    def agent_session_id(self) -> str | None:
        """The agent session this server's recalls belong to now, or None (see the class)."""
        if self.agent is None:
            return None
        from memdir.agent.paths import state_dir
        from memdir.recall.sessions import agent_session_id

        states = state_dir(self.environ, self.home or Path.home())
        return agent_session_id(states, self.environ, *self.agent)

    def _note_shown(self, root: Path, data: dict[str, Any]) -> None:
        """Count the file a memory command showed the model or wrote as seen in the agent's
        session (in a worker thread), so neither recall nor the hook gives it again."""
        from memdir.agent.paths import state_dir
        from memdir.recall.sessions import SessionBusyError, open_session, session_path
        from memdir.writing.memory_commands import SHOWING_COMMANDS, memories_relative

        field = SHOWING_COMMANDS.get(str(data.get("command")))
        relative = memories_relative(data.get(field)) if field else None
        agent = self.agent_session_id() if relative is not None else None
        if relative is None or agent is None:
            return
        path = session_path(state_dir(self.environ, self.home or Path.home()), agent)
        notes: list[str] = []
        # Best effort: the next prompt's hook finds the call in the transcript anyway.
        with contextlib.suppress(SessionBusyError), open_session(path, time.time(), notes) as s:
            s.mark_read([os.path.normpath(root / relative)])
        for note in notes:
            logger.warning("%s", note)

    def _recall_in_agent_session(
        self, query: str, root: Path, recent_tools: list[str], agent: str, notes: list[str]
    ) -> RecallResult | None:
        """Recall in the agent session's file, shared with the prompt hook (in a worker
        thread: it waits for the session's lock). None when another run holds the session too
        long: the caller recalls in memory instead, and ``notes`` says so."""
        from memdir.agent.paths import state_dir
        from memdir.recall.prefetch import recall
        from memdir.recall.sessions import SessionBusyError, open_session, session_path

        now = time.time()
        path = session_path(state_dir(self.environ, self.home or Path.home()), agent)
        try:
            with open_session(path, now, notes) as session:
                return recall(query, root, session, recent_tools, now=now)
        except SessionBusyError as exc:
            notes.append(f"{exc}; recalled in this server's own session instead")
            return None

    # -- search, lint, index --------------------------------------------------------------------

    def search(
        self, pattern: str, glob: str, ignore_case: bool, directory: str | None = None
    ) -> CallToolResult:
        from memdir.faces.projections import cli_json
        from memdir.search.grep import (
            InvalidPatternError,
            SlowPatternError,
            compile_pattern,
            glob_matcher,
            search_dir,
        )

        try:
            regex = compile_pattern(pattern, ignore_case=ignore_case)
        except InvalidPatternError as exc:
            raise ToolError(f"`pattern` is not a valid regular expression: {exc}") from None
        try:
            glob_matcher(glob)
        except InvalidPatternError as exc:
            raise ToolError(f"`glob`: {exc}") from None
        root = self.pick(directory)
        try:
            found = search_dir(root, regex, glob)
        except SlowPatternError as exc:
            raise ToolError(f"`pattern`: {exc}") from None
        data = {"matches": cli_json(found.matches), "truncated": found.truncated}
        lines = [m.grep_line() for m in found.matches]
        if found.truncated:
            lines.append(f"[stopped after {len(found.matches)} matches]")
        return _text_result("\n".join(lines) if lines else "No matches.", data=data)

    def lint(self, directory: str | None = None) -> CallToolResult:
        from memdir.lint.formats import Section, format_text
        from memdir.lint.state import DirState

        root = self.pick(directory)
        notice = self.declined(root)
        if notice is not None:
            return _text_result(notice, data={"files": 0, "diagnostics": [], "notice": notice})
        state = DirState(root, load_settings(root))
        state.refresh()
        result = state.lint()
        findings = [d.to_json() for d in result.diagnostics]
        # The command line's text format, one line per finding, paths as the model names them.
        text = format_text([Section(result)], relative_to=result.root).rstrip("\n")
        text = text or f"No problems in {result.files} topic files."
        if state.context.reading is not None:
            from memdir.agent.instructions import notice as reading_notice

            text = f"Note: {reading_notice(state.context.reading)}.\n{text}"
        return _text_result(text, data={"files": result.files, "diagnostics": findings})

    def index(self, directory: str | None = None) -> CallToolResult:
        from memdir.agent.index import load_index
        from memdir.faces.projections import cli_json, index_summary

        root = self.pick(directory)
        index = load_index(root, load_settings(root).agent_target)
        exists = index.exists or (root / C.INDEX_FILENAME).exists()
        summary = index_summary(root, index, exists=exists)
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

    def resources(self) -> list[Resource]:
        """Each dir's topic files, and with several dirs each one's index (listed on demand)."""
        from memdir.agent.scan import scan

        several = len(self.dirs) > 1
        found = []
        for served in self.dirs:
            if several and (served.root / C.INDEX_FILENAME).is_file():
                found.append(
                    Resource(
                        uri=f"{DIR_URI_PREFIX}{served.label}/index",
                        name=f"{C.INDEX_FILENAME} ({served.label})",
                        description=f"The memory index of {served.label}",
                        mime_type="text/markdown",
                    )
                )
            for rel in sorted(h.rel_path for h in scan(served.root).all_files):
                uris = [MEMORY_URI_PREFIX + rel] if served.root == self.root else []
                if several:
                    uris.append(f"{DIR_URI_PREFIX}{served.label}/memory/{rel}")
                where = f" of {served.label}" if several else ""
                found += [
                    Resource(
                        uri=uri,
                        name=rel,
                        description=f"The memory file {rel}{where}",
                        mime_type="text/markdown",
                    )
                    for uri in uris
                ]
        return found

    def read_file(self, rel: str, root: Path | None = None) -> str:
        from memdir.writing.results import WriteError
        from memdir.writing.writer import MemoryWriter

        try:
            return MemoryWriter(root or self.root).read(rel)
        except WriteError as exc:
            raise ResourceNotFoundError(f"no memory {rel!r}: {exc.message}") from None

    def read_index(self, root: Path) -> str:
        if not (root / C.INDEX_FILENAME).is_file():
            return ""
        return self.read_file(C.INDEX_FILENAME, root)

    # -- the server -----------------------------------------------------------------------------

    def server(self) -> MemdirServer:
        return _build(self)


class MemdirServer(MCPServer):
    """Lists each memory file as a resource; says plainly what is wrong with bad arguments;
    served over the SDK's transports hardened in :mod:`memdir.faces.mcp_transport`."""

    memdir: MemdirMCP

    async def run_stdio_async(self) -> None:
        await serve_stdio(self._lowlevel_server)

    def http_app(
        self,
        host: str,
        port: int,
        *,
        bound: str | None = None,
        max_sessions: int = MAX_HTTP_SESSIONS,
        idle_timeout: float = HTTP_SESSION_IDLE_SECONDS,
    ) -> Starlette:
        """The streamable HTTP app for a socket bound to ``host:port`` (see
        :func:`memdir.faces.mcp_transport.http_app`)."""
        return http_app(
            self._lowlevel_server,
            host,
            port,
            bound=bound,
            max_sessions=max_sessions,
            idle_timeout=idle_timeout,
        )

    async def list_resources(self) -> list[Resource]:
        static = await super().list_resources()
        listed = {str(r.uri) for r in static}
        files = await asyncio.to_thread(self.memdir.resources)
        return static + [r for r in files if str(r.uri) not in listed]

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Any = None
    ) -> CallToolResult | InputRequiredResult:
        tool = self._tool_manager.get_tool(name)
        if tool is not None:
            if name == "memory" and self.memdir.read_only:
                command = arguments.get("command")
                if command in WRITE_COMMANDS:
                    return read_only_refusal(str(command))
            # Unknown names are refused before the tool runs (the SDK would drop them);
            # otherwise the SDK validates once and its report is reworded below.
            known = set(tool.parameters.get("properties", {}))
            unknown = sorted(set(arguments) - known)
            if unknown:
                problems = []
                try:
                    tool.fn_metadata.validate_arguments(arguments)
                except ValidationError as exc:
                    problems += argument_problems(exc)
                # A few names, each kept short: a hostile call may send thousands of long ones.
                names = ", ".join(f"`{shorten(n, 60)}`" for n in unknown[:5])
                if len(unknown) > 5:
                    names += f" and {len(unknown) - 5} more"
                takes = ", ".join(f"`{n}`" for n in sorted(known)) or "none"
                problems.append(f"unknown {names} (it takes {takes})")
                raise ToolError(f"Invalid arguments for {name}: " + "; ".join(problems))
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                said = "; ".join(argument_problems(exc.__cause__))
                raise ToolError(f"Invalid arguments for {name}: {said}") from None
            if isinstance(exc, UnexpectedToolError) and isinstance(exc.__cause__, OSError):
                # The file system refused (a name too long, permissions): the reason and the
                # file's name help the agent; the SDK would say only "Error executing tool".
                said = describe_os_error(exc.__cause__)
                logger.warning("%s: %s", name, exc.__cause__)
                raise ToolError(f"Error executing tool {name}: {said}") from None
            raise


_PathArg = Annotated[
    str,
    Field(description=f"A path under {MEMORIES_ROOT}, e.g. /memories/user_role.md"),
]
_DirArg = Annotated[
    str | None,
    Field(description="Which served memory dir (its label or path); default: the first"),
]


def _instructions(serves: str, *, read_only: bool) -> str:
    """The server's instructions: when to call what (Claude Code shows them beside its tool
    search; other clients always)."""
    edit = (
        "Read memories with the memory tool (view only: this server is read-only)."
        if read_only
        else "Read and edit memories with the memory tool, one fact per file; memdir keeps "
        f"{C.INDEX_FILENAME}'s entry for each file it writes."
    )
    return (
        f"memdir serves the user's long-term memory: {serves}. Before answering a question "
        "about the user, the project or past decisions, call memory_recall with the user's "
        f"message. {edit}"
    )


def _build(memdir: MemdirMCP) -> MemdirServer:
    mode = "read-only" if memdir.read_only else "read-write"
    if len(memdir.dirs) == 1:
        serves = f"{MEMORIES_ROOT} is {memdir.root} ({mode})"
    else:
        listed = "; ".join(f"`{d.label}`: {d.root}" for d in memdir.dirs)
        serves = (
            f"{len(memdir.dirs)} memory directories ({mode}), chosen with each tool's "
            f"`directory` argument (default: the first): {listed}"
        )
    server = MemdirServer(
        SERVER_NAME,
        version=__version__,
        # The SDK logs each failed call at INFO on stderr; a client shows stderr as errors.
        log_level="WARNING",
        middleware=[valid_unicode_out],
        instructions=_instructions(serves, read_only=memdir.read_only),
    )
    server.memdir = memdir

    if memdir.read_only:

        async def memory_view(
            command: Annotated[Literal["view"], Field(description="Only `view` here")],
            path: _PathArg = MEMORIES_ROOT,
            view_range: Annotated[
                list[int] | None,
                Field(description="[first, last] lines to show, 1-based (last -1: to the end)"),
            ] = None,
            directory: _DirArg = None,
        ) -> CallToolResult:
            data = {"command": command, "path": path, "view_range": view_range}
            return await memdir.memory({k: v for k, v in data.items() if v is not None}, directory)

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
                list[int] | None,
                Field(description="view: [first, last], 1-based (last -1: to the end)"),
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
            directory: _DirArg = None,
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
            return await memdir.memory({k: v for k, v in data.items() if v is not None}, directory)

        server.add_tool(
            memory,
            name="memory",
            description=_MEMORY_DESCRIPTION,
            annotations=ToolAnnotations(
                title="Memory", read_only_hint=False, destructive_hint=True, idempotent_hint=False
            ),
        )

    async def memory_recall(
        query: Annotated[str, Field(description="The user's message, as they wrote it")],
        recent_tools: Annotated[
            list[str] | None,
            Field(
                description="Tools you used successfully in recent turns: memories documenting "
                "their use are skipped"
            ),
        ] = None,
        session_id: Annotated[
            str | None,
            Field(
                description="An id of this conversation: recalls with the same id never repeat a "
                "memory. Omit it to use this server's own session"
            ),
        ] = None,
        directory: _DirArg = None,
    ) -> CallToolResult:
        return await memdir.recall(query, recent_tools or [], session_id, directory)

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
        directory: _DirArg = None,
    ) -> CallToolResult:
        return await asyncio.to_thread(memdir.search, pattern, glob, ignore_case, directory)

    server.add_tool(
        memory_search,
        name="memory_search",
        description=_SEARCH_DESCRIPTION,
        annotations=ToolAnnotations(
            title="Search memories", read_only_hint=True, idempotent_hint=True
        ),
    )

    async def memory_lint(directory: _DirArg = None) -> CallToolResult:
        return await asyncio.to_thread(memdir.lint, directory)

    server.add_tool(
        memory_lint,
        name="memory_lint",
        description=(
            "Check the memory directory as memdir lint does: index entries past the load cap "
            "or pointing nowhere, files never indexed, broken frontmatter, vague descriptions, "
            "duplicates, secrets. Returns each finding (path, line, code, severity, message)."
        ),
        annotations=ToolAnnotations(
            title="Lint memories", read_only_hint=True, idempotent_hint=True
        ),
    )

    async def memory_index(directory: _DirArg = None) -> CallToolResult:
        return await asyncio.to_thread(memdir.index, directory)

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
        return await asyncio.to_thread(memdir.read_index, memdir.root)

    @server.resource(
        MEMORY_URI_PREFIX + "{+path}",
        name="memory file",
        description="A file of the memory directory, by its path relative to it",
        mime_type="text/markdown",
    )
    async def memory_resource(path: str) -> str:
        return await asyncio.to_thread(memdir.read_file, path)

    if len(memdir.dirs) > 1:

        @server.resource(
            DIR_URI_PREFIX + "{label}/index",
            name="MEMORY.md of a served dir",
            description="A served memory dir's index, by the dir's label",
            mime_type="text/markdown",
        )
        async def dir_index_resource(label: str) -> str:
            return await asyncio.to_thread(memdir.read_index, memdir.served(label))

        @server.resource(
            DIR_URI_PREFIX + "{label}/memory/{+path}",
            name="memory file of a served dir",
            description="A file of a served memory dir, by the dir's label and its path",
            mime_type="text/markdown",
        )
        async def dir_memory_resource(label: str, path: str) -> str:
            return await asyncio.to_thread(memdir.read_file, path, memdir.served(label))

    return server


def build_server(
    memory_dirs: Path | Sequence[Path], *, read_only: bool = False, agent_sessions: bool = False
) -> MemdirServer:
    """The MCP server for one memory dir or several (run it, or connect a client in process);
    ``agent_sessions``: see :class:`MemdirMCP`."""
    dirs = [memory_dirs] if isinstance(memory_dirs, Path) else list(memory_dirs)
    return MemdirMCP(dirs, read_only=read_only, agent_sessions=agent_sessions).server()
