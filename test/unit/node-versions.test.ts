// The Node.js versions the package claims are the ones CI tests: `.ci/run` pins the other lines it
// runs (NODE_LINES, besides the machine's main version, which runs the full suite); package.json's
// engines starts each line at the version tested, and the README's "Supported Node.js versions"
// says the same. Bumping a pin without the other two fails here.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const read = (path: string): string => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const PINS = (/^NODE_LINES="([^"]+)"$/m.exec(read('.ci/run'))?.[1] ?? '').split(' ').filter((v) => v !== '');
const ENGINES = (JSON.parse(read('package.json')) as { engines: { node: string } }).engines.node;
const README = read('README.md');

/** `^22.23.0` → [22, 23, '^']. */
function parseRange(range: string): [number, number, string] {
  const match = /^(\^|>=)(\d+)\.(\d+)\.0$/.exec(range);
  if (!match) throw new Error(`engines range ${range}: expected ^M.m.0 or >=M.m.0`);
  return [Number(match[2]), Number(match[3]), match[1] as string];
}

describe('the Node.js versions CI tests', () => {
  const ranges = ENGINES.split('||').map((range) => parseRange(range.trim()));

  it('pins the other lines exactly in .ci/run', () => {
    expect(PINS.length).toBeGreaterThanOrEqual(3);
    for (const pin of PINS) expect(pin).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('engines: the main line first, then one range per pinned line starting at its tested minor, the last open-ended', () => {
    expect(ranges.length).toBe(PINS.length + 1);
    ranges.slice(1).forEach(([major, minor], i) => {
      const [pinMajor, pinMinor] = (PINS[i] as string).split('.').map(Number);
      expect([major, minor], `engines range ${i + 1} against pin ${PINS[i]}`).toEqual([pinMajor, pinMinor]);
    });
    expect(ranges.map(([, , operator]) => operator)).toEqual([...ranges.slice(1).map(() => '^'), '>=']);
    expect(ranges.map(([major]) => major)).toEqual([...ranges.map(([major]) => major)].sort((a, b) => a - b));
  });

  it('the README says the same: each line, the engines field verbatim, each pinned version', () => {
    const section = /\*\*Supported Node\.js versions:\*\*([\s\S]*?)\n\n/.exec(README)?.[1] ?? '';
    const listed = [...section.replace(/`[^`]*`/g, '').matchAll(/\b(\d+)\.(\d+)\b(?!\.\d)/g)].map((m) => [Number(m[1]), Number(m[2])]);
    expect(listed.slice(0, ranges.length)).toEqual(ranges.map(([major, minor]) => [major, minor]));
    expect(section.replace(/\s+/g, ' ')).toContain(`\`engines\`: \`${ENGINES}\``);
    for (const pin of PINS) expect(section).toContain(pin);
  });
});
