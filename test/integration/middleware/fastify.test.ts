// ratewarden/fastify against a real Fastify server on 127.0.0.1, with real requests (global fetch)
// and an injected clock: no wall clock, no sleeps.
import { createRequire } from 'node:module';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RateLimitGroup, RateLimiter, type RateLimitStore } from '../../../src/index.js';
import { fastifyRateLimit, type FastifyRateLimitOptions } from '../../../src/middleware/fastify.js';

/** The library's error: its class name, stable code and exact message. */
const exactly = (type: typeof TypeError | typeof RangeError, message: string): unknown =>
  expect.objectContaining({
    name: type.name,
    code: type === TypeError ? 'ERR_RATEWARDEN_INVALID_TYPE' : 'ERR_RATEWARDEN_OUT_OF_RANGE',
    message,
  });

let now = 0;
const clock = (): number => now;
const limiter = (threshold = 2, windowSeconds = 60): RateLimiter =>
  new RateLimiter({ threshold, windowSeconds, clock });

/** A store that is down: every decision rejects. */
const failing: RateLimitStore = {
  name: 'failing',
  consume: () => Promise.reject(new Error('store down')),
  peek: () => Promise.reject(new Error('store down')),
};

/** Route handler invocations, by path. */
const calls = new Map<string, number>();
const errors: unknown[] = [];
let app: FastifyInstance;
let base: string;

/** Registers `GET path` in its own plugin, with the hook added by `addHook('onRequest', …)`. */
function route(path: string, options: FastifyRateLimitOptions, errorStatus?: number): void {
  void app.register(async (scope) => {
    scope.addHook('onRequest', fastifyRateLimit(options));
    if (errorStatus !== undefined) {
      scope.setErrorHandler((error, _request, reply) => {
        errors.push(error);
        return reply.code(errorStatus).send({ error: (error as Error).message });
      });
    }
    scope.get(path, async () => {
      calls.set(path, (calls.get(path) ?? 0) + 1);
      return { ok: true };
    });
  });
}

beforeAll(async () => {
  app = Fastify();
  // An asynchronous onSend hook: an early reply must still stop the request before the handler.
  app.addHook('onSend', async (_request, _reply, payload) => payload);
  route('/basic', { limiter: limiter() });
  route('/skip', { limiter: limiter(1), skip: (request) => request.headers['x-internal'] === 'yes' });
  route('/api-key', { limiter: limiter(1), key: (request) => String(request.headers['x-api-key'] ?? 'anonymous') });
  route('/async-key', {
    limiter: limiter(1),
    key: async (request) => ({ id: `user:${await Promise.resolve(String(request.headers['x-user']))}` }),
  });
  route('/custom-body', { limiter: limiter(1), onRejected: (_request, result) => ({ error: 'slow down', wait: result.retryAfter }) });
  route('/custom-reply', {
    limiter: limiter(1),
    onRejected: (_request, _result, reply) => reply.code(503).type('text/plain').send('busy'),
  });
  route('/legacy', { limiter: limiter(), legacyHeaders: true });
  const group = new RateLimitGroup([
    { limiter: limiter(2, 60), name: 'burst' },
    { limiter: limiter(5, 3600), name: 'hourly' },
  ]);
  route('/group', { limiter: group, policy: [{ windowSeconds: 60 }, { windowSeconds: 3600 }] });
  const broken = new RateLimiter({ threshold: 2, windowSeconds: 60, clock, strategy: failing });
  route('/error-default', { limiter: broken });
  route('/error-handler', { limiter: broken }, 503);
  route('/error-allow', { limiter: broken, onError: () => 'allow' });
  // The hook as a route option, for one route.
  app.get('/per-route', { onRequest: fastifyRateLimit({ limiter: limiter(1) }) }, async () => {
    calls.set('/per-route', (calls.get('/per-route') ?? 0) + 1);
    return { ok: true };
  });
  base = await app.listen({ port: 0, host: '127.0.0.1' });
});

afterAll(async () => {
  await app.close();
});

const get = (path: string, headers: Record<string, string> = {}): Promise<Response> => fetch(`${base}${path}`, { headers });

describe('fastifyRateLimit (a real Fastify server)', () => {
  it('allows up to the limit with RateLimit headers, then answers 429 with a problem body; the clock resets it', async () => {
    now = 0;
    const first = await get('/basic');
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ ok: true });
    expect(first.headers.get('ratelimit-policy')).toBe('"default";q=2;w=60');
    expect(first.headers.get('ratelimit')).toBe('"default";r=1;t=60');
    expect(first.headers.get('retry-after')).toBeNull();
    expect(first.headers.get('x-ratelimit-limit')).toBeNull();

    const second = await get('/basic');
    expect(second.status).toBe(200);
    expect(second.headers.get('ratelimit')).toBe('"default";r=0;t=60');

    now = 30_000;
    const third = await get('/basic');
    expect(third.status).toBe(429);
    expect(third.headers.get('content-type')).toBe('application/problem+json; charset=utf-8'); // Fastify adds the charset to JSON types
    expect(third.headers.get('ratelimit-policy')).toBe('"default";q=2;w=60');
    expect(third.headers.get('ratelimit')).toBe('"default";r=0;t=30');
    const retryAfter = third.headers.get('retry-after');
    expect(retryAfter).toMatch(/^[1-9]\d*$/);
    expect(Number(retryAfter)).toBe(30);
    expect(await third.json()).toEqual({
      type: 'about:blank',
      title: 'Too Many Requests',
      status: 429,
      detail: 'Rate limit of 2 exceeded; retry in 30 s.',
      retryAfter: 30,
    });
    expect(calls.get('/basic')).toBe(2); // the rejected request never reached the handler

    now = 60_000;
    const later = await get('/basic');
    expect(later.status).toBe(200);
    expect(later.headers.get('ratelimit')).toBe('"default";r=1;t=60');
    expect(calls.get('/basic')).toBe(3);
  });

  it('skips requests that `skip` lets through: no decision, no headers', async () => {
    expect((await get('/skip')).status).toBe(200);
    const skipped = await get('/skip', { 'x-internal': 'yes' });
    expect(skipped.status).toBe(200);
    expect(skipped.headers.get('ratelimit')).toBeNull();
    expect((await get('/skip')).status).toBe(429);
    expect((await get('/skip', { 'x-internal': 'yes' })).status).toBe(200);
    expect(calls.get('/skip')).toBe(3);
  });

  it('limits each key separately with a custom key extractor', async () => {
    expect((await get('/api-key', { 'x-api-key': 'alpha' })).status).toBe(200);
    expect((await get('/api-key', { 'x-api-key': 'beta' })).status).toBe(200);
    expect((await get('/api-key', { 'x-api-key': 'alpha' })).status).toBe(429);
    expect((await get('/api-key', { 'x-api-key': 'beta' })).status).toBe(429);
    expect(calls.get('/api-key')).toBe(2);
  });

  it('awaits an async key extractor', async () => {
    expect((await get('/async-key', { 'x-user': 'ann' })).status).toBe(200);
    expect((await get('/async-key', { 'x-user': 'bob' })).status).toBe(200);
    expect((await get('/async-key', { 'x-user': 'ann' })).status).toBe(429);
  });

  it('sends what a custom onRejected returns, or lets it reply itself', async () => {
    await get('/custom-body');
    const body = await get('/custom-body');
    expect(body.status).toBe(429);
    expect(body.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(body.headers.get('retry-after')).toBe('60');
    expect(await body.json()).toEqual({ error: 'slow down', wait: 60 });
    expect(calls.get('/custom-body')).toBe(1);

    await get('/custom-reply');
    const own = await get('/custom-reply');
    expect(own.status).toBe(503);
    expect(own.headers.get('ratelimit')).toBe('"default";r=0;t=60');
    expect(await own.text()).toBe('busy');
    expect(calls.get('/custom-reply')).toBe(1);
  });

  it('sends the legacy X-RateLimit-* headers when asked', async () => {
    const legacy = await get('/legacy');
    expect(legacy.headers.get('x-ratelimit-limit')).toBe('2');
    expect(legacy.headers.get('x-ratelimit-remaining')).toBe('1');
    expect(legacy.headers.get('x-ratelimit-reset')).toBe('60');
    expect(legacy.headers.get('ratelimit')).toBe('"default";r=1;t=60');
  });

  it('lists every policy of a group', async () => {
    const first = await get('/group');
    expect(first.headers.get('ratelimit-policy')).toBe('"burst";q=2;w=60, "hourly";q=5;w=3600');
    expect(first.headers.get('ratelimit')).toBe('"burst";r=1;t=60, "hourly";r=4;t=3600');
    await get('/group');
    const rejected = await get('/group');
    expect(rejected.status).toBe(429);
    expect(rejected.headers.get('ratelimit')).toBe('"burst";r=0;t=60, "hourly";r=3;t=3600');
    expect(rejected.headers.get('retry-after')).toBe('60');
    expect(calls.get('/group')).toBe(2);
  });

  it('works as a route-level onRequest option', async () => {
    expect((await get('/per-route')).status).toBe(200);
    expect((await get('/per-route')).status).toBe(429);
    expect(calls.get('/per-route')).toBe(1);
  });

  it('throws a limiter error from the hook: Fastify answers 500, an error handler gets the error', async () => {
    const plain = await get('/error-default');
    expect(plain.status).toBe(500);
    expect(await plain.json()).toMatchObject({ statusCode: 500, message: 'store down' });
    expect(calls.get('/error-default')).toBeUndefined();

    const handled = await get('/error-handler');
    expect(handled.status).toBe(503);
    expect(await handled.json()).toEqual({ error: 'store down' });
    expect(errors).toHaveLength(1);
    expect(calls.get('/error-handler')).toBeUndefined();
  });

  it('lets the request through, without headers, when onError returns "allow"', async () => {
    const open = await get('/error-allow');
    expect(open.status).toBe(200);
    expect(open.headers.get('ratelimit')).toBeNull();
    expect(calls.get('/error-allow')).toBe(1);
  });
});

describe('fastifyRateLimit options', () => {
  it('throws TypeErrors and RangeErrors like the rest of the library', () => {
    const bad = (options: unknown) => () => fastifyRateLimit(options as FastifyRateLimitOptions);
    expect(bad(null)).toThrow(exactly(TypeError, 'Expected `options` to be an object with a `limiter`, got `null` (null)'));
    expect(bad({ limiter: 'x' })).toThrow(exactly(TypeError, 'Expected `limiter` to be a RateLimiter or a RateLimitGroup, got `"x"` (string)'));
    expect(bad({ limiter: limiter(), key: 5 })).toThrow(exactly(TypeError, 'Expected `key` to be a function, got `5` (number)'));
    expect(bad({ limiter: limiter(), onRejected: 429 })).toThrow(TypeError);
    expect(bad({ limiter: limiter(), policy: { windowSeconds: -1 } })).toThrow(RangeError);
    // A group needs no policy: each member limiter's window is used, named by the group.
    expect(bad({ limiter: new RateLimitGroup([limiter(), limiter()]) })).not.toThrow();
  });
});

describe('the default key limits one IPv6 /64 network, and one IPv4 client in every form, as one client', () => {
  // Behind a proxy on 127.0.0.1 (trustProxy): request.ip is the X-Forwarded-For address.
  let proxied: FastifyInstance;
  let origin: string;
  beforeAll(async () => {
    proxied = Fastify({ trustProxy: '127.0.0.1' });
    const mount = (path: string, options: Omit<FastifyRateLimitOptions, 'limiter'> = {}): void => {
      proxied.get(path, { onRequest: fastifyRateLimit({ limiter: limiter(1, 60), ...options }) }, async () => ({ ok: true }));
    };
    mount('/v6-default');
    mount('/v6-48', { ipv6Subnet: 48 });
    mount('/v6-off', { ipv6Subnet: false });
    mount('/v4');
    mount('/garbage');
    origin = await proxied.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await proxied.close();
  });
  const from = async (path: string, address: string): Promise<number> =>
    (await fetch(`${origin}${path}`, { headers: { 'x-forwarded-for': address } })).status;

  it('gives the addresses of one /64 one limit (1 per 60 s): the first 200, the others 429', async () => {
    now = 0;
    expect(await from('/v6-default', '2001:db8:1:2::1')).toBe(200);
    expect(await from('/v6-default', '2001:db8:1:2::2')).toBe(429);
    expect(await from('/v6-default', '2001:db8:1:2:ffff:ffff:ffff:ffff')).toBe(429);
    expect(await from('/v6-default', 'fe80::1%eth0')).toBe(200);
    expect(await from('/v6-default', '2001:db8:1:3::1')).toBe(200);
  });

  it('groups by the configured ipv6Subnet: /48, or per address with false', async () => {
    now = 0;
    expect(await from('/v6-48', '2001:db8:1:2::1')).toBe(200);
    expect(await from('/v6-48', '2001:db8:1:ffff::1')).toBe(429);
    expect(await from('/v6-off', '2001:db8:1:2::1')).toBe(200);
    expect(await from('/v6-off', '2001:db8:1:2::2')).toBe(200);
  });

  it('gives ::ffff:198.51.100.7, its hex form and 198.51.100.7 one limit', async () => {
    now = 0;
    expect(await from('/v4', '::ffff:198.51.100.7')).toBe(200);
    expect(await from('/v4', '198.51.100.7')).toBe(429);
    expect(await from('/v4', '::FFFF:C633:6407')).toBe(429);
    expect(await from('/v4', '198.51.100.8')).toBe(200);
  });

  it('limits a forwarded value that is not an address by its text, without an error', async () => {
    now = 0;
    expect(await from('/garbage', 'unknown')).toBe(200);
    expect(await from('/garbage', 'unknown')).toBe(429);
  });

  it('checks ipv6Subnet, and refuses it beside a custom key', () => {
    expect(() => fastifyRateLimit({ limiter: limiter(), ipv6Subnet: 64.5 })).toThrow(exactly(RangeError, 'Expected `ipv6Subnet` to be an integer prefix length from 1 to 128, or false, got `64.5` (number)'));
    expect(() => fastifyRateLimit({ limiter: limiter(), ipv6Subnet: '64' as unknown as number })).toThrow(TypeError);
    expect(() => fastifyRateLimit({ limiter: limiter(), key: () => 'k', ipv6Subnet: false })).toThrow(TypeError);
  });
});

describe('the built ratewarden/fastify', () => {
  it('resolves through the exports map in both formats', async () => {
    const name: string = 'ratewarden/fastify';
    const esm = (await import(name)) as Record<string, unknown>;
    expect(Object.keys(esm).sort()).toEqual(['HeaderNames', 'PROBLEM_CONTENT_TYPE', 'fastifyRateLimit', 'ipKey']);
    const require = createRequire(import.meta.url);
    expect(require.resolve(name)).toMatch(/dist[\\/]fastify\.cjs$/);
    expect(typeof (require(name) as Record<string, unknown>).fastifyRateLimit).toBe('function');
  });
});
