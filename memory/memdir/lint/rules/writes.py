"""A write memdir did not finish, and memdir's bookkeeping where it does not belong (MEM122).

Every write through :class:`memdir.writing.writer.MemoryWriter` records its intent in the dir's
journal (in memdir's per-user state folder, :func:`memdir.agent.paths.dir_state_path`) before
touching anything and removes it when done, and temp files exist only while an intent does; so the
journal alone tells lint that a write was cut (one ``lstat``, whatever the dir's size), and its
folders where the temp files it left are.

Older versions of memdir kept the write lock and the journal in the memory dir itself. A
repository can plant such files (a FIFO that blocks its reader, a journal naming files outside
the dir), so no part of memdir opens them any more; lint reports them (``lstat`` only), so they
get deleted and untracked.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from memdir.agent.paths import dir_state_path
from memdir.lint.diagnostic import Diagnostic
from memdir.lint.rules.base import DirectoryView, Rule
from memdir.model import Span
from memdir.textio import kind_name, open_regular

if TYPE_CHECKING:
    from memdir.lint.engine import LintContext

#: The writer's :data:`~memdir.writing.journal.JOURNAL_NAME`,
#: :data:`~memdir.writing.journal.LEGACY_FILENAMES` and
#: :data:`~memdir.writing.files.TEMP_NAME` (a test keeps them equal; lint loads the writer only
#: when a journal is there).
_JOURNAL = "intent.json"
_LEGACY = (".memdir.lock", ".memdir-intent.json", ".memdir-extract.lock")
_TEMP = re.compile(r"^\.memdir-[0-9a-f]{12}\.(?:tmp|trash)$")
_MAX_JOURNAL_BYTES = 64 * 1024


def _leftovers(ctx: LintContext, folders: set[str]) -> list[str]:
    found: list[str] = []
    for folder in sorted(folders):
        try:
            names = os.listdir(ctx.root / folder)
        except OSError:
            continue
        found.extend(f"{folder}/{n}".lstrip("/") for n in sorted(names) if _TEMP.match(n))
    return found


def _journal(ctx: LintContext) -> Path | None:
    """The dir's journal when there is one (None without a home or XDG_STATE_HOME to find it)."""
    path = dir_state_path(ctx.root, os.environ, Path(os.path.expanduser("~"))) / _JOURNAL
    return path if path.is_absolute() and os.path.lexists(path) else None


def _interrupted_write(ctx: LintContext, journal: Path) -> Diagnostic:
    from memdir.writing.journal import WriteIntent, intent_problem  # only when a journal is there

    try:
        fd, _info = open_regular(journal, follow_links=False)
        with os.fdopen(fd, "rb") as handle:
            raw = handle.read(_MAX_JOURNAL_BYTES)
    except OSError:
        raw = b""
    intent = WriteIntent.from_json(raw)
    problem = intent_problem(ctx.root, intent) if intent is not None else None
    what = "a write"
    folders = {""}
    if intent is not None and problem is None:
        what = f"{intent.op} {intent.path}" + (f" to {intent.new_path}" if intent.new_path else "")
        folders = intent.folders()
    temps = _leftovers(ctx, folders)
    left = f"; it left {', '.join(temps)}" if temps else ""
    if problem is not None:
        message = (
            f"an interrupted write whose journal memdir will not act on ({problem}): the next "
            "write through memdir drops it, touching nothing it names; check that MEMORY.md "
            f"matches the files{left}"
        )
    else:
        message = (
            f"an interrupted write ({what}): memdir was stopped part way{left}, so MEMORY.md may "
            "not match the files yet; the next write through memdir (the memory tool, an edit "
            "in the editor, an extraction, `memdir lint --fix`) finishes or undoes it"
        )
    return ctx.diag("MEM122", ctx.index_path, "MEMORY.md", Span(0, 0, 0, 0), message)


def _legacy_files(ctx: LintContext) -> Diagnostic | None:
    found: list[str] = []
    for name in _LEGACY:
        try:
            mode = os.lstat(ctx.root / name).st_mode
        except OSError:
            continue
        found.append(name if stat.S_ISREG(mode) else f"{name} ({kind_name(mode)})")
    if not found:
        return None
    found.extend(_leftovers(ctx, {""}))
    return ctx.diag(
        "MEM122",
        ctx.index_path,
        "MEMORY.md",
        Span(0, 0, 0, 0),
        f"memdir's own files are in the memory dir: {', '.join(found)}. They are left by an "
        "older memdir, or put there by someone else; memdir now keeps its lock and journal "
        "outside the dir and never opens these, so delete them (and `git rm --cached` them if "
        "the dir is in git)",
    )


def _interrupted(view: DirectoryView, ctx: LintContext) -> Iterator[Diagnostic]:
    journal = _journal(ctx)
    if journal is not None:
        yield _interrupted_write(ctx, journal)
    legacy = _legacy_files(ctx)
    if legacy is not None:
        yield legacy


MEM122 = Rule(
    code="MEM122",
    name="interrupted-write",
    severity="warning",
    scope="directory",
    summary="A write through memdir was stopped part way (killed, crashed, power cut): its journal "
    "(in memdir's state folder, outside the memory dir) and possibly temp files "
    "(`.memdir-*.tmp`, `.memdir-*.trash`) are still there. Or the memory dir holds memdir's "
    "own files of an older version (`.memdir.lock`, `.memdir-intent.json`, "
    "`.memdir-extract.lock`).",
    why="Until the write is finished, MEMORY.md may not match the files: a new memory without its "
    "entry, an entry for a deleted or renamed one, a line with an old description. The agent "
    "reads the index as it is. Lock and journal files in the memory dir travel with it (they "
    "show in `git status`), and whoever writes the dir can plant them, so memdir no longer "
    "keeps them there and never opens them.",
    example="`memdir tool` killed between writing `deploy.md` and adding its line to MEMORY.md; "
    "`mem/.memdir.lock` committed with the memory dir",
    remedy="An interrupted write: nothing by hand; the next write through memdir finishes the "
    "write or undoes it, removes the temp files and then the journal. memdir's files in the "
    "memory dir: delete them (and `git rm --cached` them where the dir is in git).",
    reads=frozenset({"disk"}),
    directory=_interrupted,
)

RULES = (MEM122,)
