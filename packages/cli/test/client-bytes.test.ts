// The replay's key is the client address, the first field of a log line, as bytes: distinct bytes
// are distinct clients, valid UTF-8 or not (found by attack: hosts `\xff`, `\xfe`, `\xc3` and
// `\xed\xa0\x80` all decoded to U+FFFD and shared one limit). The decoding (src/formats/format.ts),
// as properties; a programmatic replay; and the built command (`dist/cli.js`, built by `npm test`
// before vitest runs), which prints each such client readably and distinctly.
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { ClfFormat } from '../src/formats/clf.js';
import { decodeBytes, decodeKeyBytes } from '../src/formats/format.js';
import { escapeText } from '../src/escape.js';
import { cli, requireBuiltCli } from './support/cli.js';
import { replayText } from './support/replay-fixture.js';

const REST = Buffer.from(' - - [17/May/2015:10:05:03 +0000] "GET / HTTP/1.1" 200 1 "-" "-"\n');
/** A log line whose host field is `host`. */
const line = (host: Buffer): Buffer => Buffer.concat([host, REST]);
const FIRST = line(Buffer.from('0.0.0.0'));

/** Encodes back what {@link decodeBytes} decoded: a lone low surrogate U+DC80–U+DCFF as its byte. */
function encodeBack(text: string): Buffer {
  const parts: Buffer[] = [];
  for (const char of text) {
    const code = char.charCodeAt(0);
    parts.push(char.length === 1 && code >= 0xdc80 && code <= 0xdcff ? Buffer.of(code & 0xff) : Buffer.from(char, 'utf8'));
  }
  return Buffer.concat(parts);
}

/** A host field: one or more bytes, no space or newline; bytes that break UTF-8 often. */
const hostByte = fc.oneof(
  fc.constantFrom(0x80, 0xbf, 0xc0, 0xc1, 0xc2, 0xc3, 0xa9, 0xe0, 0xed, 0xa0, 0xef, 0xf0, 0xf4, 0x8f, 0x90, 0xf5, 0xfe, 0xff, 0x41, 0x2e, 0x5c, 0x0d),
  fc.integer({ min: 0, max: 255 }),
).filter((b) => b !== 0x20 && b !== 0x0a);
const host = fc.array(hostByte, { minLength: 1, maxLength: 8 }).map((bytes) => Buffer.from(bytes));

describe('distinct byte strings in the host field are distinct clients', () => {
  it('decodeBytes keeps every byte: it encodes back to its input, and is UTF-8 decoding on valid UTF-8 (property)', () => {
    fc.assert(
      fc.property(fc.oneof(host, fc.uint8Array({ maxLength: 40 }).map((b) => Buffer.from(b)), fc.string({ unit: 'binary' }).map((s) => Buffer.from(s, 'utf8'))), (bytes) => {
        const text = decodeBytes(bytes, 0, bytes.length);
        expect(encodeBack(text).equals(bytes)).toBe(true);
        if (Buffer.from(bytes.toString('utf8'), 'utf8').equals(bytes)) expect(text).toBe(bytes.toString('utf8'));
      }),
      { numRuns: 2000 },
    );
  });

  it('decodeKeyBytes is injective over host fields (property)', () => {
    const parser = new ClfFormat();
    const key = (h: Buffer): string => {
      const bytes = line(h);
      expect(parser.parse(bytes, 0, bytes.length - 1)).toBe(true);
      return decodeKeyBytes(bytes, parser.keyStart, parser.keyEnd);
    };
    fc.assert(
      fc.property(host, host, (a, b) => {
        expect(key(a) === key(b)).toBe(a.equals(b));
      }),
      { numRuns: 3000 },
    );
    // The attack's four hosts: four keys.
    expect(new Set(['ff', 'fe', 'c3', 'eda080'].map((h) => key(Buffer.from(h, 'hex')))).size).toBe(4);
  });

  it('a replay counts one client per distinct host bytes, and limits each on its own (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(host, { minLength: 1, maxLength: 12 }), async (hosts) => {
        const summary = await replayText(Buffer.concat([FIRST, ...hosts.map(line)]), { threshold: 1, windowSeconds: 60 });
        const distinct = new Set(hosts.map((h) => h.toString('hex')));
        distinct.delete(Buffer.from('0.0.0.0').toString('hex'));
        expect(summary.malformed).toBe(0);
        expect(summary.clients).toBe(distinct.size + 1);
        // One request per client is allowed at this one instant; every repeat is refused.
        expect(summary.allowed).toBe(distinct.size + 1);
      }),
      { numRuns: 300 },
    );
  });
});

describe('the replay command keeps clients whose bytes are not valid UTF-8 apart, and prints them distinctly', { timeout: 60_000 }, () => {
  beforeAll(() => {
    requireBuiltCli();
  });
  const hosts = ['ff', 'fe', 'c3', 'eda080'].map((h) => Buffer.from(h, 'hex'));

  it('the attack input: four hosts, four clients, none limited', () => {
    const run = cli(['replay', '-', '--threshold', '1', '--window', '60', '--json'], Buffer.concat(hosts.map(line)));
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ requests: 4, clients: 4, allowed: 4, rejected: 0, clients_limited: 0 });
  });

  it('each such client is shown with its bytes escaped (\\udcHH), distinct from every other', () => {
    // Each host twice: each is limited once, and listed.
    const mixed = [...hosts, Buffer.from('c3a9', 'hex'), Buffer.from('c3a9c3', 'hex'), Buffer.from('a\\udcff')];
    const input = Buffer.concat(mixed.flatMap((h) => [line(h), line(h)]));
    const json = cli(['replay', '-', '--threshold', '1', '--window', '60', '--json', '--top', '10'], input);
    expect(json.status, json.stderr).toBe(0);
    const summary = JSON.parse(json.stdout) as { clients: number; top_limited: { client: string }[] };
    expect(summary.clients).toBe(mixed.length);
    const names = summary.top_limited.map((c) => c.client).sort();
    expect(names).toEqual(['\udcff', '\udcfe', '\udcc3', '\udced\udca0\udc80', 'é', 'é\udcc3', 'a\\udcff'].sort());
    // The JSON text escapes the lone surrogates (no raw one reaches the terminal).
    expect(json.stdout).toContain('"client":"\\udcff"');
    const text = cli(['replay', '-', '--threshold', '1', '--window', '60', '--top', '10'], input);
    expect(text.status, text.stderr).toBe(0);
    const shown = names.map((n) => escapeText(n));
    expect(new Set(shown).size).toBe(names.length);
    for (const s of shown) expect(text.stdout).toMatch(new RegExp(`\\n  ${s.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&')} +1 / 2\\n`));
    expect(text.stdout).toContain('\n  \\udced\\udca0\\udc80 ');
    expect(text.stdout).toContain('\n  a\\\\udcff ');
  });
});
