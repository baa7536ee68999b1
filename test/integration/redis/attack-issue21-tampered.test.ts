// Issue 21's attack, tampered state. script.ts says "A unit's checks only read ... a unit that
// fails in Redis has written nothing", the README "A group ... decided in one script call, all
// or nothing", and "no decision reported failed is recorded". The attack found a commit failing
// AFTER earlier writes of its unit (l_commit parsed the newest member's sequence number, on a
// member name the library did not write), leaving the group's earlier entries recorded; the
// number is now read by the check, which writes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RateLimitGroup, RateLimiter } from '../../../src/index.js';
import { RateWardenRedisCommandError, RateWardenRedisReplyError, RedisGCRA, RedisSlidingWindowLog } from '../../../src/redis/index.js';
import { failOnUnhandledRejections } from '../../support/unhandled.js';
import { CLIENTS, RedisServer, type TestClient } from '../../support/redis-server.js';

failOnUnhandledRejections();

const NOW = 7_000_000; // the limiter's clock (time: 'limiter'), ms
const TICKS = NOW * 1024;

describe.each(CLIENTS)('with %s', (name, connect) => {
  let server: RedisServer;
  let c: TestClient;
  beforeAll(async () => {
    server = await RedisServer.start();
    c = await connect(server.url);
  });
  afterAll(async () => {
    await c?.close();
    await server?.stop();
  });

  it('a group whose second limit\'s log has a foreign member at the decision\'s tick is reported failed and recorded nowhere', async () => {
    const p = `g1-${name}-`;
    const gcra = new RedisGCRA({ client: c.client, prefix: `${p}a:`, time: 'limiter' });
    const log = new RedisSlidingWindowLog({ client: c.client, prefix: `${p}b:`, time: 'limiter' });
    const clock = (): number => NOW;
    const group = new RateLimitGroup([
      { limiter: new RateLimiter({ threshold: 5, windowSeconds: 60, strategy: gcra, clock }), name: 'gcra' },
      { limiter: new RateLimiter({ threshold: 5, windowSeconds: 60, strategy: log, clock }), name: 'log' },
    ]);
    // One live entry at exactly the decision's tick, with a member name not ending in 6 digits.
    await c.command('ZADD', log.redisKey('alice'), String(TICKS), 'foreign');
    const outcome = await group.allowRequest('alice').then(
      (r) => ({ r }),
      (error: unknown) => ({ error }),
    );
    expect('error' in outcome).toBe(true);
    expect((outcome as { error: unknown }).error).toBeInstanceOf(RateWardenRedisCommandError);
    // Reported failed (the group is all or nothing): nothing recorded anywhere.
    expect(await c.command('EXISTS', gcra.redisKey('alice'))).toBe(0);
  });

  it('a single log decision on a foreign member one tick ahead fails, writing nothing (the entries ahead of it stay)', async () => {
    const p = `s1-${name}-`;
    const log = new RedisSlidingWindowLog({ client: c.client, prefix: p, time: 'limiter', blockCacheSize: 0 });
    const limiter = new RateLimiter({ threshold: 5, windowSeconds: 60, strategy: log, clock: () => NOW });
    const key = log.redisKey('bob');
    // Far ahead (more than a window: "written under a clock that was ahead"), and one foreign
    // member at the decision's tick.
    await c.command('ZADD', key, String(TICKS + 61_000 * 1024), '999999999-000000', String(TICKS), 'foreign');
    const error = await limiter.allowRequest('bob').then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(RateWardenRedisCommandError);
    // "a unit that fails in Redis has written nothing"
    expect(await c.command('ZCARD', key)).toBe(2);
  });

  it('a log member ending in "nan": a decision of cost 3 records one member only (the count shrinks)', async () => {
    const p = `n1-${name}-`;
    const log = new RedisSlidingWindowLog({ client: c.client, prefix: p, time: 'limiter', blockCacheSize: 0 });
    const limiter = new RateLimiter({ threshold: 5, windowSeconds: 60, strategy: log, clock: () => NOW });
    const key = log.redisKey('carol');
    await c.command('ZADD', key, String(TICKS), 'x-nan');
    const outcome = await limiter.allowRequest('carol', { cost: 3 }).then((r) => ({ r }), (error: unknown) => ({ error }));
    const card = Number(await c.command('ZCARD', key));
    // Either the decision fails (nothing written) or it records 3 members beside the 1.
    if ('r' in outcome && outcome.r.allowed) expect(card).toBe(4);
    else expect(card).toBe(1);
  });

  it('a GCRA key holding 32 random bytes: the decision fails as a documented error class, or decides sanely', async () => {
    const p = `r1-${name}-`;
    const gcra = new RedisGCRA({ client: c.client, prefix: p, blockCacheSize: 0 });
    const limiter = new RateLimiter({ threshold: 5, windowSeconds: 60, strategy: gcra });
    const ioredis = await import('ioredis');
    const bin = new ioredis.Redis(server.url);
    try {
      let seed = 12345;
      const rand = (): number => {
        seed = (seed * 1103515245 + 12345) & 0x7fffffff;
        return seed & 0xff;
      };
      const kinds = new Set<string>();
      for (let i = 0; i < 40; i++) {
        const bytes = Buffer.from(Array.from({ length: 32 }, rand));
        // Some with plausible fields: NaN / Infinity / huge doubles.
        if (i % 4 === 1) bytes.writeDoubleLE(Number.NaN, 8);
        if (i % 4 === 2) { bytes.writeDoubleLE(1e300, 0); bytes.writeDoubleLE(1e300, 24); }
        if (i % 4 === 3) { bytes.writeDoubleLE(Number.NaN, 8); bytes.writeDoubleLE(5, 16); bytes.writeDoubleLE(60_000, 24); bytes.writeDoubleLE(0, 0); }
        await bin.set(gcra.redisKey(`u${i}`), bytes);
        const outcome = await limiter.allowRequest(`u${i}`).then((r) => ({ r }), (error: unknown) => ({ error }));
        if ('error' in outcome) {
          const e = outcome.error;
          expect(e instanceof RateWardenRedisReplyError || e instanceof RateWardenRedisCommandError, String(e)).toBe(true);
          kinds.add((e as Error).constructor.name);
        } else {
          kinds.add(`allowed=${outcome.r.allowed} remaining=${outcome.r.remaining}`);
          expect(Number.isFinite(outcome.r.remaining)).toBe(true);
          expect(outcome.r.remaining).toBeLessThanOrEqual(5);
        }
      }
    } finally {
      bin.disconnect();
    }
  });

  it('a GCRA key with a NaN debt under the current limit: reported failed, and nothing written', async () => {
    const p = `nan-${name}-`;
    const gcra = new RedisGCRA({ client: c.client, prefix: p, time: 'limiter', blockCacheSize: 0 });
    const limiter = new RateLimiter({ threshold: 5, windowSeconds: 60, strategy: gcra, clock: () => NOW });
    const ioredis = await import('ioredis');
    const bin = new ioredis.Redis(server.url);
    try {
      const bytes = Buffer.alloc(32);
      bytes.writeDoubleLE(TICKS, 0);
      bytes.writeDoubleLE(Number.NaN, 8);
      bytes.writeDoubleLE(5, 16);
      bytes.writeDoubleLE(60_000, 24);
      const key = gcra.redisKey('dave');
      await bin.set(key, bytes);
      const outcome = await limiter.allowRequest('dave').then((r) => ({ r }), (error: unknown) => ({ error }));
      const after = await bin.getBuffer(key);
      if ('error' in outcome) expect(after?.equals(bytes)).toBe(true);
    } finally {
      bin.disconnect();
    }
  });
});
