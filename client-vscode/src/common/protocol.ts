/**
 * Names and payloads on the wire between the extension and memdir-lsp.
 *
 * This mirrors server/memdir_lsp/protocol.py (names) and server/memdir_lsp/custom.py (payloads);
 * keep both in step. Every custom payload is camelCase, like LSP itself. The payload interfaces
 * describe what the server sends today; readers treat every field as possibly missing, so an
 * older or newer server degrades a view instead of breaking the extension.
 */

export const SERVER_NAME = 'memdir-lsp';
/** Python module that runs the server: `<python> -m memdir_lsp`. */
export const SERVER_MODULE = 'memdir_lsp';
/** Python module of the command line (`memdir where --json`). */
export const CLI_MODULE = 'memdir';
/** The PyPI distribution that ships both. */
export const PYPI_PACKAGE = 'memdir';
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
/** Start the extraction agent on a transcript: `{id}` at once, `memory/extractResult` later. */
export const MEMORY_EXTRACT = 'memory/extract';
/** Server state: directories, settings, loaded modules. */
export const MEMDIR_STATUS = 'memdir/status';

// --- client → server notifications --------------------------------------------------------------
export const MEMORY_DID_READ = 'memory/didRead';
export const MEMORY_COMPACTED = 'memory/compacted';

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

/** Every request takes an optional `directory`: a file URI of a known memory dir. */
export interface DirectoryParams {
  directory?: string;
}

export interface StatusDirectory {
  path: string;
  uri: string;
  origins?: string[];
  settingsSource?: string | null;
  settingsErrors?: string[];
  indexLineLimit?: number;
}

export interface StatusResult {
  version?: string;
  directories?: StatusDirectory[];
}

export interface CutEntry {
  /** 0-based line in MEMORY.md. */
  line: number;
  title: string;
  path: string;
  raw?: string;
}

/** `memory/index`: what path A injects, and how much of the caps it uses. */
export interface IndexResult {
  directory: string;
  path: string;
  exists?: boolean;
  /** Exactly the injected text (the warning line included when the cap was hit). */
  text: string;
  lines: number;
  chars: number;
  loadedLines: number;
  loadedChars: number;
  maxLines: number;
  maxChars: number;
  truncated: boolean;
  reason?: string | null;
  entries?: number;
  cutEntries?: CutEntry[];
}

export interface Visibility {
  inIndex?: boolean;
  /** `loaded`: path A shows an entry; `cut`: every entry is past the load cap; `missing`. */
  index?: 'loaded' | 'cut' | 'missing';
  indexLines?: number[];
  /** Among the newest-first prefetch candidates (path B can choose it). */
  inWindow?: boolean;
  windowRank?: number | null;
  injection?: 'whole' | 'truncated';
  truncatedReason?: string | null;
  bytes?: number;
}

export interface ListedMemory {
  /** Relative to the memory dir, `/`-separated. */
  path: string;
  name?: string | null;
  type?: string | null;
  description?: string | null;
  mtime?: string;
  size?: number;
  visibility?: Visibility;
}

/** `memory/list`: every topic file of one directory with its visibility. */
export interface ListResult {
  directory: string;
  memories: ListedMemory[];
  windowSize?: number;
  skipped?: { path: string; reason: string }[];
}

export interface ManifestCandidate {
  path: string;
  type?: string | null;
  mtime?: string;
  name?: string | null;
  description?: string | null;
}

/** `memory/manifest`: exactly what the selector is shown. */
export interface ManifestResult {
  directory: string;
  manifest: string;
  candidates?: ManifestCandidate[];
  cutOff?: string[];
}

export interface PrefetchParams extends DirectoryParams {
  query: string;
  sessionId: string;
  recentTools?: string[];
}

/** `memory/prefetch` answers at once; the selection arrives as `memory/relevantMemories`. */
export interface PrefetchResult {
  id: string | number;
  triggered: boolean;
  /** Why it did not run (single word, budget spent, ...), when the server says. */
  reason?: string | null;
}

export interface SurfacedMemory {
  path: string;
  /** The block exactly as the model sees it (header, body, truncation note). */
  text: string;
  bytes: number;
  truncated: boolean;
}

export interface RecallBudget {
  used?: number;
  left?: number;
  limit?: number;
  surfacedNow?: number;
}

export interface RelevantMemoriesParams {
  id: string | number;
  sessionId: string;
  selectedMemories: string[];
  surfaced: SurfacedMemory[];
  budget?: RecallBudget | number;
  /** Optional extras a server may add: why each file was chosen, the wrapped attachment, ... */
  why?: Record<string, string>;
  attachment?: string;
  reason?: string | null;
  triggered?: boolean;
  selector?: string | null;
  degraded?: string | null;
  dropped?: { path: string; stage: string; reason: string }[];
  directory?: string;
}

/** `memory/tool`: the API memory tool's input (snake_case, as a model sends it) and a directory. */
export interface MemoryToolParams extends DirectoryParams {
  command: 'view' | 'create' | 'str_replace' | 'insert' | 'delete' | 'rename';
  path?: string;
  file_text?: string;
  old_str?: string;
  new_str?: string;
  insert_line?: number;
  insert_text?: string;
  old_path?: string;
  new_path?: string;
  view_range?: [number, number];
}

export interface MemoryChange {
  kind: 'created' | 'changed' | 'deleted' | 'renamed';
  /** Relative to the memory dir (the old path of a rename). */
  path: string;
  uri?: string;
  newPath?: string;
  newUri?: string;
  isDir?: boolean;
  /** Dry-run extractions: the unified diff of the change. */
  diff?: string;
}

/** What the tool returned (the API's exact text) and what it wrote. */
export interface MemoryToolResult {
  text: string;
  isError: boolean;
  changes?: MemoryChange[];
  warnings?: string[];
}

export interface ExtractParams extends DirectoryParams {
  /** A `file://` URI or an absolute path of the session transcript (JSONL). */
  transcript: string;
  model?: string;
  dryRun?: boolean;
  workDoneToken?: string | number;
}

export interface ExtractResultParams {
  id: string;
  directory?: string;
  status: 'completed' | 'skipped' | 'busy' | 'error' | 'cancelled';
  reason?: string | null;
  dryRun?: boolean;
  created: string[];
  changed: string[];
  deleted: string[];
  summary: string;
  changes?: MemoryChange[];
  turns?: number;
  warnings?: string[];
}
