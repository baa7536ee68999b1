// Hono: a limit per client address on /api/* (here 2 requests per minute, so that the demo below
// reaches it); beyond it, a 429 with RateLimit headers, Retry-After and an RFC 9457 problem body.
// The route handler never sees those requests, and reads the decision with c.get('rateLimit').
// Served here by @hono/node-server; the same app runs on Bun, Deno and Cloudflare Workers.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { RateLimiter } from 'ratewarden';
import { honoRateLimit, type RateLimitVariables } from 'ratewarden/hono';

// RateLimitVariables types c.get('rateLimit'): the decision, for the handlers after the middleware
// (undefined where it decided nothing: a skipped request, one let through by onError).
const app = new Hono<{ Variables: RateLimitVariables }>();

// One key per client address: sweep idle keys every minute to bound memory.
const limiter = new RateLimiter({ threshold: 2, windowSeconds: 60, sweepIntervalSeconds: 60 });

// The key defaults to the address that connected, as the runtime reports it (here the socket of
// @hono/node-server; Bun's server.requestIP, Deno.serve's remoteAddr, Cloudflare's
// CF-Connecting-IP), never a header the client writes. Behind a reverse proxy that is the proxy's
// address, so every client would share one limit: then pass `key`, from the X-Forwarded-For entry
// your proxy appends or an authenticated identity.
app.use('/api/*', honoRateLimit({ limiter }));
app.get('/api/hello', (c) => c.json({ hello: 'world', remaining: c.get('rateLimit')?.remaining }));
app.get('/health', (c) => c.text('ok')); // not under /api/: not limited

// The demo: serve on a free port of 127.0.0.1 and send four requests; the third forges
// X-Forwarded-For, in vain, and the health check is not limited.
const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
await once(server, 'listening');
const { port } = server.address() as AddressInfo;
const requests: [string, Record<string, string>][] = [
  ['/api/hello', {}],
  ['/api/hello', {}],
  ['/api/hello', { 'X-Forwarded-For': '203.0.113.9' }],
  ['/health', {}],
];
for (const [path, headers] of requests) {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, { headers });
  console.log(`GET ${path} ${JSON.stringify(headers)} → ${response.status} ${await response.text()}`);
  for (const name of ['RateLimit-Policy', 'RateLimit', 'Retry-After']) {
    if (response.headers.has(name)) console.log(`  ${name}: ${response.headers.get(name)}`);
  }
}
server.close();
limiter.close();
