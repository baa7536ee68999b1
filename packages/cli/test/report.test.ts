// The report of a replay (src/report.ts): the human-readable text.
import { describe, expect, it } from 'vitest';
import { formatSummary } from '../src/report.js';
import { FIXTURE, replayText } from './support/replay-fixture.js';

describe('replay (programmatic)', () => {
  it('formats the report with aligned columns', async () => {
    const summary = await replayText(FIXTURE, { threshold: 2, windowSeconds: 10 });
    expect(formatSummary(summary, { file: 'crafted.log', sample: false })).toBe(
      [
        'ratewarden replay: crafted.log',
        'log: 8 requests from 2 clients (clf; key: client address; time: [timestamp]), 2024-01-01 00:00:01 UTC to 2024-01-01 00:00:12 UTC (11 s), 1 malformed line',
        'limit: 2 requests per 10 s per client (sliding-window-log)',
        'requests              8',
        'allowed               5  (62.50%)',
        'rejected              3  (37.50%)',
        'clients               2',
        'clients limited       2',
        'malformed lines       1',
        'top limited clients (rejected / requests):',
        '  10.0.0.1  2 / 5',
        '  10.0.0.2  1 / 3',
        'processed 9 lines in 0.0 ms (0 lines/s)',
        '',
      ].join('\n'),
    );
  });
});
