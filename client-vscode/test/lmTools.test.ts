import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { MemorySearchResult, RecallView } from '../src/common/protocol';
import { Uri } from 'vscode';
import {
  chatSessionId,
  MCP_PROVIDER_ID,
  MEMORY_TOOL_NAME,
  memoryToolParams,
  memoryToolText,
  memoryToolWrites,
  RECALL_TOOL,
  recallParams,
  recallText,
  SEARCH_TOOL,
  searchParams,
  searchText,
  TOOL_INPUT_FIELDS,
  ToolInputError,
} from '../src/features/lmTools';

interface ToolContribution {
  name: string;
  displayName: string;
  modelDescription: string;
  toolReferenceName: string;
  canBeReferencedInPrompt: boolean;
  inputSchema: { type: string; properties: Record<string, { type: string; enum?: string[] }>; required: string[] };
}
const manifest = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as {
  contributes: { languageModelTools: ToolContribution[]; mcpServerDefinitionProviders: { id: string; label: string }[] };
};
const tools = manifest.contributes.languageModelTools;
const tool = (name: string): ToolContribution => {
  const found = tools.find((t) => t.name === name);
  if (!found) {
    throw new Error(`${name} not in package.json`);
  }
  return found;
};

describe('package.json declares what the code registers', () => {
  it('declares exactly the registered tools, each complete', () => {
    expect(tools.map((t) => t.name).sort()).toEqual([MEMORY_TOOL_NAME, RECALL_TOOL, SEARCH_TOOL].sort());
    for (const t of tools) {
      expect(t.displayName, t.name).toBeTruthy();
      expect(t.modelDescription.length, t.name).toBeGreaterThan(80);
      expect(t.toolReferenceName, t.name).toMatch(/^[a-zA-Z]+$/);
      expect(t.canBeReferencedInPrompt).toBe(true);
      expect(t.inputSchema.type).toBe('object');
    }
  });

  it('has input schemas with exactly the fields the code reads', () => {
    for (const t of tools) {
      expect(Object.keys(t.inputSchema.properties).sort(), t.name).toEqual([...(TOOL_INPUT_FIELDS[t.name] ?? [])].sort());
    }
    expect(tool(RECALL_TOOL).inputSchema.required).toEqual(['query']);
    expect(tool(SEARCH_TOOL).inputSchema.required).toEqual(['pattern']);
    expect(tool(MEMORY_TOOL_NAME).inputSchema.required).toEqual(['command']);
  });

  it('offers the memory tool commands the code accepts', () => {
    const commands = tool(MEMORY_TOOL_NAME).inputSchema.properties.command?.enum ?? [];
    expect(commands).toEqual(['view', 'create', 'str_replace', 'insert', 'delete', 'rename']);
    for (const command of commands) {
      expect(memoryToolParams({ command }).command).toBe(command);
    }
  });

  it('declares the MCP server definition provider the code registers', () => {
    expect(manifest.contributes.mcpServerDefinitionProviders).toEqual([{ id: MCP_PROVIDER_ID, label: 'memdir' }]);
  });
});

describe('tool input → request params', () => {
  it('maps recall and search input', () => {
    expect(recallParams({ query: 'release freeze' }, 'chat-1')).toEqual({ query: 'release freeze', sessionId: 'chat-1' });
    expect(searchParams({ pattern: 'freeze', glob: 'project-*.md' })).toEqual({ pattern: 'freeze', glob: 'project-*.md' });
    expect(searchParams({ pattern: 'freeze' })).toEqual({ pattern: 'freeze' });
  });

  it('refuses input that does not fit the schema, saying what is wrong', () => {
    expect(() => recallParams({}, 'chat-1')).toThrow(new ToolInputError('"query" is required and must be a non-empty string'));
    expect(() => recallParams('freeze', 'chat-1')).toThrow('the input must be a JSON object');
    expect(() => searchParams({ pattern: 'x', glob: 3 })).toThrow('"glob" must be a string');
    expect(() => memoryToolParams({ command: 'format' })).toThrow('"command" must be one of view, create, str_replace, insert, delete, rename');
    expect(() => memoryToolParams({ command: 'insert', path: '/memories/a.md', insert_line: '2' })).toThrow('"insert_line" must be an integer');
    expect(() => memoryToolParams({ command: 'view', view_range: [1, 'x'] })).toThrow('"view_range" must be an array of integers');
  });

  it('passes the memory tool fields through in the API shape, dropping nulls', () => {
    expect(
      memoryToolParams({ command: 'str_replace', path: '/memories/a.md', old_str: 'a', new_str: 'b', file_text: null }),
    ).toEqual({ command: 'str_replace', path: '/memories/a.md', old_str: 'a', new_str: 'b' });
    expect(memoryToolParams({ command: 'view', path: '/memories', view_range: [1, -1] })).toEqual({
      command: 'view',
      path: '/memories',
      view_range: [1, -1],
    });
    expect(memoryToolParams({ command: 'rename', old_path: '/memories/a.md', new_path: '/memories/b.md' })).toEqual({
      command: 'rename',
      old_path: '/memories/a.md',
      new_path: '/memories/b.md',
    });
  });

  it('asks for confirmation for every command but view', () => {
    expect(memoryToolWrites({ command: 'view' })).toBe(false);
    for (const command of ['create', 'str_replace', 'insert', 'delete', 'rename'] as const) {
      expect(memoryToolWrites({ command })).toBe(true);
    }
  });
});

describe("the chat session of a tool call, from VS Code's invocation token", () => {
  const resource = 'vscode-chat-session://local/YWJj';

  it('reads the sessionId of VS Code 1.101 and of the builds that also send sessionResource', () => {
    expect(chatSessionId({ sessionId: 'abc' })).toBe('abc');
    expect(chatSessionId({ sessionId: 'abc', sessionResource: Uri.parse(resource) })).toBe('abc');
  });

  it('falls back to the sessionResource URI, revived or as its components', () => {
    expect(chatSessionId({ sessionResource: Uri.parse(resource) })).toBe(resource);
    expect(chatSessionId({ sessionResource: { $mid: 1, scheme: 'vscode-chat-session', authority: 'local', path: '/YWJj' } })).toBe(resource);
    expect(chatSessionId({ sessionResource: { scheme: 'x', authority: '', path: '/p', query: 'q=1', fragment: 'f' } })).toBe('x:///p?q=1#f');
    expect(chatSessionId({ sessionId: '', sessionResource: resource })).toBe(resource);
  });

  it('gives no session without a token or for a shape it does not know', () => {
    for (const token of [undefined, null, 'abc', 42, {}, { sessionId: 7 }, { sessionResource: {} }, { sessionResource: { path: '/p' } }, Object.create(null)]) {
      expect(chatSessionId(token), JSON.stringify(token)).toBeUndefined();
    }
  });
});

describe('server answers → tool results', () => {
  const view = {
    triggered: true,
    attachment: '<relevant_memories>x</relevant_memories>',
    reason: 'message contains whitespace',
    dropped: [],
    budget: { used: 556, left: 60884, limit: 61440, surfacedNow: 556 },
  } as unknown as RecallView;

  it('gives the recall attachment, or why the prefetch did not run', () => {
    expect(recallText(view)).toBe('<relevant_memories>x</relevant_memories>');
    expect(recallText({ ...view, triggered: false, attachment: '', reason: 'single word' })).toBe('No memories recalled for this message (single word).');
  });

  it('says when the session was already given what is relevant', () => {
    const again = { ...view, attachment: '', budget: { ...view.budget, surfacedNow: 0 } };
    expect(recallText(again)).toBe('Nothing new recalled for this message: no relevant memory this chat session has not already been given.');
    expect(recallText({ ...again, dropped: [{ path: 'project-release-freeze.md', stage: 'after-select', reason: 'already surfaced in this session' }] })).toBe(
      'Nothing new recalled for this message (project-release-freeze.md: already surfaced in this session).',
    );
    expect(recallText({ ...again, budget: { used: 0, left: 61440, limit: 61440, surfacedNow: 0 } })).toBe('No memories recalled for this message (nothing relevant).');
  });

  it('prints search matches 1-based, and says when it stopped', () => {
    const result: MemorySearchResult = {
      directory: 'file:///m',
      matches: [{ path: 'MEMORY.md', line: 2, character: 4, text: '- [Freeze](project-freeze.md)' }],
      truncated: true,
    };
    expect(searchText(result)).toBe('MEMORY.md:3:5: - [Freeze](project-freeze.md)\n(stopped at 500 matches: narrow the pattern or the glob)');
    expect(searchText({ ...result, matches: [], truncated: false })).toBe('No matches.');
  });

  it('keeps the memory tool text and adds its warnings', () => {
    expect(memoryToolText({ text: 'File created successfully at: /memories/a.md', isError: false, changes: [], warnings: ['not in MEMORY.md'] })).toBe(
      'File created successfully at: /memories/a.md\nWarning: not in MEMORY.md',
    );
  });
});
