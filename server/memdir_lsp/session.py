"""One session per memory directory: everything about it that changes while the server runs.

Modelled on ruff's server ``Session``: a directory's lint state (the engine's
:class:`~memdir.lint.state.DirState`), its latest findings, the project its memories cite, the
lock that serialises its runs and the debounce of its edits live on one object,
``directory.session``, and nowhere else. Events (an edit, a file changed on disk, a settings
change, midnight) ask the session to run; a run happens in a worker thread, and what it found
goes to the server's ``findings`` hook, which :mod:`memdir_lsp.diagnostics` delivers.

* The first run reads every file (with work-done progress by files read, :func:`check_all`).
  An edit made meanwhile stops it between files (nothing is delivered from it) and the edit's
  run goes on from there with the newest text: no file is read twice. Until it is done, an
  open file's own findings (its rules, not the directory's) are what the session has for it.
* After that, a run re-reads only the files named (an editor's open buffer replaces the file's
  disk text), and the engine re-runs only the rules whose inputs changed. Watcher events also
  rescan (a stat of every file), so files created or deleted in new folders are noticed.
* The project (what MEM117 and MEM118 check citations against) is loaded in the run's thread,
  since listing it runs git; its files' changes are applied there between runs, and only the
  memories that cite something are checked again. A commit or checkout (``.git/index``,
  ``.git/HEAD``) lists it again after a short debounce.
* "Today" is compared with the state's on every run, and at local midnight (by the server's
  clock) every directory whose date moved is checked again.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import os
import threading
import uuid
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from memdir.lint.diagnostic import Diagnostic

if TYPE_CHECKING:
    from memdir.lint.state import DirState
    from memdir.project.lookup import Changed, Project

    from memdir_lsp.directory import MemoryDirectory
    from memdir_lsp.server import DocumentEvent, FileEvent, FileEventKind, MemoryServer

logger = logging.getLogger(__name__)

#: One file's findings: the engine's tuple, the same object while they stay the same.
Findings = tuple[Diagnostic, ...]
#: Told ``(files done, files listed)`` by a refresh, after each file.
Progress = Callable[[int, int], None]

#: Seconds to wait after git's index or HEAD changed before listing the project again (a
#: commit or checkout writes them several times).
PROJECT_RELOAD_SECONDS = 0.5
#: The longest the midnight timer sleeps before looking at the clock again: a suspended
#: machine's timers run late, the clock does not.
MIDNIGHT_RECHECK_SECONDS = 3600.0


@dataclass(frozen=True, slots=True)
class ProjectEvent:
    """A project file created, changed or deleted: its path relative to the project root."""

    rel: str
    kind: FileEventKind


@dataclass(frozen=True)
class Run:
    """What one run of a session found."""

    #: The files whose findings differ from the previous run's; None when any may (the
    #: session's state was made anew).
    changed: frozenset[Path] | None
    #: The files the run was asked about (an edited file's findings may be the same while
    #: its text moved them for the client).
    edited: tuple[Path, ...] = ()
    #: No run yet: ``edited`` changed before the first run is done, and a client that is
    #: pushed to gets their own findings (:meth:`Session.own_findings`) meanwhile (one that
    #: pulls asks for them itself).
    partial: bool = False


class Session:
    """One memory directory's changing state (see the module)."""

    def __init__(self, directory: MemoryDirectory) -> None:
        self.directory = directory
        #: The lint engine's state; made by the first run, anew when the lint settings change.
        self.state: DirState | None = None
        #: The latest run's findings by path in the directory, files with findings only (the
        #: engine's own mapping); None before the first run.
        self.findings: Mapping[str, Findings] | None = None
        #: Open files' own findings given before the first run (:meth:`own_findings`).
        self.first: dict[Path, Findings] = {}
        #: The project whose memory this is (``directory.project_root``), loaded by a run.
        self.project: Project | None = None
        #: Held while the project is loaded, updated or read: runs and hovers read it in
        #: worker threads, and a Project is not safe to read while it changes.
        self.project_lock = threading.Lock()
        #: One run at a time.
        self.lock = asyncio.Lock()
        #: Runs waiting for their debounce, by what they are for (a document's URI, ``project``).
        self.pending: dict[str, asyncio.Task[Any]] = {}
        #: Edits' runs waiting for :attr:`lock`: a running first check stops for them.
        self.edits_waiting = 0
        #: Where a refresh reports files done while :func:`check_all` shows progress.
        self.progress: Progress | None = None

    def __repr__(self) -> str:
        return f"Session({str(self.directory.root)!r})"

    @property
    def checked(self) -> bool:
        """Whether a run has read the whole directory."""
        return self.findings is not None

    def latest(self, path: Path) -> Findings:
        """``path``'s findings of the latest run; before the first, its own findings when
        :meth:`own_findings` gave them (none otherwise)."""
        if self.findings is None:
            return self.first.get(path, ())
        try:
            return self.findings.get(self.directory.rel(path), ())
        except ValueError:
            return ()  # not inside the directory

    def paths(self) -> list[Path]:
        """The files with findings of the latest run."""
        return [self.directory.path_of(rel) for rel in self.findings or ()]

    # --- running ---------------------------------------------------------------------------

    async def check(
        self,
        ls: MemoryServer,
        changed: Iterable[Path] = (),
        *,
        rescan: bool = False,
        project_events: Sequence[ProjectEvent] = (),
        reload_project: bool = False,
        edit: bool = False,
    ) -> None:
        """Bring the findings up to date with ``changed`` files (and the project), and hand
        them to the server's ``findings`` hook.

        ``edit``: the run of an edit. While it waits, a refresh that is running (the first
        check, or what is left of one) stops between files and delivers nothing; this run goes
        on from there with the newest text, reading no file twice.
        """
        edited = tuple(changed)
        if edit:
            self.edits_waiting += 1
        try:
            await self.lock.acquire()
        finally:
            if edit:
                self.edits_waiting -= 1
        try:
            opened = ls.open_paths(self.directory)
            run = await asyncio.to_thread(
                self.run,
                edited,
                opened,
                ls.today(),
                rescan=rescan,
                project_events=project_events,
                reload_project=reload_project,
            )
        finally:
            self.lock.release()
        if run is not None:
            self._tell_notice(ls)
            await ls.fire(ls.hooks.findings, self, run)

    def _tell_notice(self, ls: MemoryServer) -> None:
        """Show the directory's notice once (``window/showMessage``, and the log); ``memdir/status``
        carries it for as long as it holds. A directory read by the project's instructions
        (checked without the auto memory rules) is said once the same way."""
        self._tell_reading(ls)
        directory = self.directory
        if directory.notice is None:
            directory.notice_shown = False  # said again if it comes back
            return
        if directory.notice_shown:
            return
        directory.notice_shown = True
        message = f"memdir: {directory.root}: {directory.notice}"
        ls.log(message)
        ls.show_message(message)

    def _tell_reading(self, ls: MemoryServer) -> None:
        from memdir.agent.instructions import notice

        state = self.state
        reading = state.context.reading if state is not None else None
        text = notice(reading) if reading is not None else None
        if text == self.directory.reading_notice:
            return  # said already, or nothing to say
        self.directory.reading_notice = text
        if text is not None:
            message = f"memdir: {self.directory.root}: {text}"
            ls.log(message)
            ls.show_message(message)

    async def check_whole(self, ls: MemoryServer) -> None:
        """:meth:`check`, returning once the directory has been read whole: a run an edit
        stopped is followed by another, behind the edit's run that goes on with it."""
        await self.check(ls)
        while not self.checked and ls.directories.get(self.directory.root) is self.directory:
            await self.check(ls)

    def run(
        self,
        changed: Sequence[Path],
        opened: Sequence[Path],
        today: dt.date,
        *,
        rescan: bool = False,
        project_events: Sequence[ProjectEvent] = (),
        reload_project: bool = False,
    ) -> Run | None:
        """One run, in a worker thread (callers serialise runs): the state brought up to date
        with ``changed`` files, the project and ``today``, then linted. ``opened``: the files
        open in the editor, whose text a new state takes before it reads the disk. None: an
        edit stopped the refresh, nothing was linted, and the next run goes on from there."""
        from memdir.agent.formats import declined
        from memdir.lint.state import DirState  # the lint engine: after initialize is answered

        directory = self.directory
        # Another agent's memory: no finding, so no fix either. Asked again when files come or
        # go (a rescan) or the settings change, which may make it Claude Code's (or not); not on
        # an edit's run, which a listing and a dozen reads of file heads would slow.
        current = self.state
        if current is None or rescan or current.settings != directory.settings:
            directory.notice = declined(directory.root, directory.settings.any_format)
        if directory.notice is not None:
            with self.project_lock:
                self.state = None
            self.findings = {}
            return Run(None, tuple(changed))
        with self.project_lock:
            state = self.state
            fresh = state is None or state.settings != directory.settings
            if state is None or fresh:
                state = DirState(
                    directory.root,
                    directory.settings,
                    self._project(),
                    project_root=directory.project_root,
                )
                state.set_today(today)
                # The editor's texts first: the refresh never reads an open file from disk.
                for path in opened:
                    text = directory.text_of(path)
                    if text is not None and path.suffix == ".md":
                        state.update(path, text)
                # Kept before the refresh: what a stopped one read stays read.
                self.state = state
                state.refresh(self._stop, self.progress)
            else:
                self._follow_project(state, project_events, reload_project)
                state.set_today(today)
                # The changed files before a refresh, which then only stats them (and a refresh
                # that stops loses none of them).
                for path in changed:
                    if not directory.contains(path):
                        continue
                    try:
                        # The editor's unsaved text when the file is open, else the disk.
                        state.update(path, directory.text_of(path))
                    except ValueError:
                        continue  # not inside the directory after all (a symlinked spelling)
                if rescan or state.refresh_owed:
                    state.refresh(self._stop, self.progress)
            if state.refresh_owed:
                return None  # stopped: no findings from a directory read in part
            result = state.lint()
        previous, self.findings = self.findings, result.grouped
        if fresh or previous is None:
            return Run(None, tuple(changed))
        return Run(frozenset(map(directory.path_of, result.changed)), tuple(changed))

    def _stop(self) -> bool:
        """Asked by a refresh between files: stop, an edit waits to go on from there."""
        return self.edits_waiting > 0

    def _project(self, reload: bool = False) -> Project | None:
        """The directory's project, loaded (git runs here) when first needed or on ``reload``."""
        root = self.directory.project_root
        if root is None:
            self.project = None
            return None
        current = self.project
        if reload or current is None or os.path.realpath(current.root) != os.path.realpath(root):
            from memdir.project.citations import cited_words
            from memdir.project.lookup import Project  # only with a project: keep start-up light

            # The names the memories cite, looked up in one pass while git lists the project
            # (as the CLI does), not one by one as the rules ask; names typed later as they come.
            self.project = Project.load(root, self.directory.root, cited_words(self.directory.root))
        return self.project

    def _follow_project(
        self, state: DirState, events: Sequence[ProjectEvent], reload: bool
    ) -> None:
        project = self._project(reload)
        if project is not state.project:
            state.set_project(project)
        elif project is not None and events:
            changed = apply_project_events(project, events)
            if changed:
                state.recheck_citations(changed)

    async def own_findings(self, ls: MemoryServer, path: Path) -> Findings:
        """``path``'s own findings (its rules, not the directory's, no citations), from a state
        that reads that file alone: an open file's first answer while the first run still
        reads the whole directory. The same rules the full run applies to that file."""
        return await asyncio.to_thread(self._own_findings, path, ls.today())

    def _own_findings(self, path: Path, today: dt.date) -> Findings:
        from memdir.lint.state import DirState

        state = DirState(
            self.directory.root, self.directory.settings, project_root=self.directory.project_root
        )
        state.set_today(today)
        try:
            state.update(path, self.directory.text_of(path))
        except ValueError:
            return ()  # not inside the directory after all (a symlinked spelling)
        found = self.first[path] = state.own_findings(path)
        return found

    # --- debounce --------------------------------------------------------------------------

    def schedule(
        self,
        ls: MemoryServer,
        key: str,
        delay: float,
        job: Callable[[], Coroutine[Any, Any, None]],
    ) -> None:
        """Run ``job`` after ``delay`` seconds unless scheduled again for ``key`` meanwhile."""
        self.cancel(key)

        async def later() -> None:
            await asyncio.sleep(delay)
            self.pending.pop(key, None)
            await job()

        self.pending[key] = ls.spawn(later(), f"{key} in {self.directory.root}")

    def cancel(self, key: str) -> bool:
        """Cancel what waits for ``key``; whether something did."""
        task = self.pending.pop(key, None)
        if task is not None:
            task.cancel()
        return task is not None

    def close(self) -> None:
        """The directory is no longer served: nothing waiting runs."""
        for key in list(self.pending):
            self.cancel(key)


def apply_project_events(project: Project, events: Sequence[ProjectEvent]) -> Changed:
    """Bring ``project`` up to date with one batch of watcher events; returns what changed
    that citation findings may depend on. The disk decides, not the event kind: a path that
    exists is (re)read, a created directory is listed file by file, a path that is gone is
    removed (with every file under it, for a directory)."""
    from memdir.project.listing import WALK_SKIP
    from memdir.project.lookup import Changed

    recheck = Changed()
    for event in dict.fromkeys(events):
        rel = event.rel
        path = os.path.join(project.root, rel)
        if os.path.isdir(path) and not os.path.islink(path):
            if event.kind != "created":
                continue  # a directory's own "changed": its files send their own events
            for folder, subdirs, names in os.walk(path, followlinks=False):
                subdirs[:] = [d for d in subdirs if d not in WALK_SKIP]
                prefix = os.path.relpath(folder, project.root).replace(os.sep, "/")
                for name in names:
                    recheck |= project.update_file(f"{prefix}/{name}")
        elif os.path.lexists(path):
            recheck |= project.update_file(rel)
        elif rel in project.files:
            recheck |= project.remove_file(rel)
        else:
            under = rel + "/"
            for gone in [f for f in project.files if f.startswith(under)]:
                recheck |= project.remove_file(gone)
    return recheck


# --- the server's events -------------------------------------------------------------------


async def check_all(ls: MemoryServer) -> None:
    """Check every directory whole, with work-done progress by files read when the client
    shows it. A directory whose check an edit stopped is waited for: the edit's run goes on
    with it, reporting here."""
    sessions = [d.session for d in ls.directories.values()]
    if not sessions:
        return
    progress: CheckProgress | None = None
    if ls.client_supports("window.work_done_progress"):
        token = str(uuid.uuid4())
        try:
            await ls.work_done_progress.create_async(token)
        except Exception as exc:
            logger.warning("work done progress refused: %s", exc)
        else:
            progress = CheckProgress(ls, token, len(sessions))
    reporters: dict[int, Progress] = {}
    if progress is not None:
        for number, session in enumerate(sessions):
            session.progress = reporters[id(session)] = progress.of(number)
    try:
        for session in sessions:
            await session.check_whole(ls)
    finally:
        for session in sessions:
            if session.progress is not None and session.progress is reporters.get(id(session)):
                session.progress = None
        if progress is not None:
            progress.end()


class CheckProgress:
    """:func:`check_all`'s work-done progress, told files done by the sessions' refreshes.

    Told in the worker thread, so sent through the event loop; only when the percentage of all
    directories grows (at most 100 reports, never backwards: a run going on with a stopped check
    counts again the files it only stats), and never after the end (a worker still reading when
    the check was cancelled, at shutdown, sends nothing more).
    """

    def __init__(self, ls: MemoryServer, token: str, count: int) -> None:
        self.ls = ls
        self.token = token
        self.count = count
        self.loop = asyncio.get_running_loop()
        self.reported = 0
        self.ended = False
        begin = types.WorkDoneProgressBegin(title="memdir: checking memory", percentage=0)
        ls.work_done_progress.begin(token, begin)

    def of(self, number: int) -> Progress:
        """The progress hook of the ``number``-th directory."""

        def told(done: int, total: int) -> None:
            percentage = (100 * number + 100 * done // total) // self.count
            if percentage > self.reported and not self.ended:
                self.reported = percentage
                message = f"{done:,} of {total:,} files"
                self.loop.call_soon_threadsafe(self._report, percentage, message)

        return told

    def _report(self, percentage: int, message: str) -> None:
        if not self.ended:
            report = types.WorkDoneProgressReport(message=message, percentage=percentage)
            self.ls.work_done_progress.report(self.token, report)

    def end(self) -> None:
        self.ended = True
        self.ls.work_done_progress.end(self.token, types.WorkDoneProgressEnd(message="done"))


class Events:
    """The server's events, turned into session runs (registered by :func:`register`)."""

    def __init__(self) -> None:
        #: ``initialized`` was handled: directory changes before it are covered by the first
        #: check of every directory.
        self.started = False

    async def on_initialized(self, ls: MemoryServer) -> None:
        self.started = True
        arm_midnight(ls)
        ls.spawn(check_all(ls), "first check")

    async def on_directories_changed(self, ls: MemoryServer) -> None:
        if not self.started:
            return
        for directory in list(ls.directories.values()):
            session = directory.session
            loaded = session.project
            moved = directory.project_root != (loaded.root if loaded is not None else None)
            if not session.checked or moved:
                ls.spawn(session.check(ls), f"check {directory.root}")

    async def on_settings_changed(self, ls: MemoryServer) -> None:
        # A session starts over only when its lint settings differ (Session.run compares them):
        # an editor-only change (the debounce) keeps every file read and every finding.
        await check_all(ls)

    async def on_document(self, ls: MemoryServer, event: DocumentEvent) -> None:
        found = ls.memory_document(event.uri)
        if found is None:
            return
        directory, path = found
        session = directory.session
        edit = event.kind == "change"
        # An edit waits for the setting (memdir.diagnostics.debounce), reset by the next
        # keystroke; an open (the editor's text may differ from disk) or a close (back to the
        # disk's) goes at once.
        delay = ls.editor_settings.debounce_ms / 1000 if edit else 0.0

        async def job() -> None:
            if not session.checked:
                # The first check is still reading every file (and holds the lock): the file's
                # own findings now (see Run.partial), the rest when that check is done.
                first = Run(frozenset({path}), (path,), partial=True)
                await ls.fire(ls.hooks.findings, session, first)
            await session.check(ls, [path], edit=edit)

        session.schedule(ls, event.uri, delay, job)

    async def on_files(self, ls: MemoryServer, events: Sequence[FileEvent]) -> None:
        touched: dict[Path, list[Path]] = {}
        project_events: dict[Path, list[ProjectEvent]] = {}
        for event in events:
            directory = ls.directory_for(event.path)
            if directory is not None:
                touched.setdefault(directory.root, []).append(event.path)
            for other in ls.directories.values():
                rel = other.project_path(event.path)
                if rel is not None:
                    project_events.setdefault(other.root, []).append(ProjectEvent(rel, event.kind))
                elif other.is_git_state(event.path):
                    _reload_project_later(ls, other)
        for root in set(touched) | set(project_events):
            directory = ls.directories.get(root)
            if directory is not None:
                await directory.session.check(
                    ls,
                    touched.get(root, []),
                    rescan=root in touched,
                    project_events=project_events.get(root, ()),
                )


def _reload_project_later(ls: MemoryServer, directory: MemoryDirectory) -> None:
    """List the project again once git has settled (a commit writes the index several times)."""
    session = directory.session

    async def reload() -> None:
        await session.check(ls, reload_project=True)

    session.schedule(ls, "project", PROJECT_RELOAD_SECONDS, reload)


def arm_midnight(ls: MemoryServer) -> None:
    """(Re)arm the timer for the next local midnight by :attr:`MemoryServer.clock`.

    Called again after the clock is moved (a test does), and by the timer itself.
    """
    previous = ls.timers.pop("midnight", None)
    if previous is not None:
        previous.cancel()
    now = ls.clock()
    midnight = dt.datetime.combine(now.date() + dt.timedelta(days=1), dt.time(), now.tzinfo)
    delay = min(max((midnight - now).total_seconds(), 0.0), MIDNIGHT_RECHECK_SECONDS)
    loop = asyncio.get_running_loop()
    ls.timers["midnight"] = loop.call_later(
        delay, lambda: ls.spawn(at_midnight(ls), "midnight re-check")
    )


async def at_midnight(ls: MemoryServer) -> None:
    """The date may have changed: every directory whose state judged another day is checked
    again (its dates re-judged) and delivered."""
    arm_midnight(ls)
    today = ls.today()
    for directory in list(ls.directories.values()):
        state = directory.session.state
        if state is not None and state.context.today != today:
            await directory.session.check(ls)


def register(server: MemoryServer) -> None:
    events = Events()
    server.hooks.initialized.append(events.on_initialized)
    server.hooks.directories_changed.append(events.on_directories_changed)
    server.hooks.settings_changed.append(events.on_settings_changed)
    server.hooks.document.append(events.on_document)
    server.hooks.files.append(events.on_files)
