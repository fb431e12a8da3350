/**
 * Whether a Markdown file lives in a memory directory, decided without the server.
 *
 * The extension activates on workspaces that contain a MEMORY.md and on its commands, not on
 * every Markdown file (that would start a Python process for any README). A memory dir can also
 * lie outside the workspace (the agent keeps it under ~/.claude/projects/<slug>/memory), so when
 * a Markdown file is opened the extension checks it with the same rules the server uses
 * (server/memdir_lsp/discovery.py `looks_like_memory_dir`) and starts the server for it.
 */
import * as path from 'node:path';
import { INDEX_FILENAME } from './protocol';

/** How far above an opened file to look (the server uses the same bound). */
export const MAX_ANCESTORS = 4;

export function looksLikeMemoryDir(dir: string, isFile: (p: string) => boolean): boolean {
  if (isFile(path.join(dir, INDEX_FILENAME))) {
    return true;
  }
  const name = path.basename(dir);
  const parent = path.dirname(dir);
  if (name === 'memory' && path.basename(path.dirname(parent)) === 'projects') {
    return true;
  }
  const parentName = path.basename(parent);
  return parentName === 'agent-memory' || parentName === 'agent-memory-local';
}

/** The memory dir holding `filePath`, if any: a configured one, or one that looks like it. */
export function memoryDirOf(
  filePath: string,
  isFile: (p: string) => boolean,
  configured: readonly string[] = [],
): string | undefined {
  if (!filePath.toLowerCase().endsWith('.md')) {
    return undefined;
  }
  for (const dir of configured) {
    const root = dir.endsWith(path.sep) ? dir : dir + path.sep;
    if (filePath.startsWith(root)) {
      return dir;
    }
  }
  let dir = path.dirname(filePath);
  for (let i = 0; i < MAX_ANCESTORS; i++) {
    if (looksLikeMemoryDir(dir, isFile)) {
      return dir;
    }
    const parent = path.dirname(dir);
    if (parent === dir) {
      break;
    }
    dir = parent;
  }
  return undefined;
}

/** `memdir.directories` entries as absolute paths (absolute, `~/`, or relative to a folder). */
export function resolveConfiguredDirectories(entries: readonly string[], home: string, folders: readonly string[]): string[] {
  const out: string[] = [];
  for (const raw of entries) {
    const entry = raw.trim();
    if (!entry) {
      continue;
    }
    if (entry === '~' || entry.startsWith('~/')) {
      out.push(path.join(home, entry.slice(1)));
    } else if (path.isAbsolute(entry)) {
      out.push(path.normalize(entry));
    } else {
      out.push(...folders.map((f) => path.join(f, entry)));
    }
  }
  return out;
}
