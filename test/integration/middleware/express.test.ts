// ratewarden/express against a real Express server on 127.0.0.1, with real requests (global fetch)
// and an injected clock: no wall clock, no sleeps.
import { createRequire } from 'node:module';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RateLimitGroup, RateLimiter } from '../../../src/index.js';
import { expressRateLimit } from '../../../src/middleware/express.js';
import { exactly } from '../../support/errors.js';
import { storeDown } from '../../support/stores.js';

let now = 0;
const clock = (): number => now;
const limiter = (threshold = 2, windowSeconds = 60): RateLimiter =>
  new RateLimiter({ threshold, windowSeconds, clock });

/** Route handler invocations, by path. */
const calls = new Map<string, number>();
const handler: RequestHandler = (req, res) => {
  calls.set(req.baseUrl, (calls.get(req.baseUrl) ?? 0) + 1);
  res.json({ ok: true });
};
const errors: unknown[] = [];

function route(app: express.Express, path: string, middleware: RequestHandler, extra?: ErrorRequestHandler): void {
  const router = express.Router();
  router.get('/', middleware, handler);
  if (extra !== undefined) router.use(extra);
  app.use(path, router);
}

let server: Server;
let base: string;

beforeAll(async () => {
  const app = express();
  const broken = new RateLimiter({ threshold: 2, windowSeconds: 60, clock, strategy: storeDown });
  route(app, '/error-handler', expressRateLimit({ limiter: broken }), (error, _req, res, _next) => {
    errors.push(error);
    res.status(503).json({ error: (error as Error).message });
  });
  route(app, '/bad-key', expressRateLimit({ limiter: limiter(), key: () => '' }), (error, _req, res, _next) => {
    res.status(500).json({ name: (error as Error).name, message: (error as Error).message });
  });

  server = createServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const get = (path: string, headers: Record<string, string> = {}): Promise<Response> => fetch(`${base}${path}`, { headers });

// What every integration does (headers, the 429, keys, costs, groups, skip, onRejected, onError,
// shadow mode, blocks, counting only failures) is checked for Express by the HTTP contract
// (contract/contract.test.ts); here, what is Express's own.
describe('expressRateLimit (a real Express server)', () => {
  it("passes a limiter error to next(err): the application's error-handling middleware gets it, the route does not run", async () => {
    const handled = await get('/error-handler');
    expect(handled.status).toBe(503);
    expect(await handled.json()).toEqual({ error: 'store down' });
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(Error);
    expect(calls.get('/error-handler')).toBeUndefined();

    const key = await get('/bad-key');
    expect(await key.json()).toEqual({ name: 'RangeError', message: 'Expected `user` to be a non-empty string, got `""` (string)' });
  });
});

describe('expressRateLimit options', () => {
  const one = limiter();
  it('throws a TypeError for options of the wrong type', () => {
    const bad = (options: unknown) => () => expressRateLimit(options as Parameters<typeof expressRateLimit>[0]);
    expect(bad(undefined)).toThrow(exactly(TypeError, 'Expected `options` to be an object with a `limiter`, got `undefined` (undefined)'));
    expect(bad({})).toThrow(exactly(TypeError, 'Expected `limiter` to be a RateLimiter or a RateLimitGroup, got `undefined` (undefined)'));
    expect(bad({ limiter: {} })).toThrow(TypeError);
    expect(bad({ limiter: one, key: 5 })).toThrow(exactly(TypeError, 'Expected `key` to be a function, got `5` (number)'));
    expect(bad({ limiter: one, skip: 'yes' })).toThrow(exactly(TypeError, 'Expected `skip` to be a function or undefined, got `"yes"` (string)'));
    expect(bad({ limiter: one, cost: 2 })).toThrow(exactly(TypeError, 'Expected `cost` to be a function or undefined, got `2` (number)'));
    expect(bad({ limiter: one, onRejected: {} })).toThrow(exactly(TypeError, 'Expected `onRejected` to be a function or undefined, got `object` (object)'));
    expect(bad({ limiter: one, onError: 'allow' })).toThrow(exactly(TypeError, 'Expected `onError` to be a function or undefined, got `"allow"` (string)'));
    expect(bad({ limiter: one, legacyHeaders: 1 })).toThrow(exactly(TypeError, 'Expected `legacyHeaders` to be a boolean or undefined, got `1` (number)'));
    expect(bad({ limiter: one, standardHeaders: 'no' })).toThrow(TypeError);
    expect(bad({ limiter: one, policy: 60 })).toThrow(TypeError);
    expect(bad({ limiter: one, legacyHeaders: 1 })).toThrow(expect.objectContaining({ code: 'ERR_RATEWARDEN_INVALID_TYPE' }));
  });

  it('throws a RangeError for policies with wrong values, and defaults a group\'s policies to its limiters\' windows', async () => {
    expect(() => expressRateLimit({ limiter: one, policy: { windowSeconds: 0 } })).toThrow(exactly(RangeError, 'Expected `policy[0].windowSeconds` to be a finite number of seconds from 0.001 to 999999999999999, got `0` (number)'));
    expect(() => expressRateLimit({ limiter: one, policy: { name: 'é', windowSeconds: 60 } })).toThrow(RangeError);
    const group = new RateLimitGroup([one, limiter(5, 3600)]);
    const app = express();
    app.use(expressRateLimit({ limiter: group, key: () => 'default-policies' }));
    app.get('/', (_req, res) => {
      res.send('ok');
    });
    const server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
      expect(response.headers.get('ratelimit-policy')).toBe('"limit-1";q=2;w=60, "limit-2";q=5;w=3600');
    } finally {
      server.close();
    }
    expect(() => expressRateLimit({ limiter: group, policy: [{ windowSeconds: 60 }] })).toThrow(exactly(RangeError, 'Expected `policy` to be 2 policies (one per limit of the result), got `1` (number)'));
    expect(() => expressRateLimit({ limiter: group, policy: [{ windowSeconds: 60 }, { windowSeconds: 3600 }] })).not.toThrow();
  });
});

describe('the default key limits one IPv6 /64 network, and one IPv4 client in every form, as one client', () => {
  // Behind a proxy on 127.0.0.1 (trust proxy: loopback): req.ip is the X-Forwarded-For address.
  let proxied: Server;
  let origin: string;
  const limits: Record<string, RateLimiter> = {};
  beforeAll(async () => {
    const app = express();
    app.set('trust proxy', 'loopback');
    const mount = (path: string, options: Omit<Parameters<typeof expressRateLimit>[0], 'limiter'> = {}): void => {
      limits[path] = limiter(1, 60);
      route(app, path, expressRateLimit({ limiter: limits[path], ...options }));
    };
    mount('/v6-default');
    mount('/v6-56', { ipv6Subnet: 56 });
    mount('/v6-off', { ipv6Subnet: false });
    mount('/v4');
    mount('/garbage');
    proxied = app.listen(0, '127.0.0.1');
    await once(proxied, 'listening');
    origin = `http://127.0.0.1:${(proxied.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    proxied.closeAllConnections();
    await new Promise((resolve) => proxied.close(resolve));
  });
  const from = async (path: string, address: string): Promise<number> =>
    (await fetch(`${origin}${path}`, { headers: { 'x-forwarded-for': address } })).status;

  it('gives the addresses of one /64 one limit (1 per 60 s): the first 200, the others 429', async () => {
    now = 0;
    expect(await from('/v6-default', '2001:db8:1:2::1')).toBe(200);
    expect(await from('/v6-default', '2001:db8:1:2::2')).toBe(429);
    expect(await from('/v6-default', '2001:db8:1:2:ffff:ffff:ffff:ffff')).toBe(429);
    expect(await from('/v6-default', '2001:DB8:0001:0002:0000:0000:0000:0003')).toBe(429);
    // The next /64 is another client.
    expect(await from('/v6-default', '2001:db8:1:3::1')).toBe(200);
    expect(limits['/v6-default']?.size).toBe(2);
  });

  it('groups by the configured ipv6Subnet: /56, or per address with false', async () => {
    now = 0;
    expect(await from('/v6-56', '2001:db8:1:200::1')).toBe(200);
    expect(await from('/v6-56', '2001:db8:1:2ff:ffff::1')).toBe(429);
    expect(await from('/v6-56', '2001:db8:1:300::1')).toBe(200);
    expect(await from('/v6-off', '2001:db8:1:2::1')).toBe(200);
    expect(await from('/v6-off', '2001:db8:1:2::2')).toBe(200);
    expect(await from('/v6-off', '2001:db8:1:2:0:0:0:1')).toBe(429);
  });

  it('gives ::ffff:198.51.100.7, its hex form and 198.51.100.7 one limit', async () => {
    now = 0;
    expect(await from('/v4', '::ffff:198.51.100.7')).toBe(200);
    expect(await from('/v4', '198.51.100.7')).toBe(429);
    expect(await from('/v4', '::ffff:c633:6407')).toBe(429);
    expect(await from('/v4', '198.51.100.8')).toBe(200);
  });

  it('limits a forwarded value that is not an address by its text, without an error', async () => {
    now = 0;
    expect(await from('/garbage', 'unknown')).toBe(200);
    expect(await from('/garbage', 'unknown')).toBe(429);
  });

  it('checks ipv6Subnet, and refuses it beside a custom key', () => {
    expect(() => expressRateLimit({ limiter: limiter(), ipv6Subnet: 0 })).toThrow(exactly(RangeError, 'Expected `ipv6Subnet` to be an integer prefix length from 1 to 128, or false, got `0` (number)'));
    expect(() => expressRateLimit({ limiter: limiter(), ipv6Subnet: 129 })).toThrow(RangeError);
    expect(() => expressRateLimit({ limiter: limiter(), ipv6Subnet: true as unknown as false })).toThrow(exactly(TypeError, 'Expected `ipv6Subnet` to be an integer prefix length from 1 to 128, or false, got `true` (boolean)'));
    expect(() => expressRateLimit({ limiter: limiter(), key: () => 'k', ipv6Subnet: 48 })).toThrow(
      exactly(TypeError, 'Expected `ipv6Subnet` to be undefined when `key` is given (it shapes the default key only; call `ipKey(address, { ipv6Subnet })` in your `key`), got `48` (number)'),
    );
  });
});

describe('the built ratewarden/express', () => {
  it('resolves through the exports map in both formats', async () => {
    const name: string = 'ratewarden/express';
    const esm = (await import(name)) as Record<string, unknown>;
    expect(Object.keys(esm).sort()).toEqual(['HeaderNames', 'PROBLEM_CONTENT_TYPE', 'expressRateLimit', 'ipKey']);
    const require = createRequire(import.meta.url);
    expect(require.resolve(name)).toMatch(/dist[\\/]express\.cjs$/);
    expect(typeof (require(name) as Record<string, unknown>).expressRateLimit).toBe('function');
  });
});
