// Attack on issue 22: the Redis block cache and a refund in the same process, racing a refusal
// whose reply arrives after the refund was sent (one connection, replies in order).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RateLimiter } from '../../src/index.js';
import { RedisGCRA, RedisSlidingWindowLog, type RedisStrategyOptions } from '../../src/redis/index.js';
import type { RedisStrategy } from '../../src/redis/redis-strategy.js';
import { CLIENTS, RedisServer, type TestClient } from '../support/redis-server.js';

let server: RedisServer;
beforeAll(async () => {
  server = await RedisServer.start();
});
afterAll(async () => {
  await server?.stop();
});

let namespace = 0;
const algorithms = [
  ['log', (o: RedisStrategyOptions): RedisStrategy => new RedisSlidingWindowLog(o)],
  ['gcra', (o: RedisStrategyOptions): RedisStrategy => new RedisGCRA(o)],
] as const;

describe.each(CLIENTS)('%s', (_client, connect) => {
  let c: TestClient;
  beforeAll(async () => {
    c = await connect(server.url);
  });
  afterAll(async () => {
    await c?.close();
  });

  it.each(algorithms)(
    '%s: a refund in this process is never undone by a refusal decided before it whose reply comes after (block cache)',
    async (_name, make) => {
      const prefix = `atk22c:${_client}:${++namespace}:`;
      const clock = { now: 1_000_000 };
      const limiter = new RateLimiter({ threshold: 2, windowSeconds: 3600, clock: () => clock.now, strategy: make({ client: c.client, prefix, time: 'limiter' }) });
      const truth = new RateLimiter({ threshold: 2, windowSeconds: 3600, clock: () => clock.now, strategy: make({ client: c.client, prefix, time: 'limiter', blockCacheSize: 0 }) });
      const first = await limiter.reserve('k');
      const second = await limiter.reserve('k');
      expect(first.allowed && second.allowed).toBe(true);
      // A third attempt (refused by Redis), and the refund of the second, issued in the same tick:
      // the refund drops the cache entry when it is sent, the refusal's reply then fills it.
      const [third, refunded] = await Promise.all([limiter.reserve('k'), second.refund()]);
      expect(third.allowed).toBe(false);
      expect(refunded).toBe(true);
      // Redis has one unit recorded: a request is allowed.
      expect((await truth.peek('k')).allowed).toBe(true);
      expect((await limiter.peek('k')).allowed).toBe(true);
      expect((await limiter.allowRequest('k')).allowed).toBe(true);
    },
  );

  it.each(algorithms)(
    '%s: delete() in this process is never undone by a refusal decided before it whose reply comes after (block cache)',
    async (_name, make) => {
      const prefix = `atk22c:${_client}:${++namespace}:`;
      const clock = { now: 1_000_000 };
      const limiter = new RateLimiter({ threshold: 1, windowSeconds: 3600, clock: () => clock.now, strategy: make({ client: c.client, prefix, time: 'limiter' }) });
      expect((await limiter.allowRequest('k')).allowed).toBe(true);
      const [refused, deleted] = await Promise.all([limiter.allowRequest('k'), limiter.delete('k')]);
      expect(refused.allowed).toBe(false);
      expect(deleted).toBe(true);
      // Redis holds nothing for the key: the next request is a first request.
      expect((await limiter.allowRequest('k')).allowed).toBe(true);
    },
  );
});
