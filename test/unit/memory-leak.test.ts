// Many distinct keys, time passes, one sweep: nothing is left behind.
import { describe, expect, it } from 'vitest';
import { deciderOf } from '../../src/decider.js';
import { RateLimiter, SlidingWindowLog } from '../../src/index.js';
import { AwaitingStore } from '../support/stores.js';

describe('memory: keys are forgotten once their window is clear', () => {
  it('100,000 keys, each with a request, all dropped by cleanUp after the window', () => {
    let now = 0;
    const limiter = new RateLimiter({ threshold: 10, windowSeconds: 60, clock: () => now });
    for (let i = 0; i < 100_000; i++) {
      now = i / 10; // 10 keys per millisecond: 10 s in all
      limiter.allowRequestSync(`client-${i}`, { cost: 1 + (i % 3) });
    }
    expect(limiter.size).toBe(100_000);
    now = 59_999; // the first keys' requests (at 0 ms) are clear only at 60,000 ms
    expect(limiter.cleanUp()).toBe(0);
    now = 60_000 + 5_000; // keys whose request was at <= 5000 ms are clear
    expect(limiter.cleanUp()).toBe(50_001);
    now = 70_000;
    expect(limiter.cleanUp()).toBe(49_999);
    expect(limiter.size).toBe(0);
  });

  it('with a store, the mutex map is empty afterwards and the limiter keeps no key (the store keeps its own)', async () => {
    // (The in-memory contract decides synchronously, so no in-memory decision is ever in flight
    // while a sweep runs; what a limiter with a store holds per key is only its mutex entries.)
    let now = 0;
    const store = new AwaitingStore(new SlidingWindowLog());
    const limiter = new RateLimiter({ threshold: 5, windowSeconds: 1, strategy: store, clock: () => now });
    const mutex = deciderOf(limiter)?.mutex;
    const keys = Array.from({ length: 20_000 }, (_, i) => `k${i}`);
    const pending = Promise.all(keys.map((k) => limiter.allowRequest(k)));
    expect(mutex?.size).toBe(20_000); // every key's decision holds its lock while in flight
    expect((await pending).every((r) => r.allowed)).toBe(true);
    expect(mutex?.size).toBe(0);
    expect(limiter.size).toBe(0);
    now = 1_000;
    expect(limiter.cleanUp()).toBe(0);
    expect(store.states.size).toBe(20_000);
  });
});
