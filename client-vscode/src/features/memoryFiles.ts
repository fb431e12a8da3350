/**
 * Topic files and index lines as text, free of the vscode API: the file a "New memory" creates,
 * the index line it adds, and the checks on file names a user types.
 *
 * The formats follow the agent's own (spec sections 3 and 4) and memdir's Python
 * (`memdir.index.render_entry`, `memdir.topic`), so a memory created here is one the agent and
 * `memdir lint` accept unchanged.
 */
import { INDEX_FILENAME, type MemoryType } from '../common/protocol';

/** What the agent is told to aim for per index line; longer lines are flagged (MEM001). */
export const INDEX_LINE_LIMIT = 150;

/** `Release merge freeze!` → `release-merge-freeze` (ASCII letters, digits and dashes). */
export function slugify(title: string): string {
  const slug = title
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60)
    .replace(/-+$/, '');
  return slug || 'memory';
}

/** A file name not in `taken`: `slug.md`, else `slug-2.md`, `slug-3.md`, ... */
export function uniqueFileName(slug: string, taken: ReadonlySet<string>): string {
  const lower = new Set([...taken].map((t) => t.toLowerCase()));
  let candidate = `${slug}.md`;
  for (let n = 2; lower.has(candidate.toLowerCase()); n++) {
    candidate = `${slug}-${n}.md`;
  }
  return candidate;
}

/** YAML needs quotes when a plain scalar would be misread (a colon-space, a leading `-`, ...). */
export function yamlScalar(value: string): string {
  const plain = /^[^\s'"\-?:,[\]{}#&*!|>%@`][^#\n]*$/.test(value) && !/:\s/.test(value) && !/\s$/.test(value);
  if (plain && !/^(true|false|yes|no|null|~|on|off)$/i.test(value) && !/^[\d.+-]+$/.test(value)) {
    return value;
  }
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

export interface NewMemory {
  name: string;
  description: string;
  type: MemoryType;
  body?: string;
}

/** The topic file: frontmatter (name, description, type), a title, and a body skeleton. */
export function topicFileText(memory: NewMemory): string {
  const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();
  // Feedback and project memories carry their reason and how to apply it (spec section 4).
  const skeleton = memory.type === 'feedback' || memory.type === 'project' ? '**Why:**\n\n**How to apply:**' : '';
  const body = memory.body?.trim() || skeleton;
  return [
    '---',
    `name: ${yamlScalar(oneLine(memory.name))}`,
    `description: ${yamlScalar(oneLine(memory.description))}`,
    `type: ${memory.type}`,
    '---',
    `# ${oneLine(memory.name)}`,
    '',
    body,
  ].join('\n') + '\n';
}

/** Encode only what a Markdown link target cannot hold (spaces, parentheses, ...). */
export function encodeTarget(path: string): string {
  return path.replace(/[\s()<>%]/g, (c) =>
    [...new TextEncoder().encode(c)].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join(''),
  );
}

/** `- [Title](file.md) — hook`, cut so the whole line stays within the limit. */
export function indexLine(title: string, path: string, hook: string, limit = INDEX_LINE_LIMIT): string {
  const escaped = title.replace(/\\/g, '\\\\').replace(/\[/g, '\\[').replace(/]/g, '\\]');
  const head = `- [${escaped}](${encodeTarget(path)})`;
  const cleanHook = hook.replace(/\s+/g, ' ').trim();
  if (!cleanHook) {
    return head;
  }
  const room = limit - head.length - 3;
  if (room <= 1) {
    return head;
  }
  const cut = cleanHook.length > room ? `${cleanHook.slice(0, room - 1).trimEnd()}…` : cleanHook;
  return `${head} — ${cut}`;
}

/**
 * Where to insert a new index line in MEMORY.md's text: after the last non-blank line, with the
 * newline the file needs. Returns the character offset and the text to insert there.
 */
export function indexInsertion(indexText: string, line: string): { offset: number; text: string } {
  if (!indexText.trim()) {
    return { offset: 0, text: `${line}\n` };
  }
  const trimmedEnd = indexText.replace(/\s+$/, '');
  const offset = trimmedEnd.length;
  return { offset, text: `\n${line}` + (indexText.length === offset ? '\n' : '') };
}

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

/** The 0-based lines of MEMORY.md that link to `relPath` (for "Reveal in MEMORY.md"). */
export function indexLinesLinking(indexText: string, relPath: string): number[] {
  const wanted = new Set([relPath, `./${relPath}`, encodeTarget(relPath), `./${encodeTarget(relPath)}`]);
  const found: number[] = [];
  indexText.split(/\r?\n/).forEach((line, n) => {
    for (const match of line.matchAll(/\]\(\s*<?([^)>\s]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      const target = match[1] ?? '';
      let decoded = target;
      try {
        decoded = decodeURIComponent(target);
      } catch {
        // A stray % is not an escape; compare the raw text.
      }
      if (wanted.has(target) || wanted.has(decoded)) {
        found.push(n);
        break;
      }
    }
  });
  return found;
}
