import { describe, expect, it } from 'vitest';
import { fileNameProblem } from '../src/features/memoryFiles';

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
