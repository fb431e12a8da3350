/**
 * The server's view of the memory directories, fetched once and shared by the Memories view,
 * the commands that ask "which directory?", and the recall preview.
 *
 * A refresh asks `memdir/status` for the directories and `memory/list` for each; the result is
 * cached until something changes. Changes are noticed through the server itself: it republishes
 * diagnostics for a directory's files whenever any of them changes (in or outside the editor), so
 * a debounced refresh on diagnostics changes keeps the view in step without a watcher of our own
 * on directories that may lie outside the workspace.
 */
import * as vscode from 'vscode';
import { DIAGNOSTIC_SOURCE, MEMDIR_STATUS, MEMORY_LIST, type MemoryListing, type StatusResult } from '../common/protocol';
import type { MemdirServer } from '../common/server';
import { getDiagnostics, onDidChangeDiagnostics } from '../common/vscodeapi';
import type { DirectoryInput, ProblemCounts } from './memoriesModel';

const REFRESH_DEBOUNCE_MS = 400;

export class MemoryData implements vscode.Disposable {
  private directories: DirectoryInput[] = [];
  private loaded = false;
  private pending: Promise<DirectoryInput[]> | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly changeEmitter = new vscode.EventEmitter<void>();
  private readonly disposables: vscode.Disposable[] = [];

  /** Fires after every refresh (and when diagnostics alone changed). */
  readonly onDidChange = this.changeEmitter.event;

  constructor(
    private readonly server: MemdirServer,
    private readonly log: vscode.LogOutputChannel,
  ) {
    this.disposables.push(
      server.onDidChangeState((state) => {
        if (state === 'running') {
          this.scheduleRefresh(0);
        } else if (state !== 'starting') {
          this.directories = [];
          this.loaded = false;
          this.changeEmitter.fire();
        }
      }),
      onDidChangeDiagnostics((event) => {
        if (this.server.state === 'running' && event.uris.some((uri) => this.isInKnownDirectory(uri))) {
          this.scheduleRefresh(REFRESH_DEBOUNCE_MS);
        }
      }),
      vscode.workspace.onDidCreateFiles(() => {
        this.scheduleRefresh(REFRESH_DEBOUNCE_MS);
      }),
      vscode.workspace.onDidDeleteFiles(() => {
        this.scheduleRefresh(REFRESH_DEBOUNCE_MS);
      }),
      vscode.workspace.onDidRenameFiles(() => {
        this.scheduleRefresh(REFRESH_DEBOUNCE_MS);
      }),
      vscode.workspace.onDidSaveTextDocument((doc) => {
        if (this.isInKnownDirectory(doc.uri)) {
          this.scheduleRefresh(REFRESH_DEBOUNCE_MS);
        }
      }),
    );
  }

  get current(): readonly DirectoryInput[] {
    return this.directories;
  }

  get isLoaded(): boolean {
    return this.loaded;
  }

  /** The directories, fetching them first if needed (starts the server). */
  async get(): Promise<DirectoryInput[]> {
    if (this.loaded) {
      return this.directories;
    }
    return this.refresh();
  }

  /** The memory dir that holds `uri`, if the server knows one. */
  directoryOf(uri: vscode.Uri): DirectoryInput | undefined {
    const path = uri.fsPath;
    return this.directories
      .filter((d) => path === d.path || path.startsWith(d.path.endsWith('/') ? d.path : `${d.path}/`))
      .sort((a, b) => b.path.length - a.path.length)[0];
  }

  refresh(): Promise<DirectoryInput[]> {
    this.pending ??= this.fetch().finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  /** Problem counts of the server's diagnostics on one file. */
  problemsFor(filePath: string): ProblemCounts {
    const counts: ProblemCounts = { errors: 0, warnings: 0, others: 0, messages: [] };
    for (const d of getDiagnostics(vscode.Uri.file(filePath))) {
      if (d.source !== DIAGNOSTIC_SOURCE) {
        continue;
      }
      if (d.severity === vscode.DiagnosticSeverity.Error) {
        counts.errors++;
      } else if (d.severity === vscode.DiagnosticSeverity.Warning) {
        counts.warnings++;
      } else {
        counts.others++;
      }
      const code = typeof d.code === 'object' ? d.code.value : d.code;
      counts.messages.push(`${code !== undefined ? `${String(code)}: ` : ''}${d.message} (line ${d.range.start.line + 1})`);
    }
    return counts;
  }

  dispose(): void {
    if (this.timer) {
      clearTimeout(this.timer);
    }
    this.changeEmitter.dispose();
    for (const d of this.disposables) {
      d.dispose();
    }
  }

  private isInKnownDirectory(uri: vscode.Uri): boolean {
    return uri.scheme === 'file' && (this.directoryOf(uri) !== undefined || !this.loaded);
  }

  private scheduleRefresh(delay: number): void {
    if (this.timer) {
      clearTimeout(this.timer);
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.refresh();
    }, delay);
  }

  private async fetch(): Promise<DirectoryInput[]> {
    try {
      const status = await this.server.sendRequest<StatusResult>(MEMDIR_STATUS, {});
      const directories = await Promise.all(
        (status.directories ?? []).map(async (dir): Promise<DirectoryInput> => {
          const base = {
            path: dir.path,
            uri: dir.uri,
            origins: dir.origins ?? [],
            writable: dir.writable ?? true,
            readOnlyReason: dir.readOnlyReason ?? null,
          };
          try {
            const list = await this.server.sendRequest<MemoryListing>(MEMORY_LIST, { directory: dir.uri });
            return { ...base, list };
          } catch (error) {
            this.log.warn(`${MEMORY_LIST} ${dir.path}: ${String(error)}`);
            return { ...base, error: String(error) };
          }
        }),
      );
      this.directories = directories;
      this.loaded = true;
    } catch (error) {
      this.log.warn(`${MEMDIR_STATUS}: ${String(error)}`);
      this.directories = [];
      this.loaded = false;
    }
    this.changeEmitter.fire();
    return this.directories;
  }
}
