// Reservations and penalties with a store (a RefundingStore): under the key's lock, so that
// decide-then-refund holds the limit under real concurrency. The store double awaits between
// reading and writing in every operation (test/support/refunding-store.ts).
import { describe, expect, it } from 'vitest';
import { RateLimiter } from '../../src/index.js';
import { MapRefundingStore } from '../support/refunding-store.js';

/** A password check that takes a few turns of the event loop, as a real one awaits. */
async function check(succeeds: boolean): Promise<boolean> {
  for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
  return succeeds;
}

describe('reserve with a RefundingStore', () => {
  it('the store double races without the lock (so the tests below can fail)', async () => {
    const store = new MapRefundingStore();
    const q = { threshold: 5, windowMs: 60_000, windowSeconds: 60 } as never;
    const outcomes = await Promise.all(Array.from({ length: 50 }, () => store.reserve('k', 0, 1, q)));
    expect(outcomes.filter((o) => o.result.allowed).length).toBeGreaterThan(5);
  });

  it('200 parallel failed attempts: exactly threshold reach the check', async () => {
    const store = new MapRefundingStore();
    const limiter = new RateLimiter({ threshold: 5, windowSeconds: 900, strategy: store, clock: () => 0 });
    let checks = 0;
    await Promise.all(
      Array.from({ length: 200 }, async () => {
        const attempt = await limiter.reserve('alice:10.0.0.1');
        if (!attempt.allowed) return;
        checks++;
        if (await check(false)) await attempt.refund();
      }),
    );
    expect(checks).toBe(5);
    expect(store.counts.get('alice:10.0.0.1')).toBe(5);
    expect(limiter.stats()).toMatchObject({ allowed: 5, rejected: 195 });
  });

  it('parallel attempts, some succeeding (refunded): the count never exceeds the threshold nor goes below 0, and ends at the failures kept', async () => {
    const store = new MapRefundingStore();
    const limiter = new RateLimiter({ threshold: 5, windowSeconds: 900, strategy: store, clock: () => 0 });
    let failuresKept = 0;
    await Promise.all(
      Array.from({ length: 100 }, async (_, i) => {
        const attempt = await limiter.reserve('k');
        if (!attempt.allowed) return;
        if (await check(i % 3 === 0)) expect(await attempt.refund()).toBe(true);
        else failuresKept++;
      }),
    );
    expect(store.highest).toBeLessThanOrEqual(5);
    expect(store.negative).toBe(false);
    expect(store.counts.get('k')).toBe(failuresKept);
    expect(failuresKept).toBeGreaterThan(0);
  });

  it('concurrent refunds of one reservation never give back more than its cost', async () => {
    const store = new MapRefundingStore();
    const limiter = new RateLimiter({ threshold: 5, windowSeconds: 60, strategy: store, clock: () => 0 });
    const r = await limiter.reserve('k', { cost: 3 });
    const outcomes = await Promise.allSettled([r.refund(2), r.refund(2), r.refund(1), r.refund()]);
    const given = outcomes.map((o, i) => (o.status === 'fulfilled' && o.value ? [2, 2, 1, 0][i] : 0));
    expect(outcomes[1]).toMatchObject({ status: 'rejected' }); // 2 more than the 1 left
    expect(given.reduce((a, b) => (a ?? 0) + (b ?? 0), 0)).toBe(3);
    expect(store.counts.get('k')).toBe(0);
    expect(await r.refund()).toBe(false);
  });

  it('penalty: recorded by the store under the key lock, reports its peek', async () => {
    const store = new MapRefundingStore();
    const limiter = new RateLimiter({ threshold: 5, windowSeconds: 60, strategy: store, clock: () => 0 });
    await Promise.all([limiter.penalty('k', 2), limiter.allowRequest('k'), limiter.penalty('k', 2)]);
    expect(store.counts.get('k')).toBe(5);
    await expect(limiter.penalty('k', 6)).rejects.toThrow(RangeError);
    expect(await limiter.penalty('k')).toMatchObject({ allowed: false, remaining: 0 });
    expect(limiter.stats().allowed).toBe(1);
  });
});
