// Shadow decisions (`allowRequest(user, { shadow: true })`) with the Redis strategies, against a
// real redis-server on 127.0.0.1, with each client: the same results and the same stored state as
// enforcing decisions, rejections counted in stats().shadowRejected, and DecisionInfo carrying the
// limiter's name and tier, alone and in a group decided in one script call (a shared batch).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RateLimitGroup, RateLimiter, type DecisionInfo, type RateLimitResult } from '../../../src/index.js';
import { RedisGCRA, RedisSlidingWindowLog, type RedisStrategyOptions } from '../../../src/redis/index.js';
import type { RedisStrategy } from '../../../src/redis/redis-strategy.js';
import { CLIENTS, RedisServer, type TestClient } from '../../support/redis-server.js';

const STRATEGIES: readonly [string, (options: RedisStrategyOptions) => RedisStrategy][] = [
  ['RedisSlidingWindowLog', (o) => new RedisSlidingWindowLog(o)],
  ['RedisGCRA', (o) => new RedisGCRA(o)],
];

let server: RedisServer;
beforeAll(async () => {
  server = await RedisServer.start();
});
afterAll(async () => {
  await server?.stop();
});

describe.each(CLIENTS)('shadow decisions with %s', (client, connect) => {
  let c: TestClient;
  beforeAll(async () => {
    c = await connect(server.url);
  });
  afterAll(async () => {
    await c?.close();
  });

  it.each(STRATEGIES)('%s: decided and stored as enforcing, rejections counted and marked', async (label, make) => {
    let now = 5_000_000;
    const limiterOn = (prefix: string, name: string): RateLimiter =>
      new RateLimiter({
        threshold: 2,
        windowSeconds: 10,
        clock: () => now,
        name,
        tier: 'base',
        strategy: make({ client: c.client, prefix: `shadow:${client}:${label}:${prefix}:`, time: 'limiter' }),
      });
    const shadowed = limiterOn('s', 'shadowed');
    const enforced = limiterOn('e', 'enforced');
    const infos: DecisionInfo[] = [];
    shadowed.on('decision', (_key, _result, _cost, info) => infos.push(info));

    const inShadow: RateLimitResult[] = [];
    const enforcing: RateLimitResult[] = [];
    for (let i = 0; i < 4; i++) {
      inShadow.push(await shadowed.allowRequest('k', { shadow: true }));
      enforcing.push(await enforced.allowRequest('k'));
      now += 100;
    }
    expect(inShadow).toEqual(enforcing);
    expect(inShadow.map((r) => r.allowed)).toEqual([true, true, false, false]);
    expect(shadowed.stats()).toMatchObject({ allowed: 2, rejected: 2, shadowRejected: 2 });
    expect(enforced.stats()).toMatchObject({ allowed: 2, rejected: 2, shadowRejected: 0 });
    expect(infos).toEqual(Array.from({ length: 4 }, () => ({ shadow: true, name: 'shadowed', tier: 'base' })));
    // The same state in Redis afterwards: the same answer now and once the window has moved on.
    expect(await shadowed.peek('k')).toEqual(await enforced.peek('k'));
    now += 9_850;
    expect(await shadowed.peek('k')).toEqual(await enforced.peek('k'));

    // A group of two limits on one client (one batch, one script call): refused by one, the
    // other records nothing; the rejecting member counts a shadow rejection, with its own labels.
    now += 10_000;
    const other = limiterOn('g', 'other');
    const otherInfos: DecisionInfo[] = [];
    other.on('decision', (_key, _result, _cost, info) => otherInfos.push(info));
    await shadowed.allowRequest('g', { cost: 2 });
    const group = new RateLimitGroup([shadowed, other]);
    const refused = await group.allowRequest('g', { shadow: true });
    expect(refused.allowed).toBe(false);
    expect(shadowed.stats().shadowRejected).toBe(3);
    expect(other.stats()).toMatchObject({ allowed: 0, rejected: 0, shadowRejected: 0 });
    expect(otherInfos).toEqual([]);
    expect((await other.peek('g')).remaining).toBe(2);
    const allowed = await group.allowRequest('x', { shadow: true });
    expect(allowed.allowed).toBe(true);
    expect(otherInfos).toEqual([{ shadow: true, name: 'other', tier: 'base' }]);
  });
});
