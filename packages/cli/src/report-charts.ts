/**
 * The charts of the HTML report as vega-lite specifications, built from a {@link ReportData}
 * ({@link reportCharts}): allowed and refused requests over time per policy, the refused-share
 * curves of `suggest`, and the most-limited clients per policy. The page compiles and draws them
 * (`html-report.ts`); this module only decides what they show.
 *
 * Text that came from the log (client keys, the input's name) goes into the charts' data as
 * values, never into vega expressions, and is passed through `escapeText` first, as in the text
 * report: no control or bidirectional character reaches the page.
 *
 * @module
 */

import type { TopLevelSpec } from 'vega-lite';
import { rangeError, typeError } from './errors.js';
import { escapeText } from './escape.js';
import { groupDigits } from './progress.js';
import type { Curve, ReportData, Timeline, TopLimited } from './report-data.js';

/** One section of the report: a chart to draw, or the sentence that stands in for it. */
export type ReportSection =
  | {
      readonly kind: 'chart';
      readonly id: string;
      readonly spec: TopLevelSpec;
      /** A sentence shown under the chart (policies under which nobody was limited). */
      readonly note?: string;
    }
  | { readonly kind: 'sentence'; readonly id: string; readonly text: string };

/** The three sections of the report, in page order, each with its heading. */
export interface ReportCharts {
  readonly timeline: ReportSection;
  readonly curves: ReportSection;
  readonly topLimited: ReportSection;
}

/** The width of one plot area, in CSS pixels. */
const WIDTH = 640;
const BLUE = '#1f5fa8';
const ORANGE = '#d95f02';
const GREY = '#9aa5b1';
const SCHEMA = 'https://vega.github.io/schema/vega-lite/v6.json';
const CONFIG = {
  font: 'Helvetica, Arial, sans-serif',
  axis: { titleFontWeight: 'normal', titleFontSize: 12, labelFontSize: 11 },
  title: { anchor: 'start', fontSize: 13, subtitleFontSize: 11, subtitleColor: '#444' },
  view: { stroke: '#ccc' },
} as const;

/**
 * The report's charts, or for a section without data (no timeline, no curve, nobody limited)
 * the sentence that replaces its chart.
 *
 * @throws {RateWardenTypeError} when a count or share of `data` is not a number.
 * @throws {RateWardenRangeError} when one is out of its range (a negative count, a share outside
 *   0 to 1, a bucket width that is not positive, allowed and refused of different lengths, a
 *   curve without points).
 */
export function reportCharts(data: ReportData): ReportCharts {
  return {
    timeline: timelineSection(data.timeline),
    curves: curvesSection(data.curves),
    topLimited: topLimitedSection(data.topLimited),
  };
}

// ---- Allowed and refused over time --------------------------------------------------------

function timelineSection(timeline: Timeline | undefined): ReportSection {
  const id = 'chart-timeline';
  if (timeline === undefined || timeline.policies.length === 0) {
    return { kind: 'sentence', id, text: 'No timeline: no policy was replayed.' };
  }
  const bucketSeconds = checkNumber('timeline.bucketSeconds', timeline.bucketSeconds, 'a positive number of seconds', (v) => v > 0);
  const startMs = checkNumber('timeline.startMs', timeline.startMs, 'a date in milliseconds since the epoch (±8.64e15)', (v) => Math.abs(v) <= 8.64e15);
  const bucketMs = bucketSeconds * 1000;
  const per = `per ${formatSeconds(bucketSeconds)}`;
  // 24-hour UTC times; the day in the title when the log fits in one (UTC) day, else in each label.
  const longest = Math.max(...timeline.policies.map((policy) => policy.allowed.length));
  const day = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
  const lastMs = startMs + Math.max(0, longest * bucketMs - 1);
  const oneDay = Math.abs(lastMs) <= 8.64e15 && day(startMs) === day(lastMs);
  const timeTitle = oneDay ? `time (UTC), ${day(startMs)}` : 'time (UTC)';
  const timeFormat = bucketSeconds >= 86_400 ? '%Y-%m-%d' : oneDay ? '%H:%M' : '%m-%d %H:%M';
  // One row per bucket: policy index, bucket index, allowed, refused. A closing row after the
  // last bucket repeats its counts, so that a step drawn from each bucket's start ends at the
  // last bucket's end (a timeline of one bucket is a block, not a line of no width).
  const rows: { p: number; i: number; a: number; r: number }[] = [];
  const panels = timeline.policies.map((policy, p) => {
    const name = `timeline.policies[${p}]`;
    const n = policy.allowed.length;
    if (policy.refused.length !== n) {
      throw rangeError(`${name}.refused`, `as long as allowed (${n} buckets)`, policy.refused.length);
    }
    if (n === 0) throw rangeError(`${name}.allowed`, 'at least one bucket', n);
    let allowed = 0;
    let refused = 0;
    let peakAllowed = 0;
    let peakRefused = 0;
    for (let i = 0; i < n; i++) {
      const a = checkCount(`${name}.allowed[${i}]`, policy.allowed[i]);
      const r = checkCount(`${name}.refused[${i}]`, policy.refused[i]);
      rows.push({ p, i, a, r });
      allowed += a;
      refused += r;
      peakAllowed = Math.max(peakAllowed, a);
      peakRefused = Math.max(peakRefused, r);
    }
    const last = rows[rows.length - 1] as { a: number; r: number };
    rows.push({ p, i: n, a: last.a, r: last.r });
    const total = allowed + refused;
    const share = total > 0 ? ` (${percent(refused / total)} of ${groupDigits(total)} requests)` : '';
    const x = {
      field: 't',
      type: 'temporal',
      scale: { type: 'utc', domain: [startMs, startMs + n * bucketMs], nice: false },
      axis: { title: timeTitle, format: timeFormat, labelOverlap: true },
    } as const;
    const panel = (field: 'a' | 'r', label: string, color: string, peak: number, height: number) => ({
      width: WIDTH,
      height,
      transform: [{ filter: `datum.p === ${p}` }],
      mark: { type: 'area', interpolate: 'step-after', color, line: { color, strokeWidth: 1 } },
      encoding: {
        x,
        // Each panel its own scale: refused requests are often under 1 % of the traffic, and
        // would be a flat line on the allowed panel's scale.
        y: {
          field,
          type: 'quantitative',
          title: [`${label} requests`, per],
          scale: { domain: [0, Math.max(1, peak)], nice: true },
          axis: { tickMinStep: 1, format: ',d' },
        },
        tooltip: [
          { field: 'when', type: 'nominal', title: 'bucket start' },
          { field, type: 'quantitative', title: `${label} ${per}` },
        ],
      },
    });
    return {
      title: {
        text: escapeText(policy.name),
        subtitle: `${groupDigits(allowed)} allowed, ${groupDigits(refused)} refused${share}`,
      },
      vconcat: [panel('a', 'allowed', BLUE, peakAllowed, 110), panel('r', 'refused', ORANGE, peakRefused, 70)],
      spacing: 6,
    };
  });
  const spec = {
    $schema: SCHEMA,
    description: 'Allowed and refused requests over time, for each policy.',
    data: { values: rows },
    transform: [
      { calculate: `${startMs} + datum.i * ${bucketMs}`, as: 't' },
      { calculate: "utcFormat(datum.t, '%Y-%m-%d %H:%M:%S UTC')", as: 'when' },
    ],
    vconcat: panels,
    spacing: 24,
    config: CONFIG,
  } as unknown as TopLevelSpec;
  return { kind: 'chart', id, spec };
}

// ---- Refused share against threshold ------------------------------------------------------

function curvesSection(curves: readonly Curve[]): ReportSection {
  const id = 'chart-curves';
  if (curves.length === 0) {
    return {
      kind: 'sentence',
      id,
      text: 'No refused-share curve: `ratewarden suggest` draws one per window and strategy.',
    };
  }
  const points: { label: string; threshold: number; refused: number; clients: number }[] = [];
  const goals: { label: string; kind: 'refused' | 'clients'; share: number }[] = [];
  const answers: { label: string; threshold: number; refused?: number; clients?: number; text: string }[] = [];
  let lowest = Infinity;
  let highest = 0;
  for (const [c, curve] of curves.entries()) {
    const name = `curves[${c}]`;
    const label = escapeText(curve.label);
    if (curve.points.length === 0) throw rangeError(`${name}.points`, 'at least one point', curve.points.length);
    for (const [k, point] of curve.points.entries()) {
      const threshold = checkNumber(`${name}.points[${k}].threshold`, point.threshold, 'a positive number', (v) => v > 0);
      lowest = Math.min(lowest, threshold);
      highest = Math.max(highest, threshold);
      points.push({
        label,
        threshold,
        refused: checkShare(`${name}.points[${k}].refusedShare`, point.refusedShare),
        clients: checkShare(`${name}.points[${k}].clientsLimitedShare`, point.clientsLimitedShare),
      });
    }
    for (const [g, goal] of (curve.goals ?? []).entries()) {
      const kind = goal.kind === 'refused' ? 'refused' : 'clients';
      goals.push({ label, kind, share: checkShare(`${name}.goals[${g}].share`, goal.share) });
    }
    if (curve.answer !== undefined) {
      const threshold = checkNumber(`${name}.answer`, curve.answer, 'a positive number', (v) => v > 0);
      const at = curve.points.find((point) => point.threshold === threshold);
      answers.push({
        label,
        threshold,
        ...(at === undefined ? {} : { refused: at.refusedShare, clients: at.clientsLimitedShare }),
        text: `answer: ${groupDigits(threshold)} per ${formatSeconds(curve.windowSeconds)}`,
      });
    }
    for (const [m, marked] of (curve.marked ?? []).entries()) {
      const threshold = checkNumber(`${name}.marked[${m}]`, marked, 'a positive number', (v) => v > 0);
      const at = curve.points.find((point) => point.threshold === threshold);
      answers.push({
        label,
        threshold,
        ...(at === undefined ? {} : { refused: at.refusedShare, clients: at.clientsLimitedShare }),
        text: `replayed: ${groupDigits(threshold)} per ${formatSeconds(curve.windowSeconds)}`,
      });
    }
  }
  const hasAnswer = curves.some((curve) => curve.answer !== undefined);
  const hasMarked = curves.some((curve) => (curve.marked ?? []).length > 0);
  const diamond = hasAnswer && hasMarked ? 'diamond: an answer or a replayed policy' : hasAnswer ? 'diamond: the answer' : hasMarked ? "diamond: a replayed policy's threshold" : '';
  const subtitle = (goal: boolean): string => [goal ? 'dashed: the goal' : '', diamond].filter(Boolean).join('; ');
  // Thresholds from 1 to 10,000 squeeze the low end on a linear axis: logarithmic when they
  // span two orders of magnitude.
  const x = {
    field: 'threshold',
    type: 'quantitative',
    title: 'threshold (requests per window and client)',
    scale: highest / lowest >= 100 ? { type: 'log' } : { zero: false },
  };
  const color = {
    field: 'label',
    type: 'nominal',
    title: 'window, strategy',
    sort: null,
    legend: { orient: 'bottom', direction: 'vertical', labelLimit: 400 },
  };
  /** The answers' labels for a panel, each a line lower than the one before, from its top share. */
  const labels = (field: 'refused' | 'clients') => {
    const top = Math.max(...points.map((point) => point[field]), ...goals.filter((goal) => goal.kind === field).map((goal) => goal.share));
    return answers.map((answer, i) => ({ ...answer, at: top * Math.max(0, 1 - 0.09 * i) }));
  };
  const panel = (field: 'refused' | 'clients', title: string) => ({
    width: WIDTH,
    height: 200,
    layer: [
      {
        data: { values: points },
        mark: { type: 'line', point: true, strokeWidth: 1.5 },
        encoding: {
          x,
          y: { field, type: 'quantitative', title, axis: { format: '~%' } },
          color,
          tooltip: [
            { field: 'label', title: 'curve' },
            { field: 'threshold', type: 'quantitative', title: 'threshold' },
            { field, type: 'quantitative', title, format: '.3~%' },
          ],
        },
      },
      {
        data: { values: goals.filter((goal) => goal.kind === field) },
        mark: { type: 'rule', strokeDash: [6, 4], strokeWidth: 1.5 },
        encoding: { y: { field: 'share', type: 'quantitative' }, color },
      },
      {
        data: { values: answers },
        mark: { type: 'rule', strokeWidth: 1, opacity: 0.7 },
        encoding: { x: { field: 'threshold', type: 'quantitative' }, color },
      },
      {
        data: { values: answers.filter((answer) => answer[field] !== undefined) },
        mark: { type: 'point', shape: 'diamond', size: 140, filled: true, stroke: 'black', strokeWidth: 1 },
        encoding: { x: { field: 'threshold', type: 'quantitative' }, y: { field, type: 'quantitative' }, color },
      },
      {
        // The labels one under the other from the top (rules close together would overlap them).
        data: { values: labels(field) },
        mark: { type: 'text', align: 'left', baseline: 'top', dx: 4, dy: 4, fontSize: 11 },
        encoding: { x: { field: 'threshold', type: 'quantitative' }, y: { field: 'at', type: 'quantitative' }, text: { field: 'text' }, color },
      },
    ],
  });
  const refusedGoal = goals.some((goal) => goal.kind === 'refused');
  const clientsGoal = goals.some((goal) => goal.kind === 'clients');
  const spec = {
    $schema: SCHEMA,
    description: 'Refused share and clients-limited share against the threshold, for each window and strategy.',
    vconcat: [
      {
        title: { text: 'Refused requests', subtitle: subtitle(refusedGoal) },
        ...panel('refused', 'refused (share of all requests)'),
      },
      {
        title: { text: 'Clients limited', subtitle: subtitle(clientsGoal) },
        ...panel('clients', 'clients limited (share of all clients)'),
      },
    ],
    spacing: 24,
    resolve: { scale: { color: 'shared' } },
    config: CONFIG,
  } as unknown as TopLevelSpec;
  return { kind: 'chart', id, spec };
}

// ---- The most-limited clients ---------------------------------------------------------------

function topLimitedSection(topLimited: readonly TopLimited[]): ReportSection {
  const id = 'chart-top-limited';
  const rows: { p: number; rank: number; client: string; refused: number; requests: number }[] = [];
  const limited: string[] = [];
  const nobody: string[] = [];
  for (const [p, policy] of topLimited.entries()) {
    const label = escapeText(policy.policy);
    if (policy.clients.length === 0) {
      nobody.push(label);
      continue;
    }
    limited.push(label);
    for (const [rank, row] of policy.clients.entries()) {
      const name = `topLimited[${p}].clients[${rank}]`;
      const refused = checkCount(`${name}.refused`, row.refused);
      const requests = checkCount(`${name}.requests`, row.requests);
      if (requests < refused) throw rangeError(`${name}.requests`, `at least refused (${refused})`, requests);
      rows.push({ p: limited.length - 1, rank, client: escapeText(row.client), refused, requests });
    }
  }
  const nobodyText = nobody.length === 0 ? '' : `Nobody was limited under ${nobody.join(', ')}.`;
  if (rows.length === 0) {
    return { kind: 'sentence', id, text: topLimited.length === 0 ? 'Nobody was limited.' : nobodyText };
  }
  const bars = (p: number, field: 'refused' | 'requests', title: string, color: string, labels: boolean) => ({
    width: WIDTH / 2 - 40,
    height: { step: 18 },
    transform: [{ filter: `datum.p === ${p}` }],
    encoding: {
      // In the given order (most refused first). Keys are distinct per policy, and stay so
      // escaped (escapeText is injective).
      y: {
        field: 'client',
        type: 'nominal',
        sort: { field: 'rank', op: 'min' },
        title: labels ? 'client (key)' : null,
        axis: labels ? { labelLimit: 260 } : { labels: false, ticks: false },
      },
      x: { field, type: 'quantitative', title, axis: { tickMinStep: 1, format: ',d', labelOverlap: true } },
      tooltip: [
        { field: 'client', title: 'client' },
        { field: 'refused', type: 'quantitative', title: 'refused requests' },
        { field: 'requests', type: 'quantitative', title: 'all its requests' },
      ],
    },
    layer: [
      { mark: { type: 'bar', color } },
      { mark: { type: 'text', align: 'left', dx: 3, fontSize: 10, color: '#333' }, encoding: { text: { field, type: 'quantitative', format: ',d' } } },
    ],
  });
  const spec = {
    $schema: SCHEMA,
    description: 'The most-limited clients of each policy: their refused requests and all their requests.',
    data: { values: rows },
    vconcat: limited.map((label, p) => ({
      title: { text: label, subtitle: 'refused requests (left) and all requests (right) of each client, most refused first' },
      hconcat: [bars(p, 'refused', 'refused requests (count)', ORANGE, true), bars(p, 'requests', 'all requests (count)', GREY, false)],
      resolve: { scale: { x: 'independent' } },
      spacing: 12,
    })),
    spacing: 24,
    config: CONFIG,
  } as unknown as TopLevelSpec;
  return { kind: 'chart', id, spec, ...(nobodyText === '' ? {} : { note: nobodyText }) };
}

// ---- Checks and numbers -------------------------------------------------------------------

function checkNumber(name: string, value: unknown, expected: string, ok: (value: number) => boolean): number {
  if (typeof value !== 'number') throw typeError(name, expected, value);
  if (!Number.isFinite(value) || !ok(value)) throw rangeError(name, expected, value);
  return value;
}

function checkCount(name: string, value: unknown): number {
  return checkNumber(name, value, 'a non-negative integer', (v) => Number.isInteger(v) && v >= 0);
}

function checkShare(name: string, value: unknown): number {
  return checkNumber(name, value, 'a share from 0 to 1', (v) => v >= 0 && v <= 1);
}

/** `0.01234` → `"1.23 %"`; under 0.01 % with three significant digits (`"0.00123 %"`). */
function percent(share: number): string {
  const value = share * 100;
  return `${value === 0 || value >= 0.01 ? value.toFixed(2) : value.toPrecision(3)} %`;
}

/** `60` → `"60 s"`, `300` → `"5 min"`, `3600` → `"1 h"`, `86400` → `"1 d"`. */
export function formatSeconds(seconds: number): string {
  if (seconds >= 86_400 && seconds % 86_400 === 0) return `${seconds / 86_400} d`;
  if (seconds >= 3600 && seconds % 3600 === 0) return `${seconds / 3600} h`;
  if (seconds >= 120 && seconds % 60 === 0) return `${seconds / 60} min`;
  return `${seconds} s`;
}

