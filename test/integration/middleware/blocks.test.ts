// Blocks over HTTP (issue 22, section 2): a real Express server on 127.0.0.1, real requests
// (global fetch), an injected clock. Once a refusal starts a block, `Retry-After`, the IETF
// `RateLimit` field and the 429 problem body tell the block's remaining time, not the window's;
// a manual `block()` and a group are told the same way; in shadow mode a block is decided and
// counted but every request goes through.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { RateLimitGroup, RateLimiter } from '../../../src/index.js';
import { expressRateLimit, type ExpressRateLimitOptions } from '../../../src/middleware/express.js';

const servers: Server[] = [];

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** Serves `GET /` through `expressRateLimit(options)` on 127.0.0.1; returns its URL. */
async function serve(options: ExpressRateLimitOptions): Promise<string> {
  const app = express();
  app.get('/', expressRateLimit({ key: () => 'client', ...options }), (_req, res) => {
    res.send('route');
  });
  const server = createServer(app);
  servers.push(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

/** The status, the rate-limit fields and the body's `retryAfter` of one request. */
async function hit(url: string): Promise<{ status: number; retryAfter: string | null; rateLimit: string | null; body: unknown }> {
  const response = await fetch(url);
  const text = await response.text();
  return {
    status: response.status,
    retryAfter: response.headers.get('retry-after'),
    rateLimit: response.headers.get('ratelimit'),
    body: response.status === 429 ? (JSON.parse(text) as { retryAfter?: number }).retryAfter : text,
  };
}

describe('a block over HTTP (Express on 127.0.0.1)', () => {
  it('Retry-After, RateLimit and the 429 body tell the block’s time; the end of the block lets the client in', async () => {
    const clock = { now: 0 };
    const limiter = new RateLimiter({ threshold: 2, windowSeconds: 10, blockSeconds: 900, clock: () => clock.now });
    const url = await serve({ limiter });
    expect(await hit(url)).toEqual({ status: 200, retryAfter: null, rateLimit: '"default";r=1;t=10', body: 'route' });
    expect(await hit(url)).toEqual({ status: 200, retryAfter: null, rateLimit: '"default";r=0;t=10', body: 'route' });
    // Refused: blocked for 15 minutes, not told to come back in 10 s.
    expect(await hit(url)).toEqual({ status: 429, retryAfter: '900', rateLimit: '"default";r=0;t=900', body: 900 });
    // The window has long cleared; the block has 299.5 s left (headers and body round up).
    clock.now = 600_500;
    expect(await hit(url)).toEqual({ status: 429, retryAfter: '300', rateLimit: '"default";r=0;t=300', body: 300 });
    clock.now = 899_999;
    expect(await hit(url)).toEqual({ status: 429, retryAfter: '1', rateLimit: '"default";r=0;t=1', body: 1 });
    clock.now = 900_000;
    expect(await hit(url)).toEqual({ status: 200, retryAfter: null, rateLimit: '"default";r=1;t=10', body: 'route' });
    expect(limiter.stats()).toMatchObject({ allowed: 3, rejected: 3, blocked: 0 });
  });

  it('a manual block() of the client, and a group whose member is blocked, answer the same way', async () => {
    const clock = { now: 0 };
    const perClient = new RateLimiter({ threshold: 100, windowSeconds: 60, clock: () => clock.now });
    const global = new RateLimiter({ threshold: 1_000, windowSeconds: 60, clock: () => clock.now });
    const group = new RateLimitGroup([
      { limiter: perClient, name: 'client' },
      { limiter: global, key: () => 'all', name: 'global' },
    ]);
    const url = await serve({ limiter: group });
    expect((await hit(url)).status).toBe(200);
    await perClient.block('client', 120);
    const blocked = await hit(url);
    expect(blocked).toMatchObject({ status: 429, retryAfter: '120', body: 120 });
    // The group's fields: the blocked member's wait; the other member was not charged.
    expect(blocked.rateLimit).toBe('"client";r=0;t=120, "global";r=999;t=60');
    expect(global.peekSync('all').remaining).toBe(999);
  });

  it('in shadow mode a refusal starts a block that is counted and reported, and every request goes through', async () => {
    const clock = { now: 0 };
    const limiter = new RateLimiter({ threshold: 1, windowSeconds: 10, blockSeconds: 60, clock: () => clock.now });
    const url = await serve({ limiter, mode: 'shadow', standardHeaders: true });
    expect(await hit(url)).toMatchObject({ status: 200, rateLimit: '"default";r=0;t=10' });
    const shadowed = await hit(url);
    // Let through; the RateLimit field tells what the block would have done, never Retry-After.
    expect(shadowed).toEqual({ status: 200, retryAfter: null, rateLimit: '"default";r=0;t=60', body: 'route' });
    clock.now = 30_000;
    expect(await hit(url)).toEqual({ status: 200, retryAfter: null, rateLimit: '"default";r=0;t=30', body: 'route' });
    expect(limiter.stats()).toMatchObject({ allowed: 1, rejected: 2, shadowRejected: 2, blocked: 1 });
  });
});
