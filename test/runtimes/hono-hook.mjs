// HOOK ratewarden/hono: the `ratewarden/hono` part of the runtime scenario, imported by
// scenario.mjs and http-app.mjs only when dist/hono.js exists (test/integration/runtimes.test.ts
// checks, and then needs the `hono` package installed). Written against the documented API:
// `app.use('/api/*', honoRateLimit({ limiter, key }))`, the decision in `c.get('rateLimit')`.
import { Hono } from 'hono';
import { RateLimiter } from '../../dist/index.js';
import { honoRateLimit } from '../../dist/hono.js';
import { responseRecord } from './scenario.mjs';

/** A Hono app with a limit per `x-client` header, on an injected clock: its responses as data. */
export async function honoScenario() {
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
    out.push(await responseRecord(await app.request(path, { headers: { 'x-client': client } })));
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
