// Several limits at once, all or nothing.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  GCRA,
  RateLimitGroup,
  RateLimiter,
  SlidingWindowLog,
  type RateLimitStore,
} from '../../src/index.js';
import { AwaitingCounter, AwaitingStore } from '../support/stores.js';

function pair() {
  const clock = { now: 0 };
  const read = () => clock.now;
  const perSecond = new RateLimiter({ threshold: 2, windowSeconds: 1, clock: read });
  const perTen = new RateLimiter({ threshold: 5, windowSeconds: 10, clock: read });
  const group = new RateLimitGroup([
    { limiter: perSecond, name: 'per-second' },
    { limiter: perTen, name: 'per-10s' },
  ]);
  return { clock, perSecond, perTen, group };
}

describe('RateLimitGroup (in-memory strategies)', () => {
  it('allows only when every limit allows, and then records in each', () => {
    const { clock, perSecond, perTen, group } = pair();
    const first = group.allowRequestSync('u');
    expect(first).toMatchObject({ allowed: true, remaining: 1, limit: 2, binding: 0, names: ['per-second', 'per-10s'] });
    expect(first.results.map((r) => r.remaining)).toEqual([1, 4]);
    group.allowRequestSync('u');
    const third = group.allowRequestSync('u'); // the per-second limit rejects
    expect(third).toMatchObject({ allowed: false, binding: 0, limit: 2, retryAfter: 1 });
    // Nothing was recorded in the per-10s limit by the rejected request.
    expect(perTen.peekSync('u').remaining).toBe(3);
    expect(perSecond.peekSync('u').remaining).toBe(0);
    clock.now = 1_000;
    group.allowRequestSync('u');
    group.allowRequestSync('u');
    expect(perTen.peekSync('u').remaining).toBe(1);
    clock.now = 2_000;
    group.allowRequestSync('u'); // the 5th in 10 s
    const blocked = group.allowRequestSync('u'); // per-second allows (1 left), per-10s rejects
    expect(blocked).toMatchObject({ allowed: false, binding: 1, limit: 5, remaining: 0 });
    expect(blocked.retryAfter).toBe(8); // the oldest of the 10-second window (at 0) expires at 10 s
    expect(perSecond.peekSync('u').remaining).toBe(1); // untouched by the rejection
  });

  it('reports the longest wait, and Infinity when the cost exceeds one limit', () => {
    const { group } = pair();
    expect(group.allowRequestSync('u', { cost: 3 })).toMatchObject({ allowed: false, retryAfter: Infinity, binding: 0 });
    expect(group.peekSync('u', { cost: 2 })).toMatchObject({ allowed: true, remaining: 2 });
  });

  it('limits on other keys: a per-user limit and one global limit shared by all', () => {
    const clock = { now: 0 };
    const perUser = new RateLimiter({ threshold: 3, windowSeconds: 60, clock: () => clock.now });
    const global = new RateLimiter({ threshold: 5, windowSeconds: 60, strategy: new GCRA(), clock: () => clock.now });
    const group = new RateLimitGroup([perUser, { limiter: global, key: () => 'everyone' }]);
    const outcomes = ['a', 'a', 'a', 'a', 'b', 'b', 'c', 'c'].map((u) => group.allowRequestSync(u).allowed);
    expect(outcomes).toEqual([true, true, true, false, true, true, false, false]);
    expect(global.size).toBe(1);
    expect(perUser.peekSync('c').remaining).toBe(3); // c's rejected requests recorded nothing
    expect(group.names).toEqual(['limit-1', 'limit-2']);
  });

  it('refuses the same key of the same limiter twice, and bad members', () => {
    const limiter = new RateLimiter({ threshold: 3, windowSeconds: 1 });
    const twice = new RateLimitGroup([limiter, limiter]);
    expect(() => twice.allowRequestSync('u')).toThrow(/distinct keys, got the key `u` twice/);
    const distinct = new RateLimitGroup([limiter, { limiter, key: () => 'global' }]);
    expect(distinct.allowRequestSync('u').allowed).toBe(true);
    expect(() => new RateLimitGroup([])).toThrow(TypeError);
    // eslint-disable-next-line no-sparse-arrays -- the hole is what this test checks
    expect(() => new RateLimitGroup([, limiter] as never)).toThrow(/`members\[0\]`/);
    expect(() => new RateLimitGroup([{} as never])).toThrow(/`members\[0\]`/);
    expect(() => new RateLimitGroup([{ limiter, key: 'x' } as never])).toThrow(/`members\[0\].key` to be a function/);
  });

  it('a member full under maxKeys rejects at the check: nothing is recorded anywhere', () => {
    const a = new RateLimiter({ threshold: 5, windowSeconds: 60, clock: () => 0 });
    const b = new RateLimiter({ threshold: 5, windowSeconds: 60, maxKeys: 1, clock: () => 0 });
    b.allowRequestSync('bob');
    const group = new RateLimitGroup([a, b]);
    const r = group.allowRequestSync('alice');
    expect(r).toMatchObject({ allowed: false, binding: 1 });
    expect(a.peekSync('alice').remaining).toBe(5);
    expect(group.peekSync('alice').allowed).toBe(false);
  });

  it('validates user and cost like a limiter, rejecting (never throwing) from allowRequest', async () => {
    const { group, perSecond } = pair();
    expect(() => group.allowRequestSync('')).toThrow(RangeError);
    await expect(group.allowRequest('u', { cost: 0 })).rejects.toBeInstanceOf(RangeError);
    expect(perSecond.size).toBe(0);
  });

  it('property: equals "check each, then record in all" and never over-admits any limit', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ advance: fc.integer({ min: 0, max: 700 }), cost: fc.integer({ min: 1, max: 3 }) }), { maxLength: 150 }),
        (steps) => {
          let now = 0;
          const make = () => [
            new RateLimiter({ threshold: 3, windowSeconds: 1, clock: () => now }),
            new RateLimiter({ threshold: 7, windowSeconds: 5, clock: () => now }),
          ] as const;
          const [a, b] = make();
          const [refA, refB] = make();
          const group = new RateLimitGroup([a, b]);
          const admittedAt: number[] = [];
          for (const s of steps) {
            now += s.advance;
            const r = group.allowRequestSync('k', { cost: s.cost });
            const fits = refA.peekSync('k', { cost: s.cost }).allowed && refB.peekSync('k', { cost: s.cost }).allowed;
            expect(r.allowed).toBe(fits);
            if (fits) {
              refA.allowRequestSync('k', { cost: s.cost });
              refB.allowRequestSync('k', { cost: s.cost });
              for (let i = 0; i < s.cost; i++) admittedAt.push(now);
            }
            expect(r.remaining).toBe(Math.min(refA.peekSync('k').remaining, refB.peekSync('k').remaining));
          }
          for (const t of admittedAt) {
            expect(admittedAt.filter((u) => u > t - 1_000 && u <= t).length).toBeLessThanOrEqual(3);
            expect(admittedAt.filter((u) => u > t - 5_000 && u <= t).length).toBeLessThanOrEqual(7);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('RateLimitGroup (stores)', () => {
  it('refuses one key decided twice on one store through two limiters, and locks a shared store once per key', async () => {
    const store = new AwaitingCounter();
    const a = new RateLimiter({ threshold: 5, windowSeconds: 60, strategy: store, clock: () => 0 });
    const b = new RateLimiter({ threshold: 9, windowSeconds: 60, strategy: store, clock: () => 0 });
    const same = new RateLimitGroup([a, b]);
    await expect(same.allowRequest('k')).rejects.toThrow(/got the key `k` twice for one limiter \(or one store\)/);
    expect(store.counts.size).toBe(0);
    // Different keys on the shared store: decided (no deadlock on the shared lock), all or nothing.
    const split = new RateLimitGroup([{ limiter: a, key: (u) => `a:${typeof u === 'string' ? u : u.id}` }, { limiter: b, key: (u) => `b:${typeof u === 'string' ? u : u.id}` }]);
    const results = await Promise.all(Array.from({ length: 8 }, () => split.allowRequest('k')));
    expect(results.filter((r) => r.allowed)).toHaveLength(5);
    expect([store.counts.get('a:k'), store.counts.get('b:k')]).toEqual([5, 5]);
  });

  it('is all or nothing under concurrency: both limits count the same requests', async () => {
    const a = new RateLimiter({ threshold: 7, windowSeconds: 60, strategy: new AwaitingCounter(), clock: () => 0 });
    const b = new RateLimiter({ threshold: 10, windowSeconds: 60, strategy: new AwaitingCounter(), clock: () => 0 });
    const group = new RateLimitGroup([a, b]);
    const results = await Promise.all(Array.from({ length: 50 }, () => group.allowRequest('k')));
    expect(results.filter((r) => r.allowed).length).toBe(7);
    expect((await b.peek('k')).remaining).toBe(3); // 7 recorded in b too, no more
    expect(() => group.allowRequestSync('k')).toThrow(TypeError);
  });

  it('cannot deadlock: groups sharing limiters in opposite orders, many concurrent calls', async () => {
    const a = new RateLimiter({ threshold: 1_000, windowSeconds: 60, strategy: new AwaitingCounter(), clock: () => 0 });
    const b = new RateLimiter({ threshold: 1_000, windowSeconds: 60, strategy: new AwaitingCounter(), clock: () => 0 });
    const ab = new RateLimitGroup([a, { limiter: b, key: () => 'shared' }]);
    const ba = new RateLimitGroup([{ limiter: b, key: () => 'shared' }, a]);
    const calls = Array.from({ length: 200 }, (_, i) => (i % 2 === 0 ? ab : ba).allowRequest(`user-${i % 5}`));
    const results = await Promise.all(calls);
    expect(results.every((r) => r.allowed)).toBe(true);
    expect((await b.peek('shared')).remaining).toBe(800);
  });

  it('a failing check rejects the group once, after every check has settled (no unhandled rejection)', async () => {
    const failing = (how: 'sync' | 'async'): RateLimitStore => {
      const base = new AwaitingCounter();
      return {
        name: `failing-${how}`,
        consume: (...args) => base.consume(...args),
        peek: how === 'sync' ? () => { throw new Error('sync peek failure'); } : async () => { throw new Error('async peek failure'); },
      };
    };
    const a = new RateLimiter({ threshold: 5, windowSeconds: 60, strategy: failing('async'), clock: () => 0 });
    const b = new RateLimiter({ threshold: 5, windowSeconds: 60, strategy: failing('sync'), clock: () => 0 });
    const c = new RateLimiter({ threshold: 5, windowSeconds: 60, strategy: new AwaitingCounter(), clock: () => 0 });
    const group = new RateLimitGroup([a, b, c]);
    await expect(group.allowRequest('k')).rejects.toThrow(/peek failure/);
    expect((await c.peek('k')).remaining).toBe(5);
  });

  it('mixes in-memory limits and stores, all or nothing', async () => {
    const sync = new RateLimiter({ threshold: 3, windowSeconds: 60, clock: () => 0 });
    const remote = new RateLimiter({ threshold: 100, windowSeconds: 60, strategy: new AwaitingCounter(), clock: () => 0 });
    const group = new RateLimitGroup([sync, remote]);
    const results = await Promise.all(Array.from({ length: 10 }, () => group.allowRequest('k')));
    expect(results.filter((r) => r.allowed).length).toBe(3);
    expect((await remote.peek('k')).remaining).toBe(97);
    // Direct synchronous use of the shared limiter interleaves safely with the group.
    const concurrent = Promise.all([group.allowRequest('m'), group.allowRequest('m')]);
    sync.allowRequestSync('m');
    sync.allowRequestSync('m');
    const [x, y] = await concurrent;
    expect([x.allowed, y.allowed].filter(Boolean).length).toBe(1);
    expect(sync.peekSync('m').remaining).toBe(0);
    expect((await remote.peek('m')).remaining).toBe(99);
  });
});

describe('a refused group records nothing anywhere', () => {
  /** The case: one limiter twice, under maxKeys with room for one new key only. */
  function crowded() {
    const limiter = new RateLimiter({ threshold: 5, windowSeconds: 60, maxKeys: 3, clock: () => 0 });
    limiter.allowRequestSync('bob');
    limiter.allowRequestSync('carol');
    const group = new RateLimitGroup([{ limiter }, { limiter, key: (u) => `org:${typeof u === 'string' ? u : u.id}` }]);
    return { limiter, group };
  }

  it('one limiter twice, maxKeys nearly full: allowRequestSync', () => {
    const { limiter, group } = crowded();
    const before = limiter.stats();
    const r = group.allowRequestSync('alice');
    expect(r.allowed).toBe(false);
    expect(r.results.map((x) => x.allowed)).toEqual([true, false]);
    expect(limiter.peekSync('alice').remaining).toBe(5); // main: 4 (alice was recorded)
    expect(limiter.size).toBe(2);
    expect(limiter.stats()).toEqual({ ...before, rejected: before.rejected + 1 });
  });

  it('one limiter twice, maxKeys nearly full: allowRequest', async () => {
    const { limiter, group } = crowded();
    const r = await group.allowRequest('alice');
    expect(r.allowed).toBe(false);
    expect(limiter.peekSync('alice').remaining).toBe(5);
    expect(limiter.size).toBe(2);
  });

  it('one limiter twice, maxKeys nearly full, with a store member: allowRequest', async () => {
    const { limiter } = crowded();
    const remote = new RateLimiter({ threshold: 5, windowSeconds: 60, strategy: new AwaitingCounter(), clock: () => 0 });
    const group = new RateLimitGroup([limiter, remote, { limiter, key: (u) => `org:${typeof u === 'string' ? u : u.id}` }]);
    const r = await group.allowRequest('alice');
    expect(r.allowed).toBe(false);
    expect(limiter.peekSync('alice').remaining).toBe(5);
    expect((await remote.peek('alice')).remaining).toBe(5);
    expect(limiter.size).toBe(2);
  });

  it('one limiter twice, maxKeys full with one clear key: the room for one new key is not counted twice', () => {
    let now = 0;
    const limiter = new RateLimiter({ threshold: 5, windowSeconds: 60, maxKeys: 2, clock: () => now });
    limiter.allowRequestSync('old');
    now = 30_000;
    limiter.allowRequestSync('live');
    now = 61_000; // old is clear, live is not: room for one new key
    const group = new RateLimitGroup([{ limiter }, { limiter, key: () => 'everyone' }]);
    expect(group.peekSync('alice').allowed).toBe(false);
    const r = group.allowRequestSync('alice');
    expect(r.allowed).toBe(false);
    expect(limiter.peekSync('alice', { cost: 5 }).allowed).toBe(true);
    expect(limiter.stats()).toMatchObject({ keys: 2, evictedKeys: 0 });
  });

  it('one limiter twice, maxKeys full, the group\'s own tracked key clear: it is not the key forgotten for the other', () => {
    let now = 0;
    const limiter = new RateLimiter({ threshold: 5, windowSeconds: 60, maxKeys: 2, clock: () => now });
    limiter.allowRequestSync('alice');
    now = 30_000;
    limiter.allowRequestSync('live');
    now = 61_000; // alice is clear, live is not: no room for org:alice but alice's own slot
    const group = new RateLimitGroup([{ limiter }, { limiter, key: (u) => `org:${typeof u === 'string' ? u : u.id}` }]);
    expect(group.peekSync('alice').allowed).toBe(false);
    expect(group.allowRequestSync('alice').allowed).toBe(false);
    expect(limiter.peekSync('alice', { cost: 5 }).allowed).toBe(true); // main: alice recorded
    expect(limiter.stats()).toMatchObject({ keys: 2, evictedKeys: 0, allowed: 2 });
  });

  it('an atomic store decided directly while the group checks it: the group records all or nothing', async () => {
    const local = new RateLimiter({ threshold: 5, windowSeconds: 60, clock: () => 0 });
    const atomic = new AwaitingStore(new SlidingWindowLog(), { atomic: true });
    const shared = new RateLimiter({ threshold: 1, windowSeconds: 60, strategy: atomic, clock: () => 0 });
    const group = new RateLimitGroup([local, shared]);
    // The direct decision arrives while the group holds the key between its check and its record.
    const [g, d] = await Promise.all([group.allowRequest('k'), shared.allowRequest('k')]);
    expect([g.allowed, d.allowed]).toEqual([true, false]); // main: [false, true], with local charged
    expect(local.peekSync('k').remaining).toBe(4);
    // And the other way round: the direct decision first, then the group is refused whole.
    const [d2, g2] = await Promise.all([shared.allowRequest('m'), group.allowRequest('m')]);
    expect([d2.allowed, g2.allowed]).toEqual([true, false]);
    expect(local.peekSync('m').remaining).toBe(5);
  });

  it('a member full under maxKeys with a clear key, another member refusing: no key forgotten', () => {
    let now = 0;
    const strict = new RateLimiter({ threshold: 1, windowSeconds: 600, clock: () => now });
    const bounded = new RateLimiter({ threshold: 5, windowSeconds: 60, maxKeys: 2, clock: () => now });
    bounded.allowRequestSync('old');
    now = 30_000;
    bounded.allowRequestSync('live');
    strict.allowRequestSync('alice');
    now = 61_000;
    const group = new RateLimitGroup([strict, bounded]);
    const before = bounded.stats();
    expect(group.allowRequestSync('alice').allowed).toBe(false);
    expect(bounded.stats()).toEqual(before); // main: keys 1, evictedKeys 1
    expect(bounded.size).toBe(2);
  });
});
