// A group of in-memory limits and a store: the store fails, or refuses, between the group's check
// and its record. The group reports it and charges no in-memory limit; meanwhile asynchronous
// decisions on its in-memory keys wait for it. (With a real Redis: test/integration/redis/group-store-first.test.ts.)
import { describe, expect, it } from 'vitest';
import { RateLimitGroup, RateLimiter, SlidingWindowLog, type Quota, type RateLimitResult, type RateLimitStore } from '../../src/index.js';

/** A store over an in-memory limiter's strategy, whose `n`-th `consume` (the group's record) is `fault`. */
function faultyStore(fault: 'throw' | 'refuse', n = 1): RateLimitStore & { release: () => void } {
  const inner = new RateLimiter({ threshold: 5, windowSeconds: 60, strategy: new SlidingWindowLog() });
  let consumes = 0;
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  return {
    name: 'faulty',
    release,
    async consume(key: string, _now: number, cost: number, _quota: Quota): Promise<RateLimitResult> {
      if (++consumes === n) {
        await gate; // the group's record waits here, its keys held
        if (fault === 'throw') throw new Error('store down');
        return { allowed: false, remaining: 0, retryAfter: 1, limit: 5, resetAfter: 1 };
      }
      return inner.allowRequestSync(key, { cost });
    },
    async peek(key: string, _now: number, cost: number): Promise<RateLimitResult> {
      return inner.peekSync(key, { cost });
    },
  };
}

describe('a refused group records nothing anywhere', () => {
  for (const fault of ['throw', 'refuse'] as const) {
    it(`a store that ${fault === 'throw' ? 'fails' : 'refuses'} on the record charges no in-memory limit`, async () => {
      const local = new RateLimiter({ threshold: 5, windowSeconds: 60, maxKeys: 10 });
      const store = faultyStore(fault);
      const shared = new RateLimiter({ threshold: 5, windowSeconds: 60, strategy: store });
      const group = new RateLimitGroup([local, shared, { limiter: local, key: (u) => `org:${u as string}` }]);
      const decision = group.allowRequest('alice').then(
        (r) => ({ r }),
        (e: unknown) => ({ e }),
      );
      // While the group records, an asynchronous decision on its in-memory key waits for it.
      let directDone = false;
      const direct = local.allowRequest('alice').then((r) => {
        directDone = true;
        return r;
      });
      for (let i = 0; i < 10; i++) await Promise.resolve();
      expect(directDone).toBe(false);
      store.release();
      const out = await decision;
      if (fault === 'throw') expect(out).toMatchObject({ e: { message: 'store down' } });
      else expect(out).toMatchObject({ r: { allowed: false, binding: 1 } });
      // main: 4 of 5 on both in-memory keys.
      expect((await direct).remaining).toBe(4); // the direct decision, after the group: nothing else charged
      expect(local.peekSync('org:alice').remaining).toBe(5);
      expect(local.stats()).toMatchObject({ keys: 1 });
    });
  }
});
