/**
 * "New memory" asks the server for the plan (memory/newMemory) and applies its WorkspaceEdit:
 * the client names nothing and renders nothing itself.
 */
import { beforeEach, describe, expect, it, vi } from 'vitest';
import * as vscode from 'vscode';
import { advertisedMethods, MEMORY_NEW_MEMORY, type NewMemoryResult } from '../src/common/protocol';
import { createMemory, type NewMemory, type PlanServer } from '../src/features/newMemory';

const api = vi.hoisted(() => ({
  applyEdit: vi.fn(),
  executeCommand: vi.fn(),
  findTextDocument: vi.fn(),
  showErrorMessage: vi.fn(),
}));
vi.mock('../src/common/vscodeapi', () => api);

const DIR = vscode.Uri.file('/home/ana/memory');
const TYPED: NewMemory = { name: 'Small pull requests', description: 'keep them small', type: 'feedback' };
/** The LSP WorkspaceEdit as the server sends it (what is in it is the server's business). */
const LSP_EDIT = { documentChanges: [{ kind: 'create', uri: 'file:///home/ana/memory/small-pull-requests.md' }] };
const PLAN: NewMemoryResult = {
  path: 'small-pull-requests.md',
  uri: 'file:///home/ana/memory/small-pull-requests.md',
  edit: LSP_EDIT,
  command: null,
};

class FakeServer implements PlanServer {
  requests: { method: string; params: object }[] = [];
  converted: unknown[] = [];
  readonly edit = new vscode.WorkspaceEdit();
  constructor(
    private readonly methods: string[] = [MEMORY_NEW_MEMORY],
    private readonly reply: () => Promise<NewMemoryResult> = () => Promise.resolve(PLAN),
  ) {}
  async start(): Promise<void> {}
  handles(method: string): boolean {
    return this.methods.includes(method);
  }
  async sendRequest<R>(method: string, params: object): Promise<R> {
    this.requests.push({ method, params });
    return (await this.reply()) as R;
  }
  async asWorkspaceEdit(edit: unknown): Promise<vscode.WorkspaceEdit> {
    this.converted.push(edit);
    return Promise.resolve(this.edit);
  }
}

/** Open documents by URI, as findTextDocument sees them. */
function documents(dirty: Record<string, boolean>) {
  const docs = new Map(
    Object.entries(dirty).map(([uri, isDirty]) => [uri, { isDirty, save: vi.fn(async () => true) }]),
  );
  api.findTextDocument.mockImplementation((uri: vscode.Uri) => docs.get(uri.toString()));
  return docs;
}

const FILE = 'file:///home/ana/memory/small-pull-requests.md';
const INDEX = 'file:///home/ana/memory/MEMORY.md';

beforeEach(() => {
  vi.clearAllMocks();
  api.applyEdit.mockResolvedValue(true);
  api.findTextDocument.mockReturnValue(undefined);
});

describe('createMemory', () => {
  it("sends what the user typed and applies the server's edit as it is", async () => {
    const server = new FakeServer();
    // The index is clean before the edit; applying it opens and dirties both files.
    const docs = documents({ [INDEX]: false });
    api.applyEdit.mockImplementation(async () => {
      docs.set(FILE, { isDirty: true, save: vi.fn(async () => true) });
      docs.get(INDEX)!.isDirty = true;
      return true;
    });
    const uri = await createMemory(server, DIR, TYPED);
    expect(uri?.toString()).toBe(FILE);
    expect(server.requests).toEqual([{ method: MEMORY_NEW_MEMORY, params: { ...TYPED, directory: 'file:///home/ana/memory' } }]);
    expect(server.converted).toEqual([LSP_EDIT]);
    expect(api.applyEdit).toHaveBeenCalledExactlyOnceWith(server.edit);
    // Saved, so the agent and the server read what the editor wrote.
    expect(docs.get(FILE)!.save).toHaveBeenCalledOnce();
    expect(docs.get(INDEX)!.save).toHaveBeenCalledOnce();
    expect(api.executeCommand).not.toHaveBeenCalled();
    expect(api.showErrorMessage).not.toHaveBeenCalled();
  });

  it("leaves the user's unsaved MEMORY.md unsaved", async () => {
    const docs = documents({ [INDEX]: true, [FILE]: true });
    expect(await createMemory(new FakeServer(), DIR, TYPED)).toBeDefined();
    expect(docs.get(INDEX)!.save).not.toHaveBeenCalled();
    expect(docs.get(FILE)!.save).toHaveBeenCalledOnce();
  });

  it('runs the command of a plan for a client without CreateFile, after the edit', async () => {
    const command = { title: 'Create small-pull-requests.md', command: 'memdir.createFile', arguments: [[FILE, 'text']] };
    const server = new FakeServer([MEMORY_NEW_MEMORY], () => Promise.resolve({ ...PLAN, command }));
    api.executeCommand.mockImplementation(async () => {
      expect(api.applyEdit).toHaveBeenCalledOnce();
    });
    expect(await createMemory(server, DIR, TYPED)).toBeDefined();
    expect(api.executeCommand).toHaveBeenCalledExactlyOnceWith('memdir.createFile', [FILE, 'text']);
  });

  it('asks nothing of a server without memory/newMemory, and says so', async () => {
    const server = new FakeServer(['memory/tool']);
    expect(await createMemory(server, DIR, TYPED)).toBeUndefined();
    expect(server.requests).toEqual([]);
    expect(api.applyEdit).not.toHaveBeenCalled();
    expect(api.showErrorMessage.mock.calls[0]?.[0]).toContain(MEMORY_NEW_MEMORY);
  });

  it("shows the server's refusal and applies nothing", async () => {
    const server = new FakeServer([MEMORY_NEW_MEMORY], () => Promise.reject(new Error('`name` must not be empty')));
    expect(await createMemory(server, DIR, TYPED)).toBeUndefined();
    expect(api.applyEdit).not.toHaveBeenCalled();
    expect(api.showErrorMessage).toHaveBeenCalledWith('Could not plan the new memory: `name` must not be empty');
  });

  it('reports an edit VS Code refused, and saves nothing', async () => {
    const docs = documents({ [INDEX]: false });
    api.applyEdit.mockResolvedValue(false);
    expect(await createMemory(new FakeServer(), DIR, TYPED)).toBeUndefined();
    expect(api.showErrorMessage).toHaveBeenCalledWith('Could not create small-pull-requests.md.');
    expect(docs.get(INDEX)!.save).not.toHaveBeenCalled();
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
