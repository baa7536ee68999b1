// One contract suite, run against every strategy: the same invariants, parametrised by factory.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RateLimiter, type RateLimitResult, type RateLimitStrategy } from '../../../src/index.js';
import { FixedWindow } from '../../../src/strategies/fixed-window.js';
import { GCRA } from '../../../src/strategies/gcra.js';
import { SlidingWindowCounter } from '../../../src/strategies/sliding-window-counter.js';
import { SlidingWindowLog } from '../../../src/strategies/sliding-window-log.js';
import { TokenBucket } from '../../../src/strategies/token-bucket.js';
import { expectInRange } from '../../support/expect-in-range.js';

interface Documented {
  /** The most units a key can be allowed in any window of length `window`, in thresholds. */
  readonly maxPerWindow: number;
  /** The largest finite `retryAfter` and `resetAfter`, in windows. */
  readonly maxWait: number;
}

function describeStrategy(name: string, factory: () => RateLimitStrategy<unknown>, documented: Documented) {
  function setup(threshold: number, windowMs: number) {
    const clock = { now: 1_000_000 };
    const limiter = new RateLimiter({ threshold, windowSeconds: windowMs / 1000, strategy: factory(), clock: () => clock.now });
    return { clock, limiter };
  }

  const checkRange = (r: RateLimitResult, threshold: number, windowMs: number) =>
    expectInRange(r, threshold, (documented.maxWait * windowMs) / 1000);


  describe(`strategy contract: ${name}`, () => {
    it('has a name and is synchronous', () => {
      const strategy = factory();
      expect(strategy.name).toBe(name);
      expect(strategy.synchronous).toBe(true);
    });

    it('allows the first request with remaining threshold - 1', () => {
      const { limiter } = setup(5, 10_000);
      const r = limiter.allowRequestSync('a');
      expect(r.allowed).toBe(true);
      expect(r.remaining).toBe(4);
      expect(r.retryAfter).toBe(0);
      expect(r.limit).toBe(5);
    });

    it('allows exactly threshold at one instant, then rejects with a finite wait', () => {
      const { limiter } = setup(5, 10_000);
      const results = Array.from({ length: 7 }, () => limiter.allowRequestSync('a'));
      expect(results.map((r) => r.allowed)).toEqual([true, true, true, true, true, false, false]);
      expect(results.map((r) => r.remaining)).toEqual([4, 3, 2, 1, 0, 0, 0]);
      expect(results[5]!.retryAfter).toBeGreaterThan(0);
      expect(results[5]!.retryAfter).toBeLessThanOrEqual(10 * documented.maxWait);
      expect(results[6]).toEqual(results[5]);
    });

    it('allows a full burst at a fractional clock reading and a fractional window', () => {
      const clock = { now: 3154.5823824363356 };
      const limiter = new RateLimiter({ threshold: 3, windowSeconds: 1.017, strategy: factory(), clock: () => clock.now });
      expect([1, 2, 3, 4].map(() => limiter.allowRequestSync('a').allowed)).toEqual([true, true, true, false]);
      const single = new RateLimiter({ threshold: 1, windowSeconds: 1.017, strategy: factory(), clock: () => 8 });
      expect(single.allowRequestSync('a').allowed).toBe(true);
      // Windows that are no whole number of milliseconds are rounded to one (1/3 s is 333 ms).
      for (const windowSeconds of [1 / 3, 1.0171]) {
        const l = new RateLimiter({ threshold: 7, windowSeconds, strategy: factory(), clock: () => clock.now });
        const burst = Array.from({ length: 8 }, () => l.allowRequestSync('b'));
        expect(burst.map((r) => r.allowed)).toEqual([true, true, true, true, true, true, true, false]);
        expect(burst.map((r) => r.remaining)).toEqual([6, 5, 4, 3, 2, 1, 0, 0]);
        expect(Number.isFinite(burst[7]!.retryAfter)).toBe(true);
      }
    });

    it('lets the same request through once retryAfter has passed, not a millisecond before', () => {
      const { clock, limiter } = setup(3, 1_000);
      for (let i = 0; i < 3; i++) limiter.allowRequestSync('a');
      clock.now += 100;
      const rejected = limiter.allowRequestSync('a', { cost: 2 });
      expect(rejected.allowed).toBe(false);
      const waitMs = Math.ceil(rejected.retryAfter * 1000 - 1e-6);
      clock.now += waitMs - 1;
      expect(limiter.peekSync('a', { cost: 2 }).allowed).toBe(false);
      clock.now += 1;
      expect(limiter.allowRequestSync('a', { cost: 2 }).allowed).toBe(true);
    });

    it('reports a cost above threshold as never possible and records nothing', () => {
      const { limiter } = setup(3, 1_000);
      const r = limiter.allowRequestSync('a', { cost: 4 });
      expect(r.allowed).toBe(false);
      expect(r.retryAfter).toBe(Infinity);
      expect(r.remaining).toBe(3);
      expect(limiter.size).toBe(0);
      expect(limiter.allowRequestSync('a', { cost: 3 }).allowed).toBe(true);
    });

    it('peek decides as the request would, without recording', () => {
      const { limiter } = setup(2, 1_000);
      expect(limiter.peekSync('a').allowed).toBe(true);
      expect(limiter.size).toBe(0);
      limiter.allowRequestSync('a');
      const peeked = limiter.peekSync('a');
      expect(peeked.remaining).toBe(1);
      expect(limiter.allowRequestSync('a').remaining).toBe(0);
      expect(limiter.peekSync('a').allowed).toBe(false);
    });

    it('reset forgets a key; cleanUp drops it after a long idle, and it then decides as new', () => {
      const { clock, limiter } = setup(2, 1_000);
      limiter.allowRequestSync('a');
      limiter.allowRequestSync('a');
      limiter.allowRequestSync('b');
      expect(limiter.reset('b')).toBe(true);
      expect(limiter.cleanUp()).toBe(0);
      clock.now += 10 * documented.maxWait * 1_000;
      expect(limiter.cleanUp()).toBe(1);
      expect(limiter.size).toBe(0);
      const fresh = setup(2, 1_000).limiter;
      expect(limiter.allowRequestSync('a')).toEqual(fresh.allowRequestSync('a'));
    });

    it('keeps results in range when the clock steps backwards', () => {
      const { clock, limiter } = setup(3, 5_000);
      for (const t of [50_000, 10_000, 49_000, 0, 80_000, 79_999, 1, 80_001, 2, 80_001, 80_001, 80_001]) {
        clock.now = t;
        checkRange(limiter.allowRequestSync('a'), 3, 5_000);
        checkRange(limiter.allowRequestSync('a', { cost: 2 }), 3, 5_000);
      }
    });

    it('gives the same decisions through allowRequest and allowRequestSync', async () => {
      const a = setup(4, 1_000);
      const b = setup(4, 1_000);
      for (let i = 0; i < 12; i++) {
        a.clock.now += 130;
        b.clock.now += 130;
        expect(await a.limiter.allowRequest('k', { cost: 1 + (i % 2) })).toEqual(b.limiter.allowRequestSync('k', { cost: 1 + (i % 2) }));
      }
    });

    it('property: results in range; a rejection changes nothing; never more than documented per window', () => {
      const schedule = fc.array(
        fc.record({
          advance: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 40 }).map((n) => n * 25), fc.integer({ min: 0, max: 2_500 })),
          key: fc.constantFrom('a', 'b'),
          cost: fc.oneof(fc.constant(1), fc.integer({ min: 1, max: 12 })),
          sweep: fc.boolean(),
        }),
        { maxLength: 200 },
      );
      const config = fc.record({
        threshold: fc.integer({ min: 1, max: 10 }),
        windowMs: fc.oneof(fc.constantFrom(100, 250, 1_000), fc.integer({ min: 1, max: 2_000 })),
      });
      fc.assert(
        fc.property(config, schedule, ({ threshold, windowMs }, steps) => {
          let now = 0;
          const limiter = new RateLimiter({ threshold, windowSeconds: windowMs / 1000, strategy: factory(), clock: () => now });
          const admitted = new Map<string, number[]>([['a', []], ['b', []]]);
          for (const s of steps) {
            now += s.advance;
            if (s.sweep) limiter.cleanUp();
            const peeked = limiter.peekSync(s.key, { cost: s.cost });
            const r = limiter.allowRequestSync(s.key, { cost: s.cost });
            checkRange(r, threshold, windowMs);
            expect(r.allowed).toBe(peeked.allowed);
            if (r.allowed) {
              for (let i = 0; i < s.cost; i++) admitted.get(s.key)!.push(now);
            } else {
              expect(r).toEqual(peeked);
              expect(limiter.allowRequestSync(s.key, { cost: s.cost })).toEqual(r);
            }
          }
          for (const times of admitted.values()) {
            for (const t of times) {
              const inWindow = times.filter((u) => u > t - windowMs && u <= t).length;
              expect(inWindow).toBeLessThanOrEqual(documented.maxPerWindow * threshold);
            }
          }
        }),
        { numRuns: 150 },
      );
    });
  });
}

describeStrategy('sliding-window-log', () => new SlidingWindowLog(), { maxPerWindow: 1, maxWait: 1 });
describeStrategy('sliding-window-counter', () => new SlidingWindowCounter(), { maxPerWindow: 2, maxWait: 2 });
describeStrategy('fixed-window', () => new FixedWindow(), { maxPerWindow: 2, maxWait: 1 });
describeStrategy('token-bucket', () => new TokenBucket(), { maxPerWindow: 2, maxWait: 1 });
describeStrategy('gcra', () => new GCRA(), { maxPerWindow: 2, maxWait: 1 });
