"""``memdir-lsp`` whose first check holds mid-way until an edit's run waits to go on with it.

The first refresh given a ``stop`` (the directory's first check) holds before reading more
than ``MEMDIR_TEST_HOLD_AT`` files, until an edit's run waits for the lint lock (what the
server's own ``stop`` asks), then asks that ``stop``: the test edits a file while the check is
held, with nothing timed. Test requests: ``test/held`` answers once the check holds,
``test/reads`` answers what the directory's state read, ``[[rel, times], ...]``. Production code
has no such switch: only this launcher wraps ``DirState.refresh`` and the counter of waiting
edits.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memdir.lint.state import DirState
from memdir_lsp.server import MemoryServer, create_server
from memdir_lsp.session import Session

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/, for memhelpers
from memhelpers import count_disk_reads

HOLD_AT = int(os.environ["MEMDIR_TEST_HOLD_AT"])
#: A safety bound only: the test edits as soon as it is told the check holds.
SAFETY_SECONDS = 30.0


def main() -> None:
    server = create_server()
    edit_waits = threading.Event()
    holding = threading.Event()
    held = asyncio.Event()
    loop: list[asyncio.AbstractEventLoop] = []

    read = count_disk_reads(setattr)

    def waiting(session: Session) -> int:
        return int(session.__dict__.get("waiting", 0))

    def wait(session: Session, value: int) -> None:
        """The session's count of edits' runs waiting, telling the held check when one does."""
        session.__dict__["waiting"] = value
        if value > 0:
            edit_waits.set()

    Session.edits_waiting = property(waiting, wait)  # type: ignore[assignment]

    async def capture_loop(ls: MemoryServer) -> None:
        loop.append(asyncio.get_running_loop())

    server.hooks.initialized.insert(0, capture_loop)
    refresh = DirState.refresh

    def held_refresh(
        state: DirState,
        stop: Callable[[], bool] | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> set[str]:
        if stop is None or holding.is_set():
            return refresh(state, stop, progress)
        asked = stop

        def hold_then_ask() -> bool:
            if len(read) == HOLD_AT and not holding.is_set():
                holding.set()
                loop[0].call_soon_threadsafe(held.set)
                edit_waits.wait(SAFETY_SECONDS)
            return asked()

        return refresh(state, hold_then_ask, progress)

    DirState.refresh = held_refresh  # type: ignore[method-assign]

    @server.feature("test/held")
    async def wait_held(ls: MemoryServer, params: Any) -> int:
        await held.wait()
        return HOLD_AT

    @server.feature("test/reads")
    async def reads(ls: MemoryServer, params: Any) -> list[list[object]]:
        return [[rel, times] for rel, times in sorted(read.items())]

    server.start_io()


if __name__ == "__main__":
    main()
