/**
 * The result of a decision ({@link RateLimitResult}) and the one place strategies build it
 * ({@link outcome}).
 *
 * @module
 */

/**
 * The outcome of one decision. A plain readonly object, new for every call.
 *
 * Times are in **seconds** (fractions allowed), counts in requests (or cost units).
 */
export interface RateLimitResult {
  /** Whether the request was allowed (and recorded). */
  readonly allowed: boolean;
  /**
   * Requests (cost units) that could still be allowed now, after this decision: an integer in
   * `[0, limit]`.
   */
  readonly remaining: number;
  /**
   * Seconds to wait before this same request (same cost) would be allowed: `0` when allowed, a
   * finite number in `(0, windowSeconds]` when rejected for now (`(0, 2 × windowSeconds]` with
   * the sliding-window counter), and `Infinity` when it can never be allowed because its cost is
   * greater than `limit` (waiting will not help). Rounded up to the microsecond. While the key
   * is **blocked** (`blockSeconds`, `RateLimiter.block`): the block's remaining time plus what
   * the strategy would still make the request wait at the block's end (so up to the block's
   * length plus the maximum above).
   *
   * **Waiting it is enough:** a caller who read its clock at `t` (the reading this decision
   * used) and asks again at `t + retryAfter × 1000` ms, computed in floating point, is allowed
   * then, if nothing else was recorded for the key meanwhile. With a fractional or very large
   * clock reading, that can take a few units in the last place more than the exact wait; the
   * value then exceeds the maximum above by at most that.
   */
  readonly retryAfter: number;
  /** The limit that applied: requests (cost units) allowed per window. */
  readonly limit: number;
  /**
   * Seconds until the key's window is fully clear, that is until `remaining` would be back to
   * `limit` if no other request arrived: in `[0, windowSeconds]` (`[0, 2 × windowSeconds]` with
   * the sliding-window counter). While the key is blocked: the longer of that and the block's
   * remaining time.
   */
  readonly resetAfter: number;
  /**
   * Set only when a store (a `RateLimitStore`, such as those of `ratewarden/redis`) could not reach it
   * and decided by its failure policy instead: `"fail-closed"` (rejected), `"fail-open"`
   * (allowed) or `"local"` (decided by an in-memory fallback in this process). Absent otherwise.
   */
  readonly degraded?: 'fail-closed' | 'fail-open' | 'local';
}

/**
 * @internal Builds a {@link RateLimitResult}. Every built-in strategy and the Redis reply build
 * their results here, so that all results share one object shape (call sites stay
 * monomorphic).
 *
 * @param retryAfter - seconds: `0` when allowed, else from `retryAfterSeconds`
 *   (`src/time.ts`), or `Infinity`.
 * @param resetAfterMs - milliseconds until the key's state is fully clear.
 */
export function outcome(
  allowed: boolean,
  remaining: number,
  retryAfter: number,
  limit: number,
  resetAfterMs: number,
): RateLimitResult {
  return { allowed, remaining, retryAfter, limit, resetAfter: resetAfterMs / 1000 };
}
