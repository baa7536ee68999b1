/**
 * The HTML report of `--report FILE.html` ({@link renderHtmlReport}): one self-contained page
 * that draws the charts of `report-charts.ts` with vega and vega-lite, inlined (nothing is
 * fetched when it is viewed), and shows the text report.
 *
 * Everything that came from the log is hostile (a client key such as
 * `</script><script>alert(1)</script>`): the page holds it only as escaped HTML text and as
 * JSON data inside `<script type="application/json">` with `<`, `>`, `&`, U+2028 and U+2029
 * escaped, read with `JSON.parse`; vega draws it as SVG text. A Content-Security-Policy runs
 * only the page's own three scripts (by their SHA-256) and forbids every request.
 *
 * @module
 */

import { createHash } from 'node:crypto';
import { loadChartLibraries, type ChartLibraries } from './chart-libraries.js';
import { escapeText } from './escape.js';
import { reportCharts, type ReportSection } from './report-charts.js';
import type { ReportData } from './report-data.js';

/**
 * The page's own script: compiles each chart's vega-lite spec and draws it as SVG into its
 * container. A chart that fails says so in its container and on the console, and the body's
 * `data-rendered` ends `ok` or `failed` (`pending` until then), which the tests wait for.
 */
const PAGE_SCRIPT = `'use strict';
(function () {
  var body = document.body;
  var failed = false;
  var charts;
  try {
    charts = JSON.parse(document.getElementById('report-charts').textContent);
  } catch (error) {
    console.error('ratewarden report: unreadable chart data', error);
    body.setAttribute('data-rendered', 'failed');
    return;
  }
  Promise.all(charts.map(function (chart) {
    var container = document.getElementById(chart.id);
    return Promise.resolve().then(function () {
      var spec = vega.parse(vegaLite.compile(chart.spec).spec);
      return new vega.View(spec, { renderer: 'svg', container: container }).runAsync();
    }).catch(function (error) {
      failed = true;
      container.textContent = 'This chart could not be drawn: ' + error;
      console.error('ratewarden report: chart ' + chart.id + ' failed', error);
    });
  })).then(function () {
    body.setAttribute('data-rendered', failed ? 'failed' : 'ok');
  });
})();
`;

const STYLE = `body { font: 14px/1.45 Helvetica, Arial, sans-serif; color: #222; margin: 24px auto; max-width: 1000px; padding: 0 16px; }
h1 { font-size: 20px; margin: 0 0 4px; overflow-wrap: anywhere; }
h2 { font-size: 16px; margin: 28px 0 8px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
.made, .note { color: #555; margin: 0 0 8px; }
.empty { font-style: italic; color: #555; }
pre { background: #f6f8fa; padding: 12px; overflow-x: auto; font: 12px/1.4 Menlo, Consolas, monospace; }
details pre { max-height: 400px; }
`;

/**
 * A complete HTML5 document showing `data`: a title with the input's name, a line saying what
 * made it, the charts (allowed and refused requests over time per policy, the refused-share
 * curves with the goal and the answer, the most-limited clients per policy; a sentence instead
 * of a chart whose data is absent or empty), the text report in a `<pre>`, and the licences of
 * the inlined chart libraries.
 *
 * Self-contained: vega and vega-lite are inlined (about 770 kB), so the page draws its charts
 * offline, from a `file:` URL as well. The same `data` gives the same bytes (no date of
 * generation is written).
 *
 * @param data - what to show, as the replay and `suggest` computed it.
 * @param libraries - the chart libraries to inline; default the package's own
 *   ({@link loadChartLibraries}). Tests pass broken ones to see a failure reported.
 * @returns the document, as text (UTF-8 when written with `writeFileSync(path, html)`).
 * @throws {RateWardenTypeError} when a count or share of `data` is not a number.
 * @throws {RateWardenRangeError} when one is out of range (see `reportCharts`).
 * @throws {Error} when the chart libraries are missing, or hold text that would end an inline
 *   script (`</script`, `<!--`).
 */
export function renderHtmlReport(data: ReportData, libraries: ChartLibraries = loadChartLibraries()): string {
  const charts = reportCharts(data);
  const sections = [charts.timeline, charts.curves, charts.topLimited];
  const drawn = sections.flatMap((section) => (section.kind === 'chart' ? [{ id: section.id, spec: section.spec }] : []));
  const scripts = [inlineScript('vega.min.js', libraries.vega), inlineScript('vega-lite.min.js', libraries.vegaLite), PAGE_SCRIPT];
  const csp = [
    "default-src 'none'",
    // vega compiles its expressions with `new Function` (its CSP-safe interpreter,
    // vega-interpreter, is another package): without 'unsafe-eval' no chart is drawn.
    `script-src ${scripts.map(hashSource).join(' ')} 'unsafe-eval'`,
    `style-src ${hashSource(STYLE)}`,
    'img-src data:',
    "connect-src 'none'",
    "font-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
  const title = `ratewarden ${data.command}: ${escapeText(data.input)}`;
  const headings = {
    [charts.timeline.id]: 'Allowed and refused requests over time',
    [charts.curves.id]: 'Refused share against the threshold',
    [charts.topLimited.id]: 'The most-limited clients',
  };
  const body = sections.map((section) => sectionHtml(headings[section.id] ?? section.id, section));
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="ratewarden">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body data-rendered="pending">
<h1>${escapeHtml(title)}</h1>
<p class="made">Made by <code>ratewarden ${data.command} --report</code>. The charts are drawn in this page by Vega-Lite, inlined: it needs no network.</p>
${body.join('\n')}
<section>
<h2>Text report</h2>
<pre id="text-report">${escapeHtml(data.text)}</pre>
</section>
<details>
<summary>Licences of the chart libraries in this page (vega, vega-lite and what they bundle)</summary>
<pre>${escapeHtml(libraries.notices)}</pre>
</details>
<script type="application/json" id="report-charts">${jsonForScript(drawn)}</script>
${scripts.map((script) => `<script>${script}</script>`).join('\n')}
</body>
</html>
`;
}

function sectionHtml(heading: string, section: ReportSection): string {
  const content =
    section.kind === 'chart'
      ? `<div id="${section.id}" class="chart"></div>` +
        (section.note === undefined ? '' : `\n<p class="note">${escapeHtml(section.note)}</p>`)
      : `<p id="${section.id}" class="empty">${escapeHtml(section.text)}</p>`;
  return `<section>\n<h2>${escapeHtml(heading)}</h2>\n${content}\n</section>`;
}

/** `text` as HTML text or a quoted attribute value: `&`, `<`, `>`, `"` and `'` as references. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * `value` as JSON to put inside a `<script>` element: `<`, `>` and `&` written as `\u003c`,
 * `\u003e`, `\u0026` (no `</script>` or `<!--` can end or change the element), and U+2028 and
 * U+2029 as escapes too. `JSON.parse` of the element's text gives `value` back.
 */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** `text`, checked to be inlinable in a `<script>` element as it is. */
function inlineScript(name: string, text: string): string {
  if (/<\/script|<!--/i.test(text)) {
    throw new Error(`${name} holds "</script" or "<!--": it cannot be inlined in the HTML report as it is`);
  }
  return text;
}

/** The CSP source that allows the inline script or style `text` (its SHA-256, base64). */
function hashSource(text: string): string {
  return `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
}
