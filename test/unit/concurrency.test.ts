// Real concurrency: an asynchronous strategy that awaits between reading and writing its state.
import { describe, expect, it } from 'vitest';
import { RateLimiter, type Limit, type RateLimitResult, type RateLimitStrategy } from '../../src/index.js';

interface CounterState {
  count: number;
}

/** Lets other promise jobs run, as a round trip to a store would. */
async function roundTrip(): Promise<void> {
  for (let i = 0; i < 3; i++) await Promise.resolve();
}

/**
 * A fixed-count strategy whose check and record are separated by awaits, like a strategy reading
 * and writing a remote store: read → await → decide → write. Not atomic on its own.
 */
class AwaitingCounter implements RateLimitStrategy<CounterState> {
  readonly name = 'awaiting-counter';
  readonly synchronous = false;
  /** When set, consume waits for this promise between read and write (for blocking tests). */
  gate: Promise<void> | undefined;
  /** When set, consume throws (after the read, before any write) for this key. */
  failFor: string | undefined;

  createState(): CounterState {
    return { count: 0 };
  }

  async consume(key: string, state: CounterState, _now: number, cost: number, limit: Limit): Promise<RateLimitResult> {
    const seen = state.count;
    await roundTrip();
    if (this.gate !== undefined && key === 'blocked') await this.gate;
    if (this.failFor === key) throw new Error(`store unavailable for ${key}`);
    if (seen + cost > limit.threshold) {
      return { allowed: false, remaining: limit.threshold - seen, retryAfter: 1, limit: limit.threshold, resetAfter: 1 };
    }
    state.count = seen + cost;
    return { allowed: true, remaining: limit.threshold - state.count, retryAfter: 0, limit: limit.threshold, resetAfter: 1 };
  }

  async peek(_key: string, state: CounterState | undefined, _now: number, _cost: number, limit: Limit): Promise<RateLimitResult> {
    await roundTrip();
    const seen = state?.count ?? 0;
    return { allowed: seen < limit.threshold, remaining: limit.threshold - seen, retryAfter: 0, limit: limit.threshold, resetAfter: 0 };
  }

  sweep(): boolean {
    return false;
  }
}

describe('an awaiting strategy driven concurrently', () => {
  it('without the limiter, over-admits (the race the mutex exists to prevent)', async () => {
    const strategy = new AwaitingCounter();
    const limit = { threshold: 10, windowMs: 1_000, windowSeconds: 1 };
    const state = strategy.createState();
    const results = await Promise.all(
      Array.from({ length: 100 }, () => strategy.consume('k', state, 0, 1, limit)),
    );
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

  it('reset during the first request of a key forgets it (no state is put back afterwards)', async () => {
    const strategy = new AwaitingCounter();
    let open!: () => void;
    strategy.gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const limiter = new RateLimiter({ threshold: 1, windowSeconds: 1, strategy, clock: () => 0 });
    const first = limiter.allowRequest('blocked');
    await Promise.resolve();
    expect(limiter.reset('blocked')).toBe(true);
    open();
    expect((await first).allowed).toBe(true);
    expect(limiter.size).toBe(0);
    strategy.gate = undefined;
    expect((await limiter.allowRequest('blocked')).allowed).toBe(true);
  });

  it('a failing first request leaves no state for the key', async () => {
    const strategy = new AwaitingCounter();
    strategy.failFor = 'new';
    const limiter = new RateLimiter({ threshold: 3, windowSeconds: 1, strategy, clock: () => 0 });
    await expect(limiter.allowRequest('new')).rejects.toThrow(/store unavailable/);
    expect(limiter.size).toBe(0);
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
    strategy.consume = async (key, state, nowMs, cost, limit) => {
      readings.push(nowMs);
      const result = await original(key, state, nowMs, cost, limit);
      now += 1; // time passes while the holder works
      return result;
    };
    const limiter = new RateLimiter({ threshold: 5, windowSeconds: 1, strategy, clock: () => now });
    await Promise.all([limiter.allowRequest('k'), limiter.allowRequest('k'), limiter.allowRequest('k')]);
    expect(readings).toEqual([0, 1, 2]);
  });
});
