// `ratewarden suggest` end to end (the built `dist/cli.js`): the command's plumbing and output
// (windows and strategies repeated, both goals, text and --json, the bundled sample and a small
// log worked by hand) and its usage errors. The search itself is checked against a brute-force
// search in suggest.test.ts; here each answer on the sample is only checked against what
// `replay --limit` says of it and of the threshold below it.
import { beforeAll, describe, expect, it } from 'vitest';
import { cli, cliJson, requireBuiltCli, stderrLines } from './support/cli.js';
import { CLF } from './support/format-fixtures.js';

beforeAll(() => {
  requireBuiltCli();
});

interface Answer {
  window_seconds: number;
  strategy: string;
  threshold: number | null;
  refused: number;
  clients_limited: number;
  max_client_peak: number;
  passes: number;
  curve: { threshold: number; refused_share: number; clients_limited_share: number }[];
}

describe('ratewarden suggest (the built CLI)', { timeout: 60_000 }, () => {
  it('on the sample: two windows × two strategies, both goals; each answer is what replay --limit says meets them, and one less does not', () => {
    const args = ['suggest', '--window', '1m', '--window', '1h', '--strategy', 'gcra', '--strategy', 'sliding-window-log', '--max-refused', '1%', '--max-clients-limited', '1%'];
    const result = cliJson(args);
    expect(result).toMatchObject({
      sample: true,
      lines: 10_000,
      requests: 10_000,
      clients: 1753,
      malformed: 0,
      format: 'clf',
      key: 'client address, IPv6 grouped by /64',
      time: '[timestamp]',
      goals: [
        { kind: 'clients-limited', share: 0.01 },
        { kind: 'refused', share: 0.01 },
      ],
    });
    const answers = result.answers as Answer[];
    // Windows in the order given, then strategies.
    expect(answers.map((a) => [a.window_seconds, a.strategy])).toEqual([
      [60, 'gcra'],
      [60, 'sliding-window-log'],
      [3600, 'gcra'],
      [3600, 'sliding-window-log'],
    ]);
    const limits: string[] = [];
    for (const a of answers) {
      expect(a.threshold).not.toBeNull();
      const t = a.threshold as number;
      // The answer is a point of its own curve, with the counts the answer gives.
      expect(a.curve).toContainEqual({ threshold: t, refused_share: a.refused / 10_000, clients_limited_share: a.clients_limited / 1753 });
      expect(a.refused).toBeLessThanOrEqual(100);
      expect(a.clients_limited).toBeLessThanOrEqual(17);
      expect(t).toBeLessThanOrEqual(a.max_client_peak);
      limits.push(`${t}/${a.window_seconds}s:${a.strategy}`, `${t - 1}/${a.window_seconds}s:${a.strategy}`);
    }
    const replayed = cliJson(['replay', ...limits.flatMap((limit) => ['--limit', limit])]).policies as { rejected: number; clients_limited: number }[];
    for (const [i, a] of answers.entries()) {
      const at = replayed[2 * i]!;
      const below = replayed[2 * i + 1]!;
      expect([at.rejected, at.clients_limited], `${a.window_seconds} ${a.strategy}`).toEqual([a.refused, a.clients_limited]);
      expect(below.rejected > 100 || below.clients_limited > 17, `${(a.threshold as number) - 1} per ${a.window_seconds} s, ${a.strategy}`).toBe(true);
    }
    // The text report: the same answers, in a table, then each curve.
    const text = cli(args.filter((arg) => arg !== '--json'));
    expect(text.status).toBe(0);
    const lines = text.stdout.split('\n');
    expect(lines[0]).toMatch(/^ratewarden suggest: built-in sample \(.*access-combined\.log\.gz\)$/);
    expect(lines[1]).toBe(
      'log: 10000 requests from 1753 clients (clf; key: client address, IPv6 grouped by /64; time: [timestamp]), 2015-05-17 10:05:00 UTC to 2015-05-20 21:05:59 UTC (83.0 h), 0 malformed lines',
    );
    expect(lines[3]).toBe('goal: at most 1% of clients limited, and at most 1% of requests refused');
    expect(lines.slice(5, 9).map((row) => row.split(/ +/).slice(0, 3))).toEqual(
      answers.map((a) => [a.window_seconds === 60 ? '1m' : '1h', a.strategy, String(a.threshold)]),
    );
    expect(lines.filter((line) => line.startsWith('curve, '))).toEqual(
      answers.map((a) => `curve, ${a.window_seconds === 60 ? '1m' : '1h'} ${a.strategy} (threshold: refused, clients limited; ${a.passes} passes over the requests):`),
    );
    expect(text.stderr).toBe('');
  });

  it('the default goal (at most 1% of clients limited) and window (60 s) on the sample: text and --json agree', () => {
    const result = cliJson(['suggest']);
    expect(result.goals).toEqual([{ kind: 'clients-limited', share: 0.01 }]);
    const [answer] = result.answers as Answer[];
    expect(answer).toMatchObject({ window_seconds: 60, strategy: 'sliding-window-log' });
    const text = cli(['suggest']);
    expect(text.stdout).toContain('\ngoal: at most 1% of clients limited\n');
    expect(text.stdout).toMatch(new RegExp(`^1m +sliding-window-log +${answer!.threshold} +${answer!.refused} \\(`, 'm'));
  });

  // The CLF log of format-fixtures.ts (A at 1, 3, 5, 11, 12 s; B three times at 2 s; C at 4 s),
  // per 10 s with the sliding-window log:
  //   threshold 2: A refused at 5 and 12, B once: 3 of 9 (33%), 2 of 3 clients
  //   threshold 3: A: 1, 3, 5 allowed; at 11, 1 is evicted: allowed; at 12, 3, 5 and 11 live:
  //                refused; B allowed: 1 of 9 (11%), 1 of 3 clients (33%)
  //   threshold 4: none refused (A's busiest 10 s holds 3, 5, 11, 12)
  // So at most 20% refused: 3; and with at most 30% of clients limited too: 4.
  it('on a small log, by hand: one goal, then both (both must hold); --window 10s', () => {
    const refused = cliJson(['suggest', '-', '--window', '10s', '--max-refused', '20%'], CLF.text);
    expect(refused).toMatchObject({ file: '-', sample: false, lines: 12, requests: 9, clients: 3, malformed: 3, goals: [{ kind: 'refused', share: 0.2 }] });
    expect(refused.busiest_hour).toEqual({ start: '2024-03-10T14:00:00.000Z', requests: 9, clients: 3 });
    const [one] = refused.answers as Answer[];
    expect(one).toMatchObject({ window_seconds: 10, strategy: 'sliding-window-log', threshold: 3, refused: 1, clients_limited: 1, max_client_peak: 4 });
    expect(one!.curve.slice(0, 4)).toEqual([
      { threshold: 1, refused_share: 5 / 9, clients_limited_share: 2 / 3 },
      { threshold: 2, refused_share: 3 / 9, clients_limited_share: 2 / 3 },
      { threshold: 3, refused_share: 1 / 9, clients_limited_share: 1 / 3 },
      { threshold: 4, refused_share: 0, clients_limited_share: 0 },
    ]);
    const both = cli(['suggest', '-', '--window', '10s', '--max-refused', '20%', '--max-clients-limited', '30%'], CLF.text);
    expect(both.status).toBe(0);
    expect(both.stdout).toContain('\ngoal: at most 30% of clients limited, and at most 20% of requests refused\n');
    expect(both.stdout).toMatch(/^10s +sliding-window-log +4 +0 \(0\.00%\) +0 \(0\.00%\) +4$/m);
    expect(both.stdout).toContain('\n  1: 55.56% 66.67%          2: 33.33% 66.67%          3: 11.11% 33.33%          4: 0.00% 0.00% <\n');
    // The malformed lines are reported as by replay.
    expect(stderrLines(both)).toEqual(CLF.stderr);
  });

  describe('errors: one line naming the option, exit 2, no report', () => {
    const fails = (args: string[]): string => {
      const run = cli(['suggest', ...args]);
      expect(run.status, args.join(' ')).toBe(2);
      expect(run.stdout).toBe('');
      expect(stderrLines(run)).toHaveLength(1);
      return run.stderr;
    };

    it('bad goals', () => {
      expect(fails(['--max-refused', '5'])).toBe('ratewarden: expected `--max-refused` to be a percentage from 0% to 100%, such as 0.1%, got `5`\n');
      expect(fails(['--max-refused', '101%'])).toBe('ratewarden: expected `--max-refused` to be a percentage from 0% to 100%, such as 0.1%, got `101%`\n');
      expect(fails(['--max-refused', 'abc'])).toBe('ratewarden: expected `--max-refused` to be a percentage from 0% to 100%, such as 0.1%, got `abc`\n');
      expect(fails(['--max-clients-limited=-1%'])).toBe('ratewarden: expected `--max-clients-limited` to be a percentage from 0% to 100%, such as 1%, got `-1%`\n');
      expect(fails(['--max-clients-limited', '1%', '--max-refused'])).toBe('ratewarden: option `--max-refused` needs a value (a percentage from 0% to 100%, such as 0.1%)\n');
    });

    it('--limit or --threshold (suggest finds the threshold); a bad window or strategy', () => {
      const message = 'ratewarden: `suggest` finds the threshold: give it `--window` (and `--strategy`), not `--limit` or `--threshold`\n';
      expect(fails(['--limit', '60/1m'])).toBe(message);
      expect(fails(['--threshold', '60'])).toBe(message);
      expect(fails(['--window', '1m', '--window', '1x'])).toBe(
        'ratewarden: expected `--window` to be a duration such as 500ms, 60s, 60 (seconds), 15m, 1h or 1d, got `1x`\n',
      );
      expect(fails(['--strategy', 'gcra', '--strategy', 'leaky'])).toMatch(/^ratewarden: expected `--strategy` to be one of .*, got `leaky`\n$/);
    });
  });
});
