import { outcome } from '../result.js';
import { MAX_THRESHOLD_TIMES_WINDOW_MS, sameQuota } from '../quota.js';
import { TICKS_PER_MS, onGrid, retryAfterSeconds, ticksToRepay } from '../time.js';
import type { Quota } from '../quota.js';
import type { RateLimitResult } from '../result.js';
import type { RateLimitStrategy } from '../strategy.js';

/**
 * The per-key state of {@link TokenBucket}: the tokens in the bucket at the last refill, and when
 * that was. Tokens are counted in units of `1 / (1024 × windowMs)` token, so that a refill of
 * `threshold` units per tick of the 2^-10 ms grid is exact integer arithmetic.
 */
export class TokenBucketState {
  /**
   * Tokens × 1024 × `quota.windowMs` at time {@link last}: an integer in `[0, 1024 × threshold × windowMs]`,
   * or down to minus that after a penalty (a debt).
   */
  level: number;
  /** When {@link level} was computed, in milliseconds on the limiter's clock (on the 2^-10 ms grid). */
  last: number;
  /** The quota {@link level} was computed under (a key whose tier changes is converted). */
  quota: Quota;

  /**
   * @param level - tokens × 1024 × `quota.windowMs`.
   * @param last - when `level` was computed, in milliseconds (`-Infinity` for a new key).
   * @param quota - the quota `level` was computed under.
   */
  constructor(level: number, last: number, quota: Quota) {
    this.level = level;
    this.last = last;
    this.quota = quota;
  }
}

/**
 * The **token bucket**: per key, a bucket of `threshold` tokens, refilled continuously at
 * `threshold` tokens per `window`; a request of cost `c` takes `c` tokens, or is rejected if there
 * are fewer.
 *
 * A new key starts with a full bucket. `remaining` is the whole tokens left;
 * `retryAfter = (c − tokens) × window / threshold`, at most `window`; `resetAfter` is the time
 * until the bucket is full again, at most `window`.
 *
 * **Burst:** a full bucket lets `threshold` requests through at once, then one per
 * `window / threshold`; so up to `2 × threshold` within one `window` (the bucket's content plus a
 * window of refill) — with 100 per minute, 100 at once and then one every 0.6 s. The long-run rate
 * is `threshold` per `window`. Choose it to allow bursts of idle clients while holding a steady
 * rate; it is the algorithm of most API gateways.
 *
 * **Penalties** (`RateLimiter.penalty`) may leave the bucket in debt, down to `−threshold`
 * tokens: `retryAfter` and `resetAfter` may then exceed the window (up to two).
 *
 * **Memory:** three numbers per key, whatever the threshold: 99 to 117 bytes per key with its `Map`
 * entry, measured on Node 20 (`npm run bench:memory`). **Cost per decision:** O(1).
 *
 * **Arithmetic:** exact. Readings are taken on a grid of 2^-10 ms and only their differences
 * are used (see `src/time.ts`); tokens are counted in `1 / (1024 × windowMs)` token, so
 * refills (`threshold` per tick) and takes (`c × 1024 × windowMs`) are integers below 2^53, for
 * epoch-time and fractional readings alike. That needs `threshold × windowMs <= 2^42`
 * ({@link TokenBucket.maxThresholdTimesWindowMs}), checked when the quota is built.
 *
 * **Clock going backwards:** a reading before the last refill counts as that refill's time.
 *
 * In memory (a {@link RateLimitStrategy}): usable with both `allowRequest` and `allowRequestSync`. The same behaviour as
 * {@link GCRA}.
 */
export class TokenBucket implements RateLimitStrategy<TokenBucketState> {
  /** `"token-bucket"`. */
  readonly name = 'token-bucket';
  /**
   * 2^42: the largest `threshold × windowMs` (the window in milliseconds), so that the state's
   * integer arithmetic stays exact (below 2^53 with the 1024 grid points per millisecond).
   */
  readonly maxThresholdTimesWindowMs = MAX_THRESHOLD_TIMES_WINDOW_MS;

  /** A full bucket (the refill time is set by the first decision). */
  createState(quota: Quota): TokenBucketState {
    return new TokenBucketState(fullOf(quota), -Infinity, quota);
  }

  /** Decides a request of `cost` units at `nowMs` and records it when allowed. */
  consume(state: TokenBucketState, nowMs: number, cost: number, quota: Quota): RateLimitResult {
    return decide(state, nowMs, cost, quota, true);
  }

  /** The result a request of `cost` units would get at `nowMs`; takes nothing. */
  peek(state: TokenBucketState | undefined, nowMs: number, cost: number, quota: Quota): RateLimitResult {
    return decide(state ?? this.createState(quota), nowMs, cost, quota, false);
  }

  /** Says whether the bucket is full at `nowMs` (the key then decides as a new one). */
  sweep(state: TokenBucketState, nowMs: number): boolean {
    return levelAt(state, onGrid(nowMs)) === fullOf(state.quota);
  }

  /** The decision just recorded: the state right after it. */
  ticket(state: TokenBucketState): TokenBucketTicket {
    return { level: state.level, last: state.last, quota: state.quota };
  }

  /**
   * Puts `units` tokens back (`level += units`) when nothing else was recorded on the key since
   * the decision (or its own last refund): the bucket is then exactly as if they had not been
   * taken. Otherwise `false`: the state keeps no history, and putting tokens back into a bucket
   * that has refilled since could be more permissive than never having taken them.
   */
  refund(state: TokenBucketState, ticket: unknown, units: number): boolean {
    const t = ticket as TokenBucketTicket;
    if (state.level !== t.level || state.last !== t.last || state.quota !== t.quota) return false;
    state.level += units * TICKS_PER_MS * state.quota.windowMs;
    t.level = state.level;
    return true;
  }

  /**
   * Takes `points` tokens whatever the level: the bucket may go into debt (a negative level),
   * down to one bucket's worth (`−threshold` tokens), so that refilling from a debt takes up to
   * two windows and the arithmetic stays exact.
   */
  penalty(state: TokenBucketState, nowMs: number, points: number, quota: Quota): void {
    let now = onGrid(nowMs);
    if (now < state.last) now = state.last;
    const full = fullOf(quota);
    let level = levelAt(state, now);
    if (!sameQuota(state.quota, quota)) level = Math.floor((level / fullOf(state.quota)) * full); // as `decide`
    level -= points * TICKS_PER_MS * quota.windowMs;
    state.level = level < -full ? -full : level;
    state.last = now;
    state.quota = quota;
  }
}

/** A reservation's ticket on a {@link TokenBucketState}: the state right after the decision. */
export interface TokenBucketTicket {
  level: number;
  readonly last: number;
  readonly quota: Quota;
}

/** A full bucket under `quota`, in units of `1 / (1024 × windowMs)` token: at most 2^52. */
function fullOf(quota: Quota): number {
  return quota.threshold * TICKS_PER_MS * quota.windowMs;
}

/**
 * The bucket's level at `now` (on the grid) under the state's own quota: refilled by
 * `threshold` units per tick since the last refill, up to full.
 */
function levelAt(state: TokenBucketState, now: number): number {
  const old = state.quota;
  const full = fullOf(old);
  const elapsed = now - state.last; // exact on the grid; Infinity for a new key
  // A whole window refills any bucket not in debt (a penalty's: a negative level).
  if (!(elapsed < old.windowMs) && (state.level >= 0 || elapsed === Infinity)) return full;
  if (elapsed <= 0) return state.level;
  const level = state.level + elapsed * TICKS_PER_MS * old.threshold; // < 2^53: exact
  return level < full ? level : full;
}

function decide(state: TokenBucketState, nowMs: number, cost: number, quota: Quota, record: boolean): RateLimitResult {
  const threshold = quota.threshold;
  const perToken = TICKS_PER_MS * quota.windowMs; // units per token
  const full = threshold * perToken;
  let now = onGrid(nowMs);
  let reading = nowMs;
  if (now < state.last) reading = now = state.last;
  let level = levelAt(state, now);
  if (!sameQuota(state.quota, quota)) {
    // A tier change: the bucket keeps its fill fraction, computed in floating point and rounded
    // down (so within one unit, never in the caller's favour); the fraction is at most 1, so the
    // level at most `full`.
    level = Math.floor((level / fullOf(state.quota)) * full);
    if (record) {
      // The new quota applies from now on, whatever this decision (so that a refusal's
      // retryAfter, computed under it, holds); not from a peek.
      state.level = level;
      state.last = now;
      state.quota = quota;
    }
  }
  const take = cost * perToken;
  if (take <= level) {
    const after = record ? level - take : level;
    if (record) {
      state.level = after;
      state.last = now;
      state.quota = quota;
    }
    return outcome(true, Math.floor(after / perToken), 0, threshold, (full - after) / threshold / TICKS_PER_MS);
  }
  const remaining = level > 0 ? Math.floor(level / perToken) : 0;
  const resetAfter = (full - level) / threshold / TICKS_PER_MS;
  if (cost > threshold) return outcome(false, remaining, Infinity, threshold, resetAfter);
  // Allowed once `threshold` units per tick have made up the shortfall.
  const waitMs = ticksToRepay(take - level, threshold) / TICKS_PER_MS;
  return outcome(false, remaining, retryAfterSeconds(reading, now, waitMs, quota.windowSeconds), threshold, resetAfter);
}
