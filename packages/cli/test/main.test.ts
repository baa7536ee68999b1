// The `ratewarden` command (src/main.ts and its options, src/options.ts), run as a process
// through the built `dist/cli.js` (built by `npm test` before vitest runs): the reports, stdin,
// gzip, malformed input, each option, the errors and the exit codes; and each strategy on the
// built-in sample against the reference models. Nothing here reads the wall clock or sleeps.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STRATEGY_NAMES } from '../src/strategies.js';
import { PACKAGE, cli, cliJson, requireBuiltCli, stderrLines } from './support/cli.js';
import { SAMPLE_REJECTED, refModel, refReplay, refRequests, type RefRequest } from '../../../test/support/reference-models.js';
import { FIXTURE, FIXTURE_ARGS, FIXTURE_EXPECTED, SAMPLE } from './support/replay-fixture.js';

let dir = '';
beforeAll(() => {
  requireBuiltCli();
  dir = mkdtempSync(join(tmpdir(), 'ratewarden-replay-'));
  writeFileSync(join(dir, 'crafted.log'), FIXTURE);
  writeFileSync(join(dir, 'crafted.log.gz'), gzipSync(FIXTURE));
});
afterAll(() => {
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

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
    // No line parsed at all: the summary is printed, and exit code 1 says nothing was replayed.
    expect(run.status).toBe(1);
    expect(JSON.parse(run.stdout)).toMatchObject({ requests: 0, allowed: 0, rejected: 0, clients: 0, malformed: 7 });
    expect(stderrLines(run)).toEqual([
      'ratewarden: line 1: malformed (no authuser): garbage 1',
      'ratewarden: line 2: malformed (no authuser): garbage 2',
      'ratewarden: line 3: malformed (no authuser): garbage 3',
      'ratewarden: line 4: malformed (no authuser): garbage 4',
      'ratewarden: line 5: malformed (no authuser): garbage 5',
      'ratewarden: 2 more malformed lines not shown (7 in all)',
      'ratewarden: nothing to replay: no line of the input is in the Common or Combined Log Format (`host ident authuser [dd/Mon/yyyy:HH:MM:SS +zzzz] "request" status bytes`)',
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

  it('exits 1 when no line parses (a binary file), and when the input is empty', () => {
    const binary = Buffer.from(Array.from({ length: 3_000 }, (_, i) => (i * 7919) % 256));
    const run = cli(['replay', '-'], binary);
    expect(run.status).toBe(1);
    expect(run.stdout).toMatch(/^requests {14}0$/m);
    expect(stderrLines(run).at(-1)).toMatch(/^ratewarden: nothing to replay: no line of the input is in the Common or Combined Log Format/);
    const empty = cli(['replay', '-'], '');
    expect(empty.status).toBe(1);
    expect(empty.stdout).toMatch(/^requests {14}0$/m);
    expect(stderrLines(empty)).toEqual(['ratewarden: the input is empty (or blank): nothing to replay']);
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
      // The quota's own messages (createQuota), naming the option.
      expect(fails(['replay', '--threshold', 'abc'], /--threshold/)).toBe(
        'ratewarden: expected `--threshold` to be a positive safe integer, got `"abc"` (string)\n',
      );
      expect(fails(['replay', '--threshold', '0'], /--threshold/)).toBe(
        'ratewarden: expected `--threshold` to be a positive safe integer, got `0` (number)\n',
      );
      fails(['replay', '--threshold', '1.5'], /^ratewarden: expected `--threshold` to be a positive safe integer, got `1\.5` \(number\)\n$/);
      fails(['replay', '--threshold', '-3'], /^ratewarden: expected `--threshold` to be a positive safe integer, got `-3` \(number\)\n$/);
      fails(['replay', '--threshold', '0x10'], /^ratewarden: expected `--threshold` to be a positive safe integer, got `"0x10"` \(string\)\n$/);
      fails(['replay', '--threshold=9007199254740992'], /`--threshold`.*got `9007199254740992`/);
      fails(['replay', '--threshold'], /^ratewarden: option `--threshold` needs a value \(a positive safe integer\)\n$/);
    });

    it('a bad --window', () => {
      expect(fails(['replay', '--window', '-1'], /--window/)).toBe(
        'ratewarden: expected `--window` to be a finite number of seconds from 0.001 to 1000000000, got `-1` (number)\n',
      );
      fails(['replay', '--window=-1'], /^ratewarden: expected `--window` to be a finite number of seconds from 0\.001 to 1000000000, got `-1` \(number\)\n$/);
      fails(['replay', '--window', '0'], /`--window`.*got `0` \(number\)/);
      fails(['replay', '--window', 'abc'], /`--window`.*got `"abc"` \(string\)/);
      fails(['replay', '--window', 'Infinity'], /`--window`.*got `"Infinity"` \(string\)/);
      fails(['replay', '--window', '1e306'], /`--window`.*got `1e\+306` \(number\)/);
    });

    it('a bad --top', () => {
      fails(['replay', '--top', 'x'], /^ratewarden: expected `--top` to be a non-negative safe integer, got `"x"` \(string\)\n$/);
      fails(['replay', '--top=-1'], /^ratewarden: expected `--top` to be a non-negative safe integer, got `-1` \(number\)\n$/);
      fails(['replay', '--top', '-1'], /^ratewarden: expected `--top` to be a non-negative safe integer, got `-1` \(number\)\n$/);
      fails(['replay', '--top', '2.5'], /^ratewarden: expected `--top` to be a non-negative safe integer, got `2\.5` \(number\)\n$/);
      fails(['replay', '--top', '9007199254740992'], /^ratewarden: expected `--top` to be a non-negative safe integer, got `9007199254740992` \(number\)\n$/);
    });

    it('an option where a value was expected: names both', () => {
      fails(
        ['replay', '--window', '--json'],
        /^ratewarden: option `--window` needs a value \(a number of seconds from 0\.001 to 1000000000, in whole milliseconds, or a duration such as 90s, 1m or 1h\), got the option `--json`\n$/,
      );
      fails(['replay', '--strategy', '-h'], /^ratewarden: option `--strategy` needs a value \(one of .*\), got the option `-h`\n$/);
      fails(['replay', '--top', '--threshold', '5'], /^ratewarden: option `--top` needs a value \(a non-negative safe integer\), got the option `--threshold`\n$/);
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
    expect(replayHelp.stdout).toContain('Usage: ratewarden replay [FILE] [--limit N/DURATION[:STRATEGY]]...\n');
    expect(replayHelp.stdout).toContain('(default 60)');
    const suggestHelp = cli(['suggest', '--help']);
    expect(suggestHelp.status).toBe(0);
    expect(suggestHelp.stdout).toContain('Usage: ratewarden suggest [FILE] [--window DURATION]...');
    const version = cli(['--version']);
    expect(version.status).toBe(0);
    expect(version.stdout).toBe(`${PACKAGE.version}\n`);
  });
});

describe('ratewarden replay --strategy', { timeout: 60_000 }, () => {
  let sample: RefRequest[] = [];
  beforeAll(() => {
    sample = refRequests(gunzipSync(readFileSync(SAMPLE)).toString('utf8'));
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
        'ratewarden: expected `--threshold` to be at most 1048576 with the sliding-window-log strategy (its maxThreshold), ' +
        'got `2000000` (number); for larger limits use `--strategy` sliding-window-counter, fixed-window, token-bucket or gcra\n';
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
        'ratewarden: expected `--window` to be a finite number of seconds from 0.001 to 1000000000, got `0.0009` (number)\n',
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
