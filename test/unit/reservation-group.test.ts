// RateLimitGroup.reserve / reserveSync: one reservation per limit, refunds per limit and of
// all, and never a charge on one limit when another refuses.
import { describe, expect, it } from 'vitest';
import { GCRA, RateLimitGroup, RateLimiter } from '../../src/index.js';
import { MapRefundingStore, mapBatch } from '../support/refunding-store.js';

describe('RateLimitGroup.reserveSync (in memory)', () => {
  function setup() {
    let now = 0;
    const clock = () => now;
    const perUser = new RateLimiter({ threshold: 5, windowSeconds: 900, clock });
    const perIp = new RateLimiter({ threshold: 2, windowSeconds: 86_400, clock, strategy: new GCRA() });
    const group = new RateLimitGroup([
      { limiter: perUser, name: 'user', key: (u) => `user:${typeof u === 'string' ? u : u.id}` },
      { limiter: perIp, name: 'ip', key: () => 'ip:10.0.0.1' },
    ]);
    return { perUser, perIp, group, advance: (ms: number) => (now += ms) };
  }

  it('one reservation per limit, in member order; refunding one refunds that limit only', () => {
    const { perUser, perIp, group } = setup();
    const r = group.reserveSync('alice', { cost: 2 });
    expect(r.allowed).toBe(true);
    expect(r.reservations.map((m) => [m.allowed, m.cost])).toEqual([
      [true, 2],
      [true, 2],
    ]);
    expect(r.reservations[0]!.refund(1)).toBe(true);
    expect(perUser.peekSync('user:alice').remaining).toBe(4);
    expect(perIp.peekSync('ip:10.0.0.1').remaining).toBe(0);
    // The group's refund gives back what is left on each: 1 on the first, 2 on the second.
    expect(r.refund()).toBe(true);
    expect(perUser.peekSync('user:alice').remaining).toBe(5);
    expect(perIp.peekSync('ip:10.0.0.1').remaining).toBe(2);
    expect(r.refund()).toBe(false);
  });

  it('units above what a limit has left: a RangeError before any limit is refunded', () => {
    const { perUser, group } = setup();
    const r = group.reserveSync('alice', { cost: 2 });
    r.reservations[0]!.refund(1);
    expect(() => r.refund(2)).toThrow(/`units` to be an integer from 1 to 1/);
    expect(perUser.peekSync('user:alice').remaining).toBe(4);
    expect(r.refund(1)).toBe(true);
  });

  it('never charged when another limit refuses; the refused reservation refunds nothing', () => {
    const { perUser, perIp, group } = setup();
    group.reserveSync('alice', { cost: 2 }); // the IP limit is now full
    const refused = group.reserveSync('bob');
    expect(refused.allowed).toBe(false);
    expect(perUser.peekSync('user:bob').remaining).toBe(5); // not charged
    expect(refused.refund()).toBe(false);
    expect(refused.reservations.map((m) => m.refund())).toEqual([false, false]);
    expect(perIp.stats()).toMatchObject({ allowed: 1, rejected: 1 });
    expect(perUser.stats()).toMatchObject({ allowed: 1, rejected: 0 });
  });

  it('the promise form resolves the same, and refunds resolve', async () => {
    const { perUser, group } = setup();
    const r = await group.reserve('alice');
    expect(r.allowed).toBe(true);
    await expect(r.refund()).resolves.toBe(true);
    expect(perUser.peekSync('user:alice').remaining).toBe(5);
  });
});

describe('RateLimitGroup.reserve with stores', () => {
  it('a store and an in-memory limit: tickets from the store, the in-memory one committed after it', async () => {
    const store = new MapRefundingStore();
    const stored = new RateLimiter({ threshold: 2, windowSeconds: 60, strategy: store, clock: () => 0 });
    const local = new RateLimiter({ threshold: 3, windowSeconds: 60, clock: () => 0 });
    const group = new RateLimitGroup([stored, local]);
    const r = await group.reserve('k');
    expect(r.allowed).toBe(true);
    expect(store.counts.get('k')).toBe(1);
    expect(local.peekSync('k').remaining).toBe(2);
    await expect(r.refund()).resolves.toBe(true);
    expect(store.counts.get('k')).toBe(0);
    expect(local.peekSync('k').remaining).toBe(3);
  });

  // Found by the attack on issue 22: a group refund that failed for one limit had given back on
  // another already. Now every clock is read first, and the stores refund before memory.
  it('a group refund whose store refund fails leaves the in-memory limit as it was; a failing clock leaves every limit', async () => {
    const store = new MapRefundingStore();
    const stored = new RateLimiter({ threshold: 2, windowSeconds: 60, strategy: store, clock: () => 0 });
    let localNow = 0;
    const local = new RateLimiter({ threshold: 3, windowSeconds: 60, clock: () => localNow });
    const group = new RateLimitGroup([local, stored]);
    const r = await group.reserve('k');
    expect(r.allowed).toBe(true);
    const failing = new Error('store down');
    store.refund = () => Promise.reject(failing);
    await expect(r.refund()).rejects.toBe(failing);
    expect(local.peekSync('k').remaining).toBe(2);
    expect(store.counts.get('k')).toBe(1);
    localNow = Number.NaN;
    delete (store as { refund?: unknown }).refund; // the prototype's again
    await expect(r.refund()).rejects.toThrow(RangeError);
    expect(store.counts.get('k')).toBe(1);
    localNow = 1;
    await expect(r.refund()).resolves.toBe(true);
    expect(local.peekSync('k').remaining).toBe(3);
    expect(store.counts.get('k')).toBe(0);
  });

  it('200 parallel group reservations: exactly the smaller limit gets through, and the other is never charged beyond it', async () => {
    const store = new MapRefundingStore();
    const stored = new RateLimiter({ threshold: 5, windowSeconds: 60, strategy: store, clock: () => 0 });
    const local = new RateLimiter({ threshold: 100, windowSeconds: 60, clock: () => 0 });
    const group = new RateLimitGroup([stored, local]);
    const outcomes = await Promise.all(Array.from({ length: 200 }, () => group.reserve('k')));
    expect(outcomes.filter((o) => o.allowed).length).toBe(5);
    expect(store.counts.get('k')).toBe(5);
    expect(local.peekSync('k').remaining).toBe(95);
  });

  it('stores sharing a batch: reserveAll decides the group in one step, with tickets', async () => {
    const batch = mapBatch(true);
    const a = new MapRefundingStore(batch);
    const b = new MapRefundingStore(batch);
    batch.stores.push(a, b);
    const group = new RateLimitGroup([
      new RateLimiter({ threshold: 2, windowSeconds: 60, strategy: a, clock: () => 0 }),
      new RateLimiter({ threshold: 1, windowSeconds: 60, strategy: b, clock: () => 0 }),
    ]);
    const first = await group.reserve('k');
    const second = await group.reserve('k');
    expect([first.allowed, second.allowed]).toEqual([true, false]);
    expect([a.counts.get('k'), b.counts.get('k')]).toEqual([1, 1]);
    await expect(second.refund()).resolves.toBe(false);
    await expect(first.refund()).resolves.toBe(true);
    expect([a.counts.get('k'), b.counts.get('k')]).toEqual([0, 0]);
  });

  it('a batch without reserveAll, or a store that cannot refund: a TypeError before anything is decided', async () => {
    const batch = mapBatch(false);
    const a = new MapRefundingStore(batch);
    const b = new MapRefundingStore(batch);
    batch.stores.push(a, b);
    const group = new RateLimitGroup([
      new RateLimiter({ threshold: 2, windowSeconds: 60, strategy: a, clock: () => 0 }),
      new RateLimiter({ threshold: 1, windowSeconds: 60, strategy: b, clock: () => 0 }),
    ]);
    await expect(group.reserve('k')).rejects.toThrow(/`reserveAll`/);
    expect(a.counts.size).toBe(0);
    const plain = {
      name: 'plain-store',
      consume: () => Promise.resolve({ allowed: true, remaining: 0, retryAfter: 0, limit: 1, resetAfter: 0 }),
      peek: () => Promise.resolve({ allowed: true, remaining: 0, retryAfter: 0, limit: 1, resetAfter: 0 }),
    };
    const local = new RateLimiter({ threshold: 1, windowSeconds: 60 });
    const mixed = new RateLimitGroup([local, new RateLimiter({ threshold: 1, windowSeconds: 60, strategy: plain })]);
    await expect(mixed.reserve('k')).rejects.toThrow(/got the store `plain-store`/);
    expect(() => mixed.reserveSync('k')).toThrow(/use `reserve` instead/);
    expect(local.stats().allowed).toBe(0);
  });
});

describe('a penalty while a group holds the key between its check and its record', () => {
  it('the group request counts as recorded first: it is recorded all the same, and so is the penalty', async () => {
    const store = new MapRefundingStore();
    const stored = new RateLimiter({ threshold: 5, windowSeconds: 60, strategy: store, clock: () => 0 });
    const local = new RateLimiter({ threshold: 3, windowSeconds: 60, clock: () => 0 });
    const group = new RateLimitGroup([stored, local]);
    const pending = group.reserve('k', { cost: 2 });
    // The group awaits its store: the in-memory key is reserved and locked.
    await new Promise((resolve) => setImmediate(resolve));
    const after = local.penaltySync('k', 3);
    expect(after.allowed).toBe(false);
    const r = await pending;
    expect(r.allowed).toBe(true);
    expect(r.reservations[1]!.allowed).toBe(true);
    // 2 reserved + 3 of penalty on a log of threshold 3: the newest 3 entries are kept.
    expect(local.peekSync('k').remaining).toBe(0);
    expect(local.stats().allowed).toBe(1);
  });

  it('the promise form waits for the group', async () => {
    const store = new MapRefundingStore();
    const stored = new RateLimiter({ threshold: 5, windowSeconds: 60, strategy: store, clock: () => 0 });
    const local = new RateLimiter({ threshold: 3, windowSeconds: 60, clock: () => 0 });
    const group = new RateLimitGroup([stored, local]);
    const pending = group.reserve('k', { cost: 2 });
    await new Promise((resolve) => setImmediate(resolve));
    const penalized = local.penalty('k', 1);
    const r = await pending;
    expect(r.allowed).toBe(true);
    expect(await penalized).toMatchObject({ allowed: false, remaining: 0 });
  });
});
