// Edge cases of the sliding-window log, driven by an injected clock (milliseconds).
import { describe, expect, it } from 'vitest';
import { RateLimiter, SlidingWindowLog, SlidingWindowLogState } from '../../../src/index.js';

function setup(threshold: number, windowSeconds: number) {
  const clock = { now: 0 };
  const limiter = new RateLimiter({ threshold, windowSeconds, clock: () => clock.now });
  return { clock, limiter };
}

describe('sliding-window log: edge cases on a fake clock', () => {
  it('allows the first request ever, with remaining = threshold - 1 and a full reset window', () => {
    const { limiter } = setup(3, 10);
    expect(limiter.allowRequestSync('a')).toEqual({
      allowed: true,
      remaining: 2,
      retryAfter: 0,
      limit: 3,
      resetAfter: 10,
    });
    expect(limiter.size).toBe(1);
  });

  it('allows exactly threshold requests at one instant, then rejects with retryAfter = window', () => {
    const { limiter } = setup(3, 10);
    const results = [1, 2, 3, 4].map(() => limiter.allowRequestSync('a'));
    expect(results.map((r) => r.allowed)).toEqual([true, true, true, false]);
    expect(results.map((r) => r.remaining)).toEqual([2, 1, 0, 0]);
    expect(results[3]).toEqual({
      allowed: false,
      remaining: 0,
      retryAfter: 10,
      limit: 3,
      resetAfter: 10,
    });
  });

  it('rejects with retryAfter = oldest + window - now', () => {
    const { clock, limiter } = setup(2, 10);
    clock.now = 1_000;
    limiter.allowRequestSync('a');
    clock.now = 4_000;
    limiter.allowRequestSync('a');
    clock.now = 7_500;
    const r = limiter.allowRequestSync('a');
    expect(r.allowed).toBe(false);
    expect(r.retryAfter).toBe(3.5); // 1 s + 10 s - 7.5 s
    expect(r.resetAfter).toBe(6.5); // newest 4 s + 10 s - 7.5 s
  });

  it('one tick before oldest + window is still rejected; exactly at oldest + window is allowed', () => {
    const { clock, limiter } = setup(1, 60);
    clock.now = 5_000;
    expect(limiter.allowRequestSync('a').allowed).toBe(true);
    clock.now = 64_999;
    const before = limiter.allowRequestSync('a');
    expect(before.allowed).toBe(false);
    expect(before.retryAfter).toBeCloseTo(0.001, 12);
    clock.now = 65_000; // the timestamp 5000 is now <= now - window: evicted
    const at = limiter.allowRequestSync('a');
    expect(at.allowed).toBe(true);
    expect(at.remaining).toBe(0);
  });

  it('records only allowed requests, so a client hammering while blocked still recovers', () => {
    const { clock, limiter } = setup(2, 1);
    limiter.allowRequestSync('a');
    limiter.allowRequestSync('a');
    for (let t = 0; t < 1_000; t += 10) {
      clock.now = t;
      expect(limiter.allowRequestSync('a').allowed).toBe(false);
    }
    clock.now = 1_000;
    expect(limiter.allowRequestSync('a').allowed).toBe(true);
  });

  it('evicts one by one as a steady stream crosses the window', () => {
    const { clock, limiter } = setup(3, 3);
    const allowed: number[] = [];
    for (let t = 0; t <= 10_000; t += 500) {
      clock.now = t;
      if (limiter.allowRequestSync('a').allowed) allowed.push(t);
    }
    // Allowed at 0, 500, 1000; then each slot frees exactly 3 s after it was taken.
    expect(allowed).toEqual([0, 500, 1000, 3000, 3500, 4000, 6000, 6500, 7000, 9000, 9500, 10000]);
  });

  it('keeps keys independent', () => {
    const { limiter } = setup(1, 10);
    expect(limiter.allowRequestSync('a').allowed).toBe(true);
    expect(limiter.allowRequestSync('a').allowed).toBe(false);
    expect(limiter.allowRequestSync('b').allowed).toBe(true);
    expect(limiter.allowRequestSync({ id: 'c', name: 'Carol' }).allowed).toBe(true);
    expect(limiter.allowRequestSync({ id: 'a' }).allowed).toBe(false);
  });

  it('supports fractional windows', () => {
    const { clock, limiter } = setup(1, 0.25);
    limiter.allowRequestSync('a');
    clock.now = 249;
    expect(limiter.allowRequestSync('a').retryAfter).toBeCloseTo(0.001, 12);
    clock.now = 250;
    expect(limiter.allowRequestSync('a').allowed).toBe(true);
  });

  it('grows its ring buffer past the initial capacity and wraps around correctly', () => {
    const { clock, limiter } = setup(100, 1);
    // 1000 steps of 20 ms: 50 requests per window, each evicting one, wrapping many times.
    let allowed = 0;
    for (let i = 0; i < 1_000; i++) {
      clock.now = i * 20;
      if (limiter.allowRequestSync('a').allowed) allowed++;
    }
    expect(allowed).toBe(1_000);
    // Now a burst at one instant fills the log up to 100 exactly.
    const burst = Array.from({ length: 60 }, () => limiter.allowRequestSync('a'));
    expect(burst.filter((r) => r.allowed).length).toBe(50);
    expect(burst.at(-1)!.remaining).toBe(0);
  });

  it('starts a key with a small ring and never allocates more than threshold slots', () => {
    const strategy = new SlidingWindowLog();
    const state = strategy.createState({ threshold: 300, windowMs: 1_000, windowSeconds: 1 });
    expect(state).toBeInstanceOf(SlidingWindowLogState);
    expect(state.times.length).toBe(4);
    const limit = { threshold: 300, windowMs: 1_000, windowSeconds: 1 };
    const capacities: number[] = [];
    // Every 4 ms for 1.6 s with a 1 s window: 250 live entries at most, so the ring grows to
    // 256 and then wraps around while evicting.
    let last = strategy.consume(state, 0, 1, limit);
    for (let i = 1; i < 400; i++) {
      last = strategy.consume(state, i * 4, 1, limit);
      if (capacities.at(-1) !== state.times.length) capacities.push(state.times.length);
    }
    expect(capacities).toEqual([4, 8, 16, 32, 64, 128, 256]);
    expect(last.remaining).toBe(50); // live: (596, 1596] holds 250 entries
    expect(state.count).toBe(250);
    // At 2000 ms the live entries are 1004..1596: 149 of them.
    expect(strategy.peek(state, 2_000, 1, limit).remaining).toBe(151);
    expect(strategy.peek(state, 2_000, 152, limit).retryAfter).toBe(0.004);
    // A burst then fills the log to exactly 300, growing a wrapped ring to its full size.
    const burst = strategy.consume(state, 2_000, 151, limit);
    expect(burst.allowed).toBe(true);
    expect(burst.remaining).toBe(0);
    expect(state.times.length).toBe(300);
    expect(strategy.consume(state, 2_000, 1, limit).retryAfter).toBe(0.004); // 1004 + 1000 - 2000
  });
});

describe('sliding-window log: cost', () => {
  it('counts a request of cost c as c requests', () => {
    const { limiter } = setup(10, 60);
    expect(limiter.allowRequestSync('a', { cost: 4 }).remaining).toBe(6);
    expect(limiter.allowRequestSync('a', { cost: 6 }).remaining).toBe(0);
    expect(limiter.allowRequestSync('a').allowed).toBe(false);
  });

  it('records nothing for a rejected cost and reports the wait until that cost fits', () => {
    const { clock, limiter } = setup(5, 10);
    clock.now = 0;
    limiter.allowRequestSync('a', { cost: 2 }); // [0, 0]
    clock.now = 2_000;
    limiter.allowRequestSync('a', { cost: 2 }); // [0, 0, 2000, 2000]
    clock.now = 3_000;
    const r = limiter.allowRequestSync('a', { cost: 3 }); // needs 2 evictions: both at 0
    expect(r.allowed).toBe(false);
    expect(r.remaining).toBe(1);
    expect(r.retryAfter).toBe(7);
    const r4 = limiter.allowRequestSync('a', { cost: 4 }); // needs 3 evictions: the third is 2000
    expect(r4.retryAfter).toBe(9);
    // Nothing was recorded: a cost-1 request still fits.
    expect(limiter.allowRequestSync('a').remaining).toBe(0);
  });

  it('reports a cost greater than threshold as never possible (retryAfter Infinity), recording nothing', () => {
    const { limiter } = setup(3, 10);
    const r = limiter.allowRequestSync('a', { cost: 4 });
    expect(r).toEqual({ allowed: false, remaining: 3, retryAfter: Infinity, limit: 3, resetAfter: 0 });
    expect(limiter.size).toBe(0);
    limiter.allowRequestSync('a');
    const again = limiter.allowRequestSync('a', { cost: 4 });
    expect(again.retryAfter).toBe(Infinity);
    expect(again.remaining).toBe(2);
  });
});

describe('sliding-window log: a clock stepping backwards', () => {
  it('treats a reading before the newest timestamp as that timestamp', () => {
    const { clock, limiter } = setup(2, 10);
    clock.now = 10_000;
    limiter.allowRequestSync('a');
    clock.now = 3_000; // 7 s back
    const second = limiter.allowRequestSync('a');
    expect(second.allowed).toBe(true);
    const third = limiter.allowRequestSync('a');
    expect(third.allowed).toBe(false);
    // Never more than the window, although the clock reads 7 s before the log's entries.
    expect(third.retryAfter).toBe(10);
    expect(third.resetAfter).toBe(10);
    // The log stays ordered: when the clock catches up, both slots free at 20 s.
    clock.now = 19_999;
    expect(limiter.allowRequestSync('a').allowed).toBe(false);
    clock.now = 20_000;
    expect(limiter.allowRequestSync('a', { cost: 2 }).allowed).toBe(true);
  });

  it('never reports retryAfter above the window, whatever the order of readings', () => {
    const { clock, limiter } = setup(3, 5);
    const readings = [50_000, 10_000, 49_000, 0, 80_000, 79_999, 1, 80_001, 2];
    for (const t of readings) {
      clock.now = t;
      const r = limiter.allowRequestSync('a');
      expect(r.retryAfter).toBeGreaterThanOrEqual(0);
      expect(r.retryAfter).toBeLessThanOrEqual(5);
      expect(r.resetAfter).toBeLessThanOrEqual(5);
    }
  });
});
