// Boundary instants of each strategy, with the numbers their documentation gives.
import { describe, expect, it } from 'vitest';
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
