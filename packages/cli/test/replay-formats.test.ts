// `ratewarden replay` end to end on each log format (CLF, JSON lines as Caddy and nginx write
// them, AWS ALB), through the built `dist/cli.js`: the small logs of test/support/format-fixtures.ts
// (hand-computed outcomes, malformed lines, mixed zones, out-of-order times) read as a file,
// gzipped, on stdin (`-`) and piped, with `--format auto` and with the format named; then the
// inputs that tend to break a reader (a cut first line, a BOM, CRLF, escapes, times out of range).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, cliFromShell, requireBuiltCli, stderrLines } from './support/cli.js';
import { FORMAT_FIXTURES, T0_MS, shown, type FormatFixture } from './support/format-fixtures.js';
import { refModel, refReplay, type RefRequest } from '../../../test/support/reference-models.js';

const LIMIT = ['--limit', '2/10s'];

let dir = '';
beforeAll(() => {
  requireBuiltCli();
  dir = mkdtempSync(join(tmpdir(), 'ratewarden-formats-'));
});
afterAll(() => {
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

/** The one JSON object a run printed, after checking its exit code. */
function parsed(run: ReturnType<typeof cli>, status = 0): Record<string, unknown> {
  expect(run.status, run.stderr).toBe(status);
  const lines = run.stdout.split('\n').filter((line) => line !== '');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0] as string) as Record<string, unknown>;
}

describe('the hand computation of the format fixtures, by the reference model', () => {
  // The instants of the fixtures' nine requests (s from T0), as the table of format-fixtures.ts
  // lists them, and as a replay that got the zones, the order or the time field wrong would see them.
  const requests = (list: readonly (readonly [string, number])[]): RefRequest[] =>
    list.map(([client, s]) => ({ client, timeMs: T0_MS + s * 1000 })).sort((a, b) => a.timeMs - b.timeMs);
  const rejected = (list: readonly (readonly [string, number])[]): number => refReplay(requests(list), refModel('sliding-window-log', 2, 10_000)).rejected;
  const A = 'A';
  const B = 'B';
  const C = 'C';

  it('gives 3 refusals, and would give another count had the zones, the fractions or the time field been misread', () => {
    // CLF, as read: file order, each at its UTC instant.
    expect(rejected([[A, 5], [A, 1], [B, 2], [A, 3], [B, 2], [A, 11], [C, 4], [B, 2], [A, 12]])).toBe(3);
    // CLF with local times read as UTC.
    expect(rejected([[A, 5], [A, 1], [B, -25198], [A, 3603], [B, 2], [A, 11], [C, 4], [B, 19802], [A, 12]])).toBe(1);
    // Caddy: fractions floored; kept to the microsecond (or rounded to the ms: 1.001) instead.
    expect(rejected([[A, 5.25], [A, 1], [B, 2.5], [A, 3.75], [B, 2.5], [A, 11], [C, 4], [B, 2.5], [A, 11]])).toBe(3);
    expect(rejected([[A, 5.25], [A, 1.0009], [B, 2.5], [A, 3.75], [B, 2.5], [A, 11], [C, 4], [B, 2.5], [A, 11.0004]])).toBe(4);
    expect(rejected([[A, 5.25], [A, 1.001], [B, 2.5], [A, 3.75], [B, 2.5], [A, 11], [C, 4], [B, 2.5], [A, 11]])).toBe(4);
    // nginx with the offsets ignored.
    expect(rejected([[A, 3605], [A, 1], [B, -25198], [A, 7203], [B, 2], [A, 11], [C, 19804], [B, 19802], [A, 12]])).toBe(0);
    // ALB by request_creation_time, as read; and by `time`.
    expect(rejected([[A, 1], [A, 5.15], [B, 2], [A, 3], [B, 2], [A, 11], [C, 4], [B, 2], [A, 12]])).toBe(3);
    expect(rejected([[A, 5.1], [A, 5.2], [B, 5.3], [A, 5.4], [B, 5.5], [A, 11.1], [C, 11.2], [B, 11.3], [A, 12.1]])).toBe(4);
  });
});

describe('ratewarden replay: each format, every way of reading it', { timeout: 60_000 }, () => {
  it.each(Object.entries(FORMAT_FIXTURES))('%s: a file, gzipped, on stdin and piped; auto and named format', (name, fixture: FormatFixture) => {
    const plain = join(dir, `${name}.log`);
    const gz = join(dir, `${name}.log.gz`);
    writeFileSync(plain, fixture.text);
    writeFileSync(gz, gzipSync(fixture.text));
    const named = ['--format', fixture.format];
    const runs: [string, ReturnType<typeof cli>, string[]][] = [
      ['file, auto', cli(['replay', plain, ...LIMIT, '--json']), []],
      ['file, named', cli(['replay', plain, ...LIMIT, ...named, '--json']), []],
      ['gzip file, auto', cli(['replay', gz, ...LIMIT, '--json']), []],
      ['gzip on stdin (-), named', cli(['replay', '-', ...LIMIT, ...named, '--json'], gzipSync(fixture.text)), []],
      ['piped, no FILE, auto', cliFromShell(['replay', ...LIMIT, '--json'], plain), ['ratewarden: no FILE given: replaying stdin (a pipe)']],
      ['gzip piped to -, named', cliFromShell(['replay', '-', ...LIMIT, ...named, '--json'], gz), []],
    ];
    for (const [how, run, before] of runs) {
      const result = parsed(run);
      const file = how.startsWith('file') ? plain : how.startsWith('gzip file') ? gz : '-';
      // Field by field: every field of the report but the timing ones.
      const { seconds, lines_per_second: linesPerSecond, policies, group, ...rest } = result;
      expect(typeof seconds, how).toBe('number');
      expect(typeof linesPerSecond, how).toBe('number');
      expect(rest, how).toEqual({ file, sample: false, ...fixture.expected });
      expect(policies, how).toEqual([
        {
          name: '2/10s',
          threshold: 2,
          window_seconds: 10,
          strategy: 'sliding-window-log',
          allowed: 6,
          rejected: 3,
          clients_limited: 2,
          peak_refused_per_minute: 3,
          peak_minute: '2024-03-10T14:00:00.000Z',
          top_limited: fixture.expected.top_limited,
        },
      ]);
      expect(group, how).toBeNull(); // one policy: no group
      expect(stderrLines(run), how).toEqual([...before, ...fixture.stderr]);
    }
  });
});

describe('ratewarden replay: inputs that tend to break a reader', { timeout: 60_000 }, () => {
  const caddyLine = (ts: string, ip: string): string =>
    `{"level":"info","ts":${ts},"msg":"handled request","request":{"client_ip":"${ip}","headers":{"Accept":["*/*"]}},"status":200}`;

  it('a JSON log whose first line is the tail of a cut line: still detected as JSON lines (auto), the tail malformed', () => {
    // A log rotated or copied from the middle of a line: the first line is no format at all. The
    // format is then taken from the first line that is one (here the second), not fixed as CLF.
    const text = [
      'nt_ip":"192.0.2.9"},"status":200}',
      caddyLine('1710079200.5', '192.0.2.1'),
      caddyLine('1710079201.5', '192.0.2.1'),
      caddyLine('1710079202.5', '192.0.2.1'),
      '',
    ].join('\n');
    const run = cli(['replay', '-', '--limit', '2/10s', '--json'], text);
    expect(parsed(run)).toMatchObject({ format: 'json', key: 'JSON field request.client_ip, IPv6 grouped by /64', lines: 4, requests: 3, malformed: 1, rejected: 1, clients: 1 });
    expect(stderrLines(run)).toEqual(['ratewarden: line 1: malformed (no ident): nt_ip":"192.0.2.9"},"status":200}']);
    // The same for an ALB log cut in its first entry.
    const albText = ['1.000 200 200 34 366 "GET / HTTP/1.1" "curl/8.5.0" - -', FORMAT_FIXTURES.alb!.text].join('\n');
    expect(parsed(cli(['replay', '-', '--limit', '2/10s', '--json'], albText))).toMatchObject({ format: 'alb', requests: 9, rejected: 3, malformed: 7 });
  });

  it('a first line that is no format, in a log of none: CLF reasons, exit 1, as before', () => {
    const run = cli(['replay', '-', '--json'], 'not a log\nnor this\n');
    expect(parsed(run, 1)).toMatchObject({ format: 'clf', requests: 0, malformed: 2 });
    expect(stderrLines(run)).toEqual([
      'ratewarden: line 1: malformed (no [timestamp]): not a log',
      'ratewarden: line 2: malformed (no authuser): nor this',
      expect.stringMatching(/^ratewarden: nothing to replay: no line of the input is in the Common or Combined Log Format/) as string,
    ]);
  });

  it('a UTF-8 BOM and CRLF endings, in each format, plain and gzipped', () => {
    for (const fixture of Object.values(FORMAT_FIXTURES)) {
      const text = `\ufeff${fixture.text.replace(/\r?\n/g, '\r\n')}`;
      for (const input of [text, gzipSync(text)]) {
        const run = cli(['replay', '-', ...LIMIT, '--json'], input);
        expect(parsed(run), fixture.format).toMatchObject(fixture.expected);
        expect(stderrLines(run)).toHaveLength(fixture.stderr.length);
      }
    }
  });

  it('a key written with JSON escapes is the key it stands for; a field name with escapes is not the field', () => {
    const lines = [
      '{"ts":1710079200,"user_id":"caf\\u00e9","ip":"192.0.2.1"}',
      '{"ts":1710079201,"user_id":"café","ip":"192.0.2.2"}',
      '{"ts":1710079202,"user_id":"caf\\u00E9","ip":"192.0.2.3"}',
      '{"ts":1710079203,"user\\u005fid":"someone","user_id":"tab\\tbed","ip":"192.0.2.4"}',
      '{"ts":1710079204,"user_id":"tab\\u0009bed","ip":"192.0.2.5"}',
      '{"ts":1710079205,"user\\u005fid":"someone","ip":"192.0.2.6"}',
    ];
    const text = `${lines.join('\n')}\n`;
    const run = cli(['replay', '-', '--key', 'field:user_id', '--limit', '1/1m', '--json'], text);
    expect(parsed(run)).toMatchObject({
      key: 'JSON field user_id',
      requests: 5,
      clients: 2,
      rejected: 3,
      malformed: 1,
      top_limited: [
        { client: 'café', rejected: 2, requests: 3 },
        { client: 'tab\tbed', rejected: 1, requests: 2 },
      ],
    });
    expect(stderrLines(run)).toEqual([`ratewarden: line 6: malformed (no field user_id): ${shown(lines[5] as string).replaceAll('\\', '\\\\')}`]);
    // (stderr prints a backslash as two.) The text report prints the key's tab escaped.
    const human = cli(['replay', '-', '--key', 'field:user_id', '--limit', '1/1m'], text);
    expect(human.status).toBe(0);
    expect(human.stdout).toMatch(/^ {2}café {8}2 \/ 3\n {2}tab\\x09bed {2}1 \/ 2$/m);
  });

  it('times out of the limiter range (beyond ±2^47 ms, 6429-10-17) are malformed lines, in every format; the rest is replayed', () => {
    const lines = [
      '{"time_iso8601":"9999-12-31T23:59:59+00:00","remote_addr":"192.0.2.1"}',
      '{"time_iso8601":"2024-03-10T14:00:00+00:00","remote_addr":"192.0.2.1"}',
      '{"time_iso8601":"2024-03-10T14:00:01+00:00","remote_addr":"192.0.2.1","time":1e400}',
      '{"time_iso8601":"6429-10-18T00:00:00Z","remote_addr":"192.0.2.1"}',
      '{"time_iso8601":"6429-10-17T00:00:00Z","remote_addr":"192.0.2.1"}',
    ];
    const json = cli(['replay', '-', '--limit', '1/1m', '--json'], `${lines.join('\n')}\n`);
    expect(parsed(json)).toMatchObject({ requests: 3, malformed: 2, rejected: 1, last_time: '6429-10-17T00:00:00.000Z' });
    expect(stderrLines(json)).toEqual([
      `ratewarden: line 1: malformed (time out of range): ${shown(lines[0] as string)}`,
      `ratewarden: line 4: malformed (time out of range): ${shown(lines[3] as string)}`,
    ]);
    // Epoch milliseconds beyond the year 9999 are no time at all for the JSON reader.
    const epoch = cli(['replay', '-', '--json'], '{"ts":1710079200,"ip":"192.0.2.1"}\n{"ts":1e15,"ip":"192.0.2.1"}\n{"ts":1000000000000000,"ip":"192.0.2.1"}\n');
    expect(parsed(epoch)).toMatchObject({ requests: 1, malformed: 2 });
    expect(stderrLines(epoch)).toEqual([
      'ratewarden: line 2: malformed (bad time in ts): {"ts":1e15,"ip":"192.0.2.1"}',
      'ratewarden: line 3: malformed (bad time in ts): {"ts":1000000000000000,"ip":"192.0.2.1"}',
    ]);
    const clf = cli(['replay', '-', '--json'], '192.0.2.1 - - [01/Jan/9999:00:00:00 +0000] "GET / HTTP/1.1" 200 1\n192.0.2.1 - - [01/Jan/2024:00:00:00 +0000] "GET / HTTP/1.1" 200 1\n');
    expect(parsed(clf)).toMatchObject({ requests: 1, malformed: 1 });
    expect(stderrLines(clf)).toEqual(['ratewarden: line 1: malformed (time out of range): 192.0.2.1 - - [01/Jan/9999:00:00:00 +0000] "GET / HTTP/1.1" 200 1']);
    const alb = FORMAT_FIXTURES.alb!.text.replaceAll('2024-03-10T14:00:12.000000Z "forward"', '7000-01-01T00:00:00.000000Z "forward"');
    const albRun = cli(['replay', '-', ...LIMIT, '--json'], alb);
    expect(parsed(albRun)).toMatchObject({ requests: 8, malformed: 7, rejected: 2 });
  });
});
