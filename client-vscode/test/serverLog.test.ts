import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { LogOutputChannel } from 'vscode';
import { parseServerLogLine, pipeServerStderr } from '../src/common/serverLog';

describe('parseServerLogLine', () => {
  it("keeps the level of the server's Python log lines", () => {
    expect(parseServerLogLine('2026-12-02 14:07:16,941 INFO pygls.server: Starting async IO server')).toEqual({
      level: 'info',
      message: 'pygls.server: Starting async IO server',
    });
    expect(parseServerLogLine('2026-12-02 14:07:20,890 WARNING pygls.protocol.json_rpc: Cancel').level).toBe('warn');
    expect(parseServerLogLine('2026-12-02 14:07:20,890 CRITICAL x: y').level).toBe('error');
  });

  it('treats anything else on stderr (a traceback) as an error', () => {
    expect(parseServerLogLine('Traceback (most recent call last):')).toEqual({
      level: 'error',
      message: 'Traceback (most recent call last):',
    });
  });
});

describe('pipeServerStderr', () => {
  it('logs each line at its level', async () => {
    const seen: string[] = [];
    const record = (level: string) => (message: string) => seen.push(`${level}:${message}`);
    const channel = { info: record('info'), warn: record('warn'), error: record('error'), debug: record('debug'), trace: record('trace') };
    const input = new PassThrough();
    pipeServerStderr(input, channel as unknown as LogOutputChannel);
    input.end('2026-12-02 14:07:16,941 INFO a: started\nboom\n');
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(seen).toEqual(['info:a: started', 'error:boom']);
  });
});
