// A Fetch API handler (Cloudflare Workers, Bun, Deno, Next.js route handlers; a Hono app takes the
// middleware of ratewarden/hono instead): a limit per client, here 2 requests per minute. A Fetch
// Request has no client address, so `key` is required: here the address Cloudflare sets in
// CF-Connecting-IP (clients cannot forge it behind Cloudflare).
// The limiter lives in this process (one isolate); share it across instances with ratewarden/redis.
import { RateLimiter } from 'ratewarden';
import { withRateLimit } from 'ratewarden/fetch';

const limiter = new RateLimiter({ threshold: 2, windowSeconds: 60 });

async function handler(request: Request): Promise<Response> {
  return Response.json({ path: new URL(request.url).pathname });
}

const worker = {
  fetch: withRateLimit(handler, {
    limiter,
    key: (request) => request.headers.get('cf-connecting-ip') ?? 'unknown',
    // A JSON body of your own instead of the default problem details; the RateLimit and
    // Retry-After headers are added to it.
    onRejected: (_request, result) =>
      Response.json({ error: 'Too many requests', retryAfterSeconds: Math.ceil(result.retryAfter) }, { status: 429 }),
    // Limiter errors reject the returned promise (the runtime answers 500); or fail open:
    onError: () => 'allow',
  }),
};
export default worker;

// The demo, in Node.js: three requests from one address, as Cloudflare would pass them on.
for (let i = 0; i < 3; i++) {
  const request = new Request('https://api.example/hello', { headers: { 'cf-connecting-ip': '203.0.113.7' } });
  const response = await worker.fetch(request);
  console.log(`${response.status} ${await response.text()}  RateLimit: ${response.headers.get('RateLimit')}`);
}
