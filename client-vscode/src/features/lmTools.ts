/**
 * memdir for VS Code's agent mode: recall, search and the memory tool as language-model tools,
 * and `memdir mcp` offered as an MCP server definition for each memory dir.
 *
 * The tools are declared in package.json (`contributes.languageModelTools`, the one place their
 * input schemas live) and answered by the language server through the typed memory/* requests,
 * so agent mode gets exactly what the recall preview and the MCP server compute. Both APIs are
 * newer than some VS Code forks: a missing API is logged and skipped, never an activation error.
 */
import { randomUUID } from 'node:crypto';
import * as vscode from 'vscode';
import { mcpServerLaunches } from '../common/launch';
import {
  MEMORY_RECALL,
  MEMORY_SEARCH,
  MEMORY_TOOL,
  type MemorySearchResult,
  type MemoryToolParams,
  type MemoryToolResult,
  type RecallParams,
  type RecallView,
  type SearchParams,
} from '../common/protocol';
import type { MemdirServer } from '../common/server';
import type { MemoryData } from './memoryData';

export const RECALL_TOOL = 'memdir_recall';
export const SEARCH_TOOL = 'memdir_search';
export const MEMORY_TOOL_NAME = 'memdir_memory';
/** `id` of the MCP server definition provider in package.json. */
export const MCP_PROVIDER_ID = 'memdir.mcpServers';
/** Internal command the e2e scenario runs: what VS Code itself sees of the tools, and the MCP definitions. */
export const CMD_LM_TOOLS_SELF_CHECK = 'memdir.lmTools.selfCheck';

const MEMORY_COMMANDS = ['view', 'create', 'str_replace', 'insert', 'delete', 'rename'] as const;
type MemoryCommand = (typeof MEMORY_COMMANDS)[number];

/** A model's input that does not fit the schema: the message goes back to the model. */
export class ToolInputError extends Error {}

function record(input: unknown): Record<string, unknown> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new ToolInputError('the input must be a JSON object');
  }
  return input as Record<string, unknown>;
}

function requiredString(input: Record<string, unknown>, key: string): string {
  const value = input[key];
  if (typeof value !== 'string' || !value.trim()) {
    throw new ToolInputError(`"${key}" is required and must be a non-empty string`);
  }
  return value;
}

function optionalString(input: Record<string, unknown>, key: string): string | undefined {
  const value = input[key];
  if (value === undefined || value === null) {
    return undefined;
  }
  if (typeof value !== 'string') {
    throw new ToolInputError(`"${key}" must be a string`);
  }
  return value;
}

/** The input fields each tool reads; a test checks them against package.json's schemas. */
export const TOOL_INPUT_FIELDS: Record<string, readonly string[]> = {
  [RECALL_TOOL]: ['query'],
  [SEARCH_TOOL]: ['pattern', 'glob'],
  [MEMORY_TOOL_NAME]: [
    'command',
    'path',
    'file_text',
    'old_str',
    'new_str',
    'insert_line',
    'insert_text',
    'old_path',
    'new_path',
    'view_range',
  ],
};

/** A recall in a session: what the session was already given does not surface again. */
export function recallParams(input: unknown, sessionId: string): RecallParams {
  return { query: requiredString(record(input), 'query'), sessionId };
}

/** A URI's string form, whether the RPC revived it (a `vscode.Uri`) or left its components. */
function uriString(value: unknown): string | undefined {
  if (typeof value === 'string') {
    return value || undefined;
  }
  if (typeof value !== 'object' || value === null) {
    return undefined;
  }
  const { toString } = value as { toString?: unknown };
  if (typeof toString === 'function' && toString !== Object.prototype.toString) {
    const text: unknown = toString.call(value);
    return typeof text === 'string' && text ? text : undefined;
  }
  const { scheme, authority, path, query, fragment } = value as Record<string, unknown>;
  if (typeof scheme !== 'string' || !scheme || typeof path !== 'string') {
    return undefined;
  }
  const part = (prefix: string, v: unknown): string => (typeof v === 'string' && v ? `${prefix}${v}` : '');
  return `${scheme}://${part('', authority)}${path}${part('?', query)}${part('#', fragment)}`;
}

/**
 * The chat session of a tool call, read from `options.toolInvocationToken`. The API keeps the
 * token opaque; VS Code passes the chat's IToolInvocationContext: `{ sessionId }` (1.101),
 * `{ sessionId, sessionResource }` later, only `sessionResource` (a URI) in newer builds.
 * Undefined when there is no chat (`lm.invokeTool` without a token) or the shape is unknown.
 */
export function chatSessionId(token: unknown): string | undefined {
  if (typeof token !== 'object' || token === null) {
    return undefined;
  }
  const { sessionId, sessionResource } = token as { sessionId?: unknown; sessionResource?: unknown };
  if (typeof sessionId === 'string' && sessionId) {
    return sessionId;
  }
  return uriString(sessionResource);
}

export function searchParams(input: unknown): SearchParams {
  const fields = record(input);
  const params: SearchParams = { pattern: requiredString(fields, 'pattern') };
  const glob = optionalString(fields, 'glob');
  if (glob) {
    params.glob = glob;
  }
  return params;
}

/** The memory tool's input passes through as the API shapes it; the server checks each command. */
export function memoryToolParams(input: unknown): MemoryToolParams {
  const fields = record(input);
  const command = requiredString(fields, 'command');
  if (!(MEMORY_COMMANDS as readonly string[]).includes(command)) {
    throw new ToolInputError(`"command" must be one of ${MEMORY_COMMANDS.join(', ')}`);
  }
  const params: MemoryToolParams = { command: command as MemoryCommand };
  for (const key of ['path', 'file_text', 'old_str', 'new_str', 'insert_text', 'old_path', 'new_path'] as const) {
    const value = optionalString(fields, key);
    if (value !== undefined) {
      params[key] = value;
    }
  }
  const line = fields.insert_line;
  if (line !== undefined && line !== null) {
    if (typeof line !== 'number' || !Number.isInteger(line)) {
      throw new ToolInputError('"insert_line" must be an integer');
    }
    params.insert_line = line;
  }
  const range = fields.view_range;
  if (range !== undefined && range !== null) {
    if (!Array.isArray(range) || !range.every((n) => typeof n === 'number' && Number.isInteger(n))) {
      throw new ToolInputError('"view_range" must be an array of integers');
    }
    params.view_range = range as number[];
  }
  return params;
}

/** Only `view` leaves the directory as it was: every other command asks the user first. */
export function memoryToolWrites(params: MemoryToolParams): boolean {
  return params.command !== 'view';
}

/** The attachment, or why there is none: the model should not retry a recall that deduped. */
export function recallText(view: RecallView): string {
  if (view.attachment) {
    return view.attachment;
  }
  if (!view.triggered) {
    return `No memories recalled for this message (${view.reason || 'nothing relevant'}).`;
  }
  const dropped = view.dropped ?? [];
  if (dropped.length) {
    return `Nothing new recalled for this message (${dropped.map((d) => `${d.path}: ${d.reason}`).join('; ')}).`;
  }
  if ((view.budget?.used ?? 0) > 0) {
    return 'Nothing new recalled for this message: no relevant memory this chat session has not already been given.';
  }
  return 'No memories recalled for this message (nothing relevant).';
}

export function searchText(result: MemorySearchResult): string {
  if (!result.matches.length) {
    return 'No matches.';
  }
  const lines = result.matches.map((m) => `${m.path}:${m.line + 1}:${m.character + 1}: ${m.text}`);
  if (result.truncated) {
    lines.push('(stopped at 500 matches: narrow the pattern or the glob)');
  }
  return lines.join('\n');
}

export function memoryToolText(result: MemoryToolResult): string {
  return [result.text, ...result.warnings.map((w) => `Warning: ${w}`)].join('\n');
}

export function describeMemoryCommand(params: MemoryToolParams): string {
  const target = params.command === 'rename' ? `${params.old_path ?? '?'} → ${params.new_path ?? '?'}` : (params.path ?? '?');
  return `memdir memory tool: ${params.command} ${target}`;
}

function textResult(text: string): vscode.LanguageModelToolResult {
  return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(text)]);
}

/** Run a mapping and a request; input errors go back to the model as text it can act on. */
async function answer<P>(map: () => P, request: (params: P) => Promise<string>): Promise<vscode.LanguageModelToolResult> {
  let params: P;
  try {
    params = map();
  } catch (error) {
    if (error instanceof ToolInputError) {
      return textResult(`Invalid input: ${error.message}`);
    }
    throw error;
  }
  return textResult(await request(params));
}

export function registerLanguageModelTools(
  server: MemdirServer,
  data: MemoryData,
  log: vscode.LogOutputChannel,
): vscode.Disposable[] {
  const lm = vscode.lm as Partial<typeof vscode.lm> | undefined;
  const disposables: vscode.Disposable[] = [];
  // Calls outside a chat (another extension's lm.invokeTool) share one session per window.
  const windowSession = `vscode-lm-tools-${randomUUID()}`;
  // VS Code may ask for MCP definitions in any workspace: only a started server's directories
  // count, so asking never spawns Python (data.onDidChange re-offers them once it runs). `memdir
  // mcp` runs where the server runs, when that environment has memdir's [mcp] extra: the server's
  // start decided (and logged why not), so the bundled server without the MCP SDK offers nothing.
  const launches = async (): Promise<ReturnType<typeof mcpServerLaunches>> => {
    const directories = server.state === 'running' ? await data.get() : data.current;
    const offer = server.mcp;
    return directories.length && offer?.ok ? mcpServerLaunches(offer.cli, directories.map((d) => d.path)) : [];
  };
  if (typeof lm?.registerTool !== 'function') {
    log.info('This VS Code has no language-model tool API (vscode.lm.registerTool): agent mode tools not registered.');
  } else {
    disposables.push(
      lm.registerTool<unknown>(RECALL_TOOL, {
        invoke: (options) =>
          answer(
            () => recallParams(options.input, chatSessionId(options.toolInvocationToken) ?? windowSession),
            async (params) => recallText(await server.sendRequest<RecallView>(MEMORY_RECALL, params)),
          ),
      }),
      lm.registerTool<unknown>(SEARCH_TOOL, {
        invoke: (options) =>
          answer(
            () => searchParams(options.input),
            async (params) => searchText(await server.sendRequest<MemorySearchResult>(MEMORY_SEARCH, params)),
          ),
      }),
      lm.registerTool<unknown>(MEMORY_TOOL_NAME, {
        prepareInvocation: (options) => {
          let params: MemoryToolParams;
          try {
            params = memoryToolParams(options.input);
          } catch {
            return undefined; // invoke answers the model with what is wrong
          }
          const message = describeMemoryCommand(params);
          if (!memoryToolWrites(params)) {
            return { invocationMessage: message };
          }
          return {
            invocationMessage: message,
            confirmationMessages: {
              title: `Change memory: ${params.command}?`,
              message: new vscode.MarkdownString(`The agent wants to run \`${params.command}\` on the memory directory:\n\n${message}`),
            },
          };
        },
        invoke: (options) =>
          answer(
            () => memoryToolParams(options.input),
            async (params) => memoryToolText(await server.sendRequest<MemoryToolResult>(MEMORY_TOOL, params)),
          ),
      }),
    );
    log.info(`Language-model tools registered: ${[RECALL_TOOL, SEARCH_TOOL, MEMORY_TOOL_NAME].join(', ')}`);
  }

  if (typeof lm?.registerMcpServerDefinitionProvider !== 'function' || typeof vscode.McpStdioServerDefinition !== 'function') {
    log.info('This VS Code has no MCP server definition API: memdir mcp is not offered to agent mode.');
  } else {
    const changed = new vscode.EventEmitter<void>();
    disposables.push(
      changed,
      data.onDidChange(() => {
        changed.fire();
      }),
      lm.registerMcpServerDefinitionProvider(MCP_PROVIDER_ID, {
        onDidChangeMcpServerDefinitions: changed.event,
        provideMcpServerDefinitions: async () =>
          (await launches()).map((launch) => new vscode.McpStdioServerDefinition(launch.label, launch.command, launch.args)),
      }),
    );
    log.info('MCP server definition provider registered: memdir mcp for each memory directory');
  }

  // Not contributed to the palette: the e2e scenario binds a key to it to see what VS Code lists.
  // It recalls twice with one query and no token (so in the window's session): the second answer
  // shows the dedupe. Then, when memdir mcp is offered, it has VS Code start the MCP servers and
  // calls memdir's MCP recall tool through VS Code's tool service. "started"/"failed" lines let the
  // scenario tell a run in flight from a key pressed before the extension was active.
  disposables.push(
    vscode.commands.registerCommand(CMD_LM_TOOLS_SELF_CHECK, async (query?: unknown) => {
      log.info('lm self-check started');
      const text = typeof query === 'string' ? query : 'release freeze';
      try {
        const names = (lm?.tools ?? []).map((t) => t.name).filter((n) => n.startsWith('memdir_'));
        log.info(`lm.tools lists: ${JSON.stringify(names)}`);
        const offered = await launches();
        log.info(`MCP server definitions: ${JSON.stringify(offered)}`);
        if (typeof lm?.invokeTool !== 'function') {
          log.info('lm self-check failed: no vscode.lm.invokeTool');
          return;
        }
        const invoke = lm.invokeTool.bind(lm);
        const call = async (name: string, input: object): Promise<string> => {
          const result = await invoke(name, { input, toolInvocationToken: undefined });
          return result.content.map((part) => (part instanceof vscode.LanguageModelTextPart ? part.value : '')).join('');
        };
        const first = await call(RECALL_TOOL, { query: text });
        const second = await call(RECALL_TOOL, { query: text });
        log.info(`lm.invokeTool ${RECALL_TOOL} twice: ${JSON.stringify([first, second])}`);
        // A read: no confirmation (the bundled server runs the memory tool too).
        log.info(`lm.invokeTool ${MEMORY_TOOL_NAME} view: ${JSON.stringify(await call(MEMORY_TOOL_NAME, { command: 'view', path: '/memories' }))}`);

        if (!offered.length) {
          log.info('lm self-check done: no MCP server offered');
          return;
        }
        // VS Code's own command (no precondition, so it runs with AI features hidden); '*': every
        // offered server, and the command resolves once their tools are live (or they failed).
        await vscode.commands.executeCommand('workbench.mcp.startServer', '*', { waitForLiveTools: true });
        const mcpRecall = (): string | undefined =>
          (lm.tools ?? []).find((t) => t.tags.includes('mcp') && t.name.endsWith('memory_recall'))?.name;
        // The tool list reaches the extension host a moment after the server's tools are live.
        let tool: string | undefined;
        for (let attempt = 0; attempt < 40 && !(tool = mcpRecall()); attempt++) {
          await new Promise((resolve) => setTimeout(resolve, 250));
        }
        const mcpNames = (lm.tools ?? []).filter((t) => t.tags.includes('mcp')).map((t) => t.name);
        log.info(`MCP tools in lm.tools after workbench.mcp.startServer: ${JSON.stringify(mcpNames)}`);
        if (!tool) {
          log.info('lm self-check failed: no MCP memory_recall tool in vscode.lm.tools');
          return;
        }
        log.info(`lm.invokeTool ${tool}: ${JSON.stringify(await call(tool, { query: text }))}`);
      } catch (error) {
        log.info(`lm self-check failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    }),
  );
  return disposables;
}
