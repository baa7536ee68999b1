/**
 * The options of `RateLimiter` ({@link RateLimiterOptions}): what each means, its unit, its range
 * and its default. Validated once, by the constructor.
 *
 * @module
 */
import type { Clock } from './clock.js';
import { knownOptions } from './errors.js';
import type { QuotaOptions } from './quota.js';
import type { RateLimitStore } from './store.js';
import type { RateLimitStrategy } from './strategy.js';
import type { LimitFor } from './tiers.js';

/**
 * Options of `RateLimiter`: a quota (`threshold` per `windowSeconds`) and how to keep it. Any
 * other own enumerable string key is rejected (a `RateWardenTypeError`, code
 * `ERR_RATEWARDEN_UNKNOWN_OPTION`, naming the key and, when one is close, the option meant), even
 * when its value is `undefined`; symbol, inherited and non-enumerable keys are not checked.
 */
export interface RateLimiterOptions<State = unknown> extends QuotaOptions {
  /**
   * A name for this limit, such as `"api"` or `"login"`: the label `decision` listeners are
   * told of (`DecisionInfo.name`), for metrics and logs. A non-empty string; it changes no
   * decision.
   * @default undefined (no name)
   */
  readonly name?: string | undefined;
  /**
   * The algorithm: an in-memory {@link RateLimitStrategy} (the limiter holds each key's state;
   * usable with both `allowRequest` and `allowRequestSync`), or a {@link RateLimitStore} (the
   * state is in a store such as Redis; `allowRequest` only). Told apart by their members: a
   * strategy has `createState` and `sweep`, a store has neither.
   * @default new SlidingWindowLog()
   */
  readonly strategy?: RateLimitStrategy<State> | RateLimitStore;
  /**
   * A monotonic clock in **milliseconds**, read once per decision, inside the key's critical
   * section. Inject one to replay recorded traffic or to test without fake timers.
   * @default performanceClock — `performance.now()`, looked up at each call, so fake timers
   *   installed after import take effect.
   */
  readonly clock?: Clock;
  /**
   * Chooses the quota per user — **tiers**, such as plans: free 60 per minute, pro 600 per
   * minute. Called at every decision (and by `peek`) with the user as passed and its key;
   * returning `undefined` applies `threshold` and `windowSeconds`. Return the same object for
   * the same tier (it is validated once, by identity; treat it as immutable). The result's
   * `limit` reports the threshold that applied.
   *
   * **A key whose tier changes mid-window** keeps its state, and the new quota applies to it at
   * once: with the sliding-window log, the requests already in the window count against the new
   * threshold (a downgrade from 600 to 60 with 100 requests in the window rejects until fewer
   * than 60 remain); counters compare their counts with the new threshold; the token bucket and
   * GCRA keep the used share of their burst, from the key's first decision under the new quota.
   * A key is swept under the quota last applied to it.
   *
   * A tier may block for a while on its own terms (its `blockSeconds` and `extendBlock`): a
   * refusal blocks under the quota of the decision that refused.
   *
   * @throws from a decision: a `TypeError` / `RangeError` naming `limitFor().threshold`,
   *   `limitFor().windowSeconds`, `limitFor().tier`, `limitFor().blockSeconds` or
   *   `limitFor().extendBlock` when the returned quota is invalid (or, with a store that does not
   *   block keys, a `TypeError` naming `limitFor().blockSeconds` when it is above 0); a
   *   `TypeError` (code `ERR_RATEWARDEN_UNKNOWN_OPTION`) naming the key when it has a key that is
   *   not a quota option; or what the function throws.
   * @default undefined — every key gets `threshold` per `windowSeconds`.
   */
  readonly limitFor?: LimitFor;
  /**
   * Sweep automatically every this many **seconds**: an incremental `RateLimiter.cleanUp`
   * that visits at most 1,024 keys per slice and yields to the event loop between slices, so a
   * sweep over millions of keys never stalls it. The timers are `unref()`ed (they never keep a
   * Node process alive), hold the limiter only weakly (an abandoned limiter is collected and its
   * timer stops), are clamped below 2^31 − 1 ms, and are stopped by `close()` or
   * `[Symbol.dispose]()`. No timer is started for a store (it expires what it keeps). Where
   * the runtime refuses a timer at construction (Cloudflare Workers, for a limiter created in a
   * Worker's global scope; they also drop the timers a request leaves behind), decisions drive
   * the sweep instead, with no timer: each new key tracked sweeps one slice of the pass under
   * way, and a pass starts at the first new key once this interval has passed since the last
   * one began.
   *
   * A finite number of at least 0.001. Off by default: timers in a library surprise tests that
   * run all fake timers.
   * @default undefined — no automatic sweep
   */
  readonly sweepIntervalSeconds?: number;
  /**
   * The most keys tracked at once: a bound on memory against floods of distinct keys.
   *
   * When a new key arrives with `maxKeys` keys tracked, the limiter looks at the next 16 tracked
   * keys (round robin, oldest first) and forgets the first whose window is clear (forgetting it
   * changes no decision). It never forgets a key whose window is live, so a flood of new keys
   * can never reset another client's limit. When every key it looks at is live, the new key's
   * request is **rejected**, recording nothing, with `remaining: 0`, `resetAfter: 0` (the new key
   * has no state) and `retryAfter` the time until the first key it looked at clears, capped at
   * the window: an estimate, since by then the search has moved on round robin and may meet
   * other live keys. The flood is held off, not the clients already tracked. `peek` answers the
   * same way. O(1) per new key.
   *
   * With tiers, a key is forgotten when it is clear under the quota last applied to it; a later
   * tier with a longer window cannot count requests from before the change that were forgotten.
   * Nothing to bound with a store, which keeps no key here.
   *
   * A positive safe integer, or `Infinity`.
   * @default Infinity
   */
  readonly maxKeys?: number;
}

/**
 * @internal The keys of {@link RateLimiterOptions}, checked against the interface: the
 * constructor rejects any other.
 */
export const RATE_LIMITER_OPTIONS = knownOptions('RateLimiter options', {
  threshold: true,
  windowSeconds: true,
  tier: true,
  blockSeconds: true,
  extendBlock: true,
  name: true,
  strategy: true,
  clock: true,
  limitFor: true,
  sweepIntervalSeconds: true,
  maxKeys: true,
} satisfies Record<keyof RateLimiterOptions, true>);
