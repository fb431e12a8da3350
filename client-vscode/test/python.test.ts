import { describe, expect, it } from 'vitest';
import { classifyProbe, compareVersions, resolveInterpreter, runProcess } from '../src/common/python';

describe('resolveInterpreter', () => {
  it('takes the setting first', async () => {
    const fromExtension = async () => '/venv/bin/python';
    expect(await resolveInterpreter('/opt/python', fromExtension)).toEqual({ python: '/opt/python', source: 'setting' });
  });

  it('then the Python extension, then python3', async () => {
    expect(await resolveInterpreter('', async () => '/venv/bin/python')).toEqual({
      python: '/venv/bin/python',
      source: 'python-extension',
    });
    expect(await resolveInterpreter('', async () => undefined)).toEqual({ python: 'python3', source: 'default' });
  });
});

describe('compareVersions', () => {
  it('compares numerically, not as text', () => {
    expect(compareVersions('0.10.0', '0.9.3')).toBeGreaterThan(0);
    expect(compareVersions('1.0', '1.0.0')).toBe(0);
    expect(compareVersions('0.1.0rc1', '0.1.0')).toBe(0);
    expect(compareVersions('0.0.9', '0.1.0')).toBeLessThan(0);
  });
});

describe('classifyProbe', () => {
  it('accepts a current server', () => {
    expect(classifyProbe('py', { code: 0, stdout: 'memdir-lsp 0.2.1\n', stderr: '' })).toEqual({ ok: true, version: '0.2.1' });
  });

  it('says how to install a missing server', () => {
    const result = classifyProbe('/venv/bin/python', {
      code: 1,
      stdout: '',
      stderr: '/venv/bin/python: No module named memdir_lsp\n',
    });
    expect(result).toMatchObject({ ok: false, problem: 'missing' });
    expect(!result.ok && result.fix).toContain('/venv/bin/python -m pip install --upgrade memdir');
  });

  it('reports an interpreter that does not exist', () => {
    expect(classifyProbe('nope', { code: null, stdout: '', stderr: '', error: 'ENOENT' })).toMatchObject({
      ok: false,
      problem: 'no-python',
    });
  });

  it('flags a server older than the minimum', () => {
    const result = classifyProbe('py', { code: 0, stdout: 'memdir-lsp 0.0.3', stderr: '' }, '0.1.0');
    expect(result).toMatchObject({ ok: false, problem: 'too-old' });
    expect(!result.ok && result.message).toContain('0.0.3');
  });

  it('treats a server without --version as too old', () => {
    const result = classifyProbe('py', {
      code: 2,
      stdout: '',
      stderr: 'memdir-lsp: the language server is not implemented yet\n',
    });
    expect(result).toMatchObject({ ok: false, problem: 'too-old' });
    expect(!result.ok && result.message).toContain('not implemented yet');
  });
});

describe('runProcess', () => {
  it('returns output and exit codes without throwing', async () => {
    const ok = await runProcess(process.execPath, ['-e', 'console.log("memdir-lsp 9.9.9")']);
    expect(ok).toMatchObject({ code: 0, stdout: 'memdir-lsp 9.9.9\n' });
    const failed = await runProcess(process.execPath, ['-e', 'process.stderr.write("boom"); process.exit(3)']);
    expect(failed).toMatchObject({ code: 3, stderr: 'boom' });
    const missing = await runProcess('/nonexistent/python', ['--version']);
    expect(missing).toMatchObject({ code: null, error: 'ENOENT' });
  });
});
