"""Diagnostics: every lint finding of every memory directory, delivered to the client.

The directories' sessions (:mod:`memdir_lsp.session`) decide when to check and hold the
findings; this module only delivers them, converted to the client's positions:

* **Pull** (``textDocument/diagnostic``, ``workspace/diagnostic``) for clients that pull and
  can be told to pull again (``workspace/diagnostic/refresh``: VS Code); **push**
  (``publishDiagnostics``) for all others. Never both: a client that pulls keeps pushed
  diagnostics in a separate collection and would show each finding twice. Neovim 0.11 pulls
  open documents but takes no refresh and pulls no workspace: pulling would hide the findings of
  files it has not opened (an orphan) and leave an open file's directory findings stale until
  it is edited, so it gets everything pushed.
* After each run, push republishes the files whose findings changed (and the edited ones);
  pull asks the client to pull again. A pull of an open document runs its pending check first.
* Before a directory's first check is done, an open file gets its own findings (its rules,
  not the directory's); the check's findings follow when it is done.

Quick fixes for these findings are :mod:`memdir_lsp.code_actions`'.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

from memdir_lsp.protocol import DIAGNOSTIC_IDENTIFIER, DIAGNOSTIC_SOURCE
from memdir_lsp.server import MemoryServer

if TYPE_CHECKING:
    from memdir.lint.diagnostic import Diagnostic

    from memdir_lsp.session import Run, Session

SEVERITIES = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "info": types.DiagnosticSeverity.Information,
    "hint": types.DiagnosticSeverity.Hint,
}


@dataclass(frozen=True)
class Report:
    """One file's findings as the client gets them, and the id that names them."""

    items: list[types.Diagnostic]
    result_id: str


def to_lsp(ls: MemoryServer, lines: Sequence[str], found: Diagnostic) -> types.Diagnostic:
    return types.Diagnostic(
        range=ls.to_range(found.span, lines),
        message=found.message,
        severity=SEVERITIES.get(found.severity, types.DiagnosticSeverity.Warning),
        code=found.code,
        source=DIAGNOSTIC_SOURCE,
        data={"path": found.rel_path, "line": found.span.start_line, "code": found.code},
    )


def result_id_of(items: Iterable[types.Diagnostic]) -> str:
    digest = hashlib.sha1(usedforsecurity=False)
    for item in items:
        digest.update(repr((item.range, item.code, item.message, item.severity)).encode())
    return digest.hexdigest()[:16]


#: The result id of "no findings".
EMPTY_RESULT_ID = result_id_of([])


def report(ls: MemoryServer, path: Path, found: Sequence[Diagnostic]) -> Report:
    """``found`` (findings of ``path``) in the client's positions of the text it has."""
    if not found:
        return Report([], EMPTY_RESULT_ID)
    lines = ls.lines_of(path)
    items = [to_lsp(ls, lines, d) for d in found]
    return Report(items, result_id_of(items))


def pulls(ls: MemoryServer) -> bool:
    """Whether the client pulls diagnostics and takes refreshes (see the module)."""
    return ls.client_supports("text_document.diagnostic") and ls.client_supports(
        "workspace.diagnostics.refresh_support"
    )


class Delivery:
    """What the client was given: the result ids pushed per file and, for a client that pulls,
    the URIs whose findings it may still show."""

    def __init__(self) -> None:
        #: Push: the result id last published per file with findings.
        self.published: dict[Path, str] = {}
        #: Pull: URIs whose findings the client may still show (delivered with items by a
        #: workspace or document report). Once such a file is clean, deleted or out of every
        #: memory dir, workspace reports must keep naming it with no items: a client drops
        #: findings only when told to, never because a file is missing from a report.
        self.reported_uris: set[str] = set()

    # --- push ------------------------------------------------------------------------------

    async def on_findings(self, ls: MemoryServer, session: Session, run: Run) -> None:
        if pulls(ls):
            if not run.partial and (run.changed is None or run.changed):
                ls.workspace_diagnostic_refresh(None)
            return
        if run.partial:
            for path in run.edited:
                found = await session.own_findings(ls, path)
                if not session.checked:  # else the first run's findings are out already
                    self.publish(ls, path, found)
            return
        if run.changed is None:  # a new state: every file it or the last one had findings in
            directory = session.directory
            mine = {p for p in self.published if ls.directory_for(p) is directory}
            paths = mine | set(session.paths())
        else:
            paths = set(run.changed)
        for path in paths | set(run.edited):
            self.publish(ls, path, session.latest(path))

    def publish(self, ls: MemoryServer, path: Path, found: Sequence[Diagnostic]) -> None:
        made = report(ls, path, found)
        # Nothing published yet is what the client shows: no findings.
        if self.published.get(path, EMPTY_RESULT_ID) == made.result_id:
            return
        if found:
            self.published[path] = made.result_id
        else:
            self.published.pop(path, None)
        ls.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(
                uri=ls.path_to_uri(path), diagnostics=made.items, version=ls.open_version(path)
            )
        )

    async def on_directories_changed(self, ls: MemoryServer) -> None:
        """Files no memory dir holds any more have no findings."""
        for path in [p for p in self.published if ls.directory_for(p) is None]:
            self.publish(ls, path, ())

    # --- pull ------------------------------------------------------------------------------

    async def on_initialize(self, ls: MemoryServer, params: types.InitializeParams) -> None:
        """Offer pull diagnostics only to clients that pull and take refreshes."""
        if not pulls(ls):
            return
        ls.feature(
            types.TEXT_DOCUMENT_DIAGNOSTIC,
            types.DiagnosticOptions(
                identifier=DIAGNOSTIC_IDENTIFIER,
                # Directory-level rules: a change in one file changes others' results.
                inter_file_dependencies=True,
                workspace_diagnostics=True,
            ),
        )(ls.guard(self.document_diagnostic))
        ls.feature(types.WORKSPACE_DIAGNOSTIC)(ls.guard(self.workspace_diagnostic))

    async def document_diagnostic(
        self, ls: MemoryServer, params: types.DocumentDiagnosticParams
    ) -> types.RelatedFullDocumentDiagnosticReport | types.RelatedUnchangedDocumentDiagnosticReport:
        uri = params.text_document.uri
        found = ls.memory_document(uri)
        if found is None:
            # Not a memory file: nothing to say about it.
            return types.RelatedFullDocumentDiagnosticReport(items=[], result_id="none")
        directory, path = found
        session = directory.session
        if session.checked:
            session.cancel(uri)  # this pull runs the edit's check now
            await session.check(ls, [path])
            findings = session.latest(path)
        else:
            # The first check is still reading every file: the file's own findings now; that
            # check's refresh makes the client pull the whole answer. An edit's scheduled run
            # stays: it stops that check and goes on with the newest text.
            findings = await session.own_findings(ls, path)
        made = report(ls, path, findings)
        if made.items:
            self.reported_uris.add(uri)
        if params.previous_result_id == made.result_id:
            return types.RelatedUnchangedDocumentDiagnosticReport(result_id=made.result_id)
        return types.RelatedFullDocumentDiagnosticReport(items=made.items, result_id=made.result_id)

    async def workspace_diagnostic(
        self, ls: MemoryServer, params: types.WorkspaceDiagnosticParams
    ) -> types.WorkspaceDiagnosticReport:
        """Every file with findings, plus every file whose findings went away since a report.

        The findings hold only files with findings. A file that became clean (or was deleted,
        or left every memory dir) must still be reported, with no items: VS Code applies
        workspace reports per file and keeps what it has for a file the report does not
        mention. Files it shows in no editor tab get diagnostics from workspace reports only, so
        "Move to topic file", whose new file is linted empty (CreateFile) before its text
        arrives, left a stale "no frontmatter" and "orphan" on it whenever a workspace pull fell
        into that moment.
        """
        previous = {p.uri: p.value for p in params.previous_result_ids}
        reports: list[
            types.WorkspaceFullDocumentDiagnosticReport
            | types.WorkspaceUnchangedDocumentDiagnosticReport
        ] = []
        current: set[str] = set()
        for directory in list(ls.directories.values()):
            session = directory.session
            await session.check_whole(ls)
            for path in session.paths():
                found = session.latest(path)
                uri = ls.path_to_uri(path)
                current.add(uri)
                reports.append(_workspace_report(ls, uri, path, found, previous))
        for uri in sorted(self.reported_uris - current):
            if previous.get(uri) == EMPTY_RESULT_ID:
                # The client says it already has "no findings" for this file: stop naming it.
                self.reported_uris.discard(uri)
                continue
            reports.append(_workspace_report(ls, uri, ls.uri_to_path(uri), (), previous))
        self.reported_uris |= current
        return types.WorkspaceDiagnosticReport(items=reports)


def _workspace_report(
    ls: MemoryServer,
    uri: str,
    path: Path | None,
    found: Sequence[Diagnostic],
    previous: dict[str, str],
) -> types.WorkspaceFullDocumentDiagnosticReport | types.WorkspaceUnchangedDocumentDiagnosticReport:
    version = ls.open_version(path) if path is not None else None
    made = report(ls, path, found) if path is not None else Report([], EMPTY_RESULT_ID)
    if previous.get(uri) == made.result_id:
        return types.WorkspaceUnchangedDocumentDiagnosticReport(
            uri=uri, result_id=made.result_id, version=version
        )
    return types.WorkspaceFullDocumentDiagnosticReport(
        uri=uri, items=made.items, result_id=made.result_id, version=version
    )


def register(server: MemoryServer) -> None:
    delivery = Delivery()
    server.hooks.initialize.append(delivery.on_initialize)
    server.hooks.directories_changed.append(delivery.on_directories_changed)
    server.hooks.findings.append(delivery.on_findings)
