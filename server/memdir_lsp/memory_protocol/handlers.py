"""The ``memory/*`` protocol for agent chat panels: the agent's view of a memory directory.

Requests take an optional ``directory`` (a file URI of a known memory dir; default the
workspace's first) and, where sessions matter, a ``sessionId``. Payloads are camelCase. Bad params
are answered with a JSON-RPC InvalidParams error; paths that resolve outside the memory dir are
refused. Recall requests import the recall pipeline (and with it the ``anthropic`` SDK) only when
the first one arrives, so starting the server stays cheap.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import re
import sys
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from memdir import __version__
from memdir import constants as C
from memdir.manifest import format_manifest, header_json, iso_mtime
from memdir.surface import surface_file
from pygls.exceptions import JsonRpcInvalidParams

from memdir_lsp import protocol as P
from memdir_lsp.navigation import visibility
from memdir_lsp.server import FileEvent, MemoryServer
from memdir_lsp.state import MemoryDirectory

if TYPE_CHECKING:
    from memdir.extract import ExtractionProgress, ExtractionResult
    from memdir.transcript import Transcript

logger = logging.getLogger(__name__)

#: memory/search stops after this many matches (and says so).
MAX_SEARCH_MATCHES = 500
#: Longest line text returned by memory/search.
MAX_MATCH_TEXT = 400


# --- params ----------------------------------------------------------------------------------


def plain(value: Any) -> Any:
    """pygls hands unknown methods' params over as nested namedtuples; back to dicts/lists."""
    if isinstance(value, tuple) and hasattr(value, "_asdict"):
        return {k: plain(v) for k, v in value._asdict().items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def params_dict(params: Any) -> dict[str, Any]:
    data = plain(params)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise JsonRpcInvalidParams("params must be an object")
    return data


def get_str(data: Mapping[str, Any], key: str, *, required: bool = False) -> str | None:
    value = data.get(key)
    if value is None:
        if required:
            raise JsonRpcInvalidParams(f"`{key}` is required")
        return None
    if not isinstance(value, str):
        raise JsonRpcInvalidParams(f"`{key}` must be a string, got {type(value).__name__}")
    if required and not value.strip():
        raise JsonRpcInvalidParams(f"`{key}` must not be empty")
    return value


def get_str_list(data: Mapping[str, Any], key: str) -> list[str]:
    value = data.get(key)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise JsonRpcInvalidParams(f"`{key}` must be a list of strings")
    return list(value)


def resolve_directory(ls: MemoryServer, data: Mapping[str, Any]) -> MemoryDirectory:
    uri = get_str(data, "directory")
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
        raise JsonRpcInvalidParams(f"{uri} is not a known memory directory (known: {known})")
    return directory


def resolve_file(directory: MemoryDirectory, name: str) -> Path:
    """A file named by a path relative to the dir, an absolute path or a file URI, inside it."""
    if name.startswith("file:"):
        resolved = MemoryServer.uri_to_path(name)
        name = str(resolved) if resolved else ""
    path = directory.resolve_inside(name)
    if path is None:
        raise JsonRpcInvalidParams(f"{name!r} is outside the memory directory {directory.root}")
    return path


def _session_id(data: Mapping[str, Any], *, required: bool) -> str | None:
    return get_str(data, "sessionId", required=required)


# --- requests --------------------------------------------------------------------------------


def index_result(directory: MemoryDirectory) -> dict[str, Any]:
    index = directory.index()
    load = index.load
    return {
        "directory": str(directory.root),
        "path": str(index.path),
        "exists": index.exists or directory.index_path.exists(),
        "text": load.text,
        "lines": load.line_count,
        "chars": load.char_count,
        "loadedLines": load.loaded_lines,
        "loadedChars": load.loaded_chars,
        "maxLines": C.INDEX_MAX_LINES,
        "maxChars": C.INDEX_MAX_CHARS,
        "truncated": load.truncated,
        "reason": load.reason,
        "entries": len(index.entries),
        "cutEntries": [
            {"line": e.line, "title": e.title, "path": e.path, "raw": e.raw}
            for e in index.cut_entries
        ],
    }


async def memory_index(ls: MemoryServer, params: Any) -> dict[str, Any]:
    directory = resolve_directory(ls, params_dict(params))
    return await asyncio.to_thread(index_result, directory)


def manifest_result(directory: MemoryDirectory) -> dict[str, Any]:
    result = directory.scan()
    return {
        "directory": str(directory.root),
        "manifest": format_manifest(result.candidates),
        "candidates": [header_json(h) for h in result.candidates],
        "cutOff": [h.rel_path for h in result.cut_off],
        "skipped": [{"path": s.rel_path, "reason": s.reason} for s in result.skipped],
    }


async def memory_manifest(ls: MemoryServer, params: Any) -> dict[str, Any]:
    directory = resolve_directory(ls, params_dict(params))
    return await asyncio.to_thread(manifest_result, directory)


def list_result(directory: MemoryDirectory) -> dict[str, Any]:
    result = directory.scan()
    index = directory.index()
    ranks = {h.rel_path: n for n, h in enumerate(result.candidates, 1)}
    memories = []
    for header in result.all_files:
        vis = visibility(directory, header.rel_path, index, ranks, len(result.candidates))
        memories.append(
            {
                "path": header.rel_path,
                "name": header.name,
                "type": header.type,
                "description": header.description,
                "mtime": iso_mtime(header.mtime),
                "size": header.size,
                "visibility": vis.to_json(),
            }
        )
    return {
        "directory": str(directory.root),
        "memories": memories,
        "windowSize": C.SCAN_MAX_FILES,
        "skipped": [{"path": s.rel_path, "reason": s.reason} for s in result.skipped],
    }


async def memory_list(ls: MemoryServer, params: Any) -> dict[str, Any]:
    directory = resolve_directory(ls, params_dict(params))
    return await asyncio.to_thread(list_result, directory)


async def memory_read(ls: MemoryServer, params: Any) -> dict[str, Any]:
    data = params_dict(params)
    directory = resolve_directory(ls, data)
    name = get_str(data, "path", required=True)
    assert name is not None
    path = resolve_file(directory, name)
    if directory.is_index(path):
        raise JsonRpcInvalidParams(
            "MEMORY.md is the index (see memory/index); path B never surfaces it"
        )
    if not path.is_file():
        raise JsonRpcInvalidParams(f"no such memory: {name}")
    try:
        memory = await asyncio.to_thread(surface_file, path, directory.root)
    except OSError as exc:
        raise JsonRpcInvalidParams(str(exc)) from exc
    return {
        "path": memory.rel_path,
        "text": memory.text,
        "content": memory.content,
        "bytes": memory.bytes,
        "truncated": memory.truncated,
        "lines": memory.lines,
        "mtime": iso_mtime(memory.mtime),
    }


def glob_to_regex(glob: str) -> re.Pattern[str]:
    """``**/`` spans any number of folders, ``*`` and ``?`` stay inside one name."""
    out = []
    i = 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def glob_match(rel: str, glob: str) -> bool:
    """Match a ``/``-separated path; a glob without ``/`` matches the file name anywhere."""
    pattern = glob_to_regex(glob)
    if "/" not in glob:
        return pattern.match(rel.rsplit("/", 1)[-1]) is not None
    return pattern.match(rel) is not None


def search_result(
    directory: MemoryDirectory, pattern: re.Pattern[str], glob: str
) -> dict[str, Any]:
    matches: list[dict[str, Any]] = []
    truncated = False
    paths = [directory.index_path] if directory.index_path.exists() else []
    paths += directory.topic_paths()
    for path in paths:
        rel = directory.rel(path)
        if not glob_match(rel, glob):
            continue
        text = directory.text(path)
        if text is None:
            continue
        for number, line in enumerate(text.split("\n")):
            found = pattern.search(line)
            if found is None:
                continue
            if len(matches) >= MAX_SEARCH_MATCHES:
                truncated = True
                break
            matches.append(
                {
                    "path": rel,
                    "line": number,
                    "character": found.start(),
                    "text": line[:MAX_MATCH_TEXT],
                }
            )
        if truncated:
            break
    return {"directory": str(directory.root), "matches": matches, "truncated": truncated}


async def memory_search(ls: MemoryServer, params: Any) -> dict[str, Any]:
    data = params_dict(params)
    directory = resolve_directory(ls, data)
    raw = get_str(data, "pattern", required=True)
    assert raw is not None
    glob = get_str(data, "glob") or "**/*.md"
    ignore_case = data.get("ignoreCase", False)
    if not isinstance(ignore_case, bool):
        raise JsonRpcInvalidParams("`ignoreCase` must be a boolean")
    try:
        pattern = re.compile(raw, re.IGNORECASE if ignore_case else 0)
    except re.error as exc:
        raise JsonRpcInvalidParams(f"`pattern` is not a valid regular expression: {exc}") from exc
    return await asyncio.to_thread(search_result, directory, pattern, glob)


# --- recall (path B) ------------------------------------------------------------------------


def _recall_params(data: Mapping[str, Any]) -> tuple[str, list[str]]:
    query = get_str(data, "query", required=True)
    assert query is not None
    return query, get_str_list(data, "recentTools")


def recall_payload(result: Any) -> dict[str, Any]:
    """A :class:`memdir.recall.RecallResult` in camelCase for the wire."""
    return {
        "query": result.query,
        "triggered": result.triggered,
        "reason": result.reason,
        "selectedMemories": list(result.selected),
        "surfaced": [
            {"path": m.rel_path, "text": m.text, "bytes": m.bytes, "truncated": m.truncated}
            for m in result.surfaced
        ],
        "attachment": result.attachment,
        "budget": {
            "used": result.budget_used,
            "left": result.budget_left,
            "limit": result.budget_limit,
            "surfacedNow": result.surfaced_bytes,
        },
        "selector": result.selector,
        "requestedSelector": result.requested_selector,
        "model": result.model,
        "degraded": result.degraded,
        "why": dict(result.why),
        "dropped": [
            {"path": d.rel_path, "stage": d.stage, "reason": d.reason} for d in result.dropped
        ],
        "candidates": [c.to_json() for c in result.candidates],
        "manifest": result.manifest,
        "elapsedMs": result.timings.total_ms,
    }


async def memory_recall(ls: MemoryServer, params: Any) -> dict[str, Any]:
    """The selection, synchronously: the response carries what surfaced."""
    data = params_dict(params)
    directory = resolve_directory(ls, data)
    query, tools = _recall_params(data)
    session_id = _session_id(data, required=False)
    # Imported on first use: this pulls in the selector (and, with a key, the anthropic SDK).
    from memdir.recall import prefetch
    from memdir.surface import Session

    session = ls.sessions.get(directory.root, session_id) if session_id else Session()
    result = await prefetch(query, directory.root, session, tools, settings=directory.settings)
    return recall_payload(result)


async def memory_prefetch(ls: MemoryServer, params: Any) -> dict[str, Any]:
    """Start path B in the background; answer at once, deliver memory/relevantMemories later.

    Like the agent, the caller does not wait for the selection: it goes on with its turn and
    takes the memories when the notification arrives. Nothing is sent when the prefetch does
    not trigger (the response says so, with the reason).
    """
    data = params_dict(params)
    directory = resolve_directory(ls, data)
    query, tools = _recall_params(data)
    session_id = _session_id(data, required=True)
    assert session_id is not None
    from memdir.recall import start_prefetch
    from memdir.trigger import should_prefetch

    session = ls.sessions.get(directory.root, session_id)
    request_id = uuid.uuid4().hex
    if session.spent:
        return {"id": request_id, "triggered": False, "reason": "session budget spent"}
    decision = should_prefetch(query, directory.settings.trigger)
    if not decision.triggered:
        return {"id": request_id, "triggered": False, "reason": decision.reason}
    task = start_prefetch(query, directory.root, session, tools, settings=directory.settings)

    async def deliver() -> None:
        result = await task
        payload = recall_payload(result)
        ls.protocol.notify(
            P.MEMORY_RELEVANT_MEMORIES,
            {
                "id": request_id,
                "sessionId": session_id,
                "directory": ls.path_to_uri(directory.root),
                "selectedMemories": payload["selectedMemories"],
                "surfaced": payload["surfaced"],
                "attachment": payload["attachment"],
                "budget": payload["budget"],
                "triggered": result.triggered,
                "reason": result.reason,
                "selector": payload["selector"],
                "degraded": payload["degraded"],
                "why": payload["why"],
                "dropped": payload["dropped"],
            },
        )

    ls.spawn(deliver(), f"prefetch {request_id}")
    return {"id": request_id, "triggered": True, "reason": decision.reason}


# --- session notifications -------------------------------------------------------------------


async def memory_did_read(ls: MemoryServer, params: Any) -> None:
    try:
        data = params_dict(params)
        directory = resolve_directory(ls, data)
        session_id = _session_id(data, required=True)
        names = get_str_list(data, "paths")
    except JsonRpcInvalidParams as exc:
        # A notification has no response to carry the error: log it instead.
        ls.log(f"{P.MEMORY_DID_READ}: {exc.message}", types.MessageType.Warning)
        return
    assert session_id is not None
    paths = []
    for name in names:
        try:
            paths.append(resolve_file(directory, name))
        except JsonRpcInvalidParams as exc:
            ls.log(f"{P.MEMORY_DID_READ}: {exc.message}", types.MessageType.Warning)
    ls.sessions.get(directory.root, session_id).mark_read(paths)


async def memory_compacted(ls: MemoryServer, params: Any) -> None:
    try:
        data = params_dict(params)
        directory = resolve_directory(ls, data)
        session_id = _session_id(data, required=True)
    except JsonRpcInvalidParams as exc:
        ls.log(f"{P.MEMORY_COMPACTED}: {exc.message}", types.MessageType.Warning)
        return
    assert session_id is not None
    ls.sessions.get(directory.root, session_id).compact()


# --- the write path: memory/tool and memory/extract ----------------------------------------

#: camelCase spellings accepted for the API memory tool's (snake_case) input fields. The tool's
#: input is normally forwarded verbatim from a model's ``tool_use`` block (snake_case), but the
#: rest of this protocol is camelCase, so both are understood.
TOOL_FIELD_ALIASES = {
    "fileText": "file_text",
    "oldStr": "old_str",
    "newStr": "new_str",
    "insertLine": "insert_line",
    "insertText": "insert_text",
    "oldPath": "old_path",
    "newPath": "new_path",
    "viewRange": "view_range",
}


async def load_write_path() -> None:
    """Import the memory tool, and the anthropic SDK it is built on, in a worker thread.

    The first import takes over a second; done inline it would freeze every other request
    (diagnostics, completion) on the event loop meanwhile. Later calls find it loaded.
    """
    if "memdir.memory_tool" not in sys.modules:
        await asyncio.to_thread(importlib.import_module, "memdir.memory_tool")


def tool_command(data: Mapping[str, Any]) -> dict[str, Any]:
    """The memory-tool input in ``params`` (everything but ``directory``), snake_case."""
    command: dict[str, Any] = {}
    for key, value in data.items():
        if key == "directory":
            continue
        name = TOOL_FIELD_ALIASES.get(key, key)
        if name in command:
            raise JsonRpcInvalidParams(f"`{name}` is given twice (as `{key}` too)")
        command[name] = value
    return command


def file_events(directory: MemoryDirectory, changes: Sequence[Any]) -> list[FileEvent]:
    """Write results (``FileChange`` or extraction ``Change``) as watched-file events."""
    events: list[FileEvent] = []
    for change in changes:
        path = directory.path_of(change.path)
        if change.kind == "renamed" and change.new_path:
            events += [(path, "deleted"), (directory.path_of(change.new_path), "created")]
        else:
            events.append((path, change.kind))
    return events


async def refresh_written(ls: MemoryServer, events: Sequence[FileEvent]) -> None:
    """The server wrote on disk, outside the editor: treat it like a watched-file change.

    The client's watcher may report the same files later (a second, cheap re-lint), but not
    every client watches files, and this way a caller that gets the response already sees
    diagnostics that include the write.
    """
    if events:
        await ls.fire(ls.hooks.files, list(events))


def change_payload(ls: MemoryServer, directory: MemoryDirectory, change: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "kind": change.kind,
        "path": change.path,
        "uri": ls.path_to_uri(directory.path_of(change.path)),
    }
    if change.new_path is not None:
        entry["newPath"] = change.new_path
        entry["newUri"] = ls.path_to_uri(directory.path_of(change.new_path))
    if change.is_dir:
        entry["isDir"] = True
    diff = getattr(change, "diff", "")
    if diff:
        entry["diff"] = diff
    return entry


async def memory_tool(ls: MemoryServer, params: Any) -> dict[str, Any]:
    """One command of the API memory tool (``memory_20250818``) over the memory dir.

    The tool's own failures (a path escaping ``/memories``, a missing file, no match) are
    results with ``isError: true`` and the API's exact wording, as a model would see them; only
    input that is not a memory command at all is a JSON-RPC error.
    """
    data = params_dict(params)
    directory = resolve_directory(ls, data)
    command = tool_command(data)
    # Loaded on first use: the tool is built on the anthropic SDK, which startup never loads.
    await load_write_path()
    from memdir.memory_tool import InvalidCommandError, MemdirMemoryTool, ToolResult, parse_command

    try:
        parse_command(command)
    except InvalidCommandError as exc:
        raise JsonRpcInvalidParams(str(exc)) from exc
    tool = MemdirMemoryTool(directory.root, settings=directory.settings)
    try:
        result = await tool.arun(command)
    except Exception as exc:  # arun reports every expected failure as a result; belt and braces
        logger.exception("memory/tool failed")
        result = ToolResult(f"Error: {exc}", is_error=True)
    changes = list(tool.changes)
    await refresh_written(ls, file_events(directory, changes))
    return {
        "text": result.text,
        "isError": result.is_error,
        "changes": [change_payload(ls, directory, c) for c in changes],
        "warnings": list(tool.warnings),
    }


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


def extract_payload(
    ls: MemoryServer, job_id: str, directory: MemoryDirectory, result: ExtractionResult
) -> dict[str, Any]:
    return {
        "id": job_id,
        "directory": ls.path_to_uri(directory.root),
        "status": result.status,
        "reason": result.reason,
        "dryRun": result.dry_run,
        "created": result.created,
        "changed": result.changed,
        "deleted": result.deleted,
        "renamed": [
            {"from": c.path, "to": c.new_path} for c in result.changes if c.kind == "renamed"
        ],
        "changes": [change_payload(ls, directory, c) for c in result.changes],
        "summary": result.summary,
        "turns": result.turns,
        "stopReason": result.stop_reason,
        "model": result.model,
        "warnings": list(result.warnings),
    }


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
        await load_write_path()  # the agent loop imports the SDK: not on the event loop
        from memdir.extract import ExtractionResult, run_extraction
        from memdir.transcript import read_transcript

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
                await refresh_written(ls, [(self.directory.index_path, "changed")])
            ls.protocol.notify(
                P.MEMORY_EXTRACT_RESULT,
                {
                    "id": self.id,
                    "directory": ls.path_to_uri(self.directory.root),
                    "status": "cancelled",
                    "reason": "cancelled by the client",
                    "dryRun": self.dry_run,
                    "created": [],
                    "changed": [],
                    "deleted": [],
                    "summary": "",
                },
            )
            raise
        except Exception as exc:
            from memdir.extract import ExtractionResult

            logger.exception("memory/extract %s failed", self.id)
            result = ExtractionResult("error", self.directory.root, self.dry_run, repr(exc))
        finally:
            ls.extractions.pop(self.id, None)
        if result.changes and not self.dry_run:
            await refresh_written(ls, file_events(self.directory, result.changes))
        self.end_progress(end_message(result))
        ls.protocol.notify(
            P.MEMORY_EXTRACT_RESULT, extract_payload(ls, self.id, self.directory, result)
        )


def _progress_token(data: Mapping[str, Any]) -> types.ProgressToken | None:
    token = data.get("workDoneToken")
    if token is None or (isinstance(token, str | int) and not isinstance(token, bool)):
        return token
    raise JsonRpcInvalidParams("`workDoneToken` must be a string or an integer")


async def memory_extract(ls: MemoryServer, params: Any) -> dict[str, Any]:
    """Start the extraction agent; answer ``{id}`` at once, ``memory/extractResult`` later.

    A run calls the model for up to five turns: far too long to hold a request open. Progress
    goes through work-done progress (the client's ``workDoneToken``, else one the server
    creates when the client shows progress), and cancelling that progress cancels the run.
    """
    data = params_dict(params)
    directory = resolve_directory(ls, data)
    name = get_str(data, "transcript", required=True)
    assert name is not None
    transcript = transcript_path(name)
    model = get_str(data, "model")
    dry_run = data.get("dryRun", False)
    if not isinstance(dry_run, bool):
        raise JsonRpcInvalidParams("`dryRun` must be a boolean")
    token = _progress_token(data)
    if token is not None and token in ls.extraction_tokens:
        raise JsonRpcInvalidParams(f"the work done token {token!r} is already in use")
    job = ExtractionJob(
        ls, uuid.uuid4().hex, directory, transcript, model=model, dry_run=dry_run, token=token
    )
    ls.extractions[job.id] = ls.spawn(job.run(), f"extraction {job.id}")
    return {"id": job.id}


async def work_done_progress_cancel(
    ls: MemoryServer, params: types.WorkDoneProgressCancelParams
) -> None:
    """The user pressed "cancel" on an extraction's progress: stop the run."""
    job_id = ls.extraction_tokens.get(params.token)
    task = ls.extractions.get(job_id) if job_id is not None else None
    if task is not None:
        task.cancel()


# --- debugging -------------------------------------------------------------------------------


async def memdir_status(ls: MemoryServer, params: Any) -> dict[str, Any]:
    """What the server knows; ``anthropicLoaded`` lets tests check that startup stays light."""
    data = params_dict(params)
    session_id = get_str(data, "sessionId")
    encoding = ls.workspace.position_encoding
    directories = []
    for root, directory in ls.directories.items():
        entry: dict[str, Any] = {
            "path": str(root),
            "uri": ls.path_to_uri(root),
            "origins": sorted(directory.origins),
            "settingsSource": directory.settings.source,
            "settingsErrors": list(directory.settings.errors),
            "indexLineLimit": directory.settings.index_line_limit,
        }
        if session_id is not None:
            session = ls.sessions.peek(root, session_id)
            entry["session"] = (
                None
                if session is None
                else {
                    "budgetUsed": session.budget_used,
                    "budgetLimit": session.budget_limit,
                    "surfaced": sorted(session.surfaced),
                    "read": sorted(session.read),
                    "compactions": session.compactions,
                }
            )
        directories.append(entry)
    return {
        "version": __version__,
        "directories": directories,
        "anthropicLoaded": "anthropic" in sys.modules,
        "positionEncoding": getattr(encoding, "value", encoding),
        "editorSettings": {
            "directories": list(ls.editor_settings.directories),
            "overrides": dict(ls.editor_settings.overrides),
        },
    }


def register(server: MemoryServer) -> None:
    def request(handler: Any) -> Any:
        # Not caught: an unexpected error must reach the client as an error response
        # (pygls turns it into InternalError), not as a silent null.
        return server.guard(handler, catch=False)

    for method, handler in (
        (P.MEMORY_INDEX, memory_index),
        (P.MEMORY_MANIFEST, memory_manifest),
        (P.MEMORY_LIST, memory_list),
        (P.MEMORY_READ, memory_read),
        (P.MEMORY_SEARCH, memory_search),
        (P.MEMORY_RECALL, memory_recall),
        (P.MEMORY_PREFETCH, memory_prefetch),
        (P.MEMORY_TOOL, memory_tool),
        (P.MEMORY_EXTRACT, memory_extract),
        (P.MEMDIR_STATUS, memdir_status),
    ):
        server.feature(method)(request(handler))
    # pygls cancels its own future for the token first, then calls this.
    server.feature(types.WINDOW_WORK_DONE_PROGRESS_CANCEL)(
        server.guard(work_done_progress_cancel, wait=False)
    )
    server.feature(P.MEMORY_DID_READ)(server.guard(memory_did_read))
    server.feature(P.MEMORY_COMPACTED)(server.guard(memory_compacted))
