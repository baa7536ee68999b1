// Attack on issue 23's `ratewarden/hono` (src/middleware/hono.ts, src/middleware/rejection.ts,
// src/http-headers.ts's 503): real Hono apps served by @hono/node-server on 127.0.0.1 (and on the
// dual-stack `::`), real requests (global fetch), an injected clock for the in-memory limiters,
// and a real redis-server, killed, behind the Redis limiters (their client reconnecting: every
// decision fails fast through its policy; the strategies' timeout is an hour, so a decision that
// waited would time the test out). No sleeps.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { Hono, type Context, type MiddlewareHandler } from 'hono';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RateLimitGroup, RateLimiter, type RateLimitResult } from '../../src/index.js';
import { honoRateLimit, type RateLimitVariables } from '../../src/middleware/hono.js';
import { RateLimitExceededException } from '../../src/nestjs/exception.js';
import { RedisGCRA, type RedisFailurePolicy } from '../../src/redis/index.js';
import { RedisServer } from '../support/redis-server.js';

let now = 0;
const clock = (): number => now;
const memory = (threshold: number, windowSeconds = 60): RateLimiter => new RateLimiter({ threshold, windowSeconds, clock });
const byHeader = (c: Context): string => c.req.header('x-user') ?? 'anonymous';

/** Servers started by the tests, closed after them. */
const servers: ServerType[] = [];

/** Serves `app` with @hono/node-server on `hostname`, port 0; its base URL. */
async function listen(app: Hono, hostname = '127.0.0.1'): Promise<string> {
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, port: 0, hostname }, (info: AddressInfo) => {
      resolve(`http://${info.family === 'IPv6' ? `[${info.address}]` : info.address}:${info.port}`);
    });
    servers.push(server);
    server.once('error', reject);
  });
}

/** The keys a limiter decided, in order. */
function keysOf(limiter: RateLimiter): string[] {
  const keys: string[] = [];
  limiter.on('decision', (key) => keys.push(key));
  return keys;
}

// A redis-server that is down: its client reconnects, so the Redis limiters fail fast by policy.
let redis: RedisServer;
let client: Redis;
const HOUR = 3600;
let prefixes = 0;
const onRedis = (onFailure: RedisFailurePolicy, threshold = 5): RateLimiter =>
  new RateLimiter({
    threshold,
    windowSeconds: 60,
    strategy: new RedisGCRA({ client, prefix: `atk23-hono-${++prefixes}:`, onFailure, timeoutSeconds: HOUR }),
  });

beforeAll(async () => {
  redis = await RedisServer.start();
  client = new Redis(redis.url);
  client.on('error', () => {});
  await once(client, 'ready');
  const reconnecting = once(client, 'reconnecting');
  await redis.kill();
  await reconnecting;
});

afterAll(async () => {
  for (const server of servers) await new Promise((resolve) => server.close(resolve));
  client?.disconnect();
  await redis?.stop();
});

describe('the same honoRateLimit mounted on overlapping paths', () => {
  // Failed before the fix that came with this test. `app.use('*', limit)` plus `app.use('/api/*', limit)` (or the same instance on a
  // route under a path it already covers, or on a sub-app mounted under it) runs the one
  // middleware twice for /api/x, and each run decides: every request costs 2, and the client gets
  // half its limit (2 of threshold 2 after ONE request below; the second is refused). Nothing in
  // hono.ts (honoRateLimit's returned handler, src/middleware/hono.ts:193) notices that this very
  // middleware already decided this context (it even set the context variable). express-rate-limit
  // guards the same mistake (its ERR_ERL_DOUBLE_COUNT validation); the expectation here: one
  // instance decides a request once.
  it('counts one request once, not once per mount', async () => {
    now = 0;
    const limiter = memory(2);
    const limit = honoRateLimit({ limiter, key: () => 'k' });
    const app = new Hono();
    app.use('*', limit);
    app.use('/api/*', limit);
    app.get('/api/x', (c) => c.text('ok'));
    const base = await listen(app);
    const first = await fetch(`${base}/api/x`);
    expect(first.status).toBe(200);
    expect(first.headers.get('ratelimit')).toBe('"default";r=1;t=60');
    const second = await fetch(`${base}/api/x`);
    expect(second.status).toBe(200);
  });
});

describe('onRejected', () => {
  // Failed before the fix that came with this test. rejection.ts's rule (step 4 of sendRejection: "sets that body's Content-Type
  // unless one is set already (by onRejected, or earlier)"), which Express and Fastify follow,
  // is lost in Hono: a Content-Type set with `c.header()` in `onRejected` (or earlier in the chain)
  // is overwritten by text/plain, because hono.ts's `hasHeader` (src/middleware/hono.ts:249) looks
  // only at the rate-limit headers it is building, not at what `c.header()` prepared, and
  // `c.newResponse` then lets the `init` headers win.
  it("keeps a Content-Type that onRejected set with c.header() when it returns a string", async () => {
    now = 0;
    const app = new Hono();
    app.get(
      '/xml',
      honoRateLimit({
        limiter: memory(1),
        key: () => 'k',
        onRejected: (c) => {
          c.header('Content-Type', 'application/xml');
          return '<busy/>';
        },
      }),
      (c) => c.text('ok'),
    );
    const base = await listen(app);
    expect((await fetch(`${base}/xml`)).status).toBe(200);
    const refused = await fetch(`${base}/xml`);
    expect(refused.status).toBe(429);
    expect(await refused.text()).toBe('<busy/>');
    expect(refused.headers.get('content-type')).toBe('application/xml');
  });

  // Failed before the fix that came with this test. For a value JSON cannot encode (a symbol, a function), `encodeBody`
  // (src/middleware/rejection.ts:106) returns `{ body: undefined, contentType: 'application/json' }`:
  // the 429 says `application/json` and has an empty body, which no JSON client can parse. Either
  // the value is refused (an error through app.onError) or it is sent as no body, without a JSON
  // Content-Type, as `undefined` is.
  it.each([
    ['a symbol', () => Symbol('busy')],
    ['a function', () => () => 'busy'],
  ])('a value JSON cannot encode (%s) is not sent as an empty application/json body', async (_name, onRejected) => {
    now = 0;
    const app = new Hono();
    app.get('/', honoRateLimit({ limiter: memory(1), key: () => 'k', onRejected }), (c) => c.text('ok'));
    const base = await listen(app);
    await fetch(`${base}/`);
    const refused = await fetch(`${base}/`);
    const body = await refused.text();
    const type = refused.headers.get('content-type');
    if (type?.startsWith('application/json') === true) expect(() => JSON.parse(body) as unknown).not.toThrow();
  });

  it('held up: a Response with immutable headers (Response.redirect) is sent with the rate-limit headers added; a thenable is followed', async () => {
    now = 0;
    const app = new Hono();
    app.get('/redirect', honoRateLimit({ limiter: memory(1), key: () => 'k', onRejected: () => Response.redirect('http://127.0.0.1/wait', 303) }), (c) => c.text('ok'));
    app.get(
      '/thenable',
      honoRateLimit({
        limiter: memory(1),
        key: () => 'k',
        onRejected: () => ({
          then(resolve: (value: unknown) => void) {
            resolve({ busy: true });
          },
        }),
      }),
      (c) => c.text('ok'),
    );
    const base = await listen(app);
    await fetch(`${base}/redirect`, { redirect: 'manual' });
    const redirected = await fetch(`${base}/redirect`, { redirect: 'manual' });
    expect(redirected.status).toBe(303);
    expect(redirected.headers.get('location')).toBe('http://127.0.0.1/wait');
    expect(redirected.headers.get('ratelimit')).toBe('"default";r=0;t=60');
    expect(redirected.headers.get('retry-after')).toBe('60');
    await fetch(`${base}/thenable`);
    const thenable = await fetch(`${base}/thenable`);
    expect(thenable.status).toBe(429);
    expect(await thenable.json()).toEqual({ busy: true });
  });
});

describe('responses the chain makes (held up)', () => {
  it('an immutable, streamed response of fetch() (a proxied upstream) gets the headers, its body intact', async () => {
    now = 0;
    const upstream = new Hono();
    upstream.get('/', (c) =>
      c.body(
        new ReadableStream({
          start(controller) {
            for (let i = 0; i < 100; i++) controller.enqueue(new TextEncoder().encode(`chunk ${i}\n`));
            controller.close();
          },
        }),
        200,
        { 'RateLimit-Policy': '"upstream";q=9;w=9' },
      ),
    );
    const upstreamBase = await listen(upstream);
    const app = new Hono();
    app.get('/proxy', honoRateLimit({ limiter: memory(5), key: () => 'k' }), () => fetch(`${upstreamBase}/`));
    const base = await listen(app);
    const response = await fetch(`${base}/proxy`);
    expect(response.status).toBe(200);
    // The upstream's own field wins; the missing one is added.
    expect(response.headers.get('ratelimit-policy')).toBe('"upstream";q=9;w=9');
    expect(response.headers.get('ratelimit')).toBe('"default";r=4;t=60');
    const text = await response.text();
    expect(text.split('\n').filter(Boolean)).toHaveLength(100);
  });

  it('c.res replaced by a later middleware: skipFailedRequests judges the final response', async () => {
    now = 0;
    const limiter = memory(3);
    const replace: MiddlewareHandler = async (c, next) => {
      await next();
      if (c.req.query('replace') === '1') c.res = new Response('replaced', { status: 502 });
    };
    const app = new Hono();
    app.get('/x', honoRateLimit({ limiter, key: () => 'k', skipFailedRequests: true }), replace, (c) => c.text('ok'));
    const base = await listen(app);
    const replaced = await fetch(`${base}/x?replace=1`);
    expect(replaced.status).toBe(502);
    expect(await replaced.text()).toBe('replaced');
    expect(replaced.headers.get('ratelimit')).toBe('"default";r=2;t=60');
    expect(limiter.peekSync('k').remaining).toBe(3); // the 502 was given back
    expect((await fetch(`${base}/x`)).status).toBe(200);
    expect(limiter.peekSync('k').remaining).toBe(2); // the 200 counts
  });

  it('requestWasSuccessful that throws: the response goes out with its headers, the request stays counted, onError sees the error', async () => {
    now = 0;
    const limiter = memory(3);
    const seen: unknown[] = [];
    const app = new Hono();
    app.get(
      '/x',
      honoRateLimit({
        limiter,
        key: () => 'k',
        skipSuccessfulRequests: true,
        requestWasSuccessful: () => {
          throw new Error('judge failed');
        },
        onError: (_c, error) => {
          seen.push(error);
        },
      }),
      (c) => c.text('ok'),
    );
    const base = await listen(app);
    const response = await fetch(`${base}/x`);
    expect(response.status).toBe(200);
    expect(response.headers.get('ratelimit')).toBe('"default";r=2;t=60');
    expect(limiter.peekSync('k').remaining).toBe(2);
    expect(seen).toHaveLength(1);
    expect((seen[0] as Error).message).toBe('judge failed');
  });

  it('skip with a group: a skipped request decides nothing in any member, no headers', async () => {
    now = 0;
    const a = memory(2);
    const b = memory(5, 3600);
    const group = new RateLimitGroup([
      { limiter: a, name: 'burst' },
      { limiter: b, name: 'hourly' },
    ]);
    const app = new Hono();
    app.get('/x', honoRateLimit({ limiter: group, key: byHeader, skip: (c) => c.req.header('x-internal') === 'yes', skipSuccessfulRequests: true }), (c) =>
      c.text('ok', c.req.query('fail') === '1' ? 401 : 200),
    );
    const base = await listen(app);
    const skipped = await fetch(`${base}/x?fail=1`, { headers: { 'x-user': 'u', 'x-internal': 'yes' } });
    expect(skipped.status).toBe(401);
    expect(skipped.headers.get('ratelimit')).toBeNull();
    expect([a.peekSync('u').remaining, b.peekSync('u').remaining]).toEqual([2, 5]);
    const failed = await fetch(`${base}/x?fail=1`, { headers: { 'x-user': 'u' } });
    expect(failed.headers.get('ratelimit')).toBe('"burst";r=1;t=60, "hourly";r=4;t=3600');
    expect([a.peekSync('u').remaining, b.peekSync('u').remaining]).toEqual([1, 4]);
    await fetch(`${base}/x`, { headers: { 'x-user': 'u' } }); // a success: given back in both
    expect([a.peekSync('u').remaining, b.peekSync('u').remaining]).toEqual([1, 4]);
  });
});

describe('the default key on Node.js (held up)', () => {
  it('ignores CF-Connecting-IP, X-Forwarded-For, X-Real-IP and Forwarded sent by the client', async () => {
    now = 0;
    const limiter = memory(10);
    const keys = keysOf(limiter);
    const app = new Hono();
    app.get('/', honoRateLimit({ limiter }), (c) => c.text('ok'));
    const base = await listen(app);
    for (const headers of [
      { 'CF-Connecting-IP': '203.0.113.1' },
      { 'X-Forwarded-For': '203.0.113.2' },
      { 'X-Real-IP': '203.0.113.3' },
      { Forwarded: 'for=203.0.113.4' },
      { 'True-Client-IP': '203.0.113.5' },
    ]) {
      expect((await fetch(`${base}/`, { headers })).status).toBe(200);
    }
    expect(keys).toEqual(Array(5).fill('127.0.0.1'));
  });

  it('a dual-stack server (::): an IPv4 client (::ffff:127.0.0.1) is keyed as 127.0.0.1, the same as on an IPv4 server; ::1 as its /64', async () => {
    now = 0;
    const limiter = memory(10);
    const keys = keysOf(limiter);
    const app = new Hono();
    app.get('/', honoRateLimit({ limiter }), (c) => c.text('ok'));
    const base = await listen(app, '::');
    const port = new URL(base).port;
    expect((await fetch(`http://127.0.0.1:${port}/`)).status).toBe(200);
    expect((await fetch(`http://[::1]:${port}/`)).status).toBe(200);
    expect((await fetch(`http://[::ffff:127.0.0.1]:${port}/`)).status).toBe(200);
    expect(keys).toEqual(['127.0.0.1', '::/64', '127.0.0.1']);
  });
});

describe('refusals by a store failure: 503 or 429 (held up)', () => {
  /** The app of one limiter (or group), its refusal path observable. */
  async function appOf(limiter: RateLimiter | RateLimitGroup, extra: Partial<Parameters<typeof honoRateLimit>[0]> = {}): Promise<string> {
    const app = new Hono<{ Variables: RateLimitVariables }>();
    app.onError((error, c) => c.json({ error: error.message }, 500));
    app.get('/', honoRateLimit({ limiter, key: byHeader, ...extra }), (c) => c.json({ decision: c.get('rateLimit') ?? null }));
    return listen(app as unknown as Hono);
  }
  const get = (base: string, user = 'u', path = '/'): Promise<Response> => fetch(`${base}${path}`, { headers: { 'x-user': user } });

  it('a group: fail-closed + fail-open is a 503; fail-closed + a memory limit over its own count is a 429; fail-closed + local is a 503', async () => {
    now = 0;
    const closedOpen = new RateLimitGroup([
      { limiter: onRedis('fail-closed'), name: 'shared' },
      { limiter: onRedis('fail-open'), name: 'open' },
    ]);
    const response = await get(await appOf(closedOpen));
    expect(response.status).toBe(503);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
    expect(response.headers.get('retry-after')).toBe('1');
    expect(await response.json()).toMatchObject({ status: 503, title: 'Rate limit store unavailable', retryAfter: 1 });

    const burst = memory(1);
    burst.allowRequestSync('u'); // the client used its memory limit up
    const mixed = new RateLimitGroup([
      { limiter: burst, name: 'burst' },
      { limiter: onRedis('fail-closed'), name: 'shared' },
    ]);
    const refused = await get(await appOf(mixed));
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ status: 429, title: 'Too Many Requests' });

    const closedLocal = new RateLimitGroup([
      { limiter: onRedis('fail-closed'), name: 'shared' },
      { limiter: onRedis('local'), name: 'local' },
    ]);
    expect((await get(await appOf(closedLocal))).status).toBe(503);

    // NestJS's exception says the same for the same results.
    const closedOpenResult = await closedOpen.allowRequest('nest');
    const mixedResult = await mixed.allowRequest('u');
    expect(new RateLimitExceededException(closedOpenResult).getStatus()).toBe(503);
    expect(new RateLimitExceededException(mixedResult).getStatus()).toBe(429);
  });

  it('fail-closed with a cost above the threshold (retryAfter Infinity) is the 429 that can never be accepted, without Retry-After', async () => {
    const base = await appOf(onRedis('fail-closed', 2), { cost: () => 3 });
    const response = await get(base);
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBeNull();
    expect(await response.json()).toMatchObject({ status: 429, detail: 'This request costs more than the limit of 2 allows; it can never be accepted.' });
  });

  it('shadow mode with fail-closed never refuses: the handler runs and sees the degraded decision', async () => {
    const base = await appOf(onRedis('fail-closed'), { mode: 'shadow' });
    const response = await get(base);
    expect(response.status).toBe(200);
    expect(response.headers.get('retry-after')).toBeNull();
    expect(await response.json()).toMatchObject({ decision: { allowed: false, degraded: 'fail-closed' } });
  });

  it("onRejected gets the degraded result with the 503 already chosen; what it returns is sent as a 503; skipSuccessfulRequests with a fail-closed group reserves nothing", async () => {
    const seen: RateLimitResult[] = [];
    const base = await appOf(onRedis('fail-closed'), {
      onRejected: (_c, result) => {
        seen.push(result);
        return 'store down';
      },
    });
    const response = await get(base);
    expect(response.status).toBe(503);
    expect(await response.text()).toBe('store down');
    expect(seen[0]).toMatchObject({ allowed: false, degraded: 'fail-closed' });

    const burst = memory(3);
    const group = new RateLimitGroup([
      { limiter: burst, name: 'burst' },
      { limiter: onRedis('fail-closed'), name: 'shared' },
    ]);
    const counted = await get(await appOf(group, { skipSuccessfulRequests: true }));
    expect(counted.status).toBe(503);
    expect(burst.peekSync('u').remaining).toBe(3); // nothing recorded in the memory member
  });
});
