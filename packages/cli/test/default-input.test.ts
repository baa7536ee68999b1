// `ratewarden replay` with no FILE (src/main.ts, `stdinKind` in src/input.ts), run as a
// process through the built `dist/cli.js`: piped or redirected stdin is the log, never ignored;
// a terminal (a pseudo-terminal from `script`), /dev/null (CI) or a socket means the built-in
// sample, without waiting on stdin; an empty pipe falls back on the sample (said, exit code 0), an
// empty redirected file does not (exit code 1).
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stdinKind } from '../src/input.js';
import { CLI, cli, cliFromShell, requireBuiltCli, stderrLines } from './support/cli.js';
import { FIXTURE, FIXTURE_ARGS, FIXTURE_EXPECTED, SAMPLE } from './support/replay-fixture.js';

let dir = '';
beforeAll(() => {
  requireBuiltCli();
  dir = mkdtempSync(join(tmpdir(), 'ratewarden-stdin-'));
  writeFileSync(join(dir, 'crafted.log'), FIXTURE);
  writeFileSync(join(dir, 'crafted.log.gz'), gzipSync(FIXTURE));
  writeFileSync(join(dir, 'empty.log'), '');
});
afterAll(() => {
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

const SAMPLE_JSON = { sample: true, file: SAMPLE, requests: 10_000, rejected: 87 };

describe('ratewarden replay with no FILE', { timeout: 60_000 }, () => {
  it('replays a pipe (`cat log | ratewarden replay`), and says so on stderr', () => {
    const run = cliFromShell(['replay', ...FIXTURE_ARGS, '--json'], join(dir, 'crafted.log'));
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ ...FIXTURE_EXPECTED, file: '-', sample: false });
    expect(stderrLines(run)).toEqual([
      'ratewarden: no FILE given: replaying stdin (a pipe)',
      'ratewarden: line 5: malformed (no [timestamp]): this is not a log line',
    ]);
    // gzip data through the pipe (`cat access.log.gz | ratewarden replay`), and the text report.
    const gz = cliFromShell(['replay', ...FIXTURE_ARGS, '--top', '0'], join(dir, 'crafted.log.gz'));
    expect(gz.status, gz.stderr).toBe(0);
    expect(gz.stdout).toMatch(/^ratewarden replay: <stdin>\n/);
    expect(gz.stdout).toMatch(/^rejected {14}3 {2}\(37\.50%\)$/m);
  });

  it('replays a redirected file (`ratewarden replay < log`)', () => {
    const run = cliFromShell(['replay', ...FIXTURE_ARGS, '--json'], join(dir, 'crafted.log'), 'redirect');
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ ...FIXTURE_EXPECTED, file: '-', sample: false });
    expect(stderrLines(run)[0]).toBe('ratewarden: no FILE given: replaying stdin (a file)');
  });

  it('an empty pipe is no input: the sample, said on stderr, exit code 0', () => {
    // A harness that runs every command with an empty pipe for stdin still gets the README's main job.
    const run = cliFromShell(['replay', '--json'], join(dir, 'empty.log'));
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject(SAMPLE_JSON);
    expect(stderrLines(run)).toEqual([
      'ratewarden: no FILE given: replaying stdin (a pipe)',
      'ratewarden: stdin is empty (or blank): replaying the built-in sample instead (give `-` to replay stdin as it is)',
    ]);
  });

  it('an empty file redirected to stdin (`ratewarden replay < empty.log`) is replayed as it is: exit code 1', () => {
    // A file was given (a rotated, empty log): reporting the sample with exit code 0 would hide it.
    const run = cliFromShell(['replay', '--json'], join(dir, 'empty.log'), 'redirect');
    expect(run.status).toBe(1);
    expect(JSON.parse(run.stdout)).toMatchObject({ file: '-', sample: false, lines: 0, requests: 0 });
    expect(stderrLines(run)).toEqual([
      'ratewarden: no FILE given: replaying stdin (a file)',
      'ratewarden: the input is empty (or blank): nothing to replay',
    ]);
  });

  it('an empty stdin given as `-` is replayed as it is: nothing to replay, exit code 1', () => {
    const run = cliFromShell(['replay', '-', '--json'], join(dir, 'empty.log'));
    expect(run.status).toBe(1);
    expect(JSON.parse(run.stdout)).toMatchObject({ file: '-', sample: false, lines: 0, requests: 0 });
    expect(stderrLines(run)).toEqual(['ratewarden: the input is empty (or blank): nothing to replay']);
  });

  it('replays the sample when stdin is /dev/null (CI), saying nothing on stderr', () => {
    const run = cli(['replay', '--json']); // stdin: /dev/null
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject(SAMPLE_JSON);
    expect(run.stderr).toBe('');
  });

  it('replays the sample when stdin is a socket, and says how to read it (`-`)', () => {
    // spawnSync's `input` goes through a socket pair, as with any child_process pipe.
    const run = cli(['replay', '--json'], FIXTURE);
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject(SAMPLE_JSON);
    expect(stderrLines(run)).toEqual([
      'ratewarden: no FILE given and stdin is a socket, which is not read: replaying the built-in ' +
        'sample (give `-` to replay stdin)',
    ]);
    // With `-`, the same socket is read.
    expect(JSON.parse(cli(['replay', '-', ...FIXTURE_ARGS, '--json'], FIXTURE).stdout)).toMatchObject(FIXTURE_EXPECTED);
  });

  it('replays the sample from a terminal, without waiting on stdin; the progress line counts lines', () => {
    // util-linux `script` runs the command on a pseudo-terminal: stdin, stdout and stderr are a TTY.
    expect(existsSync('/usr/bin/script'), 'util-linux `script` (Debian: bsdutils) is needed').toBe(true);
    const command = `'${process.execPath}' '${CLI}' replay --top 0`;
    const run = spawnSync('/usr/bin/script', ['-qec', command, '/dev/null'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 30_000,
    });
    expect(run.status, run.stderr).toBe(0);
    const out = run.stdout.replace(/\r\n/g, '\n');
    expect(out).toMatch(/ratewarden replay: built-in sample \(.*access-combined\.log\.gz\)\n/);
    expect(out).toMatch(/^requests {10}10000$/m);
    // The first progress line is shown at once (the indicator is throttled after it): the
    // sample is gzip data, and the share of it read agrees with the lines counted (it once
    // said "reading 100% (205.2 KB of 205.2 KB), 0 lines").
    const reading = [...out.matchAll(/ratewarden: reading (\d+)% \(([\d.]+ KB) of ([\d.]+ KB)\), ([\d,]+) lines?/g)];
    expect(reading.length).toBeGreaterThan(0);
    // The first: after the first 64 KB the gunzip gave, a few percent of the file, some lines.
    expect(Number(reading[0]![1])).toBeLessThan(100);
    expect(reading[0]![3]).toBe('205.2 KB');
    for (const [, , , , lines] of reading) expect(Number(lines!.replace(/,/g, ''))).toBeGreaterThan(0);
  });
});

describe('stdinKind', () => {
  it('tells a file, a FIFO-less device and a closed descriptor apart', () => {
    const file = openSync(join(dir, 'crafted.log'), 'r');
    const devNull = openSync('/dev/null', 'r');
    try {
      expect(stdinKind(file)).toBe('file');
      expect(stdinKind(devNull)).toBe('other');
    } finally {
      closeSync(file);
      closeSync(devNull);
    }
    expect(stdinKind(1_000_000)).toBe('other'); // not open: EBADF
  });
});
