"""The document and workspace lifecycle, registered once and fanned out to the features.

LSP lets each method have one handler; several features care about the same events (a change
re-checks its directory, rediscovers, refreshes code lenses). pygls updates its workspace before
these run, so every subscriber sees the new text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lsprotocol import types

from memdir_lsp.server import DocumentEvent, FileEvent, FileEventKind, MemoryServer


async def initialize(ls: MemoryServer, params: types.InitializeParams) -> None:
    await ls.fire(ls.hooks.initialize, params)


async def initialized(ls: MemoryServer, params: types.InitializedParams) -> None:
    try:
        await ls.fire(ls.hooks.initialized)
    finally:
        ls.ready.set()


async def shutdown(ls: MemoryServer, params: None) -> None:
    # Pending lints and prefetches have no one left to deliver to.
    for task in list(ls.tasks):
        task.cancel()
    for timer in ls.timers.values():
        timer.cancel()
    ls.timers.clear()


async def did_open(ls: MemoryServer, params: types.DidOpenTextDocumentParams) -> None:
    await ls.fire(ls.hooks.document, DocumentEvent(params.text_document.uri, "open"))


async def did_change(ls: MemoryServer, params: types.DidChangeTextDocumentParams) -> None:
    await ls.fire(ls.hooks.document, DocumentEvent(params.text_document.uri, "change"))


async def did_save(ls: MemoryServer, params: types.DidSaveTextDocumentParams) -> None:
    await ls.fire(ls.hooks.document, DocumentEvent(params.text_document.uri, "save"))


async def did_close(ls: MemoryServer, params: types.DidCloseTextDocumentParams) -> None:
    await ls.fire(ls.hooks.document, DocumentEvent(params.text_document.uri, "close"))


def _paths(ls: MemoryServer, uris: list[str], kind: FileEventKind) -> list[FileEvent]:
    events: list[FileEvent] = []
    for uri in uris:
        path = ls.uri_to_path(uri)
        if path is not None:
            events.append(FileEvent(path, kind))
    return events


_WATCH_KINDS: dict[types.FileChangeType, FileEventKind] = {
    types.FileChangeType.Created: "created",
    types.FileChangeType.Changed: "changed",
    types.FileChangeType.Deleted: "deleted",
}


async def did_change_watched_files(
    ls: MemoryServer, params: types.DidChangeWatchedFilesParams
) -> None:
    events: list[FileEvent] = []
    for change in params.changes:
        path = ls.uri_to_path(change.uri)
        if path is not None:
            events.append(FileEvent(path, _WATCH_KINDS.get(change.type, "changed")))
    await ls.fire(ls.hooks.files, events)


async def did_create_files(ls: MemoryServer, params: types.CreateFilesParams) -> None:
    await ls.fire(ls.hooks.files, _paths(ls, [f.uri for f in params.files], "created"))


async def did_delete_files(ls: MemoryServer, params: types.DeleteFilesParams) -> None:
    await ls.fire(ls.hooks.files, _paths(ls, [f.uri for f in params.files], "deleted"))


async def did_rename_files(ls: MemoryServer, params: types.RenameFilesParams) -> None:
    events: list[FileEvent] = []
    for item in params.files:
        events += _paths(ls, [item.old_uri], "deleted")
        events += _paths(ls, [item.new_uri], "created")
    await ls.fire(ls.hooks.files, events)


async def did_change_workspace_folders(
    ls: MemoryServer, params: types.DidChangeWorkspaceFoldersParams
) -> None:
    # pygls has already updated ls.workspace.folders.
    from memdir_lsp.discovery import rediscover

    await rediscover(ls)


#: Every .md file: memory dirs may lie anywhere in (or, for the agent's dir, outside) a folder.
FILE_OPERATION_FILTERS = [
    types.FileOperationFilter(
        pattern=types.FileOperationPattern(
            glob="**/*.md", matches=types.FileOperationPatternKind.File
        )
    ),
    types.FileOperationFilter(
        pattern=types.FileOperationPattern(glob="**", matches=types.FileOperationPatternKind.Folder)
    ),
]


def register(server: MemoryServer) -> None:
    def early(handler: Any) -> Any:
        # Startup itself: these never wait for startup to finish.
        return server.guard(handler, wait=False)

    # Everything else waits until discovery has run, so a document opened right after
    # `initialized` is matched against the real set of memory directories.
    g = server.guard
    server.feature(types.INITIALIZE)(early(initialize))
    server.feature(types.INITIALIZED)(early(initialized))
    server.feature(types.SHUTDOWN)(early(shutdown))
    server.feature(types.TEXT_DOCUMENT_DID_OPEN)(g(did_open))
    server.feature(types.TEXT_DOCUMENT_DID_CHANGE)(g(did_change))
    server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))(g(did_save))
    server.feature(types.TEXT_DOCUMENT_DID_CLOSE)(g(did_close))
    server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)(g(did_change_watched_files))
    options = types.FileOperationRegistrationOptions(filters=FILE_OPERATION_FILTERS)
    server.feature(types.WORKSPACE_DID_CREATE_FILES, options)(g(did_create_files))
    server.feature(types.WORKSPACE_DID_DELETE_FILES, options)(g(did_delete_files))
    server.feature(types.WORKSPACE_DID_RENAME_FILES, options)(g(did_rename_files))
    server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)(g(did_change_workspace_folders))


def folder_paths(ls: MemoryServer) -> list[Path]:
    """Workspace folders as paths; the root path when the client sent no folders."""
    paths: list[Path] = []
    for folder in ls.workspace.folders.values():
        path = ls.uri_to_path(folder.uri)
        if path is not None:
            paths.append(path)
    if not paths and ls.workspace.root_path:
        paths.append(Path(ls.workspace.root_path))
    return paths
