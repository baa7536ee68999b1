// Express: a limit per client address (here 2 requests per minute, so that the demo below reaches
// it); beyond it, a 429 with RateLimit headers, Retry-After and an RFC 9457 problem body. The
// route handler never sees those requests. TypeScript needs @types/express for `express`.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { RateLimiter } from 'ratewarden';
import { expressRateLimit } from 'ratewarden/express';

const app = express();
// The key defaults to req.ip: the address that connected. Behind a reverse proxy (nginx, a load
// balancer) that is the proxy's, so every client would share one limit: then tell Express the
// addresses of the proxies you run, e.g. app.set('trust proxy', '10.0.0.5'), and req.ip becomes
// the client address they add to X-Forwarded-For. Never set it without such a proxy in front (and
// never to `true`): any client could then forge X-Forwarded-For and get a fresh limit per request.

// One key per client address: sweep idle keys every minute to bound memory.
const limiter = new RateLimiter({ threshold: 2, windowSeconds: 60, sweepIntervalSeconds: 60 });

app.use(
  '/api',
  expressRateLimit({
    limiter, // key defaults to ipKey(req.ip)
    skip: (req) => req.path === '/health',
  }),
);
app.get('/api/health', (_req, res) => {
  res.send('ok');
});
app.get('/api/hello', (_req, res) => {
  res.json({ hello: 'world' });
});

// The demo: listen on a free port of 127.0.0.1 and send four requests; the third forges
// X-Forwarded-For, in vain (Express trusts no proxy here), and the health check is not limited.
const server = app.listen(0, '127.0.0.1');
await once(server, 'listening');
const { port } = server.address() as AddressInfo;
const requests: [string, Record<string, string>][] = [
  ['/api/hello', {}],
  ['/api/hello', {}],
  ['/api/hello', { 'X-Forwarded-For': '203.0.113.9' }],
  ['/api/health', {}],
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
