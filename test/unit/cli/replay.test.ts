// The `ratewarden replay` command: the log parser, the replay pipeline and the built CLI.
//
// CLI tests spawn the built `dist/cli.js` (built by `npm test` before vitest runs); nothing here
// reads the wall clock or sleeps: programmatic replays get `timer: () => 0`.
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { gunzipSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { daysFromCivil } from '../../../src/cli/calendar.js';
import { LogLineParser, malformedReason, parseLogLine } from '../../../src/cli/log-parser.js';
import { ReplayInputError } from '../../../src/cli/input.js';
import { sortByTime } from '../../../src/cli/order.js';
import { createProgress } from '../../../src/cli/progress.js';
import { replay, type ReplayOptions, type ReplaySummary } from '../../../src/cli/replay.js';
import { formatSummary } from '../../../src/cli/report.js';
import { MAX_LINE_BYTES } from '../../../src/cli/request-collector.js';
import { STRATEGY_NAMES, createStrategy, type StrategyName } from '../../../src/cli/strategies.js';

const CLI = fileURLToPath(new URL('../../../dist/cli.js', import.meta.url));
const SAMPLE = fileURLToPath(new URL('../../../data/access-combined.log.gz', import.meta.url));
const PACKAGE = JSON.parse(
  readFileSync(new URL('../../../package.json', import.meta.url), 'utf8'),
) as { version: string };

/** Runs the built CLI. */
function cli(args: string[], input?: string | Buffer): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [CLI, ...args], {
    encoding: 'utf8',
    ...(input === undefined ? {} : { input }),
    maxBuffer: 16 << 20,
  });
}

/** Runs the CLI with `--json` and parses its one JSON object. */
function cliJson(args: string[], input?: string | Buffer): Record<string, unknown> {
  const run = cli([...args, '--json'], input);
  expect(run.status, run.stderr).toBe(0);
  const lines = run.stdout.split('\n').filter((line) => line !== '');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0] as string) as Record<string, unknown>;
}

/** A programmatic replay of `text`, chunked as given, with a constant timer. */
function replayText(
  text: string | Buffer,
  options: Omit<ReplayOptions, 'input'> = {},
  chunkSize = Infinity,
): Promise<ReplaySummary> {
  const bytes = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += Math.min(chunkSize, bytes.length)) {
    chunks.push(bytes.subarray(i, i + Math.min(chunkSize, bytes.length)));
  }
  return replay({ input: Readable.from(chunks), timer: () => 0, ...options });
}

function stderrLines(run: SpawnSyncReturns<string>): string[] {
  return run.stderr.split('\n').filter((line) => line !== '');
}

// ------------------------------------------------------------------------------------------
// The crafted fixture, replayed with --threshold 2 --window 10 (10 000 ms).
//
//  line  client    log time                    UTC offset from 2024-01-01T00:00:00Z
//   1    10.0.0.1  01/Jan/2024:00:00:05 +0000   5 s   (Combined format)
//   2    10.0.0.1  01/Jan/2024:00:00:01 +0000   1 s   (goes backwards; CRLF)
//   3    10.0.0.1  31/Dec/2023:17:00:03 -0700   3 s   (the zone moves it to 2024)
//   4    10.0.0.2  01/Jan/2024:00:00:02 +0000   2 s   (CRLF)
//   5    malformed ("this is not a log line", CRLF): no [timestamp]
//   6    10.0.0.1  01/Jan/2024:00:00:11 +0000  11 s
//   7    10.0.0.1  01/Jan/2024:00:00:12 +0000  12 s
//   8    10.0.0.2  01/Jan/2024:01:00:02 +0100   2 s   (the zone moves it back an hour)
//   9    10.0.0.2  01/Jan/2024:00:00:02 +0000   2 s
//   then two empty lines at the end: ignored.
//
// In time order (ties in file order): A@1(l2) B@2(l4) B@2(l8) B@2(l9) A@3(l3) A@5(l1)
// A@11(l6) A@12(l7). With 2 per 10 s (evict t <= now - 10, allow if fewer than 2 remain):
//   A@1  allowed      A: [1]
//   B@2  allowed      B: [2]
//   B@2  allowed      B: [2, 2]
//   B@2  REJECTED     (2 live)
//   A@3  allowed      A: [1, 3]
//   A@5  REJECTED     (nothing <= -5 to evict; 2 live)
//   A@11 allowed      evicts 1 (<= 1); A: [3, 11]
//   A@12 REJECTED     nothing <= 2 to evict; 2 live
// => 8 requests, 5 allowed, 3 rejected; 2 clients, both limited (A 2 of 5, B 1 of 3);
//    1 malformed line; 9 lines.
// Check that the expectation can fail: ignoring the zones gives 1 rejection (A@-25197 and
// B@3602 spread the requests out); replaying in file order (no sort) gives 4.
const FIXTURE = [
  '10.0.0.1 - - [01/Jan/2024:00:00:05 +0000] "GET /a HTTP/1.1" 200 10 "-" "curl/8.0"\n',
  '10.0.0.1 - - [01/Jan/2024:00:00:01 +0000] "GET /b HTTP/1.1" 200 10\r\n',
  '10.0.0.1 - - [31/Dec/2023:17:00:03 -0700] "GET /c HTTP/1.1" 200 -\n',
  '10.0.0.2 - frank [01/Jan/2024:00:00:02 +0000] "POST /d HTTP/1.1" 201 0\r\n',
  'this is not a log line\r\n',
  '10.0.0.1 - - [01/Jan/2024:00:00:11 +0000] "GET /e HTTP/1.1" 200 10\n',
  '10.0.0.1 - - [01/Jan/2024:00:00:12 +0000] "GET /f HTTP/1.1" 200 10\n',
  '10.0.0.2 - - [01/Jan/2024:01:00:02 +0100] "GET /g HTTP/1.1" 200 10\n',
  '10.0.0.2 - - [01/Jan/2024:00:00:02 +0000] "GET /h HTTP/1.1" 304 -\n',
  '\n',
  '\n',
].join('');
const FIXTURE_ARGS = ['--threshold', '2', '--window', '10'];
const FIXTURE_EXPECTED = {
  lines: 9,
  requests: 8,
  allowed: 5,
  rejected: 3,
  clients: 2,
  clients_limited: 2,
  malformed: 1,
  top_limited: [
    { client: '10.0.0.1', rejected: 2, requests: 5 },
    { client: '10.0.0.2', rejected: 1, requests: 3 },
  ],
};

let dir = '';
beforeAll(() => {
  if (!existsSync(CLI)) {
    throw new Error(`${CLI} is missing: build first (\`npm test\` runs \`tsup\` before vitest)`);
  }
  dir = mkdtempSync(join(tmpdir(), 'ratewarden-replay-'));
  writeFileSync(join(dir, 'crafted.log'), FIXTURE);
  writeFileSync(join(dir, 'crafted.log.gz'), gzipSync(FIXTURE));
});
afterAll(() => {
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

// ------------------------------------------------------------------------------------------
describe('parseLogLine', () => {
  const COMMON = '198.18.0.1 - - [17/May/2015:10:05:03 +0000] "GET /a.png HTTP/1.1" 200 203023';
  const COMBINED = `${COMMON} "http://example.com/" "Mozilla/5.0 (X11; Linux x86_64)"`;

  it('parses a Common Log Format line: the client and the time in ms (UTC)', () => {
    expect(parseLogLine(COMMON)).toEqual({
      client: '198.18.0.1',
      timeMs: Date.UTC(2015, 4, 17, 10, 5, 3),
    });
  });

  it('parses a Combined Log Format line the same way', () => {
    expect(parseLogLine(COMBINED)).toEqual(parseLogLine(COMMON));
  });

  it('applies the zone offset: UTC = local time - offset', () => {
    const at = (zone: string) =>
      parseLogLine(`h - - [17/May/2015:10:05:03 ${zone}] "GET / HTTP/1.1" 200 1`)?.timeMs;
    const utc = Date.UTC(2015, 4, 17, 10, 5, 3);
    expect(at('+0000')).toBe(utc);
    expect(at('-0000')).toBe(utc);
    expect(at('+0200')).toBe(utc - 2 * 3_600_000);
    expect(at('-0700')).toBe(utc + 7 * 3_600_000);
    expect(at('+0530')).toBe(utc - 5.5 * 3_600_000);
    expect(at('-0945')).toBe(utc + 9.75 * 3_600_000);
    expect(at('+2359')).toBe(utc - (23 * 60 + 59) * 60_000);
  });

  it('crosses day, month and year boundaries through the zone', () => {
    expect(
      parseLogLine('h - - [31/Dec/2023:17:00:03 -0700] "GET / HTTP/1.1" 200 1')?.timeMs,
    ).toBe(Date.UTC(2024, 0, 1, 0, 0, 3));
    expect(
      parseLogLine('h - - [01/Mar/2024:00:30:00 +0100] "GET / HTTP/1.1" 200 1')?.timeMs,
    ).toBe(Date.UTC(2024, 1, 29, 23, 30, 0));
  });

  it('computes the same instant as Date.UTC for every valid timestamp', () => {
    const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
    const two = (n: number) => String(n).padStart(2, '0');
    fc.assert(
      fc.property(
        fc.integer({ min: 1000, max: 9999 }),
        fc.integer({ min: 0, max: 11 }),
        fc.integer({ min: 1, max: 31 }),
        fc.integer({ min: 0, max: 23 }),
        fc.integer({ min: 0, max: 59 }),
        fc.integer({ min: 0, max: 60 }),
        fc.integer({ min: -1439, max: 1439 }),
        (year, month, day, hour, minute, second, zone) => {
          const z = Math.abs(zone);
          const stamp =
            `${two(day)}/${MONTHS[month]}/${year}:${two(hour)}:${two(minute)}:${two(second)} ` +
            `${zone < 0 ? '-' : '+'}${two(Math.floor(z / 60))}${two(z % 60)}`;
          const parsed = parseLogLine(`1.2.3.4 - - [${stamp}] "GET / HTTP/1.1" 200 5`);
          const valid = new Date(Date.UTC(year, month, day)).getUTCDate() === day;
          if (!valid) return parsed === null;
          return (
            parsed !== null &&
            parsed.timeMs === Date.UTC(year, month, day, hour, minute, second) - zone * 60_000
          );
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('daysFromCivil agrees with Date.UTC, before and after 1970', () => {
    expect(daysFromCivil(1970, 1, 1)).toBe(0);
    expect(daysFromCivil(1969, 12, 31)).toBe(-1);
    expect(daysFromCivil(2000, 3, 1)).toBe(Date.UTC(2000, 2, 1) / 86_400_000);
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 9999 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 28 }),
        (year, month, day) => {
          const utc = new Date(0);
          utc.setUTCFullYear(year, month - 1, day);
          return daysFromCivil(year, month, day) * 86_400_000 === utc.getTime();
        },
      ),
    );
  });

  it('accepts a leap day, a leap second, a trailing \\r, escaped quotes and extra fields', () => {
    const t = (stamp: string) => parseLogLine(`h - - [${stamp}] "GET / HTTP/1.1" 200 1`)?.timeMs;
    expect(t('29/Feb/2024:12:00:00 +0000')).toBe(Date.UTC(2024, 1, 29, 12));
    expect(t('29/Feb/2000:12:00:00 +0000')).toBe(Date.UTC(2000, 1, 29, 12));
    expect(t('31/Dec/2016:23:59:60 +0000')).toBe(Date.UTC(2017, 0, 1));
    expect(parseLogLine(`${COMMON}\r`)).toEqual(parseLogLine(COMMON));
    expect(
      parseLogLine('h - - [17/May/2015:10:05:03 +0000] "GET /\\"q\\" \\\\ HTTP/1.1" 400 -'),
    ).not.toBeNull();
    expect(parseLogLine('h - - [17/May/2015:10:05:03 +0000] "" 400 0')).not.toBeNull();
    expect(parseLogLine(`${COMMON} 0.003 upstream=1`)).not.toBeNull();
    expect(parseLogLine(`${COMMON} `)).not.toBeNull();
  });

  it('takes any non-empty first field as the client, exactly as written', () => {
    const client = (host: string) =>
      parseLogLine(`${host} - - [17/May/2015:10:05:03 +0000] "GET / HTTP/1.1" 200 1`)?.client;
    expect(client('2001:db8::1')).toBe('2001:db8::1');
    expect(client('proxy.example.com')).toBe('proxy.example.com');
    expect(client('hôte-ü')).toBe('hôte-ü');
    expect(client('x')).toBe('x');
  });

  const ok = '1.2.3.4 - - [17/May/2015:10:05:03 +0000] "GET / HTTP/1.1" 200 5';
  it.each([
    ['empty line', ''],
    ['empty line', '\r'],
    ['no client address', ` ${ok}`],
    ['no ident', '1.2.3.4'],
    ['no ident', '1.2.3.4  - [17/May/2015:10:05:03 +0000] "GET / HTTP/1.1" 200 5'],
    ['no authuser', '1.2.3.4 -  [17/May/2015:10:05:03 +0000] "GET / HTTP/1.1" 200 5'],
    ['no authuser', '1.2.3.4 -'],
    ['no [timestamp]', '1.2.3.4 - - 17/May/2015:10:05:03 +0000 "GET / HTTP/1.1" 200 5'],
    ['no [timestamp]', 'this is not a log line'],
    ['bad timestamp', '1.2.3.4 - - [17/May/2015:10:05:03 +0000 "GET / HTTP/1.1" 200 5'],
    ['bad timestamp', '1.2.3.4 - - [7/May/2015:10:05:03 +0000] "GET / HTTP/1.1" 200 5'],
    ['bad timestamp', '1.2.3.4 - - [17/May/15:10:05:03 +0000] "GET / HTTP/1.1" 200 5'],
    ['bad timestamp', '1.2.3.4 - - [17-May-2015:10:05:03 +0000] "GET / HTTP/1.1" 200 5'],
    ['bad timestamp', '1.2.3.4 - - [17/May/2015 10:05:03 +0000] "GET / HTTP/1.1" 200 5'],
    ['bad timestamp', '1.2.3.4 - - [17/May/2015:1a:05:03 +0000] "GET / HTTP/1.1" 200 5'],
    ['bad timestamp', '1.2.3.4 - - [17/May/2015:10:05:03]'],
    ['bad day', '1.2.3.4 - - [00/May/2015:10:05:03 +0000] "GET / HTTP/1.1" 200 5'],
    ['bad day', '1.2.3.4 - - [32/May/2015:10:05:03 +0000] "GET / HTTP/1.1" 200 5'],
    ['bad day', '1.2.3.4 - - [31/Apr/2015:10:05:03 +0000] "GET / HTTP/1.1" 200 5'],
    ['bad day', '1.2.3.4 - - [29/Feb/2023:10:05:03 +0000] "GET / HTTP/1.1" 200 5'],
    ['bad day', '1.2.3.4 - - [29/Feb/1900:10:05:03 +0000] "GET / HTTP/1.1" 200 5'],
    ['bad month', '1.2.3.4 - - [17/MAY/2015:10:05:03 +0000] "GET / HTTP/1.1" 200 5'],
    ['bad month', '1.2.3.4 - - [17/Mai/2015:10:05:03 +0000] "GET / HTTP/1.1" 200 5'],
    ['bad time of day', '1.2.3.4 - - [17/May/2015:24:05:03 +0000] "GET / HTTP/1.1" 200 5'],
    ['bad time of day', '1.2.3.4 - - [17/May/2015:10:60:03 +0000] "GET / HTTP/1.1" 200 5'],
    ['bad time of day', '1.2.3.4 - - [17/May/2015:10:05:61 +0000] "GET / HTTP/1.1" 200 5'],
    ['bad zone offset', '1.2.3.4 - - [17/May/2015:10:05:03 0000 ] "GET / HTTP/1.1" 200 5'],
    ['bad zone offset', '1.2.3.4 - - [17/May/2015:10:05:03 *0000] "GET / HTTP/1.1" 200 5'],
    ['bad zone offset', '1.2.3.4 - - [17/May/2015:10:05:03 +00a0] "GET / HTTP/1.1" 200 5'],
    ['bad zone offset', '1.2.3.4 - - [17/May/2015:10:05:03 +0060] "GET / HTTP/1.1" 200 5'],
    ['bad zone offset', '1.2.3.4 - - [17/May/2015:10:05:03 +2400] "GET / HTTP/1.1" 200 5'],
    ['bad timestamp', '1.2.3.4 - - [17/May/2015:10:05:03 +000] "GET / HTTP/1.1" 200 5'],
    ['no quoted request', '1.2.3.4 - - [17/May/2015:10:05:03 +0000] GET / HTTP/1.1 200 5'],
    ['no quoted request', '1.2.3.4 - - [17/May/2015:10:05:03 +0000]'],
    ['unterminated request', '1.2.3.4 - - [17/May/2015:10:05:03 +0000] "GET / HTTP/1.1 200 5'],
    ['unterminated request', '1.2.3.4 - - [17/May/2015:10:05:03 +0000] "GET /\\" 200 5'],
    ['bad status', '1.2.3.4 - - [17/May/2015:10:05:03 +0000] "GET / HTTP/1.1" 20 5'],
    ['bad status', '1.2.3.4 - - [17/May/2015:10:05:03 +0000] "GET / HTTP/1.1" 2000 5'],
    ['bad status', '1.2.3.4 - - [17/May/2015:10:05:03 +0000] "GET / HTTP/1.1" OK! 5'],
    ['bad status', '1.2.3.4 - - [17/May/2015:10:05:03 +0000] "GET / HTTP/1.1"'],
    ['bad bytes', '1.2.3.4 - - [17/May/2015:10:05:03 +0000] "GET / HTTP/1.1" 200'],
    ['bad bytes', '1.2.3.4 - - [17/May/2015:10:05:03 +0000] "GET / HTTP/1.1" 200 '],
    ['bad bytes', '1.2.3.4 - - [17/May/2015:10:05:03 +0000] "GET / HTTP/1.1" 200 12a'],
    ['bad bytes', '1.2.3.4 - - [17/May/2015:10:05:03 +0000] "GET / HTTP/1.1" 200 --'],
    ['bad bytes', '1.2.3.4 - - [17/May/2015:10:05:03 +0000] "GET / HTTP/1.1" 200 x'],
  ])('rejects a line with %s: %j', (reason, line) => {
    expect(parseLogLine(line)).toBeNull();
    expect(malformedReason(line)).toBe(reason);
    expect(malformedReason(ok)).toBeNull();
  });

  it('never reads past the end it is given (the rest of the chunk)', () => {
    const parser = new LogLineParser();
    const chunk = Buffer.from(`${ok}\n${ok}\n`);
    // Cut inside the first line: what follows the cut must not complete it.
    for (let end = 0; end < ok.length - 1; end++) {
      expect(parser.parse(chunk, 0, end)).toBe(false);
    }
    expect(parser.parse(chunk, 0, ok.length)).toBe(true);
    expect(parser.parse(chunk, ok.length + 1, 2 * ok.length + 1)).toBe(true);
    // An unterminated request must not find its quote on the next line.
    const open = Buffer.from('1.2.3.4 - - [17/May/2015:10:05:03 +0000] "GET /\n" 200 5\n');
    expect(parser.parse(open, 0, open.indexOf(10))).toBe(false);
  });
});

// ------------------------------------------------------------------------------------------
describe('sortByTime', () => {
  /** A deterministic pseudo-random sequence (a linear congruential generator). */
  function lcg(seed: number): () => number {
    let state = seed >>> 0;
    return () => {
      state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
      return state / 2 ** 32;
    };
  }
  const reference = (times: Float64Array, count: number): number[] =>
    Array.from({ length: count }, (_, i) => i).sort(
      (a, b) => (times[a] as number) - (times[b] as number) || a - b,
    );

  it('orders by time, ties in index order, with both the counting and the comparison sort', () => {
    const random = lcg(42);
    for (const count of [0, 1, 2, 10, 1000]) {
      const times = new Float64Array(count + 5); // extra entries past `count` are ignored
      for (let i = 0; i < times.length; i++) times[i] = 1e12 + Math.floor(random() * 50) * 1000;
      const expected = reference(times, count);
      expect(Array.from(sortByTime(times, count))).toEqual(expected);
      expect(Array.from(sortByTime(times, count, 0))).toEqual(expected); // comparison sort
    }
  });

  it('sorts long spans of whole seconds with the radix sort, stably', () => {
    const random = lcg(7);
    const count = 20_000;
    const times = new Float64Array(count);
    // Spread over about 400 days (far beyond the counting sort's range), with many ties.
    for (let i = 0; i < count; i++) times[i] = 1.4e12 + Math.floor(random() * 3_000) * 11_520_000;
    expect(Array.from(sortByTime(times, count))).toEqual(reference(times, count));
    expect(Array.from(sortByTime(times, count, 0))).toEqual(reference(times, count));
  });

  it('falls back to the comparison sort for times that are not whole seconds', () => {
    const times = Float64Array.from([5500, 1000, 5500, 1000.25, -3000, 1000]);
    expect(Array.from(sortByTime(times, times.length))).toEqual([4, 1, 5, 3, 0, 2]);
  });
});

// ------------------------------------------------------------------------------------------
describe('replay (programmatic)', () => {
  it('decides the crafted fixture as computed by hand', async () => {
    const summary = await replayText(FIXTURE, { threshold: 2, windowSeconds: 10 });
    expect(summary).toMatchObject({
      threshold: 2,
      windowSeconds: 10,
      strategy: 'sliding-window-log',
      lines: 9,
      requests: 8,
      allowed: 5,
      rejected: 3,
      clients: 2,
      clientsLimited: 2,
      malformed: 1,
      topLimited: FIXTURE_EXPECTED.top_limited,
      malformedExamples: [{ line: 5, reason: 'no [timestamp]', text: 'this is not a log line' }],
      seconds: 0,
      linesPerSecond: 0,
    });
  });

  it('gives the same result whatever the chunk boundaries (the carried partial line)', async () => {
    const whole = await replayText(FIXTURE, { threshold: 2, windowSeconds: 10 });
    for (const size of [1, 2, 3, 7, 64, 100]) {
      expect(await replayText(FIXTURE, { threshold: 2, windowSeconds: 10 }, size)).toEqual(whole);
    }
  });

  it('agrees with parseLogLine and with a naive reference replay on the built-in sample', async () => {
    const text = gunzipSync(readFileSync(SAMPLE)).toString('utf8');
    const lines = text.split('\n');
    if (lines.at(-1) === '') lines.pop();
    const parsed = lines.map((line) => parseLogLine(line));
    const valid = parsed.filter((p) => p !== null);
    // Reference: a stable sort by time, then per client the list of allowed times.
    const order = valid.map((_, i) => i).sort((a, b) => valid[a]!.timeMs - valid[b]!.timeMs || a - b);
    const logs = new Map<string, number[]>();
    const rejectedBy = new Map<string, number>();
    for (const i of order) {
      const { client, timeMs } = valid[i]!;
      const live = (logs.get(client) ?? []).filter((t) => t > timeMs - 60_000);
      if (live.length < 60) live.push(timeMs);
      else rejectedBy.set(client, (rejectedBy.get(client) ?? 0) + 1);
      logs.set(client, live);
    }
    const rejected = [...rejectedBy.values()].reduce((a, b) => a + b, 0);

    const summary = await replay({ input: SAMPLE, timer: () => 0 });
    expect(summary.requests).toBe(valid.length);
    expect(summary.malformed).toBe(lines.length - valid.length);
    expect(summary.clients).toBe(new Set(valid.map((p) => p.client)).size);
    expect(summary.rejected).toBe(rejected);
    expect(summary.clientsLimited).toBe(rejectedBy.size);
    expect({ requests: summary.requests, rejected, clients: summary.clients }).toEqual({
      requests: 10_000,
      rejected: 87,
      clients: 1753,
    });
  });

  it('counts empty lines in the middle as malformed, not those at the end', async () => {
    const line = '1.2.3.4 - - [17/May/2015:10:05:03 +0000] "GET / HTTP/1.1" 200 5';
    const summary = await replayText(`\n${line}\n\r\n\n${line}\n\n\r\n\n`);
    expect(summary).toMatchObject({ lines: 5, requests: 2, malformed: 3 });
    expect(summary.malformedExamples.map((m) => [m.line, m.reason])).toEqual([
      [1, 'empty line'],
      [3, 'empty line'],
      [4, 'empty line'],
    ]);
    // A last line without a newline is read; only empty lines: nothing at all.
    expect((await replayText(`${line}\n${line}`)).requests).toBe(2);
    expect(await replayText('\n\n\r\n')).toMatchObject({ lines: 0, requests: 0, malformed: 0 });
    expect(await replayText('')).toMatchObject({ lines: 0, requests: 0, clients: 0 });
  });

  it('skips a UTF-8 byte-order mark at the start', async () => {
    const summary = await replayText(
      '\uFEFF1.2.3.4 - - [17/May/2015:10:05:03 +0000] "GET / HTTP/1.1" 200 5\n',
      { threshold: 1 },
    );
    expect(summary).toMatchObject({ requests: 1, clients: 1, malformed: 0 });
    const line = '1.2.3.4 - - [17/May/2015:10:05:03 +0000] "GET / HTTP/1.1" 200 5\n';
    const again = await replayText(`\uFEFF${line}${line}`, { threshold: 1 });
    expect(again.topLimited).toEqual([{ client: '1.2.3.4', rejected: 1, requests: 2 }]);
  });

  it('reports a line too long as malformed and reads on, whatever the chunking', async () => {
    const line = '1.2.3.4 - - [17/May/2015:10:05:03 +0000] "GET / HTTP/1.1" 200 5\n';
    const long = `9.9.9.9 - - [17/May/2015:10:05:03 +0000] "GET /${'a'.repeat(MAX_LINE_BYTES)} HTTP/1.1" 200 5\n`;
    const text = `${line}${long}${line}`;
    for (const size of [Infinity, 65_536, 1_000_003]) {
      const summary = await replayText(text, {}, size);
      expect(summary).toMatchObject({ lines: 3, requests: 2, clients: 1, malformed: 1 });
      expect(summary.malformedExamples).toEqual([
        { line: 2, reason: 'line too long', text: long.slice(0, 80) },
      ]);
    }
  });

  it('keeps at most maxMalformedExamples examples, with control characters escaped', async () => {
    const summary = await replayText('bad\x1b[31m line\n'.repeat(8), { maxMalformedExamples: 2 });
    expect(summary.malformed).toBe(8);
    expect(summary.malformedExamples).toEqual([
      { line: 1, reason: 'no authuser', text: 'bad\\x1b[31m line' },
      { line: 2, reason: 'no authuser', text: 'bad\\x1b[31m line' },
    ]);
  });

  it('gunzips a stream when asked, and throws ReplayInputError for bad input', async () => {
    const summary = await replay({
      input: Readable.from([gzipSync(FIXTURE)]),
      gzip: true,
      threshold: 2,
      windowSeconds: 10,
      timer: () => 0,
    });
    expect(summary.rejected).toBe(3);
    await expect(replay({ input: join(dir, 'missing.log') })).rejects.toThrow(ReplayInputError);
    await expect(
      replay({ input: Readable.from([Buffer.from('not gzip')]), gzip: true }),
    ).rejects.toThrow(/not valid gzip data/);
  });

  it('lists the most rejected clients first, ties by client, at most `top`', async () => {
    const at = (client: string, second: number) =>
      `${client} - - [17/May/2015:10:05:${String(second).padStart(2, '0')} +0000] "GET / HTTP/1.1" 200 5\n`;
    // threshold 1: every request after a client's first in the same minute is rejected.
    const text = [at('b', 1), at('b', 2), at('a', 3), at('a', 4), at('c', 5), at('c', 6), at('c', 7), at('d', 8)].join('');
    const summary = await replayText(text, { threshold: 1, top: 2 });
    expect(summary.topLimited).toEqual([
      { client: 'c', rejected: 2, requests: 3 },
      { client: 'a', rejected: 1, requests: 2 },
    ]);
    expect(summary.clientsLimited).toBe(3);
    expect((await replayText(text, { threshold: 1, top: 0 })).topLimited).toEqual([]);
  });

  it('formats the report with aligned columns', async () => {
    const summary = await replayText(FIXTURE, { threshold: 2, windowSeconds: 10 });
    expect(formatSummary(summary, { file: 'crafted.log', sample: false })).toBe(
      [
        'ratewarden replay: crafted.log',
        'limit: 2 requests per 10 s per client (sliding-window-log)',
        'requests              8',
        'allowed               5  (62.50%)',
        'rejected              3  (37.50%)',
        'clients               2',
        'clients limited       2',
        'malformed lines       1',
        'top limited clients (rejected / requests):',
        '  10.0.0.1  2 / 5',
        '  10.0.0.2  1 / 3',
        'processed 9 lines in 0.0 ms (0 lines/s)',
        '',
      ].join('\n'),
    );
  });
});

// ------------------------------------------------------------------------------------------
describe('progress', () => {
  it('rewrites one line at most once per interval and erases it at the end', () => {
    const written: string[] = [];
    let now = 0;
    const progress = createProgress({ write: (text: string) => written.push(text) }, 100, () => now);
    progress.reading(512, 2048, 10);
    now = 50;
    progress.reading(1024, 2048, 20); // throttled
    now = 150;
    progress.reading(2048, undefined, 40);
    now = 300;
    progress.replaying(5, 10);
    progress.done();
    progress.done(); // nothing more to erase
    expect(written).toEqual([
      '\rratewarden: reading 25% (512 B of 2.0 KB), 10 lines\x1b[K',
      '\rratewarden: reading 2.0 KB, 40 lines\x1b[K',
      '\rratewarden: replaying 50% (5 of 10 requests)\x1b[K',
      '\r\x1b[K',
    ]);
  });
});

// ------------------------------------------------------------------------------------------
describe('ratewarden replay (the built CLI)', { timeout: 60_000 }, () => {
  it('replays the built-in sample by default: --json', () => {
    const result = cliJson(['replay', '--threshold', '60', '--window', '60']);
    expect(result).toMatchObject({
      requests: 10_000,
      allowed: 9913,
      rejected: 87,
      clients: 1753,
      clients_limited: 2,
      malformed: 0,
      lines: 10_000,
      threshold: 60,
      window_seconds: 60,
      strategy: 'sliding-window-log',
      sample: true,
      file: SAMPLE,
    });
    const top = result.top_limited as { client: string; rejected: number; requests: number }[];
    expect(top).toHaveLength(2);
    expect(top.map((c) => c.rejected)).toEqual([72, 15]);
    expect(top.reduce((sum, c) => sum + c.rejected, 0)).toBe(87);
    expect(typeof result.seconds).toBe('number');
    expect(typeof result.lines_per_second).toBe('number');
    // The defaults are 60 and 60.
    expect(cliJson(['replay'])).toMatchObject({ requests: 10_000, rejected: 87 });
  });

  it('replays the built-in sample by default: the human report', () => {
    const run = cli(['replay', '--threshold', '60', '--window', '60']);
    expect(run.status).toBe(0);
    expect(run.stderr).toBe('');
    const out = run.stdout;
    expect(out).toMatch(/^ratewarden replay: built-in sample \(.*access-combined\.log\.gz\)\n/);
    expect(out).toContain('\nlimit: 60 requests per 60 s per client (sliding-window-log)\n');
    expect(out).toMatch(/^requests {10}10000$/m);
    expect(out).toMatch(/^allowed {12}9913 {2}\(99\.13%\)$/m);
    expect(out).toMatch(/^rejected {13}87 {2}\(0\.87%\)$/m);
    expect(out).toMatch(/^clients {12}1753$/m);
    expect(out).toMatch(/^clients limited {7}2$/m);
    expect(out).toMatch(/^malformed lines {7}0$/m);
    expect(out).toMatch(/^top limited clients \(rejected \/ requests\):\n {2}\S+ +72 \/ +\d+\n {2}\S+ +15 \/ +\d+\n/m);
    expect(out).toMatch(/\nprocessed 10000 lines in [\d.]+ m?s \([\d,]+ lines\/s\)\n$/);
  });

  it('replays the crafted fixture, plain and gzipped, as computed by hand', () => {
    for (const name of ['crafted.log', 'crafted.log.gz']) {
      const run = cli(['replay', join(dir, name), ...FIXTURE_ARGS, '--json']);
      expect(run.status).toBe(0);
      expect(JSON.parse(run.stdout)).toMatchObject({ ...FIXTURE_EXPECTED, file: join(dir, name), sample: false });
      expect(stderrLines(run)).toEqual([
        'ratewarden: line 5: malformed (no [timestamp]): this is not a log line',
      ]);
    }
  });

  it('reads stdin with `-`', () => {
    const run = cli(['replay', '-', ...FIXTURE_ARGS, '--json'], FIXTURE);
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ ...FIXTURE_EXPECTED, file: '-' });
    const human = cli(['replay', '-', ...FIXTURE_ARGS, '--top', '1'], FIXTURE);
    expect(human.status).toBe(0);
    expect(human.stdout).toMatch(/^ratewarden replay: <stdin>\n/);
    expect(human.stdout).toMatch(/^rejected {14}3 {2}\(37\.50%\)$/m);
    expect(human.stdout).toContain('top limited clients (rejected / requests):\n  10.0.0.1  2 / 5\nprocessed');
  });

  it('reports the first 5 malformed lines, then a count; still prints a summary', () => {
    const text = Array.from({ length: 7 }, (_, i) => `garbage ${i + 1}\n`).join('');
    const run = cli(['replay', '-', '--json'], text);
    // No line parsed at all: the summary is printed, and the exit status says it went wrong.
    expect(run.status).toBe(1);
    expect(JSON.parse(run.stdout)).toMatchObject({ requests: 0, allowed: 0, rejected: 0, clients: 0, malformed: 7 });
    expect(stderrLines(run)).toEqual([
      'ratewarden: line 1: malformed (no authuser): garbage 1',
      'ratewarden: line 2: malformed (no authuser): garbage 2',
      'ratewarden: line 3: malformed (no authuser): garbage 3',
      'ratewarden: line 4: malformed (no authuser): garbage 4',
      'ratewarden: line 5: malformed (no authuser): garbage 5',
      'ratewarden: 2 more malformed lines not shown (7 in all)',
      'ratewarden: no line of the input is in the Common or Combined Log Format (`host ident authuser [dd/Mon/yyyy:HH:MM:SS +zzzz] "request" status bytes`)',
    ]);
    const human = cli(['replay', '-'], text);
    expect(human.status).toBe(1);
    expect(human.stdout).toMatch(/^requests {14}0$/m);
    expect(human.stdout).toMatch(/^malformed lines {7}7$/m);
  });

  it('shows the first 80 characters of a malformed line', () => {
    const long = `x${'y'.repeat(200)}`;
    const valid = '10.0.0.1 - - [17/May/2015:10:05:03 +0000] "GET / HTTP/1.1" 200 5\n';
    const run = cli(['replay', '-'], `${valid}${long}\n`);
    expect(run.status).toBe(0);
    expect(stderrLines(run)).toEqual([`ratewarden: line 2: malformed (no ident): ${long.slice(0, 80)}`]);
  });

  it('recognises gzip data by its first bytes: on stdin, and in a file not named .gz', () => {
    const gz = gzipSync(FIXTURE);
    expect(cliJson(['replay', '-', ...FIXTURE_ARGS], gz)).toMatchObject(FIXTURE_EXPECTED);
    const unnamed = join(dir, 'fixture-gzipped.log');
    writeFileSync(unnamed, gz);
    expect(cliJson(['replay', unnamed, ...FIXTURE_ARGS])).toMatchObject(FIXTURE_EXPECTED);
    // And plain text in a file named .gz is read as the text it is.
    const misnamed = join(dir, 'plain.log.gz');
    writeFileSync(misnamed, FIXTURE);
    expect(cliJson(['replay', misnamed, ...FIXTURE_ARGS])).toMatchObject(FIXTURE_EXPECTED);
  });

  it('exits 1 when no line parses (a binary file), and notes an empty input', () => {
    const binary = Buffer.from(Array.from({ length: 3_000 }, (_, i) => (i * 7919) % 256));
    const run = cli(['replay', '-'], binary);
    expect(run.status).toBe(1);
    expect(run.stdout).toMatch(/^requests {14}0$/m);
    expect(stderrLines(run).at(-1)).toMatch(/^ratewarden: no line of the input is in the Common or Combined Log Format/);
    const empty = cli(['replay', '-'], '');
    expect(empty.status).toBe(0);
    expect(stderrLines(empty)).toEqual(['ratewarden: the input is empty']);
  });

  it('writes no progress when stderr is not a terminal', () => {
    const run = cli(['replay']);
    expect(run.stderr).toBe('');
  });

  describe('errors: one line on stderr, exit code 2, nothing on stdout', () => {
    const fails = (args: string[], pattern: RegExp, input?: string) => {
      const run = cli(args, input);
      expect(run.status).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr).not.toMatch(/\n\s+at /); // no stack trace
      expect(stderrLines(run)).toHaveLength(1);
      expect(run.stderr).toMatch(pattern);
      return run.stderr;
    };

    it('a missing file', () => {
      fails(['replay', join(dir, 'nope.log')], /^ratewarden: cannot read `.*nope\.log`: no such file or directory\n$/);
    });

    it('a directory, and gzip data that is corrupt or truncated', () => {
      fails(['replay', dir], /^ratewarden: cannot read `.*`: is a directory\n$/);
      const corrupt = join(dir, 'corrupt.log.gz');
      const bad = Buffer.from(gzipSync(FIXTURE));
      bad.fill(0x55, 10, 30);
      writeFileSync(corrupt, bad);
      fails(['replay', corrupt], /^ratewarden: cannot read `.*corrupt\.log\.gz`: not valid gzip data \(.+\)\n$/);
      const truncated = join(dir, 'truncated.log.gz');
      writeFileSync(truncated, gzipSync(FIXTURE).subarray(0, 40));
      fails(['replay', truncated], /^ratewarden: cannot read `.*truncated\.log\.gz`: not valid gzip data/);
    });

    it('a bad --threshold', () => {
      expect(fails(['replay', '--threshold', 'abc'], /--threshold/)).toBe(
        'ratewarden: expected `--threshold` to be a positive integer up to 9007199254740991, got `abc`\n',
      );
      expect(fails(['replay', '--threshold', '0'], /--threshold/)).toBe(
        'ratewarden: expected `--threshold` to be a positive integer up to 9007199254740991, got `0`\n',
      );
      fails(['replay', '--threshold', '1.5'], /^ratewarden: expected `--threshold` to be a positive integer up to 9007199254740991, got `1\.5`\n$/);
      fails(['replay', '--threshold', '-3'], /^ratewarden: expected `--threshold` to be a positive integer up to 9007199254740991, got `-3`\n$/);
      fails(['replay', '--threshold=9007199254740992'], /`--threshold`.*got `9007199254740992`/);
      fails(['replay', '--threshold'], /^ratewarden: option `--threshold` needs a value \(a positive integer up to 9007199254740991\)\n$/);
    });

    it('a bad --window', () => {
      expect(fails(['replay', '--window', '-1'], /--window/)).toBe(
        'ratewarden: expected `--window` to be a finite number of seconds greater than 0, got `-1`\n',
      );
      fails(['replay', '--window=-1'], /^ratewarden: expected `--window` to be a finite number of seconds greater than 0, got `-1`\n$/);
      fails(['replay', '--window', '0'], /`--window`.*got `0`/);
      fails(['replay', '--window', 'abc'], /`--window`.*got `abc`/);
      fails(['replay', '--window', 'Infinity'], /`--window`.*got `Infinity`/);
      fails(['replay', '--window', '1e306'], /`--window`.*got `1e306`/);
    });

    it('a bad --top', () => {
      fails(['replay', '--top', 'x'], /^ratewarden: expected `--top` to be a non-negative integer, got `x`\n$/);
      fails(['replay', '--top=-1'], /^ratewarden: expected `--top` to be a non-negative integer, got `-1`\n$/);
    });

    it('an unknown option, a flag with a value, an unknown command, two files', () => {
      fails(['replay', '--bogus'], /^ratewarden: unknown option `--bogus`/);
      fails(['replay', '-x'], /^ratewarden: unknown option `-x`/);
      fails(['replay', '--json=yes'], /^ratewarden: option `--json` does not take a value\n$/);
      fails(['replay-all'], /^ratewarden: unknown command `replay-all`/);
      fails([], /^ratewarden: missing command/);
      fails(['replay', 'a.log', 'b.log'], /^ratewarden: expected at most one FILE, got 2/);
    });
  });

  it('accepts a fractional window and --top 0', () => {
    const result = cliJson(['replay', '-', '--threshold', '2', '--window', '0.5', '--top', '0'], FIXTURE);
    // With half a second, no client has 2 requests within 0.5 s except B's three at 2 s.
    expect(result).toMatchObject({ window_seconds: 0.5, rejected: 1, clients_limited: 1, top_limited: [] });
  });

  it('prints help and the version', () => {
    const help = cli(['--help']);
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('Usage: ratewarden <command>');
    const replayHelp = cli(['replay', '--help']);
    expect(replayHelp.status).toBe(0);
    expect(replayHelp.stdout).toContain(
      'Usage: ratewarden replay [FILE] [--threshold N] [--window SECONDS] [--strategy NAME] [--json] [--top N]',
    );
    expect(replayHelp.stdout).toContain('(default 60)');
    const version = cli(['--version']);
    expect(version.status).toBe(0);
    expect(version.stdout).toBe(`${PACKAGE.version}\n`);
  });
});

// ------------------------------------------------------------------------------------------
// --strategy: the five strategies, checked against independent reference models.
//
// Each reference below is a plain, unoptimised implementation of its algorithm written from the
// algorithm's definition (not from the strategy's code), fed with requests parsed here by a
// regular expression and Date.UTC (not by the package's parser), sorted stably by time (ties in
// file order). Times are whole seconds, windows whole milliseconds, and every reference keeps
// its quantities scaled to integers, so all comparisons are exact.

/** One request of a log: its client and its time in ms (UTC). */
interface RefRequest {
  readonly client: string;
  readonly timeMs: number;
}

const REF_MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const REF_LINE = /^(\S+) \S+ \S+ \[(\d\d)\/([A-Z][a-z]{2})\/(\d{4}):(\d\d):(\d\d):(\d\d) ([+-])(\d\d)(\d\d)\]/;

/** The requests of a log, in time order (ties in file order); lines that do not match are skipped. */
function refRequests(text: string): RefRequest[] {
  const requests: RefRequest[] = [];
  for (const line of text.split('\n')) {
    const m = REF_LINE.exec(line);
    if (m === null) continue;
    const [, client, day, month, year, hour, minute, second, sign, zoneH, zoneM] = m as unknown as string[];
    const zoneMinutes = (sign === '-' ? -1 : 1) * (Number(zoneH) * 60 + Number(zoneM));
    const utc = Date.UTC(Number(year), REF_MONTHS.indexOf(month!), Number(day), Number(hour), Number(minute), Number(second));
    requests.push({ client: client!, timeMs: utc - zoneMinutes * 60_000 });
  }
  // Array.prototype.sort is stable: ties keep file order.
  return requests.sort((a, b) => a.timeMs - b.timeMs);
}

/** A per-client reference decision: `allow(state, t)` says whether the request at `t` passes. */
interface RefModel<S> {
  fresh(t: number): S;
  allow(state: S, t: number): boolean;
}

/** The rejected requests, per client and in all, of `requests` replayed through `model`. */
function refReplay<S>(requests: readonly RefRequest[], model: RefModel<S>): { rejected: number; clientsLimited: number } {
  const states = new Map<string, S>();
  const rejectedBy = new Map<string, number>();
  for (const { client, timeMs } of requests) {
    let state = states.get(client);
    if (state === undefined) {
      state = model.fresh(timeMs);
      states.set(client, state);
    }
    if (!model.allow(state, timeMs)) rejectedBy.set(client, (rejectedBy.get(client) ?? 0) + 1);
  }
  return { rejected: [...rejectedBy.values()].reduce((a, b) => a + b, 0), clientsLimited: rejectedBy.size };
}

/** The reference model of each strategy, for `threshold` requests per `windowMs`. */
function refModel(name: StrategyName, threshold: number, windowMs: number): RefModel<never> {
  expect(Number.isInteger(windowMs)).toBe(true);
  const models: { [K in StrategyName]: RefModel<unknown> } = {
    // The allowed times of the client; allowed when fewer than `threshold` are in (t - window, t].
    'sliding-window-log': {
      fresh: (): number[] => [],
      allow(log: unknown, t) {
        const times = log as number[];
        const live = times.filter((x) => x > t - windowMs).length;
        if (live >= threshold) return false;
        times.push(t);
        return true;
      },
    },
    // One window from the client's first request; the first request at or after its end opens
    // the next one, starting at that request.
    'fixed-window': {
      fresh: (t) => ({ start: t, count: 0 }),
      allow(state: unknown, t) {
        const w = state as { start: number; count: number };
        if (t >= w.start + windowMs) {
          w.start = t;
          w.count = 0;
        }
        if (w.count >= threshold) return false;
        w.count++;
        return true;
      },
    },
    // Cloudflare's estimate on a grid of windows anchored at the client's first request:
    // count(previous window) × (window - elapsed) / window + count(this window) + 1 <= threshold
    // (multiplied out by the window). A client whose last allowed request is two or more windows
    // back (so that the window before this one is empty) starts a new grid at this request.
    'sliding-window-counter': {
      fresh: (t) => ({ anchor: t, counts: new Map<number, number>(), last: 0 }),
      allow(state: unknown, t) {
        const g = state as { anchor: number; counts: Map<number, number>; last: number };
        let index = Math.floor((t - g.anchor) / windowMs);
        if (index - g.last >= 2) {
          g.anchor = t;
          g.counts.clear();
          g.last = 0;
          index = 0;
        }
        const elapsed = t - (g.anchor + index * windowMs);
        const previous = g.counts.get(index - 1) ?? 0;
        const current = g.counts.get(index) ?? 0;
        if (previous * (windowMs - elapsed) + (current + 1) * windowMs > threshold * windowMs) return false;
        g.counts.set(index, current + 1);
        g.last = index;
        return true;
      },
    },
    // A bucket of `threshold` tokens, full at first, refilled at `threshold` per window;
    // a request takes one token. Tokens are counted in 1/windowMs of a token.
    'token-bucket': {
      fresh: (t) => ({ units: threshold * windowMs, at: t }),
      allow(state: unknown, t) {
        const b = state as { units: number; at: number };
        b.units = Math.min(threshold * windowMs, b.units + (t - b.at) * threshold);
        b.at = t;
        if (b.units < windowMs) return false;
        b.units -= windowMs;
        return true;
      },
    },
    // The virtual-scheduling GCRA with emission interval T = window / threshold and tolerance
    // tau = window - T (the same traffic contract as the bucket above): a request at t conforms
    // when TAT <= t + tau, and then TAT = max(TAT, t) + T. Times are multiplied by `threshold`.
    gcra: {
      fresh: () => ({ tat: -Infinity }),
      allow(state: unknown, t) {
        const g = state as { tat: number };
        const now = t * threshold;
        const interval = windowMs;
        const tau = threshold * windowMs - interval;
        const tat = Math.max(g.tat, now);
        if (tat > now + tau) return false;
        g.tat = tat + interval;
        return true;
      },
    },
  };
  return models[name] as RefModel<never>;
}

/** The rejected counts observed on the built-in sample (regression values, checked by the references). */
const SAMPLE_REJECTED: { readonly [K in StrategyName]: { '60/60': number; '5/10': number } } = {
  'sliding-window-log': { '60/60': 87, '5/10': 757 },
  'sliding-window-counter': { '60/60': 87, '5/10': 926 },
  'fixed-window': { '60/60': 87, '5/10': 672 },
  'token-bucket': { '60/60': 0, '5/10': 413 },
  gcra: { '60/60': 0, '5/10': 413 },
};

describe('ratewarden replay --strategy', { timeout: 60_000 }, () => {
  let sample: RefRequest[] = [];
  beforeAll(() => {
    sample = refRequests(gunzipSync(readFileSync(SAMPLE)).toString('utf8'));
  });

  it('the references parse the sample and reproduce the crafted fixture computed by hand', () => {
    expect(sample).toHaveLength(10_000);
    expect(new Set(sample.map((r) => r.client)).size).toBe(1753);
    // The fixture's hand computation (2 per 10 s, sliding-window log): 3 rejected, both limited.
    const fixture = refRequests(FIXTURE);
    expect(fixture).toHaveLength(8);
    expect(refReplay(fixture, refModel('sliding-window-log', 2, 10_000))).toEqual({ rejected: 3, clientsLimited: 2 });
    // By hand too, for the fixture's A@1 A@3 A@5 A@11 A@12 and B@2 ×3, 2 per 10 s:
    // fixed window: A [1,11) allows 1,3 rejects 5; [11,21) allows 11,12; B rejects one: 2.
    expect(refReplay(fixture, refModel('fixed-window', 2, 10_000)).rejected).toBe(2);
    // token bucket (2 tokens, one per 5 s): A 1 ok(1 left) 3 ok(0.4) 5 no(0.8) 11 ok(2→1)
    // 12 ok(1.2→0.2); B 2 ok ok no: 2 rejected. GCRA: the same.
    expect(refReplay(fixture, refModel('token-bucket', 2, 10_000)).rejected).toBe(2);
    expect(refReplay(fixture, refModel('gcra', 2, 10_000)).rejected).toBe(2);
    // sliding-window counter, grid [1,11) [11,21): A 1 ok, 3 ok, 5 no; 11: 2 × 10/10 + 1 > 2 no;
    // 12: 2 × 9/10 + 1 = 2.8 > 2 no; B: 2 ok ok no: 4 rejected.
    expect(refReplay(fixture, refModel('sliding-window-counter', 2, 10_000)).rejected).toBe(4);
  });

  it.each(STRATEGY_NAMES.map((name) => [name]))(
    '%s: on the sample (60 per 60 s), the CLI rejects what the reference rejects',
    (name) => {
      const result = cliJson(['replay', '--threshold', '60', '--window', '60', '--strategy', name]);
      expect(result).toMatchObject({ requests: 10_000, strategy: name, threshold: 60, window_seconds: 60 });
      expect((result.allowed as number) + (result.rejected as number)).toBe(10_000);
      const reference = refReplay(sample, refModel(name, 60, 60_000));
      expect(result.rejected).toBe(reference.rejected);
      expect(result.clients_limited).toBe(reference.clientsLimited);
      expect(result.rejected).toBe(SAMPLE_REJECTED[name]['60/60']);
    },
  );

  it.each(STRATEGY_NAMES.map((name) => [name]))(
    '%s: on the sample (5 per 10 s, where the strategies differ), the CLI rejects what the reference rejects',
    (name) => {
      const result = cliJson(['replay', '--threshold', '5', '--window', '10', '--strategy', name]);
      expect(result).toMatchObject({ requests: 10_000, strategy: name });
      expect((result.allowed as number) + (result.rejected as number)).toBe(10_000);
      const reference = refReplay(sample, refModel(name, 5, 10_000));
      expect(result.rejected).toBe(reference.rejected);
      expect(result.clients_limited).toBe(reference.clientsLimited);
      expect(result.rejected).toBe(SAMPLE_REJECTED[name]['5/10']);
    },
  );

  it('agrees with the references on random logs (programmatic replay)', async () => {
    const clients = ['a', 'b', 'c'];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...STRATEGY_NAMES),
        fc.integer({ min: 1, max: 4 }),
        fc.constantFrom(1, 2.5, 7, 10, 30),
        fc.array(fc.tuple(fc.constantFrom(...clients), fc.integer({ min: 0, max: 120 })), { maxLength: 60 }),
        async (name, threshold, windowSeconds, entries) => {
          const two = (n: number) => String(n).padStart(2, '0');
          const text = entries
            .map(([client, s]) => `${client} - - [17/May/2015:10:${two(Math.floor(s / 60))}:${two(s % 60)} +0000] "GET / HTTP/1.1" 200 1\n`)
            .join('');
          const summary = await replayText(text, { strategy: name, threshold, windowSeconds });
          const reference = refReplay(refRequests(text), refModel(name, threshold, windowSeconds * 1000));
          expect(summary.strategy).toBe(name);
          expect({ rejected: summary.rejected, clientsLimited: summary.clientsLimited }).toEqual(reference);
        },
      ),
      { numRuns: 1500 },
    );
  });

  it('defaults to the sliding-window log, and shows the strategy in the report', () => {
    expect(cliJson(['replay'])).toMatchObject({ strategy: 'sliding-window-log', rejected: 87 });
    for (const name of STRATEGY_NAMES) {
      const run = cli(['replay', '--strategy', name]);
      expect(run.status).toBe(0);
      expect(run.stdout).toContain(`\nlimit: 60 requests per 60 s per client (${name})\n`);
      const rejected = SAMPLE_REJECTED[name]['60/60'];
      expect(run.stdout).toMatch(new RegExp(`^rejected +${rejected}  \\(`, 'm'));
    }
    expect(cliJson(['replay', '--strategy=gcra'])).toMatchObject({ strategy: 'gcra' });
  });

  it('replay(): each name gives a new instance of its strategy; an unknown name throws', async () => {
    for (const name of STRATEGY_NAMES) {
      expect(createStrategy(name).name).toBe(name);
      expect(createStrategy(name)).not.toBe(createStrategy(name));
      expect(await replayText(FIXTURE, { strategy: name, threshold: 2, windowSeconds: 10 })).toMatchObject({
        strategy: name,
        requests: 8,
      });
    }
    expect((await replayText(FIXTURE)).strategy).toBe('sliding-window-log');
    await expect(replayText(FIXTURE, { strategy: 'leaky' })).rejects.toThrow(RangeError);
    await expect(replayText(FIXTURE, { strategy: 'leaky' })).rejects.toThrow(
      /^Expected `strategy` to be one of sliding-window-log, sliding-window-counter, fixed-window, token-bucket, gcra, got `"leaky"`/,
    );
    await expect(replayText(FIXTURE, { strategy: 'toString' })).rejects.toThrow(RangeError);
    await expect(replayText(FIXTURE, { strategy: 42 as unknown as string })).rejects.toThrow(TypeError);
    // The threshold cap of the sliding-window log, and none for the others.
    await expect(replayText(FIXTURE, { threshold: 2_000_000 })).rejects.toThrow(/`threshold`.*1048576/);
    expect(await replayText(FIXTURE, { threshold: 2_000_000, strategy: 'gcra' })).toMatchObject({ rejected: 0 });
  });

  describe('errors: one line on stderr, exit code 2, nothing on stdout', () => {
    const fails = (args: string[]): string => {
      const run = cli(args);
      expect(run.status).toBe(2);
      expect(run.stdout).toBe('');
      expect(stderrLines(run)).toHaveLength(1);
      return run.stderr;
    };
    const NAMES = 'sliding-window-log, sliding-window-counter, fixed-window, token-bucket, gcra';

    it('an unknown strategy', () => {
      expect(fails(['replay', '--strategy', 'leaky'])).toBe(
        `ratewarden: expected \`--strategy\` to be one of ${NAMES}, got \`leaky\`\n`,
      );
      expect(fails(['replay', '--strategy=SLIDING-WINDOW-LOG'])).toBe(
        `ratewarden: expected \`--strategy\` to be one of ${NAMES}, got \`SLIDING-WINDOW-LOG\`\n`,
      );
      expect(fails(['replay', '--strategy', '-x'])).toBe(`ratewarden: expected \`--strategy\` to be one of ${NAMES}, got \`-x\`\n`);
      expect(fails(['replay', '--strategy='])).toBe(`ratewarden: expected \`--strategy\` to be one of ${NAMES}, got \`\`\n`);
      expect(fails(['replay', '--strategy'])).toBe(`ratewarden: option \`--strategy\` needs a value (one of ${NAMES})\n`);
    });

    it('a threshold above the strategy maximum; the uncapped strategies accept it', () => {
      const message =
        'ratewarden: expected `--threshold` to be at most 1048576 with the sliding-window-log strategy, got `2000000` ' +
        '(for larger limits use `--strategy` sliding-window-counter, fixed-window, token-bucket or gcra)\n';
      expect(fails(['replay', '--threshold', '2000000'])).toBe(message);
      expect(fails(['replay', '--threshold', '2000000', '--strategy', 'sliding-window-log'])).toBe(message);
      expect(fails(['replay', '--threshold=9007199254740991'])).toMatch(/^ratewarden: expected `--threshold` to be at most 1048576 /);
      expect(cliJson(['replay', '--threshold', '1048576'])).toMatchObject({ threshold: 1_048_576, rejected: 0 });
      expect(cliJson(['replay', '--threshold', '2000000', '--strategy', 'gcra'])).toMatchObject({
        threshold: 2_000_000,
        strategy: 'gcra',
        requests: 10_000,
        allowed: 10_000,
        rejected: 0,
      });
      const human = cli(['replay', '--threshold', '2000000', '--strategy', 'gcra']);
      expect(human.status).toBe(0);
      expect(human.stderr).toBe('');
    });

    it('a window below one millisecond (the limiter minimum)', () => {
      expect(fails(['replay', '--window', '0.0009'])).toBe(
        'ratewarden: expected `--window` to be at least 0.001 (one millisecond), got `0.0009`\n',
      );
      expect(cliJson(['replay', '--window', '0.001'])).toMatchObject({ window_seconds: 0.001, rejected: 0 });
    });
  });

  it('lists the strategies in --help, one line each', () => {
    const help = cli(['replay', '--help']);
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^ {2}--strategy NAME +the algorithm \(default sliding-window-log\):$/m);
    for (const name of STRATEGY_NAMES) {
      const line = help.stdout.split('\n').find((l) => new RegExp(`^ +${name} +\\S`).test(l));
      expect(line, name).toBeDefined();
      expect(line!.length).toBeLessThanOrEqual(80);
    }
  });
});
