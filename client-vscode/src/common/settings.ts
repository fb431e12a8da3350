/**
 * The extension's settings: which keys go to the server and which stay in the client.
 *
 * The `memdir` section holds two kinds of keys. `server.*` and `trace.*` configure the client (how
 * to start memdir-lsp); the rest mirror the server's keys, which are the keys of `memdir.toml`. The
 * server overlays what the editor sends on each directory's own `memdir.toml`, treating the
 * editor's values as the most specific choice. So the client must send only the values a user
 * actually set: sending VS Code's defaults would silently override every `memdir.toml`.
 */
import type { ConfigurationScope } from 'vscode';
import { CONFIG_SECTION } from './protocol';
import { getConfiguration, isWorkspaceTrusted } from './vscodeapi';

/** Keys the server understands (memdir.toml's keys in camelCase, plus `directories`). */
export const SERVER_SETTING_KEYS = [
  'directories',
  'indexLineLimit',
  'severity',
  'select',
  'ignore',
  'recallMode',
  'selector',
  'model',
  'trigger',
  'target',
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

export interface LaunchSettings {
  /** Interpreter from the setting; empty when unset. */
  python: string;
  args: string[];
}

/**
 * `server.python` and `server.args` decide which program runs. In an untrusted workspace only
 * the user's own (global) values count: a cloned repo must not choose the executable.
 */
export interface ConfigurationReader {
  get(key: string): unknown;
  inspect(key: string): { globalValue?: unknown } | undefined;
}

export function launchSettingsFrom(config: ConfigurationReader, trusted: boolean): LaunchSettings {
  const read = (key: string): unknown => (trusted ? config.get(key) : config.inspect(key)?.globalValue);
  const python = read('server.python');
  const args = read('server.args');
  return {
    python: typeof python === 'string' ? python.trim() : '',
    args: Array.isArray(args) ? args.filter((a): a is string => typeof a === 'string') : [],
  };
}

export function getLaunchSettings(): LaunchSettings {
  return launchSettingsFrom(getConfiguration(CONFIG_SECTION), isWorkspaceTrusted());
}
