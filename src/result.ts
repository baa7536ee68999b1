import type { RateLimitResult } from './strategy.js';

/**
 * @internal Builds a {@link RateLimitResult} from milliseconds. Every strategy builds its results
 * here, so that all results share one object shape (call sites stay monomorphic) and one
 * conversion to seconds.
 *
 * @param retryAfterMs - milliseconds until the request would be allowed; `Infinity` for never.
 * @param resetAfterMs - milliseconds until the key's state is fully clear.
 */
export function result(
  allowed: boolean,
  remaining: number,
  retryAfterMs: number,
  limit: number,
  resetAfterMs: number,
): RateLimitResult {
  return { allowed, remaining, retryAfter: retryAfterMs / 1000, limit, resetAfter: resetAfterMs / 1000 };
}
