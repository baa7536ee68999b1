// Draws docs/strategies.svg: one bursty client of the bundled access log replayed through every
// strategy of ratewarden at the same nominal limit, admitted vs rejected requests over time.
//
// Run with `npm run docs:plot` (it builds dist/ first). The figure comes from the real strategies
// in dist/index.js and the real log in packages/cli/data/access-combined.log.gz; the output is deterministic
// (same bytes on every run), so a diff of docs/strategies.svg shows real changes only.

import { readFileSync, writeFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import * as vega from 'vega';
import { compile } from 'vega-lite';
import {
  FixedWindow,
  GCRA,
  RateLimiter,
  SlidingWindowCounter,
  SlidingWindowLog,
  TokenBucket,
} from '../dist/index.js';

// ---- Choices ------------------------------------------------------------------------------

/** The nominal limit every strategy gets: THRESHOLD requests per WINDOW_SECONDS. */
const THRESHOLD = 20;
const WINDOW_SECONDS = 20;

/** The strategies, top to bottom, with the labels of their lanes. */
const STRATEGIES = [
  { label: 'Sliding-window log', make: () => new SlidingWindowLog() },
  { label: 'Sliding-window counter', make: () => new SlidingWindowCounter() },
  { label: 'Fixed window', make: () => new FixedWindow() },
  { label: 'Token bucket', make: () => new TokenBucket() },
  { label: 'GCRA', make: () => new GCRA() },
];

const INPUT = new URL('../packages/cli/data/access-combined.log.gz', import.meta.url);
const OUTPUT = new URL('./strategies.svg', import.meta.url);

// ---- The trace ----------------------------------------------------------------------------

const MONTHS = { Jan: 0, Feb: 1, Mar: 2, Apr: 3, May: 4, Jun: 5, Jul: 6, Aug: 7, Sep: 8, Oct: 9, Nov: 10, Dec: 11 };
// `client ident user [17/May/2015:10:05:03 +0000] ...`: the fields of Common/Combined Log Format we need.
const LINE = /^(\S+) \S+ \S+ \[(\d{2})\/([A-Z][a-z]{2})\/(\d{4}):(\d{2}):(\d{2}):(\d{2}) ([+-])(\d{2})(\d{2})\]/;

/** Every parseable line as `{ client, time }` (time in epoch milliseconds, UTC), in file order. */
function parseLog(text) {
  const requests = [];
  for (const line of text.split('\n')) {
    const m = LINE.exec(line);
    if (m === null || !(m[3] in MONTHS)) continue;
    const offsetMs = (m[8] === '-' ? -1 : 1) * (Number(m[9]) * 60 + Number(m[10])) * 60_000;
    const local = Date.UTC(Number(m[4]), MONTHS[m[3]], Number(m[2]), Number(m[5]), Number(m[6]), Number(m[7]));
    requests.push({ client: m[1], time: local - offsetMs });
  }
  return requests;
}

const requests = parseLog(gunzipSync(readFileSync(INPUT)).toString('utf8'));
if (requests.length === 0) throw new Error(`no request parsed from ${INPUT.pathname}`);

// The densest burst: the (client, clock minute) with the most requests; ties go to the earlier
// minute, then to the client seen first. (The log holds only minute :05 of each hour, so every
// burst in it is one minute long; this one is the busiest minute of any client.)
const perMinute = new Map();
for (const { client, time } of requests) {
  const minute = Math.floor(time / 60_000) * 60_000;
  const id = `${client} ${minute}`;
  const entry = perMinute.get(id) ?? { client, minute, count: 0 };
  entry.count++;
  perMinute.set(id, entry);
}
let burst;
for (const entry of perMinute.values()) {
  if (burst === undefined || entry.count > burst.count || (entry.count === burst.count && entry.minute < burst.minute)) {
    burst = entry;
  }
}
const START = burst.minute;
const END = START + 60_000;
// The trace: that client's requests in that minute, by time; ties keep file order (stable sort).
const trace = requests
  .filter((r) => r.client === burst.client && r.time >= START && r.time < END)
  .sort((a, b) => a.time - b.time);

// ---- The replay ---------------------------------------------------------------------------

const lanes = STRATEGIES.map(({ label, make }) => {
  let now = 0;
  const strategy = make();
  const limiter = new RateLimiter({
    threshold: THRESHOLD,
    windowSeconds: WINDOW_SECONDS,
    strategy,
    clock: () => now,
  });
  const decisions = trace.map(({ client, time }) => {
    now = time;
    return { time, allowed: limiter.allowRequestSync(client).allowed };
  });
  const allowedTimes = decisions.filter((d) => d.allowed).map((d) => d.time);
  // The most requests admitted in any span of one window, (t - window, t]: the limit holds
  // exactly when this is at most the threshold.
  let peak = 0;
  for (let last = 0, first = 0; last < allowedTimes.length; last++) {
    while (allowedTimes[first] <= allowedTimes[last] - WINDOW_SECONDS * 1000) first++;
    peak = Math.max(peak, last - first + 1);
  }
  const admitted = allowedTimes.length;
  return { label, name: strategy.name, decisions, admitted, rejected: decisions.length - admitted, peak };
});

// ---- The figure ---------------------------------------------------------------------------

const ADMITTED = 'admitted';
const REJECTED = 'rejected';

// Requests of one lane in the same second and with the same outcome are stacked: admitted ones
// upward from the lane's centre line, rejected ones downward.
const rows = [];
let tallest = 1;
for (const lane of lanes) {
  const title = lane.label;
  const stacks = new Map();
  for (const { time, allowed } of lane.decisions) {
    const outcome = allowed ? ADMITTED : REJECTED;
    const id = `${outcome} ${time}`;
    const level = (stacks.get(id) ?? 0) + 1;
    stacks.set(id, level);
    tallest = Math.max(tallest, level);
    rows.push({ kind: 'request', lane: title, time, outcome, y: (allowed ? 1 : -1) * (level - 0.5) });
  }
  rows.push({ kind: 'centre', lane: title, y: 0, note: `max ${lane.peak} admitted in any ${WINDOW_SECONDS} s` });
  rows.push({ kind: 'count', lane: title, outcome: ADMITTED, text: `${lane.admitted} admitted` });
  rows.push({ kind: 'count', lane: title, outcome: REJECTED, text: `${lane.rejected} rejected` });
}
// The window boundaries of the two window-based strategies: both anchor their windows at the
// key's first request.
const boundaries = [];
for (let t = trace[0].time + WINDOW_SECONDS * 1000; t < END; t += WINDOW_SECONDS * 1000) boundaries.push(t);
for (const lane of lanes) {
  if (lane.name !== 'fixed-window' && lane.name !== 'sliding-window-counter') continue;
  for (const time of boundaries) rows.push({ kind: 'boundary', lane: lane.label, time });
}

const pad2 = (n) => String(n).padStart(2, '0');
const startDate = new Date(START);
const endDate = new Date(END);
const day = `${startDate.getUTCDate()} ${Object.keys(MONTHS)[startDate.getUTCMonth()]} ${startDate.getUTCFullYear()}`;
const hhmm = (d) => `${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}`;

/** The width of the plot area, in pixels (the whole figure is about 200 more). */
const WIDTH = 620;
const BLUE = '#1f5fa8';
const ORANGE = '#d95f02';
const ORANGE_TEXT = '#b34a00';
// A filled X, a little larger than the unit square so that it weighs about as much as the dot.
const X_SHAPE = 'M-1.1,-0.7L-0.7,-1.1L0,-0.4L0.7,-1.1L1.1,-0.7L0.4,0L1.1,0.7L0.7,1.1L0,0.4L-0.7,1.1L-1.1,0.7L-0.4,0Z';
const x = {
  field: 'time',
  type: 'temporal',
  scale: { type: 'utc', domain: [START, END], nice: false },
  axis: {
    title: `Time (UTC), ${day}`,
    format: '%H:%M:%S',
    values: Array.from({ length: 7 }, (_, i) => START + i * 10_000),
    grid: true,
    gridColor: '#e6e6e6',
    labelFontSize: 11,
    titleFontSize: 12,
    titleFontWeight: 'normal',
  },
};
const y = {
  field: 'y',
  type: 'quantitative',
  scale: { domain: [-tallest, tallest], nice: false, zero: false },
  axis: null,
};

const spec = {
  $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
  description: 'Admitted and rejected requests over time for each ratewarden strategy, replaying one bursty client.',
  background: 'white',
  padding: { left: 10, right: 20, top: 10, bottom: 10 },
  title: {
    text: `One burst, five strategies, one limit: ${THRESHOLD} requests per ${WINDOW_SECONDS} s`,
    subtitle: [
      `Client ${burst.client} of data/access-combined.log.gz, ${day} ${hhmm(startDate)}–${hhmm(endDate)} UTC: ${trace.length} requests, ` +
        'the densest minute of any client,',
      'replayed through each ratewarden strategy (the token bucket and GCRA decide alike, by design). Requests in the same',
      `second are stacked. Dashed lines: the ${WINDOW_SECONDS}-s windows of the fixed window and the sliding-window counter, ` +
        'anchored at the first request.',
    ],
    anchor: 'start',
    fontSize: 16,
    subtitleFontSize: 12,
    subtitleColor: '#444',
    subtitlePadding: 6,
    offset: 12,
  },
  data: { values: rows },
  facet: {
    row: {
      field: 'lane',
      type: 'nominal',
      sort: lanes.map((lane) => lane.label),
      header: { title: null, labels: false },
    },
  },
  spacing: 8,
  spec: {
    width: WIDTH,
    height: Math.max(60, tallest * 14),
    layer: [
      {
        transform: [{ filter: "datum.kind === 'centre'" }],
        mark: { type: 'rule', color: '#999', strokeWidth: 1 },
        encoding: { y },
      },
      {
        transform: [{ filter: "datum.kind === 'boundary'" }],
        mark: { type: 'rule', color: '#777', strokeWidth: 1, strokeDash: [4, 3] },
        encoding: { x },
      },
      // Left of the lane: its name and its peak; right of it: its counts, admitted beside its
      // upper half, rejected beside its lower half.
      {
        transform: [{ filter: "datum.kind === 'centre'" }],
        mark: { type: 'text', align: 'right', baseline: 'middle', dx: -10, dy: -8, fontSize: 13, fontWeight: 'bold', color: '#222' },
        encoding: { x: { value: 0 }, y, text: { field: 'lane' } },
      },
      {
        transform: [{ filter: "datum.kind === 'centre'" }],
        mark: { type: 'text', align: 'right', baseline: 'middle', dx: -10, dy: 9, fontSize: 11, color: '#555' },
        encoding: { x: { value: 0 }, y, text: { field: 'note' } },
      },
      ...[
        [ADMITTED, BLUE, tallest / 2],
        [REJECTED, ORANGE_TEXT, -tallest / 2],
      ].map(([outcome, color, yValue]) => ({
        transform: [{ filter: `datum.kind === 'count' && datum.outcome === '${outcome}'` }],
        mark: { type: 'text', align: 'left', baseline: 'middle', dx: 10, fontSize: 12, color },
        encoding: { x: { value: WIDTH }, y: { datum: yValue, type: 'quantitative', axis: null }, text: { field: 'text' } },
      })),
      {
        transform: [{ filter: "datum.kind === 'request'" }],
        mark: { type: 'point', filled: true, size: 34, opacity: 1, stroke: 'white', strokeWidth: 0.5 },
        encoding: {
          x,
          y,
          color: {
            field: 'outcome',
            type: 'nominal',
            scale: { domain: [ADMITTED, REJECTED], range: [BLUE, ORANGE] },
            legend: {
              title: null,
              orient: 'top',
              direction: 'horizontal',
              labelExpr: `datum.value === '${ADMITTED}' ? 'admitted (above each line)' : 'rejected (below each line)'`,
              labelFontSize: 12,
              labelLimit: 300,
              symbolSize: 90,
              offset: 6,
            },
          },
          shape: {
            field: 'outcome',
            type: 'nominal',
            scale: { domain: [ADMITTED, REJECTED], range: ['circle', X_SHAPE] },
          },
        },
      },
    ],
  },
  config: {
    aria: false, // no ARIA label per mark: they would be most of the file
    font: 'Helvetica, Arial, sans-serif',
    view: { stroke: '#ccc' },
    title: { color: '#222' },
  },
};

// Text widths decide the layout (the label margins, the figure's size). Without a canvas vega
// estimates every character as 0.8 em, which leaves wide empty margins; use the advance widths of
// Helvetica / Arial (in 1/1000 em) instead, deterministic, with 12 % to spare so that text still
// fits where a viewer falls back to a wider font such as DejaVu Sans.
const ADVANCE = {
  ' !,./:;I[]fijlt|·': 278,
  "'": 191,
  '-()r': 333,
  '0123456789abdeghnopquL?_': 556,
  'ckJsvxyz': 500,
  'ABEKPSVXY': 667,
  'CDHNRUw': 722,
  'FTZ': 611,
  'GOQ': 778,
  'Mm': 833,
  'W': 944,
  '–': 556,
};
const advance = new Map();
for (const [chars, width] of Object.entries(ADVANCE)) for (const c of chars) advance.set(c, width);
vega.textMetrics.width = (item, text) => {
  const size = vega.fontSize(item);
  const bold = item.fontWeight === 'bold' || Number(item.fontWeight) >= 600;
  let units = 0;
  for (const c of String(text ?? '')) units += advance.get(c) ?? 600;
  return (units / 1000) * size * (bold ? 1.08 : 1) * 1.12;
};
vega.resetSVGDefIds();

const view = new vega.View(vega.parse(compile(spec).spec), { renderer: 'none' });
const svg = await view.toSVG();
view.finalize();
writeFileSync(OUTPUT, svg.endsWith('\n') ? svg : `${svg}\n`);

for (const lane of lanes) {
  console.log(
    `${lane.label.padEnd(24)} ${String(lane.admitted).padStart(4)} admitted ${String(lane.rejected).padStart(4)} rejected, ` +
      `at most ${lane.peak} admitted in any ${WINDOW_SECONDS} s`,
  );
}
console.log(`${trace.length} requests of ${burst.client}; wrote ${OUTPUT.pathname}`);
