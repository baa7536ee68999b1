// ratewarden/fastify against a real Fastify server on 127.0.0.1, with real requests (global fetch)
// and an injected clock: no wall clock, no sleeps.
import { createRequire } from 'node:module';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RateLimitGroup, RateLimiter } from '../../../src/index.js';
import { fastifyRateLimit, type FastifyRateLimitOptions } from '../../../src/middleware/fastify.js';
import { exactly } from '../../support/errors.js';
import { storeDown } from '../../support/stores.js';

let now = 0;
const clock = (): number => now;
const limiter = (threshold = 2, windowSeconds = 60): RateLimiter =>
  new RateLimiter({ threshold, windowSeconds, clock });

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
  const broken = new RateLimiter({ threshold: 2, windowSeconds: 60, clock, strategy: storeDown });
  route('/error-handler', { limiter: broken }, 503);
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

// What every integration does (headers, the 429, keys, costs, groups, skip, onRejected, onError,
// shadow mode, blocks, counting only failures) is checked for Fastify, with the hook added by
// addHook('onRequest', …) in a plugin, by the HTTP contract (contract/contract.test.ts); here,
// what is Fastify's own.
describe('fastifyRateLimit (a real Fastify server)', () => {
  it('works as a route-level onRequest option', async () => {
    expect((await get('/per-route')).status).toBe(200);
    expect((await get('/per-route')).status).toBe(429);
    expect(calls.get('/per-route')).toBe(1);
  });

  it("throws a limiter error from the hook: the plugin's error handler (setErrorHandler) gets it, the route does not run", async () => {
    const handled = await get('/error-handler');
    expect(handled.status).toBe(503);
    expect(await handled.json()).toEqual({ error: 'store down' });
    expect(errors).toHaveLength(1);
    expect(calls.get('/error-handler')).toBeUndefined();
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
