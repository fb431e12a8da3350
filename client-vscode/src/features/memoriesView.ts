/**
 * The Memories view (activity bar): memory dirs → the four types → memories, and its context
 * menu (open, reveal in MEMORY.md, rename, delete to trash).
 *
 * Shaping lives in memoriesModel.ts; this file maps nodes to TreeItems and runs the menu actions.
 * Rename goes through a WorkspaceEdit, never a raw file-system rename, so VS Code sends the server
 * `workspace/willRenameFiles` and the server's edit updates every link to the file.
 */
import * as os from 'node:os';
import * as vscode from 'vscode';
import { INDEX_FILENAME } from '../common/protocol';
import {
  applyEdit,
  deleteFile,
  fileExists,
  openTextDocument,
  registerCommand,
  showInputBox,
  showTextDocument,
  showWarningMessage,
  showErrorMessage,
} from '../common/vscodeapi';
import { buildTree, type MemoryNode, type MemoryTreeNode, type TypeGroup } from './memoriesModel';
import type { MemoryData } from './memoryData';
import { fileNameProblem } from './memoryFiles';

const TYPE_ICONS: Record<TypeGroup, string> = {
  user: 'account',
  feedback: 'comment-discussion',
  project: 'project',
  reference: 'link-external',
  untyped: 'question',
};

export class MemoriesTreeProvider implements vscode.TreeDataProvider<MemoryTreeNode>, vscode.Disposable {
  private readonly changeEmitter = new vscode.EventEmitter<MemoryTreeNode | undefined>();
  readonly onDidChangeTreeData = this.changeEmitter.event;
  private roots: MemoryTreeNode[] = [];
  private readonly subscription: vscode.Disposable;

  constructor(private readonly data: MemoryData) {
    this.subscription = data.onDidChange(() => {
      this.rebuild();
    });
  }

  /** Total errors and warnings, for the view's badge. */
  get problemCount(): number {
    return this.roots.reduce((n, r) => n + (r.kind === 'directory' ? r.problems.errors + r.problems.warnings : 0), 0);
  }

  rebuild(): void {
    this.roots = buildTree([...this.data.current], (path) => this.data.problemsFor(path), os.homedir());
    this.changeEmitter.fire(undefined);
  }

  getChildren(element?: MemoryTreeNode): vscode.ProviderResult<MemoryTreeNode[]> {
    if (!element) {
      if (!this.data.isLoaded) {
        // The first look at the view starts the server; the refresh fires onDidChange.
        void this.data.get();
      }
      return this.roots;
    }
    return element.kind === 'memory' ? [] : element.children;
  }

  getParent(element: MemoryTreeNode): vscode.ProviderResult<MemoryTreeNode> {
    if (element.kind === 'directory') {
      return undefined;
    }
    const dir = this.roots.find((r) => r.kind === 'directory' && r.path === element.directoryPath);
    if (element.kind === 'type' || !dir || dir.kind !== 'directory') {
      return dir;
    }
    return dir.children.find((t) => t.children.includes(element));
  }

  getTreeItem(node: MemoryTreeNode): vscode.TreeItem {
    if (node.kind === 'directory') {
      const item = new vscode.TreeItem(node.label, vscode.TreeItemCollapsibleState.Expanded);
      item.id = node.id;
      item.description = node.error ? `cannot list: ${node.error}` : node.description;
      item.tooltip = node.tooltip;
      item.iconPath = new vscode.ThemeIcon(node.problems.errors ? 'error' : 'book');
      item.contextValue = 'memdir.directory';
      return item;
    }
    if (node.kind === 'type') {
      const item = new vscode.TreeItem(
        node.label,
        node.children.length ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.None,
      );
      item.id = node.id;
      item.description = node.description;
      item.iconPath = new vscode.ThemeIcon(TYPE_ICONS[node.type]);
      item.contextValue = `memdir.type.${node.type}`;
      return item;
    }
    const item = new vscode.TreeItem(node.label, vscode.TreeItemCollapsibleState.None);
    item.id = node.id;
    item.description = node.description;
    const tooltip = new vscode.MarkdownString(node.tooltip);
    tooltip.supportThemeIcons = true;
    item.tooltip = tooltip;
    // resourceUri lets VS Code add its own problem decorations (colour, count) to the label.
    item.resourceUri = vscode.Uri.file(node.filePath);
    item.iconPath =
      node.icon === 'error'
        ? new vscode.ThemeIcon('error', new vscode.ThemeColor('list.errorForeground'))
        : node.icon === 'warning'
          ? new vscode.ThemeIcon('warning', new vscode.ThemeColor('list.warningForeground'))
          : new vscode.ThemeIcon(TYPE_ICONS[node.icon]);
    item.contextValue = node.contextValue;
    item.command = { command: 'memdir.memories.open', title: 'Open', arguments: [node] };
    return item;
  }

  dispose(): void {
    this.subscription.dispose();
    this.changeEmitter.dispose();
  }
}

function isMemoryNode(value: unknown): value is MemoryNode {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'memory';
}

/** The tree view and its context-menu commands. */
export function registerMemoriesView(data: MemoryData): vscode.Disposable[] {
  const provider = new MemoriesTreeProvider(data);
  const view = vscode.window.createTreeView('memdir.memories', { treeDataProvider: provider, showCollapseAll: true });
  const updateBadge = () => {
    const count = provider.problemCount;
    view.badge = count ? { value: count, tooltip: `${count} memory problem${count === 1 ? '' : 's'}` } : undefined;
  };
  const badgeListener = provider.onDidChangeTreeData(updateBadge);

  return [
    provider,
    view,
    badgeListener,
    registerCommand('memdir.refreshMemories', async () => {
      await data.refresh();
    }),
    registerCommand('memdir.memories.open', async (node?: unknown) => {
      if (isMemoryNode(node)) {
        await showTextDocument(vscode.Uri.file(node.filePath), { preview: true });
      }
    }),
    registerCommand('memdir.memories.revealInIndex', async (node?: unknown) => {
      if (isMemoryNode(node)) {
        await revealInIndex(node);
      }
    }),
    registerCommand('memdir.memories.rename', async (node?: unknown) => {
      if (isMemoryNode(node)) {
        await renameMemory(node, data);
      }
    }),
    registerCommand('memdir.memories.delete', async (node?: unknown) => {
      if (isMemoryNode(node)) {
        await deleteMemory(node, data);
      }
    }),
  ];
}

async function revealInIndex(node: MemoryNode): Promise<void> {
  const indexUri = vscode.Uri.file(`${node.directoryPath}/${INDEX_FILENAME}`);
  const document = await openTextDocument(indexUri);
  // The server's memory/list says which lines link the file (none: MEMORY.md opens unselected).
  const editor = await showTextDocument(document);
  const line = node.memory.visibility?.indexLines?.[0];
  if (line !== undefined && line < document.lineCount) {
    const range = document.lineAt(line).range;
    editor.selection = new vscode.Selection(range.start, range.end);
    editor.revealRange(range, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
  }
}

async function renameMemory(node: MemoryNode, data: MemoryData): Promise<void> {
  const oldUri = vscode.Uri.file(node.filePath);
  const folder = vscode.Uri.file(node.filePath.slice(0, node.filePath.lastIndexOf('/')));
  const oldName = node.relPath.split('/').pop() ?? node.relPath;
  const siblings = new Set(
    (await vscode.workspace.fs.readDirectory(folder)).map(([name]) => name).filter((name) => name !== oldName),
  );
  const input = await showInputBox({
    title: `Rename ${oldName}`,
    prompt: 'New file name. Links to it in MEMORY.md and [[name]] links are updated by the language server.',
    value: oldName,
    valueSelection: [0, oldName.replace(/\.md$/i, '').length],
    validateInput: (value) => fileNameProblem(value, siblings),
  });
  if (!input || input.trim() === oldName) {
    return;
  }
  const newUri = vscode.Uri.joinPath(folder, input.trim());
  const dirtyBefore = new Set(vscode.workspace.textDocuments.filter((d) => d.isDirty).map((d) => d.uri.toString()));
  const edit = new vscode.WorkspaceEdit();
  edit.renameFile(oldUri, newUri, { overwrite: false });
  if (!(await applyEdit(edit))) {
    void showErrorMessage(`Could not rename ${oldName}.`);
    return;
  }
  // The server's link updates arrive as text edits on MEMORY.md and topic files; save the ones
  // this rename dirtied so disk and index agree, but leave the user's unsaved work alone.
  for (const doc of vscode.workspace.textDocuments) {
    if (doc.isDirty && !dirtyBefore.has(doc.uri.toString()) && data.directoryOf(doc.uri)) {
      await doc.save();
    }
  }
  await data.refresh();
}

async function deleteMemory(node: MemoryNode, data: MemoryData): Promise<void> {
  const uri = vscode.Uri.file(node.filePath);
  const name = node.relPath;
  const choice = await showWarningMessage(
    `Move the memory "${node.label}" (${name}) to the trash?`,
    { modal: true, detail: 'Its MEMORY.md entry stays until you remove it; the language server then offers a quick fix.' },
    'Move to Trash',
  );
  if (choice !== 'Move to Trash') {
    return;
  }
  try {
    await deleteFile(uri, true);
  } catch (error) {
    // Remote and browser hosts (code-server) may have no trash.
    const permanent = await showWarningMessage(
      `Could not move ${name} to the trash (${String(error)}). Delete it permanently?`,
      { modal: true },
      'Delete Permanently',
    );
    if (permanent !== 'Delete Permanently') {
      return;
    }
    await deleteFile(uri, false);
  }
  if (!(await fileExists(uri))) {
    await data.refresh();
  }
}
