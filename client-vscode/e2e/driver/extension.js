// Test-only extension installed next to memdir by scripts/e2e-vscode.sh: the scenario asks the
// VS Code API in the extension host what a user's editor shows (vscode.languages.getDiagnostics,
// vscode.executeCodeActionProvider, vscode.executeHoverProvider), applies what a user would
// pick and calls language-model tools (vscode.lm.invokeTool), over HTTP on 127.0.0.1. The port
// goes to $MEMDIR_E2E_DRIVER_DIR/port (written whole, by rename), one server per extension host.
// Nothing here runs outside the e2e: without that variable the extension does nothing.
'use strict';

const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const vscode = require('vscode');

const uriOf = (file) => vscode.Uri.file(file);

function summary(diagnostics) {
  return diagnostics.map((d) => ({
    code: typeof d.code === 'object' && d.code !== null ? String(d.code.value) : String(d.code),
    message: d.message,
    line: d.range.start.line,
    character: d.range.start.character,
    source: d.source,
  }));
}

/** Whether `diagnostics` has (present) or lacks (!present) a `code` finding whose message contains `includes`. */
function holds(diagnostics, { code, includes = '', present = true }) {
  const found = summary(diagnostics).some((d) => d.code === code && d.message.includes(includes));
  return found === present;
}

/**
 * The file's diagnostics once `condition` holds: checked now, then on every
 * vscode.languages.onDidChangeDiagnostics event for the file, until `timeoutMs`.
 */
function waitForDiagnostics(uri, condition, timeoutMs) {
  return new Promise((resolve, reject) => {
    const now = vscode.languages.getDiagnostics(uri);
    if (!condition || holds(now, condition)) {
      resolve(summary(now));
      return;
    }
    const timer = setTimeout(() => {
      listener.dispose();
      reject(new Error(`timed out after ${timeoutMs} ms waiting for ${JSON.stringify(condition)}; diagnostics: ${JSON.stringify(summary(vscode.languages.getDiagnostics(uri)).map((d) => `${d.code} ${d.message}`))}`));
    }, timeoutMs);
    const listener = vscode.languages.onDidChangeDiagnostics((event) => {
      if (!event.uris.some((u) => u.toString() === uri.toString())) {
        return;
      }
      const diagnostics = vscode.languages.getDiagnostics(uri);
      if (holds(diagnostics, condition)) {
        clearTimeout(timer);
        listener.dispose();
        resolve(summary(diagnostics));
      }
    });
  });
}

async function documentOf(file) {
  return vscode.workspace.openTextDocument(uriOf(file));
}

const ops = {
  async folders() {
    return (vscode.workspace.workspaceFolders || []).map((f) => f.uri.fsPath);
  },

  async open({ file }) {
    const document = await documentOf(file);
    await vscode.window.showTextDocument(document, { preview: false });
    return { languageId: document.languageId };
  },

  async diagnostics({ file, until, timeoutMs = 30000 }) {
    return waitForDiagnostics(uriOf(file), until, timeoutMs);
  },

  /**
   * The quick fixes VS Code offers at the first `code` finding (whose message contains
   * `includes`); the one whose title matches `title` is applied as VS Code applies a picked
   * action (its edit, then its command) and the document saved.
   */
  async fix({ file, code, includes = '', title }) {
    const uri = uriOf(file);
    const diagnostic = vscode.languages.getDiagnostics(uri).find((d) =>
      summary([d])[0].code === code && d.message.includes(includes));
    if (!diagnostic) {
      throw new Error(`no ${code} finding in ${file}`);
    }
    const actions = await vscode.commands.executeCommand('vscode.executeCodeActionProvider',
      uri, diagnostic.range, vscode.CodeActionKind.QuickFix.value, 50);
    const titles = actions.map((a) => a.title);
    const pattern = new RegExp(title);
    const action = actions.find((a) => pattern.test(a.title));
    if (!action) {
      throw new Error(`no quick fix matching /${title}/ at ${code}; offered: ${JSON.stringify(titles)}`);
    }
    if (action.edit && !(await vscode.workspace.applyEdit(action.edit))) {
      throw new Error(`VS Code did not apply the edit of "${action.title}"`);
    }
    const command = action.command && typeof action.command === 'object' ? action.command : undefined;
    if (command) {
      await vscode.commands.executeCommand(command.command, ...(command.arguments || []));
    }
    const document = await documentOf(file);
    if (document.isDirty) {
      await document.save();
    }
    return { titles, applied: action.title, isPreferred: Boolean(action.isPreferred), text: document.getText() };
  },

  async hover({ file, line, character }) {
    const hovers = await vscode.commands.executeCommand('vscode.executeHoverProvider',
      uriOf(file), new vscode.Position(line, character));
    return hovers.flatMap((h) => h.contents.map((c) => (typeof c === 'string' ? c : c.value)));
  },

  async text({ file }) {
    return (await documentOf(file)).getText();
  },

  /**
   * A language-model tool called outside a chat, as another extension calls it
   * (vscode.lm.invokeTool without a toolInvocationToken); its text parts, joined. A tool that
   * asks for confirmation makes VS Code show a modal dialog first, which the scenario answers.
   */
  async tool({ name, input }) {
    const result = await vscode.lm.invokeTool(name, { input, toolInvocationToken: undefined });
    return result.content.map((part) => (part instanceof vscode.LanguageModelTextPart ? part.value : '')).join('');
  },
};

function activate(context) {
  const dir = process.env.MEMDIR_E2E_DRIVER_DIR;
  if (!dir) {
    return;
  }
  const server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => { body += chunk; });
    request.on('end', async () => {
      let answer;
      try {
        const { op, ...params } = JSON.parse(body);
        if (!ops[op]) {
          throw new Error(`unknown op ${op}`);
        }
        answer = { ok: true, result: await ops[op](params) };
      } catch (error) {
        answer = { ok: false, error: String(error && error.message ? error.message : error) };
      }
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(answer));
    });
  });
  server.listen(0, '127.0.0.1', () => {
    fs.mkdirSync(dir, { recursive: true });
    const tmp = path.join(dir, `port.${process.pid}`);
    fs.writeFileSync(tmp, String(server.address().port));
    fs.renameSync(tmp, path.join(dir, 'port'));
  });
  context.subscriptions.push({ dispose: () => server.close() });
}

module.exports = { activate, deactivate() {} };
