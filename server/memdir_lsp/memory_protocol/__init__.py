"""The ``memory/*`` protocol: the agent's view of a memory directory, for chat panels and tools.

``types`` declares every message's params and payloads, ``converter`` is the one camelCase
projection between them and the wire, ``handlers`` answers the requests, and ``schema``
generates the JSON Schema, the TypeScript interfaces and ``docs/protocol.md`` from the types.
"""

from __future__ import annotations

from memdir_lsp.memory_protocol.handlers import register

__all__ = ["register"]
