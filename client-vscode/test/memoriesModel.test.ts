import { describe, expect, it } from 'vitest';
import type { ListedMemory, Visibility } from '../src/common/protocol';
import {
  buildTree,
  directoryLabel,
  memoryLabel,
  NO_PROBLEMS,
  type ProblemCounts,
  visibilityFlags,
} from '../src/features/memoriesModel';

const visible: Visibility = {
  inIndex: true,
  index: 'loaded',
  indexLines: [2],
  inWindow: true,
  windowRank: 1,
  windowSize: 200,
  injection: 'whole',
  truncatedReason: null,
  bytes: 120,
  exists: true,
};
/** A listed memory with only the fields a test cares about (older servers send fewer). */
const listed = (memory: Partial<ListedMemory> & { path: string }): ListedMemory => memory as ListedMemory;

const memories: ListedMemory[] = [
  listed({ path: 'user-role.md', name: "Ana's role", type: 'user', description: 'backend engineer', visibility: visible }),
  listed({ path: 'feedback-terse.md', name: 'feedback-terse', type: 'feedback', description: 'answer first', visibility: visible }),
  listed({
    path: 'project-payments.md',
    name: null,
    type: 'project',
    description: 'Charges to PaymentIntents',
    visibility: { ...visible, inIndex: false, index: 'missing', indexLines: [], windowRank: 2, injection: 'truncated', truncatedReason: '4096 bytes' },
  }),
  listed({ path: 'notes/odd.md', name: 'odd', type: 'journal', description: null, visibility: { ...visible, index: 'cut', inWindow: false } }),
];

function problems(map: Record<string, Partial<ProblemCounts>>) {
  return (path: string): ProblemCounts => ({ ...NO_PROBLEMS, messages: [], ...(map[path] ?? {}) });
}

describe('buildTree', () => {
  const [dir] = buildTree(
    [{ path: '/m', uri: 'file:///m', origins: ['workspace'], list: { directory: '/m', memories, windowSize: 200, skipped: [] } }],
    problems({
      '/m/MEMORY.md': { warnings: 1, messages: ['MEM001: index line too long (line 3)'] },
      '/m/user-role.md': { errors: 1, messages: ['MEM101: no frontmatter (line 1)'] },
    }),
  );

  it('groups memories under the four types, then "No type" for the rest', () => {
    expect(dir!.children.map((t) => t.label)).toEqual(['User', 'Feedback', 'Project', 'Reference', 'No type']);
    expect(dir!.children[3]!.children).toEqual([]);
    expect(dir!.children[4]!.children.map((m) => m.relPath)).toEqual(['notes/odd.md']);
  });

  it('counts problems of the index and the topic files on the directory', () => {
    expect(dir!.problems.errors).toBe(1);
    expect(dir!.problems.warnings).toBe(1);
    expect(dir!.description).toBe('1 error, 1 warning · 4 memories');
  });

  it('labels memories by name, else file name, with badges for problems and visibility', () => {
    const user = dir!.children[0]!.children[0]!;
    expect(user.label).toBe("Ana's role");
    expect(user.description).toBe('1 error');
    expect(user.icon).toBe('error');
    expect(user.tooltip).toContain('MEM101: no frontmatter');
    expect(user.tooltip).toContain('In MEMORY.md (line 3), loaded by path A.');
    expect(user.contextValue).toBe('memdir.memory.indexed');

    const payments = dir!.children[2]!.children.find((m) => m.relPath === 'project-payments.md')!;
    expect(payments.label).toBe('project-payments');
    expect(payments.description).toBe('not in index · truncated');
    expect(payments.contextValue).toBe('memdir.memory');
    expect(payments.filePath).toBe('/m/project-payments.md');
    expect(payments.icon).toBe('project');
  });

  it('explains a missing description, since the selector sees nothing else', () => {
    const odd = dir!.children[4]!.children[0]!;
    expect(odd.tooltip).toContain('No description');
    expect(odd.flags).toEqual(['past-index-cap', 'outside-window']);
  });

  it('escapes Markdown in tooltips', () => {
    const [d] = buildTree(
      [{ path: '/m', uri: 'u', list: { directory: '/m', memories: [listed({ path: 'a.md', name: '[x](javascript:1)', type: 'user', description: '*b*' })], windowSize: 200, skipped: [] } }],
      problems({}),
    );
    expect(d!.children[0]!.children[0]!.tooltip).toContain('\\[x\\]\\(javascript:1\\)');
  });

  it('shows a directory whose listing failed', () => {
    const [d] = buildTree([{ path: '/gone', uri: 'u', error: 'boom' }], problems({}));
    expect(d!.error).toBe('boom');
    expect(d!.description).toBe('0 memories');
  });
});

describe('visibilityFlags', () => {
  it('is empty without visibility data (older servers)', () => {
    expect(visibilityFlags(listed({ path: 'a.md' }))).toEqual([]);
  });
});

describe('memoryLabel', () => {
  it('falls back to the file stem', () => {
    expect(memoryLabel(listed({ path: 'reference/grafana.md', name: '  ' }))).toBe('grafana');
  });
});

describe('directoryLabel', () => {
  it("names the agent's memory dir by its project slug", () => {
    expect(directoryLabel('/home/ana/.claude/projects/-home-ana-app/memory', '/home/ana')).toEqual({
      label: '-home-ana-app (auto memory)',
      description: '~/.claude/projects/-home-ana-app/memory',
    });
  });

  it('names agent memories and plain folders', () => {
    expect(directoryLabel('/w/.claude/agent-memory/reviewer').label).toBe('reviewer (agent memory)');
    expect(directoryLabel('/w/docs/memory/')).toEqual({ label: 'memory', description: '/w/docs/memory/' });
  });
});

describe('read-only directories', () => {
  const list = { directory: '/m', memories: [], windowSize: 200, skipped: [] };

  it('says "read-only" and why, when the server writes nothing there', () => {
    const [dir] = buildTree(
      [{ path: '/m', uri: 'file:///m', origins: ['workspace'], writable: false, readOnlyReason: 'add it to `memdir.directories`', list }],
      problems({}),
    );
    expect(dir!.description).toContain('read-only');
    expect(dir!.tooltip).toContain('Read-only: add it to `memdir.directories`');
  });

  it('says nothing of it for a writable dir, or a server that does not tell', () => {
    for (const writable of [true, undefined]) {
      const [dir] = buildTree([{ path: '/m', uri: 'file:///m', origins: ['agent'], writable, list }], problems({}));
      expect(dir!.description).not.toContain('read-only');
      expect(dir!.tooltip).not.toContain('Read-only');
    }
  });
});
