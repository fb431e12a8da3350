import { describe, expect, it } from 'vitest';
import {
  encodeTarget,
  fileNameProblem,
  indexInsertion,
  indexLine,
  indexLinesLinking,
  slugify,
  topicFileText,
  uniqueFileName,
  yamlScalar,
} from '../src/features/memoryFiles';

describe('slugify', () => {
  it('makes kebab-case ASCII names', () => {
    expect(slugify('Release merge freeze!')).toBe('release-merge-freeze');
    expect(slugify('  Café — déjà vu  ')).toBe('cafe-deja-vu');
    expect(slugify('提交信息规范')).toBe('memory');
  });

  it('keeps names short', () => {
    expect(slugify('a '.repeat(100)).length).toBeLessThanOrEqual(60);
  });
});

describe('uniqueFileName', () => {
  it('never reuses a taken name, case-insensitively', () => {
    expect(uniqueFileName('freeze', new Set(['other.md']))).toBe('freeze.md');
    expect(uniqueFileName('freeze', new Set(['Freeze.md', 'freeze-2.md']))).toBe('freeze-3.md');
  });
});

describe('topicFileText', () => {
  it('writes the frontmatter the agent writes, with a title and the why/how skeleton', () => {
    const text = topicFileText({ name: 'Release merge freeze', description: 'trunk frozen during review', type: 'project' });
    expect(text).toBe(
      '---\nname: Release merge freeze\ndescription: trunk frozen during review\ntype: project\n---\n# Release merge freeze\n\n**Why:**\n\n**How to apply:**\n',
    );
  });

  it('quotes YAML that would be misread', () => {
    const text = topicFileText({ name: 'Note: freeze', description: '- starts with a dash', type: 'user' });
    expect(text).toContain('name: "Note: freeze"');
    expect(text).toContain('description: "- starts with a dash"');
    expect(text.endsWith('# Note: freeze\n\n\n')).toBe(true);
  });
});

describe('yamlScalar', () => {
  it('leaves plain text alone and quotes the rest', () => {
    expect(yamlScalar('trunk is frozen')).toBe('trunk is frozen');
    expect(yamlScalar('yes')).toBe('"yes"');
    expect(yamlScalar('2027')).toBe('"2027"');
    expect(yamlScalar('say "hi" # now')).toBe('"say \\"hi\\" # now"');
  });
});

describe('indexLine', () => {
  it('renders the agent format', () => {
    expect(indexLine('Release freeze', 'release-freeze.md', 'no merges during review')).toBe(
      '- [Release freeze](release-freeze.md) — no merges during review',
    );
  });

  it('stays under the line limit by shortening the hook', () => {
    const line = indexLine('Title', 'title.md', 'word '.repeat(80));
    expect(line.length).toBeLessThanOrEqual(150);
    expect(line.endsWith('…')).toBe(true);
  });

  it('escapes brackets in titles and encodes awkward targets', () => {
    expect(indexLine('[WIP] x', 'a b(1).md', '')).toBe('- [\\[WIP\\] x](a%20b%281%29.md)');
    expect(encodeTarget('plain-name.md')).toBe('plain-name.md');
  });
});

describe('indexInsertion', () => {
  it('appends after the last entry, keeping one trailing newline', () => {
    const text = '- [A](a.md) — a\n';
    const { offset, text: insert } = indexInsertion(text, '- [B](b.md)');
    expect(text.slice(0, offset) + insert + text.slice(offset)).toBe('- [A](a.md) — a\n- [B](b.md)\n');
  });

  it('handles a file without a final newline and an empty file', () => {
    const text = '- [A](a.md)';
    const ins = indexInsertion(text, '- [B](b.md)');
    expect(text.slice(0, ins.offset) + ins.text + text.slice(ins.offset)).toBe('- [A](a.md)\n- [B](b.md)\n');
    expect(indexInsertion('\n\n', '- [B](b.md)')).toEqual({ offset: 0, text: '- [B](b.md)\n' });
  });
});

describe('fileNameProblem', () => {
  const taken = new Set(['a.md']);
  it('accepts a new .md name and explains every refusal', () => {
    expect(fileNameProblem('b.md', taken)).toBeUndefined();
    expect(fileNameProblem('', taken)).toBeDefined();
    expect(fileNameProblem('../b.md', taken)).toContain('without folders');
    expect(fileNameProblem('b.txt', taken)).toContain('.md');
    expect(fileNameProblem('memory.md', taken)).toContain('index');
    expect(fileNameProblem('A.md', taken)).toContain('already exists');
  });
});

describe('indexLinesLinking', () => {
  it('finds entries by plain, ./ and encoded targets', () => {
    const index = ['- [A](a.md) — x', 'text', '- [B](./sub/b%20c.md)', '- [A again](<a.md>)'].join('\n');
    expect(indexLinesLinking(index, 'a.md')).toEqual([0, 3]);
    expect(indexLinesLinking(index, 'sub/b c.md')).toEqual([2]);
    expect(indexLinesLinking(index, 'zzz.md')).toEqual([]);
  });
});
