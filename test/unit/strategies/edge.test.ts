// Boundary instants of each strategy, with the numbers their documentation gives.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { FixedWindow, GCRA, RateLimiter, type RateLimitStrategy, SlidingWindowCounter, SlidingWindowLog, TokenBucket } from '../../../src/index.js';

function setup(strategy: RateLimitStrategy<unknown>, threshold = 100, windowSeconds = 60) {
  const clock = { now: 0 };
  const limiter = new RateLimiter({ threshold, windowSeconds, strategy, clock: () => clock.now });
  const burst = (n: number, cost = 1) => {
    let allowed = 0;
    for (let i = 0; i < n; i++) if (limiter.allowRequestSync('k', { cost }).allowed) allowed++;
    return allowed;
  };
  return { clock, limiter, burst };
}

describe('fixed window: 100 per minute', () => {
  it('lets 199 through within one second around the boundary of a window', () => {
    const { clock, burst } = setup(new FixedWindow());
    expect(burst(1)).toBe(1); // opens the window [0 s, 60 s)
    clock.now = 59_000;
    expect(burst(150)).toBe(99);
    clock.now = 60_000; // the window ends: a new one opens, count 0
    expect(burst(150)).toBe(100);
  });

  it('rejects until the window ends, then allows a full window', () => {
    const { clock, limiter, burst } = setup(new FixedWindow());
    clock.now = 10_000;
    burst(100);
    clock.now = 25_000;
    expect(limiter.allowRequestSync('k')).toMatchObject({ allowed: false, retryAfter: 45, resetAfter: 45 });
    clock.now = 69_999;
    expect(limiter.allowRequestSync('k').allowed).toBe(false);
    clock.now = 70_000;
    expect(limiter.allowRequestSync('k')).toMatchObject({ allowed: true, remaining: 99, resetAfter: 60 });
  });
});

describe('sliding-window counter: 100 per minute', () => {
  it('weights the previous window by how much of it the sliding window still covers', () => {
    const { clock, limiter, burst } = setup(new SlidingWindowCounter());
    expect(burst(100)).toBe(100); // window [0, 60 s)
    clock.now = 60_000; // previous 100 weighted 100 %: nothing fits
    expect(limiter.allowRequestSync('k')).toMatchObject({ allowed: false, remaining: 0 });
    clock.now = 90_000; // half-way: previous weighs 50
    expect(burst(100)).toBe(50);
    // Next window: previous = 50 at 100 %: 50 more fit at once.
    clock.now = 120_000;
    expect(burst(100)).toBe(50);
  });

  it('reports the exact wait for the estimate, into the next window when the current one is full', () => {
    const { clock, limiter, burst } = setup(new SlidingWindowCounter(), 10, 60);
    burst(10); // current full at 0
    clock.now = 30_000;
    // The current window is full: wait for the next one (at 60 s), where previous = 10 weighs
    // 10 × (60 − e) / 60, and 1 fits once that is <= 9: e >= 6 s. So 36 s from now.
    expect(limiter.allowRequestSync('k').retryAfter).toBe(36);
    clock.now = 65_999;
    expect(limiter.allowRequestSync('k').allowed).toBe(false);
    clock.now = 66_000;
    expect(limiter.allowRequestSync('k').allowed).toBe(true);
  });
});

describe('token bucket and GCRA: 100 per minute', () => {
  for (const [name, make] of [
    ['token bucket', () => new TokenBucket()],
    ['GCRA', () => new GCRA()],
  ] as const) {
    it(`${name}: a full burst of 100, then one every 0.6 s`, () => {
      const { clock, limiter, burst } = setup(make());
      expect(burst(150)).toBe(100);
      expect(limiter.allowRequestSync('k')).toMatchObject({ allowed: false, retryAfter: 0.6, resetAfter: 60 });
      clock.now = 599;
      expect(limiter.allowRequestSync('k').allowed).toBe(false);
      clock.now = 600;
      expect(limiter.allowRequestSync('k')).toMatchObject({ allowed: true, remaining: 0 });
      clock.now = 6_600; // ten more intervals: ten more tokens
      expect(burst(20)).toBe(10);
      clock.now = 1_000_000; // a long idle: the bucket is full again, not more
      expect(burst(150)).toBe(100);
    });
  }
});

describe('sliding-window log: 100 per minute', () => {
  it('has no boundary burst: 100 in any 60 s, wherever the boundary', () => {
    const { clock, burst } = setup(new SlidingWindowLog());
    expect(burst(1)).toBe(1);
    clock.now = 59_000;
    expect(burst(150)).toBe(99);
    clock.now = 60_000; // only the request at 0 has expired
    expect(burst(150)).toBe(1);
    clock.now = 118_999;
    expect(burst(150)).toBe(0);
    clock.now = 119_000;
    expect(burst(150)).toBe(99);
  });
});

describe('tier changes at any time, on every strategy', () => {
  const all: [string, () => RateLimitStrategy<unknown>][] = [
    ['sliding-window-log', () => new SlidingWindowLog()],
    ['fixed-window', () => new FixedWindow()],
    ['sliding-window-counter', () => new SlidingWindowCounter()],
    ['token-bucket', () => new TokenBucket()],
    ['gcra', () => new GCRA()],
  ];

  it.each(all)('%s: peek never changes a key, also under a changed tier (two limiters, one peeking, decide alike)', (_name, make) => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            advance: fc.oneof(fc.integer({ min: 0, max: 1_500 }), fc.double({ min: 0, max: 1_500, noNaN: true })),
            tier: fc.constantFrom(0, 1, 2),
            cost: fc.integer({ min: 1, max: 12 }),
            // Peeks under a tier of their own, some time before the decision.
            peekTier: fc.constantFrom(0, 1, 2),
            peeks: fc.integer({ min: 0, max: 2 }),
            then: fc.integer({ min: 0, max: 700 }),
          }),
          { maxLength: 60 },
        ),
        fc.integer({ min: 0, max: 2 ** 40 }),
        (steps, base) => {
          const tiers = [
            { threshold: 10, windowSeconds: 1 },
            { threshold: 10, windowSeconds: 2 }, // the same threshold, another window
            { threshold: 4, windowSeconds: 0.5 },
          ];
          let now = base;
          let tier = 0;
          const options = { threshold: 10, windowSeconds: 1, clock: () => now, limitFor: () => tiers[tier] };
          const plain = new RateLimiter({ ...options, strategy: make() });
          const peeked = new RateLimiter({ ...options, strategy: make() });
          for (const s of steps) {
            now += s.advance;
            tier = s.peekTier;
            for (let i = 0; i < s.peeks; i++) peeked.peekSync('k', { cost: s.cost });
            now += s.then;
            tier = s.tier;
            expect(peeked.allowRequestSync('k', { cost: s.cost })).toEqual(plain.allowRequestSync('k', { cost: s.cost }));
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  // The bucket's fill fraction (GCRA's used share of its burst) carries over a tier change, with
  // the refill up to the change under the old rate. At a clock far from 0, so that a conversion
  // that confuses a time with a duration shows.
  const T0 = 1_764_500_000_000;
  it.each([
    ['token-bucket', () => new TokenBucket() as RateLimitStrategy<unknown>],
    ['gcra', () => new GCRA() as RateLimitStrategy<unknown>],
  ] as const)('%s converts a key at a non-zero clock: refilled under the old rate, then the same fill fraction', (_name, make) => {
    let now = T0;
    let tier = { threshold: 10, windowSeconds: 1 };
    const limiter = new RateLimiter({ threshold: 10, windowSeconds: 1, strategy: make(), clock: () => now, limitFor: () => tier });
    for (let i = 0; i < 10; i++) expect(limiter.allowRequestSync('k').allowed).toBe(true);
    now = T0 + 500; // 5 of 10 tokens back: half full
    tier = { threshold: 20, windowSeconds: 2 };
    // Half of 20: 10 tokens; one taken.
    expect(limiter.allowRequestSync('k')).toMatchObject({ allowed: true, remaining: 9, limit: 20 });
    expect(limiter.allowRequestSync('k', { cost: 10 })).toMatchObject({ allowed: false, remaining: 9 });
    // 100 ms per token under 20 per 2 s: the tenth more token comes 100 ms later.
    expect(limiter.allowRequestSync('k', { cost: 10 }).retryAfter).toBe(0.1);
    now += 100;
    expect(limiter.allowRequestSync('k', { cost: 10 })).toMatchObject({ allowed: true, remaining: 0 });

    // The same threshold with a longer window: the same fraction, refilled at the new rate.
    now = T0 + 10_000;
    tier = { threshold: 10, windowSeconds: 1 };
    for (let i = 0; i < 10; i++) expect(limiter.allowRequestSync('k').allowed).toBe(true);
    now += 500; // half full under 10 per second
    tier = { threshold: 10, windowSeconds: 2 };
    expect(limiter.peekSync('k')).toMatchObject({ allowed: true, remaining: 5, limit: 10 });
    expect(limiter.allowRequestSync('k', { cost: 6 })).toMatchObject({ allowed: false, remaining: 5, retryAfter: 0.2 });
  });
});

describe('called directly with a clock that went back, a strategy takes the reading as the time of its state', () => {
  const quota = { threshold: 2, windowMs: 1_000, windowSeconds: 1 } as const;
  it.each([
    ['token-bucket', () => new TokenBucket() as RateLimitStrategy<unknown>],
    ['gcra', () => new GCRA() as RateLimitStrategy<unknown>],
  ] as const)('%s: a decision before the last one counts as at its time, so it refills nothing', (_name, make) => {
    const strategy = make();
    const state = strategy.createState(quota);
    expect(strategy.consume(state, 1_000, 1, quota)).toMatchObject({ allowed: true, remaining: 1 });
    // At 500 ms, taken as 1000 ms: the last token; recorded at 1000 ms.
    expect(strategy.consume(state, 500, 1, quota)).toMatchObject({ allowed: true, remaining: 0 });
    // At 1000 ms nothing has been refilled: one emission interval (500 ms) to wait.
    expect(strategy.consume(state, 1_000, 1, quota)).toMatchObject({ allowed: false, remaining: 0, retryAfter: 0.5 });
    expect(strategy.peek(state, 600, 1, quota)).toMatchObject({ allowed: false, retryAfter: 0.5 });
  });

  it.each([
    ['token-bucket', () => new TokenBucket() as RateLimitStrategy<unknown>],
    ['gcra', () => new GCRA() as RateLimitStrategy<unknown>],
  ] as const)('%s: a sweep before the time of a full bucket says it is clear', (_name, make) => {
    const strategy = make();
    const state = strategy.createState(quota);
    expect(strategy.consume(state, 0, 2, quota).allowed).toBe(true);
    // Ten windows later, under another quota, a request that can never fit: refused, and the
    // key (by then full again) is converted to the new quota at 10 s.
    const other = { threshold: 4, windowMs: 2_000, windowSeconds: 2 } as const;
    expect(strategy.consume(state, 10_000, 5, other)).toMatchObject({ allowed: false, retryAfter: Infinity, remaining: 4 });
    expect(strategy.sweep(state, 10_000, other)).toBe(true);
    expect(strategy.sweep(state, 9_000, other)).toBe(true);
  });
});
