// The progress indicator (src/progress.ts), with an injected clock; and what the reading of
// the input (src/input.ts) reports to it.
import { Readable } from 'node:stream';
import { gunzipSync } from 'node:zlib';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createProgress, type ProgressReporter } from '../src/progress.js';
import { replay } from '../src/replay.js';
import { SAMPLE } from './support/replay-fixture.js';

/** A reporter that records every `reading` call. */
function recorder(): { progress: ProgressReporter; reading: [number, number | undefined, number][] } {
  const reading: [number, number | undefined, number][] = [];
  return {
    reading,
    progress: { reading: (bytes, total, lines) => reading.push([bytes, total, lines]), replaying() {}, done() {} },
  };
}

describe('progress', () => {
  it('rewrites one line at most once per interval and erases it at the end', () => {
    const written: string[] = [];
    let now = 0;
    const progress = createProgress({ write: (text: string) => written.push(text) }, 100, () => now);
    progress.reading(512, 2048, 10);
    now = 50;
    progress.reading(1024, 2048, 20); // throttled
    now = 150;
    progress.reading(2048, undefined, 40);
    now = 300;
    progress.replaying(5, 10);
    progress.done();
    progress.done(); // nothing more to erase
    expect(written).toEqual([
      '\rratewarden: reading 25% (512 B of 2.0 KB), 10 lines\x1b[K',
      '\rratewarden: reading 2.0 KB, 40 lines\x1b[K',
      '\rratewarden: replaying 50% (5 of 10 requests)\x1b[K',
      '\r\x1b[K',
    ]);
  });
});

describe('reading progress', () => {
  it('a gzip file: the compressed bytes the gunzip has taken, never "100%" before the lines are read', async () => {
    const { progress, reading } = recorder();
    await replay({ input: SAMPLE, progress, timer: () => 0 });
    const size = readFileSync(SAMPLE).length;
    const lines = gunzipSync(readFileSync(SAMPLE)).toString('utf8').split('\n').filter((l) => l !== '').length;
    expect(reading.length).toBeGreaterThan(1);
    // The whole 205 KB file is one read; the gunzip gives 64 KB of text at a time.
    expect(reading[0]![0]).toBeLessThan(size / 10);
    expect(reading[0]![2]).toBeGreaterThan(0);
    for (const [i, [bytes, total, count]] of reading.entries()) {
      expect(total).toBe(size);
      expect(count).toBeGreaterThan(0);
      if (i > 0) {
        expect(bytes).toBeGreaterThanOrEqual(reading[i - 1]![0]);
        expect(count).toBeGreaterThan(reading[i - 1]![2]);
      }
    }
    expect(reading.at(-1)).toEqual([size, size, lines]);
  });

  it('a stream: each chunk reported with its own lines counted; an empty one reports nothing', async () => {
    const line = '1.2.3.4 - - [17/May/2015:10:05:03 +0000] "GET / HTTP/1.1" 200 5\n';
    const { progress, reading } = recorder();
    await replay({ input: Readable.from([Buffer.from(line), Buffer.from(line + line)]), progress, timer: () => 0 });
    expect(reading).toEqual([
      [line.length, undefined, 1],
      [3 * line.length, undefined, 3],
    ]);
    const empty = recorder();
    await replay({ input: Readable.from([]), progress: empty.progress, timer: () => 0 });
    expect(empty.reading).toEqual([]);
  });

  it('says "1 line", "2 lines"', () => {
    const written: string[] = [];
    const progress = createProgress({ write: (text: string) => written.push(text) }, 0, () => 0);
    progress.reading(10, undefined, 1);
    progress.reading(20, undefined, 2);
    expect(written).toEqual(['\rratewarden: reading 10 B, 1 line\x1b[K', '\rratewarden: reading 20 B, 2 lines\x1b[K']);
  });
});
