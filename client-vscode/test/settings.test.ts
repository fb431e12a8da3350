import { describe, expect, it } from 'vitest';
import {
  explicitServerSettings,
  initializationOptions,
  type InspectedValue,
  type LaunchSettings,
  launchSettingsFrom,
  onTrustGranted,
  SERVER_SETTING_KEYS,
} from '../src/common/settings';

describe('explicitServerSettings', () => {
  it('sends only keys a user set, so memdir.toml is not overridden by VS Code defaults', () => {
    const inspected: Record<string, InspectedValue> = {
      indexLineLimit: {}, // default only
      recallMode: { globalValue: 'prefetch' },
    };
    expect(explicitServerSettings((key) => inspected[key])).toEqual({ recallMode: 'prefetch' });
  });

  it('prefers the folder value over the workspace value over the user value', () => {
    const section = explicitServerSettings((key) =>
      key === 'selector'
        ? { globalValue: 'anthropic', workspaceValue: 'auto', workspaceFolderValue: 'lexical' }
        : key === 'model'
          ? { globalValue: 'claude-haiku-4-5', workspaceValue: 'claude-sonnet-5-5' }
          : undefined,
    );
    expect(section).toEqual({ selector: 'lexical', model: 'claude-sonnet-5-5' });
  });

  it('never sends the client-only keys', () => {
    const asked: string[] = [];
    explicitServerSettings((key) => {
      asked.push(key);
      return { globalValue: 1 };
    });
    expect(asked).toEqual([...SERVER_SETTING_KEYS]);
    expect(asked.some((k) => k.startsWith('server') || k.startsWith('trace'))).toBe(false);
  });
});

describe('launchSettingsFrom', () => {
  const config = (values: Record<string, unknown>, global: Record<string, unknown>) => ({
    get: (key: string): unknown => values[key],
    inspect: (key: string) => ({ key, globalValue: global[key] }),
  });

  it('reads the interpreter and the extra arguments', () => {
    const launch = launchSettingsFrom(
      config({ 'server.python': ' /opt/py/bin/python ', 'server.args': ['-v', 3] }, {}),
      true,
    );
    expect(launch).toEqual({ python: '/opt/py/bin/python', args: ['-v'], importStrategy: 'useBundled', path: '' });
  });

  it('ignores workspace values in an untrusted workspace: a cloned repo must not pick the program', () => {
    const launch = launchSettingsFrom(
      config(
        { 'server.python': './evil', 'server.args': ['--x'], 'server.path': './evil-lsp', importStrategy: 'fromEnvironment' },
        { 'server.python': '/usr/bin/python3' },
      ),
      false,
    );
    expect(launch).toEqual({ python: '/usr/bin/python3', args: [], importStrategy: 'useBundled', path: '' });
  });

  it('reads the import strategy and the executable; an unknown strategy is the bundled server', () => {
    expect(
      launchSettingsFrom(config({ importStrategy: 'fromEnvironment', 'server.path': ' ~/.local/bin/memdir-lsp ' }, {}), true, '/home/u'),
    ).toMatchObject({ importStrategy: 'fromEnvironment', path: '/home/u/.local/bin/memdir-lsp' });
    expect(launchSettingsFrom(config({ importStrategy: 'bogus' }, {}), true).importStrategy).toBe('useBundled');
    expect(launchSettingsFrom(config({ importStrategy: 'fromEnvironment' }, { importStrategy: 'fromEnvironment' }), false).importStrategy).toBe(
      'fromEnvironment',
    );
  });
});

describe('workspace trust for the server', () => {
  it('tells the server at start whether the workspace is trusted, beside its section', () => {
    expect(initializationOptions({ indexLineLimit: 80 }, false)).toEqual({ memdir: { indexLineLimit: 80 }, trusted: false });
    expect(initializationOptions({}, true)).toEqual({ memdir: {}, trusted: true });
  });

  const launch: LaunchSettings = { python: '/usr/bin/python3', args: [], importStrategy: 'useBundled', path: '' };

  it('notifies a running server when trust is granted and its program stays the same', () => {
    expect(onTrustGranted(launch, { ...launch }, true)).toBe('notify');
  });

  it('restarts when the workspace now picks another program, or the server cannot be told', () => {
    expect(onTrustGranted(launch, { ...launch, python: './venv/bin/python' }, true)).toBe('restart');
    expect(onTrustGranted(launch, { ...launch, args: ['-v'] }, true)).toBe('restart');
    expect(onTrustGranted(launch, launch, false)).toBe('restart');
    expect(onTrustGranted(undefined, launch, true)).toBe('restart');
  });
});
