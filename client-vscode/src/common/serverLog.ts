/**
 * memdir-lsp's stderr, routed to the output channel at the level the server logged it.
 *
 * The server logs with Python's `logging` (`<date> <time>,<ms> LEVEL name: message`) to stderr,
 * since stdout carries the protocol. vscode-languageclient would log every stderr line as an
 * error, so a healthy start would read as a list of errors; this keeps INFO as info and only real
 * errors (and unparsed output such as tracebacks) as errors.
 */
import * as readline from 'node:readline';
import type { Readable } from 'node:stream';
import type { LogOutputChannel } from 'vscode';

export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error';

const PYTHON_LOG_LINE = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:[,.]\d+)? (DEBUG|INFO|WARNING|ERROR|CRITICAL) (.*)$/;

const LEVELS: Record<string, LogLevel> = {
  DEBUG: 'debug',
  INFO: 'info',
  WARNING: 'warn',
  ERROR: 'error',
  CRITICAL: 'error',
};

/** The level and text of one stderr line (the channel adds its own timestamp). */
export function parseServerLogLine(line: string): { level: LogLevel; message: string } {
  const match = PYTHON_LOG_LINE.exec(line);
  if (match?.[1] && match[2] !== undefined) {
    return { level: LEVELS[match[1]] ?? 'error', message: match[2] };
  }
  return { level: 'error', message: line };
}

export function pipeServerStderr(input: Readable, channel: LogOutputChannel): void {
  readline
    .createInterface({ input, crlfDelay: Infinity, terminal: false, historySize: 0 })
    .on('line', (line: string) => {
      const { level, message } = parseServerLogLine(line);
      channel[level](message);
    });
}

/** stdout is the protocol channel on stdio; anything else the server prints there is info. */
export function pipeServerStdout(input: Readable, channel: LogOutputChannel): void {
  readline
    .createInterface({ input, crlfDelay: Infinity, terminal: false, historySize: 0 })
    .on('line', (line: string) => {
      channel.info(line);
    });
}
