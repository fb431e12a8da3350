"""Code actions: every fix is a WorkspaceEdit the client applies; the server writes nothing.

* **Move to a topic file** (MEMORY.md): a selection, the block of non-index content under the
  cursor, or an over-long entry (:func:`memdir.fixes.plan.move_fixes`). Offered as
  ``refactor.extract`` everywhere and as a quick fix on the diagnostics that call for it.
* **Quick fixes** for the lint diagnostics a request names: every fix the planner has for each
  (:func:`memdir.lint.fix.quick_fixes`), the one lint attached preferred.
* **Fix all** (``source.fixAll.memdir``): every safe fix of the file at once.

Every fix is planned by :mod:`memdir.fixes.plan`; this module only asks for them and converts.
New files are CreateFile operations when the client lists ``create`` among its resource
operations; otherwise the action's edit holds the text changes and its ``memdir.createFile``
command creates the new file through :class:`memdir.writing.writer.MemoryWriter`, which never
overwrites.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lsprotocol import types
from memdir.containment import relative_inside
from memdir.fixes.apply import combine
from memdir.fixes.model import Fix
from memdir.fixes.plan import MOVE_CODES, move_fixes
from memdir.lint.diagnostic import Diagnostic
from memdir.lint.fix import quick_fixes, safe_fixes
from pygls.exceptions import JsonRpcInvalidParams

from memdir_lsp.convert import workspace_edit
from memdir_lsp.directory import MemoryDirectory
from memdir_lsp.errors import RequestFailed
from memdir_lsp.protocol import CMD_CREATE_FILE, DIAGNOSTIC_SOURCE
from memdir_lsp.server import MemoryServer

logger = logging.getLogger(__name__)

FIX_ALL_KIND = f"{types.CodeActionKind.SourceFixAll.value}.{DIAGNOSTIC_SOURCE}"


def _wanted(kind: str, only: Sequence[str] | None) -> bool:
    """LSP's ``only`` filter: a kind matches a requested kind or any of its sub-kinds."""
    if not only:
        return True
    return any(kind == want or kind.startswith(f"{want}.") for want in only)


def _existing_files(directory: MemoryDirectory) -> list[str]:
    found: list[str] = []
    for base, dirs, files in os.walk(directory.root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        found += [(Path(base) / f).relative_to(directory.root).as_posix() for f in files]
    return found


def move_actions(directory: MemoryDirectory, start: int, end: int, selection: bool) -> list[Fix]:
    """What "move to a topic file" would do at a cursor or a selection in MEMORY.md."""

    def read_topic(rel: str) -> str | None:
        path = directory.root / rel
        return directory.text(path) if path.is_file() else None

    return move_fixes(
        directory.index(),
        start,
        end,
        selection=selection,
        taken=_existing_files(directory),
        limit=directory.settings.index_line_limit,
        read_topic=read_topic,
    )


def to_action(
    ls: MemoryServer,
    fix: Fix,
    kind: str,
    diagnostics: Sequence[types.Diagnostic] | None = None,
    preferred: bool = False,
) -> types.CodeAction:
    edit, command = workspace_edit(ls, fix)
    return types.CodeAction(
        title=fix.title,
        kind=kind,
        diagnostics=list(diagnostics) if diagnostics else None,
        edit=edit,
        command=command,
        is_preferred=preferred or None,
    )


async def code_action(
    ls: MemoryServer, params: types.CodeActionParams
) -> list[types.CodeAction] | None:
    found = ls.memory_document(params.text_document.uri)
    if found is None:
        return None
    directory, path = found
    if directory.notice is not None:
        return None  # another agent's memory: nothing here is fixed or moved
    lines = ls.lines_of(path)
    start_line, _ = ls.from_position(params.range.start, lines)
    end_line, end_col = ls.from_position(params.range.end, lines)
    selection = params.range.start != params.range.end
    if selection and end_col == 0 and end_line > start_line:
        end_line -= 1  # a selection of whole lines ends at the start of the next one
    only = params.context.only
    actions: list[types.CodeAction] = []
    if _wanted(types.CodeActionKind.QuickFix.value, only):
        actions += fix_actions(ls, directory, path, params.context.diagnostics)
    if directory.is_index(path):
        kind = types.CodeActionKind.RefactorExtract.value
        if _wanted(kind, only) or _wanted(types.CodeActionKind.QuickFix.value, only):
            fixes = await asyncio.to_thread(
                move_actions, directory, start_line, end_line, selection
            )
            related = [
                d
                for d in params.context.diagnostics
                if d.source == DIAGNOSTIC_SOURCE and str(d.code) in MOVE_CODES
            ]
            for fix in fixes:
                action_kind = types.CodeActionKind.QuickFix.value if related else kind
                if _wanted(action_kind, only):
                    actions.append(to_action(ls, fix, action_kind, related, bool(related)))
    if _wanted(FIX_ALL_KIND, only) and only:
        fix_all = fix_all_action(ls, directory, path)
        if fix_all is not None:
            actions.append(fix_all)
    if not directory.writable:
        # The server creates no file here, and an edit without its file is half a fix.
        actions = [a for a in actions if a.command is None or a.command.command != CMD_CREATE_FILE]
    return actions


def _matching(
    ls: MemoryServer, directory: MemoryDirectory, path: Path, diagnostic: types.Diagnostic
) -> Diagnostic | None:
    """The lint finding behind an LSP diagnostic the client sent back."""
    if diagnostic.source != DIAGNOSTIC_SOURCE:
        return None
    line, col = ls.from_position(diagnostic.range.start, ls.lines_of(path))
    for found in directory.session.latest(path):
        if (
            found.code == diagnostic.code
            and found.span.start_line == line
            and found.span.start_col == col
        ):
            return found
    return None


def fix_actions(
    ls: MemoryServer,
    directory: MemoryDirectory,
    path: Path,
    diagnostics: Sequence[types.Diagnostic],
) -> list[types.CodeAction]:
    """Quick fixes for the diagnostics in a code-action request, attached to them."""
    actions: list[types.CodeAction] = []
    taken: list[str] | None = None
    for diagnostic in diagnostics:
        found = _matching(ls, directory, path, diagnostic)
        if found is None or found.code in MOVE_CODES:
            continue  # moves are planned from the cursor, in code_action
        if taken is None:
            taken = _existing_files(directory)
        # What the editor has and lint keeps for no finding: the parsed files, the names taken.
        fixes = quick_fixes(
            found,
            index=directory.index(),
            topic=None if directory.is_index(path) else directory.topic(path),
            taken=taken,
        )
        attached = found.fix.effect() if found.fix is not None else None
        for fix in fixes:
            kind = types.CodeActionKind.QuickFix.value
            action = to_action(ls, fix, kind, [diagnostic], fix.effect() == attached)
            if action.edit is not None or action.command is not None:
                actions.append(action)  # none: the client cannot apply it (a deletion)
    return actions


def fix_all_action(
    ls: MemoryServer, directory: MemoryDirectory, path: Path
) -> types.CodeAction | None:
    """Every *safe* fix of the file in one edit (``source.fixAll.memdir``)."""
    fixes = safe_fixes(directory.session.latest(path))
    fix = combine("Fix all safe memdir problems", fixes)
    return to_action(ls, fix, FIX_ALL_KIND) if fix is not None else None


async def create_file(ls: MemoryServer, *files: Any) -> dict[str, Any]:
    """``memdir.createFile [uri, text] ...``: create new files, never overwriting one.

    The fallback for clients that cannot apply CreateFile. Only paths inside a known memory
    directory are accepted, and none at all when one of them is in a read-only directory.
    """
    created: list[str] = []
    skipped: list[str] = []
    wanted: list[tuple[str, str, Path | None, MemoryDirectory | None]] = []
    for item in files:
        if not (
            isinstance(item, list | tuple)
            and len(item) == 2
            and all(isinstance(part, str) for part in item)
        ):
            raise JsonRpcInvalidParams("memdir.createFile takes [uri, text] pairs of strings")
        uri, text = item
        path = ls.uri_to_path(uri)
        wanted.append((uri, text, path, ls.directory_for(path) if path is not None else None))
    for _, _, _, directory in wanted:
        refusal = directory.write_refusal() if directory is not None else None
        if refusal is not None:
            raise RequestFailed(refusal)
    for uri, text, path, directory in wanted:
        if path is None or directory is None:
            skipped.append(uri)
            continue
        if await asyncio.to_thread(_create_new, directory, path, text):
            created.append(uri)
        else:
            skipped.append(uri)
    return {"created": created, "skipped": skipped}


def _create_new(directory: MemoryDirectory, path: Path, text: str) -> bool:
    """Create ``path`` through the one writer: confined, locked, never over an existing file.

    The index is left alone: the action's own edit already changed it.
    """
    from memdir.writing.results import WriteError  # imported when first used
    from memdir.writing.writer import MemoryWriter

    rel = relative_inside(directory.root, path, follow_links=False)
    if rel is None:
        return False
    try:
        MemoryWriter(directory.root, directory.settings).create(rel, text, maintain=False)
    except WriteError as exc:
        logger.info("memdir.createFile: %s", exc.message)
        return False
    return True


def register(server: MemoryServer) -> None:
    server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(
            code_action_kinds=[
                types.CodeActionKind.QuickFix,
                types.CodeActionKind.RefactorExtract,
                types.CodeActionKind.SourceFixAll,
                FIX_ALL_KIND,
            ],
            resolve_provider=False,
        ),
    )(server.guard(code_action))
    server.command(CMD_CREATE_FILE)(server.guard(create_file))
