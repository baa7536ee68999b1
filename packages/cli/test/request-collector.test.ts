// From lines to requests (src/request-collector.ts): empty lines, and the examples of
// malformed lines. Programmatic replays with a constant timer.
import { describe, expect, it } from 'vitest';
import { replayText } from './support/replay-fixture.js';

describe('replay (programmatic)', () => {
  it('counts empty lines in the middle as malformed, not those at the end', async () => {
    const line = '1.2.3.4 - - [17/May/2015:10:05:03 +0000] "GET / HTTP/1.1" 200 5';
    const summary = await replayText(`\n${line}\n\r\n\n${line}\n\n\r\n\n`);
    expect(summary).toMatchObject({ lines: 5, requests: 2, malformed: 3 });
    expect(summary.malformedExamples.map((m) => [m.line, m.reason])).toEqual([
      [1, 'empty line'],
      [3, 'empty line'],
      [4, 'empty line'],
    ]);
    // A last line without a newline is read; only empty lines: nothing at all.
    expect((await replayText(`${line}\n${line}`)).requests).toBe(2);
    expect(await replayText('\n\n\r\n')).toMatchObject({ lines: 0, requests: 0, malformed: 0 });
    expect(await replayText('')).toMatchObject({ lines: 0, requests: 0, clients: 0 });
  });

  it('keeps at most maxMalformedExamples examples, as read (the command escapes them)', async () => {
    const summary = await replayText('bad\x1b[31m line\n'.repeat(8), { maxMalformedExamples: 2 });
    expect(summary.malformed).toBe(8);
    expect(summary.malformedExamples).toEqual([
      { line: 1, reason: 'no authuser', text: 'bad\x1b[31m line' },
      { line: 2, reason: 'no authuser', text: 'bad\x1b[31m line' },
    ]);
  });
});

describe('request times beyond the limiter clock range', () => {
  it('are malformed lines (time out of range), not a crash: 2^47 ms is about the year 6429', async () => {
    const at = (year: number) => `1.2.3.4 - - [01/Jan/${year}:00:00:00 +0000] "GET / HTTP/1.1" 200 5`;
    const summary = await replayText(`${at(2024)}\n${at(6429)}\n${at(6430)}\n${at(9999)}\n`);
    expect(summary).toMatchObject({ lines: 4, requests: 2, malformed: 2 });
    expect(summary.malformedExamples.map((m) => [m.line, m.reason])).toEqual([
      [3, 'time out of range'],
      [4, 'time out of range'],
    ]);
  });
});
