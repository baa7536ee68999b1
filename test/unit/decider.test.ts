// The decider with a store: real concurrency with a store that awaits between reading and writing its
// state, made exact by the limiter's per-key async mutex.
import { describe, expect, it } from 'vitest';
import { RateLimitGroup, RateLimiter, createQuota } from '../../src/index.js';
import type { RateLimitStore } from '../../src/index.js';
import { AwaitingCounter } from '../support/stores.js';

describe('an awaiting store driven concurrently', () => {
  it('without the limiter, over-admits (the race the mutex exists to prevent)', async () => {
    const store = new AwaitingCounter();
    const quota = createQuota({ threshold: 10, windowSeconds: 1 });
    const results = await Promise.all(Array.from({ length: 100 }, () => store.consume('k', 0, 1, quota)));
    expect(results.filter((r) => r.allowed).length).toBeGreaterThan(10);
  });

  it('through the limiter, allows exactly threshold with distinct remaining values', async () => {
    const limiter = new RateLimiter({ threshold: 10, windowSeconds: 1, strategy: new AwaitingCounter(), clock: () => 0 });
    const results = await Promise.all(Array.from({ length: 100 }, () => limiter.allowRequest('k')));
    const allowed = results.filter((r) => r.allowed);
    expect(allowed.length).toBe(10);
    expect(allowed.map((r) => r.remaining)).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
    expect(results.slice(10).every((r) => !r.allowed)).toBe(true);
  });

  it('serves one key in arrival order (FIFO) and with costs', async () => {
    const limiter = new RateLimiter({ threshold: 10, windowSeconds: 1, strategy: new AwaitingCounter(), clock: () => 0 });
    const costs = [3, 5, 4, 2, 1];
    const results = await Promise.all(costs.map((cost) => limiter.allowRequest('k', { cost })));
    expect(results.map((r) => r.allowed)).toEqual([true, true, false, true, false]);
    expect(results.map((r) => r.remaining)).toEqual([7, 2, 2, 0, 0]);
  });

  it('never makes different keys wait for each other', async () => {
    const strategy = new AwaitingCounter();
    let open!: () => void;
    strategy.gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const limiter = new RateLimiter({ threshold: 5, windowSeconds: 1, strategy, clock: () => 0 });
    let blockedSettled = false;
    const blocked = limiter.allowRequest('blocked').then((r) => {
      blockedSettled = true;
      return r;
    });
    const others = await Promise.all(['a', 'b', 'c'].map((k) => limiter.allowRequest(k)));
    expect(others.every((r) => r.allowed)).toBe(true);
    expect(blockedSettled).toBe(false);
    open();
    expect((await blocked).allowed).toBe(true);
  });

  it('a failing strategy rejects the calls it fails, releases the lock and changes nothing', async () => {
    const strategy = new AwaitingCounter();
    const limiter = new RateLimiter({ threshold: 3, windowSeconds: 1, strategy, clock: () => 0 });
    await limiter.allowRequest('k');
    strategy.failFor = 'k';
    const settled = await Promise.allSettled([limiter.allowRequest('k'), limiter.allowRequest('k')]);
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected']);
    expect(String((settled[0] as PromiseRejectedResult).reason)).toMatch(/store unavailable for k/);
    strategy.failFor = undefined;
    const after = await Promise.all([limiter.allowRequest('k'), limiter.allowRequest('k'), limiter.allowRequest('k')]);
    expect(after.map((r) => r.remaining)).toEqual([1, 0, 0]);
    expect(after.map((r) => r.allowed)).toEqual([true, true, false]);
  });

  it('reset during a decision in flight: the limiter keeps nothing of a store, so nothing is forgotten or put back', async () => {
    // (With the in-memory contract decisions are synchronous: no decision is ever in flight on
    // state the limiter holds, so the old case of a reset racing a first request is gone.)
    const strategy = new AwaitingCounter();
    let open!: () => void;
    strategy.gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const limiter = new RateLimiter({ threshold: 1, windowSeconds: 1, strategy, clock: () => 0 });
    const first = limiter.allowRequest('blocked');
    await Promise.resolve();
    expect(limiter.reset('blocked')).toBe(false);
    open();
    expect((await first).allowed).toBe(true);
    expect(limiter.size).toBe(0);
    strategy.gate = undefined;
    // The store kept its count: the next request is over the threshold of 1.
    expect((await limiter.allowRequest('blocked')).allowed).toBe(false);
    expect(strategy.counts.get('blocked')).toBe(1);
  });

  it('a failing first request leaves no state for the key', async () => {
    const strategy = new AwaitingCounter();
    strategy.failFor = 'new';
    const limiter = new RateLimiter({ threshold: 3, windowSeconds: 1, strategy, clock: () => 0 });
    await expect(limiter.allowRequest('new')).rejects.toThrow(/store unavailable/);
    expect(limiter.size).toBe(0);
    expect(strategy.counts.has('new')).toBe(false);
  });

  it('peek waits for queued decisions on the key', async () => {
    const limiter = new RateLimiter({ threshold: 5, windowSeconds: 1, strategy: new AwaitingCounter(), clock: () => 0 });
    const decisions = [limiter.allowRequest('k'), limiter.allowRequest('k')];
    const peeked = await limiter.peek('k');
    await Promise.all(decisions);
    expect(peeked.remaining).toBe(3);
  });

  it('reads the clock inside the critical section, after the lock is acquired', async () => {
    const readings: number[] = [];
    let now = 0;
    const strategy = new AwaitingCounter();
    const original = strategy.consume.bind(strategy);
    strategy.consume = async (key, nowMs, cost, quota) => {
      readings.push(nowMs);
      const result = await original(key, nowMs, cost, quota);
      now += 1; // time passes while the holder works
      return result;
    };
    const limiter = new RateLimiter({ threshold: 5, windowSeconds: 1, strategy, clock: () => now });
    await Promise.all([limiter.allowRequest('k'), limiter.allowRequest('k'), limiter.allowRequest('k')]);
    expect(readings).toEqual([0, 1, 2]);
  });

  it('two limiters on one store share its per-key lock: exact across both (found by attack)', async () => {
    const store = new AwaitingCounter();
    const a = new RateLimiter({ threshold: 5, windowSeconds: 1, strategy: store, clock: () => 0 });
    const b = new RateLimiter({ threshold: 5, windowSeconds: 1, strategy: store, clock: () => 0 });
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? a : b).allowRequest('k')));
    expect(results.filter((r) => r.allowed)).toHaveLength(5);
    expect(store.counts.get('k')).toBe(5);
  });

  it('reads a store\'s atomic once: a getter cannot answer differently later', async () => {
    let reads = 0;
    const inner = new AwaitingCounter();
    const store: RateLimitStore = {
      name: 'flaky-atomic',
      get atomic() {
        reads++;
        return reads > 1; // false when the limiter reads it, true afterwards
      },
      consume: (...args) => inner.consume(...args),
      peek: (...args) => inner.peek(...args),
    };
    const limiter = new RateLimiter({ threshold: 3, windowSeconds: 1, strategy: store, clock: () => 0 });
    expect(reads).toBe(1);
    const results = await Promise.all(Array.from({ length: 6 }, () => limiter.allowRequest('k')));
    // Not atomic when read: serialised, so exactly the threshold.
    expect(results.filter((r) => r.allowed)).toHaveLength(3);
  });
});

describe('a decision with an atomic store (no lock) whose clock fails', () => {
  it('rejects the call, never throws; a waiter is rejected and leaves the queue, the next one is served', async () => {
    let fail = false;
    const limiter = new RateLimiter({
      threshold: 2,
      windowSeconds: 1,
      strategy: new AwaitingCounter(),
      clock: () => {
        if (fail) throw new Error('clock broke');
        return 0;
      },
    });
    const atomic = new RateLimiter({
      threshold: 2,
      windowSeconds: 1,
      strategy: Object.assign(new AwaitingCounter(), { atomic: true }),
      clock: () => {
        if (fail) throw new Error('clock broke');
        return 0;
      },
    });
    for (const l of [limiter, atomic]) {
      fail = true;
      let pending: Promise<unknown> | undefined;
      expect(() => {
        pending = l.allowRequest('k');
      }).not.toThrow();
      await expect(pending).rejects.toThrow('clock broke');
      await expect(l.peek('k')).rejects.toThrow('clock broke');
      const waiter = l.waitForSlot('k');
      await expect(waiter).rejects.toThrow('clock broke');
      expect(l.stats()).toMatchObject({ waiting: 0, allowed: 0, rejected: 0 });
      fail = false;
      expect(await l.waitForSlot('k')).toMatchObject({ allowed: true, remaining: 1 });
    }
  });
});

describe('the lock order: every store and every in-memory limiter has a place of its own', () => {
  it('a group over two stores on one key works, whatever was built between them', async () => {
    const first = new RateLimiter({ threshold: 2, windowSeconds: 1, strategy: new AwaitingCounter(), clock: () => 0 });
    const between = new RateLimiter({ threshold: 2, windowSeconds: 1, clock: () => 0 });
    const second = new RateLimiter({ threshold: 2, windowSeconds: 1, strategy: new AwaitingCounter(), clock: () => 0 });
    const group = new RateLimitGroup([first, between, second]);
    const results = await Promise.all([group.allowRequest('k'), group.allowRequest('k'), group.allowRequest('k')]);
    expect(results.map((r) => r.allowed)).toEqual([true, true, false]);
  });
});

describe('an atomic store is called without the key\'s lock', () => {
  it('its decisions on one key overlap; a store that is not atomic gets them one at a time', async () => {
    for (const atomic of [true, false]) {
      let inFlight = 0;
      let most = 0;
      const inner = new AwaitingCounter();
      const store: RateLimitStore = {
        name: 'overlapping',
        atomic,
        consume: async (...args) => {
          inFlight++;
          most = Math.max(most, inFlight);
          const result = await inner.consume(...args);
          inFlight--;
          return result;
        },
        peek: (...args) => inner.peek(...args),
      };
      const limiter = new RateLimiter({ threshold: 10, windowSeconds: 1, strategy: store, clock: () => 0 });
      await Promise.all([limiter.allowRequest('k'), limiter.allowRequest('k'), limiter.allowRequest('k')]);
      expect(most).toBe(atomic ? 3 : 1);
    }
  });
});
