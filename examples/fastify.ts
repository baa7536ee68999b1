// Fastify: two limits per client, all or nothing (here 5 per minute and 1,000 per day); both are
// advertised in RateLimit-Policy and RateLimit. Errors of the limiter go to Fastify's error handler.
import Fastify from 'fastify';
import { RateLimitGroup, RateLimiter } from 'ratewarden';
import { fastifyRateLimit } from 'ratewarden/fastify';

// The key defaults to request.ip: the address that connected. Behind a reverse proxy (nginx, a
// load balancer) that is the proxy's, so every client would share one limit: then name the
// proxies you run, e.g. Fastify({ trustProxy: '10.0.0.5' }), and request.ip becomes the client
// address they add to X-Forwarded-For. Never set trustProxy without such a proxy in front (and
// never to `true`): any client could then forge X-Forwarded-For and get a fresh limit per request.
const app = Fastify();

const limits = new RateLimitGroup([
  { limiter: new RateLimiter({ threshold: 5, windowSeconds: 60 }), name: 'minute' },
  { limiter: new RateLimiter({ threshold: 1000, windowSeconds: 86_400 }), name: 'day' },
]);

app.addHook(
  'onRequest',
  fastifyRateLimit({
    limiter: limits,
    policy: [{ windowSeconds: 60 }, { windowSeconds: 86_400 }], // one per limit of the group
    // Charge uploads more than reads.
    cost: (request) => (request.method === 'POST' ? 5 : 1),
  }),
);
app.get('/', async () => ({ hello: 'world' }));
app.post('/upload', async () => ({ stored: true }));

// The demo: listen on a free port of 127.0.0.1. After a read (cost 1), an upload (cost 5) no
// longer fits the minute's 5; refused, it records nothing. The last read forges X-Forwarded-For,
// in vain (no proxy is trusted here): it counts against the same client, 3 left.
const address = await app.listen({ port: 0, host: '127.0.0.1' });
const requests: [string, string, Record<string, string>][] = [
  ['GET', '/', {}],
  ['POST', '/upload', {}],
  ['GET', '/', { 'X-Forwarded-For': '203.0.113.9' }],
];
for (const [method, path, headers] of requests) {
  const response = await fetch(`${address}${path}`, { method, headers });
  console.log(`${method} ${path} ${JSON.stringify(headers)} → ${response.status}`);
  for (const name of ['RateLimit-Policy', 'RateLimit', 'Retry-After']) {
    if (response.headers.has(name)) console.log(`  ${name}: ${response.headers.get(name)}`);
  }
}
await app.close();
