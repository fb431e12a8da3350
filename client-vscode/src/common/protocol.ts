/**
 * Names and payloads on the wire between the extension and memdir-lsp.
 *
 * The names mirror server/memdir_lsp/protocol.py (a test checks them); the payload interfaces are
 * generated from the server's JSON Schema (protocolTypes.ts). Every custom payload is camelCase,
 * like LSP itself. Readers still treat fields as possibly missing, so an older or newer server
 * degrades a view instead of breaking the extension.
 */

export const SERVER_NAME = 'memdir-lsp';
/** Python module that runs the server from an environment: `<python> -m memdir_lsp`. */
export const SERVER_MODULE = 'memdir_lsp';
/** Python module (and executable) of the command line (`memdir where --json`, `memdir mcp`). */
export const CLI_MODULE = 'memdir';
/**
 * Oldest server this extension can talk to: the first release with the memory/* protocol.
 * `memdir-lsp --version` prints `memdir-lsp <version>`.
 */
export const MIN_SERVER_VERSION = '0.1.0';

/**
 * The language client's id. vscode-languageclient reads the trace level from `<id>.trace.server`,
 * so it must equal the settings section.
 */
export const CLIENT_ID = 'memdir';
/** Section of `workspace/configuration` and of the VS Code settings. */
export const CONFIG_SECTION = 'memdir';
/** `initializationOptions` key: `false` starts the server untrusted (no git, no writes). */
export const TRUSTED_OPTION = 'trusted';
/** `source` of every diagnostic the server publishes. */
export const DIAGNOSTIC_SOURCE = 'memdir';
/** `identifier` of the server's pull-diagnostics provider. */
export const DIAGNOSTIC_IDENTIFIER = 'memdir';

export const INDEX_FILENAME = 'MEMORY.md';
export const MEMORY_TYPES = ['user', 'feedback', 'project', 'reference'] as const;
export type MemoryType = (typeof MEMORY_TYPES)[number];

// --- client → server requests -------------------------------------------------------------------
export const MEMORY_INDEX = 'memory/index';
export const MEMORY_MANIFEST = 'memory/manifest';
export const MEMORY_LIST = 'memory/list';
export const MEMORY_READ = 'memory/read';
export const MEMORY_SEARCH = 'memory/search';
export const MEMORY_RECALL = 'memory/recall';
export const MEMORY_PREFETCH = 'memory/prefetch';
/** One command of the API memory tool (memory_20250818) over a memory dir; writes on disk. */
export const MEMORY_TOOL = 'memory/tool';
/** Plan a new topic file from what the user typed: a WorkspaceEdit the client applies. */
export const MEMORY_NEW_MEMORY = 'memory/newMemory';
/** Start the extraction agent on a transcript: `{id}` at once, `memory/extractResult` later. */
export const MEMORY_EXTRACT = 'memory/extract';
/** Server state: directories, settings, loaded modules. */
export const MEMDIR_STATUS = 'memdir/status';

// --- client → server notifications --------------------------------------------------------------
export const MEMORY_DID_READ = 'memory/didRead';
export const MEMORY_COMPACTED = 'memory/compacted';
/** The user trusted the workspace: the server may now run git and write. */
export const MEMDIR_DID_GRANT_WORKSPACE_TRUST = 'memdir/didGrantWorkspaceTrust';

// --- server → client notifications --------------------------------------------------------------
export const MEMORY_RELEVANT_MEMORIES = 'memory/relevantMemories';
/** The outcome of a `memory/extract` run, with the same `id`. */
export const MEMORY_EXTRACT_RESULT = 'memory/extractResult';

// --- server capabilities ------------------------------------------------------------------------
/** Key under `ServerCapabilities.experimental` where the server lists its custom methods. */
export const EXPERIMENTAL_KEY = 'memdir';

/**
 * The custom methods a server's initialize result advertises (`experimental.memdir.methods`);
 * empty for a server that predates the list, so callers fall back to what every server has.
 */
export function advertisedMethods(capabilities: unknown): string[] {
  const experimental = (capabilities as { experimental?: unknown } | undefined)?.experimental;
  const entry = (experimental as Record<string, unknown> | undefined)?.[EXPERIMENTAL_KEY];
  const methods = (entry as { methods?: unknown } | undefined)?.methods;
  return Array.isArray(methods) ? methods.filter((m): m is string => typeof m === 'string') : [];
}

// --- server commands (workspace/executeCommand; vscode-languageclient registers them) ----------
/** Creates a file that does not exist yet (used when a client cannot apply CreateFile). */
export const CMD_CREATE_FILE = 'memdir.createFile';
/** Target of the budget code lens on MEMORY.md. */
export const CMD_SHOW_INDEX_BUDGET = 'memdir.showIndexBudget';

// --- payloads -----------------------------------------------------------------------------------
// Generated from the server's JSON Schema of the protocol; see protocolTypes.ts.
export type * from './protocolTypes';
export { MEMORY_METHODS } from './protocolTypes';
