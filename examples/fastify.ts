// Fastify: two limits per client, all or nothing (10 per second and 1,000 per hour); both are
// advertised in RateLimit-Policy and RateLimit. Errors of the limiter go to Fastify's error handler.
import Fastify from 'fastify';
import { RateLimitGroup, RateLimiter } from 'ratewarden';
import { fastifyRateLimit } from 'ratewarden/fastify';

// Behind your load balancer (here in 10.0.0.0/8): request.ip is then the client address it
// appended to X-Forwarded-For. Without trustProxy, every client would share the proxy's limit.
const app = Fastify({ trustProxy: '10.0.0.0/8', logger: true });

const limits = new RateLimitGroup([
  { limiter: new RateLimiter({ threshold: 10, windowSeconds: 1 }), name: 'burst' },
  { limiter: new RateLimiter({ threshold: 1000, windowSeconds: 3600 }), name: 'hourly' },
]);

app.addHook(
  'onRequest',
  fastifyRateLimit({
    limiter: limits,
    policy: [{ windowSeconds: 1 }, { windowSeconds: 3600 }], // one per limit of the group
    // Charge uploads more than reads.
    cost: (request) => (request.method === 'POST' ? 5 : 1),
  }),
);
app.get('/', async () => ({ hello: 'world' }));
app.post('/upload', async () => ({ stored: true }));

await app.listen({ port: 3000, host: '0.0.0.0' });
