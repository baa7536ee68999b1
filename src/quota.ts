/**
 * The quota: `threshold` requests (cost units) per window, validated once by
 * {@link createQuota} and passed around as that value — the limiter's own, each tier's, the
 * replay command's, the HTTP header policies'. The same rules and the same messages everywhere.
 * (Rust's `governor` builds its `Quota` the same way.)
 *
 * @module
 */
import { checkKnownKeys, checkObject, checkPositiveInteger, knownOptions, optionalBoolean, optionalLabel, rangeError, typeError } from './errors.js';

/**
 * A validated quota: `threshold` requests (cost units) per window. Built by
 * {@link createQuota}; frozen. Strategies receive it with every decision, so that a strategy
 * holds no configuration of its own and one instance can serve several limiters and tiers.
 */
export interface Quota {
  /** Requests (cost units) allowed per window: a positive safe integer (1 to 2^53 − 1). */
  readonly threshold: number;
  /** The window in whole **milliseconds**: `windowSeconds × 1000`; from 1 to 10^12. */
  readonly windowMs: number;
  /**
   * The window in **seconds**, as configured: results never report waits beyond it (or beyond
   * the strategy's documented multiple of it).
   */
  readonly windowSeconds: number;
  /** The quota's name (its tier), as given in {@link QuotaOptions.tier}; `undefined` when none. */
  readonly tier?: string | undefined;
  /**
   * How long a refused key stays blocked, in whole **milliseconds** (`blockSeconds × 1000`); `0`
   * when refusals do not block. Always set by `createQuota`; a quota built by hand without it
   * blocks nothing.
   */
  readonly blockMs?: number;
  /**
   * Whether refused attempts during a block restart it ({@link QuotaOptions.extendBlock}).
   * Always set by `createQuota`; absent means `false`.
   */
  readonly extendBlock?: boolean;
}

/**
 * What a quota is built from: `threshold` requests (cost units) per `windowSeconds`. Any other
 * own enumerable string key is rejected by `createQuota` and in a tier returned by `limitFor`.
 */
export interface QuotaOptions {
  /**
   * Requests (cost units) allowed per window: a positive safe integer, at most the strategy's
   * `maxThreshold` (1,048,576 for the sliding-window log).
   */
  readonly threshold: number;
  /**
   * The window length in **seconds**: a whole number of milliseconds from 0.001 (one
   * millisecond) to 10^9 (about 31.7 years); fractions are allowed
   * down to the millisecond (`0.5` is half a second, `1.017` is 1,017 ms; `0.0015` is refused),
   * so that the strategies' arithmetic is exact. At most the strategy's `maxWindowSeconds`, when
   * it has one; with the rate strategies, `threshold × windowSeconds × 1000` is also bounded
   * (their `maxThresholdTimesWindowMs`).
   */
  readonly windowSeconds: number;
  /**
   * A name for this quota, such as `"free"` or `"pro"`: the tier that `decision` listeners are
   * told of (`DecisionInfo.tier`), for metrics and logs. A non-empty string; it changes no
   * decision. On `RateLimiter` options it names the default quota; on the object `limitFor`
   * returns, that tier.
   * @default undefined (no name)
   */
  readonly tier?: string | undefined;
  /**
   * Blocking for a while, in **seconds**: once a request of this quota is refused by the limit
   * (a cost up to `threshold`; a larger cost can never be allowed, is a caller's bug rather than
   * abuse, and blocks nothing), the key stays refused for `blockSeconds` from that refusal,
   * whatever the window does meanwhile. The refusal that starts the block and every decision
   * during it (`allowRequest`, `peek`, each `waitForSlot` attempt, a `RateLimitGroup`) report
   * `allowed: false`, `remaining: 0`, `retryAfter` = the block's remaining time **plus** whatever
   * the strategy would still make the request wait at the block's end (usually nothing), and
   * `resetAfter` = the longer of the block's remaining time and the strategy's `resetAfter`;
   * nothing is recorded during a block. So `Retry-After`, `RateLimit` and 429 bodies tell the
   * block's time. At the block's end, to the millisecond, the strategy decides again (a refusal
   * then starts a new block).
   *
   * In memory the limiter keeps blocks apart from the strategy's state (dropped once expired;
   * counted in `stats().blocked`); a new key refused for want of room under `maxKeys` is not
   * blocked. With a store, the store applies the block inside its decision (atomically; for
   * Redis, shared by every process): a store that cannot block keys is refused `blockSeconds`
   * above 0 (a `TypeError` at construction; for a tier of `limitFor`, from its decisions).
   * `RateLimiter.block` blocks a key by hand; `reset` and `delete` lift a block.
   *
   * `0`, or a whole number of milliseconds from 0.001 to 10^9 seconds. rate-limiter-flexible's
   * `blockDuration` (seconds), @nestjs/throttler's `blockDuration` (milliseconds there),
   * @fastify/rate-limit's `ban` (a count of refusals there, not a duration).
   * @default 0 (a refusal blocks nothing)
   */
  readonly blockSeconds?: number | undefined;
  /**
   * With `blockSeconds`: whether every refused attempt during a block (of a cost up to
   * `threshold`; not a `peek`) restarts it, so that the block ends `blockSeconds` after the last
   * attempt — a client that keeps hammering stays out. A restart never shortens a block (a
   * longer one set by `RateLimiter.block` stays). A boolean.
   * @default false (attempts during a block do not extend it, as with rate-limiter-flexible)
   */
  readonly extendBlock?: boolean | undefined;
}

/**
 * What bounds a quota beyond the general rules: a strategy's `maxThreshold`,
 * `maxWindowSeconds` and `maxThresholdTimesWindowMs` (any `RateLimitStrategy` or
 * `RateLimitStore` has this shape).
 */
export interface QuotaBounds {
  /** The strategy's name, for messages. */
  readonly name: string;
  /** The largest threshold, if any. */
  readonly maxThreshold?: number | undefined;
  /** The longest window in seconds, if any. */
  readonly maxWindowSeconds?: number | undefined;
  /** The largest `threshold × windowMs`, if any (the rate strategies: 2^42). */
  readonly maxThresholdTimesWindowMs?: number | undefined;
}

/** The names under which errors report the two fields (`--threshold` in the replay command). */
export interface QuotaNames {
  readonly threshold: string;
  readonly windowSeconds: string;
  /** The name of the `tier` option in messages. @default `"tier"` */
  readonly tier?: string;
  /** The name of the `blockSeconds` option in messages. @default `"blockSeconds"` */
  readonly blockSeconds?: string;
  /** The name of the `extendBlock` option in messages. @default `"extendBlock"` */
  readonly extendBlock?: string;
}

const NAMES: QuotaNames = { threshold: 'threshold', windowSeconds: 'windowSeconds' };

/** @internal The keys of {@link QuotaOptions}: `createQuota` and tiers reject any other. */
export const QUOTA_OPTIONS = knownOptions('createQuota options', {
  threshold: true,
  windowSeconds: true,
  tier: true,
  blockSeconds: true,
  extendBlock: true,
} satisfies Record<keyof QuotaOptions, true>);

/** The keys of {@link QuotaNames}. */
const QUOTA_NAMES = knownOptions('createQuota names', {
  threshold: true,
  windowSeconds: true,
  tier: true,
  blockSeconds: true,
  extendBlock: true,
} satisfies Record<keyof QuotaNames, true>);

/** The shortest window (and sweep interval): one millisecond. */
export const MIN_SECONDS = 0.001;

/**
 * The longest window of any quota: 10^9 seconds (about 31.7 years). Longer windows are refused:
 * the strategies compare clock differences with the window, exactly while they stay below
 * 2^43 ms, and results must stay in their documented ranges.
 */
export const MAX_WINDOW_SECONDS = 1e9;

/**
 * The largest `threshold × windowMs` of the rate strategies (the sliding-window counter, the
 * token bucket and GCRA): 2^42, so that their state, counted in `1 / (1024 × windowMs)` tokens
 * or `1 / (1024 × threshold)` ms, stays an integer of at most 2^52 and every step is exact. About a
 * million requests per hour, or 4.3 million per second.
 */
export const MAX_THRESHOLD_TIMES_WINDOW_MS = 2 ** 42;

/**
 * Builds a validated, frozen {@link Quota}.
 *
 * @param options - `threshold` and `windowSeconds`, and optionally `tier`, `blockSeconds` and
 *   `extendBlock` ({@link QuotaOptions}).
 * @param bounds - the strategy's `maxThreshold` and `maxWindowSeconds`, if it has them.
 * @param names - how errors name the fields; default their own names.
 * @returns the quota, with `windowMs = windowSeconds × 1000` and `blockMs = blockSeconds × 1000`
 *   (integers; `blockMs` 0 when `blockSeconds` is absent) and `extendBlock` (default `false`).
 * @throws {RateWardenTypeError} naming the field when `options` is not an object or a field is
 *   not a number (`tier`: not a string; `extendBlock`: not a boolean); with code `ERR_RATEWARDEN_UNKNOWN_OPTION` when `options` or `names` has a key
 *   that is not one of its fields (own enumerable string keys are checked, even when their
 *   value is `undefined`), naming it and, when one is close, the field meant.
 * @throws {RateWardenRangeError} naming the field when `threshold` is not a positive safe
 *   integer or exceeds `maxThreshold` (or `threshold × windowMs` exceeds
 *   `maxThresholdTimesWindowMs`), or `windowSeconds` is not a whole number of milliseconds from
 *   0.001 up to 10^9 seconds and the strategy's `maxWindowSeconds`, or `blockSeconds` is neither
 *   0 nor a whole number of milliseconds from 0.001 to 10^9 seconds, or `tier` is the empty
 *   string.
 *
 * @example
 * ```ts
 * const quota = createQuota({ threshold: 300, windowSeconds: 60 });
 * // { threshold: 300, windowMs: 60000, windowSeconds: 60, tier: undefined, blockMs: 0, extendBlock: false }
 * ```
 */
export function createQuota(options: QuotaOptions, bounds?: QuotaBounds, names: QuotaNames = NAMES): Quota {
  checkObject('options', options, 'an object');
  checkKnownKeys(options, QUOTA_OPTIONS);
  if (names !== NAMES) {
    checkObject('names', names, 'an object');
    checkKnownKeys(names, QUOTA_NAMES);
  }
  return buildQuota(options, bounds, names);
}

/**
 * @internal {@link createQuota} without the check of `options`' keys, for an object that has
 * other keys besides (the limiter's options) or whose keys were checked already (a tier).
 */
export function buildQuota(options: QuotaOptions, bounds?: QuotaBounds, names: QuotaNames = NAMES): Quota {
  checkObject('options', options, 'an object');
  const threshold = checkPositiveInteger(names.threshold, options.threshold);
  const whose = `the ${bounds?.name ?? ''} strategy`;
  const maxThreshold = bounds?.maxThreshold;
  if (maxThreshold !== undefined && threshold > maxThreshold) {
    throw rangeError(names.threshold, `at most ${maxThreshold} with ${whose} (its maxThreshold)`, threshold);
  }
  const maxWindow = bounds?.maxWindowSeconds;
  const windowSeconds = checkSeconds(names.windowSeconds, options.windowSeconds, maxWindow === undefined || maxWindow > MAX_WINDOW_SECONDS ? MAX_WINDOW_SECONDS : maxWindow, maxWindow === undefined ? undefined : whose);
  // The window in whole milliseconds: 1.017 s is exactly 1017 ms (not 1016.9999999999999).
  const windowMs = Math.round(windowSeconds * 1000);
  if (windowMs / 1000 !== windowSeconds) {
    throw rangeError(names.windowSeconds, 'a whole number of milliseconds (a multiple of 0.001 seconds)', windowSeconds);
  }
  const maxProduct = bounds?.maxThresholdTimesWindowMs;
  if (maxProduct !== undefined && threshold * windowMs > maxProduct) {
    throw rangeError(
      names.threshold,
      `at most ${Math.floor(maxProduct / windowMs)} for a window of ${windowSeconds} seconds with ${whose} (threshold × window in ms at most its maxThresholdTimesWindowMs, ${maxProduct})`,
      threshold,
    );
  }
  const tier = optionalLabel(names.tier ?? 'tier', options.tier);
  const blockMs = options.blockSeconds === undefined ? 0 : checkBlockSeconds(names.blockSeconds ?? 'blockSeconds', options.blockSeconds, true);
  const extendBlock = optionalBoolean(names.extendBlock ?? 'extendBlock', options.extendBlock, false);
  return Object.freeze({ threshold, windowMs, windowSeconds, tier, blockMs, extendBlock });
}

/**
 * @internal Checks the length of a block in **seconds** (the quota's `blockSeconds`, the
 * `seconds` of `RateLimiter.block`): a whole number of milliseconds from 0.001 to 10^9 seconds
 * (as a window), or `0` (no block) when `zero`. The one rule for both.
 * @returns the length in whole milliseconds.
 * @throws {RateWardenTypeError} naming `name` when `value` is not a number.
 * @throws {RateWardenRangeError} naming `name` when it is out of range or not a whole number of
 *   milliseconds.
 */
export function checkBlockSeconds(name: string, value: unknown, zero: boolean): number {
  const expected = `${zero ? '0 or ' : ''}a whole number of milliseconds, in seconds, from ${MIN_SECONDS} to ${MAX_WINDOW_SECONDS}`;
  if (typeof value !== 'number') throw typeError(name, expected, value);
  if (zero && value === 0) return 0;
  if (!(value >= MIN_SECONDS && value <= MAX_WINDOW_SECONDS)) throw rangeError(name, expected, value);
  const ms = Math.round(value * 1000);
  if (ms / 1000 !== value) throw rangeError(name, expected, value);
  return ms;
}

/**
 * @internal Checks a duration in seconds (a window, a sweep interval, a header policy's window):
 * a finite number of at least 0.001 whose value in milliseconds is finite too, and at most
 * `max` (the bound of `whose`, for the message) when given.
 * @throws {RateWardenTypeError} when `value` is not a number.
 * @throws {RateWardenRangeError} when it is out of range.
 */
export function checkSeconds(name: string, value: unknown, max?: number, whose?: string): number {
  const expected =
    max === undefined
      ? `a finite number of seconds, at least ${MIN_SECONDS}`
      : `a finite number of seconds from ${MIN_SECONDS} to ${max}${whose === undefined ? '' : ` with ${whose}`}`;
  if (typeof value !== 'number') throw typeError(name, expected, value);
  if (!(value >= MIN_SECONDS) || !Number.isFinite(value * 1000) || (max !== undefined && value > max)) {
    throw rangeError(name, expected, value);
  }
  return value;
}

/**
 * @internal Whether two quotas are the same limit: the same object, or the same threshold and
 * window (a `limitFor` may build an equal quota for every call; that is no tier change).
 */
export function sameQuota(a: Quota, b: Quota): boolean {
  return a === b || (a.threshold === b.threshold && a.windowMs === b.windowMs);
}
