// The HTML report's text, without a browser (test/integration/html-report.test.ts draws it in
// Chromium): escaping of hostile text, the CSP's script hashes, determinism, the sentences of
// absent sections, the checks of ReportData, and where the chart libraries are read from.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readChartLibraries, VENDOR_FILES } from '../src/chart-libraries.js';
import { escapeHtml, jsonForScript, renderHtmlReport } from '../src/html-report.js';
import type { ReportData } from '../src/report-data.js';
import { reportCharts } from '../src/report-charts.js';
import { RateWardenRangeError, RateWardenTypeError } from 'ratewarden';

/** Small stand-ins for the libraries: the page's text is what is tested here, not vega. */
const libraries = { vega: 'window.vega = {};', vegaLite: 'window.vegaLite = {};', notices: 'BSD <licence> & ISC' };

const HOSTILE = '</script><script>alert(1)</script>';
const IMG = '<img src=x onerror=alert(2)>';

const data: ReportData = {
  command: 'replay',
  input: `a ${IMG}.log`,
  text: `top limited clients:\n  ${HOSTILE}  3 / 10\n`,
  timeline: { bucketSeconds: 60, startMs: Date.UTC(2015, 4, 17), policies: [{ name: 'p', allowed: [3, 4], refused: [1, 0] }] },
  curves: [
    {
      label: 'per 60 s, gcra',
      windowSeconds: 60,
      strategy: 'gcra',
      points: [{ threshold: 5, refusedShare: 0.1, clientsLimitedShare: 0.2 }],
      goals: [{ kind: 'refused', share: 0.1 }],
      answer: 5,
    },
  ],
  topLimited: [{ policy: 'p', clients: [{ client: HOSTILE, refused: 3, requests: 10 }, { client: IMG, refused: 1, requests: 2 }] }],
};

/** The texts of the page's `<script>` elements, by type attribute (`''` for classic scripts). */
function scripts(html: string): { type: string; text: string }[] {
  return [...html.matchAll(/<script(?: type="([^"]*)")?[^>]*>([\s\S]*?)<\/script>/g)].map((m) => ({ type: m[1] ?? '', text: m[2] ?? '' }));
}

describe('renderHtmlReport', () => {
  it('gives the same bytes for the same data', () => {
    expect(renderHtmlReport(structuredClone<ReportData>(data), libraries)).toBe(renderHtmlReport(data, libraries));
  });

  it('holds hostile text only escaped: as HTML text, and as JSON with no < > &', () => {
    const html = renderHtmlReport(data, libraries);
    // Four script elements: the data, vega, vega-lite, the page's own; nothing from the data opened one.
    expect(scripts(html).map((s) => s.type)).toEqual(['application/json', '', '', '']);
    expect(html.match(/<script/g)).toHaveLength(4);
    expect(html).not.toContain('<img');
    expect(html).toContain(`<title>ratewarden replay: a &#60;img src=x onerror=alert(2)&#62;.log</title>`);
    expect(html).toContain('&#60;/script&#62;&#60;script&#62;alert(1)&#60;/script&#62;  3 / 10');
    expect(html).toContain('<pre>BSD &#60;licence&#62; &#38; ISC</pre>');
    const json = scripts(html)[0]?.text ?? '';
    expect(json).not.toMatch(/[<>&]/);
    const charts = JSON.parse(json) as { id: string; spec: { data: { values: { client?: string }[] } } }[];
    expect(charts.map((chart) => chart.id)).toEqual(['chart-timeline', 'chart-curves', 'chart-top-limited']);
    expect(charts[2]?.spec.data.values.map((row) => row.client)).toEqual([HOSTILE, IMG]);
  });

  it('allows exactly its own inline scripts and style by their SHA-256, and no request', () => {
    const html = renderHtmlReport(data, libraries);
    const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]*)">/.exec(html)?.[1]?.replace(/&#39;/g, "'") ?? '';
    const sha = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;
    const classic = scripts(html).filter((s) => s.type === '');
    const style = /<style>([\s\S]*?)<\/style>/.exec(html)?.[1] ?? '';
    expect(csp.split('; ')).toEqual([
      "default-src 'none'",
      `script-src ${classic.map((s) => sha(s.text)).join(' ')} 'unsafe-eval'`,
      `style-src ${sha(style)}`,
      'img-src data:',
      "connect-src 'none'",
      "font-src 'none'",
      "base-uri 'none'",
      "form-action 'none'",
    ]);
    expect(classic[0]?.text).toBe(libraries.vega);
    expect(classic[1]?.text).toBe(libraries.vegaLite);
  });

  it('puts a sentence in place of each chart without data', () => {
    const html = renderHtmlReport({ command: 'replay', input: 'x', text: '', curves: [], topLimited: [] }, libraries);
    expect(html).toContain('<p id="chart-timeline" class="empty">No timeline: no policy was replayed.</p>');
    expect(html).toContain('<p id="chart-curves" class="empty">No refused-share curve: `ratewarden suggest` draws one per window and strategy.</p>');
    expect(html).toContain('<p id="chart-top-limited" class="empty">Nobody was limited.</p>');
    expect(JSON.parse(scripts(html)[0]?.text ?? '')).toEqual([]);
  });

  it('refuses a library that would end its inline script', () => {
    expect(() => renderHtmlReport(data, { ...libraries, vega: 'x = "</SCRIPT>"' })).toThrow(/vega\.min\.js holds "<\/script" or "<!--"/);
  });
});

describe('reportCharts checks ReportData', () => {
  const timeline = data.timeline!;
  const policy = timeline.policies[0]!;
  const cases: [string, ReportData, typeof RateWardenRangeError | typeof RateWardenTypeError, string][] = [
    ['bucketSeconds 0', { ...data, timeline: { ...timeline, bucketSeconds: 0 } }, RateWardenRangeError, 'Expected `timeline.bucketSeconds` to be a positive number of seconds, got `0` (number)'],
    ['refused shorter', { ...data, timeline: { ...timeline, policies: [{ ...policy, refused: [1] }] } }, RateWardenRangeError, 'Expected `timeline.policies[0].refused` to be as long as allowed (2 buckets), got `1` (number)'],
    ['negative count', { ...data, timeline: { ...timeline, policies: [{ ...policy, allowed: [3, -1] }] } }, RateWardenRangeError, 'Expected `timeline.policies[0].allowed[1]` to be a non-negative integer, got `-1` (number)'],
    ['count as text', { ...data, topLimited: [{ policy: 'p', clients: [{ client: 'c', refused: '3' as unknown as number, requests: 4 }] }] }, RateWardenTypeError, 'Expected `topLimited[0].clients[0].refused` to be a non-negative integer, got `"3"` (string)'],
    ['share over 1', { ...data, curves: [{ ...data.curves[0]!, points: [{ threshold: 5, refusedShare: 1.5, clientsLimitedShare: 0 }] }] }, RateWardenRangeError, 'Expected `curves[0].points[0].refusedShare` to be a share from 0 to 1, got `1.5` (number)'],
    ['no points', { ...data, curves: [{ ...data.curves[0]!, points: [] }] }, RateWardenRangeError, 'Expected `curves[0].points` to be at least one point, got `0` (number)'],
  ];
  it.each(cases)('%s', (_, bad, type, message) => {
    expect(() => reportCharts(bad)).toThrow(type);
    expect(() => reportCharts(bad)).toThrow(message);
  });
});

describe('jsonForScript and escapeHtml', () => {
  it('jsonForScript gives back any value through JSON.parse, with no < > & U+2028 U+2029 in its text', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'grapheme' })), fc.string(), (strings, more) => {
        const value = { strings, more: `${more}</script><!--\u2028\u2029&` };
        const text = jsonForScript(value);
        expect(text).not.toMatch(/[<>&\u2028\u2029]/);
        expect(JSON.parse(text)).toEqual(value);
      }),
    );
  });

  it('escapeHtml writes the five special characters as references', () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe('&#60;a href=&#34;x&#34; title=&#39;y&#39;&#62;&#38;&#60;/a&#62;');
  });
});

describe('readChartLibraries', () => {
  it('reads vendor/ when it is there', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ratewarden-vendor-'));
    try {
      writeFileSync(join(dir, VENDOR_FILES.vega), 'v');
      writeFileSync(join(dir, VENDOR_FILES.vegaLite), 'vl');
      writeFileSync(join(dir, VENDOR_FILES.notices), 'n');
      expect(readChartLibraries(pathToFileURL(`${dir}/`))).toEqual({ vega: 'v', vegaLite: 'vl', notices: 'n' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('falls back on node_modules without vendor/ (run from the sources)', () => {
    const read = readChartLibraries(pathToFileURL(join(tmpdir(), 'ratewarden-no-such-vendor/')));
    expect(read.vega).toMatch(/^!function\(t,e\)/);
    expect(read.vegaLite).toContain('vegaLite');
    expect(read.notices).toContain('University of Washington Interactive Data Lab');
  });
});

describe('the curves chart marks', () => {
  /** The labels of the curves chart's marks (each layer that draws them holds the same data). */
  function curveMarks(curve: ReportData['curves'][number]): { text: string }[] {
    const json = JSON.stringify(reportCharts({ ...data, curves: [curve] }));
    return [...new Set([...json.matchAll(/"text":"((?:answer|replayed): [^"]*)"/g)].map((m) => m[1] as string))].map((text) => ({ text }));
  }

  it("labels suggest's answer and replay's own thresholds, each on its curve", () => {
    const points = [1, 10, 60].map((threshold) => ({ threshold, refusedShare: 1 / threshold, clientsLimitedShare: 0.5 / threshold }));
    const base = { label: 'per 60 s, sliding-window-log', windowSeconds: 60, strategy: 'sliding-window-log', points };
    expect(curveMarks({ ...base, answer: 10 }).map((m) => m.text)).toEqual(['answer: 10 per 60 s']);
    expect(curveMarks({ ...base, marked: [60, 10] }).map((m) => m.text)).toEqual(['replayed: 60 per 60 s', 'replayed: 10 per 60 s']);
    expect(curveMarks(base)).toEqual([]);
    expect(() => reportCharts({ ...data, curves: [{ ...base, marked: [0] }] })).toThrow(/marked\[0\]/);
  });
});

describe('the goals of a curve', () => {
  it('draws each goal on its own panel: two goals, two dashed lines (found by the new-user trial: only the first was drawn)', () => {
    const points = [{ threshold: 1, refusedShare: 0.5, clientsLimitedShare: 0.4 }];
    const curve = { label: 'per 60 s, gcra', windowSeconds: 60, strategy: 'gcra', points };
    const goalsIn = (goals: NonNullable<ReportData['curves'][number]['goals']>) =>
      [...new Set([...JSON.stringify(reportCharts({ ...data, curves: [{ ...curve, goals }] })).matchAll(/"kind":"(refused|clients)","share":([0-9.]+)/g)].map((m) => `${m[1]} ${m[2]}`))];
    expect(goalsIn([{ kind: 'clients-limited', share: 0.01 }, { kind: 'refused', share: 0.005 }]).sort()).toEqual(['clients 0.01', 'refused 0.005']);
    expect(goalsIn([{ kind: 'refused', share: 0.005 }])).toEqual(['refused 0.005']);
    expect(goalsIn([])).toEqual([]);
  });
});
