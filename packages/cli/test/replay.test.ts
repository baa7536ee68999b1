// The replay as a whole (src/replay.ts): the crafted fixture computed by hand, the built-in
// sample against a naive reference, and the most-limited clients. Programmatic replays with a
// constant timer; nothing here reads the wall clock or sleeps.
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { parseLogLine } from '../src/formats/clf.js';
import { replay } from '../src/replay.js';
import { FIXTURE, FIXTURE_EXPECTED, SAMPLE, replayText } from './support/replay-fixture.js';

describe('replay (programmatic)', () => {
  it('decides the crafted fixture as computed by hand', async () => {
    const summary = await replayText(FIXTURE, { threshold: 2, windowSeconds: 10 });
    expect(summary).toMatchObject({
      threshold: 2,
      windowSeconds: 10,
      strategy: 'sliding-window-log',
      lines: 9,
      requests: 8,
      allowed: 5,
      rejected: 3,
      clients: 2,
      clientsLimited: 2,
      malformed: 1,
      topLimited: FIXTURE_EXPECTED.top_limited,
      malformedExamples: [{ line: 5, reason: 'no [timestamp]', text: 'this is not a log line' }],
      seconds: 0,
      linesPerSecond: 0,
    });
  });

  it('agrees with parseLogLine and with a naive reference replay on the built-in sample', async () => {
    const text = gunzipSync(readFileSync(SAMPLE)).toString('utf8');
    const lines = text.split('\n');
    if (lines.at(-1) === '') lines.pop();
    const parsed = lines.map((line) => parseLogLine(line));
    const valid = parsed.filter((p) => p !== null);
    // Reference: a stable sort by time, then per client the list of allowed times.
    const order = valid.map((_, i) => i).sort((a, b) => valid[a]!.timeMs - valid[b]!.timeMs || a - b);
    const logs = new Map<string, number[]>();
    const rejectedBy = new Map<string, number>();
    for (const i of order) {
      const { client, timeMs } = valid[i]!;
      const live = (logs.get(client) ?? []).filter((t) => t > timeMs - 60_000);
      if (live.length < 60) live.push(timeMs);
      else rejectedBy.set(client, (rejectedBy.get(client) ?? 0) + 1);
      logs.set(client, live);
    }
    const rejected = [...rejectedBy.values()].reduce((a, b) => a + b, 0);

    const summary = await replay({ input: SAMPLE, timer: () => 0 });
    expect(summary.requests).toBe(valid.length);
    expect(summary.malformed).toBe(lines.length - valid.length);
    expect(summary.clients).toBe(new Set(valid.map((p) => p.client)).size);
    expect(summary.rejected).toBe(rejected);
    expect(summary.clientsLimited).toBe(rejectedBy.size);
    expect({ requests: summary.requests, rejected, clients: summary.clients }).toEqual({
      requests: 10_000,
      rejected: 87,
      clients: 1753,
    });
  });

  it('lists the most rejected clients first, ties by client, at most `top`', async () => {
    const at = (client: string, second: number) =>
      `${client} - - [17/May/2015:10:05:${String(second).padStart(2, '0')} +0000] "GET / HTTP/1.1" 200 5\n`;
    // threshold 1: every request after a client's first in the same minute is rejected.
    const text = [at('b', 1), at('b', 2), at('a', 3), at('a', 4), at('c', 5), at('c', 6), at('c', 7), at('d', 8)].join('');
    const summary = await replayText(text, { threshold: 1, top: 2 });
    expect(summary.topLimited).toEqual([
      { client: 'c', rejected: 2, requests: 3 },
      { client: 'a', rejected: 1, requests: 2 },
    ]);
    expect(summary.clientsLimited).toBe(3);
    expect((await replayText(text, { threshold: 1, top: 0 })).topLimited).toEqual([]);
  });
});
