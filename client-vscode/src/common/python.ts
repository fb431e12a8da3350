/**
 * Which Python runs memdir-lsp (launch.ts decides what it runs), and running a program.
 *
 * Order, as in the vscode-python-tools-extension-template: the `memdir.server.python` setting,
 * else the Python extension's active environment for the workspace (when that extension is
 * installed), else `python3` on PATH.
 */
import { execFile } from 'node:child_process';
import type { Uri } from 'vscode';
import { getExtension } from './vscodeapi';

export const DEFAULT_PYTHON = 'python3';
export const PYTHON_EXTENSION_ID = 'ms-python.python';

export type InterpreterSource = 'setting' | 'python-extension' | 'default';

export interface Interpreter {
  python: string;
  source: InterpreterSource;
}

/** The part of the Python extension's API we use (its `environments` API, stable since 2023). */
export interface PythonEnvironmentsApi {
  environments: {
    getActiveEnvironmentPath(resource?: Uri): { path: string } | undefined;
    resolveEnvironment(
      environment: { path: string } | string,
    ): Promise<{ executable: { uri?: { fsPath: string } } } | undefined>;
    onDidChangeActiveEnvironmentPath(listener: () => unknown): { dispose(): unknown };
  };
}

/** The Python extension's API, activated, or undefined when it is not installed or fails. */
export async function getPythonApi(): Promise<PythonEnvironmentsApi | undefined> {
  const extension = getExtension<PythonEnvironmentsApi>(PYTHON_EXTENSION_ID);
  if (!extension) {
    return undefined;
  }
  try {
    const api = extension.isActive ? extension.exports : await extension.activate();
    return api?.environments ? api : undefined;
  } catch {
    return undefined;
  }
}

export async function interpreterFromPythonApi(
  api: PythonEnvironmentsApi | undefined,
  resource?: Uri,
): Promise<string | undefined> {
  if (!api) {
    return undefined;
  }
  try {
    const active = api.environments.getActiveEnvironmentPath(resource);
    if (!active) {
      return undefined;
    }
    const resolved = await api.environments.resolveEnvironment(active);
    return resolved?.executable.uri?.fsPath;
  } catch {
    return undefined;
  }
}

export async function resolveInterpreter(
  configured: string,
  fromPythonExtension: () => Promise<string | undefined>,
): Promise<Interpreter> {
  if (configured) {
    return { python: configured, source: 'setting' };
  }
  const active = await fromPythonExtension();
  if (active) {
    return { python: active, source: 'python-extension' };
  }
  return { python: DEFAULT_PYTHON, source: 'default' };
}

export interface ProcessResult {
  /** Exit code; null when the process could not start or was killed. */
  code: number | null;
  stdout: string;
  stderr: string;
  /** Spawn error code such as ENOENT (no such interpreter). */
  error?: string;
}

/** Run a program with a timeout, never rejecting: failures come back in the result. */
export function runProcess(
  command: string,
  args: readonly string[],
  options: { cwd?: string; timeoutMs?: number } = {},
): Promise<ProcessResult> {
  return new Promise((resolve) => {
    execFile(
      command,
      [...args],
      { cwd: options.cwd, timeout: options.timeoutMs ?? 15_000, maxBuffer: 4 * 1024 * 1024, windowsHide: true },
      (error, stdout, stderr) => {
        const spawnError = error as (NodeJS.ErrnoException & { code?: string | number }) | null;
        const codeValue = spawnError?.code;
        resolve({
          code: spawnError ? (typeof codeValue === 'number' ? codeValue : null) : 0,
          stdout,
          stderr,
          ...(typeof codeValue === 'string' ? { error: codeValue } : {}),
        });
      },
    );
  });
}
