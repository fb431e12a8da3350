"""The ``memory/*`` requests and notifications: typed params in, the engine's views out.

Each handler structures its params (``types``), calls ``memdir``, and returns the result through
the one converter. Paths that resolve outside the memory dir are refused. Recall requests
import the recall pipeline (and with it the ``anthropic`` SDK) only when the first one arrives,
so starting the server stays cheap.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import os
import sys
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from lsprotocol import types
from lsprotocol.converters import get_converter
from memdir import __version__
from memdir.faces.projections import index_summary, manifest_view, memory_text, recall_view
from memdir.faces.visibility import list_memories
from memdir.fixes.plan import NewMemoryPlan, plan_new_memory
from memdir.recall.surface import surface_file
from memdir.search.grep import (
    InvalidPatternError,
    SlowPatternError,
    compile_pattern,
    glob_matcher,
    search_files,
)
from memdir.textio import not_read
from pygls.exceptions import JsonRpcInvalidParams

from memdir_lsp import protocol as P
from memdir_lsp.convert import workspace_edit
from memdir_lsp.directory import MemoryDirectory
from memdir_lsp.errors import RequestFailed
from memdir_lsp.memory_protocol import types as T
from memdir_lsp.memory_protocol.converter import structure_params, to_wire
from memdir_lsp.server import FileEvent, MemoryServer

if TYPE_CHECKING:
    from memdir.extract.results import ExtractionProgress, ExtractionResult
    from memdir.extract.transcript import Transcript
    from memdir.recall.explain import Explanation
    from memdir.recall.prefetch import RecallResult
    from memdir.recall.surface import Session

logger = logging.getLogger(__name__)


# --- params ----------------------------------------------------------------------------------


def resolve_directory(ls: MemoryServer, params: T.DirectoryParams) -> MemoryDirectory:
    uri = params.directory
    if uri is None:
        directory = ls.default_directory()
        if directory is None:
            raise JsonRpcInvalidParams("no memory directory is known in this workspace")
        return directory
    path = ls.uri_to_path(uri) if uri.startswith("file:") else None
    if path is None:
        raise JsonRpcInvalidParams(f"`directory` must be a file URI, got {uri!r}")
    directory = ls.directories.get(path)
    if directory is None:
        known = ", ".join(ls.path_to_uri(p) for p in ls.directories) or "none"
        raise JsonRpcInvalidParams(
            f"`directory`: {uri} is not a known memory directory (known: {known})"
        )
    return directory


def resolve_file(directory: MemoryDirectory, name: str, field: str = "path") -> Path:
    """A file named by a path relative to the dir, an absolute path or a file URI, inside it;
    ``field`` names the parameter in the error."""
    given = name
    if name.startswith("file:"):
        resolved = MemoryServer.uri_to_path(name)
        if resolved is None:
            raise JsonRpcInvalidParams(f"`{field}`: {given!r} is not a file URI this server reads")
        name = str(resolved)
    path = directory.resolve_inside(name)
    if path is None:
        raise JsonRpcInvalidParams(
            f"`{field}`: {given!r} is outside the memory directory {directory.root}"
        )
    return path


# --- requests --------------------------------------------------------------------------------


def index_result(directory: MemoryDirectory) -> Any:
    index = directory.index()
    refused = not_read(index.problems)
    if refused is not None:
        # Nothing read (a MEMORY.md leading out of the dir, not a regular file, unreadable):
        # say why, as `memdir index` does, rather than answer an empty index.
        raise RequestFailed(refused.message)
    exists = index.exists or directory.index_path.exists()
    return to_wire(index_summary(directory.root, index, exists=exists))


async def memory_index(ls: MemoryServer, params: Any) -> Any:
    directory = resolve_directory(ls, structure_params(params, T.DirectoryParams))
    return await asyncio.to_thread(index_result, directory)


async def memory_manifest(ls: MemoryServer, params: Any) -> Any:
    directory = resolve_directory(ls, structure_params(params, T.DirectoryParams))
    return to_wire(await asyncio.to_thread(lambda: manifest_view(directory.scan())))


def list_result(directory: MemoryDirectory) -> Any:
    def text_of(rel: str) -> str | None:
        return directory.text(directory.path_of(rel))

    return to_wire(list_memories(directory.scan(), directory.index(), text_of))


async def memory_list(ls: MemoryServer, params: Any) -> Any:
    directory = resolve_directory(ls, structure_params(params, T.DirectoryParams))
    return await asyncio.to_thread(list_result, directory)


async def memory_read(ls: MemoryServer, params: Any) -> Any:
    read = structure_params(params, T.ReadParams)
    directory = resolve_directory(ls, read)
    if not read.path.strip():
        raise JsonRpcInvalidParams("`path` must not be empty")
    path = resolve_file(directory, read.path)
    if directory.is_index(path):
        raise JsonRpcInvalidParams(
            "MEMORY.md is the index (see memory/index); path B never surfaces it"
        )
    if not path.is_file():
        raise JsonRpcInvalidParams(f"no such memory: {read.path}")
    try:
        target = directory.settings.agent_target
        memory = await asyncio.to_thread(surface_file, path, directory.root, None, target)
    except OSError as exc:
        raise JsonRpcInvalidParams(str(exc)) from exc
    return to_wire(memory_text(memory))


def search_result(directory: MemoryDirectory, search: T.SearchParams) -> Any:
    try:
        regex = compile_pattern(search.pattern, ignore_case=search.ignore_case)
    except InvalidPatternError as exc:
        raise JsonRpcInvalidParams(f"`pattern` is not a valid regular expression: {exc}") from exc
    try:
        wanted = glob_matcher(search.glob)
    except InvalidPatternError as exc:
        raise JsonRpcInvalidParams(f"`glob`: {exc}") from exc
    paths = [directory.index_path] if directory.index_path.exists() else []
    paths += directory.topic_paths()
    try:
        # Slow patterns run in a child process: this thread waits without holding the GIL.
        found = search_files(
            [rel for rel in map(directory.rel, paths) if wanted(rel)],
            lambda rel: directory.text(directory.path_of(rel)),
            regex,
        )
    except SlowPatternError as exc:
        raise JsonRpcInvalidParams(f"`pattern`: {exc}") from exc
    return to_wire(T.MemorySearchResult(str(directory.root), found.matches, found.truncated))


async def memory_search(ls: MemoryServer, params: Any) -> Any:
    search = structure_params(params, T.SearchParams)
    directory = resolve_directory(ls, search)
    return await asyncio.to_thread(search_result, directory, search)


# --- plans the client applies ---------------------------------------------------------------


def new_memory_plan(directory: MemoryDirectory, request: T.NewMemoryParams) -> NewMemoryPlan:
    try:
        taken = os.listdir(directory.root)  # the new file goes at the top of the dir
    except OSError:
        taken = []
    return plan_new_memory(
        directory.index(),
        request.name,
        request.description,
        request.type,
        request.body,
        taken=taken,
        limit=directory.settings.index_line_limit,
        # As MemoryWriter does: the index is maintained in recall mode `index` only.
        indexed=directory.settings.recall_mode == "index",
    )


async def memory_new_memory(ls: MemoryServer, params: Any) -> Any:
    """The plan of "New memory" as a WorkspaceEdit, converted like every quick fix's."""
    request = structure_params(params, T.NewMemoryParams)
    directory = resolve_directory(ls, request)
    if not request.name.strip():
        raise JsonRpcInvalidParams("`name` must not be empty")
    plan = await asyncio.to_thread(new_memory_plan, directory, request)
    edit, command = workspace_edit(ls, plan.fix)
    lsp = get_converter()
    result = T.NewMemoryResult(
        path=plan.rel_path,
        uri=ls.path_to_uri(directory.path_of(plan.rel_path)),
        edit=lsp.unstructure(edit) if edit is not None else {},
        command=lsp.unstructure(command) if command is not None else None,
    )
    return to_wire(result)


# --- recall (path B) ------------------------------------------------------------------------


async def memory_recall(ls: MemoryServer, params: Any) -> Any:
    """The selection, synchronously: the response carries what surfaced."""
    recall = structure_params(params, T.RecallParams)
    directory = resolve_directory(ls, recall)
    # Imported on first use: this pulls in the selector (and, with a key, the anthropic SDK).
    from memdir.recall.prefetch import prefetch
    from memdir.recall.surface import Session

    session = ls.sessions.get(directory.root, recall.session_id) if recall.session_id else Session()
    result = await prefetch(
        recall.query, directory.root, session, recall.recent_tools, settings=directory.settings
    )
    explanations = await explain(
        directory.root, result, session, recall.explain, recall.recent_tools
    )
    return to_wire(recall_view(result, explanations))


async def explain(
    root: Path,
    result: RecallResult,
    session: Session,
    files: Sequence[str],
    recent_tools: Sequence[str],
) -> tuple[Explanation, ...]:
    """Why each of ``files`` was or was not selected (``explain``), after the recall."""
    if not files:
        return ()
    from memdir.agent.scan import scan
    from memdir.recall.explain import explain_recall, seen_before

    # File URIs as paths; other names as given (explain_recall says when one lies outside).
    named = [str(MemoryServer.uri_to_path(f) or f) if f.startswith("file:") else f for f in files]

    def run() -> tuple[Explanation, ...]:
        scanned = scan(root)
        seen = seen_before(session, scanned, result)
        return explain_recall(result, scanned, named, recent_tools=recent_tools, seen=seen)

    # Off the event loop: a scan, and a few selections to check each suggestion.
    try:
        return await asyncio.to_thread(run)
    except Exception:  # the selection must still be answered or delivered
        logger.exception("explaining %s failed", ", ".join(files))
        return ()


async def memory_prefetch(ls: MemoryServer, params: Any) -> Any:
    """Start path B in the background; answer at once, deliver memory/relevantMemories later.

    Like the agent, the caller does not wait for the selection: it goes on with its turn and
    takes the memories when the notification arrives. Nothing is sent when the prefetch does
    not trigger (the response says so, with the reason).
    """
    request = structure_params(params, T.PrefetchParams)
    directory = resolve_directory(ls, request)
    from memdir.agent.trigger import should_prefetch
    from memdir.recall.prefetch import start_prefetch

    session = ls.sessions.get(directory.root, request.session_id)
    request_id = uuid.uuid4().hex
    if session.spent:
        return to_wire(T.PrefetchStarted(request_id, False, "session budget spent"))
    decision = should_prefetch(request.query, directory.settings.trigger)
    if not decision.triggered:
        return to_wire(T.PrefetchStarted(request_id, False, decision.reason))
    task = start_prefetch(
        request.query, directory.root, session, request.recent_tools, settings=directory.settings
    )

    async def deliver() -> None:
        result = await task
        explanations = await explain(
            directory.root, result, session, request.explain, request.recent_tools
        )
        view = recall_view(result, explanations)
        relevant = T.RelevantMemories(
            id=request_id,
            session_id=request.session_id,
            directory=ls.path_to_uri(directory.root),
            selected_memories=view.selected_memories,
            surfaced=view.surfaced,
            attachment=view.attachment,
            budget=view.budget,
            triggered=view.triggered,
            reason=view.reason,
            selector=view.selector,
            degraded=view.degraded,
            why=view.why,
            dropped=view.dropped,
            explanations=view.explanations,
        )
        ls.protocol.notify(P.MEMORY_RELEVANT_MEMORIES, to_wire(relevant))

    ls.spawn(deliver(), f"prefetch {request_id}")
    return to_wire(T.PrefetchStarted(request_id, True, decision.reason))


# --- session notifications -------------------------------------------------------------------


Notified = TypeVar("Notified", bound=T.DirectoryParams)


def notification_params(
    ls: MemoryServer, method: str, params: Any, cls: type[Notified]
) -> tuple[Notified, MemoryDirectory] | None:
    """A notification's params and directory, or None when they are bad (then logged: a
    notification has no response to carry the error)."""
    try:
        structured = structure_params(params, cls)
        return structured, resolve_directory(ls, structured)
    except JsonRpcInvalidParams as exc:
        ls.log(f"{method}: {exc.message}", types.MessageType.Warning)
        return None


async def memory_did_read(ls: MemoryServer, params: Any) -> None:
    notified = notification_params(ls, P.MEMORY_DID_READ, params, T.DidReadParams)
    if notified is None:
        return
    read, directory = notified
    paths = []
    for name in read.paths:
        try:
            paths.append(resolve_file(directory, name, "paths"))
        except JsonRpcInvalidParams as exc:
            ls.log(f"{P.MEMORY_DID_READ}: {exc.message}", types.MessageType.Warning)
    # Only files that exist: what never surfaces needs no mark, and made-up names would grow
    # the session without end (os.path.isfile: a name too long is no file, not an error).
    existing = await asyncio.to_thread(lambda: [p for p in paths if os.path.isfile(p)])
    ls.sessions.get(directory.root, read.session_id).mark_read(existing)


async def memory_compacted(ls: MemoryServer, params: Any) -> None:
    notified = notification_params(ls, P.MEMORY_COMPACTED, params, T.SessionParams)
    if notified is not None:
        compacted, directory = notified
        ls.sessions.get(directory.root, compacted.session_id).compact()


# --- the write path: memory/tool and memory/extract ----------------------------------------


async def load_write_path() -> None:
    """Import the memory tool and the writer behind it in a worker thread.

    Done inline, the first import would hold every other request (diagnostics, completion) on
    the event loop meanwhile. Later calls find it loaded.
    """
    if "memdir.writing.memory_tool" not in sys.modules:
        await asyncio.to_thread(importlib.import_module, "memdir.writing.memory_tool")


def file_events(directory: MemoryDirectory, changes: Sequence[Any]) -> list[FileEvent]:
    """Write results (``FileChange`` or extraction ``Change``) as watched-file events."""
    events: list[FileEvent] = []
    for change in changes:
        path = directory.path_of(change.path)
        if change.kind == "renamed" and change.new_path:
            events += [
                FileEvent(path, "deleted"),
                FileEvent(directory.path_of(change.new_path), "created"),
            ]
        else:
            events.append(FileEvent(path, change.kind))
    return events


async def refresh_written(ls: MemoryServer, events: Sequence[FileEvent]) -> None:
    """The server wrote on disk, outside the editor: treat it like a watched-file change.

    The client's watcher may report the same files later (a second, cheap re-lint), but not
    every client watches files, and this way a caller that gets the response already sees
    diagnostics that include the write.
    """
    if events:
        await ls.fire(ls.hooks.files, list(events))


def memory_change(ls: MemoryServer, directory: MemoryDirectory, change: Any) -> T.MemoryChange:
    """A write's ``FileChange`` or an extraction's ``Change``, with URIs."""
    new_path = change.new_path
    return T.MemoryChange(
        kind=change.kind,
        path=change.path,
        uri=ls.path_to_uri(directory.path_of(change.path)),
        new_path=new_path,
        new_uri=None if new_path is None else ls.path_to_uri(directory.path_of(new_path)),
        is_dir=change.is_dir,
        diff=getattr(change, "diff", ""),
    )


async def memory_tool(ls: MemoryServer, params: Any) -> Any:
    """One command of the API memory tool (``memory_20250818``) over the memory dir.

    The tool's own failures (a path escaping ``/memories``, a missing file, no match) are
    results with ``isError: true`` and the API's exact wording, as a model would see them; only
    input that is not a memory command at all is a JSON-RPC error.
    """
    request = structure_params(params, T.MemoryToolParams)
    directory = resolve_directory(ls, request)
    command = request.command_input()
    # Loaded on first use: startup never loads the write path.
    await load_write_path()
    from memdir.writing.memory_tool import (
        WRITE_COMMANDS,
        InvalidCommandError,
        MemdirMemoryTool,
        ToolResult,
        parse_command,
    )

    try:
        parsed = parse_command(command)
    except InvalidCommandError as exc:
        raise JsonRpcInvalidParams(str(exc)) from exc
    refusal = directory.write_refusal()
    if refusal is not None and parsed.command in WRITE_COMMANDS:
        # As the tool's own failures: a model driving the tool reads why, and stops trying.
        return to_wire(
            T.MemoryToolResult(text=f"Error: {refusal}", is_error=True, changes=[], warnings=[])
        )
    tool = MemdirMemoryTool(directory.root, settings=directory.settings)
    try:
        result = await tool.arun(command)
    except Exception as exc:  # arun reports every expected failure as a result; belt and braces
        logger.exception("memory/tool failed")
        result = ToolResult(f"Error: {exc}", is_error=True)
    changes = list(tool.changes)
    await refresh_written(ls, file_events(directory, changes))
    return to_wire(
        T.MemoryToolResult(
            text=result.text,
            is_error=result.is_error,
            changes=[memory_change(ls, directory, c) for c in changes],
            warnings=list(tool.warnings),
        )
    )


def transcript_path(name: str) -> Path:
    """A transcript named by a ``file://`` URI or an absolute path (``~`` expanded)."""
    if name.startswith("file:"):
        path = MemoryServer.uri_to_path(name)
        if path is None:
            raise JsonRpcInvalidParams(f"`transcript` is not a file URI: {name!r}")
    else:
        if "\x00" in name:
            raise JsonRpcInvalidParams("`transcript` contains a NUL byte")
        path = Path(name).expanduser()
        if not path.is_absolute():
            raise JsonRpcInvalidParams(
                f"`transcript` must be an absolute path or a file URI, got {name!r}"
            )
    if not path.is_file():
        raise JsonRpcInvalidParams(f"no such transcript: {path}")
    return path


def project_root_for(ls: MemoryServer, transcript: Transcript) -> Path | None:
    """Where the read-only project tools look: the session's cwd, else the first folder.

    ``run_extraction`` would fall back to the process's cwd, which for an editor's server is
    wherever the editor was started.
    """
    from memdir_lsp.lifecycle import folder_paths

    cwd = next((r.cwd for r in reversed(transcript.records) if r.cwd), None)
    if cwd and Path(cwd).is_dir():
        return Path(cwd)
    folders = folder_paths(ls)
    return folders[0] if folders else None


def extract_outcome(
    ls: MemoryServer, job_id: str, directory: MemoryDirectory, result: ExtractionResult
) -> T.ExtractOutcome:
    return T.ExtractOutcome(
        id=job_id,
        directory=ls.path_to_uri(directory.root),
        status=result.status,
        reason=result.reason,
        dry_run=result.dry_run,
        created=list(result.created),
        changed=list(result.changed),
        deleted=list(result.deleted),
        renamed=[T.RenamedFile(c.path, c.new_path) for c in result.changes if c.kind == "renamed"],
        changes=[memory_change(ls, directory, c) for c in result.changes],
        summary=result.summary,
        turns=result.turns,
        stop_reason=result.stop_reason,
        model=result.model,
        warnings=list(result.warnings),
    )


def end_message(result: ExtractionResult) -> str:
    """The last line of the progress: what was written, or why nothing was."""
    if result.status != "completed":
        return f"{result.status}: {result.reason}" if result.reason else result.status
    counts = [
        f"{len(paths)} {word}"
        for paths, word in (
            (result.created, "created"),
            (result.changed, "changed"),
            (result.deleted, "deleted"),
        )
        if paths
    ]
    done = ", ".join(counts) if counts else "nothing saved"
    return f"{done} (dry run)" if result.dry_run else done


class ExtractionJob:
    """One ``memory/extract`` run in the background, with its work-done progress."""

    def __init__(
        self,
        ls: MemoryServer,
        job_id: str,
        directory: MemoryDirectory,
        transcript: Path,
        *,
        model: str | None,
        dry_run: bool,
        token: types.ProgressToken | None,
    ) -> None:
        self.ls = ls
        self.id = job_id
        self.directory = directory
        self.transcript = transcript
        self.model = model
        self.dry_run = dry_run
        #: The client's own token, else one we create (when the client shows progress).
        self.token = token
        self.progress_begun = False

    async def start_progress(self) -> None:
        ls = self.ls
        if self.token is None and ls.client_supports("window.work_done_progress"):
            token = f"memdir-extract-{self.id}"
            try:
                await ls.work_done_progress.create_async(token)
            except Exception as exc:
                logger.warning("work done progress refused: %s", exc)
            else:
                self.token = token
        if self.token is None:
            return
        ls.extraction_tokens[self.token] = self.id
        title = "memdir: extracting memories" + (" (dry run)" if self.dry_run else "")
        ls.work_done_progress.begin(
            self.token,
            types.WorkDoneProgressBegin(
                title=title, message=self.transcript.name, percentage=0, cancellable=True
            ),
        )
        self.progress_begun = True

    async def on_progress(self, event: ExtractionProgress) -> None:
        if not self.progress_begun or self.token is None or event.stage == "finished":
            return  # "finished" is the End sent once the result is known
        self.ls.work_done_progress.report(
            self.token,
            types.WorkDoneProgressReport(message=event.message, percentage=event.percentage),
        )

    def end_progress(self, message: str) -> None:
        if self.token is None:
            return
        self.ls.extraction_tokens.pop(self.token, None)
        if self.progress_begun:
            self.ls.work_done_progress.end(self.token, types.WorkDoneProgressEnd(message=message))
            # pygls keeps a cancellation future per token forever; this one is done.
            self.ls.work_done_progress.tokens.pop(self.token, None)

    async def extract(self) -> ExtractionResult:
        await load_write_path()  # not on the event loop (the agent loop loads the SDK so too)
        from memdir.extract.loop import run_extraction
        from memdir.extract.results import ExtractionResult
        from memdir.extract.transcript import read_transcript

        try:
            loaded = await asyncio.to_thread(read_transcript, self.transcript)
        except OSError as exc:
            return ExtractionResult(
                "error", self.directory.root, self.dry_run, f"cannot read the transcript: {exc}"
            )
        return await run_extraction(
            loaded,
            self.directory.root,
            project_root=project_root_for(self.ls, loaded),
            model=self.model,
            dry_run=self.dry_run,
            settings=self.directory.settings,
            on_progress=self.on_progress,
        )

    async def run(self) -> None:
        ls = self.ls
        try:
            await self.start_progress()
            result = await self.extract()
        except asyncio.CancelledError:
            # Writes made before the cancel stay (each is atomic): re-read the directory.
            self.end_progress("cancelled")
            if not self.dry_run:
                await refresh_written(ls, [FileEvent(self.directory.index_path, "changed")])
            cancelled = T.ExtractOutcome(
                id=self.id,
                directory=ls.path_to_uri(self.directory.root),
                status="cancelled",
                reason="cancelled by the client",
                dry_run=self.dry_run,
            )
            ls.protocol.notify(P.MEMORY_EXTRACT_RESULT, to_wire(cancelled))
            raise
        except Exception as exc:
            from memdir.extract.results import ExtractionResult
            from memdir.recall.select import credential_values
            from memdir.secrets import redact

            # The reason reaches the client and the log: no key in it, and no traceback text.
            reason = redact(repr(exc), credential_values())
            logger.error("memory/extract %s failed: %s", self.id, reason)
            logger.debug("memory/extract %s failed", self.id, exc_info=True)
            result = ExtractionResult("error", self.directory.root, self.dry_run, reason)
        finally:
            ls.extractions.pop(self.id, None)
        if result.changes and not self.dry_run:
            await refresh_written(ls, file_events(self.directory, result.changes))
        self.end_progress(end_message(result))
        outcome = extract_outcome(ls, self.id, self.directory, result)
        ls.protocol.notify(P.MEMORY_EXTRACT_RESULT, to_wire(outcome))


async def memory_extract(ls: MemoryServer, params: Any) -> Any:
    """Start the extraction agent; answer ``{id}`` at once, ``memory/extractResult`` later.

    A run calls the model for up to five turns: far too long to hold a request open. Progress
    goes through work-done progress (the client's ``workDoneToken``, else one the server
    creates when the client shows progress), and cancelling that progress cancels the run.
    """
    request = structure_params(params, T.ExtractParams)
    directory = resolve_directory(ls, request)
    refusal = directory.write_refusal()
    if refusal is not None:
        # Dry runs too: nothing they find could be saved here.
        raise RequestFailed(refusal)
    if not request.transcript.strip():
        raise JsonRpcInvalidParams("`transcript` must not be empty")
    transcript = transcript_path(request.transcript)
    token = request.work_done_token
    if token is not None and token in ls.extraction_tokens:
        raise JsonRpcInvalidParams(f"the work done token {token!r} is already in use")
    job = ExtractionJob(
        ls,
        uuid.uuid4().hex,
        directory,
        transcript,
        model=request.model,
        dry_run=request.dry_run,
        token=token,
    )
    ls.extractions[job.id] = ls.spawn(job.run(), f"extraction {job.id}")
    return to_wire(T.ExtractStarted(job.id))


async def work_done_progress_cancel(
    ls: MemoryServer, params: types.WorkDoneProgressCancelParams
) -> None:
    """The user pressed "cancel" on an extraction's progress: stop the run."""
    job_id = ls.extraction_tokens.get(params.token)
    task = ls.extractions.get(job_id) if job_id is not None else None
    if task is not None:
        task.cancel()


# --- debugging -------------------------------------------------------------------------------


async def memdir_status(ls: MemoryServer, params: Any) -> Any:
    """What the server knows; ``anthropicLoaded`` lets tests check that startup stays light."""
    request = structure_params(params, T.StatusParams)
    encoding = ls.workspace.position_encoding
    directories = []
    for root, directory in ls.directories.items():
        state = None
        if request.session_id is not None:
            session = ls.sessions.peek(root, request.session_id)
            if session is not None:
                state = T.SessionState(
                    budget_used=session.budget_used,
                    budget_limit=session.budget_limit,
                    surfaced=sorted(str(p) for p in session.surfaced),
                    read=sorted(str(p) for p in session.read),
                    compactions=session.compactions,
                )
        directories.append(
            T.StatusDirectory(
                path=str(root),
                uri=ls.path_to_uri(root),
                origins=sorted(directory.origins),
                settings_source=directory.settings.source,
                settings_errors=list(directory.settings.errors),
                index_line_limit=directory.settings.index_line_limit,
                writable=directory.writable,
                read_only_reason=directory.read_only,
                notice=directory.notice,
                session=state,
            )
        )
    status = T.StatusResult(
        version=__version__,
        directories=directories,
        anthropic_loaded="anthropic" in sys.modules,
        position_encoding=str(getattr(encoding, "value", encoding)),
        editor_settings=T.EditorSettingsView(
            directories=list(ls.editor_settings.directories),
            overrides=dict(ls.editor_settings.overrides),
        ),
        trusted=ls.trusted,
    )
    return to_wire(status)


async def memdir_did_grant_workspace_trust(ls: MemoryServer, params: Any) -> None:
    """The user trusted the workspace: load projects, allow writes (discovery decides where)."""
    try:
        structure_params(params, T.GrantTrustParams)
    except JsonRpcInvalidParams as exc:
        ls.log(f"{P.MEMDIR_DID_GRANT_WORKSPACE_TRUST}: {exc.message}", types.MessageType.Warning)
        return
    if ls.trusted:
        return
    ls.trusted = True
    ls.log("workspace trusted: memdir-lsp may now run git and write")
    await ls.settings_changed()
