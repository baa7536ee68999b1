// A refusal caused by a store failure is not a rate-limit refusal: an Express server on 127.0.0.1
// limited by a Redis strategy with onFailure 'fail-closed', against a real redis-server killed with
// SIGKILL. While Redis is down the middleware answers 503 with the "Rate limit store unavailable"
// problem and Retry-After; a client over its limit still gets the 429; once Redis is back, the
// limit applies again. The node-redis client is made as the README makes it (an `error` listener,
// its default reconnection), and the decisions made while it reconnects fail at once (the
// strategy's timeout is an hour: one that waited would time the test out).
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createClient } from 'redis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RateLimiter, type RateLimitResult } from '../../../src/index.js';
import { expressRateLimit } from '../../../src/middleware/express.js';
import { RedisGCRA } from '../../../src/redis/index.js';
import { RedisServer } from '../../support/redis-server.js';

let redis: RedisServer;
let client: ReturnType<typeof createClient>;
let server: Server;
let base: string;
/** What `onRejected` saw, on the route that has one. */
const rejected: RateLimitResult[] = [];

beforeAll(async () => {
  redis = await RedisServer.start();
  client = createClient({ url: redis.url });
  client.on('error', () => {});
  await client.connect();
  const limiter = (prefix: string): RateLimiter =>
    new RateLimiter({
      threshold: 1,
      windowSeconds: 60,
      strategy: new RedisGCRA({ client, prefix, onFailure: 'fail-closed', timeoutSeconds: 3600 }),
    });
  const app = express();
  app.get('/api', expressRateLimit({ limiter: limiter('api:'), key: (req) => req.get('x-user') ?? 'anonymous' }), (_req, res) => {
    res.json({ ok: true });
  });
  app.get(
    '/hooked',
    expressRateLimit({
      limiter: limiter('hooked:'),
      key: (req) => req.get('x-user') ?? 'anonymous',
      onRejected: (_req, result, res) => {
        rejected.push(result);
        return { status: res.statusCode, degraded: result.degraded ?? null };
      },
    }),
    (_req, res) => {
      res.json({ ok: true });
    },
  );
  server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server?.close();
  client?.destroy();
  await redis?.stop();
});

async function get(path: string, user: string): Promise<{ status: number; body: unknown; retryAfter: string | null; type: string | null }> {
  const response = await fetch(`${base}${path}`, { headers: { 'x-user': user } });
  return {
    status: response.status,
    body: (await response.json()) as unknown,
    retryAfter: response.headers.get('Retry-After'),
    type: response.headers.get('Content-Type'),
  };
}

it('answers 503 "Rate limit store unavailable" while Redis is down, 429 to a client over its limit, and the limit again once Redis is back', async () => {
  expect(await get('/api', 'alice')).toMatchObject({ status: 200, body: { ok: true } });
  const overLimit = await get('/api', 'alice');
  expect(overLimit).toMatchObject({ status: 429, type: 'application/problem+json', body: { title: 'Too Many Requests', status: 429 } });

  const reconnecting = new Promise<void>((resolve) => client.once('reconnecting', () => resolve()));
  await redis.kill();
  await reconnecting;
  // bob never sent a request: he is refused because the store is down, and told so.
  const down = await get('/api', 'bob');
  expect(down).toEqual({
    status: 503,
    type: 'application/problem+json',
    retryAfter: '1',
    body: {
      type: 'about:blank',
      title: 'Rate limit store unavailable',
      status: 503,
      detail: "This request was refused because the rate limit's store could not be reached, not because the client exceeded the limit; retry in 1 s.",
      retryAfter: 1,
    },
  });
  // onRejected gets the result, whose `degraded` tells, with the status already 503.
  expect((await get('/hooked', 'bob')).body).toEqual({ status: 503, degraded: 'fail-closed' });
  expect(rejected.map((r) => r.degraded)).toEqual(['fail-closed']);

  const ready = new Promise<void>((resolve) => client.once('ready', () => resolve()));
  await redis.restart();
  await ready;
  // An empty server: bob starts afresh, and his second request is over the limit again.
  expect(await get('/api', 'bob')).toMatchObject({ status: 200 });
  expect(await get('/api', 'bob')).toMatchObject({ status: 429, retryAfter: '60' });
}, 20_000);
