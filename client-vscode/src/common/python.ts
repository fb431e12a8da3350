/**
 * Which Python runs memdir-lsp, and whether that Python has a usable server.
 *
 * Order, as in the vscode-python-tools-extension-template: the `memdir.server.python` setting,
 * else the Python extension's active environment for the workspace (when that extension is
 * installed), else `python3` on PATH. The probe runs `<python> -m memdir_lsp --version` before
 * the language client starts, because a missing module would otherwise surface as an opaque
 * "server crashed 5 times" notification instead of a message that says how to fix it.
 */
import { execFile } from 'node:child_process';
import type { Uri } from 'vscode';
import { MIN_SERVER_VERSION, PYPI_PACKAGE, SERVER_MODULE, SERVER_NAME } from './protocol';
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

export type ProbeResult =
  | { ok: true; version: string }
  | { ok: false; problem: 'no-python' | 'missing' | 'too-old' | 'broken'; message: string; fix: string };

/** Compare dotted versions numerically; a pre-release suffix is ignored. */
export function compareVersions(a: string, b: string): number {
  const parse = (v: string) => v.split(/[.+-]/).slice(0, 3).map((p) => Number.parseInt(p, 10) || 0);
  const [x, y] = [parse(a), parse(b)];
  for (let i = 0; i < 3; i++) {
    const diff = (x[i] ?? 0) - (y[i] ?? 0);
    if (diff !== 0) {
      return diff;
    }
  }
  return 0;
}

/** Turn the result of `<python> -m memdir_lsp --version` into a verdict with a fix. */
export function classifyProbe(python: string, result: ProcessResult, minVersion = MIN_SERVER_VERSION): ProbeResult {
  const install = `${python} -m pip install --upgrade ${PYPI_PACKAGE}`;
  if (result.error === 'ENOENT' || result.error === 'EACCES') {
    return {
      ok: false,
      problem: 'no-python',
      message: `The Python interpreter "${python}" was not found.`,
      fix: 'Set "memdir.server.python" to a Python 3.11+ interpreter that has memdir installed.',
    };
  }
  const output = `${result.stdout}\n${result.stderr}`;
  if (/No module named ['"]?memdir/.test(output)) {
    return {
      ok: false,
      problem: 'missing',
      message: `${SERVER_NAME} is not installed for ${python}.`,
      fix: `Install it: ${install}`,
    };
  }
  const match = new RegExp(`${SERVER_NAME}\\s+v?(\\d+\\.\\d+(?:\\.\\d+)?\\S*)`).exec(output);
  if (result.code === 0 && match?.[1]) {
    const version = match[1];
    if (compareVersions(version, minVersion) < 0) {
      return {
        ok: false,
        problem: 'too-old',
        message: `${SERVER_NAME} ${version} is too old; this extension needs ${minVersion} or newer.`,
        fix: `Upgrade it: ${install}`,
      };
    }
    return { ok: true, version };
  }
  // The module exists but does not understand --version: a release from before the server had a
  // command line, which is too old for this extension by definition.
  const firstLine = output.trim().split('\n').filter(Boolean).pop() ?? `exit code ${String(result.code)}`;
  return {
    ok: false,
    problem: result.code === null ? 'broken' : 'too-old',
    message: `${python} -m ${SERVER_MODULE} --version failed: ${firstLine}`,
    fix: `Upgrade it: ${install}`,
  };
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

export async function probeServer(python: string, cwd?: string): Promise<ProbeResult> {
  const result = await runProcess(python, ['-m', SERVER_MODULE, '--version'], { cwd, timeoutMs: 20_000 });
  return classifyProbe(python, result);
}
