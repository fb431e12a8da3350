/**
 * The recall preview's HTML, free of the vscode API: the page shell (with its
 * Content-Security-Policy) and the result fragment.
 *
 * Everything that came from files or the server is escaped here, and the CSP allows only scripts
 * and styles carrying this page's nonce, so a memory that contains HTML shows as text and can
 * never run in the webview. The fragment is built on the extension side, where it is unit-tested,
 * and the page script only swaps it in.
 */
import type { Explanation, ManifestView, RecallBudget, RelevantMemories, SurfacedView } from '../common/protocol';

export interface RecallView {
  query: string;
  directory?: string;
  /** Still waiting for `memory/relevantMemories`. */
  pending?: boolean;
  triggered?: boolean;
  /** Why the prefetch did not run, or a note from the server. */
  reason?: string | null;
  manifest?: ManifestView;
  relevant?: RelevantMemories;
  error?: string;
}

export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** A fresh nonce per page load: 32 characters from a CSPRNG. */
export function makeNonce(random: (size: number) => Uint8Array): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  return [...random(32)].map((b) => alphabet[b % alphabet.length]).join('');
}

export function contentSecurityPolicy(nonce: string, cspSource: string): string {
  return [
    "default-src 'none'",
    `style-src ${cspSource} 'nonce-${nonce}'`,
    `script-src 'nonce-${nonce}'`,
    `font-src ${cspSource}`,
    `img-src ${cspSource} data:`,
  ].join('; ');
}

/** Surfaced text, escaped, with the truncation notes of `memories` marked. */
export function markTruncation(text: string, memories: readonly SurfacedView[]): string {
  const notes = new Set(memories.map((m) => m.truncationNote).filter((note) => note !== null));
  return text
    .split('\n')
    .map((line) => (notes.has(line) ? `<mark class="truncation" data-testid="truncation-note">${escapeHtml(line)}</mark>` : escapeHtml(line)))
    .join('\n');
}

function formatBytes(n: number): string {
  return n >= 1024 ? `${(n / 1024).toFixed(1)} KB` : `${n} B`;
}

function budgetLine(budget: RecallBudget | number | undefined): string {
  if (budget === undefined) {
    return '';
  }
  if (typeof budget === 'number') {
    return `Session budget used: ${formatBytes(budget)}`;
  }
  const parts: string[] = [];
  if (budget.surfacedNow !== undefined) {
    parts.push(`this turn ${formatBytes(budget.surfacedNow)}`);
  }
  if (budget.used !== undefined) {
    parts.push(`session ${formatBytes(budget.used)}${budget.limit ? ` of ${formatBytes(budget.limit)}` : ''}`);
  }
  if (budget.left !== undefined) {
    parts.push(`${formatBytes(budget.left)} left`);
  }
  return parts.length ? `Budget: ${parts.join(' · ')}` : '';
}

function surfacedBlock(memory: SurfacedView): string {
  const badge = memory.truncated
    ? '<span class="badge warn" data-testid="truncated-badge">truncated</span>'
    : '<span class="badge">whole</span>';
  return [
    `<section class="surfaced" data-testid="surfaced" data-path="${escapeHtml(memory.path)}">`,
    `<h4><code>${escapeHtml(memory.path)}</code> ${badge} <span class="muted">${formatBytes(memory.bytes)}</span></h4>`,
    `<pre>${markTruncation(memory.text, [memory])}</pre>`,
    '</section>',
  ].join('');
}

/**
 * One file's "why (not)": the server's text (memdir.recall.explain renders it, for the CLI too), shown
 * as it comes: the reason as the summary, the lexical numbers and the suggestion inside.
 */
export function explanationBlock(explanation: Explanation): string {
  const details = explanation.lines.slice(1).map((line) => escapeHtml(line.trim()));
  return [
    `<details class="explanation ${escapeHtml(explanation.verdict)}" data-testid="explanation" data-path="${escapeHtml(explanation.path)}" data-verdict="${escapeHtml(explanation.verdict)}">`,
    `<summary><code>${escapeHtml(explanation.path)}</code> — ${escapeHtml(explanation.reason)}</summary>`,
    details.length ? `<pre>${details.join('\n')}</pre>` : '',
    '</details>',
  ].join('');
}

/** The result of one question: trigger, selection with why, injected text, why (not), manifest. */
export function renderResult(view: RecallView): string {
  const out: string[] = [];
  out.push(`<h2 data-testid="query">“${escapeHtml(view.query)}”</h2>`);
  if (view.error) {
    out.push(`<p class="error" data-testid="error">${escapeHtml(view.error)}</p>`);
  }
  if (view.pending) {
    out.push('<p class="muted" data-testid="pending">Selecting memories…</p>');
  } else if (view.triggered === false) {
    out.push(
      `<p data-testid="trigger" class="trigger off"><strong>Not triggered.</strong> ${escapeHtml(view.reason ?? 'The prefetch does not run for this message.')}</p>`,
    );
  } else if (view.triggered) {
    out.push(
      `<p data-testid="trigger" class="trigger on"><strong>Triggered.</strong>${view.reason ? ` ${escapeHtml(view.reason)}` : ''}</p>`,
    );
  }

  const relevant = view.relevant;
  if (relevant) {
    const selected = relevant.selectedMemories;
    out.push(`<h3>Selected memories (${selected.length})</h3>`);
    if (selected.length) {
      out.push('<ol data-testid="selected">');
      for (const path of selected) {
        const why = relevant.why?.[path];
        out.push(`<li><code>${escapeHtml(path)}</code>${why ? ` — <span class="why">${escapeHtml(why)}</span>` : ''}</li>`);
      }
      out.push('</ol>');
    } else {
      out.push('<p class="muted" data-testid="selected-none">The selector chose nothing: no memory is injected for this message.</p>');
    }
    if (relevant.degraded) {
      out.push(`<p class="muted">Selector fell back: ${escapeHtml(relevant.degraded)}</p>`);
    }
    const budget = budgetLine(relevant.budget);
    if (budget) {
      out.push(`<p class="muted" data-testid="budget">${escapeHtml(budget)}</p>`);
    }
    out.push(`<h3>Injected text (${relevant.surfaced.length} file${relevant.surfaced.length === 1 ? '' : 's'})</h3>`);
    if (relevant.attachment) {
      out.push('<p class="muted">Exactly as the model receives it:</p>');
      out.push(`<pre data-testid="attachment">${markTruncation(relevant.attachment, relevant.surfaced)}</pre>`);
    } else if (relevant.surfaced.length) {
      out.push(relevant.surfaced.map(surfacedBlock).join(''));
    } else {
      out.push('<p class="muted">Nothing injected.</p>');
    }
    if (relevant.dropped?.length) {
      out.push('<h3>Left out</h3><ul>');
      for (const d of relevant.dropped) {
        out.push(`<li><code>${escapeHtml(d.path)}</code> (${escapeHtml(d.stage)}): ${escapeHtml(d.reason)}</li>`);
      }
      out.push('</ul>');
    }
    const explanations = relevant.explanations ?? [];
    if (explanations.length) {
      out.push(
        `<details data-testid="explanations"><summary>Why (not)? Each candidate: its score, the question's words it lacks, what to add to its description (${explanations.length})</summary>`,
        explanations.map(explanationBlock).join(''),
        '</details>',
      );
    }
  }

  if (view.manifest) {
    const count = view.manifest.candidates?.length;
    out.push(
      `<details data-testid="manifest"${relevant ? '' : ' open'}><summary>Manifest the selector sees${count !== undefined ? ` (${count} candidate${count === 1 ? '' : 's'})` : ''}</summary>`,
      `<pre>${escapeHtml(view.manifest.manifest)}</pre></details>`,
    );
  }
  return out.join('\n');
}

export interface ShellOptions {
  nonce: string;
  cspSource: string;
  directories: { uri: string; label: string }[];
  sessionId: string;
}

/** The page: a question form, a directory picker, and the result area the script fills. */
export function renderShell(options: ShellOptions): string {
  const { nonce, cspSource } = options;
  const dirOptions = options.directories
    .map((d) => `<option value="${escapeHtml(d.uri)}">${escapeHtml(d.label)}</option>`)
    .join('');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(contentSecurityPolicy(nonce, cspSource))}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>Recall Preview</title>
<style nonce="${nonce}">
  body { font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); color: var(--vscode-foreground); padding: 0 16px 16px; }
  form { display: flex; gap: 6px; flex-wrap: wrap; align-items: center; position: sticky; top: 0; padding: 12px 0; background: var(--vscode-editor-background); }
  input[type=text] { flex: 1 1 320px; padding: 4px 6px; color: var(--vscode-input-foreground); background: var(--vscode-input-background); border: 1px solid var(--vscode-input-border, transparent); }
  select { color: var(--vscode-dropdown-foreground); background: var(--vscode-dropdown-background); border: 1px solid var(--vscode-dropdown-border, transparent); padding: 3px; }
  button { color: var(--vscode-button-foreground); background: var(--vscode-button-background); border: none; padding: 5px 12px; cursor: pointer; }
  button.secondary { color: var(--vscode-button-secondaryForeground); background: var(--vscode-button-secondaryBackground); }
  pre { white-space: pre-wrap; word-break: break-word; background: var(--vscode-textCodeBlock-background); padding: 8px; font-family: var(--vscode-editor-font-family); font-size: var(--vscode-editor-font-size); }
  mark.truncation { background: var(--vscode-editorWarning-foreground); color: var(--vscode-editor-background); }
  .badge { font-size: 0.85em; padding: 1px 6px; border-radius: 8px; background: var(--vscode-badge-background); color: var(--vscode-badge-foreground); }
  .badge.warn { background: var(--vscode-editorWarning-foreground); color: var(--vscode-editor-background); }
  .muted { opacity: 0.75; }
  .error { color: var(--vscode-errorForeground); }
  .trigger.on strong { color: var(--vscode-testing-iconPassed, #3fb950); }
  .trigger.off strong { color: var(--vscode-editorWarning-foreground); }
  .session { font-size: 0.85em; opacity: 0.7; }
  details.explanation { margin: 2px 0 2px 12px; }
  details.explanation.surfaced > summary code, details.explanation.selected > summary code { font-weight: bold; }
</style>
</head>
<body>
<form id="ask">
  <input id="query" type="text" placeholder="Ask what the agent would be asked, e.g. “can I merge to trunk today?”" aria-label="Question" autofocus>
  ${options.directories.length > 1 ? `<select id="directory" aria-label="Memory directory">${dirOptions}</select>` : `<input id="directory" type="hidden" value="${escapeHtml(options.directories[0]?.uri ?? '')}">`}
  <button type="submit" id="submit">Preview recall</button>
  <button type="button" id="reset" class="secondary" title="Forget what this session surfaced (like a compaction)">Reset session</button>
</form>
<p class="session">Session <code id="session">${escapeHtml(options.sessionId)}</code>: like the agent, a session never surfaces the same memory twice until it is reset.</p>
<div id="result" data-testid="result"></div>
<script nonce="${nonce}">
  const vscode = acquireVsCodeApi();
  const form = document.getElementById('ask');
  const query = document.getElementById('query');
  const directory = document.getElementById('directory');
  const result = document.getElementById('result');
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const text = query.value.trim();
    if (text) { vscode.postMessage({ type: 'ask', query: text, directory: directory.value }); }
  });
  document.getElementById('reset').addEventListener('click', () => {
    vscode.postMessage({ type: 'reset', directory: directory.value });
  });
  window.addEventListener('message', (event) => {
    const message = event.data;
    // The fragment was escaped by the extension (recallHtml.ts); the CSP blocks any script in it.
    if (message.type === 'render') { result.innerHTML = message.html; }
  });
</script>
</body>
</html>`;
}
