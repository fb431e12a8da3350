// End-to-end scenario for the memdir extension in real VS Code (code-server), driven through
// headless Chromium with playwright-core. Run by scripts/e2e-vscode.sh, which installs the .vsix,
// starts code-server on the fixture workspace and passes the paths below.
//
//   node scenario.js --url http://127.0.0.1:PORT --workspace DIR --out DIR --user-data DIR
//     --bare-python PY --env-python PY --project DIR --project-memory DIR --driver-dir DIR
//     [--chromium PATH]
//
// The server runs on the memdir-lsp the .vsix bundles, with --bare-python (a Python with nothing
// installed); the last step switches to memdir.importStrategy fromEnvironment with --env-python
// (memdir with the [mcp] extra) and has VS Code start the `memdir mcp` server offered there.
//
// Each step is recorded in OUT/report.json with its outcome and timing; a failing step takes a
// screenshot (fail-<step>.png) and the scenario goes on, so one run shows every broken step.
// Steps that depend on a failed one fail too, and say so. Exit code 1 when any step failed.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { chromium } = require('playwright-core');

function parseArgs(argv) {
  const args = {};
  for (let i = 0; i < argv.length; i += 2) {
    args[argv[i].replace(/^--/, '')] = argv[i + 1];
  }
  for (const key of ['url', 'workspace', 'out', 'user-data', 'bare-python', 'env-python', 'project', 'project-memory', 'driver-dir']) {
    if (!args[key]) {
      throw new Error(`missing --${key}`);
    }
  }
  return args;
}

const args = parseArgs(process.argv.slice(2));
const OUT = args.out;
const WORKSPACE = args.workspace;
const t0 = Date.now();
const steps = [];
const facts = {};

function lap(message) {
  console.log(`[${String(Date.now() - t0).padStart(6)} ms] ${message}`);
}

/** The extension's own start-failure messages in its log (launch.ts says each). */
const START_FAILURE = /\[error\] ((?:memdir-lsp|The Python interpreter|The memdir-lsp|memdir (?:is not installed|needs Python|does not import)|Checking |"\S+ --version").*)/;

/** Thrown inside an `until` callback to stop waiting at once. */
class Abort extends Error {}

/** Poll `fn` until it returns a truthy value or `timeoutMs` passes. */
async function until(what, fn, timeoutMs = 30000, intervalMs = 250) {
  const end = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      last = await fn();
      if (last) {
        return last;
      }
    } catch (error) {
      if (error instanceof Abort) {
        throw error;
      }
      last = error;
    }
    if (Date.now() > end) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last instanceof Error ? ` (${last.message.split('\n')[0]})` : ''}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** The extension's LogOutputChannel file, written by the extension host under user-data/logs. */
function memdirLogText() {
  return memdirLogFiles().map((f) => fs.readFileSync(f, 'utf8')).join('\n');
}

/** The paths of those files: one per extension host (a reloaded window starts another). */
function memdirLogFiles() {
  const root = path.join(args['user-data'], 'logs');
  const found = [];
  const walk = (dir) => {
    let entries;
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        walk(full);
      } else if (/memdir\.log$/.test(entry.name)) {
        found.push(full);
      }
    }
  };
  walk(root);
  return found;
}

(async () => {
  const browser = await chromium.launch({
    executablePath: args.chromium || '/usr/bin/chromium',
    headless: true,
    // The machine has no network but the registries: without these flags Chromium keeps trying
    // to reach Google's hosts.
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.on('console', (m) => {
    if (m.type() === 'error' && !/open-vsx|ENOTFOUND|404|Failed to load resource/.test(m.text())) {
      console.log('[browser error]', m.text().slice(0, 200));
    }
  });
  const shot = async (name) => {
    const file = path.join(OUT, `${name}.png`);
    await page.screenshot({ path: file });
    return file;
  };

  /**
   * Run one step. `knownIssue` names a bug tracked elsewhere: the step still runs and a failure is
   * reported (KNOWN, in report.json and the summary) but does not fail the run. Remove the flag
   * once the bug is fixed, so a regression fails again.
   */
  async function step(name, fn, { dependsOn = [], knownIssue } = {}) {
    const failedDeps = dependsOn.filter((d) => !steps.find((s) => s.name === d && s.ok));
    const started = Date.now();
    if (failedDeps.length) {
      steps.push({ name, ok: false, ms: 0, error: `not run: depends on ${failedDeps.join(', ')}` });
      lap(`FAIL ${name}: not run (depends on ${failedDeps.join(', ')})`);
      return;
    }
    try {
      const detail = await fn();
      steps.push({ name, ok: true, ms: Date.now() - started, ...(detail ? { detail } : {}) });
      lap(`ok   ${name}${detail ? `: ${JSON.stringify(detail).slice(0, 300)}` : ''}`);
    } catch (error) {
      const message = String(error && error.message ? error.message : error).split('\n')[0];
      let screenshot;
      try {
        screenshot = await shot(`fail-${name}`);
      } catch {
        // the page may be gone
      }
      if (knownIssue) {
        steps.push({ name, ok: true, knownIssue, ms: Date.now() - started, error: message, screenshot });
        lap(`KNOWN ${name}: ${message} (${knownIssue})`);
      } else {
        steps.push({ name, ok: false, ms: Date.now() - started, error: message, screenshot });
        lap(`FAIL ${name}: ${message}`);
      }
      // Leave any open widget so the next step starts from a clean editor.
      await page.keyboard.press('Escape').catch(() => undefined);
    }
  }

  async function runCommand(title) {
    await page.keyboard.press('F1');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible', timeout: 10000 });
    await input.fill(`>${title}`);
    const row = page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first();
    await row.waitFor({ timeout: 15000 });
    await page.keyboard.press('Enter');
  }

  async function quickOpen(fileName) {
    await page.keyboard.press('Control+P');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible', timeout: 10000 });
    await input.fill(fileName);
    await page.locator(`.quick-input-list .monaco-list-row[aria-label*="${fileName}"]`).first().waitFor({ timeout: 15000 });
    await page.keyboard.press('Enter');
    await page.locator(`.tab[aria-label*="${fileName}"]`).first().waitFor({ timeout: 15000 });
  }

  /** Right-click a memory in the Memories view and choose a context-menu action. */
  /**
   * Run a Memories view context-menu action on the row labelled `label`, until `outcome` (a
   * locator for what the action shows) appears. Under load (CI runs this after the whole pytest
   * suite on two cores) a right-click or a menu click is now and then lost while the view
   * re-renders; every action used here only shows a prompt or moves the focus until confirmed,
   * so running it again is safe.
   */
  async function treeContextAction(label, action, outcome, attempts = 3) {
    await runCommand('Memories: Focus on Memories View');
    const rows = page.locator('.part.sidebar .monaco-list-row');
    await until(`${label} in the Memories view`, async () => (await rows.allInnerTexts()).some((t) => t.includes(label)), 15000);
    let lastError;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      try {
        await openRowMenuAndPick(rows, label, action);
        await outcome.waitFor({ state: 'visible', timeout: 8000 });
        return;
      } catch (error) {
        lastError = error;
        lap(`  ${action} on ${label}: attempt ${attempt} failed (${String(error.message || error).split('\n')[0]})`);
        await page.keyboard.press('Escape');
        await page.waitForTimeout(500);
      }
    }
    throw new Error(`${action} on ${label} showed nothing after ${attempts} attempts: ${lastError && lastError.message}`);
  }

  async function openRowMenuAndPick(rows, label, action) {
    // The view refreshes (debounced) after every change, and the list reuses row elements: let a
    // pending refresh land, then make sure the menu opened on the intended row.
    await page.waitForTimeout(1200);
    await rows.filter({ hasText: label }).first().click({ button: 'right' });
    const focused = await page.locator('.part.sidebar .monaco-list-row.focused').first().innerText();
    if (!focused.includes(label)) {
      throw new Error(`the context menu opened on "${focused}" instead of ${label}`);
    }
    const item = page.locator('.context-view .action-label', { hasText: action }).first();
    await item.waitFor({ state: 'visible', timeout: 10000 });
    // A click that lands while the menu is still settling is sometimes dropped; the hovered item
    // is then focused, so Enter picks it.
    await item.hover();
    await page.waitForTimeout(150);
    await item.click();
    await page.waitForTimeout(300);
    if (await page.locator('.context-view .monaco-menu').first().isVisible().catch(() => false)) {
      await page.keyboard.press('Enter');
    }
  }

  async function goToLine(line) {
    await page.keyboard.press('Control+G');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible', timeout: 10000 });
    await input.fill(`:${line}`);
    await page.keyboard.press('Enter');
  }

  // A key for the extension's internal (not contributed) language-model tools self-check; the
  // workbench reads keybindings.json when it loads.
  const LM_SELF_CHECK_KEY = 'Control+Shift+Alt+9';
  fs.writeFileSync(path.join(args['user-data'], 'User', 'keybindings.json'), JSON.stringify([{
    key: 'ctrl+shift+alt+9',
    command: 'memdir.lmTools.selfCheck',
    args: 'Can I merge the payments migration cohort flip to trunk during the release freeze?',
  }], null, 2));

  // The test-only driver (client-vscode/e2e/driver) of the window on show: it asks the VS Code
  // API in that window's extension host. Each window's driver writes its port to this file.
  const DRIVER_PORT_FILE = path.join(args['driver-dir'], 'port');
  let driverPort;
  const driver = async (op, params = {}) => {
    const response = await fetch(`http://127.0.0.1:${driverPort}/`, { method: 'POST', body: JSON.stringify({ op, ...params }) });
    const answer = await response.json();
    if (!answer.ok) {
      throw new Error(`${op}: ${answer.error}`);
    }
    return answer.result;
  };
  const MEMORY_TOOL = 'memdir_memory';

  /**
   * A language-model tool's text answer, called through the driver (vscode.lm.invokeTool outside
   * a chat). A command that asks for confirmation shows VS Code's modal dialog first: with
   * `confirm` (its title) the scenario waits for it and answers Yes, as a user would.
   */
  async function invokeTool(name, input, confirm) {
    const answer = driver('tool', { name, input });
    answer.catch(() => undefined); // awaited below; a dialog that never shows must not leave it unhandled
    if (confirm) {
      const dialog = page.locator('.monaco-dialog-box', { hasText: confirm });
      await dialog.waitFor({ state: 'visible', timeout: 30000 });
      await dialog.locator('.dialog-buttons .monaco-button', { hasText: /^Yes$/ }).click();
    }
    return answer;
  }

  const indexPath = path.join(WORKSPACE, 'MEMORY.md');
  const originalIndex = fs.readFileSync(indexPath, 'utf8');
  const originalFiles = new Set(fs.readdirSync(WORKSPACE));
  const PARAGRAPH = 'The staging database is reset every Sunday at 03:00 UTC';

  try {
    await step('workbench loads', async () => {
      await page.goto(`${args.url}/?folder=${encodeURIComponent(WORKSPACE)}`);
      await page.waitForSelector('.monaco-workbench', { timeout: 60000 });
      await page.waitForSelector('.explorer-folders-view, .explorer-viewlet', { timeout: 60000 });
      await shot('vscode-workbench');
    });

    await step('extension activates and the language client starts', async () => {
      const text = await until('"memdir-lsp started" in the memdir output channel', () => {
        const log = memdirLogText();
        // Fail fast on the extension's own start-failure message instead of waiting it out.
        const failure = START_FAILURE.exec(log);
        if (failure) {
          throw new Abort(`the server did not start: ${failure[1]}`);
        }
        return /memdir-lsp started/.test(log) ? log : undefined;
      }, 60000);
      const version = /memdir-lsp (\d+\.\d+\.\d+\S*) found/.exec(text);
      // The .vsix's own server, run by a Python that has nothing installed.
      const launch = /memdir-lsp bundled with the extension \(Python from setting\): (\S+) (\S+)/.exec(text);
      if (!launch || launch[1] !== args['bare-python'] || !launch[2].endsWith('/bundled/tool/memdir_lsp_bundled.py')) {
        throw new Error(`the server is not the bundled one run by ${args['bare-python']}: ${(/memdir-lsp (?:bundled|from|executable).*/.exec(text) || ['no launch line'])[0]}`);
      }
      return { serverVersion: version && version[1], python: launch[1], launcher: launch[2] };
    }, { dependsOn: ['workbench loads'] });

    await step('Memories view lists the memories', async () => {
      await runCommand('Memories: Focus on Memories View');
      const sidebar = page.locator('.part.sidebar');
      // Widen the side bar so the badges after each memory are readable in the screenshot.
      const box = await sidebar.boundingBox();
      if (box && box.width < 450) {
        await page.mouse.move(box.x + box.width + 1, box.y + box.height / 2);
        await page.mouse.down();
        await page.mouse.move(box.x + 540, box.y + box.height / 2, { steps: 5 });
        await page.mouse.up();
        await page.mouse.move(900, 300);
      }
      const expected = ['release-merge-freeze', 'feedback-terse-answers', 'project-payments-migration'];
      const rows = await until('memories in the Memories view', async () => {
        const texts = await sidebar.locator('.monaco-list-row').allInnerTexts();
        return expected.every((name) => texts.some((t) => t.includes(name))) ? texts : undefined;
      }, 45000);
      facts.treeRows = rows.map((r) => r.replace(/\s+/g, ' ').trim());
      // The orphan and the long runbook carry their visibility badges.
      const payments = facts.treeRows.find((r) => r.includes('project-payments-migration')) || '';
      if (!/not in index/.test(payments) || !/truncated/.test(payments)) {
        throw new Error(`project-payments-migration lacks its badges: "${payments}"`);
      }
      // Its tooltip explains each badge (documentation screenshot).
      await sidebar.locator('.monaco-list-row', { hasText: 'project-payments-migration' }).first().hover();
      await page.locator('.monaco-hover, .workbench-hover', { hasText: 'Not linked from MEMORY.md' }).first()
        .waitFor({ timeout: 8000 }).catch(() => undefined);
      await shot('vscode-memories-view');
      await page.mouse.move(900, 500);
      return { rows: facts.treeRows };
    }, { dependsOn: ['extension activates and the language client starts'] });

    await step('status bar shows the index budget on MEMORY.md', async () => {
      await quickOpen('MEMORY.md');
      const item = page.locator('.statusbar-item', { hasText: /\d+\/200 lines · \d+%/ }).first();
      await item.waitFor({ timeout: 30000 });
      const text = (await item.innerText()).trim();
      await item.hover();
      await page.locator('.monaco-hover, .workbench-hover', { hasText: 'load cap' }).first()
        .waitFor({ timeout: 8000 }).catch(() => undefined);
      await shot('vscode-status-bar');
      await page.mouse.move(900, 300);
      return { text };
    }, { dependsOn: ['extension activates and the language client starts'] });

    await step('Problems panel shows the diagnostics of MEMORY.md', async () => {
      await page.keyboard.press('Control+Shift+M');
      const rows = await until('memdir diagnostics in the Problems panel', async () => {
        const texts = await page.locator('.markers-panel .monaco-list-row').allInnerTexts();
        const flat = texts.map((t) => t.replace(/\s+/g, ' ').trim());
        // The over-long index line (line 3) and the content paragraph (line 6) are both flagged.
        return flat.some((t) => /memdir/.test(t) && /\[Ln 3,/.test(t)) && flat.some((t) => /memdir/.test(t) && /\[Ln 6,/.test(t)) ? flat : undefined;
      }, 45000);
      facts.problems = rows;
      await shot('vscode-problems');
      return { rows };
    }, { dependsOn: ['status bar shows the index budget on MEMORY.md'] });

    await step('"Move to topic file" moves the content paragraph', async () => {
      await page.locator('.monaco-editor .view-lines').first().click();
      const action = page.locator('.action-widget .monaco-list-row', { hasText: /topic file/i }).first();
      // Code actions are asked for when the menu opens; right after a re-lint the first request
      // can come back empty, so ask again a few times.
      for (let attempt = 1; ; attempt++) {
        await goToLine(6);
        await page.keyboard.press('Control+.');
        try {
          await action.waitFor({ timeout: 5000 });
          break;
        } catch (error) {
          if (attempt === 4) {
            throw error;
          }
          await page.keyboard.press('Escape');
        }
      }
      const titles = await page.locator('.action-widget .monaco-list-row').allInnerTexts();
      await shot('vscode-quickfix');
      await action.click();
      // The edit lands in editor buffers (MEMORY.md and the new file): save them all.
      await page.waitForTimeout(500);
      await runCommand('File: Save All');
      const created = await until('a new topic file with the paragraph on disk', () => {
        const added = fs.readdirSync(WORKSPACE).filter((f) => !originalFiles.has(f) && f.endsWith('.md'));
        return added.find((f) => fs.readFileSync(path.join(WORKSPACE, f), 'utf8').includes(PARAGRAPH));
      }, 20000);
      // The paragraph's lines leave MEMORY.md (its first words may live on in the new entry's title).
      const paragraphLines = originalIndex.split('\n').slice(5, 7);
      const index = await until('MEMORY.md saved without the paragraph', () => {
        const lines = fs.readFileSync(indexPath, 'utf8').split('\n');
        return paragraphLines.every((p) => !lines.includes(p)) ? lines.join('\n') : undefined;
      }, 20000);
      const topic = fs.readFileSync(path.join(WORKSPACE, created), 'utf8');
      // Nothing is lost: both lines of the paragraph, verbatim, in the new file.
      const paragraph = paragraphLines.join('\n');
      if (!topic.includes(paragraph)) {
        throw new Error(`${created} does not hold the paragraph verbatim`);
      }
      const link = index.split('\n').find((l) => l.includes(`](${created})`));
      if (!link) {
        throw new Error(`MEMORY.md has no index line linking ${created}`);
      }
      if (link.length > 150) {
        throw new Error(`the new index line is ${link.length} characters long`);
      }
      if (!/^---\n[\s\S]*?\bname:[\s\S]*?\bdescription:[\s\S]*?\btype:[\s\S]*?\n---\n/.test(topic)) {
        throw new Error(`${created} has no frontmatter with name, description and type`);
      }
      return { actions: titles.map((t) => t.trim()), created, indexLine: link };
    }, { dependsOn: ['Problems panel shows the diagnostics of MEMORY.md'] });

    await step('Memories view shows the new memory', async () => {
      const created = steps.find((s) => s.name.startsWith('"Move to topic file"')).detail.created;
      const stem = created.replace(/\.md$/, '');
      await runCommand('Memories: Focus on Memories View');
      await until(`${stem} in the Memories view`, async () => {
        const texts = await page.locator('.part.sidebar .monaco-list-row').allInnerTexts();
        return texts.some((t) => t.includes(stem) || t.toLowerCase().includes('staging'));
      }, 30000);
    }, { dependsOn: ['"Move to topic file" moves the content paragraph'] });

    await step('status bar click opens the cut-off report', async () => {
      await quickOpen('MEMORY.md');
      const report = page.locator('.tab', { hasText: 'cut-off report' }).first();
      // The item re-renders when the budget changes; a click during a re-render is lost: retry.
      await until('the cut-off report tab', async () => {
        await page.locator('.statusbar-item', { hasText: /\d+\/200 lines · \d+%/ }).first().click();
        await report.waitFor({ timeout: 4000 });
        return true;
      }, 20000, 100);
      const text = await until('the report text', async () => {
        // Monaco renders spaces as no-break spaces.
        const lines = (await page.locator('.editor-group-container.active .view-lines').first().innerText()).replace(/\u00a0/g, ' ');
        // Only the lines on screen are in the DOM: check the head of the report.
        return /MEMORY\.md cut-off report/.test(lines) && /(Within|Near|Past) the cap/.test(lines) ? lines : undefined;
      }, 15000);
      await runCommand('View: Close All Editors');
      return { verdict: (/\*\*(Within|Near|Past) the cap\*\*[^\n]*/.exec(text) || [''])[0] };
    }, { dependsOn: ['status bar shows the index budget on MEMORY.md'] });

    await step('New Memory creates the topic file and its index line', async () => {
      await runCommand('memdir: New Memory…');
      const widget = page.locator('.quick-input-widget');
      const input = widget.locator('input');
      await widget.locator('.quick-input-list .monaco-list-row', { hasText: 'feedback' }).first().waitFor({ timeout: 15000 });
      await input.fill('feedback');
      await page.keyboard.press('Enter');
      await widget.getByText('New memory (2/3)').waitFor({ timeout: 10000 });
      await input.fill('Small pull requests');
      await page.keyboard.press('Enter');
      await widget.getByText('New memory (3/3)').waitFor({ timeout: 10000 });
      await input.fill('keep pull requests under 300 lines and put the reason first');
      await page.keyboard.press('Enter');
      const file = path.join(WORKSPACE, 'small-pull-requests.md');
      const text = await until('small-pull-requests.md on disk', () => fs.existsSync(file) && fs.readFileSync(file, 'utf8'), 15000);
      if (!text.startsWith('---\nname: small-pull-requests\ndescription: keep pull requests under 300 lines and put the reason first\ntype: feedback\n---\n')) {
        throw new Error(`unexpected frontmatter: ${JSON.stringify(text.slice(0, 200))}`);
      }
      const line = await until('its line in MEMORY.md on disk', () =>
        fs.readFileSync(indexPath, 'utf8').split('\n').find((l) => l.startsWith('- [Small pull requests](small-pull-requests.md) — ')), 15000);
      await page.locator('.tab[aria-label*="small-pull-requests.md"]').first().waitFor({ timeout: 10000 });
      await runCommand('View: Close All Editors');
      await runCommand('Memories: Focus on Memories View');
      // The view shows each memory's name: the ASCII slug memdir gives new memories.
      await until('small-pull-requests in the Memories view', async () =>
        (await page.locator('.part.sidebar .monaco-list-row').allInnerTexts()).some((t) => t.includes('small-pull-requests')), 15000);
      return { indexLine: line };
    }, { dependsOn: ['extension activates and the language client starts'] });

    await step('Rename from the Memories view updates the index link', async () => {
      const input = page.locator('.quick-input-widget input');
      await treeContextAction('feedback-terse-answers', 'Rename…', input);
      await input.fill('feedback-short-answers.md');
      await page.keyboard.press('Enter');
      // VS Code asks before applying the server's link updates (a file-move participant).
      const dialog = page.locator('.monaco-dialog-box', { hasText: 'refactoring changes' });
      await dialog.waitFor({ timeout: 15000 });
      await shot('vscode-rename-confirm');
      await dialog.locator('.monaco-button', { hasText: /^OK$/ }).click();
      await until('the renamed file on disk', () =>
        fs.existsSync(path.join(WORKSPACE, 'feedback-short-answers.md')) && !fs.existsSync(path.join(WORKSPACE, 'feedback-terse-answers.md')), 15000);
      // The server answers workspace/willRenameFiles with an edit of every link; the extension saves it.
      const line = await until('MEMORY.md linking the new name on disk', () =>
        fs.readFileSync(indexPath, 'utf8').split('\n').find((l) => l.includes('](feedback-short-answers.md)')), 15000);
      await runCommand('View: Close All Editors');
      return { indexLine: line };
    }, { dependsOn: ['Memories view lists the memories'] });

    await step('Reveal in MEMORY.md selects the entry', async () => {
      await treeContextAction('release-merge-freeze', 'Reveal in MEMORY.md', page.locator('.tab.active[aria-label*="MEMORY.md"]').first());
      // The status bar shows the cursor on the entry's line (line 3 of the fixture).
      const position = page.locator('.statusbar-item', { hasText: /Ln 3, Col/ }).first();
      await position.waitFor({ timeout: 10000 });
      const text = (await position.innerText()).trim();
      await runCommand('View: Close All Editors');
      return { cursor: text };
    }, { dependsOn: ['Memories view lists the memories'] });

    await step('Delete moves a memory out of the directory', async () => {
      const confirm = page.locator('.monaco-dialog-box', { hasText: 'to the trash?' });
      await treeContextAction('small-pull-requests', 'Delete (Move to Trash)', confirm);
      await confirm.locator('.monaco-button', { hasText: 'Move to Trash' }).click();
      const file = path.join(WORKSPACE, 'small-pull-requests.md');
      const others = fs.readdirSync(WORKSPACE).filter((f) => f !== 'small-pull-requests.md');
      let permanent = false;
      await until('small-pull-requests.md gone from disk', async () => {
        // A host without a trash makes the extension ask before deleting for good.
        const fallback = page.locator('.monaco-dialog-box', { hasText: 'Delete it permanently?' });
        if (await fallback.count()) {
          permanent = true;
          await fallback.locator('.monaco-button', { hasText: 'Delete Permanently' }).click();
        }
        return !fs.existsSync(file);
      }, 15000);
      await until('the memory gone from the view', async () =>
        !(await page.locator('.part.sidebar .monaco-list-row').allInnerTexts()).some((t) => t.includes('Small pull requests')), 15000);
      const missing = others.filter((f) => !fs.existsSync(path.join(WORKSPACE, f)));
      if (missing.length) {
        throw new Error(`other files vanished: ${missing.join(', ')}`);
      }
      return { trash: !permanent };
    }, { dependsOn: ['New Memory creates the topic file and its index line'] });

    await step('diagnostics of the moved topic file stay in step with the file on disk', async () => {
      const created = steps.find((s) => s.name.startsWith('"Move to topic file"')).detail.created;
      await runCommand('View: Close All Editors');
      await page.keyboard.press('Control+Shift+M');
      // The file on disk has frontmatter; a "no frontmatter" finding would be a stale lint of the
      // empty file the CreateFile operation made before its text was inserted, left in the
      // Problems panel when a workspace diagnostic pull landed in that moment and no later report
      // cleared it (regression test: tests/lsp/test_diagnostics_file_sync.py). Checked after the
      // rename, new memory and delete steps, which make the server re-lint the directory.
      await page.waitForTimeout(3000);
      const rows = await until('the Problems panel without a stale finding on the new file', async () => {
        const texts = (await page.locator('.markers-panel .monaco-list-row').allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim());
        const i = texts.findIndex((t) => t.startsWith(created));
        const stale = i >= 0 && texts.slice(i + 1).findIndex((t) => /MEM101/.test(t)) === 0;
        return stale ? undefined : texts;
      }, 15000);
      return { rows };
    }, { dependsOn: ['"Move to topic file" moves the content paragraph'] });

    await step('Lint All reports the problems of every memory dir', async () => {
      await runCommand('memdir: Lint All Memory Directories');
      const toast = page.locator('.notification-toast', { hasText: /memdir: .* in 1 memory directory/ }).first();
      await toast.waitFor({ timeout: 20000 });
      const text = (await toast.innerText()).replace(/\s+/g, ' ').trim();
      await page.locator('.markers-panel').first().waitFor({ state: 'visible', timeout: 10000 });
      await runCommand('Notifications: Clear All Notifications').catch(() => undefined);
      return { text };
    }, { dependsOn: ['Problems panel shows the diagnostics of MEMORY.md'] });

    await step('agent mode: vscode.lm lists memdir\'s tools, invokeTool returns a recall and dedupes it per session', async () => {
      // The extension's internal self-check command (bound to a key in keybindings.json above)
      // asks VS Code itself: vscode.lm.tools, then vscode.lm.invokeTool('memdir_recall') twice
      // with one query and no chat token (so in the window's session). The answers land in the
      // memdir output channel. The key is pressed again only while no run is in flight: a second
      // run would find the memory already recalled.
      const listed = /lm\.tools lists: (\[.*\])/;
      const invoked = /lm\.invokeTool memdir_recall twice: (\[.*\])/;
      const count = (log, re) => (log.match(re) || []).length;
      const text = await until('the self-check in the memdir output channel', async () => {
        const log = memdirLogText();
        if (invoked.test(log)) {
          return log;
        }
        if (count(log, /lm self-check started/g) > count(log, /lm self-check failed/g)) {
          return undefined;
        }
        await page.keyboard.press(LM_SELF_CHECK_KEY);
        await page.waitForTimeout(3000);
        return undefined;
      }, 45000, 100);
      const tools = JSON.parse(listed.exec(text)[1]);
      const [recall, again] = JSON.parse(invoked.exec(text)[1]);
      for (const name of ['memdir_recall', 'memdir_search', 'memdir_memory']) {
        if (!tools.includes(name)) {
          throw new Error(`vscode.lm.tools lacks ${name}: ${JSON.stringify(tools)}`);
        }
      }
      if (!recall.includes('Trunk freezes once a mobile build is submitted')) {
        throw new Error(`memdir_recall did not return the release-freeze memory: ${recall.slice(0, 300)}`);
      }
      if (!again.startsWith('Nothing new recalled for this message') || again.includes('Trunk freezes')) {
        throw new Error(`the second memdir_recall in the same session recalled again: ${again.slice(0, 300)}`);
      }
      // The memory tool is memdir's own: the bundled server answers it with the API's listing.
      const memoryView = /lm\.invokeTool memdir_memory view: (".*")/.exec(text);
      const viewAnswer = memoryView ? JSON.parse(memoryView[1]) : '';
      if (!viewAnswer.startsWith("Here're the files and directories up to 2 levels deep in /memories") || !viewAnswer.includes('\t/memories/MEMORY.md')) {
        throw new Error(`memdir_memory view on the bundled server: ${viewAnswer.slice(0, 300)}`);
      }
      // The bundle has no MCP SDK and the bare Python none either: nothing is offered, and the
      // log says once how to get it (the last step covers a Python that has it).
      if (!/MCP server definition provider registered/.test(text)) {
        throw new Error('the MCP server definition provider was not registered');
      }
      const definitions = JSON.parse(/MCP server definitions: (\[.*\])/.exec(text)[1]);
      if (definitions.length) {
        throw new Error(`memdir mcp offered by a Python without the MCP SDK: ${JSON.stringify(definitions)}`);
      }
      const notOffered = /memdir mcp is not offered to agent mode: (.*)/.exec(text);
      if (!notOffered || !notOffered[1].includes(`${args['bare-python']} cannot import mcp`)) {
        throw new Error(`no log line says why memdir mcp is not offered: ${notOffered ? notOffered[0] : ''}`);
      }
      return { tools, recallChars: recall.length, again, memoryTool: viewAnswer.split('\n').length, mcpNotOffered: notOffered[1] };
    }, { dependsOn: ['extension activates and the language client starts'] });

    await step('agent mode: memdir_memory on the bundled server views files, and a create in a directory the server may not write in is refused (after VS Code\'s confirmation), naming the setting that allows it', async () => {
      // Through the test-only driver of this window: vscode.lm.invokeTool outside a chat, as
      // another extension calls a tool. The workspace is a folder that holds a MEMORY.md, neither
      // the agent's memory dir nor in memdir.directories: the server writes nothing there.
      driverPort = await until('the e2e driver of this window', () => fs.existsSync(DRIVER_PORT_FILE) && Number(fs.readFileSync(DRIVER_PORT_FILE, 'utf8')), 30000);
      const viewed = await invokeTool(MEMORY_TOOL, { command: 'view', path: '/memories/project-release-freeze.md', view_range: [1, 2] });
      if (viewed !== "Here's the content of /memories/project-release-freeze.md with line numbers:\n     1\t---\n     2\tname: release-merge-freeze") {
        throw new Error(`memdir_memory view of a file: ${JSON.stringify(viewed.slice(0, 300))}`);
      }
      const refused = await invokeTool(MEMORY_TOOL, { command: 'create', path: '/memories/e2e-lm-tool.md', file_text: 'refused\n' }, 'Change memory: create?');
      if (!refused.startsWith('Error: ') || !refused.includes('memdir.directories')) {
        throw new Error(`a create in the read-only workspace: ${JSON.stringify(refused.slice(0, 300))}`);
      }
      if (fs.existsSync(path.join(WORKSPACE, 'e2e-lm-tool.md'))) {
        throw new Error('the refused create wrote the file');
      }
      return { viewed: viewed.split('\n').length, refused };
    }, { dependsOn: ['extension activates and the language client starts'] });

    await step('recall preview renders the selection and the injected text', async () => {
      // Hide the bottom panel: the preview gets the whole editor area.
      await runCommand('View: Hide Panel').catch(() => undefined);
      await runCommand('memdir: Recall Preview');
      const outer = page.frameLocator('iframe.webview.ready');
      const frame = outer.frameLocator('iframe#active-frame');
      const query = frame.locator('#query');
      await query.waitFor({ timeout: 30000 });
      await query.fill('Can I merge the payments migration cohort flip to trunk during the release freeze?');
      await frame.locator('#submit').click();
      await frame.locator('[data-testid="trigger"]').waitFor({ timeout: 30000 });
      await until('the selection', async () => (await frame.locator('[data-testid="selected"], [data-testid="selected-none"], [data-testid="error"]').count()) > 0, 60000);
      const error = await frame.locator('[data-testid="error"]').allInnerTexts();
      if (error.length) {
        throw new Error(`the preview shows an error: ${error.join(' ')}`);
      }
      const trigger = (await frame.locator('[data-testid="trigger"]').innerText()).trim();
      const selected = await frame.locator('[data-testid="selected"] li').allInnerTexts();
      if (!selected.some((s) => s.includes('project-release-freeze.md'))) {
        throw new Error(`project-release-freeze.md not selected: ${JSON.stringify(selected)}`);
      }
      const injected = await frame.locator('[data-testid="attachment"], [data-testid="surfaced"]').allInnerTexts();
      if (!injected.join('\n').includes('Trunk freezes once a mobile build is submitted')) {
        throw new Error('the injected text does not show the memory body');
      }
      // The long runbook is cut at 4096 bytes: the preview marks where.
      if (!selected.some((s) => s.includes('project-payments-migration.md'))) {
        throw new Error(`project-payments-migration.md not selected: ${JSON.stringify(selected)}`);
      }
      const note = frame.locator('[data-testid="truncation-note"]').first();
      await note.waitFor({ timeout: 5000 });
      const manifest = await frame.locator('[data-testid="manifest"]').count();
      // "Why (not)?": the server's explanation of each candidate, shown as sent.
      await until('the explanations', async () => (await frame.locator('[data-testid="explanation"]').count()) > 0, 30000);
      const verdicts = await frame.locator('[data-testid="explanation"]').evaluateAll((nodes) =>
        nodes.map((n) => [n.getAttribute('data-path'), n.getAttribute('data-verdict')]));
      const verdict = Object.fromEntries(verdicts);
      if (!['surfaced', 'selected'].includes(verdict['project-release-freeze.md'])) {
        throw new Error(`no "surfaced" explanation for project-release-freeze.md: ${JSON.stringify(verdicts)}`);
      }
      if (!Object.values(verdict).includes('not-selected')) {
        throw new Error(`no candidate explained as not selected: ${JSON.stringify(verdicts)}`);
      }
      await shot('vscode-recall-preview');
      await note.scrollIntoViewIfNeeded();
      await shot('vscode-recall-preview-truncated');
      return { trigger, selected: selected.map((s) => s.replace(/\s+/g, ' ').trim()), truncationMarked: true, manifestShown: manifest > 0, explained: verdicts.length };
    }, { dependsOn: ['extension activates and the language client starts'] });

    await step('Restart server command restarts the language client', async () => {
      const before = (memdirLogText().match(/memdir-lsp started/g) || []).length;
      await runCommand('memdir: Restart Language Server');
      await until('a second "memdir-lsp started"', () => (memdirLogText().match(/memdir-lsp started/g) || []).length > before, 45000);
      // The recall preview still works: memory/relevantMemories now comes from the new client,
      // whose handler replaced the disposed one (a stale handler would never fire).
      await runCommand('View: Open Next Editor').catch(() => undefined);
      const frame = page.frameLocator('iframe.webview.ready').frameLocator('iframe#active-frame');
      await frame.locator('#query').fill('What is the release merge freeze?');
      await frame.locator('#submit').click();
      await until('a selection from the restarted server', async () =>
        (await frame.locator('[data-testid="query"]').innerText()).includes('What is the release merge freeze?') &&
        (await frame.locator('[data-testid="selected"], [data-testid="selected-none"]').count()) > 0, 30000);
      const errors = await frame.locator('[data-testid="error"]').allInnerTexts();
      if (errors.length) {
        throw new Error(`recall after restart: ${errors.join(' ')}`);
      }
      return { selectedAfterRestart: (await frame.locator('[data-testid="selected"] li').allInnerTexts()).map((s) => s.split(' — ')[0].trim()) };
    }, { dependsOn: ['recall preview renders the selection and the injected text'] });

    await step('agent mode: with memdir.importStrategy fromEnvironment (a Python with the [mcp] extra), VS Code starts the offered memdir mcp server and calls its recall tool', async () => {
      // The settings switch a user makes: the extension restarts the server from that Python's
      // environment, which has memdir's [mcp] extra, so `memdir mcp` is offered. The self-check
      // then has VS Code start it (workbench.mcp.startServer), list its memory_recall in
      // vscode.lm.tools and invoke it through VS Code's tool service.
      const machineSettings = path.join(args['user-data'], 'Machine', 'settings.json');
      fs.writeFileSync(machineSettings, JSON.stringify({
        'memdir.server.python': args['env-python'],
        'memdir.importStrategy': 'fromEnvironment',
      }, null, 2));
      const since = () => {
        const all = memdirLogText();
        const at = all.lastIndexOf('memdir launch settings changed: restarting the server');
        return at < 0 ? '' : all.slice(at);
      };
      const offered = /memdir mcp for agent mode: (.*)/;
      await until('the restart from the environment', () => {
        const log = since();
        const failure = START_FAILURE.exec(log);
        if (failure) {
          throw new Abort(`the server did not restart: ${failure[1]}`);
        }
        return /memdir-lsp from the Python environment/.test(log) && /memdir-lsp started/.test(log) && offered.test(log);
      }, 60000);
      const expected = `${args['env-python']} -P -m memdir mcp`;
      if (offered.exec(since())[1] !== expected) {
        throw new Error(`memdir mcp offered as "${offered.exec(since())[1]}", not "${expected}"`);
      }
      const listedMcp = /MCP tools in lm\.tools after workbench\.mcp\.startServer: (\[.*\])/;
      const invokedMcp = /lm\.invokeTool (\S*memory_recall): (".*")/;
      const count = (log, re) => (log.match(re) || []).length;
      // VS Code learns of the new definition from the provider's change event, asynchronously: a
      // self-check that ran before it did finds no MCP tool and is run again (at most 3 runs).
      let presses = 0;
      const text = await until('the MCP part of the self-check', async () => {
        const log = since();
        if (invokedMcp.test(log)) {
          return log;
        }
        const ended = count(log, /lm self-check (?:failed|done): /g);
        if (count(log, /lm self-check started/g) > ended) {
          return undefined; // a run in flight
        }
        const last = [...log.matchAll(/lm self-check (?:failed|done): (.*)/g)].pop();
        if (last && (ended >= 3 || !/no MCP memory_recall tool/.test(last[1]))) {
          const tools = [...log.matchAll(new RegExp(listedMcp, 'g'))].pop();
          throw new Abort(`${last[1]}${tools ? `; MCP tools: ${tools[1]}` : ''}`);
        }
        if (presses >= 6) {
          throw new Abort('the self-check key started no run');
        }
        presses += 1;
        await page.keyboard.press(LM_SELF_CHECK_KEY);
        await page.waitForTimeout(3000);
        return undefined;
      }, 120000, 250);
      const definitions = JSON.parse(/MCP server definitions: (\[.*\])/.exec(text)[1]);
      const mine = definitions.find((d) => d.command === args['env-python'] && d.args.join(' ') === `-P -m memdir mcp --dir ${WORKSPACE}`);
      if (!mine) {
        throw new Error(`no memdir mcp definition for the workspace: ${JSON.stringify(definitions)}`);
      }
      // With the environment's anthropic SDK the memory tool answers from the server.
      const memoryView = /lm\.invokeTool memdir_memory view: (".*")/.exec(text);
      const viewAnswer = memoryView ? JSON.parse(memoryView[1]) : '';
      if (!viewAnswer.includes('MEMORY.md')) {
        throw new Error(`memdir_memory view from the environment's server: ${viewAnswer.slice(0, 300)}`);
      }
      const mcpTools = JSON.parse([...text.matchAll(new RegExp(listedMcp, 'g'))].pop()[1]);
      const [, tool, answer] = invokedMcp.exec(text);
      const recall = JSON.parse(answer);
      if (!recall.includes('Trunk freezes once a mobile build is submitted')) {
        throw new Error(`${tool} did not return the release-freeze memory: ${recall.slice(0, 300)}`);
      }
      return { mcpDefinition: mine, mcpTools, tool, recallChars: recall.length };
    }, { dependsOn: ["agent mode: vscode.lm lists memdir's tools, invokeTool returns a recall and dedupes it per session"] });

    // --- Freshness, in a second window: the project (a git repository the script made, with a
    // committed `git mv` and a deleted file) is the workspace folder; its memory lives in the
    // agent's memory dir of that project under the throwaway CLAUDE_CONFIG_DIR. The steps ask
    // the VS Code API through the test-only driver extension (driver/), and wait on
    // vscode.languages.onDidChangeDiagnostics there, never on a timer.
    const PROJECT = args.project;
    const MEMORY_FILE = path.join(args['project-memory'], 'payments.md');
    const now = new Date();
    const TODAY = `${now.getFullYear()}-${String(now.getMonth() + 1).padStart(2, '0')}-${String(now.getDate()).padStart(2, '0')}`;
    const diagnosticsUntil = (until, timeoutMs = 30000) => driver('diagnostics', { file: MEMORY_FILE, until, timeoutMs });
    const FRESH = 'freshness: a git project opens with the agent memory dir of it';
    const FOUND = 'freshness: MEM117 names the path git shows renamed (vscode.languages.getDiagnostics)';

    await step(FRESH, async () => {
      // Back to the server the .vsix carries (the step before switched to the environment's).
      fs.writeFileSync(path.join(args['user-data'], 'Machine', 'settings.json'),
        JSON.stringify({ 'memdir.server.python': args['bare-python'] }, null, 2));
      const portFile = DRIVER_PORT_FILE;
      fs.rmSync(portFile, { force: true });
      const oldLogs = new Set(memdirLogFiles());
      await page.goto(`${args.url}/?folder=${encodeURIComponent(PROJECT)}`);
      await page.waitForSelector('.monaco-workbench', { timeout: 60000 });
      driverPort = await until('the e2e driver of the new window', () => fs.existsSync(portFile) && Number(fs.readFileSync(portFile, 'utf8')), 60000);
      const folders = await driver('folders');
      if (folders.length !== 1 || folders[0] !== PROJECT) {
        throw new Error(`workspace folders: ${JSON.stringify(folders)}`);
      }
      const opened = await driver('open', { file: MEMORY_FILE });
      // The new extension host's own log says which server it started.
      const launch = await until('the launch line of the new window', () => {
        for (const file of memdirLogFiles().filter((f) => !oldLogs.has(f))) {
          const line = /memdir-lsp (?:bundled with the extension|from the Python environment)[^\n]*/.exec(fs.readFileSync(file, 'utf8'));
          if (line) {
            return line[0];
          }
        }
        return undefined;
      }, 60000);
      if (!launch.startsWith('memdir-lsp bundled with the extension')) {
        throw new Error(`the window's server is not the bundled one: ${launch}`);
      }
      return { folders, memory: MEMORY_FILE, ...opened, launch };
    }, { dependsOn: ['workbench loads'] });

    await step(FOUND, async () => {
      const found = await diagnosticsUntil({ code: 'MEM117', includes: 'renamed to `src/payments.py`' }, 60000);
      const codes = found.map((d) => d.code);
      const deleted = found.find((d) => d.code === 'MEM117' && d.message.includes('src/old_refunds.py'));
      if (!deleted || !['MEM119', 'MEM120', 'MEM121'].every((c) => codes.includes(c)) || codes.includes('MEM118')) {
        throw new Error(`expected MEM117 twice, MEM119, MEM120 and MEM121, no MEM118: ${JSON.stringify(found)}`);
      }
      await shot('vscode-freshness');
      return { found: found.map((d) => `${d.code} ${d.line + 1}: ${d.message}`) };
    }, { dependsOn: [FRESH] });

    await step('freshness: the rename quick fix (vscode.executeCodeActionProvider) replaces the path and its finding clears', async () => {
      const fixed = await driver('fix', { file: MEMORY_FILE, code: 'MEM117', includes: 'src/app.py', title: '^Replace `src/app\\.py` with `src/payments\\.py`' });
      if (!fixed.isPreferred || !fixed.text.includes('Retries live in `src/payments.py`;') || fixed.text.includes('src/app.py')) {
        throw new Error(`after "${fixed.applied}" (preferred: ${fixed.isPreferred}): ${JSON.stringify(fixed.text)}`);
      }
      if (fs.readFileSync(MEMORY_FILE, 'utf8') !== fixed.text) {
        throw new Error('the fixed memory was not saved');
      }
      const found = await diagnosticsUntil({ code: 'MEM117', includes: 'src/app.py', present: false });
      if (!found.some((d) => d.code === 'MEM117' && d.message.includes('src/old_refunds.py'))) {
        throw new Error(`the deleted file's finding went too: ${JSON.stringify(found)}`);
      }
      return { offered: fixed.titles, applied: fixed.applied };
    }, { dependsOn: [FOUND] });

    await step('freshness: project files changed on disk make MEM118 and MEM117 appear and clear, with no edit of the memory (the project watcher)', async () => {
      const util = path.join(PROJECT, 'src', 'util.py');
      const kept = fs.readFileSync(util, 'utf8');
      const memoryBefore = fs.readFileSync(MEMORY_FILE, 'utf8');
      fs.writeFileSync(util, 'def charge_again(charge):\n    return charge\n');
      const removed = await diagnosticsUntil({ code: 'MEM118', includes: 'retry_payment' });
      fs.writeFileSync(util, kept);
      await diagnosticsUntil({ code: 'MEM118', present: false });
      const payments = path.join(PROJECT, 'src', 'payments.py');
      const source = fs.readFileSync(payments, 'utf8');
      fs.rmSync(payments);
      const deleted = await diagnosticsUntil({ code: 'MEM117', includes: 'src/payments.py' });
      fs.writeFileSync(payments, source);
      await diagnosticsUntil({ code: 'MEM117', includes: 'src/payments.py', present: false });
      if (fs.readFileSync(MEMORY_FILE, 'utf8') !== memoryBefore) {
        throw new Error('the memory changed');
      }
      return {
        removed: removed.find((d) => d.code === 'MEM118').message,
        deleted: deleted.find((d) => d.code === 'MEM117' && d.message.includes('src/payments.py')).message,
      };
    }, { dependsOn: [FOUND] });

    await step('freshness: "Mark verified today" writes last_verified: <today> and MEM120 clears', async () => {
      const fixed = await driver('fix', { file: MEMORY_FILE, code: 'MEM120', title: '^Mark verified today' });
      const disk = fs.readFileSync(MEMORY_FILE, 'utf8');
      if (!disk.includes(`\nlast_verified: ${TODAY}\n`) || disk.includes('2025-01-06')) {
        throw new Error(`after "${fixed.applied}": ${JSON.stringify(disk)}`);
      }
      await diagnosticsUntil({ code: 'MEM120', present: false });
      return { applied: fixed.applied };
    }, { dependsOn: [FOUND] });

    await step('freshness: the MEM119 fix turns "next Friday" into the date it meant', async () => {
      const fixed = await driver('fix', { file: MEMORY_FILE, code: 'MEM119', title: '^Replace “next Friday” with' });
      const disk = fs.readFileSync(MEMORY_FILE, 'utf8');
      const line = disk.split('\n').find((l) => l.startsWith('The refund API freeze'));
      if (!/^The refund API freeze is lifted \d{4}-\d{2}-\d{2}\.$/.test(line)) {
        throw new Error(`after "${fixed.applied}": ${JSON.stringify(line)}`);
      }
      await diagnosticsUntil({ code: 'MEM119', present: false });
      return { applied: fixed.applied, line };
    }, { dependsOn: [FOUND] });

    await step('freshness: hover (vscode.executeHoverProvider) on last_verified says when the memory was verified, on a cited path what the project has', async () => {
      const lines = (await driver('text', { file: MEMORY_FILE })).split('\n');
      const line = lines.findIndex((l) => l.startsWith('last_verified:'));
      const hover = (await driver('hover', { file: MEMORY_FILE, line, character: 3 })).join('\n');
      const verified = /last_verified: (\S+)/.exec(lines[line])[1];
      if (!hover.includes(verified) || !/verified/i.test(hover)) {
        throw new Error(`hover on line ${line + 1}: ${JSON.stringify(hover)}`);
      }
      // A cited path: what the project has of it.
      const cited = lines.findIndex((l) => l.includes('`src/payments.py`'));
      const pathHover = (await driver('hover', { file: MEMORY_FILE, line: cited, character: lines[cited].indexOf('src/payments.py') + 4 })).join('\n');
      if (!pathHover.includes('src/payments.py')) {
        throw new Error(`hover on the cited path: ${JSON.stringify(pathHover)}`);
      }
      return { hover: hover.slice(0, 300), pathHover: pathHover.slice(0, 300) };
    }, { dependsOn: [FOUND] });

    await step('agent mode: memdir_memory on the bundled server creates a memory in the agent\'s memory dir (after VS Code\'s confirmation), indexes it and views it', async () => {
      // The freshness window's server is the bundled one and its directory the project's agent
      // memory dir, which the server writes in.
      const text = '---\nname: e2e lm tool\ndescription: written through VS Code\'s memdir_memory tool\nmetadata:\n  type: project\n---\nWritten by the e2e scenario.\n';
      const created = await invokeTool(MEMORY_TOOL, { command: 'create', path: '/memories/e2e-lm-tool.md', file_text: text }, 'Change memory: create?');
      // The memory tool's own words, then what memdir did to MEMORY.md.
      if (!/^File created successfully at: \/memories\/e2e-lm-tool\.md; indexed in MEMORY\.md at line \d+ \(no need to add a line\)$/.test(created)) {
        throw new Error(`memdir_memory create: ${JSON.stringify(created.slice(0, 300))}`);
      }
      const written = path.join(args['project-memory'], 'e2e-lm-tool.md');
      if (!fs.existsSync(written) || fs.readFileSync(written, 'utf8') !== text) {
        throw new Error(`the created memory on disk: ${fs.existsSync(written) ? JSON.stringify(fs.readFileSync(written, 'utf8')) : 'missing'}`);
      }
      const indexLine = fs.readFileSync(path.join(args['project-memory'], 'MEMORY.md'), 'utf8').split('\n').find((l) => l.includes('(e2e-lm-tool.md)'));
      if (!indexLine) {
        throw new Error('MEMORY.md has no line for the created memory');
      }
      const viewed = await invokeTool(MEMORY_TOOL, { command: 'view', path: '/memories/e2e-lm-tool.md', view_range: [7, -1] });
      if (viewed !== "Here's the content of /memories/e2e-lm-tool.md with line numbers:\n     7\tWritten by the e2e scenario.\n     8\t") {
        throw new Error(`memdir_memory view of the created memory: ${JSON.stringify(viewed.slice(0, 300))}`);
      }
      return { created, indexLine };
    }, { dependsOn: [FRESH] });
  } finally {
    await shot('vscode-final').catch(() => undefined);
    await browser.close();
    const passed = steps.filter((s) => s.ok && !s.error).length;
    const known = steps.filter((s) => s.knownIssue && s.error);
    const failed = steps.filter((s) => !s.ok).length;
    fs.writeFileSync(path.join(OUT, 'report.json'), JSON.stringify({ steps, facts, ms: Date.now() - t0 }, null, 2));
    fs.writeFileSync(path.join(OUT, 'memdir-output.log'), memdirLogText());
    for (const s of known) {
      console.log(`known issue, not counted: ${s.name}: ${s.knownIssue}`);
    }
    console.log(`e2e-vscode: ${passed} passed, ${failed} failed`);
    process.exitCode = failed ? 1 : 0;
  }
})().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
