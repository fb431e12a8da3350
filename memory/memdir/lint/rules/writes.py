"""A write memdir did not finish (MEM122): a writer killed part way left its intent behind.

Every write through :class:`memdir.write.MemoryWriter` records its intent before touching
anything and removes it when done, and temp files exist only while an intent does; so the
intent alone tells lint that a write was cut (one ``stat`` of the memory dir, whatever its
size), and its folders where the temp files it left are.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from memdir.lint.diagnostic import Diagnostic
from memdir.lint.rules.base import DirectoryView, Rule
from memdir.model import Span

if TYPE_CHECKING:
    from memdir.lint.engine import LintContext

#: The writer's :data:`~memdir.write.JOURNAL_FILENAME` and :data:`~memdir.write.TEMP_NAME`
#: (a test keeps them equal; lint loads the writer only when an intent is there).
_JOURNAL = ".memdir-intent.json"
_TEMP = re.compile(r"^\.memdir-[0-9a-f]{12}\.(?:tmp|trash)$")


def _leftovers(ctx: LintContext, folders: set[str]) -> list[str]:
    found: list[str] = []
    for folder in sorted(folders):
        try:
            names = os.listdir(ctx.root / folder)
        except OSError:
            continue
        found.extend(f"{folder}/{n}".lstrip("/") for n in sorted(names) if _TEMP.match(n))
    return found


def _interrupted(view: DirectoryView, ctx: LintContext) -> Iterator[Diagnostic]:
    from memdir.textio import read_bytes
    from memdir.write import WriteIntent  # only when an intent is there

    try:
        # A regular file only, not through a link: a FIFO named like the journal never blocks.
        raw = read_bytes(ctx.root / _JOURNAL, 64 * 1024, follow_links=False)
    except OSError:
        return
    intent = WriteIntent.from_json(raw)
    what = "a write"
    folders = {""}
    if intent is not None:
        what = f"{intent.op} {intent.path}" + (f" to {intent.new_path}" if intent.new_path else "")
        folders = intent.folders()
    temps = _leftovers(ctx, folders)
    left = f"; it left {', '.join(temps)}" if temps else ""
    yield ctx.diag(
        "MEM122",
        ctx.index_path,
        "MEMORY.md",
        Span(0, 0, 0, 0),
        f"an interrupted write ({what}): memdir was stopped part way{left}, so MEMORY.md may "
        "not match the files yet; the next write through memdir (the memory tool, an edit "
        "in the editor, an extraction, `memdir lint --fix`) finishes or undoes it",
    )


MEM122 = Rule(
    "MEM122",
    "interrupted-write",
    "warning",
    "directory",
    "A write through memdir was stopped part way (killed, crashed, power cut): its intent "
    "(`.memdir-intent.json`) and possibly temp files (`.memdir-*.tmp`, `.memdir-*.trash`) are "
    "still in the memory dir.",
    "Until it is finished, MEMORY.md may not match the files: a new memory without its entry, "
    "an entry for a deleted or renamed one, a line with an old description. The agent reads "
    "the index as it is.",
    "`memdir tool` killed between writing `deploy.md` and adding its line to MEMORY.md",
    "Nothing by hand: the next write through memdir finishes the write or undoes it, removes "
    "the temp files and then the intent.",
    reads=frozenset({"disk"}),
    directory=_interrupted,
)

RULES = (MEM122,)
