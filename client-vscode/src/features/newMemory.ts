/**
 * Writing the file "New memory" asked for: through the server's `memory/tool` when it has it,
 * else through a WorkspaceEdit.
 *
 * `memory/tool` is memdir's one write path, the one the agent's memory tool and the extraction
 * agent use: the file is created atomically and never over an existing one, under the memory
 * dir's lock (an agent writing at the same moment cannot interleave), and MEMORY.md gets the
 * entry exactly when the directory's recall mode maintains the index. The server writes on disk,
 * so an index with unsaved edits in the editor would then conflict with the disk: in that case,
 * and with a server that predates `memory/tool` (or none at all), a WorkspaceEdit edits the
 * editor's buffers instead, so undo works and nothing unsaved is lost.
 */
import * as vscode from 'vscode';
import { INDEX_FILENAME, MEMORY_TOOL, type MemoryToolParams, type MemoryToolResult } from '../common/protocol';
import { applyEdit, fileExists, findTextDocument, openTextDocument, showErrorMessage } from '../common/vscodeapi';
import { indexInsertion } from './memoryFiles';

/** What of the language client this needs (MemdirServer; a fake in tests). */
export interface ToolServer {
  handles(method: string): boolean;
  sendRequest<R>(method: string, params: object): Promise<R>;
}

export interface MemoryFile {
  /** The memory dir. */
  directory: vscode.Uri;
  /** A plain file name in it, not taken yet. */
  fileName: string;
  text: string;
  /** The MEMORY.md line to add when the edit path is taken. */
  indexLine: string;
}

/** The `memory/tool` request that creates `file` (the tool sees the dir as `/memories`). */
export function createParams(file: MemoryFile): MemoryToolParams {
  return {
    command: 'create',
    path: `/memories/${file.fileName}`,
    file_text: file.text,
    directory: file.directory.toString(),
  };
}

/** How the file was made, or undefined when it was not (the user has been told why). */
export type Created = 'tool' | 'edit' | undefined;

export async function createMemoryFile(server: ToolServer, file: MemoryFile, log?: (message: string) => void): Promise<Created> {
  const fileUri = vscode.Uri.joinPath(file.directory, file.fileName);
  const indexUri = vscode.Uri.joinPath(file.directory, INDEX_FILENAME);
  if (server.handles(MEMORY_TOOL) && !findTextDocument(indexUri)?.isDirty) {
    try {
      const result = await server.sendRequest<MemoryToolResult>(MEMORY_TOOL, createParams(file));
      if (result.isError) {
        void showErrorMessage(`Could not create ${file.fileName}: ${result.text}`);
        return undefined;
      }
      return 'tool';
    } catch (error) {
      // The server failed (or went away) mid-request: if it wrote the file anyway, that is the
      // memory; otherwise the editor makes it.
      log?.(`${MEMORY_TOOL} failed, creating ${file.fileName} with an edit instead: ${String(error)}`);
      if (await fileExists(fileUri)) {
        return 'tool';
      }
    }
  }
  return (await createWithEdit(file, fileUri, indexUri)) ? 'edit' : undefined;
}

async function createWithEdit(file: MemoryFile, fileUri: vscode.Uri, indexUri: vscode.Uri): Promise<boolean> {
  const edit = new vscode.WorkspaceEdit();
  const encoder = new TextEncoder();
  edit.createFile(fileUri, { overwrite: false, contents: encoder.encode(file.text) });
  let indexDocument: vscode.TextDocument | undefined;
  if (await fileExists(indexUri)) {
    indexDocument = await openTextDocument(indexUri);
    const insertion = indexInsertion(indexDocument.getText(), file.indexLine);
    edit.insert(indexUri, indexDocument.positionAt(insertion.offset), insertion.text);
  } else {
    edit.createFile(indexUri, { overwrite: false, contents: encoder.encode(`${file.indexLine}\n`) });
  }
  if (!(await applyEdit(edit))) {
    void showErrorMessage(`Could not create ${file.fileName}.`);
    return false;
  }
  // The index edit lands in the editor buffer; save it so disk, agent and server agree.
  await indexDocument?.save();
  return true;
}
