/**
 * The recall preview panel: type a question, see what the agent would get on path B.
 *
 * It runs the same flow an agent chat panel would: `memory/prefetch` answers at once with
 * `{id, triggered}`, and the selection arrives later as the `memory/relevantMemories`
 * notification with that id. The manifest (`memory/manifest`) is fetched alongside so the user
 * sees what the selector chose from, and the server explains each candidate: why it was or was
 * not selected and which words of the question its description lacks. Each panel is one agent session (its own `sessionId`): a
 * file surfaced once is not surfaced again until "Reset session" sends `memory/compacted`.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import * as os from 'node:os';
import * as vscode from 'vscode';
import {
  MEMORY_COMPACTED,
  MEMORY_MANIFEST,
  MEMORY_PREFETCH,
  type ManifestView,
  type PrefetchParams,
  type PrefetchStarted,
  type RelevantMemories,
} from '../common/protocol';
import type { MemdirServer } from '../common/server';
import { registerCommand, showInformationMessage } from '../common/vscodeapi';
import { directoryLabel } from './memoriesModel';
import type { MemoryData } from './memoryData';
import { makeNonce, type RecallView, renderResult, renderShell } from './recallHtml';

/** How long to wait for the selection; the agent's own selector call times out well before. */
const RELEVANT_TIMEOUT_MS = 60_000;

type WebviewMessage = { type: 'ask'; query: string; directory?: string } | { type: 'reset'; directory?: string };

function isWebviewMessage(value: unknown): value is WebviewMessage {
  const type = (value as { type?: unknown } | null)?.type;
  return type === 'reset' || (type === 'ask' && typeof (value as { query?: unknown }).query === 'string');
}

/**
 * Waits for `memory/relevantMemories` by id. Notifications that arrive before anyone waits are
 * kept briefly, since a fast server may answer the prefetch and notify in one burst.
 */
export class RelevantMemoriesWaiter {
  private readonly early = new Map<string, RelevantMemories>();
  private readonly waiting = new Map<string, (params: RelevantMemories) => void>();

  accept(params: RelevantMemories): void {
    const key = params.id;
    const resolve = this.waiting.get(key);
    if (resolve) {
      this.waiting.delete(key);
      resolve(params);
    } else {
      this.early.set(key, params);
      if (this.early.size > 20) {
        const oldest = this.early.keys().next().value;
        if (oldest !== undefined) {
          this.early.delete(oldest);
        }
      }
    }
  }

  wait(id: string | number, timeoutMs: number): Promise<RelevantMemories> {
    const key = String(id);
    const ready = this.early.get(key);
    if (ready) {
      this.early.delete(key);
      return Promise.resolve(ready);
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(key);
        reject(new Error(`no memory/relevantMemories for prefetch ${key} within ${timeoutMs / 1000} s`));
      }, timeoutMs);
      this.waiting.set(key, (params) => {
        clearTimeout(timer);
        resolve(params);
      });
    });
  }
}

/** The files the preview asks the server to explain: every candidate of the manifest. */
export function explainPaths(manifest: ManifestView | undefined): string[] {
  return manifest?.candidates?.map((c) => c.path) ?? [];
}

class RecallPreviewPanel {
  private readonly sessionId = `vscode-recall-preview-${randomUUID()}`;
  private readonly waiter = new RelevantMemoriesWaiter();
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    readonly panel: vscode.WebviewPanel,
    private readonly server: MemdirServer,
    private readonly data: MemoryData,
    onDispose: () => void,
  ) {
    this.disposables.push(
      server.onRelevantMemories((params) => {
        if (params.sessionId === this.sessionId) {
          this.waiter.accept(params);
        }
      }),
      panel.webview.onDidReceiveMessage((message: unknown) => {
        if (isWebviewMessage(message)) {
          void this.handle(message);
        }
      }),
      panel.onDidDispose(() => {
        for (const d of this.disposables.splice(0)) {
          d.dispose();
        }
        onDispose();
      }),
    );
  }

  async load(): Promise<void> {
    const directories = await this.data.get().catch(() => []);
    const home = os.homedir();
    this.panel.webview.html = renderShell({
      nonce: makeNonce((n) => randomBytes(n)),
      cspSource: this.panel.webview.cspSource,
      sessionId: this.sessionId,
      directories: directories.map((d) => ({ uri: d.uri, label: directoryLabel(d.path, home).label })),
    });
  }

  private async render(view: RecallView): Promise<void> {
    await this.panel.webview.postMessage({ type: 'render', html: renderResult(view) });
  }

  private async handle(message: WebviewMessage): Promise<void> {
    const directory = message.directory || undefined;
    if (message.type === 'reset') {
      await this.server.sendNotification(MEMORY_COMPACTED, { sessionId: this.sessionId, ...(directory ? { directory } : {}) });
      await this.panel.webview.postMessage({
        type: 'render',
        html: '<p class="muted" data-testid="reset-done">Session reset: memories can surface again.</p>',
      });
      return;
    }
    const view: RecallView = { query: message.query, pending: true, ...(directory ? { directory } : {}) };
    await this.render(view);
    try {
      const dirParam = directory ? { directory } : {};
      // The manifest first: its candidates are the files the server explains (why each was or
      // was not selected), so the preview can answer "why not this one?" for any of them.
      const fetchedManifest = await this.server
        .sendRequest<ManifestView>(MEMORY_MANIFEST, dirParam)
        .catch(() => undefined);
      if (fetchedManifest) {
        view.manifest = fetchedManifest;
      }
      const params: PrefetchParams = { query: message.query, sessionId: this.sessionId, ...dirParam, explain: explainPaths(fetchedManifest) };
      const started = await this.server.sendRequest<PrefetchStarted>(MEMORY_PREFETCH, params);
      view.triggered = started.triggered;
      view.reason = started.reason ?? null;
      if (started.triggered) {
        await this.render(view);
        view.relevant = await this.waiter.wait(started.id, RELEVANT_TIMEOUT_MS);
        if (view.relevant.reason && !view.reason) {
          view.reason = view.relevant.reason;
        }
      }
      view.pending = false;
    } catch (error) {
      view.pending = false;
      view.error = error instanceof Error ? error.message : String(error);
    }
    await this.render(view);
  }
}

export function registerRecallPreview(server: MemdirServer, data: MemoryData): vscode.Disposable[] {
  let current: RecallPreviewPanel | undefined;
  return [
    registerCommand('memdir.recallPreview', async () => {
      if (current) {
        current.panel.reveal();
        return;
      }
      await server.start();
      if (server.state !== 'running') {
        void showInformationMessage('The recall preview needs the memdir language server; see the memdir output channel.');
        return;
      }
      const panel = vscode.window.createWebviewPanel('memdir.recallPreview', 'Recall Preview', vscode.ViewColumn.Active, {
        enableScripts: true,
        // Results stay when the user looks at a memory and comes back.
        retainContextWhenHidden: true,
        localResourceRoots: [],
      });
      const preview = new RecallPreviewPanel(panel, server, data, () => {
        current = undefined;
      });
      current = preview;
      await preview.load();
    }),
    new vscode.Disposable(() => {
      current?.panel.dispose();
    }),
  ];
}
