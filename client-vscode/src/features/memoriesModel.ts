/**
 * The Memories view's model, free of the vscode API: directories → the four types → memories,
 * with the labels, badges and tooltips each node shows.
 *
 * Data comes from the server (`memdir/status` for the directories, `memory/list` for each one's
 * topic files with their visibility) and from the diagnostics the server published. Keeping the
 * shaping here means the view's wording and grouping are unit-tested; the TreeDataProvider only
 * turns these nodes into TreeItems.
 */
import { INDEX_FILENAME, type ListedMemory, type MemoryListing, MEMORY_TYPES, type MemoryType, type Visibility } from '../common/protocol';

export interface ProblemCounts {
  errors: number;
  warnings: number;
  /** Infos and hints: shown in the tooltip, not as a badge. */
  others: number;
  messages: string[];
}

export const NO_PROBLEMS: ProblemCounts = { errors: 0, warnings: 0, others: 0, messages: [] };

export type TypeGroup = MemoryType | 'untyped';

export interface DirectoryNode {
  kind: 'directory';
  id: string;
  /** Absolute path of the memory dir. */
  path: string;
  uri: string;
  label: string;
  description: string;
  tooltip: string;
  origins: string[];
  children: TypeNode[];
  problems: ProblemCounts;
  /** A list request failed: the message to show instead of children. */
  error?: string;
}

export interface TypeNode {
  kind: 'type';
  id: string;
  directoryPath: string;
  directoryUri: string;
  type: TypeGroup;
  label: string;
  description: string;
  children: MemoryNode[];
}

export interface MemoryNode {
  kind: 'memory';
  id: string;
  directoryPath: string;
  directoryUri: string;
  /** Absolute path of the topic file. */
  filePath: string;
  relPath: string;
  label: string;
  /** The flags shown after the label: problems first, then visibility. */
  description: string;
  /** Markdown tooltip: description, path, visibility, problems. */
  tooltip: string;
  memory: ListedMemory;
  problems: ProblemCounts;
  flags: VisibilityFlag[];
  /** `memdir.memory.indexed` enables "Reveal in MEMORY.md" in the context menu. */
  contextValue: 'memdir.memory' | 'memdir.memory.indexed';
  icon: 'error' | 'warning' | TypeGroup;
}

export type MemoryTreeNode = DirectoryNode | TypeNode | MemoryNode;

export type VisibilityFlag = 'not-in-index' | 'past-index-cap' | 'outside-window' | 'truncated';

const FLAG_TEXT: Record<VisibilityFlag, string> = {
  'not-in-index': 'not in index',
  'past-index-cap': 'past index cap',
  'outside-window': 'outside prefetch window',
  truncated: 'truncated',
};

const FLAG_EXPLANATION: Record<VisibilityFlag, string> = {
  'not-in-index': 'Not linked from MEMORY.md: invisible when the agent recalls by index injection (path A).',
  'past-index-cap': 'Linked only from MEMORY.md lines past the 200-line / 25,000-character load cap: path A never shows it.',
  'outside-window': 'Not among the 200 newest files the relevance prefetch (path B) chooses from.',
  truncated: 'Longer than 200 lines or 4096 bytes: the prefetch injects only the start of it.',
};

export const TYPE_LABELS: Record<TypeGroup, string> = {
  user: 'User',
  feedback: 'Feedback',
  project: 'Project',
  reference: 'Reference',
  untyped: 'No type',
};

const TYPE_HINTS: Record<TypeGroup, string> = {
  user: 'role, goals, preferences',
  feedback: 'corrections and approvals',
  project: 'background and decisions',
  reference: 'external systems',
  untyped: 'missing or unknown type',
};

export function visibilityFlags(memory: ListedMemory): VisibilityFlag[] {
  // Older servers send less: every field may be missing.
  const v: Partial<Visibility> | undefined = memory.visibility;
  if (!v) {
    return [];
  }
  const flags: VisibilityFlag[] = [];
  const state = v.index ?? (v.inIndex === false ? 'missing' : undefined);
  if (state === 'missing') {
    flags.push('not-in-index');
  } else if (state === 'cut') {
    flags.push('past-index-cap');
  }
  if (v.inWindow === false) {
    flags.push('outside-window');
  }
  if (v.injection === 'truncated') {
    flags.push('truncated');
  }
  return flags;
}

export function typeGroupOf(memory: ListedMemory): TypeGroup {
  const type = memory.type ?? '';
  return (MEMORY_TYPES as readonly string[]).includes(type) ? (type as MemoryType) : 'untyped';
}

/** The title a memory shows: its `name`, else the file name without `.md`. */
export function memoryLabel(memory: ListedMemory): string {
  const name = memory.name?.trim();
  if (name) {
    return name;
  }
  const base = memory.path.split('/').pop() ?? memory.path;
  return base.replace(/\.md$/i, '');
}

export function joinPath(dir: string, rel: string): string {
  return `${dir.replace(/[\\/]+$/, '')}/${rel}`;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

export function problemSummary(problems: ProblemCounts): string {
  const parts: string[] = [];
  if (problems.errors) {
    parts.push(plural(problems.errors, 'error'));
  }
  if (problems.warnings) {
    parts.push(plural(problems.warnings, 'warning'));
  }
  return parts.join(', ');
}

function escapeMarkdown(text: string): string {
  return text.replace(/([\\`*_{}[\]()#+\-.!|<>])/g, '\\$1');
}

export function memoryNode(
  directoryPath: string,
  directoryUri: string,
  memory: ListedMemory,
  problems: ProblemCounts,
): MemoryNode {
  const filePath = joinPath(directoryPath, memory.path);
  const flags = visibilityFlags(memory);
  const badges = [problemSummary(problems), ...flags.map((f) => FLAG_TEXT[f])].filter(Boolean);
  const group = typeGroupOf(memory);
  const lines = [`**${escapeMarkdown(memoryLabel(memory))}**`];
  if (memory.description) {
    lines.push('', escapeMarkdown(memory.description));
  } else {
    lines.push('', '_No description: the prefetch selector sees only descriptions, so it cannot choose this memory._');
  }
  lines.push('', `\`${memory.path}\`` + (memory.type ? ` · ${memory.type}` : '') + (memory.mtime ? ` · modified ${memory.mtime}` : ''));
  const v = memory.visibility;
  if (v) {
    const index =
      v.index === 'loaded'
        ? `In ${INDEX_FILENAME}${v.indexLines?.length ? ` (line ${v.indexLines.map((l) => l + 1).join(', ')})` : ''}, loaded by path A.`
        : undefined;
    const window =
      v.inWindow && v.windowRank ? `Prefetch candidate #${v.windowRank} (newest first).` : undefined;
    for (const line of [index, window, ...flags.map((f) => FLAG_EXPLANATION[f])]) {
      if (line) {
        lines.push('', line);
      }
    }
  }
  if (problems.messages.length) {
    lines.push('', '---', '', ...problems.messages.map((m) => `- ${escapeMarkdown(m)}`));
  }
  return {
    kind: 'memory',
    id: `memory:${filePath}`,
    directoryPath,
    directoryUri,
    filePath,
    relPath: memory.path,
    label: memoryLabel(memory),
    description: badges.join(' · '),
    tooltip: lines.join('\n'),
    memory,
    problems,
    flags,
    contextValue: v?.inIndex || v?.index === 'loaded' || v?.index === 'cut' ? 'memdir.memory.indexed' : 'memdir.memory',
    icon: problems.errors ? 'error' : problems.warnings ? 'warning' : group,
  };
}

/** `/home/ana/.claude/projects/-home-ana-src-app/memory` → `-home-ana-src-app (auto memory)`. */
export function directoryLabel(path: string, home?: string): { label: string; description: string } {
  const parts = path.replace(/[\\/]+$/, '').split(/[\\/]/);
  const last = parts.at(-1) ?? path;
  const parent = parts.at(-2);
  const grand = parts.at(-3);
  const shown = home && path.startsWith(home + '/') ? `~${path.slice(home.length)}` : path;
  if (last === 'memory' && grand === 'projects' && parent) {
    return { label: `${parent} (auto memory)`, description: shown };
  }
  if (parent === 'agent-memory' || parent === 'agent-memory-local') {
    return { label: `${last} (agent memory)`, description: shown };
  }
  return { label: last, description: shown };
}

export function addCounts(a: ProblemCounts, b: ProblemCounts): ProblemCounts {
  return {
    errors: a.errors + b.errors,
    warnings: a.warnings + b.warnings,
    others: a.others + b.others,
    messages: [...a.messages, ...b.messages],
  };
}

export interface DirectoryInput {
  path: string;
  uri: string;
  origins?: string[];
  /** False: the server writes nothing here (memory tool, extraction); missing from older servers. */
  writable?: boolean;
  /** Why it is read-only, and what would make it writable. */
  readOnlyReason?: string | null;
  list?: MemoryListing;
  error?: string;
}

/**
 * Build the tree for every directory. `problemsFor` gets an absolute file path and returns the
 * counts of the server's diagnostics on it (MEMORY.md's count toward the directory only).
 */
export function buildTree(
  directories: DirectoryInput[],
  problemsFor: (filePath: string) => ProblemCounts,
  home?: string,
): DirectoryNode[] {
  return directories.map((dir) => {
    const { label, description } = directoryLabel(dir.path, home);
    const groups = new Map<TypeGroup, MemoryNode[]>();
    let total = problemsFor(joinPath(dir.path, INDEX_FILENAME));
    for (const memory of dir.list?.memories ?? []) {
      const problems = problemsFor(joinPath(dir.path, memory.path));
      total = addCounts(total, problems);
      const node = memoryNode(dir.path, dir.uri, memory, problems);
      const group = typeGroupOf(memory);
      groups.set(group, [...(groups.get(group) ?? []), node]);
    }
    // The four types always show (an empty type is information: nothing of that kind is saved);
    // "No type" only when some file lacks a valid type.
    const order: TypeGroup[] = [...MEMORY_TYPES, ...(groups.has('untyped') ? (['untyped'] as const) : [])];
    const children: TypeNode[] = order.map((type) => {
      const memories = (groups.get(type) ?? []).sort((a, b) => a.label.localeCompare(b.label));
      return {
        kind: 'type',
        id: `type:${dir.path}:${type}`,
        directoryPath: dir.path,
        directoryUri: dir.uri,
        type,
        label: TYPE_LABELS[type],
        description: memories.length ? `${memories.length} · ${TYPE_HINTS[type]}` : TYPE_HINTS[type],
        children: memories,
      };
    });
    const count = dir.list?.memories.length ?? 0;
    const summary = problemSummary(total);
    const origins = dir.origins ?? [];
    return {
      kind: 'directory',
      id: `directory:${dir.path}`,
      path: dir.path,
      uri: dir.uri,
      label,
      description: [summary, count === 1 ? '1 memory' : `${count} memories`, dir.writable === false ? 'read-only' : '']
        .filter(Boolean)
        .join(' · '),
      tooltip: [
        description,
        origins.length ? `Found as: ${origins.join(', ')}` : '',
        dir.writable === false ? `Read-only: ${dir.readOnlyReason ?? 'memdir writes nothing here'}` : '',
        dir.error ?? '',
      ]
        .filter(Boolean)
        .join('\n'),
      origins,
      children,
      problems: total,
      ...(dir.error ? { error: dir.error } : {}),
    };
  });
}
