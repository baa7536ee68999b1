// Reading the input (src/input.ts): chunk boundaries, a byte-order mark, lines too long to
// keep, gzip, and unreadable input. Programmatic replays with a constant timer.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReplayInputError } from '../src/input.js';
import { replay } from '../src/replay.js';
import { MAX_LINE_BYTES } from '../src/request-collector.js';
import { FIXTURE, replayText } from './support/replay-fixture.js';

let dir = '';
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'ratewarden-replay-'));
});
afterAll(() => {
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

describe('replay (programmatic)', () => {
  it('gives the same result whatever the chunk boundaries (the carried partial line)', async () => {
    const whole = await replayText(FIXTURE, { threshold: 2, windowSeconds: 10 });
    for (const size of [1, 2, 3, 7, 64, 100]) {
      expect(await replayText(FIXTURE, { threshold: 2, windowSeconds: 10 }, size)).toEqual(whole);
    }
  });

  it('skips a UTF-8 byte-order mark at the start', async () => {
    const summary = await replayText(
      '\uFEFF1.2.3.4 - - [17/May/2015:10:05:03 +0000] "GET / HTTP/1.1" 200 5\n',
      { threshold: 1 },
    );
    expect(summary).toMatchObject({ requests: 1, clients: 1, malformed: 0 });
    const line = '1.2.3.4 - - [17/May/2015:10:05:03 +0000] "GET / HTTP/1.1" 200 5\n';
    const again = await replayText(`\uFEFF${line}${line}`, { threshold: 1 });
    expect(again.topLimited).toEqual([{ client: '1.2.3.4', rejected: 1, requests: 2 }]);
  });

  it('reports a line too long as malformed and reads on, whatever the chunking', async () => {
    const line = '1.2.3.4 - - [17/May/2015:10:05:03 +0000] "GET / HTTP/1.1" 200 5\n';
    const long = `9.9.9.9 - - [17/May/2015:10:05:03 +0000] "GET /${'a'.repeat(MAX_LINE_BYTES)} HTTP/1.1" 200 5\n`;
    const text = `${line}${long}${line}`;
    for (const size of [Infinity, 65_536, 1_000_003]) {
      const summary = await replayText(text, {}, size);
      expect(summary).toMatchObject({ lines: 3, requests: 2, clients: 1, malformed: 1 });
      expect(summary.malformedExamples).toEqual([
        { line: 2, reason: 'line too long', text: long.slice(0, 80) },
      ]);
    }
  });

  it('gunzips a stream when asked, and throws ReplayInputError for bad input', async () => {
    const summary = await replay({
      input: Readable.from([gzipSync(FIXTURE)]),
      gzip: true,
      threshold: 2,
      windowSeconds: 10,
      timer: () => 0,
    });
    expect(summary.rejected).toBe(3);
    await expect(replay({ input: join(dir, 'missing.log') })).rejects.toThrow(ReplayInputError);
    await expect(
      replay({ input: Readable.from([Buffer.from('not gzip')]), gzip: true }),
    ).rejects.toThrow(/not valid gzip data/);
  });
});
