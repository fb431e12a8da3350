"""``memdir-lsp`` with a clock the test moves: the ``test/setClock`` notification.

The clock runs on from the time it is set to (real seconds pass), so the server's own midnight
timer fires as it would at night; a test sets it just before midnight and waits for the
republished findings. Production code has no such switch: only this launcher replaces
:attr:`MemoryServer.clock`.
"""

from __future__ import annotations

import datetime as dt
import os
import time
from typing import Any

from memdir_lsp.server import MemoryServer, create_server
from memdir_lsp.session import arm_midnight


def main() -> None:
    server = create_server()
    origin = [dt.datetime.fromisoformat(os.environ["MEMDIR_TEST_NOW"]), time.monotonic()]

    def clock() -> dt.datetime:
        start, at = origin
        assert isinstance(start, dt.datetime) and isinstance(at, float)
        return start + dt.timedelta(seconds=time.monotonic() - at)

    server.clock = clock

    @server.feature("test/setClock")
    async def set_clock(ls: MemoryServer, params: Any) -> None:
        origin[:] = [dt.datetime.fromisoformat(params.now), time.monotonic()]
        arm_midnight(ls)

    server.start_io()


if __name__ == "__main__":
    main()
