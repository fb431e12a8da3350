/**
 * Checks that package.json, the TypeScript constants and the server's protocol.py agree, so a
 * renamed command or method fails here instead of silently in the editor.
 */
import { readFileSync, existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as protocol from '../src/common/protocol';
import { IMPORT_STRATEGIES, SERVER_SETTING_KEYS } from '../src/common/settings';
import { parseWhere } from '../src/features/commands';

const root = join(__dirname, '..');
interface Manifest {
  activationEvents: string[];
  main: string;
  engines: { vscode: string };
  contributes: {
    commands: { command: string }[];
    configuration: {
      properties: Record<string, { scope?: string; description?: string; markdownDescription?: string; enum?: string[]; default?: unknown }>;
    };
    menus: Record<string, { command: string }[]>;
    views: Record<string, { id: string }[]>;
  };
  dependencies: Record<string, string>;
  capabilities: { untrustedWorkspaces: { supported: string; description: string; restrictedConfigurations: string[] } };
}
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Manifest;

function sources(dir: string): string {
  return readdirSync(dir, { withFileTypes: true })
    .map((e) => (e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? readFileSync(join(dir, e.name), 'utf8') : ''))
    .join('\n');
}
const src = sources(join(root, 'src'));

describe('package.json', () => {
  it('registers every contributed command in the code', () => {
    for (const { command } of manifest.contributes.commands) {
      expect(src, command).toContain(`'${command}'`);
    }
  });

  it('menus refer to contributed commands only', () => {
    const known = new Set(manifest.contributes.commands.map((c) => c.command));
    for (const entries of Object.values(manifest.contributes.menus)) {
      for (const entry of entries) {
        expect(known.has(entry.command), entry.command).toBe(true);
      }
    }
  });

  it('contributes every server setting with a scope and a description', () => {
    const props = manifest.contributes.configuration.properties;
    for (const key of [...SERVER_SETTING_KEYS, 'server.python', 'server.path', 'importStrategy', 'server.args', 'trace.server']) {
      const prop = props[`memdir.${key}`];
      expect(prop, key).toBeDefined();
      expect(prop?.scope, key).toBeDefined();
      expect(prop?.description ?? prop?.markdownDescription, key).toBeTruthy();
    }
  });

  it('contributes the preview switch off: preview rules run only when a user turns them on', () => {
    const preview = manifest.contributes.configuration.properties['memdir.preview'];
    expect(preview?.default).toBe(false);
    expect(SERVER_SETTING_KEYS).toContain('preview');
  });

  it('the settings that choose the program are restricted in untrusted workspaces; the bundled server is the default', () => {
    expect([...manifest.capabilities.untrustedWorkspaces.restrictedConfigurations].sort()).toEqual(
      ['memdir.importStrategy', 'memdir.server.args', 'memdir.server.path', 'memdir.server.python'],
    );
    const strategy = manifest.contributes.configuration.properties['memdir.importStrategy'];
    expect(strategy?.enum).toEqual([...IMPORT_STRATEGIES]);
    expect(strategy?.default).toBe('useBundled');
  });

  it('says what an untrusted workspace turns off: writes and git', () => {
    const untrusted = manifest.capabilities.untrustedWorkspaces;
    expect(untrusted.supported).toBe('limited');
    expect(untrusted.description).toMatch(/read-only/);
    expect(untrusted.description).toMatch(/runs no git/);
  });

  it('no setting tells the user to pip install memdir (it is on no registry)', () => {
    expect(readFileSync(join(root, 'package.json'), 'utf8')).not.toMatch(/pip install (--upgrade )?memdir/);
    expect(src).not.toMatch(/pip install (--upgrade )?memdir/);
  });

  it('activates on memory workspaces and on Markdown (the server starts only for memory files)', () => {
    expect(manifest.activationEvents).toContain('workspaceContains:**/MEMORY.md');
    // Markdown under a memory dir outside the workspace (~/.claude/projects/...) can only be
    // caught by activating on Markdown; activate() then starts the server for memory files only.
    expect(manifest.activationEvents).toContain('onLanguage:markdown');
  });

  it('targets VS Code 1.101 (language-model tools, MCP server definitions) with vscode-languageclient 11 and bundles to dist/', () => {
    expect(manifest.engines.vscode).toBe('^1.101.0');
    expect(manifest.dependencies['vscode-languageclient']).toMatch(/^\^11\./);
    expect(manifest.main).toBe('./dist/extension.js');
    expect(manifest.contributes.views.memdir?.[0]?.id).toBe('memdir.memories');
  });

  it("does not reuse the server's command ids (the client registers those itself)", () => {
    const ours = new Set(manifest.contributes.commands.map((c) => c.command));
    expect(ours.has(protocol.CMD_CREATE_FILE)).toBe(false);
    expect(ours.has(protocol.CMD_SHOW_INDEX_BUDGET)).toBe(false);
  });
});

const protocolPy = join(root, '..', 'server', 'memdir_lsp', 'protocol.py');
describe.skipIf(!existsSync(protocolPy))('protocol.ts mirrors server/memdir_lsp/protocol.py', () => {
  it('has every name with the same value', () => {
    const text = readFileSync(protocolPy, 'utf8');
    const pairs = [...text.matchAll(/^([A-Z_]+): Final = "([^"]+)"$/gm)].map((m) => [m[1]!, m[2]!] as const);
    expect(pairs.length).toBeGreaterThan(10);
    const ts = protocol as unknown as Record<string, unknown>;
    for (const [name, value] of pairs) {
      expect(ts[name], name).toBe(value);
    }
  });
});

describe('protocol.ts and the generated protocolTypes.ts', () => {
  it('names every method of the schema once, and no other memory/* method', () => {
    const ts = protocol as unknown as Record<string, unknown>;
    const names = Object.keys(ts)
      .filter((key) => /^(MEMORY|MEMDIR)_[A-Z_]+$/.test(key) && key !== 'MEMORY_METHODS' && key !== 'MEMORY_TYPES')
      .map((key) => ts[key]);
    expect(new Set(names).size).toBe(names.length);
    expect([...names].sort()).toEqual(Object.keys(protocol.MEMORY_METHODS).sort());
  });
});

describe('parseWhere', () => {
  it('reads memdir where --json and rejects anything else', () => {
    expect(parseWhere('{"memory_dir": "/h/.claude/projects/-w/memory", "exists": false}')).toEqual({
      memory_dir: '/h/.claude/projects/-w/memory',
      exists: false,
    });
    expect(parseWhere('not json')).toBeUndefined();
    expect(parseWhere('{"other": 1}')).toBeUndefined();
  });
});
