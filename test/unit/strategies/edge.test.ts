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

describe('each strategy called directly: the paths the limiter does not take (from mutation testing)', () => {
  const q = (threshold: number, windowMs: number) => ({ threshold, windowMs, windowSeconds: windowMs / 1000 });

  it('fixed window: a reading before the window start counts as the start; a fresh state is clear; a shrunk tier leaves 0, not less; a new key refused for cost has no reset', () => {
    const s = new FixedWindow();
    const state = s.createState();
    expect(s.sweep(state, 0, q(2, 1_000))).toBe(true);
    expect(s.consume(state, 1_000, 1, q(2, 1_000))).toMatchObject({ allowed: true, remaining: 1 });
    // At 500 ms, taken as 1000 ms: the window ends 1 s later.
    expect(s.consume(state, 500, 2, q(2, 1_000))).toEqual({ allowed: false, remaining: 1, retryAfter: 1, limit: 2, resetAfter: 1 });
    expect(s.consume(state, 1_100, 1, q(2, 1_000))).toMatchObject({ allowed: true, remaining: 0 });
    // The tier shrinks to 1: the window holds 2, so nothing remains (not −1).
    expect(s.consume(state, 1_200, 1, q(1, 1_000))).toMatchObject({ allowed: false, remaining: 0, retryAfter: 0.8 });
    expect(s.peek(undefined, 0, 3, q(2, 1_000))).toEqual({ allowed: false, remaining: 2, retryAfter: Infinity, limit: 2, resetAfter: 0 });
  });

  it('sliding-window counter: clear states, a reading before the window start, resetAfter of a first request, a shrunk tier', () => {
    const s = new SlidingWindowCounter();
    const fresh = s.createState();
    expect(s.sweep(fresh, 0)).toBe(true);
    const state = s.createState();
    expect(s.consume(state, 1_000, 1, q(2, 1_000))).toEqual({ allowed: true, remaining: 1, retryAfter: 0, limit: 2, resetAfter: 2 });
    // Counted in the window [1 s, 2 s): clear once the next window is over too, at 3 s.
    expect(s.sweep(state, 2_999)).toBe(false);
    expect(s.sweep(state, 3_000)).toBe(true);
    // At 500 ms, taken as 1000 ms, the start: a cost of 2 fits in the next window, 1 s + 1 s later.
    expect(s.consume(state, 500, 2, q(2, 1_000))).toMatchObject({ allowed: false, remaining: 1, retryAfter: 2 });
    expect(s.consume(state, 1_000, 1, q(2, 1_000))).toMatchObject({ allowed: true, remaining: 0 });
    // The tier shrinks to 1 while the window holds 2: nothing remains.
    expect(s.peek(state, 1_100, 1, q(1, 1_000))).toMatchObject({ allowed: false, remaining: 0 });
  });

  it('sliding-window counter: a tier that changes the window keeps the current window start (the attack run input)', () => {
    const s = new SlidingWindowCounter();
    const state = s.createState();
    for (let t = 0; t <= 9_000; t += 1_000) expect(s.consume(state, t, 1, q(2, 1_000)).allowed).toBe(true);
    // Window [9 s, 10 s) holds 1, [8 s, 9 s) holds 1. Under 60 s windows the current one is
    // [9 s, 69 s): 1 × 59.5/60 + 1 + 1 > 2 until the previous weight is gone, 59.5 s on.
    expect(s.consume(state, 9_500, 1, q(2, 60_000))).toEqual({ allowed: false, remaining: 0, retryAfter: 59.5, limit: 2, resetAfter: 119.5 });
    expect(s.consume(state, 69_000, 1, q(2, 60_000))).toMatchObject({ allowed: true, remaining: 0, resetAfter: 120 });
  });

  it('sliding-window log: a reading before its newest entry counts as it', () => {
    const s = new SlidingWindowLog();
    const state = s.createState(q(2, 1_000));
    s.consume(state, 1_000, 2, q(2, 1_000));
    expect(s.consume(state, 500, 1, q(2, 1_000))).toEqual({ allowed: false, remaining: 0, retryAfter: 1, limit: 2, resetAfter: 1 });
  });

  it('sliding-window log: sweep shrinks a ring at most a quarter full to twice its live entries (4 at least), not one more than a quarter', () => {
    const s = new SlidingWindowLog();
    const quota = q(64, 1_000);
    const state = s.createState(quota);
    s.consume(state, 0, 64, quota); // 64 slots
    s.consume(state, 900, 0 + 1, q(65, 1_000));
    expect(state.times.length).toBeGreaterThanOrEqual(65);
    const capacity = state.times.length;
    expect(s.sweep(state, 1_000, quota)).toBe(false); // 1 live of `capacity`
    expect(state.times.length).toBe(4);
    expect(state.times.length).toBeLessThan(capacity);
    const again = s.createState(q(16, 1_000));
    s.consume(again, 0, 12, q(16, 1_000)); // 16 slots
    s.consume(again, 500, 4, q(16, 1_000)); // 4 live at 1 s: a quarter, shrunk to 8
    expect(again.times.length).toBe(16);
    s.sweep(again, 1_000, q(16, 1_000));
    expect(again.times.length).toBe(8);
    const five = s.createState(q(16, 1_000));
    s.consume(five, 0, 11, q(16, 1_000));
    s.consume(five, 500, 5, q(16, 1_000)); // 5 live at 1 s: more than a quarter, kept
    s.sweep(five, 1_000, q(16, 1_000));
    expect(five.times.length).toBe(16);
  });
});
