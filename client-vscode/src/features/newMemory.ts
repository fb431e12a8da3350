/**
 * Making the memory "New memory" asked for: the server plans it (`memory/newMemory`: the file
 * name, its frontmatter and its MEMORY.md entry, from memdir's one planner) and the editor
 * applies the plan, a WorkspaceEdit.
 *
 * One path, the edit, not `memory/tool`: the tool writes on disk, so an index with unsaved edits
 * in the editor would then conflict with the disk and need a second, edit-based path anyway.
 * The edit lands in the editor's buffers like every quick fix (undo works, the server hears of
 * it as an ordinary change), its CreateFile never replaces a file, and the server already named
 * the file so that none exists. The lock and atomic write of `memory/tool` guard writers that
 * go behind the editor's back (agents); the editor's own save is what it uses everywhere else.
 */
import * as vscode from 'vscode';
import {
  INDEX_FILENAME,
  MEMORY_NEW_MEMORY,
  type NewMemoryParams,
  type NewMemoryResult,
} from '../common/protocol';
import { applyEdit, executeCommand, findTextDocument, showErrorMessage } from '../common/vscodeapi';

/** What of the language client this needs (MemdirServer; a fake in tests). */
export interface PlanServer {
  start(): Promise<void>;
  handles(method: string): boolean;
  sendRequest<R>(method: string, params: object): Promise<R>;
  /** An LSP WorkspaceEdit as VS Code's (the language client's converter). */
  asWorkspaceEdit(edit: unknown): Promise<vscode.WorkspaceEdit>;
}

/** An LSP Command as the plan carries it (for clients that cannot create files in an edit). */
interface PlanCommand {
  command: string;
  arguments?: unknown[];
}

/** What the user typed. */
export type NewMemory = Omit<NewMemoryParams, 'directory'>;

/**
 * Create `memory` in the memory dir `directory`; the new file's URI, or undefined when nothing
 * was created (the user has been told why).
 */
export async function createMemory(server: PlanServer, directory: vscode.Uri, memory: NewMemory): Promise<vscode.Uri | undefined> {
  await server.start();
  if (!server.handles(MEMORY_NEW_MEMORY)) {
    void showErrorMessage(
      `New Memory needs a running memdir-lsp that handles ${MEMORY_NEW_MEMORY} (see the memdir output channel; an older memdir needs an upgrade).`,
    );
    return undefined;
  }
  let plan: NewMemoryResult;
  let edit: vscode.WorkspaceEdit;
  try {
    const params: NewMemoryParams = { ...memory, directory: directory.toString() };
    plan = await server.sendRequest<NewMemoryResult>(MEMORY_NEW_MEMORY, params);
    edit = await server.asWorkspaceEdit(plan.edit);
  } catch (error) {
    void showErrorMessage(`Could not plan the new memory: ${error instanceof Error ? error.message : String(error)}`);
    return undefined;
  }
  const fileUri = vscode.Uri.parse(plan.uri);
  const indexUri = vscode.Uri.joinPath(directory, INDEX_FILENAME);
  const indexWasDirty = findTextDocument(indexUri)?.isDirty ?? false;
  if (!(await applyEdit(edit))) {
    void showErrorMessage(`Could not create ${plan.path}.`);
    return undefined;
  }
  const command = plan.command as PlanCommand | null;
  if (command) {
    await executeCommand(command.command, ...(command.arguments ?? []));
  }
  // The edit lands in editor buffers; save what it dirtied so disk, agent and server agree, but
  // leave unsaved work of the user's own in MEMORY.md as it is.
  await findTextDocument(fileUri)?.save();
  if (!indexWasDirty) {
    await findTextDocument(indexUri)?.save();
  }
  return fileUri;
}
