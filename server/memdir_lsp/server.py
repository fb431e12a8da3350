"""The language server: a small ``LanguageServer`` subclass holding the memory directories.

Feature modules (``discovery``, ``diagnostics``, ``navigation`` ...) each have a
``register(server)`` that declares their LSP methods and subscribes to the server's events. The
document lifecycle (open/change/save/close, watched files, file operations) is registered once
(``lifecycle``) and fanned out to the subscribers, each isolated: one feature's exception is
logged and the others still run. Each memory directory has one
:class:`~memdir_lsp.session.Session` (``directory.session``) holding its changing state. No
rule logic lives in the server; it translates LSP to ``memdir`` calls. pygls' internals are
:mod:`memdir_lsp.adapter`'s business only.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import functools
import importlib
import logging
import os
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal, ParamSpec, TypeVar

from lsprotocol import types
from memdir import __version__
from memdir.agent.paths import is_agent_memory_dir
from memdir.extras import MissingExtraError
from memdir.model import Span
from memdir.recall.surface import SessionStore
from pygls.capabilities import get_capability
from pygls.exceptions import JsonRpcException, JsonRpcInternalError, JsonRpcServerError
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from memdir_lsp import positions
from memdir_lsp.adapter import MemoryProtocol
from memdir_lsp.directory import MemoryDirectory
from memdir_lsp.errors import RequestFailed
from memdir_lsp.protocol import CONFIG_SECTION, SERVER_NAME

if TYPE_CHECKING:
    from memdir_lsp.session import Run, Session

logger = logging.getLogger(__name__)

P = ParamSpec("P")
R = TypeVar("R")

#: Seconds a request waits for startup to finish before answering anyway.
READY_TIMEOUT = 10.0

FileEventKind = Literal["created", "changed", "deleted"]


@dataclass(frozen=True, slots=True)
class FileEvent:
    """A file created, changed or deleted on disk (the client's watcher, a file operation, or
    a write of the server's own)."""

    path: Path
    kind: FileEventKind


@dataclass(frozen=True, slots=True)
class DocumentEvent:
    """A document opened, changed, saved or closed in the editor."""

    uri: str
    kind: Literal["open", "change", "save", "close"]


#: Origins of the directories the server may write in: the agent's memory dir of a workspace
#: folder and the user's ``directories`` setting (and any dir under the agent's config root:
#: :func:`memdir.agent.paths.is_agent_memory_dir`). A folder that merely holds a MEMORY.md, as a
#: workspace folder or above an opened file, is served read-only: any repository can hold one.
WRITABLE_ORIGINS = frozenset({"agent", "setting"})


@dataclass
class Hooks:
    """Events the feature modules subscribe to; each list runs in registration order."""

    initialize: list[Callable[[MemoryServer, types.InitializeParams], Awaitable[None]]] = field(
        default_factory=list
    )
    initialized: list[Callable[[MemoryServer], Awaitable[None]]] = field(default_factory=list)
    #: Editor settings changed (directories were already rediscovered).
    settings_changed: list[Callable[[MemoryServer], Awaitable[None]]] = field(default_factory=list)
    #: The set of memory directories changed.
    directories_changed: list[Callable[[MemoryServer], Awaitable[None]]] = field(
        default_factory=list
    )
    #: A document was opened, changed, saved or closed in the editor.
    document: list[Callable[[MemoryServer, DocumentEvent], Awaitable[None]]] = field(
        default_factory=list
    )
    #: Files were created, changed or deleted on disk (watcher or file operations).
    files: list[Callable[[MemoryServer, Sequence[FileEvent]], Awaitable[None]]] = field(
        default_factory=list
    )
    #: A directory's session has new findings (:class:`memdir_lsp.session.Run`): deliver them.
    findings: list[Callable[[MemoryServer, Session, Run], Awaitable[None]]] = field(
        default_factory=list
    )


def refused(error: BaseException) -> bool:
    """An error the client caused and was answered with (bad params, unknown method ...).

    Only an internal error is the server's own fault and worth a traceback in the log.
    """
    return isinstance(error, JsonRpcException) and not isinstance(
        error, JsonRpcInternalError | JsonRpcServerError
    )


class RoutineRpcLog(logging.Filter):
    """Keep pygls' logging of refused requests out of the log; report_server_error has it.

    pygls logs every error answer with ``logger.exception`` (ERROR, traceback): a request with
    bad params read like a crash in the client's log. Only internal errors keep theirs.
    """

    #: pygls' lines about requests it answered as the protocol says.
    REFUSALS = ("Failed to handle request %r, unknown method %r",)  # answered MethodNotFound
    #: Routine: the answer crossed the client's cancellation.
    ROUTINE = ('Cancel notification for unknown message id "%s"',)

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if (error is not None and refused(error)) or record.msg in self.REFUSALS:
            return False
        if record.msg in self.ROUTINE:
            record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return True


ROUTINE_RPC_LOG: Final = RoutineRpcLog()


def local_now() -> dt.datetime:
    return dt.datetime.now().astimezone()


class MemoryServer(LanguageServer):
    """The memdir language server: memory directories and what the editor has open in them."""

    def __init__(self) -> None:
        super().__init__(
            SERVER_NAME,
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            protocol_cls=MemoryProtocol,
        )
        # A logger's filters are shared; addFilter keeps one copy per server created.
        logging.getLogger("pygls.protocol.json_rpc").addFilter(ROUTINE_RPC_LOG)
        # settings.py registers handlers typed with this class, so it imports us: import late.
        from memdir_lsp.settings import EditorSettings

        self.editor_settings = EditorSettings()
        #: Memory directories by their absolute path (not resolved: paths stay as the user sees).
        self.directories: dict[Path, MemoryDirectory] = {}
        #: The project root of each memory dir that has one (found by discovery).
        self.project_roots: dict[Path, Path] = {}
        #: The client trusts the workspace (initializationOptions ``trusted``, raised by
        #: ``memdir/didGrantWorkspaceTrust``). Untrusted, the server runs no git (no project
        #: is loaded) and writes nothing.
        self.trusted = True
        #: Agent sessions (what surfaced, what the agent read, the budget), bounded: a client
        #: names sessions freely.
        self.sessions = SessionStore()
        self.hooks = Hooks()
        #: Background tasks kept alive until done (asyncio keeps only weak references).
        self.tasks: set[asyncio.Task[Any]] = set()
        #: Set once ``initialized`` has been handled (settings pulled, directories found).
        self.ready = asyncio.Event()
        #: Running ``memory/extract`` jobs by id, and the id behind each work-done token, so
        #: the client's ``window/workDoneProgress/cancel`` reaches the right task.
        self.extractions: dict[str, asyncio.Task[Any]] = {}
        self.extraction_tokens: dict[types.ProgressToken, str] = {}
        #: Dynamic registrations of workspace/didChangeWatchedFiles (the last one is live).
        self.watcher_ids: list[str] = []
        self.watcher_key: str | None = None
        #: The wall clock (local time, aware): what "today" is for the date rules (MEM119-
        #: MEM121) and completion. A test replaces it to move past midnight without waiting.
        self.clock: Callable[[], dt.datetime] = local_now
        #: Timers (the midnight re-check) by name, cancelled at shutdown.
        self.timers: dict[str, asyncio.TimerHandle] = {}
        #: The workspace's position codec and its code-unit counter (see :meth:`to_range`).
        self._units: tuple[Any, Callable[[str], int]] | None = None
        #: An error is being reported to the client: one that reporting it raises (the
        #: connection is gone) goes to the log only, not to the client again.
        self._reporting = False

    def today(self) -> dt.date:
        """The local date by :attr:`clock`."""
        return self.clock().date()

    # --- robustness ---------------------------------------------------------------------------

    def guard(
        self, handler: Callable[P, Awaitable[R]], *, wait: bool = True, catch: bool = True
    ) -> Callable[P, Awaitable[R | None]]:
        """Wrap a handler so an unexpected exception is logged and answered with ``None``.

        JSON-RPC errors (bad params) always pass through: the client must see them as errors.
        With ``wait``, the handler first waits until startup (settings, discovery) has finished.
        Without ``catch``, other errors pass through too (pygls answers InternalError): for the
        custom requests, whose callers must be able to tell "nothing" from "failed".
        """

        @functools.wraps(handler)
        async def guarded(*args: P.args, **kwargs: P.kwargs) -> R | None:
            if wait:
                await self.wait_ready()
            try:
                return await handler(*args, **kwargs)
            except (JsonRpcException, asyncio.CancelledError):
                raise
            except MissingExtraError as exc:
                # Not a fault: the client is told which extra adds the feature.
                raise RequestFailed(str(exc)) from None
            except Exception as exc:
                if not catch:
                    raise
                logger.exception("%s failed", getattr(handler, "__name__", handler))
                self.log(f"{getattr(handler, '__name__', 'handler')} failed: {exc!r}", error=True)
                return None

        return guarded

    async def wait_ready(self) -> None:
        """Requests that arrive while ``initialized`` is still being handled wait for it.

        A client may send requests right after ``initialized``; answering them before the
        memory directories are known would give empty results. Never wait forever: a client
        that never sends ``initialized`` still gets answers.
        """
        if self.ready.is_set():
            return
        try:
            await asyncio.wait_for(self.ready.wait(), READY_TIMEOUT)
        except TimeoutError:
            logger.warning("answering before startup finished")

    def spawn(self, coro: Coroutine[Any, Any, Any], name: str) -> asyncio.Task[Any]:
        """Run ``coro`` in the background, logging (not raising) its failure."""

        async def run() -> None:
            try:
                await coro
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                logger.exception("background task %s failed", name)
                self.log(f"{name} failed: {exc!r}", error=True)

        task = asyncio.ensure_future(run())
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        # Cancelled before it ever ran: close the coroutine so it is not reported as leaked.
        task.add_done_callback(lambda _task: coro.close())
        return task

    async def fire(self, hooks: Sequence[Callable[..., Awaitable[None]]], *args: Any) -> None:
        for hook in hooks:
            try:
                await hook(self, *args)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                logger.exception("hook %s failed", getattr(hook, "__qualname__", hook))
                self.log(f"{getattr(hook, '__qualname__', 'hook')} failed: {exc!r}", error=True)

    def log(
        self,
        message: str,
        kind: types.MessageType = types.MessageType.Info,
        *,
        error: bool = False,
    ) -> None:
        """A ``window/logMessage`` (the client's output panel) plus our own stderr log."""
        kind = types.MessageType.Error if error else kind
        logger.log(logging.ERROR if error else logging.INFO, "%s", message)
        try:
            self.window_log_message(types.LogMessageParams(type=kind, message=message))
        except Exception:  # not connected yet (tests that build the server directly)
            logger.debug("could not send logMessage", exc_info=True)

    def show_message(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None:
        """A ``window/showMessage``: what the user should see once, not only in the log."""
        try:
            self.window_show_message(types.ShowMessageParams(type=kind, message=message))
        except Exception:  # not connected yet (tests that build the server directly)
            logger.debug("could not send showMessage", exc_info=True)

    def report_server_error(self, error: Exception, source: Any) -> None:
        # pygls shows a popup for every notification error by default; a log line is enough.
        if refused(error):
            # The client sent bad params (or an unknown method) and got the error as its
            # answer: routine, not a fault of the server.
            self.log(f"request refused: {error}")
            return
        text = str(error)
        text = text if text.startswith("internal error") else f"internal error: {text}"
        if self._reporting:
            # Sending the report failed too (pygls reports a failed send as an error, which
            # would be sent, fail, and be reported again without end): the log has it.
            logger.error("%s", text)
            return
        self._reporting = True
        try:
            self.log(text, error=True)
        finally:
            self._reporting = False

    # --- capabilities -------------------------------------------------------------------------

    def client_supports(self, dotted: str) -> bool:
        """A capability by its snake_case dotted path, e.g. ``window.work_done_progress``."""
        return bool(get_capability(self.client_capabilities, dotted, False))

    def resource_operations(self) -> list[str]:
        ops = get_capability(
            self.client_capabilities, "workspace.workspace_edit.resource_operations", None
        )
        return [str(getattr(op, "value", op)) for op in ops] if ops else []

    # --- documents and directories ------------------------------------------------------------

    @staticmethod
    def uri_to_path(uri: str) -> Path | None:
        path = to_fs_path(uri)
        return Path(os.path.abspath(path)) if path else None

    @staticmethod
    def path_to_uri(path: Path) -> str:
        uri = from_fs_path(str(path))
        if uri is None:  # pragma: no cover - only for non-absolute paths
            raise ValueError(f"cannot make a URI of {path}")
        return str(uri)

    def open_text(self, path: Path) -> str | None:
        """The editor's (possibly unsaved) text of ``path`` when it is open, else None."""
        doc = self.workspace.text_documents.get(self.path_to_uri(path))
        return doc.source if doc is not None else None

    def open_paths(self, directory: MemoryDirectory) -> list[Path]:
        """The files of ``directory`` open in the editor."""
        paths = [self.uri_to_path(uri) for uri in list(self.workspace.text_documents)]
        return [p for p in paths if p is not None and directory.contains(p)]

    def open_version(self, path: Path) -> int | None:
        doc = self.workspace.text_documents.get(self.path_to_uri(path))
        return doc.version if doc is not None else None

    def directory_for(self, path: Path) -> MemoryDirectory | None:
        """The innermost known memory directory containing ``path``."""
        best: MemoryDirectory | None = None
        for directory in self.directories.values():
            if directory.contains(path) and (
                best is None or len(directory.root.parts) > len(best.root.parts)
            ):
                best = directory
        return best

    def memory_document(self, uri: str) -> tuple[MemoryDirectory, Path] | None:
        """``(directory, path)`` when ``uri`` is a Markdown file of a memory dir, else None.

        Other Markdown (a README, docs) is left alone: no diagnostics, no completion.
        """
        path = self.uri_to_path(uri)
        if path is None or path.suffix != ".md":
            return None
        directory = self.directory_for(path)
        return (directory, path) if directory is not None else None

    def new_directory(self, root: Path, origins: set[str]) -> MemoryDirectory:
        directory = MemoryDirectory(
            root, origins, self.editor_settings.for_directory(root), text_of=self.open_text
        )
        self._place(directory)
        return directory

    def _place(self, directory: MemoryDirectory) -> None:
        """A directory's project and write permission, from discovery and the workspace trust."""
        root = directory.root
        # Untrusted: no project, so nothing runs git. A new project root is loaded by the next
        # lint run.
        directory.project_root = self.project_roots.get(root) if self.trusted else None
        directory.read_only = self.read_only_reason(root, directory.origins)

    def read_only_reason(self, root: Path, origins: set[str]) -> str | None:
        """Why the server must not write in ``root``, found for ``origins``; None: it may."""
        if not self.trusted:
            return (
                "the workspace is not trusted, and memdir-lsp writes nothing in an untrusted "
                "workspace (trust it, or set `trusted` in initializationOptions)"
            )
        if origins & WRITABLE_ORIGINS or is_agent_memory_dir(root):
            return None
        return (
            "it was found as a folder that looks like a memory dir, not as the agent's memory "
            f"dir nor in the `{CONFIG_SECTION}.directories` setting; add it to that setting to "
            "let memdir write there"
        )

    def _directory_state(self) -> dict[Path, tuple[set[str], Path | None, str | None]]:
        return {
            root: (set(d.origins), d.project_root, d.read_only)
            for root, d in self.directories.items()
        }

    def set_directories(self, found: dict[Path, set[str]]) -> bool:
        """Replace the known directories, keeping the state of those that stay. True if changed."""
        before = self._directory_state()
        updated: dict[Path, MemoryDirectory] = {}
        for root, origins in found.items():
            existing = self.directories.get(root)
            if existing is not None:
                existing.origins = set(origins)
                self._place(existing)
                updated[root] = existing
            else:
                updated[root] = self.new_directory(root, set(origins))
        for root, gone in self.directories.items():
            if root not in updated:
                gone.session.close()
        self.directories = updated
        return before != self._directory_state()

    def reload_settings(self) -> None:
        for directory in self.directories.values():
            directory.settings = self.editor_settings.for_directory(directory.root)

    async def settings_changed(self) -> None:
        from memdir_lsp.discovery import rediscover

        await rediscover(self)
        self.reload_settings()
        await self.fire(self.hooks.settings_changed)

    def default_directory(self) -> MemoryDirectory | None:
        """The workspace's first memory dir: what custom requests use without ``directory``."""
        return next(iter(self.directories.values()), None)

    # --- positions ----------------------------------------------------------------------------

    def lines_of(self, path: Path) -> list[str]:
        """The text of ``path`` as the client sees it (open buffer, else disk), split in lines
        as the core counts them (at LF only)."""
        text = self.open_text(path)
        if text is None:
            from memdir.textio import read_text  # regular files only (a FIFO blocks), capped

            text = read_text(path, keep_binary=True).text
        return text.split("\n")

    def to_range(self, span: Span, lines: Sequence[str]) -> types.Range:
        """A code-point span as a range in the client's position encoding (as pygls' codec
        converts it: a line past the end becomes the start of the line after the last)."""
        span, lines = positions.for_client(span, lines)
        codec = self.workspace.position_codec
        if self._units is None or self._units[0] is not codec:
            self._units = (codec, positions.unit_counter(codec))
        units = self._units[1]

        def position(line: int, column: int) -> types.Position:
            if not 0 <= line < len(lines):
                return types.Position(line=len(lines), character=0)
            return types.Position(line=line, character=units(lines[line][:column]))

        return types.Range(
            start=position(span.start_line, span.start_col),
            end=position(span.end_line, span.end_col),
        )

    def from_position(self, position: types.Position, lines: Sequence[str]) -> tuple[int, int]:
        """A client position as (line, code-point column)."""
        codec = self.workspace.position_codec
        copy = types.Position(line=position.line, character=position.character)
        server_pos = codec.position_from_client_units(positions.client_lines(lines), copy)
        return positions.to_core(lines, server_pos.line, server_pos.character)


#: Feature modules in registration order (lifecycle first, so the others can subscribe).
FEATURES = (
    "lifecycle",
    "settings",
    "discovery",
    "session",
    "diagnostics",
    "code_actions",
    "navigation",
    "completion",
    "symbols",
    "memory_protocol",
)


def create_server() -> MemoryServer:
    """A server with every feature registered.

    Features are imported by name: each imports this module, and none may import another
    (the layer contract in pyproject.toml), so the server must not be their common importer.
    """
    server = MemoryServer()
    for name in FEATURES:
        importlib.import_module(f"memdir_lsp.{name}").register(server)
    return server
