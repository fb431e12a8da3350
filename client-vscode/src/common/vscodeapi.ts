/**
 * The thin wrapper over the `vscode` API that the extension's logic calls.
 *
 * Logic modules import these functions instead of reaching into `vscode.window` and
 * `vscode.workspace` directly, so a unit test can replace the whole surface with `vi.mock` and
 * check what the logic asked for, without an extension host. Keep the wrappers one-liners: any
 * decision made here would escape the tests.
 */
import * as vscode from 'vscode';

export function createLogOutputChannel(name: string): vscode.LogOutputChannel {
  return vscode.window.createOutputChannel(name, { log: true });
}

export function getConfiguration(
  section: string,
  scope?: vscode.ConfigurationScope,
): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration(section, scope);
}

export function onDidChangeConfiguration(
  listener: (e: vscode.ConfigurationChangeEvent) => unknown,
): vscode.Disposable {
  return vscode.workspace.onDidChangeConfiguration(listener);
}

export function getWorkspaceFolders(): readonly vscode.WorkspaceFolder[] {
  return vscode.workspace.workspaceFolders ?? [];
}

export function isWorkspaceTrusted(): boolean {
  return vscode.workspace.isTrusted;
}

export function onDidGrantWorkspaceTrust(listener: () => unknown): vscode.Disposable {
  return vscode.workspace.onDidGrantWorkspaceTrust(listener);
}

export function registerCommand(
  command: string,
  callback: (...args: never[]) => unknown,
): vscode.Disposable {
  return vscode.commands.registerCommand(command, callback as (...args: unknown[]) => unknown);
}

export function executeCommand<T = unknown>(command: string, ...rest: unknown[]): Thenable<T> {
  return vscode.commands.executeCommand<T>(command, ...rest);
}

export function setContext(key: string, value: unknown): Thenable<unknown> {
  return vscode.commands.executeCommand('setContext', key, value);
}

export function showErrorMessage<T extends string>(message: string, ...items: T[]): Thenable<T | undefined> {
  return vscode.window.showErrorMessage(message, ...items);
}

export function showWarningMessage<T extends string>(
  message: string,
  options: vscode.MessageOptions,
  ...items: T[]
): Thenable<T | undefined> {
  return vscode.window.showWarningMessage(message, options, ...items);
}

export function showInformationMessage<T extends string>(message: string, ...items: T[]): Thenable<T | undefined> {
  return vscode.window.showInformationMessage(message, ...items);
}

export function showQuickPick<T extends vscode.QuickPickItem>(
  items: readonly T[],
  options: vscode.QuickPickOptions,
): Thenable<T | undefined> {
  return vscode.window.showQuickPick(items, options);
}

export function showInputBox(options: vscode.InputBoxOptions): Thenable<string | undefined> {
  return vscode.window.showInputBox(options);
}

export async function openTextDocument(uri: vscode.Uri): Promise<vscode.TextDocument> {
  return vscode.workspace.openTextDocument(uri);
}

export async function showTextDocument(
  document: vscode.TextDocument | vscode.Uri,
  options?: vscode.TextDocumentShowOptions,
): Promise<vscode.TextEditor> {
  return vscode.window.showTextDocument(document as vscode.TextDocument, options);
}

/** The document VS Code has loaded for `uri` (open in an editor or not), if any. */
export function findTextDocument(uri: vscode.Uri): vscode.TextDocument | undefined {
  return vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
}

export function applyEdit(edit: vscode.WorkspaceEdit): Thenable<boolean> {
  return vscode.workspace.applyEdit(edit);
}

export async function fileExists(uri: vscode.Uri): Promise<boolean> {
  try {
    await vscode.workspace.fs.stat(uri);
    return true;
  } catch {
    return false;
  }
}

export function deleteFile(uri: vscode.Uri, useTrash: boolean): Thenable<void> {
  return vscode.workspace.fs.delete(uri, { recursive: false, useTrash });
}

export function getDiagnostics(uri: vscode.Uri): vscode.Diagnostic[] {
  return vscode.languages.getDiagnostics(uri);
}

export function onDidChangeDiagnostics(
  listener: (e: vscode.DiagnosticChangeEvent) => unknown,
): vscode.Disposable {
  return vscode.languages.onDidChangeDiagnostics(listener);
}

export function getActiveTextEditor(): vscode.TextEditor | undefined {
  return vscode.window.activeTextEditor;
}

export function onDidChangeActiveTextEditor(
  listener: (e: vscode.TextEditor | undefined) => unknown,
): vscode.Disposable {
  return vscode.window.onDidChangeActiveTextEditor(listener);
}

export function getExtension<T>(id: string): vscode.Extension<T> | undefined {
  return vscode.extensions.getExtension<T>(id);
}

export function withProgress<R>(
  title: string,
  task: () => Promise<R>,
): Thenable<R> {
  return vscode.window.withProgress(
    { location: vscode.ProgressLocation.Window, title },
    task,
  );
}
