// `ratewarden replay --help` against what the command does: every bound the help text states
// for an option is the bound the validation applies (each side of it tried through the built
// CLI), and every line fits 80 columns.
import { beforeAll, describe, expect, it } from 'vitest';
import { STRATEGY_NAMES, createStrategy } from '../src/strategies.js';
import { cli, requireBuiltCli } from './support/cli.js';

let help = '';
beforeAll(() => {
  requireBuiltCli();
  help = cli(['replay', '--help']).stdout;
});

/** Whether the CLI takes `args` (on the built-in sample, stdin /dev/null). */
const accepts = (...args: string[]): boolean => {
  const run = cli(['replay', '--json', ...(args.includes('--top') ? [] : ['--top', '0']), ...args]);
  expect([0, 2], run.stderr).toContain(run.status);
  return run.status === 0;
};

/** The help text with its wrapped lines joined, for matching phrases across line breaks. */
const flat = (): string => help.replace(/\s+/g, ' ');

describe('replay --help agrees with the validation', { timeout: 60_000 }, () => {
  it('--window: "from 0.001 to 1000000000, a whole number of milliseconds: 1.5 is allowed, 0.0015 is not"', () => {
    expect(flat()).toContain(
      '--window SECONDS the window length in seconds, from 0.001 to 1000000000, a whole number of milliseconds: 1.5 is allowed, 0.0015 is not (default 60)',
    );
    expect(accepts('--window', '0.001')).toBe(true);
    expect(accepts('--window', '0.0009')).toBe(false);
    expect(accepts('--window', '1000000000', '--threshold', '1')).toBe(true);
    expect(accepts('--window', '1000000000.001', '--threshold', '1')).toBe(false);
    expect(accepts('--window', '1.5')).toBe(true);
    expect(accepts('--window', '0.0015')).toBe(false);
  });

  it('--threshold: "a positive integer: at most 1048576 with sliding-window-log, and N x (window in ms) at most 2^42 with …"', () => {
    const bounded = STRATEGY_NAMES.filter((name) => createStrategy(name).maxThresholdTimesWindowMs !== undefined);
    expect(bounded).toEqual(['sliding-window-counter', 'token-bucket', 'gcra']);
    expect(flat()).toContain(
      '--threshold N requests allowed per window and client, a positive integer (default 60): at most 1048576 with sliding-window-log, ' +
        'and N x (window in ms) at most 2^42 (4398046511104) with sliding-window-counter, token-bucket and gcra',
    );
    expect(accepts('--threshold', '1')).toBe(true);
    expect(accepts('--threshold', '0')).toBe(false);
    expect(accepts('--threshold', '1048576')).toBe(true);
    expect(accepts('--threshold', '1048577')).toBe(false);
    // 2^42 / 1000 ms = 4398046511.104: the largest threshold for a one-second window.
    for (const strategy of bounded) {
      expect(accepts('--strategy', strategy, '--window', '1', '--threshold', '4398046511'), strategy).toBe(true);
      expect(accepts('--strategy', strategy, '--window', '1', '--threshold', '4398046512'), strategy).toBe(false);
    }
    // The fixed window has neither bound.
    expect(accepts('--strategy', 'fixed-window', '--window', '1', '--threshold', String(2 ** 53 - 1))).toBe(true);
  });

  it('--top: "an integer >= 0"; --strategy: the names listed', () => {
    expect(flat()).toContain('--top N how many of the most-limited clients to list, an integer >= 0 (default 10)');
    expect(accepts('--top', '0')).toBe(true);
    expect(accepts('--top', '-1')).toBe(false);
    expect(accepts('--top', '1.5')).toBe(false);
    expect(accepts('--top', '1e3')).toBe(true); // written as --threshold may be written
    for (const name of STRATEGY_NAMES) expect(accepts('--strategy', name), name).toBe(true);
    expect(accepts('--strategy', 'leaky-bucket')).toBe(false);
  });

  it('fits 80 columns, and so do `ratewarden --help` and `ratewarden suggest --help`', () => {
    for (const text of [help, cli(['--help']).stdout, cli(['suggest', '--help']).stdout]) {
      for (const line of text.split('\n')) expect(line.length, line).toBeLessThanOrEqual(80);
    }
  });
});
