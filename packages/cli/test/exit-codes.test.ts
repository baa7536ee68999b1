// The exit codes of `ratewarden` (EXIT_CODES in src/options.ts), each produced by the built
// CLI as a process, and each listed in `ratewarden replay --help`: 0 replayed, 1 nothing to
// replay (the report is printed), 2 an error (no report).
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { EXIT_CODES } from '../src/options.js';
import { CLI, cli, requireBuiltCli, stderrLines } from './support/cli.js';
import { FIXTURE, FIXTURE_ARGS } from './support/replay-fixture.js';

beforeAll(() => {
  requireBuiltCli();
});

describe('exit codes', { timeout: 60_000 }, () => {
  it('are 0, 1 and 2, each listed in --help', () => {
    expect(EXIT_CODES).toEqual({ replayed: 0, nothingReplayed: 1, error: 2 });
    const help = cli(['replay', '--help']).stdout;
    const listed = help.slice(help.indexOf('Exit status:\n'));
    expect(listed).toMatch(/^ {2}0 {2}the report is printed; requests were replayed$/m);
    expect(listed).toMatch(/^ {2}1 {2}the report is printed, but there was nothing to replay: the input\n {5}is empty, or no line of it is in the log format$/m);
    expect(listed).toMatch(/^ {2}2 {2}no report: a bad option, an input that cannot be read/m);
    expect([...listed.matchAll(/^ {2}(\d) {2}/gm)].map((m) => Number(m[1]))).toEqual([0, 1, 2]);
  });

  it('0: requests were replayed (with malformed lines among them); help; the version', () => {
    const run = cli(['replay', '-', ...FIXTURE_ARGS], FIXTURE);
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^requests {14}8$/m);
    expect(cli(['replay', '--help']).status).toBe(0);
    expect(cli(['--version']).status).toBe(0);
  });

  it('1: an empty or blank input, and one of only malformed lines; the report is printed', () => {
    for (const text of ['', '\n\n\n']) {
      const run = cli(['replay', '-', '--json'], text);
      expect(run.status).toBe(1);
      expect(JSON.parse(run.stdout)).toMatchObject({ lines: 0, requests: 0 });
      expect(stderrLines(run)).toEqual(['ratewarden: the input is empty (or blank): nothing to replay']);
    }
    const malformed = cli(['replay', '-'], 'not a log line\nnor this\n');
    expect(malformed.status).toBe(1);
    expect(malformed.stdout).toMatch(/^malformed lines {7}2$/m);
    expect(stderrLines(malformed).at(-1)).toMatch(/^ratewarden: nothing to replay: no line of the input is in the Common or Combined Log Format/);
  });

  it('2: a bad option, an unreadable input; nothing on stdout', () => {
    const option = cli(['replay', '--top', 'x']);
    expect(option.status).toBe(2);
    expect(option.stdout).toBe('');
    const missing = cli(['replay', '/nonexistent/access.log']);
    expect(missing.status).toBe(2);
    expect(missing.stdout).toBe('');
  });

  it('2: a report that cannot be written (stdout on a full device), one line, no stack trace', () => {
    expect(existsSync('/dev/full'), '/dev/full (Linux) is needed').toBe(true);
    for (const args of [['replay'], ['replay', '--json'], ['--help']]) {
      const full = openSync('/dev/full', 'w');
      try {
        const run = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', stdio: ['ignore', full, 'pipe'] });
        expect(run.status, args.join(' ')).toBe(2);
        expect(run.stderr).toBe('ratewarden: cannot write the report to stdout: no space left on device\n');
      } finally {
        closeSync(full);
      }
    }
  });
});
