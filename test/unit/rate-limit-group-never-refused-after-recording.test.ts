// A group is never refused after one of its limits recorded. A group of an in-memory limit and a
// store checks both, then records the store (awaiting it), then the in-memory limit; whatever this
// process does on the in-memory limiter meanwhile — a decision or a peek, async or sync, on
// another key or on the group's own, waitForSlot, another group, a tier change, cleanUp, the
// automatic sweep, reset — the group's in-memory record must still allow. Each case runs those
// calls from inside the store's record (the store's `beforeConsume`), then checks all or nothing:
// allowed, every limit recorded the request once; refused, no store recorded it; and the
// in-memory limit was never exceeded. (Redis: test/integration/redis/group-never-refused-after-recording.test.ts.)
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  FixedWindow,
  GCRA,
  RateLimitGroup,
  RateLimiter,
  SlidingWindowCounter,
  SlidingWindowLog,
  TokenBucket,
  type GroupResult,
  type QuotaOptions,
  type RateLimitResult,
  type RateLimiterOptions,
  type RateLimitStrategy,
} from '../../src/index.js';
import { AwaitingCounter, AwaitingStore } from '../support/stores.js';

const STRATEGIES: Record<string, () => RateLimitStrategy<unknown>> = {
  log: () => new SlidingWindowLog(),
  counter: () => new SlidingWindowCounter(),
  fixed: () => new FixedWindow(),
  bucket: () => new TokenBucket(),
  gcra: () => new GCRA(),
};

/** Stores that await: a counter locked by the limiter, the log behind a store, GCRA atomic (held shared). */
const STORES = {
  counter: () => new AwaitingCounter(),
  'store-log': () => new AwaitingStore(new SlidingWindowLog()),
  'atomic-gcra': () => new AwaitingStore(new GCRA(), { atomic: true }),
};
type StoreKind = keyof typeof STORES;

/** An in-memory limiter `mem` and a store limiter `remote` (5 per minute each) in one group, on one clock. */
function setup(memOptions: Partial<RateLimiterOptions<unknown>> = {}, storeKind: StoreKind = 'counter') {
  const clock = { now: 0 };
  const mem = new RateLimiter<unknown>({ threshold: 5, windowSeconds: 60, clock: () => clock.now, ...memOptions });
  const store = STORES[storeKind]();
  const remote = new RateLimiter<unknown>({ threshold: 5, windowSeconds: 60, strategy: store, clock: () => clock.now });
  const group = new RateLimitGroup([
    { limiter: mem, name: 'mem' },
    { limiter: remote, name: 'store' },
  ]);
  /** Runs `during` once, inside the store's next record (the group awaiting it). */
  const duringRecord = (during: () => void): void => {
    store.beforeConsume = () => {
      store.beforeConsume = undefined;
      during();
    };
  };
  return { clock, mem, remote, store, group, duringRecord };
}

/** Units of `key` the limiter holds now: `threshold - remaining` of a peek of cost 1 (nothing expires in these tests). */
async function used(limiter: RateLimiter<unknown>, key: string): Promise<number> {
  return limiter.threshold - (await limiter.peek(key)).remaining;
}

/**
 * All or nothing: allowed, `mem` and `remote` each hold `cost` more units of `user` than before
 * (plus, for `mem`, what outside calls recorded); refused, `remote` holds what it held (and `mem`
 * only what outside calls recorded).
 */
async function expectAllOrNothing(
  result: GroupResult,
  s: { mem: RateLimiter<unknown>; remote: RateLimiter<unknown> },
  user: string,
  before: { mem: number; remote: number },
  outsideOnUser = 0,
): Promise<void> {
  const cost = result.allowed ? 1 : 0;
  expect(await used(s.remote, user), 'the store holds the group request only if the group was allowed').toBe(before.remote + cost);
  expect(await used(s.mem, user), 'the in-memory limit holds it only if the group was allowed').toBe(before.mem + outsideOnUser + cost);
}

afterEach(() => {
  vi.useRealTimers();
});

describe('a group is never refused after one of its limits recorded', () => {
  describe('maxKeys: a call on another key while the group awaits its store does not take the slot the group checked', () => {
    const outside: Record<string, (mem: RateLimiter<unknown>) => Promise<RateLimitResult | undefined>> = {
      allowRequest: (mem) => mem.allowRequest('bob'),
      allowRequestSync: async (mem) => mem.allowRequestSync('bob'),
      'waitForSlot (maxWaitSeconds 0)': (mem) =>
        mem.waitForSlot('bob', { maxWaitSeconds: 0 }).then(
          (r) => r,
          () => undefined,
        ),
      "another group's allowRequestSync": async (mem) => new RateLimitGroup([mem]).allowRequestSync('bob'),
      "another group's allowRequest": (mem) => new RateLimitGroup([mem]).allowRequest('bob'),
    };
    for (const storeKind of Object.keys(STORES) as StoreKind[]) {
      for (const [name, call] of Object.entries(outside)) {
        it(`${name}, store ${storeKind}`, async () => {
          const s = setup({ maxKeys: 1 }, storeKind);
          let theirs: Promise<RateLimitResult | undefined> | undefined;
          s.duringRecord(() => {
            theirs = call(s.mem);
          });
          const result = await s.group.allowRequest('alice');
          expect(theirs, 'the call was made during the record').toBeDefined();
          const other = await theirs;
          await expectAllOrNothing(result, s, 'alice', { mem: 0, remote: 0 });
          // The group checked the one slot free for alice: it is allowed, the other key is not.
          expect(result.allowed).toBe(true);
          expect(other?.allowed ?? false).toBe(false);
          expect(s.mem.size).toBe(1);
        });
      }
    }

    it('an async flood on other keys once 20 groups await their stores: each all or nothing, maxKeys never exceeded', async () => {
      const s = setup({ maxKeys: 20 });
      const flood: Promise<RateLimitResult>[] = [];
      let records = 0;
      s.store.beforeConsume = () => {
        // Once every group is recording (each checked the 20 free places), 40 requests on new keys.
        if (++records === 20) for (let i = 0; i < 40; i++) flood.push(s.mem.allowRequest(`flood-${i}`));
      };
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => s.group.allowRequest(`user-${i}`)));
      const floods = await Promise.all(flood);
      expect(floods).toHaveLength(40);
      for (let i = 0; i < 20; i++) await expectAllOrNothing(results[i] as GroupResult, s, `user-${i}`, { mem: 0, remote: 0 });
      expect(results.filter((r) => r.allowed)).toHaveLength(20);
      expect(floods.filter((r) => r.allowed)).toHaveLength(0);
      expect(s.mem.size).toBe(20);
    });
  });

  describe('a call on the key the group holds decides as if the group had recorded first', () => {
    for (const [strategy, make] of Object.entries(STRATEGIES)) {
      it(`allowRequestSync and peekSync, ${strategy}`, async () => {
        const s = setup({ threshold: 3, strategy: make() });
        s.mem.allowRequestSync('alice'); // 1 of 3
        const seen: RateLimitResult[] = [];
        s.duringRecord(() => {
          // The group's unit is pending: 2 of 3 taken, so one fits, then none.
          seen.push(s.mem.peekSync('alice'), s.mem.allowRequestSync('alice'), s.mem.allowRequestSync('alice'), s.mem.peekSync('alice'));
        });
        const result = await s.group.allowRequest('alice');
        await expectAllOrNothing(result, s, 'alice', { mem: 1, remote: 0 }, seen[1]?.allowed === true ? 1 : 0);
        expect(result.allowed).toBe(true);
        expect(seen.map((r) => r.allowed)).toEqual([true, true, false, false]);
        expect(seen.map((r) => r.remaining)).toEqual([1, 0, 0, 0]);
        for (const r of seen.slice(2)) {
          expect(r.retryAfter).toBeGreaterThan(0);
          // Within the strategy's bound: a window, two for the sliding-window counter.
          expect(r.retryAfter).toBeLessThanOrEqual(strategy === 'counter' ? 120 : 60);
        }
        expect(s.mem.peekSync('alice')).toMatchObject({ allowed: false, remaining: 0 }); // 3 of 3, never more
      });
    }

    it('a request the pending unit leaves no room for waits at most a window (its cost alone would fit)', async () => {
      const s = setup({ threshold: 1 });
      let theirs: RateLimitResult | undefined;
      s.duringRecord(() => {
        theirs = s.mem.allowRequestSync('alice');
      });
      const result = await s.group.allowRequest('alice');
      await expectAllOrNothing(result, s, 'alice', { mem: 0, remote: 0 }, theirs?.allowed === true ? 1 : 0);
      expect(result.allowed).toBe(true);
      expect(theirs).toMatchObject({ allowed: false, remaining: 0, retryAfter: 60 });
    });

    it('waitForSlot on the held key (in memory, it does not wait for the lock)', async () => {
      const s = setup({ threshold: 2 });
      s.mem.allowRequestSync('alice');
      let theirs: Promise<unknown> | undefined;
      s.duringRecord(() => {
        theirs = s.mem.waitForSlot('alice', { maxWaitSeconds: 0 }).then(
          (r) => r,
          (e: unknown) => e,
        );
      });
      const result = await s.group.allowRequest('alice');
      const waited = (await theirs) as { allowed?: boolean; code?: string };
      await expectAllOrNothing(result, s, 'alice', { mem: 1, remote: 0 }, waited.allowed === true ? 1 : 0);
      expect(result.allowed).toBe(true);
      expect(waited).toMatchObject({ code: 'ERR_RATEWARDEN_WAIT_TOO_LONG' });
    });

    it("another group's allowRequestSync on the held key", async () => {
      const s = setup({ threshold: 2 });
      s.mem.allowRequestSync('alice');
      const other = new RateLimitGroup([s.mem, { limiter: s.mem, key: () => 'org' }]);
      let theirs: GroupResult | undefined;
      s.duringRecord(() => {
        theirs = other.allowRequestSync('alice');
      });
      const result = await s.group.allowRequest('alice');
      await expectAllOrNothing(result, s, 'alice', { mem: 1, remote: 0 }, theirs?.allowed === true ? 1 : 0);
      expect(result.allowed).toBe(true);
      expect(theirs).toMatchObject({ allowed: false, binding: 0 });
      expect(s.mem.size).toBe(1); // the other group recorded nothing, not even on 'org'
    });
  });

  describe('a tier change for the held key', () => {
    const free: QuotaOptions = { threshold: 2, windowSeconds: 60, tier: 'free' };
    const pro: QuotaOptions = { threshold: 4, windowSeconds: 60, tier: 'pro' };
    // What alice holds under pro at the end: 1 + the group's 1 + the outside 1 (the rate strategies
    // keep the used share of their burst: 2 of free is all of pro's 4).
    const finalRemaining: Record<string, number> = { log: 1, counter: 1, fixed: 1, bucket: 0, gcra: 0 };
    for (const [strategy, make] of Object.entries(STRATEGIES)) {
      it(`an upgrade: a sync request under the new tier counts the pending unit, and the group still records, ${strategy}`, async () => {
        const tiers = new Map<string, QuotaOptions>([['alice', free]]);
        const s = setup({ strategy: make(), limitFor: (_u, key) => tiers.get(key) });
        s.mem.allowRequestSync('alice'); // 1 of 2 (free)
        let theirs: RateLimitResult | undefined;
        s.duringRecord(() => {
          tiers.set('alice', pro);
          theirs = s.mem.allowRequestSync('alice');
        });
        const result = await s.group.allowRequest('alice');
        expect(await used(s.remote, 'alice'), 'the store holds the group request only if the group was allowed').toBe(result.allowed ? 1 : 0);
        expect(result.allowed).toBe(true);
        expect(theirs).toMatchObject({ allowed: true, limit: 4 });
        expect(s.mem.peekSync('alice')).toMatchObject({ remaining: finalRemaining[strategy], limit: 4 });
      });

      it(`a downgrade: a sync request under the new tier is refused, and the group records, ${strategy}`, async () => {
        const tiers = new Map<string, QuotaOptions>([['alice', pro]]);
        const s = setup({ strategy: make(), limitFor: (_u, key) => tiers.get(key) });
        s.mem.allowRequestSync('alice', { cost: 2 }); // 2 of 4 (pro)
        let theirs: RateLimitResult | undefined;
        s.duringRecord(() => {
          tiers.set('alice', free);
          theirs = s.mem.allowRequestSync('alice');
        });
        const result = await s.group.allowRequest('alice');
        expect(await used(s.remote, 'alice'), 'the store holds the group request only if the group was allowed').toBe(result.allowed ? 1 : 0);
        expect(result.allowed).toBe(true);
        expect(theirs).toMatchObject({ allowed: false, remaining: 0, limit: 2 });
        expect(s.mem.peekSync('alice')).toMatchObject({ allowed: false, remaining: 0, limit: 2 });
      });
    }
  });

  describe('sweeps and reset while the group awaits', () => {
    /** maxKeys 2: `x` recorded at 0 (clear from 1 s), `y` at 1 s (live); the group's new key needs x's place. */
    function full(options: Partial<RateLimiterOptions<unknown>> = {}) {
      const s = setup({ windowSeconds: 1, maxKeys: 2, ...options });
      s.mem.allowRequestSync('x');
      s.clock.now = 1_000;
      s.mem.allowRequestSync('y');
      return s;
    }

    it('cleanUp forgets the clear key the group checked it would replace, then an allowRequest on a new key', async () => {
      const s = full();
      let theirs: Promise<RateLimitResult> | undefined;
      s.duringRecord(() => {
        s.mem.cleanUp();
        theirs = s.mem.allowRequest('bob');
      });
      const result = await s.group.allowRequest('alice');
      await expectAllOrNothing(result, s, 'alice', { mem: 0, remote: 0 });
      expect(result.allowed).toBe(true);
      expect((await theirs)?.allowed).toBe(false); // y is live, alice's place is taken
      expect(s.mem.size).toBe(2);
    });

    it('the automatic sweep forgets it, then an allowRequestSync on a new key', async () => {
      vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'setTimeout', 'clearTimeout'] });
      const s = full({ sweepIntervalSeconds: 1 });
      let theirs: RateLimitResult | undefined;
      s.duringRecord(() => {
        vi.advanceTimersByTime(1_000); // a sweep pass (one slice: two keys)
        theirs = s.mem.allowRequestSync('bob');
      });
      const result = await s.group.allowRequest('alice');
      await expectAllOrNothing(result, s, 'alice', { mem: 0, remote: 0 });
      expect(result.allowed).toBe(true);
      expect(theirs?.allowed).toBe(false);
      expect(s.mem.size).toBe(2);
      s.mem.close();
    });

    it('reset forgets the held key itself, then an allowRequest on a new key', async () => {
      const s = setup({ maxKeys: 1 });
      s.mem.allowRequestSync('alice');
      let theirs: Promise<RateLimitResult> | undefined;
      let wasTracked: boolean | undefined;
      s.duringRecord(() => {
        wasTracked = s.mem.reset('alice');
        theirs = s.mem.allowRequest('bob');
      });
      const result = await s.group.allowRequest('alice');
      expect(wasTracked).toBe(true);
      // Forgotten, then the group's unit: 1 of 5.
      await expectAllOrNothing(result, s, 'alice', { mem: 0, remote: 0 });
      expect(result.allowed).toBe(true);
      expect((await theirs)?.allowed).toBe(false); // alice's place stays hers
      expect(s.mem.size).toBe(1);
    });

    it('peeks on a new key and on the held key see the place and the unit the group holds', async () => {
      const s = setup({ maxKeys: 1 });
      const seen: RateLimitResult[] = [];
      s.duringRecord(() => {
        seen.push(s.mem.peekSync('bob'), s.mem.peekSync('alice'), s.mem.peekSync('alice', { cost: 5 }));
      });
      const result = await s.group.allowRequest('alice');
      await expectAllOrNothing(result, s, 'alice', { mem: 0, remote: 0 });
      expect(result.allowed).toBe(true);
      expect(seen.map((r) => r.allowed)).toEqual([false, true, false]);
      expect(seen[1]?.remaining).toBe(4);
    });
  });

  describe('a store that fails or refuses on the record: the reservation is released', () => {
    it('fails: nothing in memory is charged, and the place held for the new key is free again', async () => {
      const s = setup({ maxKeys: 1 });
      s.duringRecord(() => {
        (s.store as AwaitingCounter).failFor = 'alice';
      });
      await expect(s.group.allowRequest('alice')).rejects.toThrow('store unavailable for alice');
      expect(s.mem.size).toBe(0);
      expect(s.mem.peekSync('alice').remaining).toBe(5);
      expect(s.mem.allowRequestSync('bob').allowed).toBe(true);
    });

    it('refuses (another process took the last unit): nothing recorded anywhere by the group', async () => {
      const s = setup({ maxKeys: 1, threshold: 2 });
      s.mem.allowRequestSync('alice');
      s.duringRecord(() => {
        (s.store as AwaitingCounter).counts.set('alice', 5);
      });
      const result = await s.group.allowRequest('alice');
      expect(result).toMatchObject({ allowed: false, binding: 1 });
      expect(await used(s.remote, 'alice')).toBe(5);
      expect(await used(s.mem, 'alice')).toBe(1);
      // The pending unit is gone: alice's second unit fits again.
      expect(s.mem.allowRequestSync('alice')).toMatchObject({ allowed: true, remaining: 0 });
    });
  });
});
