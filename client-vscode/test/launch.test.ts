import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  bundleIn,
  classifyProbe,
  compareVersions,
  describePlan,
  executablePlan,
  findOnPath,
  mcpOffer,
  mcpServerLaunches,
  parseProbeReport,
  planLaunch,
  type ProbeReport,
  scriptInterpreter,
  shouldSearchPath,
  siblingCli,
} from '../src/common/launch';
import type { Interpreter, ProcessResult } from '../src/common/python';
import type { LaunchSettings } from '../src/common/settings';

const bundle = bundleIn('/ext');
const TOOL = '/ext/bundled/tool';
const settings = (over: Partial<LaunchSettings> = {}): LaunchSettings => ({
  python: '',
  args: [],
  importStrategy: 'useBundled',
  path: '',
  ...over,
});
const py: Interpreter = { python: '/usr/bin/python3', source: 'default' };
const venv: Interpreter = { python: '/venv/bin/python', source: 'setting' };
const json = (report: ProbeReport): ProcessResult => ({ code: 0, stdout: `${JSON.stringify(report)}\n`, stderr: '' });
const fixOf = (result: ReturnType<typeof classifyProbe>): string => (result.ok ? '' : `${result.message} ${result.fix}`);

describe('planLaunch', () => {
  it('runs the bundled server by default, with the bundled libs through its launcher', () => {
    const plan = planLaunch(settings({ args: ['-v'] }), py, bundle);
    expect(plan).toEqual({
      mode: 'bundled',
      interpreter: py,
      server: { command: '/usr/bin/python3', args: [`${TOOL}/memdir_lsp_bundled.py`, '-v'] },
      probe: { command: '/usr/bin/python3', args: [`${TOOL}/probe.py`, '--bundled'] },
      cli: { command: '/usr/bin/python3', args: [`${TOOL}/memdir_bundled.py`] },
    });
    expect(describePlan(plan)).toBe(`memdir-lsp bundled with the extension (Python from default): /usr/bin/python3 ${TOOL}/memdir_lsp_bundled.py -v`);
  });

  it('fromEnvironment runs the installed modules, never one from the working directory (-P)', () => {
    const plan = planLaunch(settings({ importStrategy: 'fromEnvironment' }), venv, bundle);
    expect(plan.mode).toBe('environment');
    expect(plan.server).toEqual({ command: '/venv/bin/python', args: ['-P', '-m', 'memdir_lsp'] });
    expect(plan.probe).toEqual({ command: '/venv/bin/python', args: [`${TOOL}/probe.py`] });
    expect(plan.cli).toEqual({ command: '/venv/bin/python', args: ['-P', '-m', 'memdir'] });
  });

  it('an executable in memdir.server.path wins over both strategies; its memdir is the one beside it', () => {
    for (const importStrategy of ['useBundled', 'fromEnvironment'] as const) {
      const plan = planLaunch(settings({ importStrategy, path: '/home/u/.local/bin/memdir-lsp', args: ['-v'] }), venv, bundle);
      expect(plan).toEqual({
        mode: 'path',
        pathSource: 'setting',
        server: { command: '/home/u/.local/bin/memdir-lsp', args: ['-v'] },
        probe: { command: '/home/u/.local/bin/memdir-lsp', args: ['--version'] },
        cli: { command: '/home/u/.local/bin/memdir', args: [] },
      });
    }
    expect(siblingCli('C:\\Users\\u\\.local\\bin\\memdir-lsp.exe', 'win32')).toBe('C:\\Users\\u\\.local\\bin\\memdir.exe');
  });
});

describe('classifyProbe: the bundled server', () => {
  const plan = planLaunch(settings(), py, bundle);

  it('accepts a Python 3.11+ that imports the bundle, and keeps the report for MCP', () => {
    const report = { python: '3.12.1', memdir: '0.1.0', mcpMissing: 'mcp' };
    expect(classifyProbe(plan, json(report))).toEqual({ ok: true, version: '0.1.0', report });
  });

  it('says which Python to get when there is none', () => {
    const result = classifyProbe(plan, { code: null, stdout: '', stderr: '', error: 'ENOENT' });
    expect(result).toMatchObject({ ok: false, problem: 'no-program' });
    expect(fixOf(result)).toContain('"/usr/bin/python3" was not found; memdir-lsp needs Python 3.11 or newer');
    expect(fixOf(result)).toContain('set "memdir.server.python"');
  });

  it('names the version of a Python that is too old, from the probe or from its SyntaxError', () => {
    const reported = classifyProbe(plan, json({ python: '3.9.18', error: 'memdir needs Python 3.11 or newer' }));
    expect(reported).toMatchObject({ ok: false, problem: 'python-too-old' });
    expect(fixOf(reported)).toContain('memdir needs Python 3.11 or newer; /usr/bin/python3 is Python 3.9.18.');
    const ancient = classifyProbe(plan, { code: 1, stdout: '', stderr: '  File "probe.py", line 3\nSyntaxError: invalid syntax\n' });
    expect(ancient).toMatchObject({ ok: false, problem: 'python-too-old' });
  });

  it('a bundle that does not import is the extension broken, not something to pip install', () => {
    const result = classifyProbe(plan, json({ python: '3.11.7', missing: 'pygls', error: "ModuleNotFoundError: No module named 'pygls'" }));
    expect(result).toMatchObject({ ok: false, problem: 'broken' });
    expect(fixOf(result)).toContain('Reinstall the extension');
    expect(fixOf(result)).not.toMatch(/pip install/);
  });
});

describe('classifyProbe: memdir from the environment', () => {
  const plan = planLaunch(settings({ importStrategy: 'fromEnvironment' }), venv, bundle);

  it('points at the install guide and the bundled server, never at a registry', () => {
    const result = classifyProbe(plan, json({ python: '3.11.7', missing: 'memdir', error: "No module named 'memdir'" }));
    expect(result).toMatchObject({ ok: false, problem: 'missing' });
    const text = fixOf(result);
    expect(text).toContain('memdir is not installed for /venv/bin/python');
    expect(text).toContain('docs/install.md');
    expect(text).toContain('"memdir.importStrategy" to "useBundled"');
    expect(text).not.toMatch(/pip install/);
    expect(shouldSearchPath(plan, result)).toBe(true);
  });

  it('flags a memdir older than the extension needs', () => {
    const result = classifyProbe(plan, json({ python: '3.11.7', memdir: '0.0.3', mcpMissing: null }), '0.1.0');
    expect(result).toMatchObject({ ok: false, problem: 'too-old' });
    expect(fixOf(result)).toContain('memdir-lsp 0.0.3 (the environment of /venv/bin/python) is too old');
    expect(shouldSearchPath(plan, result)).toBe(false);
  });

  it('reports a broken install with its import error', () => {
    const result = classifyProbe(plan, json({ python: '3.11.7', missing: 'lsprotocol', error: "No module named 'lsprotocol'" }));
    expect(result).toMatchObject({ ok: false, problem: 'broken' });
    expect(fixOf(result)).toContain("memdir does not import with /venv/bin/python: No module named 'lsprotocol'");
  });
});

describe('classifyProbe: an executable', () => {
  const plan = executablePlan('/home/u/.local/bin/memdir-lsp', [], 'setting');

  it('reads `memdir-lsp --version`', () => {
    expect(classifyProbe(plan, { code: 0, stdout: 'memdir-lsp 0.2.1\n', stderr: '' })).toEqual({ ok: true, version: '0.2.1' });
    expect(classifyProbe(plan, { code: 0, stdout: 'memdir-lsp 0.0.3\n', stderr: '' }, '0.1.0')).toMatchObject({ problem: 'too-old' });
  });

  it('a missing or failing executable: fix or clear the setting', () => {
    const missing = classifyProbe(plan, { code: null, stdout: '', stderr: '', error: 'ENOENT' });
    expect(fixOf(missing)).toContain('The memdir-lsp executable "/home/u/.local/bin/memdir-lsp" was not found');
    expect(fixOf(missing)).toContain('clear it to use the server bundled with the extension');
    const failing = classifyProbe(plan, { code: 1, stdout: '', stderr: 'Traceback\nImportError: boom\n' });
    expect(failing).toMatchObject({ ok: false, problem: 'broken' });
    expect(fixOf(failing)).toContain('"memdir.server.path") failed: ImportError: boom');
    expect(shouldSearchPath(plan, failing)).toBe(false);
  });
});

describe('findOnPath', () => {
  it('takes the first executable match in PATH order', () => {
    const exists = new Set(['/b/memdir-lsp', '/c/memdir-lsp']);
    expect(findOnPath('memdir-lsp', '/a::/b:/c', (f) => exists.has(f), 'linux')).toBe('/b/memdir-lsp');
    expect(findOnPath('memdir-lsp', undefined, () => true, 'linux')).toBeUndefined();
  });

  it('tries PATHEXT on Windows', () => {
    const found = findOnPath('memdir-lsp', 'C:\\py\\Scripts;C:\\bin', (f) => f === 'C:\\bin\\memdir-lsp.EXE', 'win32', '.COM;.EXE');
    expect(found).toBe('C:\\bin\\memdir-lsp.EXE');
  });
});

describe('scriptInterpreter', () => {
  it('reads the Python of a pipx or uv tool console script', () => {
    expect(scriptInterpreter('#!/home/u/.local/share/pipx/venvs/memdir/bin/python\n# -*- coding: utf-8 -*-\nimport re\n')).toBe(
      '/home/u/.local/share/pipx/venvs/memdir/bin/python',
    );
    expect(scriptInterpreter("#!/bin/sh\n'''exec' '/home/my dir/venv/bin/python3' \"$0\" \"$@\"\n' '''\n")).toBe('/home/my dir/venv/bin/python3');
  });

  it('gives nothing for other programs', () => {
    expect(scriptInterpreter('#!/bin/bash\nexec foo\n')).toBeUndefined();
    expect(scriptInterpreter('\u007fELF\u0002\u0001')).toBeUndefined();
  });
});

describe('mcpOffer', () => {
  const bundled = planLaunch(settings(), py, bundle);
  const environment = planLaunch(settings({ importStrategy: 'fromEnvironment' }), venv, bundle);

  it('offers memdir mcp where the [mcp] extra imports, with the server\'s own command line', () => {
    expect(mcpOffer(bundled, { python: '3.11.7', memdir: '0.1.0', mcpMissing: null })).toEqual({ ok: true, cli: bundled.cli });
    expect(mcpOffer(environment, { python: '3.11.7', memdir: '0.1.0', mcpMissing: null })).toEqual({ ok: true, cli: environment.cli });
  });

  it('says how to get it otherwise', () => {
    const offer = mcpOffer(bundled, { python: '3.11.7', memdir: '0.1.0', mcpMissing: 'mcp' });
    expect(offer.ok).toBe(false);
    const reason = offer.ok ? '' : offer.reason;
    expect(reason).toContain('/usr/bin/python3 cannot import mcp; the MCP SDK is not bundled with the extension');
    expect(reason).toContain('[mcp] extra');
    expect(reason).toContain('docs/install.md');
    const path = mcpOffer(executablePlan('/x/memdir-lsp', [], 'PATH'), undefined);
    expect(path.ok ? '' : path.reason).toContain('could not be checked');
  });

  it('one definition per directory, the command line of the offer', () => {
    const cli = { command: '/usr/bin/python3', args: [`${TOOL}/memdir_bundled.py`] };
    expect(mcpServerLaunches(cli, ['/w/memory', '/home/u/.claude/projects/-w/memory', '/w/memory'])).toEqual([
      { label: 'memdir: /w/memory', command: '/usr/bin/python3', args: [`${TOOL}/memdir_bundled.py`, 'mcp', '--dir', '/w/memory'] },
      {
        label: 'memdir: /home/u/.claude/projects/-w/memory',
        command: '/usr/bin/python3',
        args: [`${TOOL}/memdir_bundled.py`, 'mcp', '--dir', '/home/u/.claude/projects/-w/memory'],
      },
    ]);
    expect(mcpServerLaunches({ command: '/venv/bin/python', args: ['-P', '-m', 'memdir'] }, ['/w'])[0]?.args).toEqual([
      '-P',
      '-m',
      'memdir',
      'mcp',
      '--dir',
      '/w',
    ]);
  });
});

describe('compareVersions', () => {
  it('compares numerically, not as text', () => {
    expect(compareVersions('0.10.0', '0.9.3')).toBeGreaterThan(0);
    expect(compareVersions('1.0', '1.0.0')).toBe(0);
    expect(compareVersions('0.1.0rc1', '0.1.0')).toBe(0);
    expect(compareVersions('3.9.18', '3.11')).toBeLessThan(0);
  });
});

describe('parseProbeReport', () => {
  it('reads the last line and refuses anything else', () => {
    expect(parseProbeReport('warning\n{"python": "3.11.7", "memdir": "0.1.0"}\n')).toEqual({ python: '3.11.7', memdir: '0.1.0' });
    expect(parseProbeReport('memdir-lsp 0.1.0')).toBeUndefined();
    expect(parseProbeReport('')).toBeUndefined();
  });
});

// The real probe script, with the Python that runs the tests when there is one: the report's shape
// is what classifyProbe reads.
describe('bundled/tool/probe.py', () => {
  const python = process.env.MEMDIR_TEST_PYTHON ?? join(__dirname, '..', '..', '.venv', 'bin', 'python');
  const probeScript = join(__dirname, '..', 'bundled', 'tool', 'probe.py');
  let stdout = '';
  try {
    stdout = execFileSync(python, [probeScript], { encoding: 'utf8', timeout: 20_000 });
  } catch {
    stdout = '';
  }

  it.skipIf(!stdout)('says so when the extension has no bundled libraries (a checkout before bundling)', () => {
    const root = mkdtempSync(join(tmpdir(), 'memdir-ext-'));
    try {
      cpSync(join(__dirname, '..', 'bundled', 'tool'), join(root, 'bundled', 'tool'), { recursive: true });
      const copied = bundleIn(root);
      const out = execFileSync(python, [copied.probeScript, '--bundled'], { encoding: 'utf8', timeout: 20_000 });
      const plan = planLaunch(settings(), { python, source: 'setting' }, copied);
      const result = classifyProbe(plan, { code: 0, stdout: out, stderr: '' });
      expect(result).toMatchObject({ ok: false, problem: 'broken' });
      expect(fixOf(result)).toContain("the extension's bundled libraries are missing");
      expect(fixOf(result)).toContain('Reinstall the extension');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it.skipIf(!stdout)('reports the Python version and memdir from the environment', () => {
    const report = parseProbeReport(stdout);
    expect(report?.python).toMatch(/^3\.\d+\.\d+$/);
    expect(report?.bundled).toBe(false);
    const plan = planLaunch(settings({ importStrategy: 'fromEnvironment' }), { python, source: 'setting' }, bundle);
    expect(classifyProbe(plan, { code: 0, stdout, stderr: '' }).ok).toBe(report?.memdir !== undefined);
  });
});

// A console script as pip, pipx and uv tool write it: the repository's .venv has one.
describe('an installed memdir-lsp executable', () => {
  const executable = join(__dirname, '..', '..', '.venv', 'bin', 'memdir-lsp');
  const present = existsSync(executable);

  it.skipIf(!present)('answers --version, names its Python, and has memdir beside it', () => {
    const plan = executablePlan(executable, [], 'setting');
    const stdout = execFileSync(plan.probe.command, plan.probe.args, { encoding: 'utf8', timeout: 20_000 });
    expect(classifyProbe(plan, { code: 0, stdout, stderr: '' })).toMatchObject({ ok: true });
    const python = scriptInterpreter(readFileSync(executable, 'utf8').slice(0, 1024));
    expect(python && existsSync(python)).toBe(true);
    expect(existsSync(plan.cli.command)).toBe(true);
  });
});

