"""Finding the memory directories of a workspace.

Per workspace folder, three sources (spec section 2 and issue 5):

* the folder itself, when it holds ``MEMORY.md`` or has the agent's memory-dir layout
  (``<config>/projects/<slug>/memory``, ``agent-memory[-local]/<agent>``): a memory directory
  opened directly as a workspace;
* the agent's memory dir of the folder's project (canonical git root → slug under
  ``$CLAUDE_CONFIG_DIR`` or ``~/.claude``), even though it lies outside the workspace;
* the ``memdir.directories`` setting (absolute, ``~/`` or relative to the folder).

A document opened from a memory dir the workspace does not cover (the agent's dir of another
project, say) adds that dir too. Directories that do not exist are not served. Which of them
the server may write in follows from why each was found (``server.WRITABLE_ORIGINS``): a folder
found only because it looks like a memory dir is served read-only.
"""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path

from lsprotocol import types
from memdir import constants as C
from memdir.agent.paths import locate_memory_dir
from memdir.config import settings_from_mapping

from memdir_lsp.directory import GIT_STATE
from memdir_lsp.lifecycle import folder_paths
from memdir_lsp.server import DocumentEvent, FileEvent, MemoryServer
from memdir_lsp.settings import EditorSettings

logger = logging.getLogger(__name__)

#: How far above an opened file to look for the memory dir it belongs to.
MAX_ANCESTORS = 4


def looks_like_memory_dir(path: Path) -> bool:
    """A directory the agent would use as memory: it has an index, or the agent's layout."""
    if (path / C.INDEX_FILENAME).is_file():
        return True
    parent = path.parent
    if path.name == C.MEMORY_DIRNAME and parent.parent.name == C.PROJECTS_DIRNAME:
        return path.is_dir()
    return parent.name in ("agent-memory", "agent-memory-local") and path.is_dir()


def _setting_paths(value: str, folder: Path | None) -> Path | None:
    expanded = Path(value).expanduser()
    if expanded.is_absolute():
        return Path(os.path.abspath(expanded))
    if folder is None:
        return None
    return Path(os.path.abspath(folder / expanded))


def find_directories(
    folders: Sequence[Path],
    settings: EditorSettings,
    env: Mapping[str, str] | None = None,
) -> dict[Path, set[str]]:
    """Every memory directory of the workspace, with why each was found."""
    return discover(folders, settings, env)[0]


def discover(
    folders: Sequence[Path],
    settings: EditorSettings,
    env: Mapping[str, str] | None = None,
) -> tuple[dict[Path, set[str]], dict[Path, Path]]:
    """Every memory directory of the workspace, with why each was found; and the project
    root of each memory dir that is a workspace folder's agent memory dir.

    The project is the one whose memory the dir is: for the agent's dir of a folder, the
    project root the agent derives it from (the canonical git root); a dir found otherwise
    (opened, a setting) that is still some folder's agent memory dir (memory switched off, say)
    belongs to that folder. Any other dir has no project: the citation rules stay silent.
    """
    found: dict[Path, set[str]] = {}
    projects: dict[Path, Path] = {}
    fallback: dict[Path, Path] = {}
    # The editor's `target`: a memdir.toml would live in the memory dir being looked for.
    target = settings_from_mapping(settings.overrides).agent_target

    def add(path: Path | None, origin: str) -> None:
        if path is not None and path.is_dir():
            found.setdefault(Path(os.path.abspath(path)), set()).add(origin)

    for folder in folders:
        if looks_like_memory_dir(folder):
            add(folder, "workspace")
        try:
            location = locate_memory_dir(folder, env=env, target=target)
        except OSError as exc:
            logger.warning("cannot locate the agent's memory dir of %s: %s", folder, exc)
        else:
            if location.memory_dir is not None:
                memory_dir = Path(os.path.abspath(location.memory_dir))
                if location.enabled:
                    add(location.memory_dir, "agent")
                    projects.setdefault(memory_dir, location.project_root)
                else:
                    fallback.setdefault(memory_dir, folder)
        for value in settings.directories:
            add(_setting_paths(value, folder), "setting")
    if not folders:
        for value in settings.directories:
            add(_setting_paths(value, None), "setting")
    for memory_dir, folder in fallback.items():
        projects.setdefault(memory_dir, folder)
    return found, projects


async def rediscover(server: MemoryServer) -> None:
    found, projects = discover(folder_paths(server), server.editor_settings)
    server.project_roots = projects
    # Directories added because a document was opened from them stay while known.
    for root, directory in server.directories.items():
        if "opened" in directory.origins and root.is_dir():
            found.setdefault(root, set()).add("opened")
    if server.set_directories(found):
        server.log("memory directories: " + (", ".join(map(str, server.directories)) or "none"))
        await server.fire(server.hooks.directories_changed)
        await register_watchers(server)


async def register_watchers(server: MemoryServer) -> None:
    """Watch every memory dir and every memory dir's project (dynamic registration, when the
    client can do it).

    Memory dirs outside the workspace (the agent's) need relative patterns with their own base;
    without relative-pattern support only the workspace-wide ``**/*.md`` is watched, and a
    project only when its root is a workspace folder. A project's ``.git/index`` and
    ``.git/HEAD`` are watched by name: a commit or checkout changes git's renames, and clients
    often leave ``.git`` out of their ``**/*``.
    """
    if not server.client_supports("workspace.did_change_watched_files.dynamic_registration"):
        return
    relative = server.client_supports("workspace.did_change_watched_files.relative_pattern_support")
    watchers: list[types.FileSystemWatcher] = []
    projects = sorted({d.project_root for d in server.directories.values() if d.project_root})
    if relative:
        for root in server.directories:
            for glob in ("**/*.md", C.INDEX_FILENAME, "memdir.toml"):
                watchers.append(_relative_watcher(server, root, glob))
        for project in projects:
            for glob in ("**/*", *GIT_STATE):
                watchers.append(_relative_watcher(server, project, glob))
    watchers.append(types.FileSystemWatcher(glob_pattern="**/*.md"))
    watchers.append(types.FileSystemWatcher(glob_pattern="**/memdir.toml"))
    folders = set(folder_paths(server))
    if not relative and any(project in folders for project in projects):
        watchers.append(types.FileSystemWatcher(glob_pattern="**/*"))
        watchers.extend(types.FileSystemWatcher(glob_pattern=f"**/{g}") for g in GIT_STATE)
    key = repr(sorted(repr(w) for w in watchers))
    if key == server.watcher_key:
        return
    registration_id = str(uuid.uuid4())
    try:
        await server.client_register_capability_async(
            types.RegistrationParams(
                registrations=[
                    types.Registration(
                        id=registration_id,
                        method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                        register_options=types.DidChangeWatchedFilesRegistrationOptions(
                            watchers=watchers
                        ),
                    )
                ]
            )
        )
    except Exception as exc:
        logger.warning("could not register file watchers: %s", exc)
        return
    server.watcher_key = key
    server.watcher_ids.append(registration_id)
    # Replace the previous registration rather than piling up duplicate events.
    for old in server.watcher_ids[:-1]:
        try:
            await server.client_unregister_capability_async(
                types.UnregistrationParams(
                    unregisterations=[
                        types.Unregistration(
                            id=old, method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES
                        )
                    ]
                )
            )
        except Exception as exc:
            logger.warning("could not unregister file watchers: %s", exc)
    del server.watcher_ids[:-1]


def _relative_watcher(server: MemoryServer, base: Path, glob: str) -> types.FileSystemWatcher:
    return types.FileSystemWatcher(
        glob_pattern=types.RelativePattern(base_uri=server.path_to_uri(base), pattern=glob)
    )


async def on_initialized(server: MemoryServer) -> None:
    await rediscover(server)
    await register_watchers(server)


async def on_document(server: MemoryServer, event: DocumentEvent) -> None:
    """A Markdown file opened from an unknown memory dir makes that dir known."""
    if event.kind != "open":
        return
    path = server.uri_to_path(event.uri)
    if path is None or path.suffix != ".md" or server.directory_for(path) is not None:
        return
    for ancestor in list(path.parents)[:MAX_ANCESTORS]:
        if looks_like_memory_dir(ancestor):
            root = Path(os.path.abspath(ancestor))
            found = {r: set(d.origins) for r, d in server.directories.items()}
            found[root] = {"opened"}
            server.set_directories(found)
            await server.fire(server.hooks.directories_changed)
            await register_watchers(server)
            return


async def on_files(server: MemoryServer, events: Sequence[FileEvent]) -> None:
    names = {event.path.name for event in events}
    if "memdir.toml" in names or "pyproject.toml" in names:
        server.reload_settings()
        await server.fire(server.hooks.settings_changed)
    # An index created or deleted at a workspace folder's top turns it into (or out of) one.
    folders = set(folder_paths(server))
    if any(e.path.name == C.INDEX_FILENAME and e.path.parent in folders for e in events):
        await rediscover(server)


def register(server: MemoryServer) -> None:
    server.hooks.initialized.append(on_initialized)
    server.hooks.document.append(on_document)
    server.hooks.files.append(on_files)
