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
  it('build quietly before another step (tsup --silent, or `npm run -s build`, which builds both packages silently)', () => {
    expect(SCRIPTS.build).toBe('tsup --silent && npm run -s build -w ratewarden-cli -- --silent');
    const buildFirst = Object.entries(SCRIPTS).filter(([name, command]) => name !== 'build' && /\b(tsup|npm run (-s )?build)\b[^&]*&&/.test(command));
    expect(buildFirst.map(([name]) => name)).toEqual(expect.arrayContaining(['test', 'test:unit', 'test:integration', 'lint', 'replay', 'suggest']));
    for (const [name, command] of buildFirst) {
      expect(command, name).toMatch(/^(tsup --silent|npm run -s build) && /);
    }
  });
});
