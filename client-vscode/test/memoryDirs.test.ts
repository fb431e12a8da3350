import { describe, expect, it } from 'vitest';
import { looksLikeMemoryDir, memoryDirOf, resolveConfiguredDirectories } from '../src/common/memoryDirs';

const files = new Set(['/repo/docs/memory/MEMORY.md']);
const isFile = (p: string) => files.has(p);

describe('memoryDirOf', () => {
  it('finds the directory holding MEMORY.md, a few levels up', () => {
    expect(memoryDirOf('/repo/docs/memory/topic.md', isFile)).toBe('/repo/docs/memory');
    expect(memoryDirOf('/repo/docs/memory/reference/grafana.md', isFile)).toBe('/repo/docs/memory');
  });

  it("recognises the agent's layouts without an index", () => {
    expect(memoryDirOf('/home/a/.claude/projects/-home-a-app/memory/x.md', isFile)).toBe(
      '/home/a/.claude/projects/-home-a-app/memory',
    );
    expect(memoryDirOf('/w/.claude/agent-memory/reviewer/notes.md', isFile)).toBe('/w/.claude/agent-memory/reviewer');
    expect(memoryDirOf('/w/.claude/agent-memory-local/reviewer/notes.md', isFile)).toBe(
      '/w/.claude/agent-memory-local/reviewer',
    );
  });

  it('leaves other Markdown alone', () => {
    expect(memoryDirOf('/repo/README.md', isFile)).toBeUndefined();
    expect(memoryDirOf('/repo/docs/memory/MEMORY.txt', isFile)).toBeUndefined();
  });

  it('honours configured directories', () => {
    expect(memoryDirOf('/srv/notes/a.md', isFile, ['/srv/notes'])).toBe('/srv/notes');
    expect(memoryDirOf('/srv/notes-old/a.md', isFile, ['/srv/notes'])).toBeUndefined();
  });

  it('only looks a bounded number of levels up', () => {
    expect(memoryDirOf('/repo/docs/memory/a/b/c/d/e.md', isFile)).toBeUndefined();
  });
});

describe('looksLikeMemoryDir', () => {
  it('needs the projects/<slug>/memory shape, not just a folder named memory', () => {
    expect(looksLikeMemoryDir('/src/app/memory', isFile)).toBe(false);
  });
});

describe('resolveConfiguredDirectories', () => {
  it('expands ~/, keeps absolute paths, resolves relative ones per folder', () => {
    expect(resolveConfiguredDirectories(['~/mem', '/abs', 'docs/memory', ' '], '/home/ana', ['/w1', '/w2'])).toEqual([
      '/home/ana/mem',
      '/abs',
      '/w1/docs/memory',
      '/w2/docs/memory',
    ]);
  });
});
