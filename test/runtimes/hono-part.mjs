// The `ratewarden/hono` part of the runtime checks: a scenario (scenario.mjs records it in the
// transcript) and the Hono app of each server's `/hono/*` (http-app.mjs). Written against the
// documented API: `app.use('/api/*', honoRateLimit({ limiter, key }))`, the decision in
// `c.get('rateLimit')`. `hono` is a pinned devDependency; workerd gets it as embedded modules
// (test/integration/runtimes.test.ts, workerdConfig).
import { Hono } from 'hono';
import { RateLimiter } from '../../dist/index.js';
import { honoRateLimit } from '../../dist/hono.js';

/**
 * A Hono app with a limit per `x-client` header, on an injected clock: its responses as data.
 * @param record - turns a Response into data (scenario.mjs's `responseRecord`).
 */
export async function honoScenario(record) {
  let now = 0;
  const limiter = new RateLimiter({ threshold: 2, windowSeconds: 60, clock: () => now });
  const app = new Hono();
  app.use('/api/*', honoRateLimit({ limiter, key: (c) => c.req.header('x-client') ?? 'anonymous' }));
  app.get('/api/hello', (c) => c.json({ remaining: c.get('rateLimit').remaining }));
  app.get('/health', (c) => c.json({ ok: true }));
  const out = [];
  for (const [ms, path, client] of [
    [0, '/api/hello', 'a'],
    [0, '/api/hello', 'a'],
    [0, '/api/hello', 'a'],
    [0, '/api/hello', 'b'],
    [0, '/health', 'a'],
    [60_000, '/api/hello', 'a'],
  ]) {
    now = ms;
    out.push(await record(await app.request(path, { headers: { 'x-client': client } })));
  }
  return out;
}

/**
 * The Hono app of http-app.mjs's `/hono/*`: `honoRateLimit` with its DEFAULT key, the client
 * address read from `c.env` (Bun's server, Deno's ServeHandlerInfo, or on Workers the
 * CF-Connecting-IP header).
 */
export function honoServerApp() {
  const limiter = new RateLimiter({ threshold: 2, windowSeconds: 3600 });
  const app = new Hono();
  app.use('/hono/*', honoRateLimit({ limiter }));
  app.get('/hono/hello', (c) => c.json({ remaining: c.get('rateLimit').remaining }));
  return app;
}
