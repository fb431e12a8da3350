/**
 * "New memory" writes through the server's memory/tool when the server has it, and through a
 * WorkspaceEdit otherwise (an older server, none, a failed request, or an index with unsaved
 * edits that a write on disk would conflict with).
 */
import { beforeEach, describe, expect, it, vi } from 'vitest';
import * as vscode from 'vscode';
import { advertisedMethods, MEMORY_TOOL, type MemoryToolResult } from '../src/common/protocol';
import { createMemoryFile, createParams, type MemoryFile, type ToolServer } from '../src/features/newMemory';
import type { WorkspaceEdit as RecordedEdit } from './fakes/vscode';

const api = vi.hoisted(() => ({
  applyEdit: vi.fn(),
  fileExists: vi.fn(),
  findTextDocument: vi.fn(),
  openTextDocument: vi.fn(),
  showErrorMessage: vi.fn(),
}));
vi.mock('../src/common/vscodeapi', () => api);

const TEXT = '---\nname: Small pull requests\ndescription: keep them small\ntype: feedback\n---\n# Small pull requests\n';
const FILE: MemoryFile = {
  directory: vscode.Uri.file('/home/ana/memory'),
  fileName: 'small-pull-requests.md',
  text: TEXT,
  indexLine: '- [Small pull requests](small-pull-requests.md) — keep them small',
};

class FakeServer implements ToolServer {
  requests: { method: string; params: object }[] = [];
  constructor(
    private readonly methods: string[],
    private readonly reply: () => Promise<MemoryToolResult>,
  ) {}
  handles(method: string): boolean {
    return this.methods.includes(method);
  }
  async sendRequest<R>(method: string, params: object): Promise<R> {
    this.requests.push({ method, params });
    return (await this.reply()) as R;
  }
}

const created = (): Promise<MemoryToolResult> =>
  Promise.resolve({ text: 'File created successfully at: /memories/small-pull-requests.md', isError: false, changes: [], warnings: [] });

function indexDocument(text: string) {
  return {
    getText: () => text,
    positionAt: (offset: number) => new vscode.Position(0, offset),
    save: vi.fn(async () => true),
    isDirty: false,
  };
}

beforeEach(() => {
  vi.clearAllMocks();
  api.applyEdit.mockResolvedValue(true);
  api.fileExists.mockResolvedValue(true);
  api.findTextDocument.mockReturnValue(undefined);
  api.openTextDocument.mockResolvedValue(indexDocument('- [A](a.md) — a\n'));
});

describe('createParams', () => {
  it('is a memory tool create in the /memories tree of the directory', () => {
    expect(createParams(FILE)).toEqual({
      command: 'create',
      path: '/memories/small-pull-requests.md',
      file_text: TEXT,
      directory: 'file:///home/ana/memory',
    });
  });
});

describe('createMemoryFile', () => {
  it('uses memory/tool when the server has it: no edit, the server maintains the index', async () => {
    const server = new FakeServer([MEMORY_TOOL], created);
    expect(await createMemoryFile(server, FILE)).toBe('tool');
    expect(server.requests).toEqual([{ method: MEMORY_TOOL, params: createParams(FILE) }]);
    expect(api.applyEdit).not.toHaveBeenCalled();
  });

  it("shows the tool's error and creates nothing else", async () => {
    const server = new FakeServer([MEMORY_TOOL], () =>
      Promise.resolve({ text: 'File /memories/small-pull-requests.md already exists', isError: true, changes: [], warnings: [] }),
    );
    expect(await createMemoryFile(server, FILE)).toBeUndefined();
    expect(api.showErrorMessage).toHaveBeenCalledWith(
      'Could not create small-pull-requests.md: File /memories/small-pull-requests.md already exists',
    );
    expect(api.applyEdit).not.toHaveBeenCalled();
  });

  it('falls back to a WorkspaceEdit with a server without memory/tool', async () => {
    const server = new FakeServer(['memory/index'], created);
    expect(await createMemoryFile(server, FILE)).toBe('edit');
    expect(server.requests).toEqual([]);
    // The fake's WorkspaceEdit records its operations (test/fakes/vscode.ts).
    const edit = api.applyEdit.mock.calls[0]?.[0] as RecordedEdit;
    expect(edit.operations.map((o) => [o.kind, o.uri.toString()])).toEqual([
      ['createFile', 'file:///home/ana/memory/small-pull-requests.md'],
      ['insert', 'file:///home/ana/memory/MEMORY.md'],
    ]);
    const insert = edit.operations[1];
    expect(insert?.kind === 'insert' && insert.text).toBe(`\n${FILE.indexLine}`);
  });

  it('edits the buffer when MEMORY.md has unsaved changes (a disk write would conflict)', async () => {
    api.findTextDocument.mockReturnValue({ ...indexDocument('- [A](a.md) — a\n'), isDirty: true });
    const server = new FakeServer([MEMORY_TOOL], created);
    expect(await createMemoryFile(server, FILE)).toBe('edit');
    expect(server.requests).toEqual([]);
    expect(api.applyEdit).toHaveBeenCalledOnce();
  });

  it('falls back when the request fails and the file was not written', async () => {
    api.fileExists.mockImplementation(async (uri: vscode.Uri) => uri.toString().endsWith('MEMORY.md'));
    const server = new FakeServer([MEMORY_TOOL], () => Promise.reject(new Error('server exited')));
    const log = vi.fn();
    expect(await createMemoryFile(server, FILE, log)).toBe('edit');
    expect(log).toHaveBeenCalledOnce();
    expect(api.applyEdit).toHaveBeenCalledOnce();
  });

  it('keeps what the server wrote when the request fails after the write', async () => {
    const server = new FakeServer([MEMORY_TOOL], () => Promise.reject(new Error('connection lost')));
    expect(await createMemoryFile(server, FILE)).toBe('tool');
    expect(api.applyEdit).not.toHaveBeenCalled();
  });
});

describe('advertisedMethods', () => {
  it("reads the server's experimental.memdir.methods, tolerating anything else", () => {
    expect(advertisedMethods({ experimental: { memdir: { methods: ['memory/tool', 3, 'memory/index'] } } })).toEqual([
      'memory/tool',
      'memory/index',
    ]);
    expect(advertisedMethods({ experimental: { other: {} } })).toEqual([]);
    expect(advertisedMethods(undefined)).toEqual([]);
    expect(advertisedMethods({ experimental: { memdir: { methods: 'memory/tool' } } })).toEqual([]);
  });
});
