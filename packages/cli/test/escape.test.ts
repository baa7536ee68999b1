// Text from the input never reaches the terminal raw (issue 11, item 6): the escaping functions
// (src/escape.ts), as properties, and the built command (`dist/cli.js`, built by `npm test`
// before vitest runs) over logs, file names and option values full of hostile characters.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { escapeText, toJsonLine } from '../src/escape.js';
import { cli, requireBuiltCli } from './support/cli.js';

/**
 * A character a terminal may act on: C0 but `\n` (the command's own line ends), DEL, C1, the
 * bidirectional controls, U+2028/U+2029, a lone surrogate.
 */
// eslint-disable-next-line no-control-regex
const RAW = /[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
/** The same, `\n` included: what one escaped field must not contain. */
// eslint-disable-next-line no-control-regex
const RAW_IN_FIELD = /[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Reads back what {@link escapeText} wrote: the proof that it is injective. */
function unescapeText(text: string): string {
  return text.replace(/\\(\\|x[0-9a-f]{2}|u[0-9a-f]{4})/g, (_, escape: string) =>
    escape === '\\' ? '\\' : String.fromCharCode(parseInt(escape.slice(1), 16)),
  );
}

/** Every character worth trying: the hostile ones often, any code unit or code point too. */
const hostileChar = fc.oneof(
  fc.constantFrom('\\', '\x00', '\x07', '\x1b', '\r', '\n', '\t', '\x7f', '\x85', '\x9b', '\u061c', '\u200e', '\u200f', '\u2028', '\u2029', '\u202a', '\u202e', '\u2066', '\u2069', '\ud800', '\udfff', 'x', '[', 'u', '0', 'é'),
  fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code)),
  fc.integer({ min: 0, max: 0x10ffff }).map((code) => String.fromCodePoint(code)),
);
const hostileText = fc.array(hostileChar, { maxLength: 40 }).map((chars) => chars.join(''));

describe('escapeText: no control, bidi control or lone surrogate survives, and it is injective (property)', () => {
  it('leaves none of them in its result', () => {
    fc.assert(
      fc.property(hostileText, (text) => {
        expect(escapeText(text)).not.toMatch(RAW_IN_FIELD);
      }),
      { numRuns: 2000 },
    );
  });

  it('can be read back, so different texts give different results', () => {
    fc.assert(
      fc.property(hostileText, (text) => {
        expect(unescapeText(escapeText(text))).toBe(text);
      }),
      { numRuns: 2000 },
    );
    fc.assert(
      fc.property(hostileText, hostileText, (a, b) => {
        if (a !== b) expect(escapeText(a)).not.toBe(escapeText(b));
      }),
      { numRuns: 2000 },
    );
  });

  it('escapes each class as documented, and leaves printable text of any script alone', () => {
    expect(escapeText('a\x1b[31mX\x07\rfake')).toBe('a\\x1b[31mX\\x07\\x0dfake');
    expect(escapeText('\x00\x1f\x7f\x80\x9f')).toBe('\\x00\\x1f\\x7f\\x80\\x9f');
    expect(escapeText('\u202aa\u202e\u2066\u2069\u061c\u200e\u200f\u2028\u2029')).toBe(
      '\\u202aa\\u202e\\u2066\\u2069\\u061c\\u200e\\u200f\\u2028\\u2029',
    );
    expect(escapeText('\ud800 \udfff \ud83d\ude00')).toBe('\\ud800 \\udfff \ud83d\ude00');
    expect(escapeText('C:\\logs\\x1b')).toBe('C:\\\\logs\\\\x1b');
    expect(escapeText('198.18.0.1 /päth?q=日本 ~!@#$%^&*()')).toBe('198.18.0.1 /päth?q=日本 ~!@#$%^&*()');
  });
});

describe('toJsonLine: the same JSON value, with nothing a terminal acts on (property)', () => {
  it('parses back to the value, holds no raw control, and is one line', () => {
    fc.assert(
      fc.property(fc.dictionary(hostileText, fc.oneof(hostileText, fc.integer(), fc.array(hostileText))), (value) => {
        const json = toJsonLine(value);
        expect(json).not.toMatch(RAW_IN_FIELD);
        expect(JSON.parse(json)).toEqual(value);
      }),
      { numRuns: 1000 },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// The built command.

/** The host of issue 11, item 6: colours, rings the bell, returns to the start of the line. */
const HOST = 'a\x1b[31mX\x07\rfake';
/** More hosts, one per class: NUL, C1 (CSI), bidi override and isolate, a backslash escape look-alike. */
const HOSTS = [HOST, 'b\x00\x7f', 'c\u009b2J', 'd\u202eevil\u202c', 'e\u2067x\u2069', 'f\\x1b[0m', 'g\u2028h'];

function logLine(host: string, request = 'GET /index.html HTTP/1.1', rest = '200 5 "-" "curl/8"'): string {
  return `${host} - - [17/May/2015:10:05:03 +0000] "${request}" ${rest}`;
}

/** Two requests per host (the second rejected at 1 per 60 s), and malformed lines with hostile paths and user agents. */
const LOG = [
  ...HOSTS.flatMap((host) => [logLine(host), logLine(host)]),
  logLine('10.0.0.1', 'GET /\x1b]0;owned\x07\u202e HTTP/1.1', '2x0 5'),
  logLine('10.0.0.2', 'GET / HTTP/1.1', '200 5 "-" "\x9b31m\x1b[2J\u2066ua"').replace('200', '20'),
  '\x1b[2J\x1b[H\u202eno fields',
].join('\n');

/** Asserts that `text` holds nothing a terminal would act on (line ends aside). */
function expectNoRaw(text: string): void {
  const raw = RAW.exec(text);
  expect(raw === null ? null : { char: raw[0].codePointAt(0)?.toString(16), at: raw.index }).toBeNull();
}

let dir = '';
beforeAll(() => {
  requireBuiltCli();
  dir = mkdtempSync(join(tmpdir(), 'ratewarden-escape-'));
});
afterAll(() => {
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

describe('the replay escapes every string from the input wherever it prints it', { timeout: 60_000 }, () => {
  it('hosts in "top limited clients": escaped, readable, aligned', () => {
    const run = cli(['replay', '-', '--threshold', '1'], LOG);
    expect(run.status, run.stderr).toBe(0);
    expectNoRaw(run.stdout);
    expectNoRaw(run.stderr);
    const width = Math.max(...HOSTS.map((h) => escapeText(h).length));
    for (const host of HOSTS) expect(run.stdout).toContain(`\n  ${escapeText(host).padEnd(width)}  1 / 2\n`);
    expect(run.stdout).toContain('  a\\x1b[31mX\\x07\\x0dfake');
  });

  it('--json: valid JSON whose strings are the originals, with no raw control in it', () => {
    const run = cli(['replay', '-', '--threshold', '1', '--json'], LOG);
    expect(run.status, run.stderr).toBe(0);
    expectNoRaw(run.stdout);
    const lines = run.stdout.split('\n').filter((l) => l !== '');
    expect(lines).toHaveLength(1);
    const report = JSON.parse(lines[0] as string) as { top_limited: { client: string }[] };
    expect(report.top_limited.map((c) => c.client).sort()).toEqual([...HOSTS].sort());
  });

  it('paths, user agents and whole lines in the malformed-line warnings', () => {
    const run = cli(['replay', '-', '--threshold', '1'], LOG);
    expectNoRaw(run.stderr);
    const warnings = run.stderr.split('\n').filter((l) => l.includes('malformed ('));
    expect(warnings).toHaveLength(3);
    expect(warnings[0]).toContain('"GET /\\x1b]0;owned\\x07\\u202e HTTP/1.1" 2x0 5');
    expect(warnings[1]).toContain('10.0.0.2 - - [17/May/2015:10:05:03 +0000] "GET / HTTP/1.1" 20 5 "-" "\\x9b31m\\x1b[2J\\u2066');
    expect(warnings[2]).toContain('(no authuser): \\x1b[2J\\x1b[H\\u202eno fields');
  });

  it('a file name given on the command line: in the report title, in --json, and in the error for a missing file', () => {
    const name = 'log\x1b[31m\x07\r\u202e\u2066\\x.txt';
    const path = join(dir, name);
    writeFileSync(path, `${LOG}\n`);
    const run = cli(['replay', path, '--threshold', '1']);
    expect(run.status, run.stderr).toBe(0);
    expectNoRaw(run.stdout);
    expect(run.stdout.split('\n')[0]).toBe(`ratewarden replay: ${escapeText(path)}`);
    const json = cli(['replay', path, '--json']);
    expectNoRaw(json.stdout);
    expect((JSON.parse(json.stdout) as { file: string }).file).toBe(path);
    const missing = cli(['replay', `${path}.missing`]);
    expect(missing.status).toBe(2);
    expectNoRaw(missing.stderr);
    expect(missing.stderr).toBe(`ratewarden: cannot read \`${escapeText(`${path}.missing`)}\`: no such file or directory\n`);
  });

  // Each command line holds a hostile value where an error message quotes it.
  const VALUE = 'v\x1b[2J\x07\r\u009b\u202e\u2067';
  // The quota's messages show the value as the library does (JSON-quoted), then escaped.
  const QUOTED = escapeText(JSON.stringify(VALUE));
  it.each([
    ['--strategy', ['replay', '--strategy', VALUE], escapeText(VALUE)],
    ['--threshold', ['replay', `--threshold=${VALUE}`], QUOTED],
    ['--window', ['replay', '--window', VALUE], QUOTED],
    ['--top', ['replay', '--top', VALUE], QUOTED],
    ['an unknown command', [VALUE], escapeText(VALUE)],
    ['an unknown option', [`--${VALUE}`], escapeText(VALUE)],
    ['two files', ['replay', VALUE, `${VALUE}2`], escapeText(VALUE)],
  ])('option values and operands in usage errors: %s', (_what, args, shown) => {
    const run = cli(args);
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expectNoRaw(run.stderr);
    expect(run.stderr.split('\n').filter((l) => l !== '')).toHaveLength(1);
    expect(run.stderr).toContain(shown);
  });
});
