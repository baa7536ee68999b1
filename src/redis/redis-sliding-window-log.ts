import { SLIDING_WINDOW_LOG_ON_REDIS } from './algorithms/sliding-window-log.js';
import { RedisStrategy, type RedisStrategyOptions } from './redis-strategy.js';

/** The largest threshold of the Redis sliding-window log: one sorted-set member per unit. */
const MAX_THRESHOLD = 10_000;

/**
 * The exact **sliding-window log** on Redis, shared by every process that uses the same client
 * database and `prefix`: the same decisions as the in-memory {@link ratewarden!SlidingWindowLog} (a
 * request of cost `c` is allowed when fewer than `threshold − c + 1` units were allowed in the
 * last window; rejected, it waits until enough of the oldest expire), made atomically by one Lua
 * script per decision (`EVALSHA`, falling back to `EVAL` after `NOSCRIPT`).
 *
 * **Layout:** one sorted set per user, `<prefix>{<user id>}:log`, with one member per allowed
 * unit scored by its time in integer ticks of 2^-10 ms (the in-memory strategies' grid: exact
 * arithmetic, on differences of times only, at any clock reading); members are `<time>-<n>` (`n`
 * in six digits, counting the members already at that time), unique even when requests share a
 * tick. Each decision that records sets
 * the key's expiry to one window, so idle keys vanish from Redis without a sweep. One key per
 * decision, hash-tagged with the user id: works on Redis Cluster.
 *
 * **Time:** the Redis server's clock (`TIME`, inside the script) by default, so processes on
 * different machines agree; see {@link RedisStrategyOptions.time}.
 *
 * **Memory in Redis:** one sorted-set member per allowed unit in the window (roughly 50–100
 * bytes each, Redis's own accounting): for high thresholds and many users prefer
 * {@link RedisGCRA}, which keeps one short string per user.
 *
 * **Cost per decision:** O(log n) for the count, plus O(c log n) to record `c` units, in Redis.
 *
 * **Source:** the "sliding log" of Cloudflare's "How we built rate limiting capable of scaling
 * to millions of domains" (2017); the sorted-set layout is the usual one for Redis (see Redis's
 * documentation on rate limiting with sorted sets).
 *
 * Asynchronous: use it with `allowRequest` and `peek`.
 *
 * @example
 * ```ts
 * import { createClient } from 'redis';
 * import { RateLimiter } from 'ratewarden';
 * import { RedisSlidingWindowLog } from 'ratewarden/redis';
 *
 * const client = await createClient({ url: 'redis://127.0.0.1:6379' }).connect();
 * const limiter = new RateLimiter({
 *   threshold: 300,
 *   windowSeconds: 60,
 *   strategy: new RedisSlidingWindowLog({ client, prefix: 'api:', onFailure: 'local' }),
 * });
 * const { allowed, retryAfter } = await limiter.allowRequest('alice');
 * ```
 */
export class RedisSlidingWindowLog extends RedisStrategy {
  /** `"redis-sliding-window-log"`. */
  readonly name = 'redis-sliding-window-log';
  /**
   * 10,000: the log stores one sorted-set member per allowed unit, so a key may hold that many
   * members (about 1 MB in Redis), and a request's whole cost is written in one script run, which
   * must stay well within `timeoutSeconds` (100,000 members took about 0.4 s here). For larger
   * limits use {@link RedisGCRA}.
   */
  readonly maxThreshold = MAX_THRESHOLD;

  /**
   * @throws {RateWardenTypeError} when `options` is not an object or has a key that is not one
   *   of its options (code `ERR_RATEWARDEN_UNKNOWN_OPTION`, naming the key and, when one is
   *   close, the option meant), `client` is not a node-redis or ioredis client or a
   *   {@link RedisAdapter}, or an option has the wrong type.
   * @throws {RateWardenRangeError} when `prefix` contains `{` or `}`, `timeoutSeconds` is outside
   *   `[0.001, 2147483]` and not `Infinity`, `onFailure` / `time` is not one of its values,
   *   `batchSize` is not an integer from 1 to 1,000 or `blockCacheSize` not one from 0 to
   *   10,000,000 (a `RateWardenTypeError` when either is not a number).
   */
  constructor(options: RedisStrategyOptions) {
    super(options, SLIDING_WINDOW_LOG_ON_REDIS, 'RedisSlidingWindowLog');
  }
}
