"""The ``memory/*`` protocol: the agent's view of a memory directory, for chat panels and tools.

``types`` declares every message's params and payloads, ``converter`` is the one camelCase
projection between them and the wire, ``handlers`` answers the requests, and ``schema``
generates the JSON Schema, the TypeScript interfaces and ``docs/protocol.md`` from the types.

:func:`register` names the handlers without importing them: the types and what the handlers
read (projections, search, visibility) load with the first ``memory/*`` message, not before
``initialize`` is answered.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from lsprotocol.types import WINDOW_WORK_DONE_PROGRESS_CANCEL

from memdir_lsp import protocol as P

if TYPE_CHECKING:
    from memdir_lsp.server import MemoryServer

__all__ = ["register"]

#: Requests and the handler answering each (a function of ``handlers``).
REQUESTS = (
    (P.MEMORY_INDEX, "memory_index"),
    (P.MEMORY_MANIFEST, "memory_manifest"),
    (P.MEMORY_LIST, "memory_list"),
    (P.MEMORY_READ, "memory_read"),
    (P.MEMORY_SEARCH, "memory_search"),
    (P.MEMORY_RECALL, "memory_recall"),
    (P.MEMORY_PREFETCH, "memory_prefetch"),
    (P.MEMORY_TOOL, "memory_tool"),
    (P.MEMORY_NEW_MEMORY, "memory_new_memory"),
    (P.MEMORY_EXTRACT, "memory_extract"),
    (P.MEMDIR_STATUS, "memdir_status"),
)


def handler(name: str) -> Any:
    """``handlers.<name>``, imported when the first message for it arrives."""

    async def call(ls: MemoryServer, params: Any) -> Any:
        module = importlib.import_module("memdir_lsp.memory_protocol.handlers")
        return await getattr(module, name)(ls, params)

    call.__name__ = call.__qualname__ = name
    return call


def register(server: MemoryServer) -> None:
    def request(name: str) -> Any:
        # Not caught: an unexpected error must reach the client as an error response
        # (pygls turns it into InternalError), not as a silent null.
        return server.guard(handler(name), catch=False)

    for method, name in REQUESTS:
        server.feature(method)(request(name))
    # pygls cancels its own future for the token first, then calls this.
    server.feature(WINDOW_WORK_DONE_PROGRESS_CANCEL)(
        server.guard(handler("work_done_progress_cancel"), wait=False)
    )
    server.feature(P.MEMORY_DID_READ)(server.guard(handler("memory_did_read")))
    server.feature(P.MEMORY_COMPACTED)(server.guard(handler("memory_compacted")))
    server.feature(P.MEMDIR_DID_GRANT_WORKSPACE_TRUST)(
        server.guard(handler("memdir_did_grant_workspace_trust"))
    )
