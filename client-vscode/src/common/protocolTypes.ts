/**
 * The memory/* payloads, generated from the protocol's JSON Schema
 * (server/memdir_lsp/memory_protocol/schema.json) by
 * `python -m memdir_lsp.memory_protocol.schema --write`. Do not edit.
 */

/** An index entry past the load cap: path A never shows it. */
export interface CutEntry {
  /** Its line in MEMORY.md, 0-based as LSP counts (the CLI and MCP show it 1-based). */
  line: number;
  title: string;
  /** The linked file, relative to the memory dir. */
  path: string | null;
  /** The whole line. */
  raw: string;
}

/** Params of `memory/didRead`: the agent read these files itself. */
export interface DidReadParams {
  /** File URI of a known memory dir; default: the workspace's first. */
  directory?: string | null;
  sessionId: string;
  /** Relative to the memory dir, absolute, or file URIs. */
  paths?: string[];
}

/** Params of a request about one memory directory. */
export interface DirectoryParams {
  /** File URI of a known memory dir; default: the workspace's first. */
  directory?: string | null;
}

/** A file left out on the way, at which stage and why. */
export interface DroppedFile {
  path: string;
  /** `before-select`, `after-select`, `read` or `budget`. */
  stage: string;
  reason: string;
}

/** The editor's memdir settings as the server understood them. */
export interface EditorSettingsView {
  directories: string[];
  /** memdir.toml keys set in the editor. */
  overrides: Record<string, unknown>;
}

/** Why one file was, or was not, selected by a recall. */
export interface Explanation {
  /** The file as asked, relative to the memory dir when it lies inside. */
  path: string;
  /** `surfaced`; `selected` (then left out on the way); `not-selected`; `seen` (the session had seen it); `not-a-candidate` (not in the manifest); `not-triggered`. */
  verdict: 'surfaced' | 'selected' | 'not-selected' | 'seen' | 'not-a-candidate' | 'not-triggered';
  /** One sentence: what happened and the reason that decided it. */
  reason: string;
  /** The lexical view (null when the file was never scored: not a candidate, seen). */
  lexical: LexicalView | null;
  /** The file has a `description` (the selector chooses by descriptions). */
  hasDescription: boolean;
  /** Words of the question to add to its `description` to make it findable for it. */
  suggestion: string[];
  /** The suggestion was tried: with these words the lexical selector selects the file. */
  suggestionSelects: boolean;
  /** The whole explanation, as the CLI prints it and the VS Code preview shows it. */
  lines: string[];
}

/** What a `memory/extract` run did (with `dryRun`: would do). */
export interface ExtractOutcome {
  id: string;
  /** File URI of the memory dir. */
  directory: string;
  status: 'completed' | 'skipped' | 'busy' | 'error' | 'cancelled';
  /** Why it was skipped, busy, cancelled or failed. */
  reason: string | null;
  dryRun: boolean;
  created: string[];
  changed: string[];
  deleted: string[];
  renamed: RenamedFile[];
  changes: MemoryChange[];
  /** The agent's own summary of what it saved. */
  summary: string;
  turns: number;
  /** How the loop ended: the model's last `stop_reason`, or `max_turns`. */
  stopReason: string | null;
  model: string | null;
  warnings: string[];
}

/** Params of `memory/extract`. */
export interface ExtractParams {
  /** File URI of a known memory dir; default: the workspace's first. */
  directory?: string | null;
  /** A `file://` URI or an absolute path of the session transcript (JSONL). */
  transcript: string;
  /** The model to run; default: the directory's setting. */
  model?: string | null;
  /** Plan the writes and report their diffs; write nothing. */
  dryRun?: boolean;
  /** The client's work-done progress token for the run. */
  workDoneToken?: string | number | null;
}

/** `memory/extract` answers at once; the outcome arrives as `memory/extractResult`. */
export interface ExtractStarted {
  id: string;
}

/** Params of `memdir/didGrantWorkspaceTrust`: none. */
export type GrantTrustParams = Record<string, never>;

/** What path A injects of MEMORY.md, and how much of the load cap it uses. */
export interface IndexSummary {
  /** The memory dir. */
  directory: string;
  /** MEMORY.md's path. */
  path: string;
  exists: boolean;
  /** Exactly the injected text (the warning line included when the cap was hit). */
  text: string;
  /** Lines and characters (UTF-16 units) of the content, before the cap. */
  lines: number;
  chars: number;
  /** Lines and characters loaded. */
  loadedLines: number;
  loadedChars: number;
  /** The caps: 200 lines, 25,000 characters. */
  maxLines: number;
  maxChars: number;
  truncated: boolean;
  /** Why it was cut, as the warning line says; null when nothing was. */
  reason: string | null;
  /** Number of index entries. */
  entries: number;
  cutEntries: CutEntry[];
  /** Past the cap, near it (over `rewriteTargetLines` lines or 90% of the characters), or within it. */
  level: 'within' | 'near' | 'over';
  /** The agent is told to keep the index under this many lines. */
  rewriteTargetLines: number;
}

/** The lexical selector's numbers for one file, over the files the selector was offered. */
export interface LexicalView {
  /** Normalised score (0.0: it matched nothing). */
  score: number;
  /** The lowest score any file could be selected with for this question. */
  threshold: number;
  /** 1-based rank among the files scoring above 0 (null: it scored 0). */
  rank: number | null;
  /** The query's concepts it matched, as typed (`部署→deploy` when by a translation). */
  matched: string[];
  /** Those of `matched` found only in the head of its body: the agent's own selector, which reads names and descriptions, does not see them. */
  inBody: string[];
  /** The query's content words it lacks, as typed: neither its name, description, path nor the head of its body holds them (or a translation of them). */
  missing: string[];
  /** Why the lexical selector left it out, or null when it selected it. */
  cut: string | null;
  /** The recently-used-tools rule dropped it (a tool's plain usage doc). */
  droppedByTools: boolean;
  /** Exactly the numbers of the selection (true), or a hint beside a model's choice (false). */
  exact: boolean;
}

/** A topic file as the prefetch scan reads it, with its visibility. */
export interface ListedMemory {
  /** Relative to the memory dir, `/`-separated. */
  path: string;
  name: string | null;
  type: string | null;
  description: string | null;
  /** Last modified, ISO 8601 UTC with milliseconds. */
  mtime: string;
  /** Size in bytes on disk. */
  size: number;
  visibility: Visibility;
}

/** One manifest line: a topic file the selector is shown. */
export interface ManifestCandidate {
  path: string;
  type: string | null;
  /** Last modified, ISO 8601 UTC with milliseconds. */
  mtime: string;
  name: string | null;
  description: string | null;
}

/** Exactly what the selector is shown: the newest topic files' headers. */
export interface ManifestView {
  directory: string;
  candidates: ManifestCandidate[];
  /** The manifest text, one line per candidate. */
  manifest: string;
  /** Topic files past the 200-file window: never candidates. */
  cutOff: string[];
  skipped: SkippedFile[];
}

/** One file (or folder) a write created, changed, deleted or renamed. */
export interface MemoryChange {
  kind: 'created' | 'changed' | 'deleted' | 'renamed';
  /** Relative to the memory dir (the old path of a rename). */
  path: string;
  uri: string;
  /** The new path and URI of a rename. */
  newPath: string | null;
  newUri: string | null;
  isDir: boolean;
  /** Dry-run extractions: the unified diff of the change. */
  diff: string;
}

/** Every topic file of one directory with its visibility. */
export interface MemoryListing {
  directory: string;
  /** Prefetch candidates first (newest first), then the files past the window. */
  memories: ListedMemory[];
  /** How many files the prefetch window holds at most. */
  windowSize: number;
  skipped: SkippedFile[];
}

/** The matching lines of a memory dir's files, MEMORY.md first. */
export interface MemorySearchResult {
  directory: string;
  matches: SearchMatch[];
  /** The search stopped at 500 matches. */
  truncated: boolean;
}

/** One topic file exactly as path B injects it. */
export interface MemoryText {
  path: string;
  /** UTF-8 bytes of `content`: what counts against the session budget. */
  bytes: number;
  truncated: boolean;
  /** The injected block: header, staleness warning, content, truncation note. */
  text: string;
  lines: number;
  /** The file content included, before header and notes. */
  content: string;
  mtime: string;
}

/** The API memory tool's input, snake_case as a model sends it (camelCase also accepted). */
export interface MemoryToolParams {
  /** File URI of a known memory dir; default: the workspace's first. */
  directory?: string | null;
  command: 'view' | 'create' | 'str_replace' | 'insert' | 'delete' | 'rename';
  path?: string | null;
  file_text?: string | null;
  old_str?: string | null;
  new_str?: string | null;
  insert_line?: number | null;
  insert_text?: string | null;
  old_path?: string | null;
  new_path?: string | null;
  /** First and last line to show (1-based; `-1`: to the end). */
  view_range?: number[] | null;
}

/** What the memory tool returned (the API's exact text) and what it wrote. */
export interface MemoryToolResult {
  text: string;
  /** The tool refused or failed; `text` says why, as the model would read it. Also set when the command was carried out but MEMORY.md could not be updated (a full disk): `changes` lists what was done, and the next write makes the index update it owes. */
  isError: boolean;
  changes: MemoryChange[];
  /** What did not stop the command but the user should know: MEMORY.md left alone or not updated, the journal of an interrupted write refused. */
  warnings: string[];
}

/** Params of `memory/newMemory`: what the user typed. */
export interface NewMemoryParams {
  /** File URI of a known memory dir; default: the workspace's first. */
  directory?: string | null;
  /** The title: the frontmatter `name`, the heading, the index entry's text and, as a slug, the file name. */
  name: string;
  /** One line: what the selector chooses the memory by, and the index entry's hook. */
  description: string;
  type: 'user' | 'feedback' | 'project' | 'reference';
  /** The text under the heading; default: a why/how skeleton for feedback and project. */
  body?: string;
}

/** The plan of a new memory; the server writes nothing, the client applies `edit`. */
export interface NewMemoryResult {
  /** The new file, relative to the memory dir (a name no file or index entry has). */
  path: string;
  uri: string;
  /** An LSP `WorkspaceEdit`: a `CreateFile` of the topic file (never over an existing one) with its text, and in recall mode `index` the MEMORY.md entry (MEMORY.md is created when missing). */
  edit: unknown;
  /** An LSP `Command`, or null. Only for clients without `create` among their resource operations: `edit` then holds the index edit alone and this `memdir.createFile` command, run after it, creates the file. */
  command: unknown;
}

/** Params of `memory/prefetch`. */
export interface PrefetchParams {
  /** File URI of a known memory dir; default: the workspace's first. */
  directory?: string | null;
  query: string;
  sessionId: string;
  recentTools?: string[];
  /** Files to explain, as in `memory/recall`; the notification carries the explanations. */
  explain?: string[];
}

/** `memory/prefetch` answers at once; the selection arrives as `memory/relevantMemories`. */
export interface PrefetchStarted {
  /** Repeated in the notification. */
  id: string;
  /** false: no notification follows. */
  triggered: boolean;
  /** Why it did not run (single word, budget spent, ...). */
  reason: string | null;
}

/** Params of `memory/read`. */
export interface ReadParams {
  /** File URI of a known memory dir; default: the workspace's first. */
  directory?: string | null;
  /** The topic file: relative to the memory dir, absolute, or a file URI. */
  path: string;
}

/** The session's surfacing budget after this recall, in bytes. */
export interface RecallBudget {
  used: number;
  left: number;
  limit: number;
  /** Bytes this recall surfaced. */
  surfacedNow: number;
}

/** A file the selector was shown in a recall: its manifest line's fields. */
export interface RecallCandidate {
  path: string;
  type: string | null;
  /** Last modified, ISO 8601 UTC with milliseconds. */
  mtime: string;
  /** Always null: the selector is shown no names. */
  name: null;
  description: string | null;
}

/** Params of `memory/recall`. */
export interface RecallParams {
  /** File URI of a known memory dir; default: the workspace's first. */
  directory?: string | null;
  /** The user's message. */
  query: string;
  /** An agent session: files it was shown or read do not surface again. */
  sessionId?: string | null;
  /** Tools the agent used recently; the selector skips their reference docs. */
  recentTools?: string[];
  /** Files (relative to the memory dir, absolute, or file URIs) to explain: why each was or was not selected, in the result's `explanations`. */
  explain?: string[];
}

/** Milliseconds each stage took; `selector`: the selector's own stages. */
export interface RecallTimings {
  scanMs: number;
  selectMs: number;
  readMs: number;
  totalMs: number;
  selector: Record<string, number>;
}

/** Everything one recall (path B) did, and exactly what it injects. */
export interface RecallView {
  query: string;
  triggered: boolean;
  /** Why it ran, or why not (single word, acknowledgement, budget spent). */
  reason: string;
  /** The selector's choice, relative paths in its order. */
  selectedMemories: string[];
  surfaced: SurfacedView[];
  /** The `relevant_memories` attachment (empty when nothing surfaced). */
  attachment: string;
  /** The selector that chose (`lexical` after a fallback), the one asked, and why it fell back. */
  selector: string | null;
  requestedSelector: string | null;
  model: string | null;
  degraded: string | null;
  /** Why each selected file was chosen, when the selector says. */
  why: Record<string, string>;
  /** Names the selector gave that were dropped, and why. */
  rejected: Record<string, string>;
  /** The selector's own notes (names dropped, caps, tool rule). */
  notes: string[];
  dropped: DroppedFile[];
  budget: RecallBudget;
  /** The files the selector was shown, newest first. */
  candidates: RecallCandidate[];
  /** The manifest text the selector saw. */
  manifest: string;
  timings: RecallTimings;
  elapsedMs: number;
  /** Why each file asked about (`--explain`, `explain`) was or was not selected. */
  explanations: Explanation[];
}

/** The selection of a `memory/prefetch`, once it is made. */
export interface RelevantMemories {
  id: string;
  sessionId: string;
  /** File URI of the memory dir. */
  directory: string;
  selectedMemories: string[];
  surfaced: SurfacedView[];
  attachment: string;
  budget: RecallBudget;
  triggered: boolean;
  reason: string;
  selector: string | null;
  degraded: string | null;
  why: Record<string, string>;
  dropped: DroppedFile[];
  /** Why each file of the prefetch's `explain` was or was not selected. */
  explanations: Explanation[];
}

/** A file the run renamed. */
export interface RenamedFile {
  /** The old path, relative to the memory dir. */
  from: string;
  /** The new path. */
  to: string | null;
}

/** One matching line. */
export interface SearchMatch {
  /** Relative to the memory dir, `/`-separated. */
  path: string;
  /** The line, 0-based as LSP counts (the CLI and MCP show it 1-based). */
  line: number;
  /** Where the first match starts: a 0-based column in characters (code points; the CLI and MCP show it 1-based). */
  character: number;
  /** The line, cut at 400 characters. */
  text: string;
}

/** Params of `memory/search`. */
export interface SearchParams {
  /** File URI of a known memory dir; default: the workspace's first. */
  directory?: string | null;
  /** A regular expression (Python syntax), searched line by line. */
  pattern: string;
  /** Only files matching this glob; one without `/` matches file names in any folder. */
  glob?: string;
  ignoreCase?: boolean;
}

/** Params of `memory/compacted`: the agent's context was compacted. */
export interface SessionParams {
  /** File URI of a known memory dir; default: the workspace's first. */
  directory?: string | null;
  sessionId: string;
}

/** An agent session of one directory. */
export interface SessionState {
  /** Bytes surfaced so far, and the session's limit. */
  budgetUsed: number;
  budgetLimit: number;
  /** Absolute paths surfaced, and read by the agent itself. */
  surfaced: string[];
  read: string[];
  compactions: number;
}

/** A file the scan refused or could not read. */
export interface SkippedFile {
  path: string;
  reason: string;
}

/** A memory directory the server knows. */
export interface StatusDirectory {
  path: string;
  uri: string;
  /** Why it is known: `workspace`, `agent`, `setting`, `opened`. */
  origins: string[];
  /** Where its settings came from, and what was wrong with them. */
  settingsSource: string | null;
  settingsErrors: string[];
  indexLineLimit: number;
  /** The server may write here (`memory/tool`'s writes, `memory/extract`, file creation): the agent's memory dir, or one in the `directories` setting, in a trusted workspace. Other dirs are served read-only. */
  writable: boolean;
  /** Why it is read-only, and what would let the server write (null when writable). */
  readOnlyReason: string | null;
  /** Set when the directory looks like another agent's memory (OpenClaw, Hermes, a memory bank ...): the sentence said once to the user; nothing is checked, fixed or written there (null: Claude Code's format, or forced by the `anyFormat` setting). */
  notice: string | null;
  /** The session asked for by `sessionId` (null: no such session yet). */
  session: SessionState | null;
}

/** Params of `memdir/status`. */
export interface StatusParams {
  /** Also report this agent session of every directory. */
  sessionId?: string | null;
}

/** What the server knows, for debugging and tests. */
export interface StatusResult {
  version: string;
  directories: StatusDirectory[];
  /** The anthropic SDK is imported (startup never imports it). */
  anthropicLoaded: boolean;
  positionEncoding: string;
  editorSettings: EditorSettingsView;
  /** The workspace is trusted (initializationOptions `trusted`, or granted since): untrusted, the server runs no git and writes nothing. */
  trusted: boolean;
}

/** One memory injected by a recall. */
export interface SurfacedView {
  path: string;
  bytes: number;
  truncated: boolean;
  /** The block exactly as the model sees it (header, body, truncation note). */
  text: string;
  /** The truncation note's line of `text` (null when the whole file is shown). */
  truncationNote: string | null;
}

/** How the agent's two paths see one topic file. */
export interface Visibility {
  /** Some MEMORY.md entry links it. */
  inIndex: boolean;
  /** `loaded`: path A shows an entry; `cut`: every entry is past the load cap; `missing`. */
  index: 'loaded' | 'cut' | 'missing';
  /** 0-based MEMORY.md lines of the entries linking it. */
  indexLines: number[];
  /** Among the newest-first prefetch candidates (path B can choose it). */
  inWindow: boolean;
  /** 1-based rank among the prefetch candidates, newest first; null outside the window. */
  windowRank: number | null;
  /** How many candidates the window holds. */
  windowSize: number;
  /** `truncated` when injecting it cuts it at the line or byte cap. */
  injection: 'whole' | 'truncated';
  /** Which cap cut it. */
  truncatedReason: string | null;
  /** UTF-8 size of the file. */
  bytes: number;
  /** The file exists (on disk or as an unsaved buffer). */
  exists: boolean;
}

/** Requests the client sends, by method. */
export interface MemoryRequests {
  'memory/index': { params: DirectoryParams; result: IndexSummary };
  'memory/manifest': { params: DirectoryParams; result: ManifestView };
  'memory/list': { params: DirectoryParams; result: MemoryListing };
  'memory/read': { params: ReadParams; result: MemoryText };
  'memory/search': { params: SearchParams; result: MemorySearchResult };
  'memory/recall': { params: RecallParams; result: RecallView };
  'memory/prefetch': { params: PrefetchParams; result: PrefetchStarted };
  'memory/tool': { params: MemoryToolParams; result: MemoryToolResult };
  'memory/newMemory': { params: NewMemoryParams; result: NewMemoryResult };
  'memory/extract': { params: ExtractParams; result: ExtractStarted };
  'memdir/status': { params: StatusParams; result: StatusResult };
}

/** Notifications the client sends. */
export interface MemoryNotifications {
  'memdir/didGrantWorkspaceTrust': { params: GrantTrustParams };
  'memory/didRead': { params: DidReadParams };
  'memory/compacted': { params: SessionParams };
}

/** Notifications the server sends. */
export interface MemoryServerNotifications {
  'memory/relevantMemories': { params: RelevantMemories };
  'memory/extractResult': { params: ExtractOutcome };
}

/** Every memory/* method and its kind. */
export const MEMORY_METHODS = {
  'memory/index': 'request',
  'memory/manifest': 'request',
  'memory/list': 'request',
  'memory/read': 'request',
  'memory/search': 'request',
  'memory/recall': 'request',
  'memory/prefetch': 'request',
  'memory/tool': 'request',
  'memory/newMemory': 'request',
  'memory/extract': 'request',
  'memdir/status': 'request',
  'memdir/didGrantWorkspaceTrust': 'notification',
  'memory/didRead': 'notification',
  'memory/compacted': 'notification',
  'memory/relevantMemories': 'server notification',
  'memory/extractResult': 'server notification',
} as const;
