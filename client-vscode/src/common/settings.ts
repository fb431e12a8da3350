/**
 * The extension's settings: which keys go to the server and which stay in the client.
 *
 * The `memdir` section holds two kinds of keys. `server.*`, `importStrategy` and `trace.*`
 * configure the client (how to start memdir-lsp); the rest mirror the server's keys, which are the keys of `memdir.toml`. The
 * server overlays what the editor sends on each directory's own `memdir.toml`, treating the
 * editor's values as the most specific choice. So the client must send only the values a user
 * actually set: sending VS Code's defaults would silently override every `memdir.toml`.
 */
import * as os from 'node:os';
import type { ConfigurationScope } from 'vscode';
import { CONFIG_SECTION, TRUSTED_OPTION } from './protocol';
import { getConfiguration, isWorkspaceTrusted } from './vscodeapi';

/** Keys the server understands (memdir.toml's keys in camelCase, plus `directories`). */
export const SERVER_SETTING_KEYS = [
  'directories',
  'diagnostics.debounce',
  'indexLineLimit',
  'severity',
  'select',
  'ignore',
  'preview',
  'recallMode',
  'selector',
  'model',
  'openaiBaseUrl',
  'openaiModel',
  'openaiTimeout',
  'trigger',
  'target',
  'anyFormat',
] as const;

export type ServerSettingKey = (typeof SERVER_SETTING_KEYS)[number];

/** What `WorkspaceConfiguration.inspect` returns, reduced to the scopes a user can set. */
export interface InspectedValue {
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
}

/**
 * The server's section built from explicitly set values only, most specific scope first.
 * Keys nobody set are left out, so the server falls back to `memdir.toml`, then its defaults.
 */
export function explicitServerSettings(
  inspect: (key: ServerSettingKey) => InspectedValue | undefined,
): Record<string, unknown> {
  const section: Record<string, unknown> = {};
  for (const key of SERVER_SETTING_KEYS) {
    const found = inspect(key);
    if (!found) {
      continue;
    }
    const value = found.workspaceFolderValue ?? found.workspaceValue ?? found.globalValue;
    if (value !== undefined) {
      section[key] = value;
    }
  }
  return section;
}

/** The `memdir` section for the server, as seen from one resource (folder settings apply). */
export function serverSettingsFor(scope?: ConfigurationScope | null): Record<string, unknown> {
  const config = getConfiguration(CONFIG_SECTION, scope ?? undefined);
  return explicitServerSettings((key) => config.inspect(key));
}

/**
 * The server's `initializationOptions`: its section, and whether VS Code trusts the workspace.
 * Untrusted, the server runs no git and writes nothing (every memory dir is read-only).
 */
export function initializationOptions(section: Record<string, unknown>, trusted: boolean): Record<string, unknown> {
  return { [CONFIG_SECTION]: section, [TRUSTED_OPTION]: trusted };
}

/** `memdir.importStrategy`: the extension's own server, or the memdir of the interpreter's environment. */
export const IMPORT_STRATEGIES = ['useBundled', 'fromEnvironment'] as const;
export type ImportStrategy = (typeof IMPORT_STRATEGIES)[number];

export interface LaunchSettings {
  /** Interpreter from the setting; empty when unset. */
  python: string;
  args: string[];
  importStrategy: ImportStrategy;
  /** A `memdir-lsp` executable from the setting; empty when unset. When set it wins. */
  path: string;
}

/**
 * `server.python`, `server.path`, `importStrategy` and `server.args` decide which program runs.
 * In an untrusted workspace only the user's own (global) values count: a cloned repo must not
 * choose the executable, nor make the extension import code from the workspace's environment.
 */
export interface ConfigurationReader {
  get(key: string): unknown;
  inspect(key: string): { globalValue?: unknown } | undefined;
}

/** A program's path as typed in settings: `~/` is the home folder (spawn does not expand it). */
export function expandHome(value: string, home: string): string {
  return value === '~' || value.startsWith('~/') ? home + value.slice(1) : value;
}

export function launchSettingsFrom(config: ConfigurationReader, trusted: boolean, home = os.homedir()): LaunchSettings {
  const read = (key: string): unknown => (trusted ? config.get(key) : config.inspect(key)?.globalValue);
  const text = (value: unknown): string => (typeof value === 'string' ? expandHome(value.trim(), home) : '');
  const args = read('server.args');
  const strategy = read('importStrategy');
  return {
    python: text(read('server.python')),
    args: Array.isArray(args) ? args.filter((a): a is string => typeof a === 'string') : [],
    importStrategy: strategy === 'fromEnvironment' ? 'fromEnvironment' : 'useBundled',
    path: text(read('server.path')),
  };
}

/** Whether a configuration change concerns how the server is started (then it restarts). */
export const LAUNCH_SETTING_SECTIONS = ['server', 'importStrategy'] as const;

export function getLaunchSettings(): LaunchSettings {
  return launchSettingsFrom(getConfiguration(CONFIG_SECTION), isWorkspaceTrusted());
}

/**
 * What granting trust to the workspace asks of a running server: a restart when the program it
 * runs may change (workspace values of the launch settings count from now on) or when it cannot
 * be told; else `memdir/didGrantWorkspaceTrust`, which lets it run git and write.
 */
export function onTrustGranted(startedWith: LaunchSettings | undefined, now: LaunchSettings, canNotify: boolean): 'restart' | 'notify' {
  if (!canNotify || startedWith === undefined || JSON.stringify(startedWith) !== JSON.stringify(now)) {
    return 'restart';
  }
  return 'notify';
}
