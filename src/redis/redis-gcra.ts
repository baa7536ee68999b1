import { MAX_THRESHOLD_TIMES_WINDOW_MS } from '../quota.js';
import { GCRA_ON_REDIS } from './algorithms/gcra.js';
import { RedisStrategy, type RedisStrategyOptions } from './redis-strategy.js';

/**
 * **GCRA** (the generic cell rate algorithm) on Redis: O(1) memory per user whatever the
 * threshold, shared by every process that uses the same Redis database and `prefix`. The same
 * decisions as the in-memory {@link ratewarden!GCRA}: `threshold` at once after idling, then one per
 * `window / threshold`; rejected requests wait exactly until they fit.
 *
 * **Layout:** one string per user, `<prefix>{<user id>}:gcra`, holding four little-endian
 * doubles (32 bytes, each an integer), `<at> <debt> <threshold> <window ms>`: the time of the user's last recorded decision in
 * ticks of 2^-10 ms, the theoretical arrival time's lead over it in units of `1 / threshold`
 * tick (so each step is integer arithmetic), and the limit it was computed under (so that a tier
 * change converts it as the in-memory GCRA does). Each write sets the key to expire when its
 * theoretical arrival time passes, when the user is back to a full burst, so idle keys vanish
 * without a sweep. One key per decision, hash-tagged with the user id: works on Redis Cluster.
 *
 * **Time and exactness:** the Redis server's clock (`TIME`), or the limiter's reading with
 * `time: "limiter"` (see {@link RedisStrategyOptions.time}), on the in-memory strategies' grid of
 * 2^-10 ms. Only differences of times are used and the state is integer, so decisions are exact
 * for any clock reading (epoch times included) and identical to the in-memory {@link ratewarden!GCRA}'s;
 * `threshold × windowMs` is at most 2^42 (`maxThresholdTimesWindowMs`).
 *
 * **Source:** the ATM Forum Traffic Management Specification 4.0 (1996), virtual scheduling
 * form; the algorithm of `redis-cell` and of Rust's `governor`.
 *
 * Asynchronous: use it with `allowRequest` and `peek`.
 *
 * @example
 * ```ts
 * import { Redis } from 'ioredis';
 * import { RateLimiter } from 'ratewarden';
 * import { RedisGCRA } from 'ratewarden/redis';
 *
 * const limiter = new RateLimiter({
 *   threshold: 10_000,
 *   windowSeconds: 3600,
 *   strategy: new RedisGCRA({ client: new Redis(), prefix: 'hourly:', onFailure: 'fail-open' }),
 * });
 * ```
 */
export class RedisGCRA extends RedisStrategy {
  /** `"redis-gcra"`. */
  readonly name = 'redis-gcra';
  /** 2^42: the largest `threshold × windowMs`, as the in-memory {@link ratewarden!GCRA}'s. */
  readonly maxThresholdTimesWindowMs = MAX_THRESHOLD_TIMES_WINDOW_MS;

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
    super(options, GCRA_ON_REDIS, 'RedisGCRA');
  }
}
