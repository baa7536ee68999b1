// The contract suite (test/support/strategy-contract.ts) over the Redis stores, on a real
// redis-server, timed by the limiter's injected clock (`time: 'limiter'`): the same invariants
// as every in-memory strategy and every other store. Each limiter gets a prefix of its own.
// Through ioredis, and through @upstash/redis (HTTP) in front of the same server
// (test/support/upstash-front.ts).
import { afterAll, beforeAll, describe } from 'vitest';
import { RedisGCRA, RedisSlidingWindowLog } from '../../../src/redis/index.js';
import { RedisServer, connectIoredis, type TestClient } from '../../support/redis-server.js';
import { describeStrategy } from '../../support/strategy-contract.js';
import { connectUpstash } from '../../support/upstash-front.js';

let server: RedisServer;
let client: TestClient;
let upstash: TestClient;
beforeAll(async () => {
  server = await RedisServer.start();
  client = await connectIoredis(server.url);
  upstash = await connectUpstash(server.url);
});
afterAll(async () => {
  await client?.close();
  await upstash?.close();
  await server?.stop();
});

let namespace = 0;
const options = (c: () => TestClient) => () => ({ client: c().client, prefix: `contract:${++namespace}:`, time: 'limiter' as const });
const suite = { contract: 'store', runs: 25, timeout: 60_000 } as const;

for (const [name, c] of [
  ['ioredis', () => client],
  ['@upstash/redis', () => upstash],
] as const) {
  describe(`through ${name}`, () => {
    const o = options(c);
    describeStrategy('redis-sliding-window-log', () => new RedisSlidingWindowLog(o()), { maxPerWindow: 1, maxWait: 1 }, suite);
    describeStrategy('redis-gcra', () => new RedisGCRA(o()), { maxPerWindow: 2, maxWait: 1 }, suite);
  });
}
