// The decisions of a replay (src/simulate.ts), for each strategy, against independent
// reference models (test/support/reference-models.ts): the references themselves, then random
// logs replayed programmatically with a constant timer.
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { sortByTime } from '../src/order.js';
import { simulate } from '../src/simulate.js';
import { STRATEGY_NAMES, createStrategy } from '../src/strategies.js';
import { createQuota } from 'ratewarden';
import { RateLimitGroup } from 'ratewarden';
import { RateLimiter } from 'ratewarden';
import { refModel, refReplay, refRequests, type RefRequest } from '../../../test/support/reference-models.js';
import { FIXTURE, SAMPLE, replayText } from './support/replay-fixture.js';

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

describe('simulate: the dense engine decides as RateLimiter and RateLimitGroup do', () => {
  // The engine drives the strategies directly (an array of states by client number). The
  // reference is the library's own RateLimiter per policy and RateLimitGroup of them, keyed by
  // client name, on a clock set to each request's time.
  const request = fc.record({ client: fc.integer({ min: 0, max: 3 }), timeMs: fc.integer({ min: 0, max: 40_000 }) });
  const policy = fc.record({
    threshold: fc.integer({ min: 1, max: 5 }),
    windowMs: fc.constantFrom(1, 999, 1000, 2500, 10_000),
    strategy: fc.constantFrom(...STRATEGY_NAMES),
  });

  it('per policy and as a group, request by request (property)', () => {
    fc.assert(
      fc.property(fc.array(request, { maxLength: 80 }), fc.array(policy, { minLength: 1, maxLength: 3 }), (entries, specs) => {
        const times = Float64Array.from(entries, (e) => e.timeMs);
        const clientOf = Uint32Array.from(entries, (e) => e.client);
        const clientNames = ['a', 'b', 'c', 'd'];
        const order = sortByTime(times, entries.length);
        const policies = specs.map((s) => {
          const strategy = createStrategy(s.strategy);
          return { strategy, quota: createQuota({ threshold: s.threshold, windowSeconds: s.windowMs / 1000 }, strategy) };
        });
        const outcome = simulate({ times, clientOf, count: entries.length, clientNames }, order, policies, { group: true });

        let now = 0;
        const limiter = (s: (typeof specs)[number]) =>
          new RateLimiter({ threshold: s.threshold, windowSeconds: s.windowMs / 1000, strategy: createStrategy(s.strategy), clock: () => now });
        const limiters = specs.map(limiter);
        const group = new RateLimitGroup(specs.map(limiter));
        const expected = specs.map(() => new Uint32Array(4));
        const expectedGroup = new Uint32Array(4);
        for (const i of order) {
          now = times[i] as number;
          const name = clientNames[clientOf[i] as number] as string;
          limiters.forEach((l, p) => {
            if (!l.allowRequestSync(name).allowed) expected[p]![clientOf[i] as number]!++;
          });
          if (!group.allowRequestSync(name).allowed) expectedGroup[clientOf[i] as number]!++;
        }
        outcome.policies.forEach((counts, p) => {
          expect(Array.from(counts.rejectedOf)).toEqual(Array.from(expected[p] as Uint32Array));
          expect(counts.rejected).toBe((expected[p] as Uint32Array).reduce((a, b) => a + b, 0));
          expect(counts.clientsLimited).toBe((expected[p] as Uint32Array).filter((r) => r > 0).length);
        });
        expect(Array.from(outcome.group?.rejectedOf ?? [])).toEqual(Array.from(expectedGroup));
      }),
      { numRuns: 1500 },
    );
  });

  it('counts refusals per minute and per bucket as they happen', () => {
    // One client, 1 per 10 s: at 0 s allowed; 1, 2, 3 s refused (minute 0); 61 s allowed, 62 s
    // and 63 s refused (minute 1).
    const seconds = [0, 1, 2, 3, 61, 62, 63];
    const times = Float64Array.from(seconds, (s) => s * 1000);
    const strategy = createStrategy('sliding-window-log');
    const outcome = simulate(
      { times, clientOf: new Uint32Array(seconds.length), count: seconds.length, clientNames: ['a'] },
      sortByTime(times, seconds.length),
      [{ strategy, quota: createQuota({ threshold: 1, windowSeconds: 10 }, strategy) }],
      { timeline: { startMs: 0, bucketMs: 30_000, buckets: 3 } },
    );
    const counts = outcome.policies[0];
    expect(counts).toMatchObject({ rejected: 5, clientsLimited: 1, peakRefusedPerMinute: 3, peakMinuteMs: 0 });
    expect(Array.from(counts?.allowedPerBucket ?? [])).toEqual([1, 0, 1]);
    expect(Array.from(counts?.refusedPerBucket ?? [])).toEqual([3, 0, 2]);
  });
});
