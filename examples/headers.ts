// rateLimitHeaders: the HTTP header fields of a decision, for a server or framework that has no
// middleware here. A policy is { name?, windowSeconds }: the name shown in the fields ("default"
// if left out) and the window in seconds; a RateLimitGroup's result takes one policy per limit.
import { RateLimitGroup, RateLimiter, rateLimitHeaders, type RateLimitPolicy } from 'ratewarden';

const limiter = new RateLimiter({ threshold: 1, windowSeconds: 60 });
const policy: RateLimitPolicy = { name: 'per-minute', windowSeconds: limiter.windowSeconds };

console.log(rateLimitHeaders(limiter.allowRequestSync('alice'), { policy }));
// Refused: Retry-After too; `legacy: true` adds the X-RateLimit-* fields.
console.log(rateLimitHeaders(limiter.allowRequestSync('alice'), { policy, legacy: true }));

const group = new RateLimitGroup([
  { limiter: new RateLimiter({ threshold: 10, windowSeconds: 1 }), name: 'burst' },
  { limiter: new RateLimiter({ threshold: 1000, windowSeconds: 3600 }), name: 'hourly' },
]);
// Each policy's name defaults to the group's name for that limit.
console.log(rateLimitHeaders(group.allowRequestSync('alice'), { policy: [{ windowSeconds: 1 }, { windowSeconds: 3600 }] }));
