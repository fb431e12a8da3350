/**
 * A small stand-in for the `vscode` module, enough for the extension's modules to load and for
 * the tree items to be built in plain Node. vitest.config.mts maps `vscode` here; anything a test
 * needs to observe it replaces with `vi.mock` or `vi.spyOn`.
 */
type Listener<T> = (value: T) => unknown;

export class EventEmitter<T> {
  private listeners: Listener<T>[] = [];
  readonly event = (listener: Listener<T>) => {
    this.listeners.push(listener);
    return { dispose: () => (this.listeners = this.listeners.filter((l) => l !== listener)) };
  };
  fire(value: T): void {
    for (const listener of [...this.listeners]) {
      listener(value);
    }
  }
  dispose(): void {
    this.listeners = [];
  }
}

export class Disposable {
  constructor(private readonly callOnDispose: () => unknown) {}
  dispose(): void {
    this.callOnDispose();
  }
}

export class Uri {
  private constructor(
    readonly scheme: string,
    readonly path: string,
    readonly query = '',
  ) {}
  static file(path: string): Uri {
    return new Uri('file', path);
  }
  static parse(value: string): Uri {
    const match = /^([a-z-]+):(?:\/\/)?([^?]*)(?:\?(.*))?$/.exec(value);
    return new Uri(match?.[1] ?? 'file', decodeURIComponent(match?.[2] ?? value), match?.[3] ?? '');
  }
  static from(parts: { scheme: string; path: string; query?: string }): Uri {
    return new Uri(parts.scheme, parts.path, parts.query ?? '');
  }
  static joinPath(base: Uri, ...segments: string[]): Uri {
    return new Uri(base.scheme, [base.path.replace(/\/$/, ''), ...segments].join('/'));
  }
  get fsPath(): string {
    return this.path;
  }
  toString(): string {
    return `${this.scheme}://${this.path}${this.query ? `?${this.query}` : ''}`;
  }
}

export class Position {
  constructor(
    readonly line: number,
    readonly character: number,
  ) {}
}

/** Records the operations an edit was built from, in order. */
export class WorkspaceEdit {
  readonly operations: (
    | { kind: 'createFile'; uri: Uri; options?: { overwrite?: boolean; contents?: Uint8Array } }
    | { kind: 'insert'; uri: Uri; position: Position; text: string }
  )[] = [];
  createFile(uri: Uri, options?: { overwrite?: boolean; contents?: Uint8Array }): void {
    this.operations.push({ kind: 'createFile', uri, options });
  }
  insert(uri: Uri, position: Position, text: string): void {
    this.operations.push({ kind: 'insert', uri, position, text });
  }
}

export class ThemeIcon {
  constructor(
    readonly id: string,
    readonly color?: ThemeColor,
  ) {}
}

export class ThemeColor {
  constructor(readonly id: string) {}
}

export class MarkdownString {
  supportThemeIcons = false;
  constructor(readonly value = '') {}
}

export enum TreeItemCollapsibleState {
  None = 0,
  Collapsed = 1,
  Expanded = 2,
}

export class TreeItem {
  id?: string;
  description?: string;
  tooltip?: string | MarkdownString;
  iconPath?: ThemeIcon;
  contextValue?: string;
  resourceUri?: Uri;
  command?: { command: string; title: string; arguments?: unknown[] };
  constructor(
    readonly label: string,
    readonly collapsibleState: TreeItemCollapsibleState = TreeItemCollapsibleState.None,
  ) {}
}

export enum DiagnosticSeverity {
  Error = 0,
  Warning = 1,
  Information = 2,
  Hint = 3,
}

export enum StatusBarAlignment {
  Left = 1,
  Right = 2,
}

export enum ProgressLocation {
  SourceControl = 1,
  Window = 10,
  Notification = 15,
}

const noop = () => ({ dispose: () => undefined });

export const window = {
  createOutputChannel: () => ({ info: noop, warn: noop, error: noop, show: noop, dispose: noop }),
  showErrorMessage: async () => undefined,
  showWarningMessage: async () => undefined,
  showInformationMessage: async () => undefined,
  onDidChangeActiveTextEditor: noop,
  activeTextEditor: undefined,
};

export const workspace = {
  workspaceFolders: undefined,
  isTrusted: true,
  onDidGrantWorkspaceTrust: noop,
  getConfiguration: () => ({ get: () => undefined, inspect: () => undefined }),
  onDidChangeConfiguration: noop,
  onDidCreateFiles: noop,
  onDidDeleteFiles: noop,
  onDidRenameFiles: noop,
  onDidSaveTextDocument: noop,
  textDocuments: [],
};

export const languages = {
  getDiagnostics: () => [],
  onDidChangeDiagnostics: noop,
};

export const commands = {
  registerCommand: noop,
  executeCommand: async () => undefined,
};

export const extensions = {
  getExtension: () => undefined,
};
