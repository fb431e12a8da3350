/**
 * Entry point of the memdir extension: wires the language client, the Memories view, the index
 * budget status bar item, the recall preview, the commands and the agent-mode tools.
 *
 * Activation comes from a workspace that contains a MEMORY.md (or memdir.toml) and from the
 * extension's commands and view. The server is started at once when the workspace has memory
 * files, and otherwise only when a Markdown file from a memory dir is opened or a command needs
 * it: a workspace that merely has the extension installed never pays for a Python process.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as vscode from 'vscode';
import { memoryDirOf, resolveConfiguredDirectories } from './common/memoryDirs';
import { CONFIG_SECTION, INDEX_FILENAME } from './common/protocol';
import { getPythonApi } from './common/python';
import { MemdirServer } from './common/server';
import { getLaunchSettings, LAUNCH_SETTING_SECTIONS } from './common/settings';
import {
  createLogOutputChannel,
  getConfiguration,
  getWorkspaceFolders,
  onDidChangeConfiguration,
  onDidGrantWorkspaceTrust,
  setContext,
} from './common/vscodeapi';
import { registerCommands } from './features/commands';
import { registerLanguageModelTools } from './features/lmTools';
import { MemoryData } from './features/memoryData';
import { registerMemoriesView } from './features/memoriesView';
import { registerRecallPreview } from './features/recallPreview';
import { registerStatusBar } from './features/statusBar';

let server: MemdirServer | undefined;

function isFile(p: string): boolean {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

function configuredDirectories(): string[] {
  const entries = getConfiguration(CONFIG_SECTION).get<string[]>('directories') ?? [];
  return resolveConfiguredDirectories(entries, os.homedir(), getWorkspaceFolders().map((f) => f.uri.fsPath));
}

function isMemoryDocument(document: vscode.TextDocument): boolean {
  return (
    document.uri.scheme === 'file' &&
    document.languageId === 'markdown' &&
    memoryDirOf(document.uri.fsPath, isFile, configuredDirectories()) !== undefined
  );
}

async function workspaceHasMemory(): Promise<boolean> {
  if (configuredDirectories().length) {
    return true;
  }
  if (vscode.workspace.textDocuments.some(isMemoryDocument)) {
    return true;
  }
  const found = await vscode.workspace.findFiles(`**/{${INDEX_FILENAME},memdir.toml}`, '**/node_modules/**', 1);
  return found.length > 0;
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const log = createLogOutputChannel('memdir');
  const memdir = new MemdirServer(log, context.extensionPath);
  server = memdir;
  const data = new MemoryData(memdir, log);
  context.subscriptions.push(
    log,
    data,
    ...registerMemoriesView(data),
    ...registerStatusBar(memdir, data),
    ...registerRecallPreview(memdir, data),
    ...registerCommands(memdir, data),
    ...registerLanguageModelTools(memdir, data, log),
  );
  await setContext('memdir.active', true);

  // A memory file opened later (e.g. from ~/.claude/projects/...) starts the server too.
  context.subscriptions.push(
    vscode.workspace.onDidOpenTextDocument((document) => {
      if (memdir.state === 'stopped' && isMemoryDocument(document)) {
        void memdir.start();
      }
    }),
    // Started untrusted, the server ran no git and wrote nothing: now it may.
    onDidGrantWorkspaceTrust(async () => {
      await memdir.trustGranted();
      await data.refresh();
    }),
    onDidChangeConfiguration(async (event) => {
      // The launch settings decide the process: restart. Other memdir keys reach the running
      // server through workspace/didChangeConfiguration without a restart.
      const launchChanged = LAUNCH_SETTING_SECTIONS.some((key) => event.affectsConfiguration(`${CONFIG_SECTION}.${key}`));
      if (launchChanged && memdir.state !== 'stopped') {
        log.info('memdir launch settings changed: restarting the server');
        await memdir.restart();
        await data.refresh();
      }
    }),
  );

  // Follow the Python extension's interpreter when our own setting does not pin one.
  void getPythonApi().then((api) => {
    if (!api) {
      return;
    }
    context.subscriptions.push(
      api.environments.onDidChangeActiveEnvironmentPath(async () => {
        const launch = getLaunchSettings();
        if (!launch.python && !launch.path && memdir.state !== 'stopped') {
          log.info('Python environment changed: restarting the server');
          await memdir.restart();
          await data.refresh();
        }
      }),
    );
  });

  if (await workspaceHasMemory()) {
    await memdir.start();
  } else {
    log.info('No memory files in this workspace yet: the server starts when one is opened or a memdir command runs.');
  }
}

export async function deactivate(): Promise<void> {
  await server?.dispose();
  server = undefined;
}
