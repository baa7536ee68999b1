import { GCRA } from '../strategies/gcra.js';
import { RedisStrategy, type RedisStrategyOptions } from './redis-strategy.js';

/**
 * **GCRA** (the generic cell rate algorithm) on Redis: O(1) memory per user whatever the
 * threshold, shared by every process that uses the same Redis database and `prefix`. The same
 * decisions as the in-memory {@link GCRA}: `threshold` at once after idling, then one per
 * `window / threshold`; rejected requests wait exactly until they fit.
 *
 * **Layout:** one string per user, `<prefix>{<user id>}:gcra`, holding
 * `"<TAT × threshold> <threshold> <window ms>"` (the theoretical arrival time, scaled so each
 * step is exact, and the limit it was computed under, so that a tier change converts it as the
 * in-memory GCRA does). Each write sets the key to expire when its TAT passes, when the user is
 * back to a full burst, so idle keys vanish without a sweep. One key per decision, hash-tagged
 * with the user id: works on Redis Cluster.
 *
 * **Time:** the Redis server's clock (`TIME`), counted in milliseconds from
 * 2027-01-15T08:00:00Z (negative before it), so that `time × threshold` stays small: exact
 * (below 2^53) while `|time| × threshold < 2^53`, for instance for thresholds up to 285,000
 * within a year of that origin and 28,500 within ten; beyond, rounding stays below a
 * microsecond per decision. See {@link RedisStrategyOptions.time}.
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

  /**
   * @throws {RateWardenTypeError} when `options` is not an object, `client` is not a node-redis
   *   or ioredis client or a {@link RedisAdapter}, or an option has the wrong type.
   * @throws {RateWardenRangeError} when `prefix` contains `{` or `}`, `timeoutSeconds` is outside
   *   `[0.001, 2147483]` and not `Infinity`, or `onFailure` / `time` is not one of its values.
   */
  constructor(options: RedisStrategyOptions) {
    super(options, 'g', ':gcra', new GCRA());
  }
}
