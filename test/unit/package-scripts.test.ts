// The npm scripts of package.json, as a user runs them from the README: a script that builds
// before its real work (`npm test`, `npm run lint`, the benchmarks) builds quietly, so tsup's log
// of every bundle and declaration file does not bury the tests' output (errors still print:
// tsup's --silent drops only its non-error logs).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const SCRIPTS = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  scripts: Record<string, string>;
}).scripts;

describe('package.json scripts', () => {
  it('build quietly before another step (tsup --silent, not `npm run build`)', () => {
    const buildFirst = Object.entries(SCRIPTS).filter(([, command]) => /\b(tsup|npm run build)\b[^&]*&&/.test(command));
    expect(buildFirst.map(([name]) => name)).toEqual(expect.arrayContaining(['test', 'test:unit', 'test:integration', 'lint']));
    for (const [name, command] of buildFirst) {
      expect(command, name).toMatch(/^tsup --silent && /);
    }
  });
});
