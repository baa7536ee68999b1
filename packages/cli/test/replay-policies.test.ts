// `ratewarden replay --limit` end to end (the built `dist/cli.js`): several policies decided in
// one read of the log, side by side, each with its own strategy (checked against the reference
// models of test/support/reference-models.ts on the built-in sample), and together as one
// all-or-nothing RateLimitGroup (checked by hand on a tiny log); and the usage errors of `--limit`.
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { cli, cliJson, requireBuiltCli, stderrLines } from './support/cli.js';
import { SAMPLE_REJECTED, refModel, refReplay, refRequests, type RefRequest } from '../../../test/support/reference-models.js';
import { SAMPLE } from './support/replay-fixture.js';

beforeAll(() => {
  requireBuiltCli();
});

/** A CLF line of 192.0.2.1 at `seconds` after 2024-03-10T14:00:00Z. */
const at = (seconds: number, client = '192.0.2.1'): string =>
  `${client} - - [10/Mar/2024:14:${String(Math.floor(seconds / 60)).padStart(2, '0')}:${String(seconds % 60).padStart(2, '0')} +0000] "GET / HTTP/1.1" 200 1\n`;

describe('ratewarden replay --limit: policies side by side', { timeout: 60_000 }, () => {
  let sample: RefRequest[] = [];
  beforeAll(() => {
    sample = refRequests(gunzipSync(readFileSync(SAMPLE)).toString('utf8'));
  });

  it('decides each policy with its own strategy, as the reference models do (the sample, one read)', () => {
    const limits = [
      ['5/10s:gcra', 'gcra', 5, 10],
      ['60/1m', 'sliding-window-log', 60, 60],
      ['5/10s:fixed-window', 'fixed-window', 5, 10],
      ['5/10000ms:sliding-window-counter', 'sliding-window-counter', 5, 10],
    ] as const;
    const result = cliJson(['replay', ...limits.flatMap(([limit]) => ['--limit', limit])]);
    const policies = result.policies as Record<string, unknown>[];
    expect(policies.map((p) => p.name)).toEqual(['5/10s:gcra', '60/1m', '5/10s:fixed-window', '5/10s:sliding-window-counter']);
    for (const [p, [, strategy, threshold, windowSeconds]] of limits.entries()) {
      const reference = refReplay(sample, refModel(strategy, threshold, windowSeconds * 1000));
      expect(policies[p]).toMatchObject({
        threshold,
        window_seconds: windowSeconds,
        strategy,
        rejected: reference.rejected,
        allowed: 10_000 - reference.rejected,
        clients_limited: reference.clientsLimited,
      });
    }
    expect(policies.map((p) => p.rejected)).toEqual([
      SAMPLE_REJECTED.gcra['5/10'],
      SAMPLE_REJECTED['sliding-window-log']['60/60'],
      SAMPLE_REJECTED['fixed-window']['5/10'],
      SAMPLE_REJECTED['sliding-window-counter']['5/10'],
    ]);
    // The first policy at the top level, as a one-policy replay has it.
    expect(result).toMatchObject({ threshold: 5, window_seconds: 10, strategy: 'gcra', rejected: SAMPLE_REJECTED.gcra['5/10'] });
    // The group refuses at least what the strictest policy refuses alone.
    const group = result.group as Record<string, unknown>;
    expect(group).toMatchObject({ name: 'all', threshold: null, window_seconds: null, strategy: 'group' });
    expect(group.rejected as number).toBeGreaterThanOrEqual(Math.max(...policies.map((p) => p.rejected as number)));
  });

  it('--strategy gives the policies that name none their strategy, and is left out of their names', () => {
    const result = cliJson(['replay', '--strategy', 'gcra', '--limit', '5/10s', '--limit', '60/1m:sliding-window-log']);
    expect((result.policies as Record<string, unknown>[]).map((p) => [p.name, p.strategy, p.rejected])).toEqual([
      ['5/10s', 'gcra', SAMPLE_REJECTED.gcra['5/10']],
      ['60/1m:sliding-window-log', 'sliding-window-log', SAMPLE_REJECTED['sliding-window-log']['60/60']],
    ]);
  });

  // One client at 0, 5, 12, 30 and 64 s, under 1/10s and 2/1m (sliding-window logs):
  //   alone, 1/10s:  0 allowed, 5 REFUSED (0 live), 12 allowed (0 evicted), 30 allowed, 64 allowed -> 1 refused
  //   alone, 2/1m:   0 allowed, 5 allowed, 12 REFUSED, 30 REFUSED (0, 5 live), 64 allowed (0 evicted) -> 2 refused
  //   the union of what they refuse alone: {5, 12, 30}, 3 requests.
  //   together, all or nothing (a refused request is recorded by neither):
  //     0  allowed by both: 1/10s [0], 2/1m [0]
  //     5  REFUSED by 1/10s: recorded nowhere (2/1m stays [0])
  //    12  1/10s evicts 0: allows; 2/1m has one: allows -> 1/10s [12], 2/1m [0, 12]
  //    30  1/10s allows; 2/1m has two: REFUSED, recorded nowhere
  //    64  1/10s allows; 2/1m evicts 0 (<= 4): allows
  //   -> 2 refused (5 and 30), not the union's 3: 12, refused by 2/1m alone, passes the group, as
  //   the refused 5 took no room in 2/1m.
  const GROUP_LOG = [0, 5, 12, 30, 64].map((s) => at(s)).join('');

  it('decides the policies as one all-or-nothing group: fewer refusals than the union of theirs (by hand)', () => {
    const result = cliJson(['replay', '-', '--limit', '1/10s', '--limit', '2/1m'], GROUP_LOG);
    const [perTen, perMinute] = result.policies as Record<string, unknown>[];
    expect(perTen).toMatchObject({ name: '1/10s', rejected: 1, allowed: 4, peak_refused_per_minute: 1, peak_minute: '2024-03-10T14:00:00.000Z' });
    expect(perMinute).toMatchObject({ name: '2/1m', rejected: 2, allowed: 3, peak_refused_per_minute: 2 });
    expect(result.group).toEqual({
      name: 'all',
      threshold: null,
      window_seconds: null,
      strategy: 'group',
      allowed: 3,
      rejected: 2,
      clients_limited: 1,
      peak_refused_per_minute: 2,
      peak_minute: '2024-03-10T14:00:00.000Z',
      top_limited: [{ client: '192.0.2.1', rejected: 2, requests: 5 }],
    });
    // The text report: one row per policy, then the group's.
    const text = cli(['replay', '-', '--limit', '1/10s', '--limit', '2/1m'], GROUP_LOG);
    expect(text.status).toBe(0);
    const rows = text.stdout.split('\n');
    expect(rows[0]).toBe('ratewarden replay: <stdin>');
    expect(rows[1]).toBe(
      'log: 5 requests from 1 client (clf; key: client address, IPv6 grouped by /64; time: [timestamp]), 2024-03-10 14:00:00 UTC to 2024-03-10 14:01:04 UTC (64 s), 0 malformed lines',
    );
    expect(rows.slice(2, 6).map((row) => row.split(/ {2,}/))).toEqual([
      ['policy', 'strategy', 'refused', 'clients limited', 'peak refused/min', 'worst client'],
      ['1/10s', 'sliding-window-log', '1 (20.00%)', '1 (100.00%)', '1', '192.0.2.1 (1 of 5)'],
      ['2/1m', 'sliding-window-log', '2 (40.00%)', '1 (100.00%)', '2', '192.0.2.1 (2 of 5)'],
      ['all', 'one RateLimitGroup', '2 (40.00%)', '1 (100.00%)', '2', '192.0.2.1 (2 of 5)'],
    ]);
    expect(text.stdout).toContain('\ntop limited clients under all policies (refused / requests):\n  192.0.2.1  2 / 5\nprocessed 5 lines');
  });

  it('one --limit: no group, the one-policy report', () => {
    const result = cliJson(['replay', '-', '--limit', '2/1m:token-bucket'], GROUP_LOG);
    expect(result).toMatchObject({ threshold: 2, window_seconds: 60, strategy: 'token-bucket', group: null });
    expect((result.policies as unknown[]).length).toBe(1);
    const text = cli(['replay', '-', '--limit', '2/1m:token-bucket'], GROUP_LOG);
    expect(text.stdout).toContain('\nlimit: 2 requests per 60 s per client (token-bucket)\n');
  });

  it('takes huge thresholds up to each strategy bound', () => {
    // GCRA: threshold × window in ms at most 2^42: 4,398,046,511 per second.
    expect(cliJson(['replay', '-', '--limit', '4398046511/1s:gcra', '--limit', '9007199254740991/1d:fixed-window'], GROUP_LOG)).toMatchObject({
      policies: [
        { name: '4398046511/1s:gcra', rejected: 0 },
        { name: '9007199254740991/1d:fixed-window', rejected: 0 },
      ],
      group: { rejected: 0 },
    });
  });
});

describe('ratewarden replay --limit: errors, one line naming --limit and the value, exit 2', { timeout: 60_000 }, () => {
  const fails = (args: string[]): string => {
    const run = cli(['replay', ...args]);
    expect(run.status, args.join(' ')).toBe(2);
    expect(run.stdout).toBe('');
    expect(stderrLines(run), args.join(' ')).toHaveLength(1);
    return run.stderr;
  };
  const EXPECTED = 'N/DURATION or N/DURATION:STRATEGY, such as 60/60s, 1000/1h or 10/1s:gcra';

  it('a value that is no limit, or no threshold, window or strategy of one', () => {
    expect(fails(['--limit', '60'])).toBe(`ratewarden: expected \`--limit\` to be ${EXPECTED}, got \`60\`: it has no /DURATION\n`);
    expect(fails(['--limit', '0/1m'])).toBe('ratewarden: expected `N in --limit 0/1m` to be a positive safe integer, got `0` (number)\n');
    expect(fails(['--limit', '1.5/1m'])).toBe('ratewarden: expected `N in --limit 1.5/1m` to be a positive safe integer, got `1.5` (number)\n');
    expect(fails(['--limit', '60/0s'])).toBe(
      'ratewarden: expected `DURATION in --limit 60/0s` to be a finite number of seconds from 0.001 to 1000000000, got `0` (number)\n',
    );
    expect(fails(['--limit', '60/0.5ms'])).toMatch(/^ratewarden: expected `DURATION in --limit 60\/0\.5ms` to be .*, got `0\.0005` \(number\)\n$/);
    expect(fails(['--limit', '60/1x'])).toBe(
      `ratewarden: expected \`--limit\` to be ${EXPECTED}, got \`60/1x\`: its window \`1x\` is not a duration such as 500ms, 60s, 60 (seconds), 15m, 1h or 1d\n`,
    );
    expect(fails(['--limit', '60/1m:nope'])).toBe(
      `ratewarden: expected \`--limit\` to be ${EXPECTED}, got \`60/1m:nope\`: its strategy \`nope\` is not one of sliding-window-log, sliding-window-counter, fixed-window, token-bucket, gcra\n`,
    );
    expect(fails(['--limit', '2000000/1m'])).toMatch(
      /^ratewarden: expected `N in --limit 2000000\/1m` to be at most 1048576 with the sliding-window-log strategy .*; for larger limits end it with `:sliding-window-counter`, `:fixed-window`, `:token-bucket` or `:gcra`\n$/,
    );
    expect(fails(['--limit', '4398046512/1s:gcra'])).toMatch(/^ratewarden: expected `N in --limit 4398046512\/1s:gcra` to be at most 4398046511 /);
    // A bad one among good ones, and a bad one given after the options.
    expect(fails(['--limit', '60/1m', '--limit', '60'])).toMatch(/got `60`: it has no \/DURATION\n$/);
    expect(fails(['--limit=-1/1m'])).toMatch(/^ratewarden: expected `N in --limit -1\/1m` to be a positive safe integer, got `"-1"` \(string\)\n$/);
    expect(fails(['--limit'])).toBe(`ratewarden: option \`--limit\` needs a value (${EXPECTED})\n`);
  });

  it('--limit with --threshold or --window, and two --window', () => {
    expect(fails(['--limit', '60/1m', '--threshold', '5'])).toBe('ratewarden: `--limit` and `--threshold`/`--window` both give the limit: use one or the other\n');
    expect(fails(['--limit', '60/1m', '--window', '60'])).toBe('ratewarden: `--limit` and `--threshold`/`--window` both give the limit: use one or the other\n');
    expect(fails(['--window', '1m', '--window', '1h'])).toBe('ratewarden: `--window` is given 2 times: replay takes one window (give several policies with `--limit`)\n');
    expect(fails(['--strategy', 'gcra', '--strategy', 'fixed-window', '--limit', '1/1s'])).toMatch(/^ratewarden: `--strategy` is given 2 times: .*`--limit 60\/1m:gcra`/);
  });

  it('the same policy twice, however written (found by review: two identical rows)', () => {
    expect(fails(['--limit', '60/1m', '--limit', '60/60s'])).toBe('ratewarden: `--limit 60/60s` is the same policy as `--limit 60/1m`: give each policy once\n');
    expect(fails(['--strategy', 'gcra', '--limit', '5/1s', '--limit', '5/1000ms:gcra'])).toBe(
      'ratewarden: `--limit 5/1000ms:gcra` is the same policy as `--limit 5/1s`: give each policy once\n',
    );
    // Another strategy is another policy.
    expect(cli(['replay', '--limit', '60/1m', '--limit', '60/1m:gcra', '--json']).status).toBe(0);
  });

  it('an option of one value given twice, instead of the last one silently (found by review)', () => {
    for (const option of ['--threshold', '--top', '--key', '--format', '--report', '--time-field', '--time-format']) {
      const value = option === '--threshold' || option === '--top' ? '5' : option === '--key' ? 'ip' : option === '--format' ? 'clf' : option === '--time-format' ? 'auto' : 'x';
      expect(fails([option, value, option, value]), option).toBe(`ratewarden: \`${option}\` is given 2 times: it takes one value\n`);
    }
  });

  it('--window takes a duration as --limit does (90s, 1m), or seconds', () => {
    const seconds = (args: string[]) => (JSON.parse(cli(['replay', '--json', ...args]).stdout) as { window_seconds: number }).window_seconds;
    expect(seconds(['--window', '1m'])).toBe(60);
    expect(seconds(['--window', '90s'])).toBe(90);
    expect(seconds(['--window', '1.5'])).toBe(1.5);
    expect(fails(['--window', '90x'])).toMatch(/^ratewarden: expected `--window` to be .* or a duration such as 90s, 1m or 1h, got `"90x"` \(string\)\n$/);
  });
});
