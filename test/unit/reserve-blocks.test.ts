// Reservations and penalties go through the same core operation as allowRequest, so blocks
// apply to them: a reserve refused by the limit starts the block, a reserve during a block is
// refused (and holds no ticket), and a penalty's result reports a block in force. Found when
// merging the reservations with the blocks: reserve bypassed them.
import { describe, expect, it } from 'vitest';
import { FixedWindow, GCRA, RateLimiter, SlidingWindowCounter, SlidingWindowLog, TokenBucket, type RateLimitStrategy } from '../../src/index.js';

const STRATEGIES: readonly RateLimitStrategy[] = [new SlidingWindowLog(), new FixedWindow(), new SlidingWindowCounter(), new TokenBucket(), new GCRA()] as readonly RateLimitStrategy[];

describe.each(STRATEGIES.map((s) => [s.name, s] as const))('%s: blocks apply to reserve and penalty', (_name, strategy) => {
  it('a refused reserve starts the block; reserve and allowRequest during it are refused with its time', async () => {
    let now = 0;
    const limiter = new RateLimiter({ threshold: 2, windowSeconds: 10, blockSeconds: 100, strategy, clock: () => now });
    expect((await limiter.reserve('a')).allowed).toBe(true);
    expect(limiter.reserveSync('a').allowed).toBe(true);
    const refused = await limiter.reserve('a');
    expect(refused.allowed).toBe(false);
    expect(refused.retryAfter).toBe(100);
    expect(limiter.stats().blocked).toBe(1);
    // Its refund gives nothing back: nothing was recorded.
    expect(await refused.refund()).toBe(false);
    now = 30_000; // the window is clear, the block is not
    const during = limiter.reserveSync('a');
    expect(during.allowed).toBe(false);
    expect(during.retryAfter).toBe(70);
    expect(during.remaining).toBe(0);
    expect((await limiter.allowRequest('a')).allowed).toBe(false);
    now = 99_999;
    expect(limiter.reserveSync('a').allowed).toBe(false);
    now = 100_000; // exactly the block's end
    expect(limiter.reserveSync('a').allowed).toBe(true);
  });

  it("a penalty's result reports a block in force, and a penalty alone starts none", () => {
    let now = 0;
    const limiter = new RateLimiter({ threshold: 2, windowSeconds: 10, blockSeconds: 100, strategy, clock: () => now });
    const after = limiter.penaltySync('a', 2);
    expect(after.allowed).toBe(false);
    expect(limiter.stats().blocked).toBe(0);
    limiter.blockSync('a', 50);
    now = 1_000;
    const blocked = limiter.penaltySync('a', 1);
    expect(blocked.allowed).toBe(false);
    expect(blocked.remaining).toBe(0);
    expect(blocked.retryAfter).toBeGreaterThanOrEqual(49);
  });
});
