// Option values printed anywhere are escaped (found by an attacker: `--key field:PATH` and
// `--time-field PATH` values with ESC or bidi controls reached the terminal raw, in the
// malformed-line reasons on stderr and in the report's `log:` line, text and HTML).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { escapeText } from '../src/escape.js';
import { cli, requireBuiltCli } from './support/cli.js';

/** ESC (a terminal escape sequence's start) and U+202E (right-to-left override). */
const HOSTILE = ['\x1b[31mred', 'evil\u202etxt.exe'];
/** Whether `text` holds either raw. */
// A control character is what it looks for.
// eslint-disable-next-line no-control-regex
const RAW = /[\x1b\u202e]/u;

let dir = '';
beforeAll(() => {
  requireBuiltCli();
  dir = mkdtempSync(join(tmpdir(), 'ratewarden-escape-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('option values are escaped wherever they are printed', { timeout: 60_000 }, () => {
  for (const field of HOSTILE) {
    const escaped = escapeText(field);
    // Lines with neither field: every one is malformed, `no field PATH`; the report is printed all
    // the same (exit 1: nothing replayed).
    const log = ['{"ts":1710079327,"ip":"192.0.2.1"}', '{"ts":1710079328,"ip":"192.0.2.2"}'].join('\n');
    it(`--key field:${escaped}: the malformed reason on stderr, and the log: line of the text and HTML reports`, () => {
      const report = join(dir, 'key.html');
      const run = cli(['replay', '-', '--format', 'json', '--time-field', 'ts', '--key', `field:${field}`, '--report', report], log);
      expect(run.status, run.stderr).toBe(1);
      expect(run.stderr).not.toMatch(RAW);
      expect(run.stderr).toContain(`malformed (no field ${escaped})`);
      expect(run.stdout).not.toMatch(RAW);
      expect(run.stdout).toContain(`key: JSON field ${escaped};`);
      const html = readFileSync(report, 'utf8');
      expect(html).not.toMatch(RAW);
      expect(html).toContain(`key: JSON field ${escaped.replace(/&/g, '&#38;')};`);
    });

    it(`--time-field ${escaped}: the malformed reason on stderr, and the log: line of the text and HTML reports`, () => {
      const report = join(dir, 'time.html');
      const run = cli(['replay', '-', '--format', 'json', '--time-field', field, '--key', 'field:ip', '--report', report], log);
      expect(run.status, run.stderr).toBe(1);
      expect(run.stderr).not.toMatch(RAW);
      expect(run.stderr).toContain(`malformed (no field ${escaped})`);
      expect(run.stdout).not.toMatch(RAW);
      expect(run.stdout).toContain(`time: JSON field ${escaped} (auto)`);
      const html = readFileSync(report, 'utf8');
      expect(html).not.toMatch(RAW);
      expect(html).toContain(`time: JSON field ${escaped} (auto)`);
    });

    it(`suggest, --time-field ${escaped}: the log: line`, () => {
      const run = cli(['suggest', '-', '--format', 'json', '--time-field', field, '--key', 'field:ip'], log);
      expect(run.status, run.stderr).toBe(1);
      expect(run.stderr).toContain(`malformed (no field ${escaped})`);
      expect(`${run.stdout}${run.stderr}`).not.toMatch(RAW);
      expect(run.stdout).toContain(`time: JSON field ${escaped} (auto)`);
    });
  }
});
