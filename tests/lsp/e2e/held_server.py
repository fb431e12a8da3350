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
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memdir.lint.state import DirState
from memdir_lsp.diagnostics import state_of
from memdir_lsp.server import MemoryServer, create_server

HOLD_AT = int(os.environ["MEMDIR_TEST_HOLD_AT"])
#: A safety bound only: the test edits as soon as it is told the check holds.
SAFETY_SECONDS = 30.0


def main() -> None:
    server = create_server()
    edit_waits = threading.Event()
    holding = threading.Event()
    held = asyncio.Event()
    loop: list[asyncio.AbstractEventLoop] = []

    class Waiting(Counter[Path]):
        """The server's count of edits' runs waiting, telling the held check when one does."""

        def __setitem__(self, key: Path, value: int) -> None:
            super().__setitem__(key, value)
            if value > 0:
                edit_waits.set()

    state_of(server).edits_waiting = Waiting()

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
            if len(state.reads) == HOLD_AT and not holding.is_set():
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
        [directory] = ls.directories.values()
        state = directory.lint_state
        assert isinstance(state, DirState)
        return [[rel, times] for rel, times in sorted(state.reads.items())]

    server.start_io()


if __name__ == "__main__":
    main()
