/**
 * The report of a replay: {@link formatSummary}, the human-readable text, and
 * {@link summaryToJson}, the one JSON object of `--json`; {@link InputLabel} names the input in
 * both.
 *
 * @module
 */

import { escapeText } from './escape.js';
import { formatWindow } from './policies.js';
import { groupDigits } from './progress.js';
import type { LimitedClient, PolicySummary, ReplaySummary } from './replay.js';
import type { Curve, ReportData, TimelinePolicy } from './report-data.js';
import type { SuggestSummary } from './suggestion.js';
import type { SuggestGoal } from './suggest.js';

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
  if (summary.policies.length > 1) return formatPolicies(summary, input);
  const out: string[] = [];
  out.push(`ratewarden replay: ${inputTitle(input)}`, logLine(summary));
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
  out.push(processedLine(summary));
  return `${out.join('\n')}\n`;
}

/** The input as a report's title names it: a path, `<stdin>`, or the built-in sample. */
function inputTitle(input: InputLabel): string {
  const file = escapeText(input.file);
  return input.file === '-' ? '<stdin>' : input.sample ? `built-in sample (${file})` : file;
}

/** `1431857103000` → `"2015-05-17 10:05:03 UTC"`. */
export function formatUtc(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** The log's requests, clients, key, time and span, on one line. */
function logLine(s: { format: string; requests: number; clients: number; keyLabel: string; timeLabel: string; firstMs: number; lastMs: number; malformed: number }): string {
  const span = s.requests > 0 ? `, ${formatUtc(s.firstMs)} to ${formatUtc(s.lastMs)} (${formatSpan(s.lastMs - s.firstMs)})` : '';
  return (
    `log: ${plural(s.requests, 'request')} from ${plural(s.clients, 'client')} (${escapeText(s.format)}; key: ${escapeText(s.keyLabel)}; time: ${escapeText(s.timeLabel)})` +
    `${span}, ${plural(s.malformed, 'malformed line')}`
  );
}

/** `1 request`, `2 requests`. */
function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

/** A span as the report says it: `45 s`, `12.5 min`, `83.0 h`. */
export function formatSpan(ms: number): string {
  if (ms < 120_000) return `${Number((ms / 1000).toFixed(3))} s`;
  if (ms < 7_200_000) return `${(ms / 60_000).toFixed(1)} min`;
  return `${(ms / 3_600_000).toFixed(1)} h`;
}

/** `n (p%)` with two decimals of `n / whole`. */
function counted(n: number, whole: number): string {
  return whole > 0 ? `${n} (${((n / whole) * 100).toFixed(2)}%)` : String(n);
}

/** A client as a table cell: `198.18.0.97 (72 of 273)`, or `-` when nobody was limited. */
function worst(client: LimitedClient | undefined): string {
  return client === undefined ? '-' : `${escapeText(client.client)} (${client.rejected} of ${client.requests})`;
}

/** Rows of cells as text, columns padded to their widest cell; numbers (right) or text (left) by `right`. */
function table(rows: readonly (readonly string[])[], right: readonly boolean[]): string[] {
  const widths = (rows[0] ?? []).map((_, col) => Math.max(...rows.map((row) => (row[col] ?? '').length)));
  return rows.map((row) =>
    row
      .map((cell, col) => (col === row.length - 1 && !right[col] ? cell : right[col] ? cell.padStart(widths[col] ?? 0) : cell.padEnd(widths[col] ?? 0)))
      .join('  ')
      .trimEnd(),
  );
}

/** The report of several policies: one row each, then the group's, then its most-limited clients. */
function formatPolicies(summary: ReplaySummary, input: InputLabel): string {
  const out: string[] = [`ratewarden replay: ${inputTitle(input)}`, logLine(summary)];
  const rows: string[][] = [['policy', 'strategy', 'refused', 'clients limited', 'peak refused/min', 'worst client']];
  const row = (p: PolicySummary, strategy: string): string[] => [
    p.name,
    strategy,
    counted(p.rejected, summary.requests),
    counted(p.clientsLimited, summary.clients),
    String(p.peakRefusedPerMinute),
    worst(p.topLimited[0]),
  ];
  for (const p of summary.policies) rows.push(row(p, p.strategy));
  if (summary.group !== undefined) rows.push(row(summary.group, 'one RateLimitGroup'));
  out.push(...table(rows, [false, false, true, true, true, false]));
  const group = summary.group;
  if (group !== undefined) {
    out.push(`all: the ${summary.policies.length} policies together, all or nothing: a request is allowed when every policy allows it, and then counts against each`);
    if (group.topLimited.length > 0) {
      out.push('top limited clients under all policies (refused / requests):');
      out.push(...limitedRows(group.topLimited));
    }
  }
  out.push(processedLine(summary));
  return `${out.join('\n')}\n`;
}

/** The rows of a most-limited clients list, aligned. */
function limitedRows(clients: readonly LimitedClient[]): string[] {
  const names = clients.map((c) => escapeText(c.client));
  const nameWidth = Math.max(...names.map((name) => name.length));
  const rejectedWidth = Math.max(...clients.map((c) => String(c.rejected).length));
  const requestsWidth = Math.max(...clients.map((c) => String(c.requests).length));
  return clients.map(
    (c, i) => `  ${(names[i] as string).padEnd(nameWidth)}  ${String(c.rejected).padStart(rejectedWidth)} / ${String(c.requests).padStart(requestsWidth)}`,
  );
}

function processedLine(summary: { lines: number; seconds: number; linesPerSecond: number }): string {
  return (
    `processed ${summary.lines} ${summary.lines === 1 ? 'line' : 'lines'} in ${formatDuration(summary.seconds)} ` +
    `(${groupDigits(summary.linesPerSecond)} lines/s)`
  );
}

/** A policy as its `--json` object. */
function policyToJson(p: PolicySummary): Record<string, unknown> {
  return {
    name: p.name,
    threshold: Number.isNaN(p.threshold) ? null : p.threshold,
    window_seconds: Number.isNaN(p.windowSeconds) ? null : p.windowSeconds,
    strategy: p.strategy,
    allowed: p.allowed,
    rejected: p.rejected,
    clients_limited: p.clientsLimited,
    peak_refused_per_minute: p.peakRefusedPerMinute,
    peak_minute: Number.isNaN(p.peakMinuteMs) ? null : new Date(p.peakMinuteMs).toISOString(),
    top_limited: p.topLimited.map(({ client, rejected, requests }) => ({ client, rejected, requests })),
  };
}

/**
 * The JSON report of a replay: one object, keys in snake_case, strings as they were read (the
 * command prints it with `toJsonLine`, which escapes what a terminal would act on). The first
 * policy's outcome is at the top level too (`threshold`, `rejected`, ...), as it was when a
 * replay had one policy.
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
    format: summary.format,
    key: summary.keyLabel,
    time: summary.timeLabel,
    first_time: summary.requests > 0 ? new Date(summary.firstMs).toISOString() : null,
    last_time: summary.requests > 0 ? new Date(summary.lastMs).toISOString() : null,
    policies: summary.policies.map(policyToJson),
    group: summary.group === undefined ? null : policyToJson(summary.group),
    seconds: Math.round(summary.seconds * 1e6) / 1e6,
    lines_per_second: Math.round(summary.linesPerSecond),
  };
}

/** A goal as the report says it: `at most 1% of clients limited`. */
export function goalText(goal: SuggestGoal): string {
  const percent = `${Number((goal.share * 100).toPrecision(6))}%`;
  return goal.kind === 'clients-limited' ? `at most ${percent} of clients limited` : `at most ${percent} of requests refused`;
}

/** The human-readable report of `suggest`. */
export function formatSuggestion(summary: SuggestSummary, input: InputLabel): string {
  const out: string[] = [`ratewarden suggest: ${inputTitle(input)}`, logLine(summary)];
  const hour = summary.busiestHour;
  if (hour !== undefined) {
    out.push(`busiest hour: ${formatUtc(hour.startMs).replace(/:00 UTC$/, ' UTC')}, ${plural(hour.requests, 'request')} from ${plural(hour.clients, 'client')}`);
  }
  out.push(`goal: ${summary.goals.map(goalText).join(', and ')}`);
  const rows: string[][] = [['window', 'strategy', 'threshold', 'refused', 'clients limited', 'busiest client window']];
  for (const a of summary.answers) {
    rows.push([
      formatWindow(a.windowSeconds),
      a.strategy,
      a.threshold === undefined ? 'none' : String(a.threshold),
      a.threshold === undefined ? '-' : counted(a.refused, summary.requests),
      a.threshold === undefined ? '-' : counted(a.clientsLimited, summary.clients),
      String(a.maxPeak),
    ]);
  }
  out.push(...table(rows, [false, false, true, true, true, true]));
  for (const a of summary.answers) {
    out.push(`curve, ${formatWindow(a.windowSeconds)} ${a.strategy} (threshold: refused, clients limited; ${a.passes} passes over the requests):`);
    const cells = a.curve.map((p) => `${p.threshold}: ${percent(p.refusedShare)} ${percent(p.clientsLimitedShare)}${p.threshold === a.threshold ? ' <' : ''}`);
    for (let i = 0; i < cells.length; i += 4) out.push(`  ${cells.slice(i, i + 4).map((c) => c.padEnd(26)).join('').trimEnd()}`);
  }
  out.push(
    'assumes: the traffic to come is like this log\'s (its span and busiest hour above); each answer is the smallest threshold ' +
      'meeting the goal here, not a margin above it; refused requests are not retried in the replay.',
  );
  out.push(processedLine(summary));
  return `${out.join('\n')}\n`;
}

/** `0.01234` → `"1.23%"`. */
function percent(share: number): string {
  return `${(share * 100).toFixed(2)}%`;
}

/** The JSON report of `suggest`: one object, keys in snake_case. */
export function suggestionToJson(summary: SuggestSummary, input: InputLabel): Record<string, unknown> {
  const hour = summary.busiestHour;
  return {
    file: input.file,
    sample: input.sample,
    lines: summary.lines,
    requests: summary.requests,
    clients: summary.clients,
    malformed: summary.malformed,
    format: summary.format,
    key: summary.keyLabel,
    time: summary.timeLabel,
    first_time: summary.requests > 0 ? new Date(summary.firstMs).toISOString() : null,
    last_time: summary.requests > 0 ? new Date(summary.lastMs).toISOString() : null,
    busiest_hour: hour === undefined ? null : { start: new Date(hour.startMs).toISOString(), requests: hour.requests, clients: hour.clients },
    goals: summary.goals.map((g) => ({ kind: g.kind, share: g.share })),
    answers: summary.answers.map((a) => ({
      window_seconds: a.windowSeconds,
      strategy: a.strategy,
      threshold: a.threshold ?? null,
      refused: a.threshold === undefined ? null : a.refused,
      clients_limited: a.threshold === undefined ? null : a.clientsLimited,
      max_client_peak: a.maxPeak,
      passes: a.passes,
      curve: a.curve.map((p) => ({ threshold: p.threshold, refused_share: p.refusedShare, clients_limited_share: p.clientsLimitedShare })),
    })),
    seconds: Math.round(summary.seconds * 1e6) / 1e6,
    lines_per_second: Math.round(summary.linesPerSecond),
  };
}

/** The input as the HTML report names it: a path, `<stdin>`, or the built-in sample. */
function reportInput(input: InputLabel): string {
  return input.file === '-' ? '<stdin>' : input.sample ? 'built-in sample' : input.file;
}

/** A policy's most-limited clients as the HTML report lists them. */
function topRows(policy: string, clients: readonly LimitedClient[]): ReportData['topLimited'][number] {
  return { policy, clients: clients.map((c) => ({ client: c.client, refused: c.rejected, requests: c.requests })) };
}

/** The HTML report's data of a replay (with `timeline` and `curves`). */
export function replayReportData(summary: ReplaySummary, input: InputLabel, text: string): ReportData {
  const all = summary.group === undefined ? summary.policies : [...summary.policies, summary.group];
  const label = (p: PolicySummary): string => (p === summary.group ? 'all (one RateLimitGroup)' : p.name);
  const timeline = summary.timeline;
  return {
    command: 'replay',
    input: reportInput(input),
    text,
    timeline:
      timeline === undefined
        ? undefined
        : {
            bucketSeconds: timeline.bucketSeconds,
            startMs: timeline.startMs,
            policies: all.map((p): TimelinePolicy => ({ name: label(p), allowed: p.allowedPerBucket ?? [], refused: p.refusedPerBucket ?? [] })),
          },
    curves: summary.curves ?? [],
    topLimited: all.map((p) => topRows(label(p), p.topLimited)),
  };
}

/** The HTML report's data of `suggest` (with `replayAnswers`). */
export function suggestReportData(summary: SuggestSummary, input: InputLabel, text: string): ReportData {
  const curves: Curve[] = summary.answers.map((a) => ({
    label: `per ${formatWindow(a.windowSeconds)}, ${a.strategy}`,
    windowSeconds: a.windowSeconds,
    strategy: a.strategy,
    points: a.curve,
    goals: summary.goals.map((goal) => ({ kind: goal.kind, share: goal.share })),
    answer: a.threshold,
  }));
  const replayed = summary.replayed ?? [];
  const timeline = summary.timeline;
  return {
    command: 'suggest',
    input: reportInput(input),
    text,
    timeline:
      timeline === undefined
        ? undefined
        : {
            bucketSeconds: timeline.bucketSeconds,
            startMs: timeline.startMs,
            policies: replayed.map((r) => ({ name: r.name, allowed: r.allowedPerBucket, refused: r.refusedPerBucket })),
          },
    curves,
    topLimited: replayed.map((r) => topRows(r.name, r.topLimited)),
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
