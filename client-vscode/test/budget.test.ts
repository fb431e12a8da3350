import { describe, expect, it } from 'vitest';
import type { IndexSummary } from '../src/common/protocol';
import { budgetLevel, budgetPercent, budgetView, cutOffReport, fenceFor } from '../src/features/budget';

function index(over: Partial<IndexSummary>): IndexSummary {
  return {
    directory: '/m',
    path: '/m/MEMORY.md',
    exists: true,
    text: '- [A](a.md)',
    lines: 142,
    chars: 18_310,
    loadedLines: 142,
    loadedChars: 18_310,
    maxLines: 200,
    maxChars: 25_000,
    truncated: false,
    reason: null,
    entries: 1,
    cutEntries: [],
    level: 'near',
    rewriteTargetLines: 140,
    ...over,
  };
}

describe('budgetView', () => {
  it('shows lines and the share of the binding cap', () => {
    const view = budgetView(index({}));
    // 142/200 = 71 %, 18,310/25,000 = 73 %: the characters bind first.
    expect(view.text).toBe('$(warning) 142/200 lines · 73%');
    expect(view.level).toBe('warning');
    expect(view.tooltip).toContain('142 of 200 lines, 18,310 of 25,000 characters');
  });

  it('is calm well under the cap', () => {
    const view = budgetView(index({ lines: 7, chars: 700, loadedLines: 7, loadedChars: 700, level: 'within' }));
    expect(view).toMatchObject({ text: '$(book) 7/200 lines · 4%', level: 'ok' });
  });

  it('turns to an error past the cap and says what was cut', () => {
    const view = budgetView(
      index({
        lines: 230,
        loadedLines: 200,
        truncated: true,
        level: 'over',
        reason: '230 lines (limit: 200)',
        cutEntries: [{ line: 200, title: 'Late', path: 'late.md', raw: '- [Late](late.md)' }],
      }),
    );
    expect(view.level).toBe('error');
    expect(view.text).toBe('$(error) 230/200 lines · 115%');
    expect(view.tooltip).toContain('1 entry is cut off');
  });
});

describe('budgetLevel and budgetPercent', () => {
  it("shows the server's level", () => {
    expect(budgetLevel(index({ level: 'near' }))).toBe('warning');
    expect(budgetLevel(index({ level: 'within' }))).toBe('ok');
    expect(budgetLevel(index({ level: 'over' }))).toBe('error');
    expect(budgetView(index({ rewriteTargetLines: 120 })).tooltip).toContain('under 120 lines');
    expect(budgetPercent(index({ maxLines: 0, maxChars: 0 }))).toBe(0);
  });
});

describe('cutOffReport', () => {
  it('lists the cut entries and the exact injected text', () => {
    const report = cutOffReport(
      index({
        lines: 230,
        loadedLines: 200,
        truncated: true,
        level: 'over',
        reason: '230 lines',
        text: 'loaded ```code``` text\n> WARNING: MEMORY.md is 230 lines.',
        cutEntries: [{ line: 200, title: 'Late entry', path: 'late.md', raw: '- [Late entry](late.md)' }],
      }),
    );
    expect(report).toContain('**Past the cap**: 230 lines');
    expect(report).toContain('- line 201: [Late entry](late.md)');
    expect(report).toContain('````markdown\nloaded ```code``` text\n> WARNING: MEMORY.md is 230 lines.\n````');
  });

  it('says so when nothing is cut', () => {
    expect(cutOffReport(index({ lines: 3, chars: 30 }))).toContain('None: every entry is loaded.');
  });
});

describe('fenceFor', () => {
  it('is longer than any backtick run', () => {
    expect(fenceFor('no ticks')).toBe('```');
    expect(fenceFor('a ```` b')).toBe('`````');
  });
});
