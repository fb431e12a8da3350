"""Diagnostics: every lint rule, live, for every file of every memory directory.

The lint engine (``memdir.lint``) does the work; this module decides when to run it and how to
deliver the results:

* **Pull** (``textDocument/diagnostic``, ``workspace/diagnostic``) for clients that pull and
  can be told to pull again (``workspace/diagnostic/refresh``: VS Code); **push**
  (``publishDiagnostics``) for all others. Never both: a client that pulls keeps pushed
  diagnostics in a separate collection and would show each finding twice. Neovim 0.11 pulls
  open documents but takes no refresh and pulls no workspace: pulling would hide the findings of
  files it has not opened (an orphan) and leave an open file's directory findings stale until
  it is edited, so it gets everything pushed.
* Open documents are linted with the editor's unsaved text. A change re-lints that file
  incrementally (``DirState`` caches the rest) after a short per-document debounce, then the
  directory-level rules (orphans, dangling links, duplicates, the prefetch window) are
  refreshed for *every* file of the directory.
* A directory's first check reads every file, with work-done progress by files read. An edit
  made meanwhile stops it between files (nothing is published from it) and the edit's run goes
  on from there with the newest text: no file is read twice.
* Changes outside the editor (watched files, file operations) re-read the files concerned.
* Changes to a memory dir's project (its files, watched too) update the project and re-check
  only the memories that cite something (MEM117, MEM118); a commit or checkout (``.git/index``,
  ``.git/HEAD``) lists the project again, after a short debounce.
* At local midnight (and on any run that finds the date changed) every date rule is re-judged
  (MEM119-MEM121), with no edit needed.

Quick fixes for these findings are :mod:`memdir_lsp.code_actions`'.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import hashlib
import logging
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from memdir_lsp import allocator, positions
from memdir_lsp.directory import MemoryDirectory
from memdir_lsp.documents import MemoryDocument
from memdir_lsp.protocol import DIAGNOSTIC_IDENTIFIER, DIAGNOSTIC_SOURCE
from memdir_lsp.server import FileEvent, JsonResult, MemoryServer

if TYPE_CHECKING:
    from memdir_lsp.linting import Linted, Progress, Stop

logger = logging.getLogger(__name__)

#: Seconds to wait after git's index or HEAD changed before listing the project again (a
#: commit or checkout writes them several times).
PROJECT_RELOAD_SECONDS = 0.5
#: The longest the midnight timer sleeps before looking at the clock again: a suspended
#: machine's timers run late, the clock does not.
MIDNIGHT_RECHECK_SECONDS = 3600.0

SEVERITIES = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "info": types.DiagnosticSeverity.Information,
    "hint": types.DiagnosticSeverity.Hint,
}


#: What one converted finding was placed in and what it became: the text of the lines its span
#: starts and ends on, the LSP diagnostic, the bytes its result id hashes, and its JSON form.
Converted = tuple[object, types.Diagnostic, bytes, Any]


@dataclass(slots=True)
class Made:
    """One file's findings as last converted, reused while the findings (the lint state's
    tuple: the same object while they stay the same) and the text they lie in stay."""

    found: Sequence[Any]
    #: The open document and its revision, or None for a file read from disk (whose findings
    #: are made anew whenever it is read again).
    text: object
    result_id: str
    #: Open documents only (few, and edited): each finding's conversion by the finding's id
    #: (with the finding, which keeps the id its own), so an edit converts only the findings
    #: it moved or made. A new finding equal to one it replaced (a rule may make an equal
    #: finding anew) takes that one's conversion: only those few are hashed, not every one.
    converted: dict[int, tuple[Any, Converted]] | None = None
    items: list[types.Diagnostic] = field(default_factory=list)
    #: The items' JSON forms (open documents only), in the same order.
    wire: list[Any] | None = None


class DiagnosticsState:
    """What was last computed and delivered, per memory directory and per document."""

    def __init__(self) -> None:
        self.pull = False
        #: Lint results (memdir.lint Diagnostics) per directory root, per file.
        self.results: dict[Path, Mapping[Path, Sequence[Any]]] = {}
        #: The result id last published (push) per file, to skip identical republishing.
        self.published: dict[Path, str] = {}
        #: Each file's findings as last converted (see :class:`Made`).
        self.made: dict[Path, Made] = {}
        #: Debounce tasks per document URI.
        self.pending: dict[str, asyncio.Task[None]] = {}
        self.lock = asyncio.Lock()
        #: Set by the first full lint; directory changes before it are covered by it.
        self.started = False
        #: Pull: URIs whose findings the client may still show (delivered with items by a
        #: workspace or document report). Once such a file is clean, deleted or out of every
        #: memory dir, workspace reports must keep naming it with no items: a client drops
        #: findings only when told to, never because a file is missing from a report.
        self.reported_uris: set[str] = set()
        #: The date the last midnight check saw.
        self.today: dt.date | None = None
        #: Per directory, the edits' runs waiting for :attr:`lock` (see :func:`relint`).
        self.edits_waiting: Counter[Path] = Counter()
        #: Per directory, where its refreshes report files done while :func:`lint_all` shows
        #: work-done progress.
        self.progress: dict[Path, Progress] = {}


def state_of(ls: MemoryServer) -> DiagnosticsState:
    found: DiagnosticsState | None = getattr(ls, "_diagnostics_state", None)
    if found is None:
        found = DiagnosticsState()
        ls._diagnostics_state = found  # type: ignore[attr-defined]
    return found


# --- running the lint engine -----------------------------------------------------------------


def lint_directory(
    ls: MemoryServer,
    directory: MemoryDirectory,
    changed: Iterable[Path],
    rescan: bool,
    project_events: Sequence[tuple[str, str]] = (),
    reload_project: bool = False,
    stop: Stop | None = None,
    progress: Progress | None = None,
) -> Linted | None:
    """Lint the whole directory (incrementally: only ``changed`` files are re-read); None
    when ``stop`` stopped its refresh (see :func:`memdir_lsp.linting.run`)."""
    from memdir_lsp import linting

    def open_paths() -> list[Path]:
        paths = [ls.uri_to_path(uri) for uri in list(ls.workspace.text_documents)]
        return [p for p in paths if p is not None and directory.contains(p)]

    return linting.run(
        directory,
        changed,
        open_paths,
        rescan,
        today=ls.today(),
        project_events=project_events,
        reload_project=reload_project,
        stop=stop,
        progress=progress,
    )


@contextlib.asynccontextmanager
async def _turn(state: DiagnosticsState, root: Path, edit: bool) -> AsyncIterator[None]:
    """Holds :attr:`DiagnosticsState.lock`; an edit's run is counted while it waits for it."""
    if edit:
        state.edits_waiting[root] += 1
    try:
        await state.lock.acquire()
    finally:
        if edit:
            state.edits_waiting[root] -= 1
    try:
        yield
    finally:
        state.lock.release()


async def relint(
    ls: MemoryServer,
    directory: MemoryDirectory,
    changed: Iterable[Path] = (),
    *,
    rescan: bool = False,
    project_events: Sequence[tuple[str, str]] = (),
    reload_project: bool = False,
    edit: bool = False,
) -> None:
    """Re-lint one directory and deliver what changed, for every file of it.

    ``edit``: the run of an edit. While it waits, a refresh of the directory that is running
    (its first check, or what is left of one) stops between files and publishes nothing; this
    run goes on from there with the newest text, reading no file twice.
    """
    state = state_of(ls)
    changed = list(changed)
    root = directory.root
    waiting = state.edits_waiting
    async with _turn(state, root, edit):
        linted = await asyncio.to_thread(
            lint_directory,
            ls,
            directory,
            changed,
            rescan,
            project_events,
            reload_project,
            lambda: waiting[root] > 0,
            state.progress.get(root),
        )
        if linted is None:
            return  # stopped for an edit: its run publishes
        share_index_lines(ls, directory)
        if linted.changed is None or rescan:
            # A run that read the directory dropped every file's text between what it kept:
            # the free pages go back, not held for the server's lifetime. (After an edit
            # there is little to give back, and it would cost a walk of the heap.)
            allocator.give_back_free_pages()
        results = linted.grouped
        previous = state.results.get(directory.root, {})
        state.results[directory.root] = results
    differ = linted.changed
    if differ is None:  # a new state: compare file by file
        differ = frozenset(
            p for p in set(previous) | set(results) if previous.get(p) != results.get(p)
        )
    for path in differ:
        if path not in results:
            state.made.pop(path, None)
    if state.pull:
        if differ:
            ls.workspace_diagnostic_refresh(None)
        return
    # An edited file's findings may be the same while its text moved them (see make).
    for path in set(differ) | set(changed):
        publish(ls, directory, path, results.get(path, ()))


def share_index_lines(ls: MemoryServer, directory: MemoryDirectory) -> None:
    """An open MEMORY.md keeps the lines of its parse (one copy of 20,000 lines, not two).
    In the event loop, between edits: only the text of the document's current version."""
    from memdir.lint.state import DirState

    state = directory.lint_state
    document = ls.workspace.text_documents.get(ls.path_to_uri(directory.index_path))
    if isinstance(state, DirState) and isinstance(document, MemoryDocument):
        index = state.index
        document.share_lines(index.text, index.lines)


async def own_findings(ls: MemoryServer, directory: MemoryDirectory, path: Path) -> Sequence[Any]:
    """An open file's own findings, before the directory's first run (see linting)."""
    from memdir_lsp import linting

    return await asyncio.to_thread(linting.own_findings, directory, path, ls.today())


async def publish_own_first(ls: MemoryServer, directory: MemoryDirectory, path: Path) -> None:
    """Push: show an opened file's own findings while the directory's first run reads the
    rest (that run publishes whatever it adds)."""
    found = await own_findings(ls, directory, path)
    if directory.root not in state_of(ls).results:
        publish(ls, directory, path, found)


def to_lsp(ls: MemoryServer, lines: Sequence[str], found: Any) -> types.Diagnostic:
    return types.Diagnostic(
        range=ls.to_range(found.span, lines),
        message=found.message,
        severity=SEVERITIES.get(found.severity, types.DiagnosticSeverity.Warning),
        code=found.code,
        source=DIAGNOSTIC_SOURCE,
        data={"path": found.rel_path, "line": found.span.start_line, "code": found.code},
    )


def _digest(item: types.Diagnostic) -> bytes:
    return repr((item.range, item.code, item.message, item.severity)).encode()


def _result_id_of(digests: Iterable[bytes]) -> str:
    digest = hashlib.sha1(usedforsecurity=False)
    for part in digests:
        digest.update(part)
    return digest.hexdigest()[:16]


def convert(ls: MemoryServer, path: Path, found: Sequence[Any]) -> list[types.Diagnostic]:
    lines = ls.lines_of(path)
    return [to_lsp(ls, lines, d) for d in found]


def _text_key(ls: MemoryServer, path: Path) -> object:
    doc = ls.workspace.text_documents.get(ls.path_to_uri(path))
    if doc is None:
        return None
    return doc, getattr(doc, "revision", doc.version)


def make(ls: MemoryServer, path: Path, found: Sequence[Any]) -> Made:
    """``found`` (findings of ``path``) as LSP diagnostics with their result id, converted
    again only when the findings or the text differ from the last time (:class:`Made`)."""
    state = state_of(ls)
    text = _text_key(ls, path)
    last = state.made.get(path)
    if last is not None and last.found is found and last.text == text:
        return last
    if text is None:
        items = convert(ls, path, found)
        made = Made(found, None, _result_id_of(_digest(item) for item in items), items=items)
        # A file not open keeps only its result id: its report is made again when asked for.
        kept = Made(found, None, made.result_id)
    else:
        lines = ls.lines_of(path)
        before = last.converted if last is not None and last.converted is not None else {}
        kept_ids: set[int] = set()
        placed: list[tuple[Any, object, Converted | None]] = []
        for finding in found:
            span = finding.span
            where = (
                *(
                    lines[line] if line < len(lines) else len(lines)
                    for line in (span.start_line, span.end_line)
                ),
                positions.for_client(span, lines)[0],  # a lone CR above moves it for the client
            )
            known = before.get(id(finding))
            if known is not None and known[0] is finding and known[1][0] == where:
                kept_ids.add(id(finding))
                placed.append((finding, where, known[1]))
            else:
                placed.append((finding, where, None))
        spare: dict[Any, Converted] | None = None
        entries: list[Converted] = []
        converted: dict[int, tuple[Any, Converted]] = {}
        for finding, at, hit in placed:
            if hit is None:
                if spare is None:  # the findings this run replaced, by value
                    spare = {
                        old: conv for key, (old, conv) in before.items() if key not in kept_ids
                    }
                hit = spare.get(finding)
                if hit is None or hit[0] != at:
                    item = to_lsp(ls, lines, finding)
                    hit = (at, item, _digest(item), to_wire(ls, item))
            converted[id(finding)] = (finding, hit)
            entries.append(hit)
        result_id = _result_id_of(entry[2] for entry in entries)
        made = kept = Made(
            found,
            text,
            result_id,
            converted,
            [entry[1] for entry in entries],
            [entry[3] for entry in entries],
        )
    if found:
        state.made[path] = kept
    else:
        state.made.pop(path, None)
    return made


def to_wire(ls: MemoryServer, item: types.Diagnostic) -> Any:
    """``item`` in JSON form, by the converter that would send it."""
    return ls.protocol._converter.unstructure(item)


def items_of(ls: MemoryServer, path: Path, made: Made) -> list[types.Diagnostic]:
    """The LSP diagnostics of ``made`` (converted again for a file not open)."""
    if made.items or not made.found:
        return made.items
    return convert(ls, path, made.found)


def publish(ls: MemoryServer, directory: MemoryDirectory, path: Path, found: Sequence[Any]) -> None:
    state = state_of(ls)
    made = make(ls, path, found)
    # Nothing published yet is what the client shows: no findings.
    if state.published.get(path, EMPTY_RESULT_ID) == made.result_id:
        return
    if found:
        state.published[path] = made.result_id
    else:
        state.published.pop(path, None)
    ls.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(
            uri=ls.path_to_uri(path),
            diagnostics=items_of(ls, path, made),
            version=ls.open_version(path),
        )
    )


def clear_directory(ls: MemoryServer, root: Path) -> None:
    state = state_of(ls)
    results = state.results.pop(root, {})
    for path in results:
        state.made.pop(path, None)
    if state.pull:
        return
    for path in results:
        if state.published.pop(path, None) is not None:
            ls.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=ls.path_to_uri(path), diagnostics=[])
            )


def results_for(ls: MemoryServer, directory: MemoryDirectory, path: Path) -> Sequence[Any]:
    return state_of(ls).results.get(directory.root, {}).get(path, ())


# --- events ----------------------------------------------------------------------------------


async def lint_all(ls: MemoryServer) -> None:
    """Lint every directory, with work-done progress by files read when the client shows it.

    A directory whose check an edit stopped (see :func:`relint`) is waited for: the edit's run
    goes on with it, reporting here.
    """
    directories = list(ls.directories.values())
    if not directories:
        return
    state = state_of(ls)
    token: str | None = None
    if ls.client_supports("window.work_done_progress"):
        token = str(uuid.uuid4())
        try:
            await ls.work_done_progress.create_async(token)
        except Exception as exc:
            logger.warning("work done progress refused: %s", exc)
            token = None
    progress: CheckProgress | None = None
    reporters: dict[Path, Progress] = {}
    if token is not None:
        ls.work_done_progress.begin(
            token,
            types.WorkDoneProgressBegin(title="memdir: checking memory", percentage=0),
        )
        progress = CheckProgress(ls, token, len(directories))
        reporters = {d.root: progress.of(number) for number, d in enumerate(directories)}
        state.progress.update(reporters)
    try:
        for directory in directories:
            await relint_checked(ls, directory)
    finally:
        for root, reporter in reporters.items():
            if state.progress.get(root) is reporter:
                del state.progress[root]
        if progress is not None:
            progress.end()


async def relint_checked(ls: MemoryServer, directory: MemoryDirectory) -> None:
    """:func:`relint`, returning once the directory is checked: a run an edit stopped is
    followed by another, behind the edit's run that goes on with the check."""
    state = state_of(ls)
    await relint(ls, directory)
    while directory.root not in state.results and ls.directories.get(directory.root) is directory:
        await relint(ls, directory)


class CheckProgress:
    """:func:`lint_all`'s work-done progress, told files done by its directories' refreshes.

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


async def on_initialize(ls: MemoryServer, params: types.InitializeParams) -> None:
    """Offer pull diagnostics only to clients that pull and take refreshes (see the module)."""
    state = state_of(ls)
    state.pull = ls.client_supports("text_document.diagnostic") and ls.client_supports(
        "workspace.diagnostics.refresh_support"
    )
    if not state.pull:
        return
    ls.feature(
        types.TEXT_DOCUMENT_DIAGNOSTIC,
        types.DiagnosticOptions(
            identifier=DIAGNOSTIC_IDENTIFIER,
            # Directory-level rules: a change in one file changes others' results.
            inter_file_dependencies=True,
            workspace_diagnostics=True,
        ),
    )(ls.guard(document_diagnostic))
    ls.feature(types.WORKSPACE_DIAGNOSTIC)(ls.guard(workspace_diagnostic))


async def on_initialized(ls: MemoryServer) -> None:
    state = state_of(ls)
    state.started = True
    state.today = ls.today()
    arm_midnight(ls)
    ls.spawn(lint_all(ls), "initial lint")


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
    """The date may have changed: if so, re-judge every directory's dates and republish."""
    arm_midnight(ls)
    state = state_of(ls)
    today = ls.today()
    if today == state.today:
        return
    state.today = today
    for directory in list(ls.directories.values()):
        await relint(ls, directory)


async def on_directories_changed(ls: MemoryServer) -> None:
    state = state_of(ls)
    if not state.started:
        return
    for root in [r for r in state.results if r not in ls.directories]:
        clear_directory(ls, root)
    for root, directory in ls.directories.items():
        loaded = directory.project
        moved = directory.project_root != (loaded.root if loaded is not None else None)
        if root not in state.results or moved:
            ls.spawn(relint(ls, directory), f"lint {root}")


async def on_settings_changed(ls: MemoryServer) -> None:
    # A dir's state starts over only when its lint settings differ (linting._state compares
    # them): an editor-only change (the debounce) keeps every file read and every finding.
    await lint_all(ls)


def _schedule(
    ls: MemoryServer,
    uri: str,
    directory: MemoryDirectory,
    path: Path,
    delay: float,
    edit: bool = False,
) -> None:
    state = state_of(ls)
    previous = state.pending.pop(uri, None)
    if previous is not None:
        previous.cancel()

    async def later() -> None:
        await asyncio.sleep(delay)
        state.pending.pop(uri, None)
        if not state.pull and directory.root not in state.results:
            # The directory's first check is still reading every file (and holds the lock):
            # the file's own findings now, the rest when that check is done.
            await publish_own_first(ls, directory, path)
        await relint(ls, directory, [path], edit=edit)

    state.pending[uri] = ls.spawn(later(), f"lint {uri}")


async def on_document(ls: MemoryServer, uri: str, event: str) -> None:
    found = ls.memory_document(uri)
    if found is None:
        return
    directory, path = found
    if event == "change":
        # The setting (memdir.diagnostics.debounce), reset by the next keystroke.
        _schedule(ls, uri, directory, path, ls.editor_settings.debounce_ms / 1000, edit=True)
    else:
        # Open: the editor's text may differ from disk; close: back to the disk's text.
        _schedule(ls, uri, directory, path, 0.0)


async def on_files(ls: MemoryServer, events: Sequence[FileEvent]) -> None:
    touched: dict[Path, list[Path]] = {}
    project_events: dict[Path, list[tuple[str, str]]] = {}
    for path, kind in events:
        directory = ls.directory_for(path)
        if directory is not None:
            touched.setdefault(directory.root, []).append(path)
        for other in ls.directories.values():
            rel = other.project_path(path)
            if rel is not None:
                project_events.setdefault(other.root, []).append((rel, kind))
            elif other.is_git_state(path):
                _schedule_reload(ls, other)
    for root in set(touched) | set(project_events):
        directory = ls.directories.get(root)
        if directory is not None:
            await relint(
                ls,
                directory,
                touched.get(root, []),
                rescan=root in touched,
                project_events=project_events.get(root, ()),
            )


def _schedule_reload(ls: MemoryServer, directory: MemoryDirectory) -> None:
    """List the project again once git has settled (a commit writes the index several times)."""
    state = state_of(ls)
    key = f"project:{directory.root}"
    previous = state.pending.pop(key, None)
    if previous is not None:
        previous.cancel()

    async def later() -> None:
        await asyncio.sleep(PROJECT_RELOAD_SECONDS)
        state.pending.pop(key, None)
        await relint(ls, directory, reload_project=True)

    state.pending[key] = ls.spawn(later(), f"reload project {directory.project_root}")


# --- pull ------------------------------------------------------------------------------------


#: The result id of "no findings".
EMPTY_RESULT_ID = _result_id_of([])


async def document_diagnostic(
    ls: MemoryServer, params: types.DocumentDiagnosticParams
) -> (
    types.RelatedFullDocumentDiagnosticReport
    | types.RelatedUnchangedDocumentDiagnosticReport
    | JsonResult
):
    found = ls.memory_document(params.text_document.uri)
    if found is None:
        # Not a memory file: nothing to say about it.
        return types.RelatedFullDocumentDiagnosticReport(items=[], result_id="none")
    directory, path = found
    state = state_of(ls)
    if directory.root in state.results:
        pending = state.pending.pop(params.text_document.uri, None)
        if pending is not None:
            pending.cancel()  # this pull runs it
        await relint(ls, directory, [path])
        made = make(ls, path, results_for(ls, directory, path))
    else:
        # The directory's first run is still reading every file: answer with the file's own
        # findings now; that run's refresh makes the client pull the whole answer. An edit's
        # scheduled run stays: it stops that run and goes on with the newest text.
        made = make(ls, path, await own_findings(ls, directory, path))
    if made.found:
        # A client may keep these after the document closes; see DiagnosticsState.
        state.reported_uris.add(params.text_document.uri)
    if params.previous_result_id == made.result_id:
        return types.RelatedUnchangedDocumentDiagnosticReport(result_id=made.result_id)
    if made.wire is not None:
        # An open document's items are in JSON form already (see JsonResult).
        return JsonResult({"kind": "full", "resultId": made.result_id, "items": made.wire})
    return types.RelatedFullDocumentDiagnosticReport(
        items=items_of(ls, path, made), result_id=made.result_id
    )


async def workspace_diagnostic(
    ls: MemoryServer, params: types.WorkspaceDiagnosticParams
) -> types.WorkspaceDiagnosticReport:
    """Every file with findings, plus every file whose findings went away since a report.

    The lint results hold only files with findings. A file that became clean (or was deleted,
    or left every memory dir) must still be reported, with no items: VS Code applies workspace
    reports per file and keeps what it has for a file the report does not mention. Files it
    shows in no editor tab get diagnostics from workspace reports only, so "Move to topic
    file", whose new file is linted empty (CreateFile) before its text arrives, left a stale
    "no frontmatter" and "orphan" on it whenever a workspace pull fell into that moment.
    """
    state = state_of(ls)
    previous = {p.uri: p.value for p in params.previous_result_ids}
    reports: list[
        types.WorkspaceFullDocumentDiagnosticReport
        | types.WorkspaceUnchangedDocumentDiagnosticReport
    ] = []
    current: set[str] = set()
    for directory in list(ls.directories.values()):
        await relint_checked(ls, directory)
        for path, found in state.results.get(directory.root, {}).items():
            uri = ls.path_to_uri(path)
            current.add(uri)
            made = make(ls, path, found)
            reports.append(_workspace_report(ls, uri, path, made, previous))
    for uri in sorted(state.reported_uris - current):
        if previous.get(uri) == EMPTY_RESULT_ID:
            # The client says it already has "no findings" for this file: stop naming it.
            state.reported_uris.discard(uri)
            continue
        gone = ls.uri_to_path(uri)
        reports.append(_workspace_report(ls, uri, gone, Made((), None, EMPTY_RESULT_ID), previous))
    state.reported_uris |= current
    return types.WorkspaceDiagnosticReport(items=reports)


def _workspace_report(
    ls: MemoryServer, uri: str, path: Path | None, made: Made, previous: dict[str, str]
) -> types.WorkspaceFullDocumentDiagnosticReport | types.WorkspaceUnchangedDocumentDiagnosticReport:
    version = ls.open_version(path) if path is not None else None
    if previous.get(uri) == made.result_id:
        return types.WorkspaceUnchangedDocumentDiagnosticReport(
            uri=uri, result_id=made.result_id, version=version
        )
    items = items_of(ls, path, made) if path is not None else []
    return types.WorkspaceFullDocumentDiagnosticReport(
        uri=uri, items=items, result_id=made.result_id, version=version
    )


def register(server: MemoryServer) -> None:
    server.hooks.initialize.append(on_initialize)
    server.hooks.initialized.append(on_initialized)
    server.hooks.directories_changed.append(on_directories_changed)
    server.hooks.settings_changed.append(on_settings_changed)
    server.hooks.document.append(on_document)
    server.hooks.files.append(on_files)
