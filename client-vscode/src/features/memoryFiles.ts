/**
 * The check on a file name a user types (Rename in the Memories view), per keystroke and free of
 * the vscode API. Everything a new memory's text, name and index line need is the server's
 * (`memory/newMemory`); where a file is linked from MEMORY.md comes with `memory/list`.
 */
import { INDEX_FILENAME } from '../common/protocol';

/** Why a typed file name cannot be used, or undefined when it can. */
export function fileNameProblem(input: string, taken: ReadonlySet<string>): string | undefined {
  const name = input.trim();
  if (!name) {
    return 'Type a file name.';
  }
  if (/[\\/]/.test(name) || name.startsWith('.')) {
    return 'A plain file name, without folders.';
  }
  if (!/\.md$/i.test(name)) {
    return 'Memory files end in .md.';
  }
  if (name.toLowerCase() === INDEX_FILENAME.toLowerCase()) {
    return `${INDEX_FILENAME} is the index, not a memory.`;
  }
  if ([...taken].some((t) => t.toLowerCase() === name.toLowerCase())) {
    return `${name} already exists.`;
  }
  return undefined;
}
