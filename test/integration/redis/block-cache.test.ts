// Issue 12, "Done when" 4 (and the DEL bound of 2): the exact local block cache against a real
// redis-server, under `time: 'limiter'`. A cached refusal is what Redis itself answers (a
// strategy without the cache, peeking the same key, and the in-memory model); what the cache
// cannot answer goes to Redis (a larger log cost, another tier); degraded results are never
// cached; peek is answered without a round trip; its size bounds it; after a DEL elsewhere it
// refuses for at most the cached refusal's retryAfter, and RateLimiter.reset drops the entry.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GCRA, RateLimiter, SlidingWindowLog, type Quota, type RateLimitStrategy } from '../../../src/index.js';
import { RedisGCRA, RedisSlidingWindowLog, type RedisStrategyOptions } from '../../../src/redis/index.js';
import type { RedisStrategy } from '../../../src/redis/redis-strategy.js';
import { CLIENTS, RedisServer, type TestClient } from '../../support/redis-server.js';
import { MemoryModel, recordingAdapter } from '../../support/script-calls.js';

const PAIRS: readonly [string, () => RateLimitStrategy<unknown>, (options: RedisStrategyOptions) => RedisStrategy, string][] = [
  ['sliding-window log', () => new SlidingWindowLog(), (o) => new RedisSlidingWindowLog(o), 'log'],
  ['GCRA', () => new GCRA(), (o) => new RedisGCRA(o), 'gcra'],
];

const T0 = 2_000_000;

let server: RedisServer;
beforeAll(async () => {
  server = await RedisServer.start();
});
afterAll(async () => {
  await server?.stop();
});

describe.each(CLIENTS)('with %s', (name, connect) => {
  let c: TestClient;
  beforeAll(async () => {
    c = await connect(server.url);
  });
  afterAll(async () => {
    await c?.close();
  });

  it.each(PAIRS)('%s: a cached refusal is answered without a round trip, with the fields Redis gives', async (label, memory, redis) => {
    const adapter = recordingAdapter(c.client);
    const prefix = `same:${name}:${label}:`;
    const cached = redis({ client: adapter, prefix, time: 'limiter' });
    // Redis's own answer: a strategy on the same keys without the cache, peeking (records nothing).
    const direct = redis({ client: c.client, prefix, time: 'limiter', blockCacheSize: 0 });
    const model = new MemoryModel(memory());
    const quota: Quota = { threshold: 4, windowMs: 1_000, windowSeconds: 1 };
    // The log: filled at staggered times (entries expire one by one), refused at +400 ms until
    // the first entry expires (+1,000 ms). GCRA: a full burst, refused at +100 ms until one unit
    // is repaid (+250 ms).
    const log = label !== 'GCRA';
    const fill: readonly (readonly [number, number])[] = log ? [[0, 1], [100, 2], [350, 1]] : [[0, 4]];
    const refusedAt = log ? 400 : 100;
    const end = log ? 1_000 : 250;
    for (const [dt, cost] of fill) {
      expect(await cached.consume('k', T0 + dt, cost, quota)).toEqual(model.consume('k', T0 + dt, cost, quota));
    }
    const refusal = await cached.consume('k', T0 + refusedAt, 1, quota);
    expect(refusal).toEqual(model.consume('k', T0 + refusedAt, 1, quota));
    expect(refusal.allowed).toBe(false);
    const sent = adapter.sentDecisions();
    // Within its wait, at odd instants, every cost the cache may answer (GCRA: any its debt refuses).
    const costs = log ? [1] : [1, 2, 4, 3];
    for (const dt of [refusedAt, refusedAt + 0.25, refusedAt + 1, (refusedAt + end) / 2 + 0.5, end - 1, end - 0.25]) {
      for (const cost of costs) {
        const t = T0 + dt;
        const answer = await cached.consume('k', t, cost, quota);
        expect(answer, `cost ${cost} at +${dt} ms`).toEqual(await direct.peek('k', t, cost, quota));
        expect(answer).toEqual(model.consume('k', t, cost, quota));
        expect(answer.allowed).toBe(false);
      }
    }
    expect(adapter.sentDecisions()).toBe(sent);
    // At the end of the wait the cache lets go: Redis decides (allowed), and agrees with the model.
    const after = await cached.consume('k', T0 + end, 1, quota);
    expect(after).toEqual(model.consume('k', T0 + end, 1, quota));
    expect(after.allowed).toBe(true);
    expect(adapter.sentDecisions()).toBe(sent + 1);
  });

  it.each(PAIRS)('%s: at an epoch-scale reading (2^45 ms), a cached refusal is the model\'s to the tick', async (label, memory, redis) => {
    // At 2^45 ms a reading's double holds 2^-7 ms, not a whole tick of 2^-10 ms: the cache must
    // count elapsed time from differences of readings, as the strategies do (found by the
    // contract property: an absolute "until" time lost the last bits).
    const adapter = recordingAdapter(c.client);
    const cached = redis({ client: adapter, prefix: `epoch:${name}:${label}:`, time: 'limiter' });
    const model = new MemoryModel(memory());
    const quota: Quota = { threshold: 1, windowMs: 4_989, windowSeconds: 4.989 };
    const base = 35_184_372_083_842;
    const steps: readonly (readonly [string, number])[] = [
      ['b', base + 1.7],
      ['b', base + 1.7],
      ['a', base + 1.8],
      ['b', base + 1.8],
      ['b', base + 2_000.3],
    ];
    for (const [key, t] of steps) expect(await cached.consume(key, t, 1, quota)).toEqual(model.consume(key, t, 1, quota));
    // The last two of b were answered by the cache: sent were b, b, a.
    expect(adapter.sentDecisions()).toBe(3);
  });

  it.each(PAIRS)('%s: peek is answered by the cache, without a round trip', async (label, memory, redis) => {
    const adapter = recordingAdapter(c.client);
    const strategy = redis({ client: adapter, prefix: `peek:${name}:${label}:`, time: 'limiter' });
    const model = new MemoryModel(memory());
    const quota: Quota = { threshold: 2, windowMs: 10_000, windowSeconds: 10 };
    for (let i = 0; i < 3; i++) expect(await strategy.consume('k', T0, 1, quota)).toEqual(model.consume('k', T0, 1, quota));
    const sent = adapter.sentDecisions();
    const peeked = await strategy.peek('k', T0 + 2_000, 1, quota);
    expect(peeked).toEqual(model.peek('k', T0 + 2_000, 1, quota));
    expect(peeked.allowed).toBe(false);
    expect(adapter.sentDecisions()).toBe(sent);
  });

  it('sliding-window log: a cost other than the cached one goes to Redis; a refusal of cost > remaining + 1 is not cached', async () => {
    const adapter = recordingAdapter(c.client);
    const strategy = new RedisSlidingWindowLog({ client: adapter, prefix: `cost:${name}:`, time: 'limiter' });
    const model = new MemoryModel(new SlidingWindowLog());
    const quota: Quota = { threshold: 3, windowMs: 10_000, windowSeconds: 10 };
    /** One request, checked against the model; `roundTrip`: whether it must reach Redis (or either). */
    const step = async (key: string, t: number, cost: number, roundTrip: boolean | 'either'): Promise<void> => {
      const sent = adapter.sentDecisions();
      expect(await strategy.consume(key, t, cost, quota), `${key} cost ${cost} at ${t}`).toEqual(model.consume(key, t, cost, quota));
      if (roundTrip !== 'either') expect(adapter.sentDecisions() - sent, `${key} cost ${cost} at ${t}: round trip`).toBe(roundTrip ? 1 : 0);
    };
    await step('a', T0, 3, true);
    await step('a', T0 + 1, 1, true); // refused with remaining 0: cached (cost 1 = 0 + 1)
    await step('a', T0 + 2, 1, false);
    await step('a', T0 + 3, 2, true); // a larger cost: only Redis knows
    await step('a', T0 + 4, 1, 'either'); // refused, from the cache or from Redis
    // Remaining 1, cost 3: an entry may expire before its wait ends; not cached.
    await step('b', T0, 2, true);
    await step('b', T0 + 1, 3, true);
    await step('b', T0 + 2, 3, true);
  });

  it.each(PAIRS)('%s: another tier (quota) misses the cache', async (label, memory, redis) => {
    const adapter = recordingAdapter(c.client);
    const strategy = redis({ client: adapter, prefix: `tier:${name}:${label}:`, time: 'limiter' });
    const model = new MemoryModel(memory());
    const basic: Quota = { threshold: 2, windowMs: 10_000, windowSeconds: 10 };
    const gold: Quota = { threshold: 4, windowMs: 20_000, windowSeconds: 20 };
    for (let i = 0; i < 3; i++) expect(await strategy.consume('k', T0, 1, basic)).toEqual(model.consume('k', T0, 1, basic));
    let sent = adapter.sentDecisions();
    expect(await strategy.consume('k', T0 + 1, 1, basic)).toEqual(model.consume('k', T0 + 1, 1, basic));
    expect(adapter.sentDecisions()).toBe(sent);
    // Upgraded: Redis decides under the new quota (the log allows; GCRA converts its debt to
    // the new span, full), exactly as in memory.
    expect(await strategy.consume('k', T0 + 2, 1, gold)).toEqual(model.consume('k', T0 + 2, 1, gold));
    expect(adapter.sentDecisions()).toBe(sent + 1);
    sent = adapter.sentDecisions();
    // Back to basic: the entry (dropped, or replaced by a refusal under gold) does not answer it.
    expect(await strategy.consume('k', T0 + 3, 1, basic)).toEqual(model.consume('k', T0 + 3, 1, basic));
    expect(adapter.sentDecisions()).toBe(sent + 1);
  });

  it.each(PAIRS)('%s: degraded refusals are never cached (fail-closed and local, on a key of the wrong type)', async (label, memory, redis, suffix) => {
    for (const onFailure of ['fail-closed', 'local'] as const) {
      const adapter = recordingAdapter(c.client);
      const prefix = `degraded:${name}:${label}:${onFailure}:`;
      const strategy = redis({ client: adapter, prefix, time: 'limiter', onFailure });
      const key = `${prefix}{k}:${suffix}`;
      // A string for the log's sorted set, a hash for GCRA's string: WRONGTYPE in the script.
      if (label === 'GCRA') await c.command('HSET', key, 'f', 'v');
      else await c.command('SET', key, 'not a sorted set');
      const quota: Quota = { threshold: 1, windowMs: 10_000, windowSeconds: 10 };
      const degraded = [];
      for (let i = 0; i < 3; i++) degraded.push(await strategy.consume('k', T0, 1, quota));
      expect(degraded.map((r) => r.degraded)).toEqual([onFailure, onFailure, onFailure]);
      expect(degraded.at(-1)?.allowed).toBe(false);
      // Each one asked Redis: none was answered by the cache.
      expect(adapter.sentDecisions()).toBe(3);
      await c.command('DEL', key);
      const shared = await strategy.consume('k', T0 + 1, 1, quota);
      expect(shared).toEqual(new MemoryModel(memory()).consume('k', T0 + 1, 1, quota));
      expect(shared.allowed).toBe(true);
      expect(adapter.sentDecisions()).toBe(4);
    }
  });

  it('memory is bounded: with blockCacheSize 2, the third refused key evicts the oldest', async () => {
    const adapter = recordingAdapter(c.client);
    const strategy = new RedisGCRA({ client: adapter, prefix: `bound:${name}:`, time: 'limiter', blockCacheSize: 2 });
    const quota: Quota = { threshold: 1, windowMs: 60_000, windowSeconds: 60 };
    for (const key of ['a', 'b', 'c']) {
      expect(await strategy.consume(key, T0, 1, quota)).toMatchObject({ allowed: true });
      expect(await strategy.consume(key, T0, 1, quota)).toMatchObject({ allowed: false });
    }
    const ask = async (key: string): Promise<number> => {
      const sent = adapter.sentDecisions();
      expect(await strategy.consume(key, T0 + 1, 1, quota)).toMatchObject({ allowed: false });
      return adapter.sentDecisions() - sent;
    };
    // b and c are held; a, the oldest, was evicted: Redis answers it.
    expect([await ask('b'), await ask('c'), await ask('a')]).toEqual([0, 0, 1]);
  });

  it.each(PAIRS)('%s: after a DEL from another connection, a cached refusal holds at most its retryAfter, then Redis decides', async (label, memory, redis, suffix) => {
    const adapter = recordingAdapter(c.client);
    const prefix = `del:${name}:${label}:`;
    const strategy = redis({ client: adapter, prefix, time: 'limiter' });
    const model = new MemoryModel(memory());
    const quota: Quota = { threshold: 2, windowMs: 10_000, windowSeconds: 10 };
    for (let i = 0; i < 2; i++) expect(await strategy.consume('k', T0, 1, quota)).toEqual(model.consume('k', T0, 1, quota));
    const refusal = await strategy.consume('k', T0 + 1_000, 1, quota);
    expect(refusal).toEqual(model.consume('k', T0 + 1_000, 1, quota));
    const until = T0 + 1_000 + refusal.retryAfter * 1000;
    expect(await c.command('DEL', `${prefix}{k}:${suffix}`)).toBe(1);
    model.delete('k');
    const sent = adapter.sentDecisions();
    // Still refused here (the documented bound), without asking Redis, until the wait ends...
    for (const t of [T0 + 1_001, until - 1, until - 0.25]) {
      expect(await strategy.consume('k', t, 1, quota), `at ${t}`).toMatchObject({ allowed: false });
    }
    expect(adapter.sentDecisions()).toBe(sent);
    // ...and no longer: Redis, with the key gone, allows it as a first request.
    expect(await strategy.consume('k', until, 1, quota)).toEqual(model.consume('k', until, 1, quota));
    expect(adapter.sentDecisions()).toBe(sent + 1);
  });

  it.each(PAIRS)('%s: RateLimiter.reset(user) in this process drops the cached refusal at once', async (label, _memory, redis, suffix) => {
    const adapter = recordingAdapter(c.client);
    const prefix = `reset:${name}:${label}:`;
    let now = T0;
    const limiter = new RateLimiter({ threshold: 2, windowSeconds: 60, clock: () => now, strategy: redis({ client: adapter, prefix, time: 'limiter' }) });
    expect((await limiter.allowRequest('alice')).allowed).toBe(true);
    expect((await limiter.allowRequest('alice')).allowed).toBe(true);
    expect((await limiter.allowRequest('alice')).allowed).toBe(false);
    now += 1;
    let sent = adapter.sentDecisions();
    expect((await limiter.allowRequest('alice')).allowed).toBe(false);
    expect(adapter.sentDecisions()).toBe(sent); // cached
    await c.command('DEL', `${prefix}{alice}:${suffix}`);
    limiter.reset('alice');
    sent = adapter.sentDecisions();
    expect(await limiter.allowRequest('alice')).toMatchObject({ allowed: true, remaining: 1 });
    expect(adapter.sentDecisions()).toBe(sent + 1);
  });
});
