// Issue 11, items 1, 2 and 8: every strategy decides exactly for every clock reading (epoch
// times, performance.now() after years, fractional readings), every threshold and cost that
// validation accepts; a refusal always carries retryAfter > 0, and waiting it is enough;
// results of every accepted configuration are in their documented ranges.
//
// The property suites compare each strategy with an exact BigInt model on the grid of 2^-10 ms
// (test/support/exact-models.ts).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RateLimiter, createQuota, type RateLimitResult, type RateLimitStrategy } from '../../../src/index.js';
import type { StrategyName } from '../../support/reference-models.js';
import { FixedWindow } from '../../../src/strategies/fixed-window.js';
import { GCRA } from '../../../src/strategies/gcra.js';
import { SlidingWindowCounter } from '../../../src/strategies/sliding-window-counter.js';
import { SlidingWindowLog } from '../../../src/strategies/sliding-window-log.js';
import { TokenBucket } from '../../../src/strategies/token-bucket.js';
import { MAX_THRESHOLD_TIMES_WINDOW_MS } from '../../../src/quota.js';
import { exactKey, tickOf } from '../../support/exact-models.js';

const STRATEGIES: Record<StrategyName, () => RateLimitStrategy<unknown>> = {
  'sliding-window-log': () => new SlidingWindowLog(),
  'fixed-window': () => new FixedWindow(),
  'sliding-window-counter': () => new SlidingWindowCounter(),
  'token-bucket': () => new TokenBucket(),
  gcra: () => new GCRA(),
};
const NAMES = Object.keys(STRATEGIES) as StrategyName[];
/** The documented maximum of retryAfter and resetAfter, in windows. */
const MAX_WINDOWS: Record<StrategyName, number> = {
  'sliding-window-log': 1,
  'fixed-window': 1,
  'sliding-window-counter': 2,
  'token-bucket': 1,
  gcra: 1,
};

function limiterOf(name: StrategyName, threshold: number, windowSeconds: number, clock: () => number): RateLimiter {
  return new RateLimiter({ threshold, windowSeconds, strategy: STRATEGIES[name](), clock });
}

describe('every strategy decides exactly at epoch-scale clocks (issue 11, item 1)', () => {
  it('GCRA at threshold 6,000,000 per second and an epoch clock admits exactly 6,000,000 of a 6,060,000 burst', () => {
    const limiter = limiterOf('gcra', 6_000_000, 1, () => 1_764_500_000_000);
    let allowed = 0;
    for (let i = 0; i < 6_060_000; i++) if (limiter.allowRequestSync('u').allowed) allowed++;
    expect(allowed).toBe(6_000_000);
  }, 120_000); // 6 million decisions: under a second, much longer when instrumented (mutation testing)

  it('GCRA at threshold 1,000,000 per second and an epoch clock admits the whole threshold', () => {
    const limiter = limiterOf('gcra', 1_000_000, 1, () => 1_764_500_000_000);
    let allowed = 0;
    for (let i = 0; i < 1_010_000; i++) if (limiter.allowRequestSync('u').allowed) allowed++;
    expect(allowed).toBe(1_000_000);
  }, 60_000);

  it.each(NAMES)('%s admits exactly the threshold in a burst at clocks up to 2^45 ms, fractional or not', (name) => {
    const threshold = name === 'sliding-window-log' ? 50_000 : 1_000_000;
    for (const reading of [1_764_500_000_000, 1_764_500_000_000.123, 2 ** 45, 2 ** 45 - 0.5, 2 ** 44 + 0.25]) {
      const limiter = limiterOf(name, threshold, 60, () => reading);
      let allowed = 0;
      for (let i = 0; i < threshold + 100; i += 10) if (limiter.allowRequestSync('u', { cost: 10 }).allowed) allowed += 10;
      expect(allowed, `${name} at ${reading}`).toBe(threshold);
    }
  });

  it('the rate strategies refuse a threshold × window their integer arithmetic cannot hold exactly', () => {
    for (const name of ['sliding-window-counter', 'token-bucket', 'gcra'] as const) {
      expect(() => limiterOf(name, 2 ** 42, 0.001, () => 0)).not.toThrow();
      expect(() => limiterOf(name, Math.floor(2 ** 42 / 1000) + 1, 1, () => 0)).toThrow(
        /`threshold` to be at most 4398046511 for a window of 1 seconds with the .* strategy \(threshold × window in ms at most its maxThresholdTimesWindowMs, 4398046511104\), got `4398046512`/,
      );
      expect(() => limiterOf(name, 1_000_000, 3_600, () => 0)).not.toThrow(); // a million per hour
    }
    // The log and the fixed window have no such bound (only the log's maxThreshold).
    expect(() => limiterOf('fixed-window', 2 ** 53 - 1, 1e9, () => 0)).not.toThrow();
  });
});

describe('a refusal always has retryAfter > 0, and waiting it is enough (issue 11, item 2)', () => {
  it.each(['sliding-window-log', 'fixed-window', 'token-bucket', 'gcra'] as const)(
    '%s, 1 per second: allowed at 0.1 ms, refused at 0.8 ms, allowed again at 0.8 + retryAfter × 1000',
    (name) => {
      let now = 0.1;
      const limiter = limiterOf(name, 1, 1, () => now);
      expect(limiter.allowRequestSync('u').allowed).toBe(true);
      now = 0.8;
      const refused = limiter.allowRequestSync('u');
      expect(refused.allowed).toBe(false);
      expect(refused.retryAfter).toBeGreaterThan(0);
      now = 0.8 + refused.retryAfter * 1000;
      const after = limiter.allowRequestSync('u');
      expect(after, `at ${now}`).toMatchObject({ allowed: true, retryAfter: 0 });
      // The reading the issue found, 0.8 + 999.3 ms = 1000.0999999999999: refused with a wait
      // above 0, or allowed.
      const again = limiterOf(name, 1, 1, () => now);
      now = 0.1;
      again.allowRequestSync('u');
      now = 0.8 + 999.3;
      const r = again.allowRequestSync('u');
      expect(r.allowed || r.retryAfter > 0).toBe(true);
    },
  );

  it('the sliding-window counter, 1 per second: at 0.4, 0.6 and 0.6 + 1999.8 ms', () => {
    for (const then of ['1999.8 ms later', 'retryAfter later'] as const) {
      let now = 0.4;
      const limiter = limiterOf('sliding-window-counter', 1, 1, () => now);
      expect(limiter.allowRequestSync('u').allowed).toBe(true);
      now = 0.6;
      const refused = limiter.allowRequestSync('u');
      expect(refused.allowed).toBe(false);
      expect(refused.retryAfter).toBeGreaterThan(0);
      now = then === '1999.8 ms later' ? 0.6 + 1999.8 : 0.6 + refused.retryAfter * 1000;
      const r = limiter.allowRequestSync('u');
      if (then === 'retryAfter later') expect(r.allowed).toBe(true);
      else expect(r.allowed || r.retryAfter > 0).toBe(true);
    }
  });

  it('the token bucket, 3 per second: 3 at 0 ms, one at 333.334 and one at 666.667 ms, then one at 1000 ms', () => {
    let now = 0;
    const limiter = limiterOf('token-bucket', 3, 1, () => now);
    for (let i = 0; i < 3; i++) expect(limiter.allowRequestSync('u').allowed).toBe(true);
    now = 333.334;
    expect(limiter.allowRequestSync('u').allowed).toBe(true);
    now = 666.667;
    expect(limiter.allowRequestSync('u').allowed).toBe(true);
    now = 1000;
    // An exact bucket holds one token: 1000 ms of refill at 3 per second is 3 tokens, 5 taken.
    expect(limiter.allowRequestSync('u')).toMatchObject({ allowed: true, retryAfter: 0 });
  });

  it('a window of no whole number of milliseconds (0.0015 s) is refused, not decided as 2 ms', () => {
    for (const name of NAMES) {
      expect(() => limiterOf(name, 1, 0.0015, () => 0)).toThrow(
        'Expected `windowSeconds` to be a whole number of milliseconds (a multiple of 0.001 seconds), got `0.0015` (number)',
      );
    }
    expect(() => createQuota({ threshold: 1, windowSeconds: 1.0005 })).toThrow(RangeError);
    expect(() => createQuota({ threshold: 1, windowSeconds: 1 / 3 })).toThrow(RangeError);
  });
});

describe('every accepted configuration gives results in the documented ranges (issue 11, item 8)', () => {
  it('a window of 1e305 s is refused, naming the maximum window', () => {
    expect(() => new RateLimiter({ threshold: 1, windowSeconds: 1e305 })).toThrow(
      'Expected `windowSeconds` to be a finite number of seconds from 0.001 to 1000000000, got `1e+305` (number)',
    );
  });

  it.each(NAMES)('%s at the maximum window (10^9 s): a refusal waits a finite time within the window', (name) => {
    let now = 1_764_500_000_000.5;
    const limiter = limiterOf(name, 1, 1e9, () => now);
    expect(limiter.allowRequestSync('u').allowed).toBe(true);
    now += 1;
    const r = limiter.allowRequestSync('u');
    expect(r.allowed).toBe(false);
    expect(r.retryAfter).toBeGreaterThan(0);
    expect(r.retryAfter).toBeLessThanOrEqual(MAX_WINDOWS[name] * 1e9);
    expect(r.resetAfter).toBeLessThanOrEqual(MAX_WINDOWS[name] * 1e9);
    now += r.retryAfter * 1000;
    expect(limiter.allowRequestSync('u').allowed).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------------
// Properties: each strategy against its exact model, at epoch-scale and fractional clocks,
// thresholds near each maximum, costs near the threshold.

/** The largest threshold each strategy accepts for a window of `windowMs`. */
function maxThresholdFor(name: StrategyName, windowMs: number): number {
  if (name === 'sliding-window-log') return new SlidingWindowLog().maxThreshold;
  if (name === 'fixed-window') return Number.MAX_SAFE_INTEGER;
  return Math.floor(MAX_THRESHOLD_TIMES_WINDOW_MS / windowMs);
}

const baseClock = fc.oneof(
  fc.constant(0),
  fc.double({ min: 0, max: 1e7, noNaN: true }),
  fc.integer({ min: 2 ** 40, max: 2 ** 45 }),
  fc.double({ min: 2 ** 40, max: 2 ** 45, noNaN: true }),
  fc.constant(1_764_500_000_000.123),
);

type Advance = { kind: 'ms'; ms: number } | { kind: 'retry' } | { kind: 'window'; windows: number };
const advance: fc.Arbitrary<Advance> = fc.oneof(
  fc.constant({ kind: 'ms' as const, ms: 0 }),
  fc.integer({ min: 0, max: 3_000 }).map((ms) => ({ kind: 'ms' as const, ms })),
  fc.double({ min: 0, max: 3_000, noNaN: true }).map((ms) => ({ kind: 'ms' as const, ms })),
  fc.integer({ min: 0, max: 30 }).map((n) => ({ kind: 'ms' as const, ms: n * 0.1 })),
  fc.constant({ kind: 'retry' as const }),
  fc.constant({ kind: 'retry' as const }),
  fc.integer({ min: 1, max: 2 }).map((windows) => ({ kind: 'window' as const, windows })),
);

function exactProperty(name: StrategyName) {
  const config = fc
    .record({
      windowMs: fc.oneof(fc.constantFrom(1, 2, 7, 1_000, 1_017, 60_000, 1e12), fc.integer({ min: 1, max: 5_000 }), fc.integer({ min: 1, max: 1e12 })),
      big: fc.boolean(),
      small: fc.integer({ min: 1, max: 9 }),
      below: fc.integer({ min: 0, max: 3 }),
    })
    .map(({ windowMs, big, small, below }) => {
      const max = Math.min(maxThresholdFor(name, windowMs), name === 'sliding-window-log' ? 4_096 : Infinity);
      return { windowMs, threshold: big ? Math.max(1, max - below) : Math.min(small, max) };
    });
  const step = fc.record({
    advance,
    // A cost near 1 or near the threshold (above it too): a fraction of it, rounded.
    cost: fc.oneof(
      fc.integer({ min: 1, max: 3 }).map((units) => ({ units, share: 0 })),
      fc.double({ min: 0, max: 1.01, noNaN: true }).map((share) => ({ units: 0, share })),
      fc.integer({ min: -2, max: 1 }).map((units) => ({ units, share: 1 })),
    ),
    key: fc.constantFrom('a', 'b'),
  });

  it(`${name} matches its exact model at epoch-scale and fractional clocks, thresholds near the maximum, costs near the threshold`, () => {
    fc.assert(
      fc.property(config, baseClock, fc.array(step, { minLength: 1, maxLength: 60 }), ({ threshold, windowMs }, base, steps) => {
        let now = base;
        const limiter = limiterOf(name, threshold, windowMs / 1000, () => now);
        const models = new Map<string, ReturnType<typeof exactKey>>();
        let lastRetry = 0;
        for (const s of steps) {
          if (s.advance.kind === 'ms') now += s.advance.ms;
          else if (s.advance.kind === 'window') now += s.advance.windows * windowMs;
          else now += lastRetry * 1000; // exactly as a caller computes it
          if (!Number.isFinite(now)) return;
          // 1 to 3 units, a share of the threshold, or the threshold −2 to +1.
          const cost = Math.min(Number.MAX_SAFE_INTEGER, Math.max(1, s.cost.units + Math.round(s.cost.share * threshold)));
          let model = models.get(s.key);
          if (model === undefined) models.set(s.key, (model = exactKey(name, threshold, windowMs)));
          const t = tickOf(now);
          const free = model.free(t);
          const r = limiter.allowRequestSync(s.key, { cost });
          const label = `${name} ${threshold}/${windowMs} ms, cost ${cost} at ${now}`;
          // Every result in its documented ranges (issue 11, item 8).
          expect(Number.isSafeInteger(r.remaining) && r.remaining >= 0 && r.remaining <= threshold, label).toBe(true);
          expect(r.limit, label).toBe(threshold);
          expect(r.resetAfter >= 0 && r.resetAfter <= MAX_WINDOWS[name] * (windowMs / 1000), `${label}: resetAfter ${r.resetAfter}`).toBe(true);
          if (r.allowed) expect(r.retryAfter, label).toBe(0);
          expect(r.allowed, label).toBe(BigInt(cost) <= free);
          if (r.allowed) {
            model.record(t, BigInt(cost));
            expect(r.remaining, label).toBe(Number(free) - cost);
            continue;
          }
          expect(r.remaining, label).toBe(free < 0n ? 0 : Math.min(Number(free), threshold));
          if (cost > threshold) {
            expect(r.retryAfter, label).toBe(Infinity);
            continue;
          }
          // Waiting retryAfter is enough, and not much more than needed: the caller's reading
          // after the wait is at or after the model's first fit, and at most 1 µs (the rounding
          // up) plus one grid step later, besides the floating-point steps of a large reading.
          expect(r.retryAfter, label).toBeGreaterThan(0);
          lastRetry = r.retryAfter;
          const first = model.firstFit(t, BigInt(cost));
          const later = now + r.retryAfter * 1000;
          expect(tickOf(later) >= first, `${label}: waits ${r.retryAfter} s to ${later}, fits at tick ${first}`).toBe(true);
          // Rounded up to the microsecond from the exact wait, no more: one microsecond less
          // would land before the first fit (where the test's own arithmetic is exact enough:
          // readings below 2^30 ms and waits below 10^6 s; unless capped at the window).
          const capped = r.retryAfter === MAX_WINDOWS[name] * (windowMs / 1000);
          if (Math.abs(now) < 2 ** 30 && r.retryAfter < 1e6 && !capped) {
            expect((r.retryAfter - 1e-6) * 1000 < Number(first) / 1024 - now + 1e-9, `${label}: ${r.retryAfter} s is not the least`).toBe(true);
          }
          const slack = 2n + BigInt(Math.ceil(Math.abs(now) * 2 * Number.EPSILON * 1024));
          expect(tickOf(later) - first <= slack + 2n, `${label}: waits ${r.retryAfter} s, too long`).toBe(true);
          // At most the documented maximum, but for the rounding steps of a large reading.
          const rounding = (4 * Number.EPSILON * Math.abs(now)) / 1000;
          expect(r.retryAfter, label).toBeLessThanOrEqual(MAX_WINDOWS[name] * (windowMs / 1000) + rounding);
          // A peek then sees it allowed (nothing else happened meanwhile); the clock stays there.
          now = later;
          expect(limiter.peekSync(s.key, { cost }).allowed, `${label}: peek after waiting`).toBe(true);
        }
      }),
      { numRuns: 250 },
    );
  });
}

describe('every strategy vs its exact model (fast-check, epoch-scale and fractional clocks)', () => {
  for (const name of NAMES) exactProperty(name);

  it('the strategies called directly agree with the limiter on the grid: readings within half a tick decide alike', () => {
    fc.assert(
      fc.property(fc.constantFrom(...NAMES), baseClock, fc.double({ min: -0.49, max: 0.49, noNaN: true }), (name, base, offset) => {
        const strategy = STRATEGIES[name]();
        const quota = createQuota({ threshold: 1, windowSeconds: 1 });
        const reading = Math.round(base * 1024) / 1024;
        const state = strategy.createState(quota);
        expect(strategy.consume(state, reading, 1, quota).allowed).toBe(true);
        const r: RateLimitResult = strategy.peek(state, reading + offset / 1024 + 999, 1, quota);
        expect(r.allowed).toBe(false);
      }),
      { numRuns: 200 },
    );
  });
});

describe('a clock reading beyond ±2^47 ms is refused, so that retryAfter stays within the window but for a rounding step (attack run, review)', () => {
  it.each(NAMES)('%s: readings of 2^60 ms, 2^52 ms and -2^47 ms are refused; 2^45 ms with a 1 ms window is decided', (name) => {
    expect(() => limiterOf(name, 1, 1.1, () => 2 ** 60).allowRequestSync('u')).toThrow(/from -2\^47 to 2\^47/);
    expect(() => limiterOf(name, 1, 0.002, () => 2 ** 52).allowRequestSync('u')).toThrow(RangeError);
    expect(() => limiterOf(name, 1, 0.001, () => -(2 ** 47)).allowRequestSync('u')).toThrow(RangeError);
    expect(limiterOf(name, 1, 0.001, () => 2 ** 47 - 2 ** -5).allowRequestSync('u').allowed).toBe(true);
    let now = 2 ** 45;
    const limiter = limiterOf(name, 1, 0.001, () => now);
    expect(limiter.allowRequestSync('u').allowed).toBe(true);
    const refused = limiter.allowRequestSync('u');
    expect(refused.allowed).toBe(false);
    // At most the window plus two rounding steps of the reading (2^-7 ms each at 2^45).
    expect(refused.retryAfter).toBeLessThanOrEqual(MAX_WINDOWS[name] * 0.001 + (2 * 2 ** -7) / 1000);
    now += refused.retryAfter * 1000;
    expect(limiter.allowRequestSync('u').allowed).toBe(true);
  });
});

describe('a limitFor returning an equal quota object for every call is no tier change (attack run)', () => {
  it.each(NAMES)('%s decides alike with one quota object and with a fresh equal one per call', (name) => {
    fc.assert(
      fc.property(fc.array(fc.record({ advance: fc.double({ min: 0, max: 700, noNaN: true }), cost: fc.integer({ min: 1, max: 4 }) }), { maxLength: 80 }), (steps) => {
        let now = 1_764_500_000_000.3;
        const fixed = { threshold: 3, windowSeconds: 1 };
        const same = new RateLimiter({ threshold: 1, windowSeconds: 1, strategy: STRATEGIES[name](), clock: () => now, limitFor: () => fixed });
        const fresh = new RateLimiter({ threshold: 1, windowSeconds: 1, strategy: STRATEGIES[name](), clock: () => now, limitFor: () => ({ threshold: 3, windowSeconds: 1 }) });
        for (const s of steps) {
          now += s.advance;
          expect(fresh.allowRequestSync('k', { cost: s.cost })).toEqual(same.allowRequestSync('k', { cost: s.cost }));
        }
      }),
      { numRuns: 100 },
    );
  });
});

describe("the sliding-window counter across a tier change of window (attack run)", () => {
  it('a key used every second for a while, then moved to a 60 s window, decides from its current window on: waiting retryAfter is enough', () => {
    let now = 0;
    let tier = { threshold: 2, windowSeconds: 1 };
    const limiter = new RateLimiter({ threshold: 2, windowSeconds: 1, strategy: new SlidingWindowCounter(), clock: () => now, limitFor: () => tier });
    for (now = 0; now <= 9_000; now += 1_000) expect(limiter.allowRequestSync('k').allowed).toBe(true);
    now = 9_500;
    tier = { threshold: 2, windowSeconds: 60 };
    // The current window [9 s, 10 s) holds one request, the previous one [8 s, 9 s) one; under
    // the new length the current window is [9 s, 69 s): estimate 1 × 59.5/60 + 1 > 1, refused,
    // until the previous window's weight has decayed (at 69 s it is gone).
    const refused = limiter.allowRequestSync('k');
    expect(refused).toMatchObject({ allowed: false, remaining: 0, limit: 2 });
    expect(refused.retryAfter).toBeGreaterThan(0);
    expect(refused.retryAfter).toBeLessThanOrEqual(59.5);
    now += refused.retryAfter * 1000;
    expect(limiter.allowRequestSync('k').allowed).toBe(true);
  });

  it('property: after any tier changes, a refusal under a stable tier is lifted by waiting retryAfter', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ advance: fc.integer({ min: 0, max: 3_000 }), tier: fc.constantFrom(0, 1, 2), cost: fc.integer({ min: 1, max: 3 }) }), { maxLength: 60 }),
        (steps) => {
          const tiers = [
            { threshold: 3, windowSeconds: 1 },
            { threshold: 3, windowSeconds: 60 },
            { threshold: 5, windowSeconds: 0.25 },
          ];
          let now = 1_764_500_000_000;
          let tier = 0;
          const limiter = new RateLimiter({ threshold: 3, windowSeconds: 1, strategy: new SlidingWindowCounter(), clock: () => now, limitFor: () => tiers[tier] });
          for (const s of steps) {
            now += s.advance;
            tier = s.tier;
            const r = limiter.allowRequestSync('k', { cost: s.cost });
            if (r.allowed || r.retryAfter === Infinity) continue;
            expect(r.retryAfter).toBeLessThanOrEqual(2 * tiers[tier]!.windowSeconds);
            const later = now + r.retryAfter * 1000;
            const peekAt = now;
            now = later;
            expect(limiter.peekSync('k', { cost: s.cost }).allowed, `refused at ${peekAt}, waits ${r.retryAfter} s`).toBe(true);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
