// The decisions of a replay (src/cli/simulate.ts), for each strategy, against independent
// reference models (test/support/reference-models.ts): the references themselves, then random
// logs replayed programmatically with a constant timer.
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { STRATEGY_NAMES } from '../../../src/cli/strategies.js';
import { refModel, refReplay, refRequests, type RefRequest } from '../../support/reference-models.js';
import { FIXTURE, SAMPLE, replayText } from '../../support/replay-fixture.js';

describe('ratewarden replay --strategy', { timeout: 60_000 }, () => {
  let sample: RefRequest[] = [];
  beforeAll(() => {
    sample = refRequests(gunzipSync(readFileSync(SAMPLE)).toString('utf8'));
  });

  it('the references parse the sample and reproduce the crafted fixture computed by hand', () => {
    expect(sample).toHaveLength(10_000);
    expect(new Set(sample.map((r) => r.client)).size).toBe(1753);
    // The fixture's hand computation (2 per 10 s, sliding-window log): 3 rejected, both limited.
    const fixture = refRequests(FIXTURE);
    expect(fixture).toHaveLength(8);
    expect(refReplay(fixture, refModel('sliding-window-log', 2, 10_000))).toEqual({ rejected: 3, clientsLimited: 2 });
    // By hand too, for the fixture's A@1 A@3 A@5 A@11 A@12 and B@2 ×3, 2 per 10 s:
    // fixed window: A [1,11) allows 1,3 rejects 5; [11,21) allows 11,12; B rejects one: 2.
    expect(refReplay(fixture, refModel('fixed-window', 2, 10_000)).rejected).toBe(2);
    // token bucket (2 tokens, one per 5 s): A 1 ok(1 left) 3 ok(0.4) 5 no(0.8) 11 ok(2→1)
    // 12 ok(1.2→0.2); B 2 ok ok no: 2 rejected. GCRA: the same.
    expect(refReplay(fixture, refModel('token-bucket', 2, 10_000)).rejected).toBe(2);
    expect(refReplay(fixture, refModel('gcra', 2, 10_000)).rejected).toBe(2);
    // sliding-window counter, grid [1,11) [11,21): A 1 ok, 3 ok, 5 no; 11: 2 × 10/10 + 1 > 2 no;
    // 12: 2 × 9/10 + 1 = 2.8 > 2 no; B: 2 ok ok no: 4 rejected.
    expect(refReplay(fixture, refModel('sliding-window-counter', 2, 10_000)).rejected).toBe(4);
  });

  it('agrees with the references on random logs (programmatic replay)', async () => {
    const clients = ['a', 'b', 'c'];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...STRATEGY_NAMES),
        fc.integer({ min: 1, max: 4 }),
        fc.constantFrom(1, 2.5, 7, 10, 30),
        fc.array(fc.tuple(fc.constantFrom(...clients), fc.integer({ min: 0, max: 120 })), { maxLength: 60 }),
        async (name, threshold, windowSeconds, entries) => {
          const two = (n: number) => String(n).padStart(2, '0');
          const text = entries
            .map(([client, s]) => `${client} - - [17/May/2015:10:${two(Math.floor(s / 60))}:${two(s % 60)} +0000] "GET / HTTP/1.1" 200 1\n`)
            .join('');
          const summary = await replayText(text, { strategy: name, threshold, windowSeconds });
          const reference = refReplay(refRequests(text), refModel(name, threshold, windowSeconds * 1000));
          expect(summary.strategy).toBe(name);
          expect({ rejected: summary.rejected, clientsLimited: summary.clientsLimited }).toEqual(reference);
        },
      ),
      { numRuns: 1500 },
    );
  });

});
