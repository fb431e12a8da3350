import { describe, expect, it } from 'vitest';
import { resolveInterpreter, runProcess } from '../src/common/python';

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
