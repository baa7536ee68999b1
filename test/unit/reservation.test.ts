// Reservations (RateLimiter.reserve / reserveSync, Reservation.refund) and penalties
// (penalty / penaltySync), in memory: the edge cases of each strategy, with an injected clock.
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  FixedWindow,
  GCRA,
  RateLimiter,
  RateWardenTypeError,
  SlidingWindowCounter,
  SlidingWindowLog,
  TokenBucket,
  type RateLimitStrategy,
} from '../../src/index.js';

const strategies = {
  'sliding-window-log': () => new SlidingWindowLog(),
  'fixed-window': () => new FixedWindow(),
  'sliding-window-counter': () => new SlidingWindowCounter(),
  'token-bucket': () => new TokenBucket(),
  gcra: () => new GCRA(),
} as const;
type Name = keyof typeof strategies;
const rate = (name: Name): boolean => name === 'token-bucket' || name === 'gcra';

function limiterOf(name: Name, threshold = 4, windowSeconds = 1) {
  const clock = { now: 1_000 };
  const limiter = new RateLimiter({ threshold, windowSeconds, clock: () => clock.now, strategy: strategies[name]() as SlidingWindowLog });
  return { limiter, clock };
}

afterEach(() => {
  vi.useRealTimers();
});

describe.each(Object.keys(strategies) as Name[])('%s: reservations', (name) => {
  it('reports the decision as allowRequest does, with its cost', () => {
    const { limiter } = limiterOf(name);
    const other = limiterOf(name).limiter;
    const r = limiter.reserveSync('k', { cost: 3 });
    expect(r).toMatchObject({ ...other.allowRequestSync('k', { cost: 3 }), cost: 3 });
    expect(typeof r.refund).toBe('function');
  });

  it('a refused reservation refunds nothing (false), but its argument is still checked', () => {
    const { limiter } = limiterOf(name);
    limiter.allowRequestSync('k', { cost: 4 });
    const refused = limiter.reserveSync('k');
    expect(refused.allowed).toBe(false);
    expect(refused.refund()).toBe(false);
    expect(refused.refund(1)).toBe(false);
    expect(() => refused.refund('1' as never)).toThrow(TypeError);
    expect(limiter.peekSync('k').remaining).toBe(0);
  });

  it('refunds all by default, once: a second refund is a no-op', () => {
    const { limiter } = limiterOf(name);
    const r = limiter.reserveSync('k', { cost: 3 });
    expect(limiter.peekSync('k').remaining).toBe(1);
    expect(r.refund()).toBe(true);
    expect(limiter.peekSync('k').remaining).toBe(4);
    expect(r.refund()).toBe(false);
    expect(limiter.peekSync('k').remaining).toBe(4);
  });

  it('partial then the rest; more than is left is a RangeError naming `units`', () => {
    const { limiter } = limiterOf(name);
    const r = limiter.reserveSync('k', { cost: 3 });
    expect(r.refund(1)).toBe(true);
    expect(limiter.peekSync('k').remaining).toBe(2);
    expect(() => r.refund(3)).toThrow(/`units` to be an integer from 1 to 2, got `3`/);
    expect(limiter.peekSync('k').remaining).toBe(2);
    expect(r.refund(2)).toBe(true);
    expect(limiter.peekSync('k').remaining).toBe(4);
    expect(r.refund(1)).toBe(false);
  });

  it.each([0, -1, 1.5, Number.NaN, Infinity])('units %s: RangeError, nothing given back', (units) => {
    const { limiter } = limiterOf(name);
    const r = limiter.reserveSync('k', { cost: 2 });
    expect(() => r.refund(units)).toThrow(RangeError);
    expect(limiter.peekSync('k').remaining).toBe(2);
  });

  it.each(['1', null, {}, 1n])('units %s: TypeError', (units) => {
    const { limiter } = limiterOf(name);
    const r = limiter.reserveSync('k', { cost: 2 });
    expect(() => r.refund(units as never)).toThrow(TypeError);
    expect(limiter.peekSync('k').remaining).toBe(2);
  });

  it('after the window moved on: a no-op for the window strategies (exact: it no longer counts)', () => {
    const { limiter, clock } = limiterOf(name);
    const r = limiter.reserveSync('k', { cost: 4 });
    clock.now += 2_000;
    // Token bucket and GCRA: nothing recorded since, so the give-back is exact (and changes nothing now).
    expect(r.refund()).toBe(rate(name));
    expect(limiter.peekSync('k').remaining).toBe(4);
    limiter.allowRequestSync('k', { cost: 4 });
    expect(limiter.peekSync('k').remaining).toBe(0);
  });

  it('after reset: a no-op, even for a new request at the same millisecond', () => {
    const { limiter } = limiterOf(name);
    const r = limiter.reserveSync('k', { cost: 2 });
    limiter.reset('k');
    limiter.allowRequestSync('k', { cost: 3 });
    expect(r.refund()).toBe(false);
    expect(limiter.peekSync('k').remaining).toBe(1);
  });

  it('after a sweep forgot the key: a no-op', () => {
    const { limiter, clock } = limiterOf(name);
    const r = limiter.reserveSync('k', { cost: 2 });
    clock.now += 3_000;
    expect(limiter.cleanUp()).toBe(1);
    limiter.allowRequestSync('k', { cost: 3 });
    expect(r.refund()).toBe(false);
    expect(limiter.peekSync('k').remaining).toBe(1);
  });

  it('another decision at the same millisecond: only this one is given back (or, for the rate strategies, only once that one is)', () => {
    const { limiter, clock } = limiterOf(name, 6);
    limiter.allowRequestSync('k'); // opens the window / anchors the grid
    clock.now += 10;
    const a = limiter.reserveSync('k', { cost: 2 });
    const b = limiter.reserveSync('k', { cost: 1 });
    expect(limiter.peekSync('k').remaining).toBe(2);
    if (rate(name)) {
      expect(a.refund()).toBe(false); // something recorded since
      expect(limiter.peekSync('k').remaining).toBe(2);
      expect(b.refund()).toBe(true); // the latest: exact
      expect(a.refund()).toBe(true); // the latest again
    } else {
      expect(a.refund()).toBe(true);
      expect(limiter.peekSync('k').remaining).toBe(4);
      expect(b.refund()).toBe(true);
    }
    expect(limiter.peekSync('k').remaining).toBe(5);
    expect(a.refund()).toBe(false);
  });

  it('is not a decision: not counted, no decision event', () => {
    const { limiter } = limiterOf(name);
    const seen = vi.fn();
    limiter.on('decision', seen);
    const r = limiter.reserveSync('k', { cost: 2 });
    expect(seen).toHaveBeenCalledTimes(1);
    r.refund();
    expect(seen).toHaveBeenCalledTimes(1);
    expect(limiter.stats()).toMatchObject({ allowed: 1, rejected: 0 });
  });

  it('the promise API: reserve and refund resolve; bad units reject', async () => {
    const { limiter } = limiterOf(name);
    const r = await limiter.reserve('k', { cost: 2 });
    expect(r.allowed).toBe(true);
    await expect(r.refund(5)).rejects.toThrow(RangeError);
    await expect(r.refund(1)).resolves.toBe(true);
    await expect(r.refund()).resolves.toBe(true);
    await expect(r.refund()).resolves.toBe(false);
    expect(limiter.peekSync('k').remaining).toBe(4);
    await expect(limiter.reserve('', undefined)).rejects.toThrow(RangeError);
  });

  it('a refund lets a waitForSlot waiter of the key through at once', async () => {
    vi.useFakeTimers();
    const { limiter } = limiterOf(name, 1, 60);
    const r = limiter.reserveSync('k');
    let served = false;
    const waiting = limiter.waitForSlot('k').then((result) => {
      served = result.allowed;
    });
    await vi.advanceTimersByTimeAsync(0);
    expect(served).toBe(false);
    expect(r.refund()).toBe(true);
    await vi.advanceTimersByTimeAsync(0);
    expect(served).toBe(true);
    await waiting;
  });
});

describe.each(Object.keys(strategies) as Name[])('%s: penalties', (name) => {
  it('records points without asking, even when exhausted, and reports a peek of cost 1', () => {
    const { limiter } = limiterOf(name);
    const seen = vi.fn();
    limiter.on('decision', seen);
    expect(limiter.penaltySync('k', 3)).toEqual(limiter.peekSync('k'));
    expect(limiter.peekSync('k').remaining).toBe(1);
    const after = limiter.penaltySync('k', 4);
    expect(after.allowed).toBe(false);
    expect(after.remaining).toBe(0);
    expect(seen).not.toHaveBeenCalled();
    expect(limiter.stats()).toMatchObject({ allowed: 0, rejected: 0, keys: 1 });
  });

  it('points: default 1; not a number is a TypeError, out of 1..threshold a RangeError, nothing recorded', async () => {
    const { limiter } = limiterOf(name);
    limiter.penaltySync('k');
    expect(limiter.peekSync('k').remaining).toBe(3);
    for (const bad of [0, -1, 1.5, 5, Number.NaN]) expect(() => limiter.penaltySync('k', bad)).toThrow(RangeError);
    expect(() => limiter.penaltySync('k', '2' as never)).toThrow(TypeError);
    await expect(limiter.penalty('k', 5)).rejects.toThrow(/`points` to be an integer from 1 to the threshold, 4, got `5`/);
    expect(limiter.peekSync('k').remaining).toBe(3);
    await expect(limiter.penalty('k', 1)).resolves.toMatchObject({ remaining: 2 });
  });

  it('repeated penalties keep the key refused for longer (the rate strategies: beyond the window)', () => {
    const { limiter, clock } = limiterOf(name);
    for (let i = 0; i < 3; i++) limiter.penaltySync('k', 4);
    const refused = limiter.allowRequestSync('k');
    expect(refused.allowed).toBe(false);
    if (rate(name)) {
      // Token bucket / GCRA: a debt of one more bucket, refilled over two windows.
      expect(refused.retryAfter).toBeCloseTo(1.25, 5);
      clock.now += 1_249;
      expect(limiter.allowRequestSync('k').allowed).toBe(false);
      clock.now += 1;
      expect(limiter.allowRequestSync('k').allowed).toBe(true);
    } else {
      expect(refused.retryAfter).toBeLessThanOrEqual(name === 'sliding-window-counter' ? 2 : 1);
    }
  });
});

describe('sliding-window log penalties and refunds', () => {
  it('keeps only the newest threshold entries: exact for decisions', () => {
    const { limiter, clock } = limiterOf('sliding-window-log', 3);
    limiter.allowRequestSync('k'); // t = 1000
    clock.now += 400;
    limiter.penaltySync('k', 3); // t = 1400: the entry at 1000 is dropped
    expect(limiter.peekSync('k').remaining).toBe(0);
    clock.now += 999; // 2399: the penalty's entries still count
    expect(limiter.allowRequestSync('k').allowed).toBe(false);
    clock.now += 1;
    expect(limiter.allowRequestSync('k', { cost: 3 }).allowed).toBe(true);
  });

  it('a refund of a decision made before a penalty dropped entries is a no-op', () => {
    const { limiter, clock } = limiterOf('sliding-window-log', 3);
    limiter.allowRequestSync('k');
    clock.now += 1;
    const a = limiter.reserveSync('k');
    clock.now += 1;
    limiter.penaltySync('k', 2); // drops the first entry
    expect(a.refund()).toBe(false);
    expect(limiter.peekSync('k').remaining).toBe(0);
  });
});

describe('strategies of your own and stores', () => {
  const plain: RateLimitStrategy<{ n: number }> = {
    name: 'plain-counter',
    createState: () => ({ n: 0 }),
    consume: (s, _now, cost, q) => {
      const allowed = s.n + cost <= q.threshold;
      if (allowed) s.n += cost;
      return { allowed, remaining: Math.max(0, q.threshold - s.n), retryAfter: allowed ? 0 : 1, limit: q.threshold, resetAfter: 0 };
    },
    peek: (s, _now, cost, q) => ({ allowed: (s?.n ?? 0) + cost <= q.threshold, remaining: q.threshold - (s?.n ?? 0), retryAfter: 0, limit: q.threshold, resetAfter: 0 }),
    sweep: () => false,
  };

  it('a strategy without ticket and refund: reserve throws a TypeError naming it, nothing decided', async () => {
    const limiter = new RateLimiter({ threshold: 2, windowSeconds: 1, strategy: plain });
    expect(() => limiter.reserveSync('k')).toThrow(/`plain-counter` to implement `ticket` and `refund` for `reserve`/);
    await expect(limiter.reserve('k')).rejects.toThrow(RateWardenTypeError);
    expect(() => limiter.penaltySync('k')).toThrow(/`plain-counter` to implement `penalty`/);
    await expect(limiter.penalty('k')).rejects.toThrow(TypeError);
    expect(limiter.stats().allowed).toBe(0);
    expect(limiter.size).toBe(0);
  });

  it('a store that cannot refund: reserve and penalty reject with a TypeError naming it; the sync forms are not synchronous', async () => {
    const store = {
      name: 'plain-store',
      consume: vi.fn(() => Promise.resolve({ allowed: true, remaining: 1, retryAfter: 0, limit: 2, resetAfter: 0 })),
      peek: vi.fn(() => Promise.resolve({ allowed: true, remaining: 1, retryAfter: 0, limit: 2, resetAfter: 0 })),
    };
    const limiter = new RateLimiter({ threshold: 2, windowSeconds: 1, strategy: store });
    await expect(limiter.reserve('k')).rejects.toThrow(/RefundingStore .*`reserve`, got the store `plain-store`/);
    await expect(limiter.penalty('k')).rejects.toThrow(/`penalty`, got the store `plain-store`/);
    expect(() => limiter.reserveSync('k')).toThrow(/use `reserve` instead/);
    expect(() => limiter.penaltySync('k')).toThrow(/use `penalty` instead/);
    expect(store.consume).not.toHaveBeenCalled();
  });

  it('a penalty on a new key under maxKeys with no clear key: a RangeError, nothing recorded', () => {
    let now = 0;
    const limiter = new RateLimiter({ threshold: 2, windowSeconds: 1, maxKeys: 1, clock: () => now });
    limiter.allowRequestSync('a');
    expect(() => limiter.penaltySync('b')).toThrow(RangeError);
    expect(limiter.size).toBe(1);
    now = 1_000; // 'a' is clear: forgotten to make room
    limiter.penaltySync('b', 2);
    expect(limiter.size).toBe(1);
    expect(limiter.peekSync('b').allowed).toBe(false);
  });
});
