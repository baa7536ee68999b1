// Issue 21 attack: assorted faults against a real redis-server, with exact counts checked in Redis.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RateLimitGroup, RateLimiter, type RateLimitResult } from '../../../src/index.js';
import { RateWardenRedisCommandError, RedisGCRA, RedisSlidingWindowLog } from '../../../src/redis/index.js';
import { FAULT_CLIENTS, type FaultClient } from '../../support/fault-clients.js';
import { failOnUnhandledRejections } from '../../support/unhandled.js';
import { CLIENTS, RedisServer, lossyProxy, type TestClient } from '../../support/redis-server.js';

failOnUnhandledRejections();
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
type Outcome = { r: RateLimitResult } | { error: unknown };
const settle = (p: Promise<RateLimitResult>): Promise<Outcome> => p.then((r) => ({ r }), (error: unknown) => ({ error }));

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

  it('timeoutSeconds 0.004 (the smallest the safety promise covers): every decision settles, and none reported failed is recorded', async () => {
    // The attack found that no decision of 20 was decided (the reply allowance then exceeded
    // the timeout, so every server deadline had passed). The allowance is now at most half the
    // timeout; whether it is enough for the server to start depends on the machine (on this
    // project's 2-core VM it often is not), so what is held here is the safety promise. Below
    // about 4 ms the TSDoc of timeoutSeconds says it does not hold (the allowance, half the
    // timeout, is less than the 1 ms by which a timer may fire early): this test ran at 0.001
    // and failed once in CI under load (a decision reported failed was recorded), as documented.
    const strategy = new RedisGCRA({ client: c.client, prefix: `t1-${name}:`, timeoutSeconds: 0.004, onFailure: 'throw' });
    const limiter = new RateLimiter({ threshold: 50, windowSeconds: 60, strategy });
    const outcomes: Outcome[] = [];
    for (let i = 0; i < 20; i++) {
      outcomes.push(await settle(limiter.allowRequest(`alice-${i}`)));
      await sleep(5);
    }
    await sleep(20);
    expect(await c.command('PING')).toBe('PONG');
    for (let i = 0; i < 20; i++) {
      const o = outcomes[i] as Outcome;
      const recorded = Number(await c.command('EXISTS', strategy.redisKey(`alice-${i}`))) === 1;
      if ('error' in o) expect(recorded, `alice-${i} reported failed but recorded`).toBe(false);
      else expect(recorded).toBe(o.r.allowed);
    }
  });

  it('SCRIPT FLUSH hammered during a burst on one key: exactly threshold allowed, Redis holds exactly the allowed', async () => {
    for (const Kind of [RedisSlidingWindowLog, RedisGCRA]) {
      for (const batchSize of [1, 4, 32]) {
        const strategy = new Kind({ client: c.client, prefix: `sf-${name}-${Kind.name}-${batchSize}:`, batchSize, blockCacheSize: 0 });
        const limiter = new RateLimiter({ threshold: 40, windowSeconds: 3600, strategy });
        let stop = false;
        const flusher = (async () => {
          for (let i = 0; i < 200 && !stop; i++) {
            await c.command('SCRIPT', 'FLUSH');
            await new Promise((resolve) => setImmediate(resolve));
          }
        })();
        const outcomes: Outcome[] = [];
        for (let round = 0; round < 10; round++) {
          outcomes.push(...(await Promise.all(Array.from({ length: 10 }, () => settle(limiter.allowRequest('alice'))))));
        }
        stop = true;
        await flusher;
        const errors = outcomes.filter((o) => 'error' in o).map((o) => String((o).error));
        expect(errors).toEqual([]);
        const allowed = outcomes.filter((o) => 'r' in o && o.r.allowed).length;
        expect(allowed).toBe(40);
        if (Kind === RedisSlidingWindowLog) expect(Number(await c.command('ZCARD', strategy.redisKey('alice')))).toBe(40);
      }
    }
  });

  it('OOM under noeviction: a group fails as a whole (documented error), nothing recorded; singles fail alone', async () => {
    const a = new RedisSlidingWindowLog({ client: c.client, prefix: `oa-${name}:`, blockCacheSize: 0 });
    const b = new RedisGCRA({ client: c.client, prefix: `ob-${name}:`, blockCacheSize: 0 });
    const la = new RateLimiter({ threshold: 100, windowSeconds: 60, strategy: a });
    const lb = new RateLimiter({ threshold: 100, windowSeconds: 60, strategy: b });
    const group = new RateLimitGroup([{ limiter: la, name: 'a' }, { limiter: lb, name: 'b' }]);
    await la.allowRequest('warm'); // the handshake before memory is tight
    // One old entry in a's log for alice (expired soon): its tidy/commit writes first.
    const used = Number(/used_memory:(\d+)/.exec(String(await c.command('INFO', 'memory')))?.[1]);
    await c.command('CONFIG', 'SET', 'maxmemory-policy', 'noeviction');
    await c.command('CONFIG', 'SET', 'maxmemory', String(used - 1024));
    try {
      const g = await group.allowRequest('alice').then((r) => ({ r }), (error: unknown) => ({ error }));
      const single = await settle(lb.allowRequest('bob'));
      expect('error' in g).toBe(true);
      expect((g as { error: unknown }).error).toBeInstanceOf(RateWardenRedisCommandError);
      expect('error' in single && single.error).toBeInstanceOf(RateWardenRedisCommandError);
    } finally {
      await c.command('CONFIG', 'SET', 'maxmemory', '0');
    }
    expect(await c.command('EXISTS', a.redisKey('alice'), b.redisKey('alice'), b.redisKey('bob'))).toBe(0);
  });

  it('the command error for a foreign log member names ratewarden and the key, not the script\'s internals', async () => {
    const log = new RedisSlidingWindowLog({ client: c.client, prefix: `msg-${name}:`, time: 'limiter', blockCacheSize: 0 });
    const limiter = new RateLimiter({ threshold: 5, windowSeconds: 60, strategy: log, clock: () => 1000 });
    await c.command('ZADD', log.redisKey('x'), String(1000 * 1024), 'foreign');
    const e = await limiter.allowRequest('x').then(() => undefined, (error: unknown) => error);
    expect((e as Error).message).not.toMatch(/user_script|f_[0-9a-f]{40}/);
  });
});

describe('ioredis re-sends: replies lost mid-burst', () => {
  let server: RedisServer;
  let raw: FaultClient;
  beforeAll(async () => {
    server = await RedisServer.start();
    raw = FAULT_CLIENTS[0][1](server.port);
    await raw.ready();
  });
  afterAll(async () => {
    await raw?.close();
    await server?.stop();
  });

  for (const batchSize of [1, 4, 32]) {
    it(`batchSize ${batchSize}: 6 dropped connections during 300 decisions on one key: Redis holds exactly what was reported allowed, at most threshold`, async () => {
      const { Redis } = await import('ioredis');
      const proxy = await lossyProxy(server.port);
      const client = new Redis({ port: proxy.port, host: '127.0.0.1', retryStrategy: () => 10 });
      client.on('error', () => {});
      try {
        const strategy = new RedisSlidingWindowLog({ client, prefix: `lossy-${batchSize}:`, batchSize, timeoutSeconds: 1, blockCacheSize: 0 });
        const limiter = new RateLimiter({ threshold: 120, windowSeconds: 3600, strategy });
        await limiter.allowRequest('warm');
        let drops = 0;
        const outcomes: Outcome[] = [];
        for (let round = 0; round < 30; round++) {
          const burst = Array.from({ length: 10 }, () => settle(limiter.allowRequest('alice')));
          if (round % 5 === 2) void proxy.dropNextReply(round % 3).then(() => drops++);
          outcomes.push(...(await Promise.all(burst)));
        }
        await sleep(300);
        const allowed = outcomes.filter((o) => 'r' in o && o.r.allowed && o.r.degraded === undefined).length;
        const card = Number(await raw.command('ZCARD', strategy.redisKey('alice')));
        expect(drops).toBeGreaterThan(0);
        expect(card).toBeLessThanOrEqual(120);
        expect(card).toBe(allowed);
      } finally {
        client.disconnect();
        await proxy.close();
      }
    }, 30_000);
  }
});
