import type { RateLimitResult } from './strategy.js';

/**
 * @internal Builds a {@link RateLimitResult} from milliseconds. Every strategy builds its results
 * here, so that all results share one object shape (call sites stay monomorphic) and one
 * conversion to seconds.
 *
 * `retryAfter` is rounded **up** to the microsecond, so that a caller who waits exactly that long
 * is not turned away by a rounding step (with a fractional clock, `oldest + window − now` can
 * come out a hair short). Both times are clamped to `maxSeconds`: the conversion can land a
 * rounding step above the documented maximum.
 *
 * @param retryAfterMs - milliseconds until the request would be allowed; `Infinity` for never.
 * @param resetAfterMs - milliseconds until the key's state is fully clear.
 * @param maxSeconds - the strategy's documented maximum wait, in seconds.
 */
export function result(
  allowed: boolean,
  remaining: number,
  retryAfterMs: number,
  limit: number,
  resetAfterMs: number,
  maxSeconds: number,
): RateLimitResult {
  let retryAfter = retryAfterMs === 0 ? 0 : Math.ceil(retryAfterMs * 1000 - 1e-6) / 1e6;
  if (retryAfter > maxSeconds && retryAfter !== Infinity) retryAfter = maxSeconds;
  let resetAfter = resetAfterMs / 1000;
  if (resetAfter > maxSeconds) resetAfter = maxSeconds;
  return { allowed, remaining, retryAfter, limit, resetAfter };
}
