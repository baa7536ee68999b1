// Express: at most 100 requests per minute per client address; beyond, a 429 with RateLimit
// headers, Retry-After and an RFC 9457 problem body. The route handler never sees those requests.
import express from 'express';
import { RateLimiter } from 'ratewarden';
import { expressRateLimit } from 'ratewarden/express';

const app = express();
// Behind one reverse proxy (nginx, a load balancer), req.ip is the proxy's address unless Express
// trusts it: then req.ip is the client address that proxy appended to X-Forwarded-For. Trust only
// proxies you run, or every client shares one limit (or can forge its address).
app.set('trust proxy', 1);

// One key per client address: sweep idle keys every minute to bound memory.
const limiter = new RateLimiter({ threshold: 100, windowSeconds: 60, sweepIntervalSeconds: 60 });

app.use(
  '/api',
  expressRateLimit({
    limiter, // key defaults to req.ip
    skip: (req) => req.path === '/health',
    legacyHeaders: true, // X-RateLimit-* too, for older clients
  }),
);
app.get('/api/health', (_req, res) => {
  res.send('ok');
});
app.get('/api/hello', (_req, res) => {
  res.json({ hello: 'world' });
});
app.listen(3000);
