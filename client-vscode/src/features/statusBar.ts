/**
 * The status bar item on MEMORY.md ("142/200 lines · 73%") and the cut-off report it opens.
 *
 * The numbers come from `memory/index`, which counts exactly as the agent loads the index. The
 * server reads open documents from the editor, so the item follows unsaved edits; requests are
 * debounced per keystroke burst. The report is a virtual read-only document so it can never be
 * mistaken for, or saved over, the real index.
 */
import * as vscode from 'vscode';
import { INDEX_FILENAME, type IndexSummary, MEMORY_INDEX } from '../common/protocol';
import type { MemdirServer } from '../common/server';
import { getActiveTextEditor, onDidChangeActiveTextEditor, registerCommand, showInformationMessage } from '../common/vscodeapi';
import { budgetView, cutOffReport } from './budget';
import type { MemoryData } from './memoryData';

export const REPORT_SCHEME = 'memdir-report';
const UPDATE_DEBOUNCE_MS = 300;

function isIndexDocument(document: vscode.TextDocument | undefined): document is vscode.TextDocument {
  return document?.uri.scheme === 'file' && document.uri.path.endsWith(`/${INDEX_FILENAME}`);
}

function directoryUriOfIndex(indexUri: vscode.Uri): string {
  return vscode.Uri.joinPath(indexUri, '..').toString();
}

/** `memdir-report:/MEMORY.md cut-off report.md?<directory uri>` ↔ the directory it reports on. */
export function reportUri(directoryUri: string): vscode.Uri {
  return vscode.Uri.from({ scheme: REPORT_SCHEME, path: `/${INDEX_FILENAME} cut-off report.md`, query: directoryUri });
}

class CutOffReportProvider implements vscode.TextDocumentContentProvider {
  private readonly emitter = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.emitter.event;

  constructor(private readonly server: MemdirServer) {}

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    try {
      const index = await this.server.sendRequest<IndexSummary>(MEMORY_INDEX, { directory: uri.query });
      return cutOffReport(index);
    } catch (error) {
      return `# ${INDEX_FILENAME} cut-off report\n\nThe language server could not report on ${uri.query}: ${String(error)}\n`;
    }
  }

  refresh(uri: vscode.Uri): void {
    this.emitter.fire(uri);
  }
}

export function registerStatusBar(server: MemdirServer, data: MemoryData): vscode.Disposable[] {
  const item = vscode.window.createStatusBarItem('memdir.indexBudget', vscode.StatusBarAlignment.Right, 100);
  item.name = 'memdir: MEMORY.md budget';
  const reports = new CutOffReportProvider(server);
  let timer: ReturnType<typeof setTimeout> | undefined;
  let generation = 0;
  // Every property set re-renders the item; a click that lands mid-render is lost, so only
  // touch the item when what it shows actually changed.
  let shown = '';

  const update = async () => {
    const document = getActiveTextEditor()?.document;
    if (!isIndexDocument(document) || server.state !== 'running') {
      item.hide();
      shown = '';
      return;
    }
    const current = ++generation;
    const directory = directoryUriOfIndex(document.uri);
    try {
      const index = await server.sendRequest<IndexSummary>(MEMORY_INDEX, { directory });
      if (current !== generation) {
        return; // a newer update is on its way
      }
      const view = budgetView(index);
      const key = JSON.stringify([view, directory]);
      if (key === shown) {
        item.show();
        return;
      }
      shown = key;
      item.text = view.text;
      item.tooltip = view.tooltip;
      item.backgroundColor =
        view.level === 'error'
          ? new vscode.ThemeColor('statusBarItem.errorBackground')
          : view.level === 'warning'
            ? new vscode.ThemeColor('statusBarItem.warningBackground')
            : undefined;
      item.command = { command: 'memdir.showCutOffReport', title: 'Show cut-off report', arguments: [directory] };
      item.show();
    } catch {
      // Not a directory the server serves (a MEMORY.md elsewhere): no budget to show.
      if (current === generation) {
        item.hide();
        shown = '';
      }
    }
  };
  const schedule = () => {
    if (timer) {
      clearTimeout(timer);
    }
    timer = setTimeout(() => {
      timer = undefined;
      void update();
    }, UPDATE_DEBOUNCE_MS);
  };

  return [
    item,
    vscode.workspace.registerTextDocumentContentProvider(REPORT_SCHEME, reports),
    onDidChangeActiveTextEditor(() => void update()),
    vscode.workspace.onDidChangeTextDocument((event) => {
      if (event.document === getActiveTextEditor()?.document && isIndexDocument(event.document)) {
        schedule();
      }
    }),
    server.onDidChangeState(() => void update()),
    data.onDidChange(schedule),
    registerCommand('memdir.showCutOffReport', async (directory?: unknown) => {
      let dirUri = typeof directory === 'string' ? directory : undefined;
      const active = getActiveTextEditor()?.document;
      if (!dirUri && isIndexDocument(active)) {
        dirUri = directoryUriOfIndex(active.uri);
      }
      if (!dirUri) {
        const dirs = await data.get();
        dirUri = dirs[0]?.uri;
      }
      if (!dirUri) {
        void showInformationMessage('No memory directory is known yet.');
        return;
      }
      const uri = reportUri(dirUri);
      reports.refresh(uri);
      const doc = await vscode.workspace.openTextDocument(uri);
      await vscode.languages.setTextDocumentLanguage(doc, 'markdown');
      await vscode.window.showTextDocument(doc, { preview: true, viewColumn: vscode.ViewColumn.Beside });
    }),
    new vscode.Disposable(() => {
      clearTimeout(timer);
    }),
  ];
}
