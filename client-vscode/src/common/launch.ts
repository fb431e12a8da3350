/**
 * Which program runs memdir-lsp (and the memdir command line), and what to tell the user when it
 * cannot, as pure functions of the settings and of what a probe printed.
 *
 * Like Microsoft's Python tool extensions (ruff, black, isort), the .vsix carries the server:
 * memdir and its pure-Python dependencies in `bundled/libs`, run by `bundled/tool` launchers that
 * put that folder first on `sys.path` (`memdir.importStrategy` = `useBundled`, the default), so
 * any Python 3.11+ will do. `fromEnvironment` runs the memdir installed in the interpreter's own
 * environment; `memdir.server.path` (a `memdir-lsp` executable, e.g. from pipx or uv tool) wins
 * over both. With `fromEnvironment` and no memdir in that environment, a `memdir-lsp` on PATH is
 * used before giving up.
 *
 * The probe runs before the language client starts, because a missing module would otherwise
 * surface as an opaque "server crashed 5 times" notification instead of a sentence saying what to
 * do. For an interpreter it is `bundled/tool/probe.py`, one JSON line: the Python version, memdir's
 * version or the import error, and whether `memdir mcp` could run there (the [mcp] extra is not
 * bundled). For an executable it is `memdir-lsp --version`.
 */
import * as path from 'node:path';
import { CLI_MODULE, MIN_SERVER_VERSION, SERVER_MODULE, SERVER_NAME } from './protocol';
import type { Interpreter, ProcessResult } from './python';
import type { LaunchSettings } from './settings';

/** Where the install guide is (the extension cannot point at a registry: memdir is on none). */
export const INSTALL_GUIDE = 'docs/install.md in the memdir repository';
export const MIN_PYTHON = '3.11';

/** Where the server comes from: the extension's bundle, the interpreter's environment, or an executable. */
export type LaunchMode = 'bundled' | 'environment' | 'path';

export interface Command {
  command: string;
  args: string[];
}

export interface LaunchPlan {
  mode: LaunchMode;
  /** The interpreter (bundled and environment); for an executable, undefined. */
  interpreter?: Interpreter;
  /** For `path`: the setting or a lookup on PATH. */
  pathSource?: 'setting' | 'PATH';
  /** The server without `--stdio` (vscode-languageclient appends it), with `memdir.server.args`. */
  server: Command;
  /** What runs before the server starts; classifyProbe reads its output. */
  probe: Command;
  /** The memdir command line (`memdir where`, `memdir mcp`). */
  cli: Command;
}

/** The bundle's files under the extension's root. */
export interface Bundle {
  serverScript: string;
  cliScript: string;
  probeScript: string;
}

export function bundleIn(extensionRoot: string): Bundle {
  const tool = path.join(extensionRoot, 'bundled', 'tool');
  return {
    serverScript: path.join(tool, 'memdir_lsp_bundled.py'),
    cliScript: path.join(tool, 'memdir_bundled.py'),
    probeScript: path.join(tool, 'probe.py'),
  };
}

/**
 * The `memdir` executable beside a `memdir-lsp` one: pipx and uv tool install both scripts into
 * one folder.
 */
export function siblingCli(serverExecutable: string, platform: NodeJS.Platform = process.platform): string {
  const p = platform === 'win32' ? path.win32 : path.posix;
  const ext = p.extname(serverExecutable);
  return p.join(p.dirname(serverExecutable), `${CLI_MODULE}${ext.toLowerCase() === '.exe' ? ext : ''}`);
}

/** The plan for a `memdir-lsp` executable (the setting, or one found on PATH). */
export function executablePlan(executable: string, args: readonly string[], source: 'setting' | 'PATH'): LaunchPlan {
  return {
    mode: 'path',
    pathSource: source,
    server: { command: executable, args: [...args] },
    probe: { command: executable, args: ['--version'] },
    cli: { command: siblingCli(executable), args: [] },
  };
}

/** The plan the settings ask for; `interpreter` is ignored when `memdir.server.path` is set. */
export function planLaunch(settings: LaunchSettings, interpreter: Interpreter, bundle: Bundle): LaunchPlan {
  if (settings.path) {
    return executablePlan(settings.path, settings.args, 'setting');
  }
  const python = interpreter.python;
  if (settings.importStrategy === 'fromEnvironment') {
    // -P: `python -m` would otherwise put the working directory (the workspace) first on
    // sys.path, so a folder named memdir_lsp there would run instead of the installed server.
    return {
      mode: 'environment',
      interpreter,
      server: { command: python, args: ['-P', '-m', SERVER_MODULE, ...settings.args] },
      probe: { command: python, args: [bundle.probeScript] },
      cli: { command: python, args: ['-P', '-m', CLI_MODULE] },
    };
  }
  return {
    mode: 'bundled',
    interpreter,
    server: { command: python, args: [bundle.serverScript, ...settings.args] },
    probe: { command: python, args: [bundle.probeScript, '--bundled'] },
    cli: { command: python, args: [bundle.cliScript] },
  };
}

/** A plan in one line for the log. */
export function describePlan(plan: LaunchPlan): string {
  const line = [plan.server.command, ...plan.server.args].join(' ');
  if (plan.mode === 'path') {
    return `${SERVER_NAME} executable from ${plan.pathSource === 'PATH' ? 'PATH' : 'memdir.server.path'}: ${line}`;
  }
  const from = plan.interpreter ? ` (Python from ${plan.interpreter.source})` : '';
  return plan.mode === 'bundled'
    ? `${SERVER_NAME} bundled with the extension${from}: ${line}`
    : `${SERVER_NAME} from the Python environment${from}: ${line}`;
}

/** What `bundled/tool/probe.py` prints. */
export interface ProbeReport {
  python: string;
  executable?: string;
  bundled?: boolean;
  /** memdir's version; absent when it did not import. */
  memdir?: string;
  /** The module an ImportError named (`memdir` when it is not installed). */
  missing?: string;
  error?: string;
  /** The first module of memdir's [mcp] extra that is missing; null: `memdir mcp` can run. */
  mcpMissing?: string | null;
}

export function parseProbeReport(stdout: string): ProbeReport | undefined {
  const line = stdout.trim().split('\n').pop();
  if (!line) {
    return undefined;
  }
  try {
    const value = JSON.parse(line) as Partial<ProbeReport> | null;
    return typeof value?.python === 'string' ? (value as ProbeReport) : undefined;
  } catch {
    return undefined;
  }
}

export type ProbeProblem = 'no-program' | 'python-too-old' | 'missing' | 'too-old' | 'broken';

export type ProbeResult =
  | { ok: true; version: string; report?: ProbeReport }
  | { ok: false; problem: ProbeProblem; message: string; fix: string; report?: ProbeReport };

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

const USE_BUNDLED = 'Or use the server bundled with the extension: set "memdir.importStrategy" to "useBundled" and clear "memdir.server.path".';

function lastLine(result: ProcessResult): string {
  return `${result.stdout}\n${result.stderr}`.trim().split('\n').filter(Boolean).pop() ?? `exit code ${String(result.code)}`;
}

function tooOld(version: string, minVersion: string, plan: LaunchPlan): ProbeResult | undefined {
  if (compareVersions(version, minVersion) >= 0) {
    return undefined;
  }
  const where = plan.mode === 'path' ? `"${plan.server.command}"` : `the environment of ${plan.interpreter?.python ?? 'python'}`;
  return {
    ok: false,
    problem: 'too-old',
    message: `${SERVER_NAME} ${version} (${where}) is too old; this extension needs ${minVersion} or newer.`,
    fix: `Upgrade memdir there (install guide: ${INSTALL_GUIDE}). ${USE_BUNDLED}`,
  };
}

/** The verdict on a probe's output, with a fix that fits how the server was chosen. */
export function classifyProbe(plan: LaunchPlan, result: ProcessResult, minVersion = MIN_SERVER_VERSION): ProbeResult {
  const spawnFailed = result.error === 'ENOENT' || result.error === 'EACCES';
  if (plan.mode === 'path') {
    const program = plan.server.command;
    const setting = plan.pathSource === 'PATH' ? `the ${SERVER_NAME} found on PATH` : '"memdir.server.path"';
    if (spawnFailed) {
      return {
        ok: false,
        problem: 'no-program',
        message: `The ${SERVER_NAME} executable "${program}" was not found or cannot be run.`,
        fix: `Set "memdir.server.path" to a ${SERVER_NAME} executable, or clear it to use the server bundled with the extension.`,
      };
    }
    const match = new RegExp(`${SERVER_NAME}\\s+v?(\\d+\\.\\d+(?:\\.\\d+)?\\S*)`).exec(result.stdout);
    if (result.code === 0 && match?.[1]) {
      return tooOld(match[1], minVersion, plan) ?? { ok: true, version: match[1] };
    }
    return {
      ok: false,
      problem: 'broken',
      message: `"${program} --version" (${setting}) failed: ${lastLine(result)}`,
      fix: `Set "memdir.server.path" to a working ${SERVER_NAME}, or clear it to use the server bundled with the extension.`,
    };
  }

  const python = plan.interpreter?.python ?? plan.probe.command;
  const pickPython =
    plan.interpreter?.source === 'setting'
      ? `Set "memdir.server.python" to a Python ${MIN_PYTHON}+ interpreter.`
      : `Install Python ${MIN_PYTHON} or newer, or set "memdir.server.python" to one (or select one with the Python extension).`;
  if (spawnFailed) {
    return {
      ok: false,
      problem: 'no-program',
      message: `The Python interpreter "${python}" was not found; ${SERVER_NAME} needs Python ${MIN_PYTHON} or newer.`,
      fix: `${pickPython} Or set "memdir.server.path" to a ${SERVER_NAME} executable.`,
    };
  }
  const report = parseProbeReport(result.stdout);
  if (!report) {
    // A Python too old to parse the probe, or no Python at all behind that name.
    const old = /SyntaxError|invalid syntax/.test(result.stderr);
    return {
      ok: false,
      problem: old ? 'python-too-old' : 'broken',
      message: old
        ? `${python} is too old for ${SERVER_NAME}, which needs Python ${MIN_PYTHON} or newer.`
        : `Checking ${python} for ${SERVER_NAME} failed: ${lastLine(result)}`,
      fix: pickPython,
    };
  }
  if (compareVersions(report.python, MIN_PYTHON) < 0) {
    return {
      ok: false,
      problem: 'python-too-old',
      message: `memdir needs Python ${MIN_PYTHON} or newer; ${python} is Python ${report.python}.`,
      fix: pickPython,
      report,
    };
  }
  if (report.memdir === undefined) {
    const error = report.error ?? 'no version reported';
    if (plan.mode === 'bundled') {
      return {
        ok: false,
        problem: 'broken',
        message: `The ${SERVER_NAME} bundled with the extension does not run with ${python}: ${error}`,
        fix: 'Reinstall the extension, or set "memdir.importStrategy" to "fromEnvironment" with memdir installed in that environment.',
        report,
      };
    }
    const notInstalled = report.missing === CLI_MODULE || report.missing === SERVER_MODULE;
    return {
      ok: false,
      problem: notInstalled ? 'missing' : 'broken',
      message: notInstalled
        ? `memdir is not installed for ${python} ("memdir.importStrategy" is "fromEnvironment"), and no ${SERVER_NAME} is on PATH.`
        : `memdir does not import with ${python}: ${error}`,
      fix: `Install memdir into that environment, or with pipx or uv tool (install guide: ${INSTALL_GUIDE}). ${USE_BUNDLED}`,
      report,
    };
  }
  return tooOld(report.memdir, minVersion, plan) ?? { ok: true, version: report.memdir, report };
}

/** Whether the probe's answer says to look for a `memdir-lsp` on PATH (fromEnvironment, no memdir). */
export function shouldSearchPath(plan: LaunchPlan, probe: ProbeResult): boolean {
  return plan.mode === 'environment' && !probe.ok && probe.problem === 'missing';
}

/**
 * The first `name` on PATH that `isExecutable` accepts; on Windows with each PATHEXT extension.
 * Pure: the file system check is passed in.
 */
export function findOnPath(
  name: string,
  pathValue: string | undefined,
  isExecutable: (file: string) => boolean,
  platform: NodeJS.Platform = process.platform,
  pathExt?: string,
): string | undefined {
  const p = platform === 'win32' ? path.win32 : path.posix;
  const exts = platform === 'win32' ? (pathExt ?? '.COM;.EXE;.BAT;.CMD').split(';').filter(Boolean) : [''];
  for (const dir of (pathValue ?? '').split(p.delimiter)) {
    if (!dir) {
      continue;
    }
    for (const ext of exts) {
      const candidate = p.join(dir, name + ext);
      if (isExecutable(candidate)) {
        return candidate;
      }
    }
  }
  return undefined;
}

/**
 * The interpreter a console script runs with, from its first lines: `#!/venv/bin/python`, or
 * pip's `#!/bin/sh` + `'''exec' '/venv/bin/python' "$0" "$@"` for a path with spaces or a
 * long one. Undefined for anything else (a binary launcher, a wrapper of the user's).
 */
export function scriptInterpreter(head: string): string | undefined {
  const lines = head.split('\n', 3);
  const shebang = /^#!\s*(\S+)\s*$/.exec(lines[0] ?? '');
  if (shebang?.[1] && /python[\d.]*$/.test(shebang[1])) {
    return shebang[1];
  }
  const exec = /^'''exec' '([^']+)' "\$0" "\$@"/.exec(lines[1] ?? '');
  return exec?.[1];
}

/** What agent mode gets: `memdir mcp` from the server's command line, or why nothing. */
export type McpOffer = { ok: true; cli: Command } | { ok: false; reason: string };

const MCP_EXTRA_HELP = `install memdir with its [mcp] extra in a Python environment (install guide: ${INSTALL_GUIDE})`;

/** Decide from the probe of the interpreter that would run `memdir mcp`. */
export function mcpOffer(plan: LaunchPlan, report: ProbeReport | undefined): McpOffer {
  if (report?.mcpMissing === null && report.memdir !== undefined) {
    return { ok: true, cli: plan.cli };
  }
  if (plan.mode === 'path') {
    const why = report?.mcpMissing
      ? `the environment of "${plan.server.command}" has no ${report.mcpMissing} module`
      : `the Python environment of "${plan.server.command}" could not be checked for memdir's [mcp] extra`;
    return { ok: false, reason: `memdir mcp is not offered to agent mode: ${why}. To get it, ${MCP_EXTRA_HELP}.` };
  }
  const python = plan.interpreter?.python ?? plan.cli.command;
  const missing = report?.mcpMissing ?? 'mcp';
  const advice =
    plan.mode === 'bundled'
      ? `the MCP SDK is not bundled with the extension; to get it, ${MCP_EXTRA_HELP} and set "memdir.importStrategy" to "fromEnvironment" with that Python (or "memdir.server.path" to its ${SERVER_NAME})`
      : `to get it, install memdir with its [mcp] extra in that environment (install guide: ${INSTALL_GUIDE})`;
  return { ok: false, reason: `memdir mcp is not offered to agent mode: ${python} cannot import ${missing}; ${advice}.` };
}

/** `memdir mcp --dir D` for each directory; the path is the label (unique, and says which). */
export function mcpServerLaunches(cli: Command, directories: readonly string[]): { label: string; command: string; args: string[] }[] {
  return [...new Set(directories)].map((dir) => ({
    label: `memdir: ${dir}`,
    command: cli.command,
    args: [...cli.args, 'mcp', '--dir', dir],
  }));
}
