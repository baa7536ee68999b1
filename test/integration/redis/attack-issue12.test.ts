// Issue 12, attacked: adversarial scenarios against the lean script's queue (micro-batching,
// deadlines) and the exact local block cache, against a real redis-server. Each test here
// states a promise of the code's own documentation and shows a case where it does not hold.
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { GCRA, SlidingWindowLog, type Quota, type RateLimitResult } from '../../../src/index.js';
import { RateWardenRedisTimeoutError, RedisGCRA, RedisSlidingWindowLog, type RedisAdapter } from '../../../src/redis/index.js';
import { toRedisAdapter } from '../../../src/redis/client.js';
import { LEAN_SCRIPT } from '../../../src/redis/lean-script.js';
import { RedisServer, blackHole, connectIoredis, type TestClient } from '../../support/redis-server.js';
import { MemoryModel } from '../../support/script-calls.js';

const T0 = 3_000_000;

let server: RedisServer;
let c: TestClient;
beforeAll(async () => {
  server = await RedisServer.start();
  c = await connectIoredis(server.url);
});
afterAll(async () => {
  await c?.close();
  await server?.stop();
});
afterEach(() => {
  vi.useRealTimers();
});

/** Lets pending I/O callbacks and promise callbacks run (setImmediate is never faked here). */
function turn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

describe('deadlines', () => {
  it('a decision issued in the same tick after the tick\'s others all settled still times out', async () => {
    const hole = await blackHole();
    // A client offline with its offline queue off rejects a command at once (no I/O), as
    // ioredis does before it connects; the next call goes to a server that never answers.
    const offline = new Redis({ port: hole.port, host: '127.0.0.1', lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0 });
    // (Its commands queue until it connects, then get no answer.)
    const hanging = new Redis({ port: hole.port, host: '127.0.0.1', maxRetriesPerRequest: 0 });
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const first = toRedisAdapter(offline);
    const then = toRedisAdapter(hanging);
    let calls = 0;
    const adapter: RedisAdapter = {
      ratewardenAdapter: true,
      evalSha: (sha, keys, args) => (calls++ === 0 ? first : then).evalSha(sha, keys, args),
      eval: (script, keys, args) => then.eval(script, keys, args),
    };
    try {
      const s = new RedisGCRA({ client: adapter, prefix: 'dl:', timeoutSeconds: 1 });
      const quota: Quota = { threshold: 5, windowMs: 1_000, windowSeconds: 1 };
      await Promise.resolve();
      let second: Promise<RateLimitResult> | undefined;
      // The caller retries at once when the first decision fails: within the same tick.
      const firstOutcome = await s.consume('k', 0, 1, quota).then(
        () => 'allowed',
        (error: unknown) => {
          second = s.consume('k', 0, 1, quota);
          return error instanceof Error ? error.message : String(error);
        },
      );
      expect(firstOutcome).toMatch(/writeable|offline/i);
      let settled: unknown = 'pending';
      (second as Promise<RateLimitResult>).then(
        (r) => (settled = r),
        (e: unknown) => (settled = e),
      );
      await turn();
      vi.advanceTimersByTime(1_000);
      await turn();
      await turn();
      expect(settled).toBeInstanceOf(RateWardenRedisTimeoutError);
    } finally {
      offline.disconnect();
      hanging.disconnect();
      await hole.close();
    }
  });
});

describe('an adapter that throws synchronously', () => {
  it('its failure goes to the failure policy, and leaves nothing in flight', async () => {
    const inner = toRedisAdapter(c.client);
    let calls = 0;
    const adapter: RedisAdapter = {
      ratewardenAdapter: true,
      // A hand-written adapter that is not `async`: its first call throws instead of rejecting.
      evalSha: (sha, keys, args) => {
        if (calls++ === 0) throw new Error('adapter: not connected');
        return inner.evalSha(sha, keys, args);
      },
      eval: (script, keys, args) => inner.eval(script, keys, args),
    };
    const s = new RedisGCRA({ client: adapter, prefix: 'sync:', time: 'limiter', timeoutSeconds: Infinity, onFailure: 'fail-closed' });
    const quota: Quota = { threshold: 5, windowMs: 1_000, windowSeconds: 1 };
    // Redis failed: the policy decides (as on the group path, whose call is async).
    const failed = await s.consume('k', T0, 1, quota).then(
      (r) => r.degraded,
      (e: unknown) => `rejected: ${String(e)}`,
    );
    // Then Redis refuses the key: the refusal is cached, and the next request is answered here.
    expect((await s.consume('k', T0, 5, quota)).allowed).toBe(true);
    expect((await s.consume('k', T0 + 1, 1, quota)).allowed).toBe(false);
    const sent = calls;
    expect((await s.consume('k', T0 + 2, 1, quota)).allowed).toBe(false);
    expect({ failed, roundTrips: calls - sent }).toEqual({ failed: 'fail-closed', roundTrips: 0 });
  });
});

describe('the block cache and another limit on the same key', () => {
  // One process, two strategies on one prefix (two limiters, e.g. a tier resolved in two
  // places): the second limit's shorter window lets the key go sooner, which the in-memory
  // model and Redis both follow; the cache of the first keeps refusing.
  const cases = [
    ['GCRA', () => new GCRA(), (prefix: string, blockCacheSize = 10_000) => new RedisGCRA({ client: c.client, prefix, time: 'limiter', blockCacheSize })],
    [
      'sliding-window log',
      () => new SlidingWindowLog(),
      (prefix: string, blockCacheSize = 10_000) => new RedisSlidingWindowLog({ client: c.client, prefix, time: 'limiter', blockCacheSize }),
    ],
  ] as const;
  it.each(cases)('%s: the cache refuses what Redis and the model allow', async (label, memory, redis) => {
    const prefix = `tier:${label}:`;
    const long: Quota = { threshold: 2, windowMs: 10_000, windowSeconds: 10 };
    const short: Quota = { threshold: 2, windowMs: 100, windowSeconds: 0.1 };
    const cached = redis(prefix);
    const other = redis(prefix);
    const direct = redis(prefix, 0);
    const model = new MemoryModel(memory());
    const steps: [typeof cached, number, Quota][] = [
      [cached, T0, long],
      [cached, T0 + 1, long],
      [cached, T0 + 2, long], // refused, cached for seconds
      [other, T0 + 200, short], // the short window has let the key go: allowed
    ];
    for (const [s, t, q] of steps) expect(await s.consume('k', t, 1, q)).toEqual(model.consume('k', t, 1, q));
    const t = T0 + 300;
    const expected = model.peek('k', t, 1, long);
    expect(await direct.peek('k', t, 1, long)).toEqual(expected);
    expect(expected.allowed).toBe(true);
    expect(await cached.peek('k', t, 1, long)).toEqual(expected);
  });
});

describe('the block cache of the sliding-window log, a lowered threshold', () => {
  it('a cached refusal skips the drop of entries that expire during it: a later longer window counts them', async () => {
    // One strategy, one key, a tier switching back and forth (7 per 2.5 s, 3 per 1 s). The
    // refusal under 3 per 1 s holds 4 live entries (more than the threshold): it waits for the
    // second oldest, so the oldest expires during the block. The in-memory strategy drops it at
    // the next (refused) consume; the cache answers that consume, so Redis never drops it, and
    // the next decision under the longer window counts it.
    const long: Quota = { threshold: 7, windowMs: 2_500, windowSeconds: 2.5 };
    const short: Quota = { threshold: 3, windowMs: 1_000, windowSeconds: 1 };
    const steps: [number, number, Quota][] = [
      [T0, 1, long],
      [T0 + 500, 3, long],
      [T0 + 600, 1, short], // refused: 4 live, waits until T0 + 1,500
      [T0 + 1_100, 1, short], // refused (from the cache): the entry of T0 has expired
      [T0 + 1_200, 1, long],
    ];
    const outcomes = async (blockCacheSize: number): Promise<RateLimitResult[]> => {
      const s = new RedisSlidingWindowLog({ client: c.client, prefix: `lowered:${blockCacheSize}:`, time: 'limiter', blockCacheSize });
      const out: RateLimitResult[] = [];
      for (const [t, cost, q] of steps) out.push(await s.consume('k', t, cost, q));
      return out;
    };
    const model = new MemoryModel(new SlidingWindowLog());
    const expected = steps.map(([t, cost, q]) => model.consume('k', t, cost, q));
    // Without the cache Redis is the model; with it, the last decision differs.
    expect(await outcomes(0)).toEqual(expected);
    expect(await outcomes(10_000)).toEqual(expected);
  });
});

describe('time: "limiter", a reading more than a window behind the key', () => {
  // The documentation of `time: "limiter"`: "decisions and retryAfter are exactly the in-memory
  // strategies', at any reading". Both scripts forget a state more than a window ahead of the
  // time given (meant for a failover to a server whose clock is behind); the in-memory
  // strategies count such a reading as the key's latest (time stands still).
  const cases = [
    ['GCRA', () => new GCRA(), (prefix: string) => new RedisGCRA({ client: c.client, prefix, time: 'limiter' })],
    ['sliding-window log', () => new SlidingWindowLog(), (prefix: string) => new RedisSlidingWindowLog({ client: c.client, prefix, time: 'limiter' })],
  ] as const;
  it.each(cases)('%s: the same decisions as the in-memory strategy', async (label, memory, redis) => {
    const s = redis(`behind:${label}:`);
    const model = new MemoryModel(memory());
    const quota: Quota = { threshold: 3, windowMs: 1_000, windowSeconds: 1 };
    const steps: [number, number][] = [
      [T0 + 5_000, 3],
      [T0, 1], // the clock stepped back 5 s (a replay, an injected clock reset)
    ];
    for (const [t, cost] of steps) expect(await s.consume('k', t, cost, quota)).toEqual(model.consume('k', t, cost, quota));
  });
});

describe('ordering', () => {
  it("a key's decisions keep their order when the script is reloaded between two calls in flight", async () => {
    await c.command('SCRIPT', 'FLUSH');
    const inner = toRedisAdapter(c.client);
    let first = true;
    const adapter: RedisAdapter = {
      ratewardenAdapter: true,
      evalSha: (sha, keys, args) => {
        const reply = inner.evalSha(sha, keys, args);
        if (first) {
          first = false;
          // Another process, recovering from the same flush (a restart, a failover), loads the
          // script now: after this call's EVALSHA, before the next one's (one connection, so
          // the server sees them in this order).
          void c.command('SCRIPT', 'LOAD', LEAN_SCRIPT);
        }
        return reply;
      },
      eval: (script, keys, args) => inner.eval(script, keys, args),
    };
    const s = new RedisSlidingWindowLog({ client: adapter, prefix: 'order:', time: 'limiter', timeoutSeconds: Infinity, blockCacheSize: 0 });
    const model = new MemoryModel(new SlidingWindowLog());
    const quota: Quota = { threshold: 1, windowMs: 60_000, windowSeconds: 60 };
    // Issued in order; the first is sent at once, the second as a batch of its own while the
    // first is in flight.
    const a = s.consume('k', T0, 1, quota);
    const b = s.consume('k', T0 + 1, 1, quota);
    expect([await a, await b]).toEqual([model.consume('k', T0, 1, quota), model.consume('k', T0 + 1, 1, quota)]);
  });
});
