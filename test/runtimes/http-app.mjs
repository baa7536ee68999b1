// The app each runtime's real HTTP server runs (@hono/node-server under Node.js, Bun.serve,
// Deno.serve, a workerd socket; see run.mjs and worker.mjs): `ratewarden/fetch` keyed by the
// client address as the platform reports it, passed through `ipKey`, and `ratewarden/hono` with
// its default key. test/integration/runtimes.test.ts sends it requests from 127.0.0.1, each on a
// new connection, and checks that they share one limit. Under `/store/`, the shared-store part
// (store-app.mjs): `ratewarden/redis` over `@upstash/redis`, one count for every runtime.
//
// The limiter is created when the module is evaluated, as an app would (on workerd, in the
// Worker's global scope), with the default clock (`performance.now()`): the window is an hour
// and nothing waits, so the test does not depend on timing. It sweeps (`sweepIntervalSeconds`),
// as a long-lived server's limiter should: workerd forbids timers in a Worker's global scope, so
// there decisions drive the sweep (src/key-table.ts, #drive; test/unit/sweep-without-timers.test.ts).
import { RateLimiter } from '../../dist/index.js';
import { ipKey, withRateLimit } from '../../dist/fetch.js';
import { honoServerApp } from './hono-part.mjs';
import { storeApp } from './store-app.mjs';

/** Two requests per hour per client address, shared by every connection. */
const limiter = new RateLimiter({ threshold: 2, windowSeconds: 3600, sweepIntervalSeconds: 60 });

/**
 * The Fetch handler of `/fetch/*`.
 * @param request - the incoming request.
 * @param address - the client address the platform reported for it.
 */
function fetchRoute(request, address) {
  return withRateLimit(
    () => new Response(JSON.stringify({ address, key: ipKey(address) }), { headers: { 'content-type': 'application/json' } }),
    { limiter, key: () => ipKey(address) },
  )(request);
}

/**
 * Builds the app's handler: `/fetch/*` above; `/hono/*`, a Hono app with `honoRateLimit`'s
 * DEFAULT key (hono-part.mjs), which reads the address from Hono's `c.env`; `/store/*`
 * (store-app.mjs).
 * @param connectStore - `(env) => ({ shared, stoppable })`: the `@upstash/redis` clients of the
 *   store part (a Worker's need its env).
 * @param storeOptions - store-app.mjs's options (`perRequest`).
 * @returns `(request, { address, env }) => Promise<Response>`: `address` is the platform's client
 *   address, `env` what the platform passes as the second argument of a fetch handler (Bun's
 *   server, Deno's ServeHandlerInfo, @hono/node-server's `{ incoming, outgoing }`, a Worker's
 *   env), which Hono exposes as `c.env`.
 */
export function createHttpApp(connectStore, storeOptions = {}) {
  const hono = honoServerApp();
  const store = storeApp(connectStore, storeOptions);
  return async (request, { address, env }) => {
    const { pathname } = new URL(request.url);
    if (pathname.startsWith('/fetch/')) return fetchRoute(request, address);
    if (pathname.startsWith('/hono/')) return hono.fetch(request, env);
    if (pathname.startsWith('/store/')) return store(request, { address, env });
    return new Response('not found', { status: 404, headers: { 'content-type': 'text/plain' } });
  };
}
