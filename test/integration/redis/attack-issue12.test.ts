// Issue 12, attacked: adversarial scenarios against the lean script's queue (micro-batching,
// deadlines) and the exact local block cache, against a real redis-server. Each test states a
// promise of the code's own documentation and checks it in a case found to break it (each
// failed when written, but "GCRA: the same results as the model"; fixed since, or turned into
// the documented bound, or — the ordering around NOSCRIPT — marked as a known gap):
// - deadlines: a decision that joins a tick's deadline group after its timer was cleared (every
//   earlier member settled in the same tick) gets no timeout at all;
// - an adapter that throws synchronously: the error skips the failure policy, and the slot's
//   in-flight count and the block cache's in-flight entry leak (the key is never cached again);
// - the block cache keeps refusing after another limit on the same key (a tier elsewhere) with a
//   shorter window let the key go, where Redis and the in-memory model allow;
// - the log's block cache, after a lowered threshold (more live entries than the threshold),
//   answers refused consumes that in Redis would have dropped expiring entries: a later decision
//   under a longer window counts them;
// (time: "limiter", a reading more than a window behind the key: both scripts forget a state
// that far ahead, by design, as a failover to a server whose clock is behind would leave it; the
// in-memory strategies do not. Documented at `RedisStrategyOptions.time`; tested in
// contract.test.ts.)
// - replies the script cannot return (-2 without a string message, -1 for a cost within the
//   threshold) are taken as decisions;
// - a key's decisions run out of order when the script is loaded between two calls in flight
//   (NOSCRIPT on the first, the second found the script);
// - a seeded random walk against the in-memory model (fails on the log through the lowered
//   threshold above).
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { GCRA, SlidingWindowLog, type Quota, type RateLimitResult } from '../../../src/index.js';
import { RateWardenRedisReplyError, RateWardenRedisTimeoutError, RedisGCRA, RedisSlidingWindowLog, type RedisAdapter } from '../../../src/redis/index.js';
import { toRedisAdapter } from '../../../src/redis/client.js';
import { DECIDE_SCRIPT } from '../../../src/redis/script.js';
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
  // Not fixable locally (nothing tells this process that another limit freed the key): the
  // cache's documented bound (README, `blockCacheSize`) is that such a false refusal lasts at most
  // the cached refusal's retryAfter. Checked here: it refuses, within that bound, then agrees.
  it.each(cases)('%s: the cache refuses what Redis and the model allow, for at most the cached retryAfter', async (label, memory, redis) => {
    const prefix = `tier:${label}:`;
    const long: Quota = { threshold: 3, windowMs: 10_000, windowSeconds: 10 };
    const short: Quota = { threshold: 3, windowMs: 100, windowSeconds: 0.1 };
    const cached = redis(prefix);
    const other = redis(prefix);
    const direct = redis(prefix, 0);
    const model = new MemoryModel(memory());
    const steps: [typeof cached, number, number, Quota][] = [
      [cached, T0, 1, long],
      [cached, T0 + 1, 1, long],
      [cached, T0 + 2, 2, long], // refused (one unit left), cached for seconds
      [other, T0 + 200, 1, short], // the short window has let the key go: allowed
    ];
    const results: RateLimitResult[] = [];
    for (const [s, t, cost, q] of steps) {
      const r = await s.consume('k', t, cost, q);
      expect(r).toEqual(model.consume('k', t, cost, q));
      results.push(r);
    }
    const t = T0 + 300;
    const expected = model.peek('k', t, 2, long);
    expect(await direct.peek('k', t, 2, long)).toEqual(expected);
    expect(expected.allowed).toBe(true);
    const refusal = results[2] as RateLimitResult;
    const answer = await cached.peek('k', t, 2, long);
    expect(answer.allowed).toBe(false);
    expect(t + answer.retryAfter * 1000).toBeLessThanOrEqual(T0 + 2 + refusal.retryAfter * 1000);
    const end = T0 + 2 + refusal.retryAfter * 1000;
    expect(await cached.peek('k', end, 2, long)).toEqual(model.peek('k', end, 2, long));
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

describe('a reply the script cannot return', () => {
  // decision-queue.ts: a decision's values that "are not what the script returns (a misbehaving
  // adapter or a tampered key)" become a RateWardenRedisReplyError. The script's -2 always
  // carries Redis's message (a string), and its -1 ("never") only answers a cost above the
  // threshold.
  it.each([
    ['-2 without a message', [-2, null, 0, 0]],
    ['-2 with a number for its message', [-2, 0, 0, 0]],
    ['-1 for a cost within the threshold', [-1, 0, 0, 0]],
  ])('%s is a RateWardenRedisReplyError', async (_label, values) => {
    const inner = toRedisAdapter(c.client);
    // The real server answers; the decision's four values are replaced (its server time kept).
    const substitute = (reply: unknown, args: readonly string[]): unknown =>
      args[0] === 't' || !Array.isArray(reply) ? reply : [...values, reply[reply.length - 1]];
    const adapter: RedisAdapter = {
      ratewardenAdapter: true,
      evalSha: async (sha, keys, args) => substitute(await inner.evalSha(sha, keys, args), args),
      eval: async (script, keys, args) => substitute(await inner.eval(script, keys, args), args),
    };
    const s = new RedisGCRA({ client: adapter, prefix: 'reply:' });
    const quota: Quota = { threshold: 3, windowMs: 1_000, windowSeconds: 1 };
    const outcome = await s.consume('k', 0, 1, quota).then(
      (r) => r,
      (e: unknown) => e,
    );
    expect(outcome).toBeInstanceOf(RateWardenRedisReplyError);
  });
});

describe('ordering', () => {
  // A known gap, documented (README, micro-batching): the later call found the script that
  // another client loaded after the earlier call's NOSCRIPT, so it ran first. Holding every call
  // of the slot behind the fallback would not help (the later one was already sent). `.fails`
  // keeps the reproduction honest: once fixed, this test fails and must become a plain `it`.
  it.fails("a key's decisions keep their order when the script is reloaded between two calls in flight", async () => {
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
          void c.command('SCRIPT', 'LOAD', DECIDE_SCRIPT);
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

describe('one process against the in-memory model, at random', () => {
  // Decisions on two keys, four at a time (they batch), consumes and peeks, costs around and
  // above the threshold, a tier switching now and then, readings stepping back (less than the
  // shortest window: see above for more), under time: "limiter": every result is the model's,
  // with the block cache on. Seeded, so a failure names its sequence.
  const QUOTAS: readonly Quota[] = [
    { threshold: 3, windowMs: 1_000, windowSeconds: 1 },
    { threshold: 5, windowMs: 1_000, windowSeconds: 1 },
    { threshold: 3, windowMs: 300, windowSeconds: 0.3 },
    { threshold: 7, windowMs: 2_500, windowSeconds: 2.5 },
  ];
  const kinds = [
    ['GCRA', () => new GCRA(), (prefix: string) => new RedisGCRA({ client: c.client, prefix, time: 'limiter' })],
    ['sliding-window log', () => new SlidingWindowLog(), (prefix: string) => new RedisSlidingWindowLog({ client: c.client, prefix, time: 'limiter' })],
  ] as const;
  it.each(kinds)('%s: the same results as the model', async (label, memory, redis) => {
    for (let seed = 1; seed <= 20; seed++) {
      let x = seed * 7 + 4;
      const random = (): number => {
        x = (x * 1103515245 + 12345) & 0x7fffffff;
        return x / 0x80000000;
      };
      const s = redis(`random:${label}:${seed}:`);
      const model = new MemoryModel(memory());
      let t = 1_700_000_000_000 + seed * 1_000;
      let latest = t;
      const trail: string[] = [];
      for (let step = 0; step < 60; step++) {
        const ops: { peek: boolean; t: number; cost: number; quota: Quota; key: string }[] = [];
        for (let j = 0; j < 4; j++) {
          t += random() < 0.1 ? -Math.floor(random() * 200) : Math.floor(random() * 150) + (random() < 0.3 ? random() : 0);
          if (t < latest - 250) t = latest - 250;
          if (t > latest) latest = t;
          const quota = random() < 0.8 ? (QUOTAS[0] as Quota) : (QUOTAS[Math.floor(random() * QUOTAS.length)] as Quota);
          const cost = random() < 0.7 ? 1 : Math.floor(random() * (quota.threshold + 2)) + 1;
          ops.push({ peek: random() < 0.2, t, cost, quota, key: random() < 0.8 ? 'a' : 'b' });
        }
        const got = await Promise.all(ops.map((o) => (o.peek ? s.peek(o.key, o.t, o.cost, o.quota) : s.consume(o.key, o.t, o.cost, o.quota))));
        ops.forEach((o, j) => {
          trail.push(`${o.peek ? 'peek' : 'consume'} ${o.key} at +${o.t - 1_700_000_000_000} cost ${o.cost} quota ${o.quota.threshold}/${o.quota.windowMs}`);
          const want = o.peek ? model.peek(o.key, o.t, o.cost, o.quota) : model.consume(o.key, o.t, o.cost, o.quota);
          expect(got[j], `seed ${seed}, step ${step}, after:\n${trail.slice(-12).join('\n')}`).toEqual(want);
        });
      }
    }
  });
});
