"""Names on the wire: custom methods, commands and settings, defined once.

The VS Code extension mirrors these in ``client-vscode/src/common/protocol.ts`` (a test checks
both); the payloads of the ``memory/*`` methods are typed in ``memory_protocol.types``.
"""

from __future__ import annotations

from typing import Final

SERVER_NAME: Final = "memdir-lsp"
#: ``source`` of every diagnostic, so users can filter them.
DIAGNOSTIC_SOURCE: Final = "memdir"
#: ``identifier`` of the pull-diagnostics provider.
DIAGNOSTIC_IDENTIFIER: Final = "memdir"
#: Section of ``workspace/configuration`` and ``initializationOptions``.
CONFIG_SECTION: Final = "memdir"
#: ``initializationOptions`` key (at its top level or in its ``memdir`` section): ``false``
#: starts the server in an untrusted workspace (no git, no writes).
TRUSTED_OPTION: Final = "trusted"

# --- client → server requests ----------------------------------------------------------------
MEMORY_INDEX: Final = "memory/index"
MEMORY_MANIFEST: Final = "memory/manifest"
MEMORY_LIST: Final = "memory/list"
MEMORY_READ: Final = "memory/read"
MEMORY_SEARCH: Final = "memory/search"
MEMORY_RECALL: Final = "memory/recall"
MEMORY_PREFETCH: Final = "memory/prefetch"
#: Run one command of the API memory tool (memory_20250818) over the memory dir; writes on disk.
MEMORY_TOOL: Final = "memory/tool"
#: Plan a new topic file from what the user typed: a WorkspaceEdit for the client to apply.
MEMORY_NEW_MEMORY: Final = "memory/newMemory"
#: Start the extraction agent on a transcript; answers ``{id}`` at once, then
#: ``memory/extractResult``.
MEMORY_EXTRACT: Final = "memory/extract"
#: Server state for debugging and tests: directories, settings, loaded modules.
MEMDIR_STATUS: Final = "memdir/status"

# --- client → server notifications -----------------------------------------------------------
MEMORY_DID_READ: Final = "memory/didRead"
MEMORY_COMPACTED: Final = "memory/compacted"
#: The user trusted the workspace: the server may now run git and write.
MEMDIR_DID_GRANT_WORKSPACE_TRUST: Final = "memdir/didGrantWorkspaceTrust"

# --- server → client notifications -----------------------------------------------------------
MEMORY_RELEVANT_MEMORIES: Final = "memory/relevantMemories"
#: The outcome of a ``memory/extract`` run, with the same ``id``.
MEMORY_EXTRACT_RESULT: Final = "memory/extractResult"

# --- server capabilities ---------------------------------------------------------------------
#: Key under ``ServerCapabilities.experimental`` where the server lists the custom methods it
#: handles, so a client can use a newer request only when the running server has it.
EXPERIMENTAL_KEY: Final = "memdir"

# --- commands (workspace/executeCommand) -----------------------------------------------------
#: Create a file that does not exist yet (used when the client cannot apply CreateFile).
CMD_CREATE_FILE: Final = "memdir.createFile"
#: Target of the budget code lens on MEMORY.md; returns the ``memory/index`` summary.
CMD_SHOW_INDEX_BUDGET: Final = "memdir.showIndexBudget"

ALL_COMMANDS: Final = (CMD_CREATE_FILE, CMD_SHOW_INDEX_BUDGET)
