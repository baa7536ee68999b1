// The contract suite (test/support/strategy-contract.ts) over the Redis stores, on a real
// redis-server, timed by the limiter's injected clock (`time: 'limiter'`): the same invariants
// as every in-memory strategy and every other store. Each limiter gets a prefix of its own.
import { afterAll, beforeAll } from 'vitest';
import { RedisGCRA, RedisSlidingWindowLog } from '../../../src/redis/index.js';
import { RedisServer, connectIoredis, type TestClient } from '../../support/redis-server.js';
import { describeStrategy } from '../../support/strategy-contract.js';

let server: RedisServer;
let client: TestClient;
beforeAll(async () => {
  server = await RedisServer.start();
  client = await connectIoredis(server.url);
});
afterAll(async () => {
  await client?.close();
  await server?.stop();
});

let namespace = 0;
const options = () => ({ client: client.client, prefix: `contract:${++namespace}:`, time: 'limiter' as const });
const suite = { contract: 'store', runs: 25, timeout: 60_000 } as const;

describeStrategy('redis-sliding-window-log', () => new RedisSlidingWindowLog(options()), { maxPerWindow: 1, maxWait: 1 }, suite);
describeStrategy('redis-gcra', () => new RedisGCRA(options()), { maxPerWindow: 2, maxWait: 1 }, suite);
