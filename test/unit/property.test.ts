// Property-based tests: the limiter against the reference model of the sliding-window log
// (test/support/log-model.ts).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RateLimiter } from '../../src/index.js';
import { expectInRange } from '../support/expect-in-range.js';
import { LogModel } from '../support/log-model.js';

const keys = ['a', 'b', 'c'];
const step = fc.record({
  // Milliseconds to advance before the request (0 = same instant). Multiples of 25 ms make
  // requests land exactly on window boundaries (t = oldest + window) often.
  advance: fc.oneof(
    fc.constant(0),
    fc.integer({ min: 0, max: 40 }).map((n) => n * 25),
    fc.integer({ min: 0, max: 3_000 }),
  ),
  key: fc.constantFrom(...keys),
  cost: fc.oneof(fc.constant(1), fc.integer({ min: 1, max: 12 })),
  sweep: fc.boolean(),
});
const config = fc.record({
  threshold: fc.integer({ min: 1, max: 10 }),
  windowMs: fc.oneof(fc.constantFrom(100, 250, 1_000), fc.integer({ min: 1, max: 2_000 })),
});


describe('sliding-window log vs the reference model (fast-check)', () => {
  it('gives identical results on random monotonic schedules, with cleanUp sweeps interleaved', () => {
    fc.assert(
      fc.property(config, fc.array(step, { maxLength: 200 }), ({ threshold, windowMs }, steps) => {
        let now = 0;
        const limiter = new RateLimiter({ threshold, windowSeconds: windowMs / 1000, clock: () => now });
        const model = new LogModel(threshold, windowMs);
        for (const s of steps) {
          now += s.advance;
          if (s.sweep) limiter.cleanUp();
          const actual = limiter.allowRequestSync(s.key, { cost: s.cost });
          expect(actual).toEqual(model.decide(s.key, now, s.cost));
          expectInRange(actual, threshold, windowMs / 1000);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('never admits more than threshold units in any window of length window', () => {
    fc.assert(
      fc.property(config, fc.array(step, { maxLength: 300 }), ({ threshold, windowMs }, steps) => {
        let now = 0;
        const limiter = new RateLimiter({ threshold, windowSeconds: windowMs / 1000, clock: () => now });
        const admitted = new Map<string, number[]>(keys.map((k) => [k, []]));
        for (const s of steps) {
          now += s.advance;
          if (s.sweep) limiter.cleanUp();
          if (limiter.allowRequestSync(s.key, { cost: s.cost }).allowed) {
            for (let i = 0; i < s.cost; i++) admitted.get(s.key)!.push(now);
          }
        }
        for (const times of admitted.values()) {
          // For each admitted unit at time t, count the units in (t - window, t].
          for (const t of times) {
            const inWindow = times.filter((u) => u > t - windowMs && u <= t).length;
            expect(inWindow).toBeLessThanOrEqual(threshold);
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it('a rejected request changes nothing: the same request right after gets the same result', () => {
    fc.assert(
      fc.property(config, fc.array(step, { maxLength: 150 }), ({ threshold, windowMs }, steps) => {
        let now = 0;
        const limiter = new RateLimiter({ threshold, windowSeconds: windowMs / 1000, clock: () => now });
        for (const s of steps) {
          now += s.advance;
          const peeked = limiter.peekSync(s.key, { cost: s.cost });
          const first = limiter.allowRequestSync(s.key, { cost: s.cost });
          // peek decides as the request does (its remaining is counted before recording).
          expect(first.allowed).toBe(peeked.allowed);
          if (!first.allowed) expect(first).toEqual(peeked);
          if (!first.allowed) {
            expect(limiter.allowRequestSync(s.key, { cost: s.cost })).toEqual(first);
            expect(limiter.peekSync(s.key, { cost: s.cost })).toEqual(first);
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it('matches the model when the clock steps backwards, and keeps every result in range', () => {
    const jumpy = fc.record({
      // A clock reading anywhere in 0..20 s, in any order (a log replayed in file order).
      at: fc.oneof(fc.integer({ min: 0, max: 80 }).map((n) => n * 250), fc.integer({ min: 0, max: 20_000 })),
      key: fc.constantFrom(...keys),
      cost: fc.integer({ min: 1, max: 4 }),
      sweep: fc.boolean(),
    });
    fc.assert(
      fc.property(config, fc.array(jumpy, { maxLength: 200 }), ({ threshold, windowMs }, steps) => {
        let now = 0;
        const limiter = new RateLimiter({ threshold, windowSeconds: windowMs / 1000, clock: () => now });
        const model = new LogModel(threshold, windowMs);
        for (const s of steps) {
          now = s.at;
          // A sweep sees the same monotonic time as decisions: it can never forget a unit that
          // a later (earlier-reading) decision would still count.
          if (s.sweep) limiter.cleanUp();
          const actual = limiter.allowRequestSync(s.key, { cost: s.cost });
          expect(actual).toEqual(model.decide(s.key, now, s.cost));
          expectInRange(actual, threshold, windowMs / 1000);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('regression (found by fast-check in an attack run): cleanUp, then a clock 1 ms back', () => {
    let now = 0;
    const limiter = new RateLimiter({ threshold: 4, windowSeconds: 0.25, clock: () => now });
    expect(limiter.allowRequestSync('b').allowed).toBe(true);
    now = 250;
    limiter.cleanUp();
    now = 249; // taken as 250: the unit at 0 has expired for decisions as it had for the sweep
    expect(limiter.allowRequestSync('b', { cost: 4 }).allowed).toBe(true);
    expect(limiter.allowRequestSync('b').allowed).toBe(false);
  });

  it('the promise API gives the same decisions as the sync API', async () => {
    await fc.assert(
      fc.asyncProperty(config, fc.array(step, { maxLength: 100 }), async ({ threshold, windowMs }, steps) => {
        let now = 0;
        const a = new RateLimiter({ threshold, windowSeconds: windowMs / 1000, clock: () => now });
        const b = new RateLimiter({ threshold, windowSeconds: windowMs / 1000, clock: () => now });
        for (const s of steps) {
          now += s.advance;
          expect(await a.allowRequest(s.key, { cost: s.cost })).toEqual(b.allowRequestSync(s.key, { cost: s.cost }));
        }
      }),
      { numRuns: 100 },
    );
  });
});
