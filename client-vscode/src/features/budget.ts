/**
 * MEMORY.md's load budget in words, free of the vscode API: the status bar text
 * ("142/200 lines · 73%"), its warning level, and the cut-off report.
 *
 * The agent loads only the first 200 lines or 25,000 characters of the index (spec section 3),
 * whichever comes first; the percentage is of the cap that binds first. Whether the index is
 * near the cap is the server's `level`.
 */
import { INDEX_FILENAME, type IndexSummary } from '../common/protocol';

export type BudgetLevel = 'ok' | 'warning' | 'error';

export interface BudgetView {
  text: string;
  tooltip: string;
  level: BudgetLevel;
  percent: number;
}

const number = (n: number) => n.toLocaleString('en-US');

export function budgetPercent(index: IndexSummary): number {
  const lineShare = index.maxLines > 0 ? index.lines / index.maxLines : 0;
  const charShare = index.maxChars > 0 ? index.chars / index.maxChars : 0;
  return Math.round(Math.max(lineShare, charShare) * 100);
}

const LEVELS: Record<IndexSummary['level'], BudgetLevel> = { over: 'error', near: 'warning', within: 'ok' };

export function budgetLevel(index: IndexSummary): BudgetLevel {
  return LEVELS[index.level];
}

export function budgetView(index: IndexSummary): BudgetView {
  const percent = budgetPercent(index);
  const level = budgetLevel(index);
  const icon = level === 'error' ? '$(error) ' : level === 'warning' ? '$(warning) ' : '$(book) ';
  const text = `${icon}${index.lines}/${index.maxLines} lines · ${percent}%`;
  const used = `${number(index.lines)} of ${number(index.maxLines)} lines, ${number(index.chars)} of ${number(index.maxChars)} characters (${percent}% of the load cap).`;
  const cut = index.cutEntries?.length ?? 0;
  const state =
    level === 'error'
      ? `Past the cap${index.reason ? ` (${index.reason})` : ''}: the agent sees only the first ${number(index.loadedLines)} lines${cut ? `; ${cut} entr${cut === 1 ? 'y is' : 'ies are'} cut off` : ''}.`
      : level === 'warning'
        ? `Near the cap: the agent is told to keep ${INDEX_FILENAME} under ${index.rewriteTargetLines} lines.`
        : 'Within the cap: the agent sees all of it.';
  return { text, tooltip: `${INDEX_FILENAME}: ${used}\n${state}\nClick for the cut-off report.`, level, percent };
}

/** A Markdown fence longer than any backtick run in `text`, so the text shows verbatim. */
export function fenceFor(text: string): string {
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  return '`'.repeat(Math.max(3, longest + 1));
}

/** The cut-off report: the numbers, the entries past the cap, and exactly what path A injects. */
export function cutOffReport(index: IndexSummary): string {
  const view = budgetView(index);
  const cut = index.cutEntries ?? [];
  const lines = [
    `# ${INDEX_FILENAME} cut-off report`,
    '',
    `Directory: \`${index.directory}\``,
    '',
    '| | in the file | loaded by the agent | cap |',
    '|---|---:|---:|---:|',
    `| lines | ${number(index.lines)} | ${number(index.loadedLines)} | ${number(index.maxLines)} |`,
    `| characters (UTF-16) | ${number(index.chars)} | ${number(index.loadedChars)} | ${number(index.maxChars)} |`,
    '',
    view.level === 'error'
      ? `**Past the cap**${index.reason ? `: ${index.reason}` : ''}. Only the loaded part reaches the agent, followed by a warning line.`
      : view.level === 'warning'
        ? `**Near the cap** (${view.percent}%). Move detail into topic files and merge or drop stale entries.`
        : `**Within the cap** (${view.percent}%). The agent sees the whole index.`,
    '',
    `## Entries past the cap (${cut.length})`,
    '',
  ];
  if (cut.length) {
    for (const entry of cut) {
      lines.push(`- line ${entry.line + 1}: [${entry.title}](${entry.path})`);
    }
    lines.push('', 'These memories are invisible on path A (index injection) unless the index is shortened.');
  } else {
    lines.push('None: every entry is loaded.');
  }
  const fence = fenceFor(index.text);
  lines.push('', '## Exactly what the agent is shown', '', `${fence}markdown`, index.text, fence, '');
  return lines.join('\n');
}
