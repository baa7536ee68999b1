// A Fetch API handler (Cloudflare Workers, Bun, Deno, Hono's app.fetch): 60 requests per minute
// per client. A Fetch Request has no client address, so `key` is required: here the address
// Cloudflare sets in CF-Connecting-IP (clients cannot forge it behind Cloudflare).
// The limiter lives in this process (one isolate); share it across instances with ratewarden/redis.
import { RateLimiter } from 'ratewarden';
import { withRateLimit } from 'ratewarden/fetch';

const limiter = new RateLimiter({ threshold: 60, windowSeconds: 60 });

async function handler(request: Request): Promise<Response> {
  return Response.json({ path: new URL(request.url).pathname });
}

export default {
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
