// Running the built CLI (`dist/cli.js`, built by `npm test` before vitest runs) as a process, for
// the tests of the `ratewarden` command: its path, the package version, and helpers that run it
// and read its output.
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';

/** The built command. */
export const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
/** The package's `package.json`. */
export const PACKAGE = JSON.parse(
  readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
) as { version: string };

/** Throws unless the CLI is built. */
export function requireBuiltCli(): void {
  if (!existsSync(CLI)) {
    throw new Error(`${CLI} is missing: build first (\`npm test\` runs \`tsup\` before vitest)`);
  }
}

/**
 * Runs the built CLI. With `input`, stdin is a socket that carries it (what `child_process` gives
 * a child); without, stdin is `/dev/null`, as in CI.
 */
export function cli(args: string[], input?: string | Buffer): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [CLI, ...args], {
    encoding: 'utf8',
    ...(input === undefined ? { stdio: ['ignore', 'pipe', 'pipe'] } : { input }),
    maxBuffer: 16 << 20,
  });
}

/**
 * Runs the built CLI with `file`'s bytes on stdin through a real pipe (a FIFO: `cat FILE | ratewarden
 * …` in `/bin/sh`), or through a redirect (`ratewarden … < FILE`) when `how` is `'redirect'`.
 * The exit code is the CLI's.
 */
export function cliFromShell(args: string[], file: string, how: 'pipe' | 'redirect' = 'pipe'): SpawnSyncReturns<string> {
  const script =
    how === 'pipe' ? 'cat "$1" | { shift; "$@"; }' : 'f=$1; shift; "$@" < "$f"';
  return spawnSync('/bin/sh', ['-c', script, 'sh', file, process.execPath, CLI, ...args], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 16 << 20,
  });
}

/** Runs the CLI with `--json` and parses its one JSON object. */
export function cliJson(args: string[], input?: string | Buffer): Record<string, unknown> {
  const run = cli([...args, '--json'], input);
  expect(run.status, run.stderr).toBe(0);
  const lines = run.stdout.split('\n').filter((line) => line !== '');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0] as string) as Record<string, unknown>;
}

/** The non-empty lines of what a run wrote on stderr. */
export function stderrLines(run: SpawnSyncReturns<string>): string[] {
  return run.stderr.split('\n').filter((line) => line !== '');
}
