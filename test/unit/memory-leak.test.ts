// Many distinct keys, time passes, one sweep: nothing is left behind.
import { describe, expect, it } from 'vitest';
import { RateLimiter, type Limit, type RateLimitResult, type RateLimitStrategy } from '../../src/index.js';

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

  it('with an asynchronous strategy, the mutex map and the state map are both empty afterwards', async () => {
    class Remote implements RateLimitStrategy<{ last: number }> {
      readonly name = 'remote';
      readonly synchronous = false;
      createState() {
        return { last: 0 };
      }
      async consume(_k: string, s: { last: number }, now: number, _c: number, limit: Limit): Promise<RateLimitResult> {
        await Promise.resolve();
        s.last = now;
        return { allowed: true, remaining: limit.threshold - 1, retryAfter: 0, limit: limit.threshold, resetAfter: 0 };
      }
      async peek(_k: string, _s: unknown, _n: number, _c: number, limit: Limit): Promise<RateLimitResult> {
        return { allowed: true, remaining: limit.threshold, retryAfter: 0, limit: limit.threshold, resetAfter: 0 };
      }
      sweep(s: { last: number }, now: number, limit: Limit) {
        return s.last + limit.windowMs <= now;
      }
    }
    let now = 0;
    const limiter = new RateLimiter({ threshold: 5, windowSeconds: 1, strategy: new Remote(), clock: () => now });
    // Hold one decision in flight while sweeping: its key must not be dropped under it.
    const keys = Array.from({ length: 20_000 }, (_, i) => `k${i}`);
    await Promise.all(keys.map((k) => limiter.allowRequest(k)));
    expect(limiter.size).toBe(20_000);
    now = 1_000;
    const inFlight = limiter.allowRequest('k0');
    expect(limiter.cleanUp()).toBe(19_999); // k0 is locked: skipped
    await inFlight;
    now = 2_000;
    expect(limiter.cleanUp()).toBe(1);
    expect(limiter.size).toBe(0);
  });
});
