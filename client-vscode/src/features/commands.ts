/**
 * The palette commands: New memory, Open MEMORY.md, Open the project's memory dir, Lint all
 * memory dirs, Restart server.
 *
 * Every file is created through a WorkspaceEdit (never behind VS Code's back), so the language
 * server hears about it like any other edit, and undo works; a new memory's edit is planned by the
 * server (see newMemory.ts).
 */
import * as os from 'node:os';
import * as vscode from 'vscode';
import { INDEX_FILENAME, MEMORY_TYPES, type MemoryType } from '../common/protocol';
import { runProcess } from '../common/python';
import type { MemdirServer } from '../common/server';
import {
  applyEdit,
  executeCommand,
  fileExists,
  getWorkspaceFolders,
  registerCommand,
  showErrorMessage,
  showInformationMessage,
  showInputBox,
  showQuickPick,
  showTextDocument,
  withProgress,
} from '../common/vscodeapi';
import { directoryLabel, problemSummary, type ProblemCounts, type TypeGroup, addCounts, NO_PROBLEMS } from './memoriesModel';
import type { MemoryData } from './memoryData';
import { createMemory } from './newMemory';
import type { DirectoryInput } from './memoriesModel';

const TYPE_DESCRIPTIONS: Record<MemoryType, string> = {
  user: "the user's role, goals, preferences, knowledge level",
  feedback: "the user's corrections and approvals of how the agent works",
  project: 'background and decisions not derivable from the code',
  reference: 'entry points to external systems (dashboards, trackers)',
};

/** Arguments the tree's context menu passes: a directory or type node. */
interface NodeArgument {
  directoryPath?: string;
  path?: string;
  type?: TypeGroup;
  kind?: string;
}

async function pickDirectory(data: MemoryData, placeHolder: string, preferred?: string): Promise<DirectoryInput | undefined> {
  const dirs = await data.get();
  if (preferred) {
    const match = dirs.find((d) => d.path === preferred);
    if (match) {
      return match;
    }
  }
  if (dirs.length <= 1) {
    if (!dirs[0]) {
      void showInformationMessage(
        'No memory directory is known: open a folder with a MEMORY.md, or add one to the "memdir.directories" setting.',
      );
    }
    return dirs[0];
  }
  const home = os.homedir();
  const picked = await showQuickPick(
    dirs.map((d) => ({ ...directoryLabel(d.path, home), dir: d })),
    { placeHolder },
  );
  return picked?.dir;
}

async function newMemory(server: MemdirServer, data: MemoryData, node?: NodeArgument): Promise<void> {
  const dir = await pickDirectory(data, 'Which memory directory?', node?.directoryPath ?? (node?.kind === 'directory' ? node.path : undefined));
  if (!dir) {
    return;
  }
  let type: MemoryType | undefined =
    node?.type && node.type !== 'untyped' ? node.type : undefined;
  if (!type) {
    const picked = await showQuickPick(
      MEMORY_TYPES.map((t) => ({ label: t, detail: TYPE_DESCRIPTIONS[t] })),
      { placeHolder: 'Type of memory', title: 'New memory (1/3)' },
    );
    type = picked?.label;
  }
  if (!type) {
    return;
  }
  const name = await showInputBox({
    title: 'New memory (2/3)',
    prompt: 'Title, e.g. "Release merge freeze"',
    validateInput: (v) => (v.trim() ? undefined : 'A memory needs a title.'),
  });
  if (!name?.trim()) {
    return;
  }
  const description = await showInputBox({
    title: 'New memory (3/3)',
    prompt: 'One-line description: the prefetch selector chooses memories by this line alone, so make it specific.',
    validateInput: (v) => (v.trim() ? undefined : 'The description is how the agent finds this memory.'),
  });
  if (!description?.trim()) {
    return;
  }

  // The server plans the file's name, text and index entry (memory/newMemory); this applies it.
  const fileUri = await createMemory(server, vscode.Uri.file(dir.path), { name, description, type });
  if (!fileUri) {
    return;
  }
  const editor = await showTextDocument(fileUri);
  const end = editor.document.lineAt(editor.document.lineCount - 1).range.end;
  editor.selection = new vscode.Selection(end, end);
  await data.refresh();
}

async function openIndex(data: MemoryData, node?: NodeArgument): Promise<void> {
  const dir = await pickDirectory(data, 'Open the MEMORY.md of which directory?', node?.path ?? node?.directoryPath);
  if (!dir) {
    return;
  }
  const indexUri = vscode.Uri.joinPath(vscode.Uri.file(dir.path), INDEX_FILENAME);
  if (!(await fileExists(indexUri))) {
    const create = await showInformationMessage(`${dir.path} has no ${INDEX_FILENAME} yet.`, 'Create It');
    if (create !== 'Create It') {
      return;
    }
    const edit = new vscode.WorkspaceEdit();
    edit.createFile(indexUri, { overwrite: false, contents: new Uint8Array() });
    await applyEdit(edit);
  }
  await showTextDocument(indexUri);
}

/** The JSON `memdir where --json` prints (memdir.agent.paths.locate_memory_dir). */
export interface WhereResult {
  memory_dir: string;
  project_root?: string;
  enabled?: boolean;
  exists?: boolean;
  source?: string;
  notes?: string[];
}

export function parseWhere(stdout: string): WhereResult | undefined {
  try {
    const value = JSON.parse(stdout) as Partial<WhereResult> | null;
    return typeof value?.memory_dir === 'string' ? (value as WhereResult) : undefined;
  } catch {
    return undefined;
  }
}

async function openProjectMemoryDir(server: MemdirServer): Promise<void> {
  const folder = getWorkspaceFolders()[0];
  if (!folder) {
    void showInformationMessage('Open a project folder first: its memory directory is derived from the project path.');
    return;
  }
  const cli = await server.resolveCli();
  const result = await withProgress('memdir: locating the memory directory', () =>
    runProcess(cli.command, [...cli.args, 'where', '--json', folder.uri.fsPath], { cwd: folder.uri.fsPath }),
  );
  const where = result.code === 0 ? parseWhere(result.stdout) : undefined;
  if (!where) {
    void showErrorMessage(`memdir where failed: ${(result.stderr || result.stdout).trim() || `exit ${String(result.code)}`}`);
    return;
  }
  if (where.enabled === false) {
    void showInformationMessage(`Auto memory is turned off for this project (${where.notes?.join('; ') ?? where.source ?? ''}).`);
  }
  const dirUri = vscode.Uri.file(where.memory_dir);
  const indexUri = vscode.Uri.joinPath(dirUri, INDEX_FILENAME);
  if (!(await fileExists(dirUri))) {
    const choice = await showInformationMessage(
      `This project's memory directory does not exist yet: ${where.memory_dir}. The agent creates it with its first memory.`,
      'Create It',
    );
    if (choice !== 'Create It') {
      return;
    }
    const edit = new vscode.WorkspaceEdit();
    edit.createFile(indexUri, { overwrite: false, contents: new Uint8Array() });
    await applyEdit(edit);
    // The server serves only directories that exist; let it discover the new one.
    await server.restart();
  }
  const choice = await showQuickPick(
    [
      { label: `$(book) Open ${INDEX_FILENAME}`, action: 'index' as const },
      { label: '$(root-folder) Add Folder to Workspace', action: 'add' as const },
      { label: '$(window) Open Folder in New Window', action: 'window' as const },
    ],
    { placeHolder: where.memory_dir, title: "The project's memory directory" },
  );
  if (choice?.action === 'index') {
    if (await fileExists(indexUri)) {
      await showTextDocument(indexUri);
    } else {
      await executeCommand('revealFileInOS', dirUri);
    }
  } else if (choice?.action === 'add') {
    vscode.workspace.updateWorkspaceFolders(getWorkspaceFolders().length, 0, { uri: dirUri });
  } else if (choice?.action === 'window') {
    await executeCommand('vscode.openFolder', dirUri, { forceNewWindow: true });
  }
}

async function lintAll(server: MemdirServer, data: MemoryData): Promise<void> {
  await server.start();
  if (server.state !== 'running') {
    return;
  }
  // The server lints every file of every memory dir it serves and publishes the results, for
  // open and unopened files alike; a fresh listing makes sure it has (re)scanned them all.
  const dirs = await withProgress('memdir: linting memory directories', () => data.refresh());
  let total: ProblemCounts = NO_PROBLEMS;
  for (const dir of dirs) {
    total = addCounts(total, data.problemsFor(`${dir.path}/${INDEX_FILENAME}`));
    for (const memory of dir.list?.memories ?? []) {
      total = addCounts(total, data.problemsFor(`${dir.path}/${memory.path}`));
    }
  }
  // Focus, not the Ctrl+Shift+M toggle: that one closes the panel when it is already focused.
  await executeCommand('workbench.panel.markers.view.focus');
  const summary = problemSummary(total) || 'no problems';
  void showInformationMessage(`memdir: ${summary} in ${dirs.length} memory director${dirs.length === 1 ? 'y' : 'ies'}.`);
}

export function registerCommands(server: MemdirServer, data: MemoryData): vscode.Disposable[] {
  return [
    registerCommand('memdir.newMemory', (node?: NodeArgument) => newMemory(server, data, node)),
    registerCommand('memdir.openIndex', (node?: NodeArgument) => openIndex(data, node)),
    registerCommand('memdir.openProjectMemoryDir', () => openProjectMemoryDir(server)),
    registerCommand('memdir.lintAll', () => lintAll(server, data)),
    registerCommand('memdir.restartServer', async () => {
      await server.restart();
      await data.refresh();
    }),
  ];
}
