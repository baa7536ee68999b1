// The shared-store part of every runtime's server (http-app.mjs mounts it under `/store/`):
// limiters whose strategies are `ratewarden/redis`'s, over `@upstash/redis` (Redis over HTTP).
// The clients are made by the runtime's entry, each with the entry of `@upstash/redis` meant for
// it (run.mjs under Node.js, Bun and Deno: `@upstash/redis`; worker.mjs under workerd:
// `@upstash/redis/cloudflare`), and reach one redis-server through the test's front of
// Upstash's REST API (test/support/upstash-front.ts). Every server uses the same prefixes and
// keys, so test/integration/runtimes.test.ts can check that the servers of all four runtimes
// share one count.
//
//   /store/log           RedisSlidingWindowLog, 3 per hour per client address (`withRateLimit`,
//                        keyed by the platform's address through `ipKey`, as in the README's Worker)
//   /store/gcra          RedisGCRA, 3 per hour per client address (`honoRateLimit`, default key)
//   /store/burst         RedisSlidingWindowLog, 100 per hour per client address, for concurrent
//                        requests (`withRateLimit`)
//   /store/fail-closed   RedisSlidingWindowLog on the `stoppable` client, whose front the test
//                        stops: onFailure "fail-closed", a timeout of STOPPABLE_TIMEOUT_SECONDS
//   /store/fail-open     the same with onFailure "fail-open" (both through `checkRateLimit`, the
//                        body saying `degraded`)
//   /store/errors        what the strategies' `onError` received so far: [{ route, name, code }]
//
// When the clients and limiters are made: once per process under Node.js, Bun and Deno (at the
// first `/store/` request); under workerd, per request (`perRequest`), as the README's Worker
// does: a Worker's requests must not wait on one another's I/O, which one client and limiter
// shared by an isolate's concurrent requests makes them do (the shared handshake, batched
// calls); the Workers runtime cancels such a request as hung (a 500).
import { RateLimiter } from '../../dist/index.js';
import { checkRateLimit, ipKey, withRateLimit } from '../../dist/fetch.js';
import { honoRateLimit } from '../../dist/hono.js';
import { RedisGCRA, RedisSlidingWindowLog } from '../../dist/redis.js';
import { Hono } from 'hono';

/** The limit of `/store/log` and `/store/gcra`: 3 per hour, so that four runtimes' requests overrun it. */
export const SHARED_THRESHOLD = 3;

/** The shared front's routes' timeout: long, since that store is up (a failure there fails the test). */
const SHARED_TIMEOUT_SECONDS = 5;

/** The stoppable routes' timeout: what a request waits for a store that is down. */
const STOPPABLE_TIMEOUT_SECONDS = 0.25;

/** What the strategies' `onError` received, in this process or isolate (the first 100). */
const errors = [];

/** A JSON response of the handler's own, its content type explicit. */
function json(value) {
  return new Response(JSON.stringify(value), { headers: { 'content-type': 'application/json' } });
}

/** The strategy of route `/store/<name>`: its prefix `runtimes:<name>:`, the same in every runtime. */
function strategy(Strategy, name, client, onFailure, timeoutSeconds) {
  const onError = (error) => {
    if (errors.length < 100) errors.push({ route: name, name: error?.name, code: error?.code });
  };
  return new Strategy({ client, prefix: `runtimes:${name}:`, onFailure, timeoutSeconds, onError });
}

/** A limiter of `threshold` per hour with `strategy`. */
function hourly(threshold, strategy) {
  return new RateLimiter({ threshold, windowSeconds: 3600, strategy });
}

/**
 * The routes, on the clients `{ shared, stoppable }`: `(request, { address, env }) => Response`
 * by path.
 */
function routes({ shared, stoppable }) {
  // `withRateLimit`, as in the README's Worker.
  const withLimit = (limiter) => (request, { address }) =>
    withRateLimit(() => json({ ok: true }), { limiter, key: () => ipKey(address) })(request);
  // `checkRateLimit`, whose decision says whether it was degraded (a failure policy decided).
  const checked = (limiter) => async (request, { address }) => {
    const check = await checkRateLimit(request, { limiter, key: () => ipKey(address) });
    if (check.response !== undefined) return check.response;
    const response = json({ remaining: check.result.remaining, degraded: check.result.degraded ?? null });
    for (const [name, value] of Object.entries(check.headers)) response.headers.set(name, value);
    return response;
  };
  // `honoRateLimit` with its default key (the address from `c.env` or CF-Connecting-IP).
  const hono = new Hono();
  const gcra = hourly(SHARED_THRESHOLD, strategy(RedisGCRA, 'gcra', shared, 'fail-closed', SHARED_TIMEOUT_SECONDS));
  hono.use('/store/gcra', honoRateLimit({ limiter: gcra }));
  hono.get('/store/gcra', (c) => c.json({ ok: true }));
  return {
    '/store/log': withLimit(hourly(SHARED_THRESHOLD, strategy(RedisSlidingWindowLog, 'log', shared, 'fail-closed', SHARED_TIMEOUT_SECONDS))),
    '/store/gcra': (request, { env }) => hono.fetch(request, env),
    '/store/burst': withLimit(hourly(100, strategy(RedisSlidingWindowLog, 'burst', shared, 'fail-closed', SHARED_TIMEOUT_SECONDS))),
    '/store/fail-closed': checked(hourly(100, strategy(RedisSlidingWindowLog, 'fail-closed', stoppable, 'fail-closed', STOPPABLE_TIMEOUT_SECONDS))),
    '/store/fail-open': checked(hourly(100, strategy(RedisSlidingWindowLog, 'fail-open', stoppable, 'fail-open', STOPPABLE_TIMEOUT_SECONDS))),
  };
}

/**
 * The `/store/*` handler.
 * @param connect - `(env) => ({ shared, stoppable })`: two `@upstash/redis` clients, the first of
 *   a front that stays up, the second of a front the test stops and starts again; `env` is the
 *   platform's (a Worker's bindings).
 * @param options - `perRequest: true` makes the clients and limiters at every request (a
 *   Worker); otherwise once, at the first request.
 * @returns `(request, { address, env }) => Promise<Response>`, as http-app.mjs's handler.
 */
export function storeApp(connect, { perRequest = false } = {}) {
  let once;
  return async (request, context) => {
    const { pathname } = new URL(request.url);
    if (pathname === '/store/errors') return json(errors);
    const table = perRequest ? routes(connect(context.env)) : (once ??= routes(connect(context.env)));
    const route = table[pathname];
    if (route !== undefined) return route(request, context);
    return new Response('not found', { status: 404, headers: { 'content-type': 'text/plain' } });
  };
}
