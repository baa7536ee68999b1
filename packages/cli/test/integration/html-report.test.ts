// The HTML report of `--report FILE.html` in headless Chromium (Debian's, driven by
// puppeteer-core): each report is written to a file and opened from its file: URL with every
// other request aborted, and must draw every chart (SVG marks counted) with no console error, no
// page error, no dialog and no request but the file itself, while hostile client keys show as
// text. A report whose chart library is broken must be seen failing by the same checks.
//
// A full-page screenshot of the main report goes to $RATEWARDEN_REPORT_SCREENSHOT, or
// test-results/html-report.png (ignored by git). The report the built command writes for the
// built-in sample (three policies, as the README shows) is checked too, or, with
// RATEWARDEN_REPORT_FILE=/path/report.html, that file; its screenshot is saved beside the first
// one as report-file.png.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import puppeteer, { type Browser } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadChartLibraries } from '../../src/chart-libraries.js';
import { renderHtmlReport } from '../../src/html-report.js';
import type { ReportData } from '../../src/report-data.js';
import { cli } from '../support/cli.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const chromium = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const screenshot = process.env.RATEWARDEN_REPORT_SCREENSHOT ?? join(root, 'test-results', 'html-report.png');

/** Keys that would run a script if the page let them through: each would open a dialog. */
const SCRIPT_KEY = '</script><script>alert(1)</script>';
const IMG_KEY = '<img src=x onerror=alert(2)>';
const START_MS = Date.UTC(2015, 4, 17, 10, 0, 0);

/** Two policies over 90 one-minute buckets, a curve with a goal and an answer, hostile keys. */
const full: ReportData = {
  command: 'suggest',
  input: `logs/<b>access</b>.log ${IMG_KEY}`,
  text: `ratewarden replay: logs/access.log\ntop limited clients (rejected / requests):\n  ${SCRIPT_KEY}  40 / 400\n`,
  timeline: {
    bucketSeconds: 60,
    startMs: START_MS,
    policies: [
      {
        name: '60/60s sliding-window-log',
        allowed: Array.from({ length: 90 }, (_, i) => 800 + ((i * 37) % 400)),
        refused: Array.from({ length: 90 }, (_, i) => (i % 15 === 0 ? 4 : 0)),
      },
      {
        name: '10/1s gcra',
        allowed: Array.from({ length: 90 }, () => 1000),
        refused: Array.from({ length: 90 }, (_, i) => i % 3),
      },
    ],
  },
  curves: [
    {
      label: 'per 60 s, sliding-window-log',
      windowSeconds: 60,
      strategy: 'sliding-window-log',
      points: [1, 2, 5, 10, 20, 50, 100, 200].map((threshold) => ({
        threshold,
        refusedShare: 0.4 / threshold,
        clientsLimitedShare: Math.min(1, 1.5 / threshold),
      })),
      goals: [{ kind: 'clients-limited', share: 0.05 }],
      answer: 50,
    },
    {
      label: 'per 60 s, fixed-window',
      windowSeconds: 60,
      strategy: 'fixed-window',
      points: [1, 2, 5, 10, 20, 50, 100, 200].map((threshold) => ({
        threshold,
        refusedShare: 0.3 / threshold,
        clientsLimitedShare: Math.min(1, 1.2 / threshold),
      })),
    },
  ],
  topLimited: [
    {
      policy: '60/60s sliding-window-log',
      clients: [
        { client: SCRIPT_KEY, refused: 40, requests: 400 },
        { client: IMG_KEY, refused: 3, requests: 12_000 },
        { client: '203.0.113.9', refused: 1, requests: 61 },
      ],
    },
    { policy: '10/1s gcra', clients: [{ client: '203.0.113.9', refused: 60, requests: 61 }] },
  ],
};

/** The edge cases: a timeline of one bucket, no curve, a policy under which nobody was limited. */
const edge: ReportData = {
  command: 'replay',
  input: '<stdin>',
  text: 'ratewarden replay: <stdin>\n',
  timeline: { bucketSeconds: 60, startMs: START_MS, policies: [{ name: 'p', allowed: [5], refused: [0] }] },
  curves: [],
  topLimited: [{ policy: 'p', clients: [] }],
};

/** No timeline, no curve, nobody listed: three sentences and no chart. */
const empty: ReportData = { command: 'replay', input: 'empty.log', text: '', curves: [], topLimited: [] };

let browser: Browser;
let dir: string;

beforeAll(async () => {
  if (!existsSync(chromium)) {
    throw new Error(
      `Chromium not found at ${chromium}: the HTML report test needs it. Install Debian's chromium ` +
        '(apt-get install chromium; .ci/run does when it is missing) or set CHROMIUM_PATH.',
    );
  }
  dir = mkdtempSync(join(tmpdir(), 'ratewarden-report-'));
  browser = await puppeteer.launch({
    executablePath: chromium,
    // A fresh profile each launch (puppeteer's default), no sandbox (CI runs as root).
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run', '--disable-background-networking'],
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

/** What a page did, opened from `file`: how it ended and everything it tried. */
interface Visit {
  readonly rendered: string | undefined;
  readonly errors: readonly string[];
  readonly requests: readonly string[];
  readonly dialogs: readonly string[];
  /** Per chart container: the number of SVG elements and of marks by kind (area, line, ...). */
  readonly charts: Readonly<Record<string, { svg: number; marks: Record<string, number> }>>;
  readonly sentences: Readonly<Record<string, string>>;
  readonly text: string;
  readonly svgText: readonly string[];
}

async function visit(file: string, shot?: string): Promise<Visit> {
  const page = await browser.newPage();
  const errors: string[] = [];
  const requests: string[] = [];
  const dialogs: string[] = [];
  try {
    await page.setRequestInterception(true);
    page.on('request', (request) => {
      requests.push(request.url());
      // Nothing but the report itself: any other request fails (and is counted).
      if (request.url() === pathToFileURL(file).href) void request.continue();
      else void request.abort();
    });
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warn') errors.push(`console.${message.type()}: ${message.text()}`);
    });
    page.on('pageerror', (error) => errors.push(`pageerror: ${String(error)}`));
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
    await page
      .waitForFunction(() => document.body.getAttribute('data-rendered') !== 'pending', { timeout: 10_000 })
      .catch((error: unknown) => errors.push(`never finished drawing: ${String(error)}`));
    const state = await page.evaluate(() => {
      const charts: Record<string, { svg: number; marks: Record<string, number> }> = {};
      for (const container of Array.from(document.querySelectorAll('.chart'))) {
        const marks: Record<string, number> = {};
        for (const group of Array.from(container.querySelectorAll('g.role-mark'))) {
          const kind = /mark-(\w+)/.exec(group.getAttribute('class') ?? '')?.[1] ?? '?';
          marks[kind] = (marks[kind] ?? 0) + group.querySelectorAll(':scope > path, :scope > line, :scope > text').length;
        }
        charts[container.id] = { svg: container.querySelectorAll('svg').length, marks };
      }
      const sentences: Record<string, string> = {};
      for (const p of Array.from(document.querySelectorAll('p.empty'))) sentences[p.id] = p.textContent ?? '';
      return {
        rendered: document.body.getAttribute('data-rendered') ?? undefined,
        charts,
        sentences,
        text: document.body.innerText,
        svgText: Array.from(document.querySelectorAll('svg text')).map((t) => t.textContent ?? ''),
      };
    });
    if (shot !== undefined) {
      mkdirSync(dirname(shot), { recursive: true });
      await page.screenshot({ path: shot, fullPage: true });
    }
    return { ...state, errors, requests, dialogs };
  } finally {
    await page.close();
  }
}

function write(name: string, html: string): string {
  const file = join(dir, name);
  writeFileSync(file, html);
  return file;
}

/** The checks every report passes: drawn, quiet, offline, nothing injected. */
function expectClean(seen: Visit, file: string): void {
  expect(seen.errors).toEqual([]);
  expect(seen.rendered).toBe('ok');
  expect(seen.requests).toEqual([pathToFileURL(file).href]);
  expect(seen.dialogs).toEqual([]);
}

describe('the HTML report in headless Chromium', () => {
  it('draws every chart offline, with hostile keys shown as text', { timeout: 30_000 }, async () => {
    const file = write('full.html', renderHtmlReport(full));
    const seen = await visit(file, screenshot);
    expectClean(seen, file);
    expect(Object.keys(seen.charts)).toEqual(['chart-timeline', 'chart-curves', 'chart-top-limited']);
    for (const chart of Object.values(seen.charts)) expect(chart.svg).toBe(1);
    // Timeline: an allowed and a refused area per policy.
    expect(seen.charts['chart-timeline']?.marks.area).toBe(4);
    // Curves: two panels, each a line per curve, a point per threshold of each curve, the goal
    // (clients-limited panel only) and the answer's rule in both, the answer's diamond in both.
    const curves = seen.charts['chart-curves']?.marks ?? {};
    expect(curves.line).toBe(2 * 2);
    expect(curves.symbol).toBe(2 * (2 * 8 + 1));
    expect(curves.rule).toBe(2 + 1);
    // Most-limited clients: a refused and a requests bar per client, three clients then one.
    expect(seen.charts['chart-top-limited']?.marks.rect).toBe(2 * (3 + 1));
    // The keys as text, in the SVG (axis labels) and in the text report; the page title too.
    expect(seen.svgText).toContain(SCRIPT_KEY);
    expect(seen.svgText).toContain(IMG_KEY);
    expect(seen.text).toContain(`${SCRIPT_KEY}  40 / 400`);
    expect(seen.text).toContain(`ratewarden suggest: logs/<b>access</b>.log ${IMG_KEY}`);
    expect(seen.svgText).toContain('answer: 50 per 60 s');
    expect(seen.svgText).toContain('time (UTC), 2015-05-17');
  });

  it('draws a one-bucket timeline and says what is absent', { timeout: 30_000 }, async () => {
    const edgeFile = write('edge.html', renderHtmlReport(edge));
    const edgeSeen = await visit(edgeFile);
    expectClean(edgeSeen, edgeFile);
    expect(Object.keys(edgeSeen.charts)).toEqual(['chart-timeline']);
    expect(edgeSeen.charts['chart-timeline']?.marks.area).toBe(2);
    expect(edgeSeen.sentences).toEqual({
      'chart-curves': 'No refused-share curve: `ratewarden suggest` draws one per window and strategy.',
      'chart-top-limited': 'Nobody was limited under p.',
    });

    const emptyFile = write('empty.html', renderHtmlReport(empty));
    const emptySeen = await visit(emptyFile);
    expectClean(emptySeen, emptyFile);
    expect(emptySeen.charts).toEqual({});
    expect(Object.keys(emptySeen.sentences)).toEqual(['chart-timeline', 'chart-curves', 'chart-top-limited']);
  });

  it('is seen failing when its chart library is broken', { timeout: 30_000 }, async () => {
    const libraries = loadChartLibraries();
    // vega-lite's build cut short: a syntax error, and then no `vegaLite` to compile with.
    const broken = { ...libraries, vegaLite: libraries.vegaLite.slice(0, 1000) };
    const file = write('broken.html', renderHtmlReport(edge, broken));
    const seen = await visit(file);
    expect(seen.rendered).toBe('failed');
    expect(seen.errors.some((error) => error.startsWith('pageerror: SyntaxError'))).toBe(true);
    expect(seen.errors.some((error) => error.includes('chart chart-timeline failed'))).toBe(true);
    expect(seen.charts['chart-timeline']?.svg).toBe(0);
  });

  it('draws the report the built command writes for the sample (or the one in RATEWARDEN_REPORT_FILE)', { timeout: 30_000 }, async () => {
    // By default: `ratewarden replay --limit 60/1m --limit 100/1h --limit 3/1s:gcra --report`
    // on the built-in sample, as the README shows it (the built dist/cli.js, its dist/vendor/).
    let file = process.env.RATEWARDEN_REPORT_FILE;
    if (file === undefined) {
      file = join(dir, 'sample-report.html');
      const run = cli(['replay', '--limit', '60/1m', '--limit', '100/1h', '--limit', '3/1s:gcra', '--report', file]);
      expect(run.status, run.stderr).toBe(0);
    }
    const seen = await visit(file, join(dirname(screenshot), 'report-file.png'));
    expectClean(seen, file);
    for (const chart of Object.values(seen.charts)) expect(chart.svg).toBe(1);
  });
});
