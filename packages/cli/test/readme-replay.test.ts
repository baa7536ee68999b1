// The CLI README's Replay section (packages/cli/README.md) shows the output a user will see on the built-in sample: each
// `text` block there that starts with `ratewarden replay:` or `ratewarden suggest:` is compared,
// line for line, with the built command's output for the arguments the README gives it (the
// package folder and the last line's timing, which vary, excepted).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { cli, requireBuiltCli } from './support/cli.js';

const README = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const PACKAGE_FOLDER = fileURLToPath(new URL('..', import.meta.url)).replace(/\/$/, '');

/** The `text` blocks of the Replay section that show a report, in order. */
function reportBlocks(): string[] {
  const section = README.slice(README.indexOf('## Replay:'), README.indexOf('## Speed'));
  return [...section.matchAll(/```text\n([\s\S]*?)```/g)]
    .map((m) => m[1] as string)
    .filter((block) => /^ratewarden (replay|suggest):/.test(block));
}

/** Output lines as the README writes them: the package folder as `<package folder>`, timing dropped. */
function comparable(text: string): string[] {
  return text
    .replaceAll(PACKAGE_FOLDER, '<package folder>')
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('processed '));
}

// The arguments of each block, in the README's order (its prose names them next to the block).
const RUNS = [
  ['replay', '--limit', '60/1m', '--limit', '100/1h', '--limit', '3/1s:gcra'],
  ['replay'],
  ['suggest', '--strategy', 'sliding-window-log', '--strategy', 'token-bucket'],
];

describe("the README's replay and suggest output", { timeout: 60_000 }, () => {
  beforeAll(() => requireBuiltCli());

  it('has one block per run, and each run prints its block', () => {
    const blocks = reportBlocks();
    expect(blocks).toHaveLength(RUNS.length);
    for (const [i, args] of RUNS.entries()) {
      expect(README).toContain(`npm run ${args[0]}${args.length > 1 ? ` -- ${args.slice(1).join(' ')}` : ''}`);
      const run = cli(args);
      expect(run.status, run.stderr).toBe(0);
      expect(comparable(run.stdout)).toEqual(comparable(blocks[i] as string));
      expect(blocks[i]).toMatch(/\nprocessed 10000 lines in [\d.]+ m?s \([\d,]+ lines\/s\)\n$/);
    }
  });
});
