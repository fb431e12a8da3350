/**
 * The memdir-lsp language client: start, stop, restart, and the custom requests.
 *
 * One `MemdirServer` lives for the whole extension session; each (re)start creates a fresh
 * `LanguageClient` and disposes the previous one with every listener it had, so a restart never
 * leaves a notification handler of a dead client behind. Views subscribe to `onDidStart` and
 * `onRelevantMemories` here instead of to a client, which is why they survive restarts.
 */
import * as fs from 'node:fs';
import * as vscode from 'vscode';
import {
  LanguageClient,
  type LanguageClientOptions,
  type ServerOptions,
  State,
  TransportKind,
  type WorkspaceEdit,
} from 'vscode-languageclient/node';
import {
  advertisedMethods,
  CLI_MODULE,
  CLIENT_ID,
  CONFIG_SECTION,
  MEMDIR_DID_GRANT_WORKSPACE_TRUST,
  MEMORY_RELEVANT_MEMORIES,
  type RelevantMemories,
  SERVER_NAME,
} from './protocol';
import {
  bundleIn,
  classifyProbe,
  type Command,
  describePlan,
  executablePlan,
  findOnPath,
  type LaunchPlan,
  type McpOffer,
  mcpOffer,
  parseProbeReport,
  planLaunch,
  type ProbeResult,
  scriptInterpreter,
  shouldSearchPath,
} from './launch';
import { getPythonApi, interpreterFromPythonApi, type Interpreter, resolveInterpreter, runProcess } from './python';
import { pipeServerStderr, pipeServerStdout } from './serverLog';
import { getLaunchSettings, initializationOptions, type LaunchSettings, onTrustGranted, serverSettingsFor } from './settings';
import { getWorkspaceFolders, isWorkspaceTrusted, setContext, showErrorMessage, executeCommand } from './vscodeapi';

export type ServerState = 'stopped' | 'starting' | 'running' | 'failed';

/** The Markdown the client hands to the server; the server ignores Markdown outside memory dirs. */
export const DOCUMENT_SELECTOR = [{ scheme: 'file', language: 'markdown' }];

export class MemdirServer implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private clientDisposables: vscode.Disposable[] = [];
  private starting: Promise<void> | undefined;
  /** The client a restart is about to stop. */
  private retiring: LanguageClient | undefined;
  private _state: ServerState = 'stopped';
  private _plan: LaunchPlan | undefined;
  private _mcp: McpOffer | undefined;
  private _version: string | undefined;
  /** The launch settings the running (or last started) server was started with. */
  private startedWith: LaunchSettings | undefined;
  private readonly stateEmitter = new vscode.EventEmitter<ServerState>();
  private readonly relevantEmitter = new vscode.EventEmitter<RelevantMemories>();

  /** Fires on every state change; views refresh on `running`. */
  readonly onDidChangeState = this.stateEmitter.event;
  readonly onRelevantMemories = this.relevantEmitter.event;

  /** `extensionRoot`: where `bundled/` is (the extension's install folder). */
  constructor(
    private readonly log: vscode.LogOutputChannel,
    private readonly extensionRoot: string,
  ) {}

  get state(): ServerState {
    return this._state;
  }

  /** How the running (or last started) server was launched. */
  get plan(): LaunchPlan | undefined {
    return this._plan;
  }

  /** `memdir mcp` for agent mode, decided at the last successful start; undefined before. */
  get mcp(): McpOffer | undefined {
    return this._state === 'running' ? this._mcp : undefined;
  }

  get version(): string | undefined {
    return this._version;
  }

  /** Start unless running; concurrent callers share one start. */
  async start(): Promise<void> {
    if (this._state === 'running') {
      return;
    }
    this.starting ??= this.doStart().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  async restart(): Promise<void> {
    // At once, before any await: the library's own listeners of the configuration change that
    // caused this restart must not reach the client being replaced.
    this.retiring = this.client;
    await this.starting?.catch(() => undefined);
    await this.stopClient();
    await this.start();
  }

  /** Resolve the interpreter the same way the server start does. */
  async resolvePython(): Promise<Interpreter> {
    const launch = getLaunchSettings();
    const folder = getWorkspaceFolders()[0]?.uri;
    return resolveInterpreter(launch.python, async () => interpreterFromPythonApi(await getPythonApi(), folder));
  }

  /** The launch the settings ask for (no process runs). */
  async resolvePlan(): Promise<LaunchPlan> {
    return planLaunch(getLaunchSettings(), await this.resolvePython(), bundleIn(this.extensionRoot));
  }

  /** The memdir command line that matches the server: the started one's, else the settings'. */
  async resolveCli(): Promise<Command> {
    return (this._state === 'running' ? this._plan : undefined)?.cli ?? (await this.resolvePlan()).cli;
  }

  async sendRequest<R>(method: string, params: object): Promise<R> {
    await this.start();
    const client = this.client;
    if (!client || this._state !== 'running') {
      throw new Error(`${SERVER_NAME} is not running (see the memdir output channel)`);
    }
    return client.sendRequest<R>(method, params);
  }

  /** A WorkspaceEdit a custom request answered with (LSP's shape), as VS Code's. */
  async asWorkspaceEdit(edit: unknown): Promise<vscode.WorkspaceEdit> {
    if (!this.client) {
      throw new Error(`${SERVER_NAME} is not running (see the memdir output channel)`);
    }
    return this.client.protocol2CodeConverter.asWorkspaceEdit(edit as WorkspaceEdit);
  }

  async sendNotification(method: string, params: object): Promise<void> {
    await this.start();
    if (this.client && this._state === 'running') {
      await this.client.sendNotification(method, params);
    }
  }

  /** Whether the running server advertises a capability, e.g. `diagnosticProvider`. */
  serverCapability(name: string): unknown {
    const caps = this.client?.initializeResult?.capabilities as Record<string, unknown> | undefined;
    return caps?.[name];
  }

  /** A warning in the memdir output channel (for features that degrade instead of failing). */
  logWarning(message: string): void {
    this.log.warn(message);
  }

  /**
   * Whether the running server handles a custom method (it lists them in its initialize
   * result), so a feature can use a newer request and fall back with an older server.
   */
  handles(method: string): boolean {
    return this._state === 'running' && advertisedMethods(this.client?.initializeResult?.capabilities).includes(method);
  }

  /**
   * VS Code trusted the workspace. A running server is told (it may now run git and write), or
   * restarted when the program it runs may change; a later start sends `trusted: true` anyway.
   */
  async trustGranted(): Promise<void> {
    await this.starting?.catch(() => undefined);
    if (this._state !== 'running') {
      return;
    }
    if (onTrustGranted(this.startedWith, getLaunchSettings(), this.handles(MEMDIR_DID_GRANT_WORKSPACE_TRUST)) === 'restart') {
      this.log.info('workspace trusted: restarting the server');
      await this.restart();
      return;
    }
    this.log.info('workspace trusted: the server may now run git and write memory');
    await this.sendNotification(MEMDIR_DID_GRANT_WORKSPACE_TRUST, {});
  }

  async dispose(): Promise<void> {
    await this.stopClient();
    this.stateEmitter.dispose();
    this.relevantEmitter.dispose();
  }

  private setState(state: ServerState): void {
    this._state = state;
    void setContext('memdir.serverRunning', state === 'running');
    this.stateEmitter.fire(state);
  }

  private async doStart(): Promise<void> {
    this.setState('starting');
    const launch = getLaunchSettings();
    this.startedWith = launch;
    const cwd = getWorkspaceFolders()[0]?.uri.fsPath;
    let plan = await this.resolvePlan();
    this.log.info(describePlan(plan));
    let probe = await this.probe(plan, cwd);
    if (shouldSearchPath(plan, probe)) {
      const found = findOnPath(SERVER_NAME, process.env.PATH, isExecutableFile, process.platform, process.env.PATHEXT);
      if (found) {
        this.log.info(`memdir is not installed for ${plan.interpreter?.python ?? 'python'}: trying the ${SERVER_NAME} on PATH, ${found}`);
        plan = executablePlan(found, launch.args, 'PATH');
        probe = await this.probe(plan, cwd);
      }
    }
    this._plan = plan;
    if (!probe.ok) {
      this.log.error(`${probe.message} ${probe.fix}`);
      this.setState('failed');
      void this.reportStartFailure(`${probe.message} ${probe.fix}`);
      return;
    }
    this._version = probe.version;
    this.log.info(`${SERVER_NAME} ${probe.version} found`);
    this._mcp = await this.mcpFor(plan, probe, cwd);
    this.log.info(this._mcp.ok ? `memdir mcp for agent mode: ${[this._mcp.cli.command, ...this._mcp.cli.args].join(' ')} mcp` : this._mcp.reason);

    const serverOptions: ServerOptions = {
      command: plan.server.command,
      // vscode-languageclient appends --stdio for TransportKind.stdio.
      args: plan.server.args,
      transport: TransportKind.stdio,
      options: { cwd, env: { ...process.env, PYTHONUNBUFFERED: '1' } },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: DOCUMENT_SELECTOR,
      outputChannel: this.log,
      traceOutputChannel: this.log,
      stdioOptions: { stderr: pipeServerStderr, stdout: pipeServerStdout },
      // Explicitly set values only (see settings.ts); the section is sent again on every pull.
      // Untrusted, the server runs no git and writes nothing until told otherwise.
      initializationOptions: initializationOptions(serverSettingsFor(getWorkspaceFolders()[0]?.uri), isWorkspaceTrusted()),
      // Our own start failure message says what to do; the library's generic one would not.
      initializationFailedHandler: (error) => {
        this.log.error(`initialize failed: ${String(error)}`);
        return false;
      },
      connectionOptions: { maxRestartCount: 3 },
      middleware: {
        workspace: {
          // Answer the server's pull with explicit settings per scope, never VS Code's defaults.
          configuration: async (params, token, next) => {
            const fromVscode: unknown = await next(params, token);
            if (!Array.isArray(fromVscode)) {
              return fromVscode as ReturnType<typeof next>;
            }
            const values = fromVscode as unknown[];
            return params.items.map((item, i): unknown =>
              item.section === CONFIG_SECTION
                ? serverSettingsFor(item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined)
                : values[i],
            );
          },
          // Send an empty change so the server pulls: a pushed section would carry defaults. A
          // change of the launch settings stops this client (a restart) as the library tells it:
          // a stopped client's notification would try to start it again and fail.
          didChangeConfiguration: async (_sections, next) => {
            if (this.client === started.client && this.retiring !== started.client) {
              await next(undefined);
            }
          },
        },
      },
    };

    const started: { client?: LanguageClient } = {};
    const client = new LanguageClient(CLIENT_ID, 'memdir', serverOptions, clientOptions);
    started.client = client;
    this.clientDisposables.push(
      client.onNotification(MEMORY_RELEVANT_MEMORIES, (params: RelevantMemories) => {
        this.relevantEmitter.fire(params);
      }),
      client.onDidChangeState((event) => {
        if (event.newState === State.Stopped && this.client === client && this._state === 'running') {
          this.setState('failed');
        } else if (event.newState === State.Running && this.client === client) {
          this.setState('running');
        }
      }),
    );
    this.client = client;
    try {
      await client.start();
      this.setState('running');
      this.log.info(`${SERVER_NAME} started`);
    } catch (error) {
      this.log.error(`${SERVER_NAME} failed to start: ${String(error)}`);
      this.setState('failed');
      void this.reportStartFailure(`${SERVER_NAME} failed to start: ${String(error)}`);
    }
  }

  private async stopClient(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    for (const disposable of this.clientDisposables.splice(0)) {
      disposable.dispose();
    }
    if (client) {
      try {
        // stop() waits for shutdown/exit; a server that hangs must not block a restart forever.
        await client.stop(5000);
      } catch (error) {
        this.log.warn(`stopping ${SERVER_NAME}: ${String(error)}`);
      }
      await client.dispose().catch(() => undefined);
    }
    this.retiring = undefined;
    if (this._state !== 'stopped') {
      this.setState('stopped');
    }
  }

  private async probe(plan: LaunchPlan, cwd: string | undefined): Promise<ProbeResult> {
    return classifyProbe(plan, await runProcess(plan.probe.command, plan.probe.args, { cwd, timeoutMs: 20_000 }));
  }

  /**
   * Whether `memdir mcp` can run where the server runs. An interpreter's probe already said; for
   * an executable, its script's interpreter is asked (pipx and uv tool write a Python shebang).
   */
  private async mcpFor(plan: LaunchPlan, probe: ProbeResult & { ok: true }, cwd: string | undefined): Promise<McpOffer> {
    if (plan.mode !== 'path') {
      return mcpOffer(plan, probe.report);
    }
    const python = scriptInterpreter(readHead(plan.server.command));
    if (!python) {
      return mcpOffer(plan, undefined);
    }
    const { probeScript } = bundleIn(this.extensionRoot);
    const report = parseProbeReport((await runProcess(python, [probeScript], { cwd, timeoutMs: 20_000 })).stdout);
    return mcpOffer({ ...plan, cli: { command: python, args: ['-P', '-m', CLI_MODULE] } }, report);
  }

  private async reportStartFailure(message: string): Promise<void> {
    const choice = await showErrorMessage(message, 'Open Settings', 'Show Output');
    if (choice === 'Open Settings') {
      await executeCommand('workbench.action.openSettings', '@ext:memdir.memdir');
    } else if (choice === 'Show Output') {
      this.log.show();
    }
  }
}

function isExecutableFile(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/** The first bytes of a file (a script's interpreter lines), or '' when it cannot be read. */
function readHead(file: string): string {
  try {
    const fd = fs.openSync(file, 'r');
    try {
      const buffer = Buffer.alloc(1024);
      return buffer.toString('utf8', 0, fs.readSync(fd, buffer, 0, buffer.length, 0));
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return '';
  }
}
