/**
 * The contract between {@link RateLimiter} and a rate-limiting algorithm.
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
   * greater than `limit` (waiting will not help). Rounded up to the microsecond.
   */
  readonly retryAfter: number;
  /** The limit that applied: requests (cost units) allowed per window. */
  readonly limit: number;
  /**
   * Seconds until the key's window is fully clear, that is until `remaining` would be back to
   * `limit` if no other request arrived: in `[0, windowSeconds]` (`[0, 2 × windowSeconds]` with
   * the sliding-window counter).
   */
  readonly resetAfter: number;
  /**
   * Set only when a strategy backed by a store (such as `ratewarden/redis`) could not reach it
   * and decided by its failure policy instead: `"fail-closed"` (rejected), `"fail-open"`
   * (allowed) or `"local"` (decided by an in-memory fallback in this process). Absent otherwise.
   */
  readonly degraded?: 'fail-closed' | 'fail-open' | 'local';
}

/**
 * The limit a strategy enforces for one decision. Passed on every call, so that a strategy holds
 * no configuration of its own and one instance can serve several limiters.
 */
export interface Limit {
  /** Requests (cost units) allowed per window: a positive safe integer. */
  readonly threshold: number;
  /** The window length in **milliseconds**: `windowSeconds × 1000`. */
  readonly windowMs: number;
  /** The window length in **seconds**, as configured: results never report waits beyond it
   * (or beyond the strategy's documented multiple of it). */
  readonly windowSeconds: number;
}

/**
 * A rate-limiting algorithm, pluggable into {@link RateLimiter}.
 *
 * The limiter owns the per-key state (a `Map<string, State>`), the clock and the per-key
 * mutex; a strategy says how to create a key's state and how to decide on it. A strategy never
 * reads a clock: it is given `nowMs`, which never decreases from one call to the next (the
 * limiter takes a clock reading earlier than its latest as the latest), so a strategy may drop
 * what has expired at `nowMs` in any call. The built-in strategies also stay consistent when
 * called directly with a time that goes back.
 *
 * Calls on one key never overlap: the limiter runs {@link consume} under the key's mutex, and
 * {@link peek} and {@link sweep} only when no decision is in flight for the key. Different keys
 * may be decided concurrently.
 *
 * A strategy is **synchronous** when {@link consume} and {@link peek} return plain values (the
 * in-memory strategies), and asynchronous when they return promises (a strategy backed by a
 * store). Only synchronous strategies can be used with `allowRequestSync`.
 *
 * @typeParam State - the per-key state the limiter stores for this strategy.
 */
export interface RateLimitStrategy<State = unknown> {
  /** A short name for messages and tooling, such as `"sliding-window-log"`. */
  readonly name: string;
  /**
   * `true` when {@link consume} and {@link peek} return plain values. An asynchronous strategy
   * sets `false`; its decisions are serialised per key by the limiter's mutex.
   */
  readonly synchronous: boolean;
  /**
   * The largest `threshold` the strategy supports, when it has one (the sliding-window log stores
   * a timestamp per unit, so it caps memory per key). The limiter checks it at construction.
   * @default Number.MAX_SAFE_INTEGER
   */
  readonly maxThreshold?: number;
  /**
   * The longest window, in **seconds**, the strategy supports, when it has a bound (a store's
   * integer arithmetic or expiry times). The limiter checks it at construction and for tiers.
   * @default no bound beyond the limiter's own
   */
  readonly maxWindowSeconds?: number;
  /**
   * `true` when the strategy keeps every key's state in an external store (Redis) and makes
   * each decision atomically there (one script per decision): the limiter then keeps nothing
   * per key (no `Map` entry, `size` stays 0, `cleanUp` and `maxKeys` have nothing to do), never
   * calls {@link createState} or {@link sweep}, passes `undefined` as the state, and takes no
   * per-key lock (the store serialises decisions, across processes too).
   * @default false
   */
  readonly external?: boolean;
  /**
   * For external strategies: the key under which `key`'s state is stored, so that a
   * {@link ratewarden!RateLimitGroup} can refuse two limits that would count on one stored key.
   */
  storeKey?(key: string): string;
  /**
   * For external strategies that can decide several limits in one step (one script call):
   * {@link ratewarden!RateLimitGroup} uses it when every limit of the group is on strategies sharing the
   * same `batch` object.
   */
  readonly batch?: StrategyBatch;
  /**
   * Creates the empty state of a key seen for the first time (or again after being dropped).
   * The limiter stores it only once a request on it has been allowed.
   *
   * @param limit - the limit of the key's first decision.
   * @returns the new state.
   */
  createState(limit: Limit): State;
  /**
   * Decides one request of `cost` units at `nowMs` and, only when it is allowed, records it.
   * A rejected request must leave the decision-relevant state as it was.
   *
   * @param key - the key (user id) decided on, for strategies that address an external store.
   * @param state - the key's state, owned by the limiter.
   * @param nowMs - the limiter's clock in milliseconds, read for this decision.
   * @param cost - a positive safe integer, already validated.
   * @param limit - the limit to enforce.
   */
  consume(
    key: string,
    state: State,
    nowMs: number,
    cost: number,
    limit: Limit,
  ): RateLimitResult | PromiseLike<RateLimitResult>;
  /**
   * The result a request of `cost` units would get at `nowMs`, without recording or evicting
   * anything: {@link consume} called next with the same arguments must decide the same way.
   *
   * The result's `remaining` and `resetAfter` are as they stand before the request (nothing is
   * recorded), not after it as in {@link consume}'s result.
   *
   * @param key - the key (user id) asked about.
   * @param state - the key's state, or `undefined` when the key is not tracked.
   * @param nowMs - the limiter's clock in milliseconds.
   * @param cost - a positive safe integer, already validated.
   * @param limit - the limit to check against.
   */
  peek(
    key: string,
    state: State | undefined,
    nowMs: number,
    cost: number,
    limit: Limit,
  ): RateLimitResult | PromiseLike<RateLimitResult>;
  /**
   * Drops what has expired at `nowMs` from `state` and says whether the state is now empty, so
   * that the limiter can forget the key: a key created afresh must then decide exactly as the
   * swept one would have. Must be synchronous and cheap; called by `cleanUp()`.
   *
   * @param state - the key's state.
   * @param nowMs - the limiter's clock in milliseconds.
   * @param limit - the key's limit.
   * @returns `true` when the key can be forgotten.
   */
  sweep(state: State, nowMs: number, limit: Limit): boolean;
}

/** One limit's share of a batched decision (see {@link StrategyBatch}). */
export interface BatchRequest {
  /** The strategy of the limit; its `batch` is the batch deciding. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly strategy: RateLimitStrategy<any>;
  /** The key decided on. */
  readonly key: string;
  /** The limiter's clock in milliseconds. */
  readonly nowMs: number;
  /** A positive safe integer. */
  readonly cost: number;
  /** The limit to enforce. */
  readonly limit: Limit;
}

/**
 * Decides several limits at once, all or nothing, for {@link ratewarden!RateLimitGroup}: each limit is
 * checked and, only when `record` and every limit allows, each is recorded, atomically.
 */
export interface StrategyBatch {
  /**
   * @returns one result per request, in order: when every one is allowed and `record`, the
   *   results of recording; otherwise the results of checking, as `peek` reports them.
   */
  decideAll(requests: readonly BatchRequest[], record: boolean): PromiseLike<readonly RateLimitResult[]>;
}
