// Shadow mode (`mode: 'shadow'`) of the Express, Fastify and Fetch middlewares, on real servers
// on 127.0.0.1 with real requests and an injected clock: every request is decided and recorded,
// none is refused; the would-be rejections show in stats() and in `decision` listeners.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { RateLimitGroup, RateLimiter, type DecisionInfo } from '../../../src/index.js';
import { expressRateLimit } from '../../../src/middleware/express.js';
import { fastifyRateLimit } from '../../../src/middleware/fastify.js';
import { withRateLimit, type FetchRateLimitOptions } from '../../../src/middleware/fetch.js';
import type { RateLimitMiddlewareOptions } from '../../../src/middleware/common.js';

/** The shared options these tests set (no request-dependent function: `key` is fixed below). */
type Shared = Pick<RateLimitMiddlewareOptions<unknown>, 'limiter' | 'mode' | 'standardHeaders' | 'legacyHeaders'>;

/** Serves `GET /` through one framework's middleware built from `options`; returns its base URL and a closer. */
type Serve = (options: Shared, onRoute: () => void) => Promise<{ base: string; close: () => Promise<void> }>;

const listen = async (server: Server): Promise<string> => {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
};
const closer = (server: Server) => async (): Promise<void> => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
};

const frameworks: [string, Serve][] = [
  [
    'express',
    async (options, onRoute) => {
      const app = express();
      app.get('/', expressRateLimit({ ...options, key: () => 'client' }), (_req, res) => {
        onRoute();
        res.send('route');
      });
      const server = createServer(app);
      return { base: await listen(server), close: closer(server) };
    },
  ],
  [
    'fastify',
    async (options, onRoute) => {
      const app = Fastify();
      app.addHook('onRequest', fastifyRateLimit({ ...options, key: () => 'client' }));
      app.get('/', async () => {
        onRoute();
        return 'route';
      });
      await app.listen({ port: 0, host: '127.0.0.1' });
      return { base: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, close: () => app.close() };
    },
  ],
  [
    'fetch',
    async (options, onRoute) => {
      const handler = withRateLimit(
        () => {
          onRoute();
          return new Response('route');
        },
        { ...options, key: () => 'client' } satisfies FetchRateLimitOptions,
      );
      const server = createServer((req, res) => {
        void (async () => {
          const response = await handler(new Request(`http://127.0.0.1${req.url ?? '/'}`));
          const headers: Record<string, string> = {};
          response.headers.forEach((value, name) => {
            headers[name] = value;
          });
          res.writeHead(response.status, headers);
          res.end(await response.text());
        })();
      });
      return { base: await listen(server), close: closer(server) };
    },
  ],
];

describe.each(frameworks)('%s, mode: shadow', (_name, serve) => {
  it('lets every request through, counts the would-be rejections and marks them shadow', async () => {
    const limiter = new RateLimiter({ threshold: 2, windowSeconds: 60, clock: () => 0, name: 'api' });
    const infos: [boolean, DecisionInfo][] = [];
    limiter.on('decision', (_key, result, _cost, info) => infos.push([result.allowed, info]));
    let routed = 0;
    const { base, close } = await serve({ limiter, mode: 'shadow' }, () => routed++);
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) {
        const response = await fetch(base);
        statuses.push(response.status);
        expect(await response.text()).toBe('route');
        // Headers are off by default in shadow: clients are not told of a limit not enforced.
        expect(response.headers.get('ratelimit')).toBeNull();
        expect(response.headers.get('ratelimit-policy')).toBeNull();
        expect(response.headers.get('retry-after')).toBeNull();
      }
      expect(statuses).toEqual([200, 200, 200, 200]);
      expect(routed).toBe(4);
      expect(limiter.stats()).toMatchObject({ allowed: 2, rejected: 2, shadowRejected: 2 });
      expect(infos).toEqual([
        [true, { shadow: true, name: 'api', tier: undefined }],
        [true, { shadow: true, name: 'api', tier: undefined }],
        [false, { shadow: true, name: 'api', tier: undefined }],
        [false, { shadow: true, name: 'api', tier: undefined }],
      ]);
    } finally {
      await close();
    }
  });

  it('sends the RateLimit fields when asked, never Retry-After, and records as enforcing would', async () => {
    const limiter = new RateLimiter({ threshold: 1, windowSeconds: 60, clock: () => 0 });
    let routed = 0;
    const { base, close } = await serve({ limiter, mode: 'shadow', standardHeaders: true, legacyHeaders: true }, () => routed++);
    try {
      const first = await fetch(base);
      expect(first.headers.get('ratelimit')).toBe('"default";r=0;t=60');
      const second = await fetch(base);
      expect(second.status).toBe(200);
      expect(second.headers.get('ratelimit')).toBe('"default";r=0;t=60');
      expect(second.headers.get('x-ratelimit-remaining')).toBe('0');
      expect(second.headers.get('retry-after')).toBeNull();
      expect(routed).toBe(2);
      // What was recorded is what enforcing records: one allowed request, the key now full.
      expect(limiter.peekSync('client').allowed).toBe(false);
      expect(limiter.stats()).toMatchObject({ allowed: 1, rejected: 1, shadowRejected: 1 });
    } finally {
      await close();
    }
  });

  it('in enforce mode (the default) still refuses, counting no shadow rejection', async () => {
    const limiter = new RateLimiter({ threshold: 1, windowSeconds: 60, clock: () => 0 });
    let routed = 0;
    const { base, close } = await serve({ limiter, mode: 'enforce' }, () => routed++);
    try {
      expect((await fetch(base)).status).toBe(200);
      const refused = await fetch(base);
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('60');
      expect(routed).toBe(1);
      expect(limiter.stats()).toMatchObject({ allowed: 1, rejected: 1, shadowRejected: 0 });
    } finally {
      await close();
    }
  });

  it('decides a group in shadow: all or nothing, nothing refused', async () => {
    const burst = new RateLimiter({ threshold: 1, windowSeconds: 1, clock: () => 0, name: 'burst' });
    const hourly = new RateLimiter({ threshold: 10, windowSeconds: 3600, clock: () => 0, name: 'hourly' });
    let routed = 0;
    const { base, close } = await serve({ limiter: new RateLimitGroup([burst, hourly]), mode: 'shadow' }, () => routed++);
    try {
      expect((await fetch(base)).status).toBe(200);
      expect((await fetch(base)).status).toBe(200);
      expect(routed).toBe(2);
      expect(burst.stats()).toMatchObject({ allowed: 1, rejected: 1, shadowRejected: 1 });
      // The group refused, so the hourly limit recorded only the first request.
      expect(hourly.stats()).toMatchObject({ allowed: 1, rejected: 0, shadowRejected: 0 });
    } finally {
      await close();
    }
  });
});

describe('the mode option', () => {
  const limiter = new RateLimiter({ threshold: 1, windowSeconds: 1 });
  it.each([
    ['express', (mode: unknown) => expressRateLimit({ limiter, mode } as never)],
    ['fastify', (mode: unknown) => fastifyRateLimit({ limiter, mode } as never)],
  ])('%s: refuses anything but enforce or shadow, naming it', (_name, build) => {
    expect(() => build('dry-run')).toThrow(
      expect.objectContaining({ name: 'RangeError', message: "Expected `mode` to be 'enforce', 'shadow' or undefined, got `\"dry-run\"` (string)" }),
    );
    expect(() => build(true)).toThrow(expect.objectContaining({ name: 'TypeError', code: 'ERR_RATEWARDEN_INVALID_TYPE' }));
    expect(() => build('shadow')).not.toThrow();
  });
});
