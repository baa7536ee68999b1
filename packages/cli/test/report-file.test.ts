// `--report FILE.html` of `ratewarden replay` and `suggest`, end to end (the built `dist/cli.js`):
// the file is written, holds the charts' data (read back from its JSON), stderr says where, stdout
// still has the report; a path that cannot be written is one line, exit 2, nothing on stdout. The
// page's drawing is tested in headless Chromium by test/integration/html-report.test.ts.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, requireBuiltCli, stderrLines } from './support/cli.js';
import { CLF } from './support/format-fixtures.js';

let dir = '';
beforeAll(() => {
  requireBuiltCli();
  dir = mkdtempSync(join(tmpdir(), 'ratewarden-report-'));
});
afterAll(() => {
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

interface Chart {
  id: string;
  spec: { data?: { values: Record<string, unknown>[] }; vconcat?: { title?: { text: string; subtitle: string } }[] };
}

/** The charts' data of a report page: the JSON the page's script reads. */
function charts(file: string): Chart[] {
  const html = readFileSync(file, 'utf8');
  expect(html.startsWith('<!DOCTYPE html>')).toBe(true);
  const json = /<script type="application\/json" id="report-charts">([^<]*)<\/script>/.exec(html)?.[1];
  expect(json).toBeDefined();
  return JSON.parse(json as string) as Chart[];
}

describe('--report FILE.html', { timeout: 60_000 }, () => {
  it('replay: writes the page with each policy and the group, says where; stdout has the report', () => {
    const file = join(dir, 'replay.html');
    const run = cli(['replay', '-', '--limit', '2/10s', '--limit', '1/1m:gcra', '--json', '--report', file], CLF.text);
    expect(run.status).toBe(0);
    expect(stderrLines(run)).toEqual([...CLF.stderr, `ratewarden: report written to ${file} (open it in a browser)`]);
    const json = JSON.parse(run.stdout) as { policies: { name: string; rejected: number }[]; group: { rejected: number } };
    // 1/1m:gcra: A 4 refused of 5, B 2 of 3, C none: 6. Together (hand): A@1, B@2, C@4 allowed, the rest refused by one: 6.
    expect(json.policies.map((p) => [p.name, p.rejected])).toEqual([
      ['2/10s', 3],
      ['1/1m:gcra', 6],
    ]);
    expect(json.group.rejected).toBe(6);
    const [timeline, curves, top] = charts(file);
    expect(timeline!.id).toBe('chart-timeline');
    expect(timeline!.spec.vconcat!.map((v) => [v.title!.text, v.title!.subtitle])).toEqual([
      ['2/10s', '6 allowed, 3 refused (33.33 % of 9 requests)'],
      ['1/1m:gcra', '3 allowed, 6 refused (66.67 % of 9 requests)'],
      ['all (one RateLimitGroup)', '3 allowed, 6 refused (66.67 % of 9 requests)'],
    ]);
    expect(curves!.id).toBe('chart-curves');
    expect(top!.id).toBe('chart-top-limited');
    expect(top!.spec.data!.values).toContainEqual(expect.objectContaining({ client: '192.0.2.10', refused: 2, requests: 5 }));
    // The text report is in the page too.
    expect(readFileSync(file, 'utf8')).toContain('<pre id="text-report">ratewarden replay: &#60;stdin&#62;\nlog: 9 requests from 3 clients');
  });

  it('suggest: writes the page with the curve, the answer and the goal', () => {
    const file = join(dir, 'suggest.html');
    const run = cli(['suggest', '-', '--window', '10s', '--max-refused', '20%', '--report', file], CLF.text);
    expect(run.status).toBe(0);
    expect(stderrLines(run).at(-1)).toBe(`ratewarden: report written to ${file} (open it in a browser)`);
    expect(run.stdout).toMatch(/^10s +sliding-window-log +3 +1 \(11\.11%\)/m);
    const [timeline, curves] = charts(file);
    expect(timeline!.spec.vconcat!.map((v) => v.title!.text)).toEqual(['3/10s']);
    expect(JSON.stringify(curves!.spec)).toContain('"threshold":3');
    expect(readFileSync(file, 'utf8')).toContain('goal: at most 20% of requests refused');
  });

  it('a path that cannot be written: one line, exit 2, no report on stdout, no file', () => {
    for (const command of [['replay', '-', '--limit', '1/1m'], ['suggest', '-']]) {
      const missing = join(dir, 'no-such-dir', 'r.html');
      const run = cli([...command, '--report', missing], '192.0.2.1 - - [10/Mar/2024:14:00:00 +0000] "GET / HTTP/1.1" 200 1\n');
      expect(run.status).toBe(2);
      expect(run.stdout).toBe('');
      expect(stderrLines(run)).toEqual([`ratewarden: cannot write the report to \`${missing}\`: no such file or directory`]);
      expect(existsSync(missing)).toBe(false);
      const directory = cli([...command, '--json', '--report', dir], '192.0.2.1 - - [10/Mar/2024:14:00:00 +0000] "GET / HTTP/1.1" 200 1\n');
      expect(directory.status).toBe(2);
      expect(directory.stdout).toBe('');
      expect(stderrLines(directory)).toEqual([`ratewarden: cannot write the report to \`${dir}\`: is a directory`]);
      // Checked before the log is read (found by review: a 10M-line log was replayed first): the
      // report's path is what is said to be wrong, not the missing log.
      const first = cli([command[0] as string, join(dir, 'no-such.log'), '--report', missing]);
      expect(first.status).toBe(2);
      expect(stderrLines(first)).toEqual([`ratewarden: cannot write the report to \`${missing}\`: no such file or directory`]);
    }
  });
});
