/**
 * The report of a replay: {@link formatSummary}, the human-readable text, and
 * {@link summaryToJson}, the one JSON object of `--json`; {@link InputLabel} names the input in
 * both.
 *
 * @module
 */

import { escapeText } from './escape.js';
import { groupDigits } from './progress.js';
import type { ReplaySummary } from './replay.js';

/** How {@link formatSummary} names the input. */
export interface InputLabel {
  /** The input as shown: a path, `-` for stdin. */
  readonly file: string;
  /** Whether it is the built-in sample. */
  readonly sample: boolean;
}

/**
 * The human-readable report of a replay, lines ending in `\n`. What came from the input (the
 * file name, the clients) is escaped by `escapeText`: no control character reaches the terminal.
 */
export function formatSummary(summary: ReplaySummary, input: InputLabel): string {
  const out: string[] = [];
  const file = escapeText(input.file);
  const title = input.file === '-' ? '<stdin>' : input.sample ? `built-in sample (${file})` : file;
  out.push(`ratewarden replay: ${title}`);
  const per = summary.threshold === 1 ? 'request' : 'requests';
  out.push(
    `limit: ${summary.threshold} ${per} per ${summary.windowSeconds} s per client (${summary.strategy})`,
  );
  const rows: [string, number, string][] = [
    ['requests', summary.requests, ''],
    ['allowed', summary.allowed, share(summary.allowed, summary.requests)],
    ['rejected', summary.rejected, share(summary.rejected, summary.requests)],
    ['clients', summary.clients, ''],
    ['clients limited', summary.clientsLimited, ''],
    ['malformed lines', summary.malformed, ''],
  ];
  const width = Math.max(7, ...rows.map(([, value]) => String(value).length));
  for (const [label, value, extra] of rows) {
    out.push(`${label.padEnd(16)}${String(value).padStart(width)}${extra}`);
  }
  const topLimited = summary.topLimited;
  if (topLimited.length > 0) {
    out.push('top limited clients (rejected / requests):');
    const clients = topLimited.map((c) => escapeText(c.client));
    const clientWidth = Math.max(...clients.map((client) => client.length));
    const rejectedWidth = Math.max(...topLimited.map((c) => String(c.rejected).length));
    const requestsWidth = Math.max(...topLimited.map((c) => String(c.requests).length));
    for (const [i, c] of topLimited.entries()) {
      out.push(
        `  ${(clients[i] as string).padEnd(clientWidth)}  ${String(c.rejected).padStart(rejectedWidth)} / ` +
          String(c.requests).padStart(requestsWidth),
      );
    }
  }
  out.push(
    `processed ${summary.lines} ${summary.lines === 1 ? 'line' : 'lines'} in ${formatDuration(summary.seconds)} ` +
      `(${groupDigits(summary.linesPerSecond)} lines/s)`,
  );
  return `${out.join('\n')}\n`;
}

/**
 * The JSON report of a replay: one object, keys in snake_case, strings as they were read (the
 * command prints it with `toJsonLine`, which escapes what a terminal would act on).
 */
export function summaryToJson(summary: ReplaySummary, input: InputLabel): Record<string, unknown> {
  return {
    file: input.file,
    sample: input.sample,
    threshold: summary.threshold,
    window_seconds: summary.windowSeconds,
    strategy: summary.strategy,
    lines: summary.lines,
    requests: summary.requests,
    allowed: summary.allowed,
    rejected: summary.rejected,
    clients: summary.clients,
    clients_limited: summary.clientsLimited,
    malformed: summary.malformed,
    top_limited: summary.topLimited.map(({ client, rejected, requests }) => ({
      client,
      rejected,
      requests,
    })),
    seconds: Math.round(summary.seconds * 1e6) / 1e6,
    lines_per_second: Math.round(summary.linesPerSecond),
  };
}

/** `part` as a percentage of `whole`, two decimals, for a report row; empty when `whole` is 0. */
function share(part: number, whole: number): string {
  return whole > 0 ? `  (${((part / whole) * 100).toFixed(2)}%)` : '';
}

/** `0.0123` → `"12.3 ms"`, `2.5` → `"2.50 s"`. */
function formatDuration(seconds: number): string {
  return seconds < 1 ? `${(seconds * 1000).toFixed(1)} ms` : `${seconds.toFixed(2)} s`;
}
