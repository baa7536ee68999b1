// Attack on issue 22 (refunds, penalties, blocks) on a real redis-server on 127.0.0.1, with both
// clients sharing one prefix: concurrency (parallel reserve + refund, double refunds, refunds
// racing decisions) and the failure policies with the server killed. Timed by Redis's clock
// (windows far longer than the test) or by an injected clock (`time: 'limiter'`).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RateLimiter, RateLimitGroup, type Reservation } from '../../src/index.js';
import { RedisGCRA, RedisSlidingWindowLog, type RedisStrategyOptions } from '../../src/redis/index.js';
import type { RedisStrategy } from '../../src/redis/redis-strategy.js';
import { RedisServer, connectIoredis, connectNodeRedis, type TestClient } from '../support/redis-server.js';

let server: RedisServer;
let io: TestClient;
let nr: TestClient;
beforeAll(async () => {
  server = await RedisServer.start();
  io = await connectIoredis(server.url);
  nr = await connectNodeRedis(server.url);
});
afterAll(async () => {
  await io?.close();
  await nr?.close();
  await server?.stop();
});

let namespace = 0;
const algorithms = [
  ['log', (o: RedisStrategyOptions): RedisStrategy => new RedisSlidingWindowLog(o)],
  ['gcra', (o: RedisStrategyOptions): RedisStrategy => new RedisGCRA(o)],
] as const;

describe.each(algorithms)('Redis %s, two clients on one prefix', (_name, make) => {
  it('200 parallel reserves + refunds of half of them from two clients: the limit holds, nothing negative, refunds exact', async () => {
    const prefix = `atk22:${++namespace}:`;
    const a = new RateLimiter({ threshold: 5, windowSeconds: 3600, strategy: make({ client: io.client, prefix }) });
    const b = new RateLimiter({ threshold: 5, windowSeconds: 3600, strategy: make({ client: nr.client, prefix }) });
    // Round 1: 200 at once; every allowed one is refunded at once (a successful login), racing
    // the later decisions.
    let allowed = 0;
    let refunded = 0;
    const round = await Promise.all(
      Array.from({ length: 200 }, async (_, i) => {
        const r = await (i % 2 === 0 ? a : b).reserve('victim');
        if (!r.allowed) return false;
        allowed++;
        if (i % 4 < 2) {
          if (await r.refund()) refunded++;
        }
        return true;
      }),
    );
    expect(round.filter(Boolean).length).toBe(allowed);
    // Never more than the threshold net; what is recorded now is what was allowed less refunded.
    expect(allowed - refunded).toBeLessThanOrEqual(5);
    // Asked through a third limiter with no block cache (the others' caches may hold a refusal
    // that a refund in the other process freed: the cache's documented bound).
    const fresh = new RateLimiter({ threshold: 5, windowSeconds: 3600, strategy: make({ client: io.client, prefix, blockCacheSize: 0 }) });
    const peek = await fresh.peek('victim');
    expect(peek.remaining).toBe(5 - (allowed - refunded));
    expect(peek.remaining).toBeGreaterThanOrEqual(0);
  });

  it('a double refund in parallel gives back once (Promise.all of two refunds, and of a refund with refund(1))', async () => {
    const prefix = `atk22:${++namespace}:`;
    const a = new RateLimiter({ threshold: 5, windowSeconds: 3600, strategy: make({ client: io.client, prefix }) });
    const r = await a.reserve('k', { cost: 2 });
    const outcomes = await Promise.all([r.refund(), r.refund(), r.refund(1)]);
    expect(outcomes.filter(Boolean).length).toBe(1);
    expect((await a.peek('k')).remaining).toBe(5);
  });

  it('a refund after delete() and a new reservation at once gives nothing back (the key is another one now)', async () => {
    const prefix = `atk22:${++namespace}:`;
    const a = new RateLimiter({ threshold: 3, windowSeconds: 3600, strategy: make({ client: io.client, prefix }) });
    const b = new RateLimiter({ threshold: 3, windowSeconds: 3600, strategy: make({ client: nr.client, prefix }) });
    const old = await a.reserve('k');
    expect(await b.delete('k')).toBe(true);
    const fresh = await b.reserve('k');
    expect(fresh.allowed).toBe(true);
    expect(await old.refund()).toBe(false);
    expect((await a.peek('k')).remaining).toBe(2);
  });

  it('a group reservation refunded per member then as a whole, in parallel, gives each unit back once', async () => {
    const p1 = `atk22:${++namespace}:`;
    const p2 = `atk22:${++namespace}:`;
    const a = new RateLimiter({ threshold: 4, windowSeconds: 3600, strategy: make({ client: io.client, prefix: p1 }) });
    const b = new RateLimiter({ threshold: 4, windowSeconds: 3600, strategy: make({ client: io.client, prefix: p2 }) });
    const group = new RateLimitGroup([a, b]);
    const r = await group.reserve('k', { cost: 2 });
    expect(r.allowed).toBe(true);
    const outcomes = await Promise.all([(r.reservations[0] as Reservation).refund(1), r.refund(1), r.refund(), (r.reservations[1] as Reservation).refund()]);
    expect(outcomes.length).toBe(4);
    expect((await a.peek('k')).remaining).toBe(4);
    expect((await b.peek('k')).remaining).toBe(4);
  });

  it('penalty far beyond the window: retryAfter finite, at most two windows, and never negative remaining', async () => {
    const prefix = `atk22:${++namespace}:`;
    const clock = { now: 1_000_000 };
    const a = new RateLimiter({ threshold: 3, windowSeconds: 10, clock: () => clock.now, strategy: make({ client: io.client, prefix, time: 'limiter' }) });
    let last;
    for (let i = 0; i < 50; i++) last = await a.penalty('k', 3);
    expect(last?.allowed).toBe(false);
    expect(Number.isFinite(last?.retryAfter)).toBe(true);
    expect(last?.retryAfter).toBeLessThanOrEqual(20);
    expect(last?.remaining).toBe(0);
    clock.now += 20_000;
    expect((await a.allowRequest('k')).allowed).toBe(true);
  });

  it('block then a shorter manual block replaces it, delete lifts it for the other client too', async () => {
    const prefix = `atk22:${++namespace}:`;
    const clock = { now: 5_000_000 };
    const a = new RateLimiter({ threshold: 3, windowSeconds: 10, clock: () => clock.now, strategy: make({ client: io.client, prefix, time: 'limiter' }) });
    const b = new RateLimiter({ threshold: 3, windowSeconds: 10, clock: () => clock.now, strategy: make({ client: nr.client, prefix, time: 'limiter' }) });
    await a.block('k', 100);
    expect((await b.allowRequest('k')).retryAfter).toBe(100);
    await b.block('k', 1);
    expect((await a.allowRequest('k')).retryAfter).toBe(1);
    await a.block('k', 100);
    expect(await b.delete('k')).toBe(true);
    expect((await a.allowRequest('k')).allowed).toBe(true);
  });
});

describe.each(algorithms)('Redis %s, bad input', (_name, make) => {
  it('penalty/block/refund with bad values reject naming the value and change nothing in Redis', async () => {
    const prefix = `atk22:${++namespace}:`;
    const clock = { now: 9_000_000 };
    const l = new RateLimiter({ threshold: 3, windowSeconds: 10, clock: () => clock.now, strategy: make({ client: io.client, prefix, time: 'limiter', blockCacheSize: 0 }) });
    const r = await l.reserve('k', { cost: 2 });
    const before = await l.peek('k');
    const keysBefore = (await io.command('KEYS', `${prefix}*`)) as string[];
    for (const p of [0, -1, 4, 2 ** 53, NaN, '2', 1.5, Infinity]) await expect(l.penalty('k', p as number)).rejects.toThrow(/`points`/);
    for (const s of [0, -1, NaN, 1e10, 0.0005, '5', Infinity]) await expect(l.block('k', s as number)).rejects.toThrow(/`seconds`/);
    for (const u of [0, -1, 1.5, NaN, '1', Infinity, 3]) await expect(r.refund(u as number)).rejects.toThrow(/`units`/);
    expect(await l.peek('k')).toEqual(before);
    expect(((await io.command('KEYS', `${prefix}*`)) as string[]).sort()).toEqual(keysBefore.sort());
    expect(await r.refund()).toBe(true);
  });

  it('a tier returning blockSeconds "60" fails the decision naming it, nothing recorded', async () => {
    const prefix = `atk22:${++namespace}:`;
    const l = new RateLimiter({
      threshold: 3,
      windowSeconds: 10,
      strategy: make({ client: io.client, prefix }),
      limitFor: () => ({ threshold: 1, windowSeconds: 10, blockSeconds: '60' as unknown as number }),
    });
    await expect(l.reserve('k')).rejects.toThrow(/`limitFor\(\)\.blockSeconds`/);
    await expect(l.penalty('k')).rejects.toThrow(/`limitFor\(\)\.blockSeconds`/);
    expect((await io.command('KEYS', `${prefix}*`)) as string[]).toEqual([]);
  });
});

describe('with Redis killed', () => {
  it.each(['throw', 'fail-open', 'fail-closed', 'local'] as const)(
    'onFailure %s: refund resolves false (rejects under throw), penalty/block/delete reject, as documented',
    async (policy) => {
      const own = await RedisServer.start();
      const c = await connectIoredis(own.url);
      try {
        const strategy = new RedisSlidingWindowLog({ client: c.client, prefix: `atk22k:${policy}:`, onFailure: policy, timeoutSeconds: 0.5 });
        const l = new RateLimiter({ threshold: 3, windowSeconds: 3600, strategy });
        const r = await l.reserve('k');
        expect(r.allowed).toBe(true);
        await own.kill();
        const refund = r.refund().then(
          (v) => ({ v }),
          (e: unknown) => ({ e }),
        );
        const outcome = await refund;
        if (policy === 'throw') expect(outcome).toHaveProperty('e');
        else expect(outcome).toEqual({ v: false });
        await expect(l.penalty('k')).rejects.toBeDefined();
        await expect(l.block('k', 5)).rejects.toBeDefined();
        await expect(l.delete('k')).rejects.toBeDefined();
        // A reservation decided by the policy while Redis is down refunds nothing, never throws.
        if (policy !== 'throw') {
          const degraded = await l.reserve('k');
          expect(await degraded.refund().catch(() => 'rejected')).toBe(false);
        }
      } finally {
        await c.close();
        await own.stop();
      }
    },
    20_000,
  );
});
