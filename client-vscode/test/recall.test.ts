import { describe, expect, it, vi } from 'vitest';
import type { Explanation, RelevantMemories } from '../src/common/protocol';
import { contentSecurityPolicy, escapeHtml, explanationBlock, makeNonce, markTruncation, renderResult, renderShell } from '../src/features/recallHtml';
import { explainPaths, RelevantMemoriesWaiter } from '../src/features/recallPreview';

const relevant: RelevantMemories = {
  id: 'abc',
  sessionId: 's1',
  selectedMemories: ['project-release-freeze.md', 'project-payments.md'],
  surfaced: [
    { path: 'project-release-freeze.md', text: 'Memory (saved today): freeze\n# Freeze <b>now</b>', bytes: 300, truncated: false, truncationNote: null },
    {
      path: 'project-payments.md',
      text: 'Memory (saved 3 days ago): payments\nstep 1\n> This memory file was truncated (4096 bytes). Use the Read tool to view the complete file at: /m/project-payments.md',
      bytes: 4096,
      truncated: true,
      truncationNote: '> This memory file was truncated (4096 bytes). Use the Read tool to view the complete file at: /m/project-payments.md',
    },
  ],
  budget: { used: 4396, left: 57044, limit: 61440, surfacedNow: 4396 },
  why: { 'project-release-freeze.md': 'mentions merging during a freeze' },
  directory: 'file:///m',
  attachment: '',
  triggered: true,
  reason: 'matched',
  selector: 'lexical',
  degraded: null,
  dropped: [],
  explanations: [],
};

describe('renderResult', () => {
  it('shows trigger, selection with why, budget and each injected block', () => {
    const html = renderResult({ query: 'can I merge?', triggered: true, reason: 'message contains whitespace', relevant });
    expect(html).toContain('<strong>Triggered.</strong> message contains whitespace');
    expect(html).toContain('<code>project-release-freeze.md</code> — <span class="why">mentions merging during a freeze</span>');
    expect(html).toContain('Budget: this turn 4.3 KB · session 4.3 KB of 60.0 KB · 55.7 KB left');
    expect(html).toContain('data-testid="truncated-badge"');
    expect(html).toContain('<mark class="truncation" data-testid="truncation-note">&gt; This memory file was truncated');
  });

  it('escapes memory text: HTML in a memory shows as text', () => {
    const html = renderResult({ query: '<img src=x onerror=alert(1)>', triggered: true, relevant });
    expect(html).not.toContain('<img');
    expect(html).not.toContain('<b>now</b>');
    expect(html).toContain('&lt;b&gt;now&lt;/b&gt;');
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
  });

  it('prefers the exact attachment when the server sends it', () => {
    const html = renderResult({ query: 'q', triggered: true, relevant: { ...relevant, attachment: '<system-reminder>\nall\n</system-reminder>' } });
    expect(html).toContain('data-testid="attachment">&lt;system-reminder&gt;');
    expect(html).not.toContain('data-testid="surfaced"');
  });

  it('explains a prefetch that did not trigger, with the manifest open', () => {
    const html = renderResult({
      query: 'thanks',
      triggered: false,
      reason: 'single word',
      manifest: { directory: '/m', manifest: '- [project] a.md (2026-01-01T00:00:00.000Z): a', candidates: [{ path: 'a.md', type: 'project', mtime: '2026-01-01T00:00:00.000Z', name: null, description: 'a' }], cutOff: [], skipped: [] },
    });
    expect(html).toContain('<strong>Not triggered.</strong> single word');
    expect(html).toContain('<details data-testid="manifest" open><summary>Manifest the selector sees (1 candidate)</summary>');
    expect(html).not.toContain('Selected memories');
  });

  it('says when the selector chose nothing, and shows errors', () => {
    const html = renderResult({ query: 'q', triggered: true, relevant: { ...relevant, selectedMemories: [], surfaced: [] }, error: 'timeout' });
    expect(html).toContain('data-testid="selected-none"');
    expect(html).toContain('data-testid="error">timeout');
  });
});

/** As memdir.recall.explain sends it (tests/lsp/e2e/test_recall_explain.py checks the server's side). */
const notSelected: Explanation = {
  path: 'deploy-checklist.md',
  verdict: 'not-selected',
  reason: 'not selected: score 0.33 is below the threshold 0.43',
  lexical: {
    score: 0.332799,
    threshold: 0.434243,
    rank: 3,
    matched: ['部署'],
    inBody: [],
    missing: ['预发环境', '注意'],
    cut: 'score 0.33 is below the threshold 0.43',
    droppedByTools: false,
    exact: true,
  },
  hasDescription: true,
  suggestion: ['预发环境'],
  suggestionSelects: true,
  lines: [
    'deploy-checklist.md: not selected: score 0.33 is below the threshold 0.43',
    '  lexical: score 0.33 < threshold 0.43, rank 3',
    '  matched: 部署',
    '  lacks: 预发环境, 注意',
    '  suggestion: add "预发环境" to its description; with it the lexical selector selects it for this question',
  ],
};
const notCandidate: Explanation = {
  path: 'MEMORY.md',
  verdict: 'not-a-candidate',
  reason: 'not a candidate: MEMORY.md is the index (path A loads it), never a recall candidate',
  lexical: null,
  hasDescription: false,
  suggestion: [],
  suggestionSelects: false,
  lines: ['MEMORY.md: not a candidate: MEMORY.md is the index (path A loads it), never a recall candidate'],
};

describe('why (not)', () => {
  it('shows the server\'s explanation of each candidate, as sent', () => {
    const html = renderResult({ query: '部署到预发环境要注意什么', triggered: true, relevant: { ...relevant, explanations: [notSelected, notCandidate] } });
    expect(html).toContain('<details data-testid="explanations"><summary>Why (not)?');
    expect(html.match(/data-testid="explanation"/g)).toHaveLength(2);
    expect(html).toContain('data-path="deploy-checklist.md" data-verdict="not-selected"');
    expect(html).toContain('<summary><code>deploy-checklist.md</code> — not selected: score 0.33 is below the threshold 0.43</summary>');
    expect(html).toContain('<pre>lexical: score 0.33 &lt; threshold 0.43, rank 3\nmatched: 部署\nlacks: 预发环境, 注意\nsuggestion: add &quot;预发环境&quot; to its description;');
  });

  it('a one-line explanation has no body, and nothing is shown without explanations', () => {
    expect(explanationBlock(notCandidate)).not.toContain('<pre>');
    expect(renderResult({ query: 'q', triggered: true, relevant })).not.toContain('data-testid="explanations"');
  });

  it('escapes paths and reasons', () => {
    const html = explanationBlock({ ...notCandidate, path: '<img src=x>.md', reason: '"><script>' });
    expect(html).not.toContain('<img');
    expect(html).not.toContain('<script>');
  });

  it('asks the server to explain every candidate of the manifest', () => {
    const manifest = { directory: '/m', manifest: '', candidates: [{ path: 'a.md', type: 'project', mtime: '', name: null, description: 'a' }, { path: 'b/c.md', type: null, mtime: '', name: null, description: null }], cutOff: [], skipped: [] };
    expect(explainPaths(manifest)).toEqual(['a.md', 'b/c.md']);
    expect(explainPaths(undefined)).toEqual([]);
  });
});

describe('page shell', () => {
  it('allows only scripts and styles with the nonce', () => {
    const nonce = makeNonce((n) => new Uint8Array(n).fill(7));
    expect(nonce).toMatch(/^[A-Za-z0-9]{32}$/);
    const csp = contentSecurityPolicy(nonce, 'https://webview.example');
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain(`script-src 'nonce-${nonce}'`);
    expect(csp).not.toContain('unsafe-inline');
    const html = renderShell({ nonce, cspSource: 'https://webview.example', directories: [{ uri: 'file:///m', label: 'm' }], sessionId: 's"1' });
    expect(html).toContain(`<script nonce="${nonce}">`);
    expect(html).toContain(`<style nonce="${nonce}">`);
    expect(html.match(/<script/g)).toHaveLength(1);
    expect(html).toContain('<input id="directory" type="hidden" value="file:///m">');
    expect(html).toContain('s&quot;1');
  });

  it('offers a directory choice when there are several', () => {
    const html = renderShell({
      nonce: 'n',
      cspSource: 'c',
      sessionId: 's',
      directories: [
        { uri: 'file:///a', label: 'a' },
        { uri: 'file:///b', label: '<b>' },
      ],
    });
    expect(html).toContain('<select id="directory"');
    expect(html).toContain('<option value="file:///b">&lt;b&gt;</option>');
  });
});

describe('helpers', () => {
  it('escapeHtml covers quotes', () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
  });
  it('markTruncation marks the surfaced memories\' notes and escapes the rest', () => {
    const memory = { path: 'a.md', bytes: 5, truncated: true, text: 'a < b\n> cut', truncationNote: '> cut' };
    expect(markTruncation('a < b\n> quoted\n> cut', [memory])).toBe(
      'a &lt; b\n&gt; quoted\n<mark class="truncation" data-testid="truncation-note">&gt; cut</mark>',
    );
  });
});

describe('RelevantMemoriesWaiter', () => {
  it('delivers a notification to the waiter with its id', async () => {
    const waiter = new RelevantMemoriesWaiter();
    const pending = waiter.wait('abc', 1000);
    waiter.accept({ ...relevant, id: 'other' });
    waiter.accept(relevant);
    await expect(pending).resolves.toBe(relevant);
  });

  it('keeps a notification that arrived before anyone waited', async () => {
    const waiter = new RelevantMemoriesWaiter();
    waiter.accept({ ...relevant, id: '7' });
    await expect(waiter.wait('7', 1000)).resolves.toMatchObject({ id: '7' });
  });

  it('gives up after the timeout', async () => {
    vi.useFakeTimers();
    const waiter = new RelevantMemoriesWaiter();
    const pending = waiter.wait('late', 5000);
    vi.advanceTimersByTime(5001);
    await expect(pending).rejects.toThrow('no memory/relevantMemories for prefetch late within 5 s');
    vi.useRealTimers();
  });
});
