// A group of a Redis limit (a real redis-server) and an in-memory limit under maxKeys is never
// refused after Redis recorded: the calls this process makes on the in-memory limiter while the
// group awaits Redis's record — on another key (taking the last place under maxKeys), or
// synchronously on the group's own key — cannot spend what the group checked. Only the public API
// of ratewarden/redis is used (the strategies and their options): the calls are made from the
// in-memory limiter's clock, which the group reads when it checks that limit, just before it sends
// Redis the record (a microtask later, the record is on its way). (The same with stores in this
// process, and every other kind of call: test/unit/rate-limit-group-never-refused-after-recording.test.ts.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { RateLimitGroup, RateLimiter, type GroupResult, type RateLimitResult } from '../../../src/index.js';
import { RedisGCRA, RedisSlidingWindowLog } from '../../../src/redis/index.js';
import { RedisServer } from '../../support/redis-server.js';

let server: RedisServer;
let io: Redis;
beforeAll(async () => {
  server = await RedisServer.start();
  io = new Redis({ port: server.port, host: '127.0.0.1' });
  io.on('error', () => {});
});
afterAll(async () => {
  io.disconnect();
  await server.stop();
});

const strategies = {
  RedisGCRA: (prefix: string) => new RedisGCRA({ client: io, prefix }),
  RedisSlidingWindowLog: (prefix: string) => new RedisSlidingWindowLog({ client: io, prefix }),
};

let run = 0;

/**
 * `mem` (in memory, `maxKeys` places, `threshold` per minute) and `shared` (Redis, 5 per minute)
 * in one group. `mem`'s clock stands still; `onRead(n)` is called (in a microtask) after its `n`-th
 * reading, once armed.
 */
function setup(make: (prefix: string) => RedisGCRA | RedisSlidingWindowLog, memOptions: { maxKeys?: number; threshold?: number }) {
  const prefix = `never-refused-${++run}:`;
  let reads = 0;
  let onRead: ((n: number) => void) | undefined;
  const mem = new RateLimiter({
    threshold: memOptions.threshold ?? 5,
    windowSeconds: 60,
    ...(memOptions.maxKeys === undefined ? {} : { maxKeys: memOptions.maxKeys }),
    clock: () => {
      const n = ++reads;
      const call = onRead;
      if (call !== undefined) queueMicrotask(() => call(n));
      return 0;
    },
  });
  const shared = new RateLimiter({ threshold: 5, windowSeconds: 60, strategy: make(prefix) });
  const group = new RateLimitGroup([
    { limiter: mem, name: 'mem' },
    { limiter: shared, name: 'redis' },
  ]);
  return {
    mem,
    shared,
    group,
    /** Calls `during(n)` after each later reading of `mem`'s clock (`n` counted from this call). */
    arm(during: ((n: number) => void) | undefined): void {
      reads = 0;
      onRead = during;
    },
  };
}

/** Units of `key` Redis holds (nothing expires within these tests). */
async function inRedis(shared: RateLimiter, key: string): Promise<number> {
  return shared.threshold - (await shared.peek(key)).remaining;
}

/**
 * Allowed: Redis and `mem` each recorded the request (`mem` holds `memBefore` more); refused:
 * Redis recorded nothing.
 */
async function expectAllOrNothing(result: GroupResult, s: { mem: RateLimiter; shared: RateLimiter }, user: string, memBefore: number): Promise<void> {
  expect(await inRedis(s.shared, user), `Redis holds ${user}'s request only if the group was allowed`).toBe(result.allowed ? 1 : 0);
  if (result.allowed) expect(s.mem.threshold - s.mem.peekSync(user).remaining).toBe(memBefore + 1);
}

describe('a group of a Redis limit and an in-memory one is never refused after Redis recorded', () => {
  for (const [name, make] of Object.entries(strategies)) {
    it(`${name}: maxKeys 1, an allowRequest on another key while Redis records does not take the group's place`, async () => {
      const s = setup(make, { maxKeys: 1 });
      let theirs: Promise<RateLimitResult> | undefined;
      s.arm((n) => {
        if (n === 1) theirs = s.mem.allowRequest('bob'); // the group's check was reading 1
      });
      const result = await s.group.allowRequest('alice');
      s.arm(undefined);
      expect(theirs).toBeDefined();
      const bob = await theirs;
      await expectAllOrNothing(result, s, 'alice', 0);
      expect(result.allowed).toBe(true);
      expect(bob?.allowed).toBe(false);
      expect(s.mem.size).toBe(1);
    });

    it(`${name}: an allowRequestSync on the group's own key while Redis records counts the group's unit`, async () => {
      const s = setup(make, { threshold: 2 });
      s.mem.allowRequestSync('alice'); // 1 of 2
      let theirs: RateLimitResult | undefined;
      s.arm((n) => {
        if (n === 1) theirs = s.mem.allowRequestSync('alice');
      });
      const result = await s.group.allowRequest('alice');
      s.arm(undefined);
      await expectAllOrNothing(result, s, 'alice', 1 + (theirs?.allowed === true ? 1 : 0));
      expect(result.allowed).toBe(true);
      expect(theirs).toMatchObject({ allowed: false, remaining: 0 });
    });

    it(`${name}: 20 groups, then a flood of allowRequest on new keys once all have checked: each all or nothing`, async () => {
      const s = setup(make, { maxKeys: 20 });
      const flood: Promise<RateLimitResult>[] = [];
      s.arm((n) => {
        // Reading 20: the last group's check (the flood's own readings come after).
        if (n === 20) for (let i = 0; i < 40; i++) flood.push(s.mem.allowRequest(`flood-${i}`));
      });
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => s.group.allowRequest(`user-${i}`)));
      const floods = await Promise.all(flood);
      s.arm(undefined);
      expect(floods).toHaveLength(40);
      for (let i = 0; i < 20; i++) await expectAllOrNothing(results[i] as GroupResult, s, `user-${i}`, 0);
      expect(results.filter((r) => r.allowed)).toHaveLength(20);
      expect(floods.filter((r) => r.allowed)).toHaveLength(0);
      expect(s.mem.size).toBe(20);
    });
  }
});
