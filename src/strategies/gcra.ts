import { outcome } from '../result.js';
import { MAX_THRESHOLD_TIMES_WINDOW_MS, sameQuota } from '../quota.js';
import { TICKS_PER_MS, onGrid, retryAfterSeconds, ticksToRepay } from '../time.js';
import type { Quota } from '../quota.js';
import type { RateLimitResult } from '../result.js';
import type { RateLimitStrategy } from '../strategy.js';

/**
 * The per-key state of {@link GCRA}: the theoretical arrival time (TAT), kept as how far it was
 * ahead of the time {@link at} of the key's last decision — its **debt**, in units of
 * `1 / (1024 × threshold)` ms (a tick of the 2^-10 ms grid divided by the threshold), so that
 * each request adds exactly `cost × 1024 × windowMs` units and each tick repays exactly
 * `threshold`: integer arithmetic, whatever the size of the clock readings.
 */
export class GCRAState {
  /** The time (ms on the 2^-10 ms grid) the debt was computed at; `-Infinity` for a new key. */
  at: number;
  /**
   * TAT − {@link at}, in units of `1 / (1024 × quota.threshold)` ms: an integer in `[0, 1024 × threshold × windowMs]`,
   * or up to twice that after a penalty.
   */
  debt: number;
  /** The quota {@link debt} was computed under (a key whose tier changes is converted). */
  quota: Quota;

  /**
   * @param at - when `debt` was computed, in ms on the grid (`-Infinity` for a new key).
   * @param debt - TAT − `at` in units of `1 / (1024 × quota.threshold)` ms.
   * @param quota - the quota `debt` was computed under.
   */
  constructor(at: number, debt: number, quota: Quota) {
    this.at = at;
    this.debt = debt;
    this.quota = quota;
  }
}

/**
 * **GCRA**, the generic cell rate algorithm: per key, the theoretical arrival time (TAT) of the
 * next request if requests came exactly at the allowed rate.
 *
 * With emission interval `T = window / threshold` and burst tolerance `τ = window − T`: a
 * request of cost `c` at `now` is allowed when `max(TAT, now) + c × T − now <= window`, and then
 * `TAT = max(TAT, now) + c × T`. Rejected, `retryAfter = max(TAT, now) + c × T − window − now`.
 * `remaining` is how many more units would fit now; `resetAfter = TAT − now`, when the key is
 * back to a full burst. Both are at most `window`.
 *
 * **Burst:** the same as a token bucket of `threshold` tokens refilled at `threshold` per
 * `window` — `threshold` at once after idling, then one per `window / threshold`; up to
 * `2 × threshold` within one `window`. It smooths traffic to an even rate.
 *
 * **Penalties** (`RateLimiter.penalty`) may move the TAT up to two windows ahead: `retryAfter`
 * and `resetAfter` may then exceed the window.
 *
 * **Memory:** two numbers per key, the TAT kept as the last decision's time and its lead over it
 * (plus a reference to the quota it was computed under): 101 to 116 bytes per key with its `Map`
 * entry, measured on Node 20 (`npm run bench:memory`), whatever the threshold. (A TAT in one
 * number, scaled by the threshold, is what lost exactness at epoch-scale clocks.)
 * **Cost per decision:** O(1).
 *
 * **Arithmetic:** exact. Readings are taken on a grid of 2^-10 ms and only their differences
 * are used (see `src/time.ts`); the state is the TAT's lead over the last decision, in
 * units of `1 / (1024 × threshold)` ms, so every step is integer arithmetic below 2^53 — for
 * epoch-time and fractional readings alike. That needs `threshold × windowMs <= 2^42`
 * ({@link GCRA.maxThresholdTimesWindowMs}: a million per hour, 4.3 million per second), checked
 * when the quota is built.
 *
 * **Clock going backwards:** a reading before the key's last decision counts as that decision's
 * time, so `retryAfter` never exceeds `window`.
 *
 * **Source:** the ATM Forum Traffic Management Specification 4.0 (1996), the virtual scheduling
 * form of the GCRA; the algorithm of Rust's `governor` crate and of `redis-cell`.
 *
 * In memory (a {@link RateLimitStrategy}): usable with both `allowRequest` and `allowRequestSync`.
 */
export class GCRA implements RateLimitStrategy<GCRAState> {
  /** `"gcra"`. */
  readonly name = 'gcra';
  /**
   * 2^42: the largest `threshold × windowMs` (the window in milliseconds), so that the state's
   * integer arithmetic stays exact (below 2^53 with the 1024 grid points per millisecond).
   */
  readonly maxThresholdTimesWindowMs = MAX_THRESHOLD_TIMES_WINDOW_MS;

  /** No debt: a full burst is available. */
  createState(quota: Quota): GCRAState {
    return new GCRAState(-Infinity, 0, quota);
  }

  /** Decides a request of `cost` units at `nowMs` and records it when allowed. */
  consume(state: GCRAState, nowMs: number, cost: number, quota: Quota): RateLimitResult {
    return decide(state, nowMs, cost, quota, true);
  }

  /** The result a request of `cost` units would get at `nowMs`; records nothing. */
  peek(state: GCRAState | undefined, nowMs: number, cost: number, quota: Quota): RateLimitResult {
    return decide(state ?? this.createState(quota), nowMs, cost, quota, false);
  }

  /** Says whether the TAT has passed (a full burst is available: the key decides as new). */
  sweep(state: GCRAState, nowMs: number): boolean {
    return debtAt(state, onGrid(nowMs)) === 0;
  }

  /** The decision just recorded: the state right after it. */
  ticket(state: GCRAState): GCRATicket {
    return { at: state.at, debt: state.debt, quota: state.quota };
  }

  /**
   * Moves the TAT back by `units × T` when nothing else was recorded on the key since the
   * decision (or its own last refund): the key is then exactly as if those units had not been
   * taken. Otherwise `false`: the state keeps no history, and any give-back could be more
   * permissive than never having made the request.
   */
  refund(state: GCRAState, ticket: unknown, units: number): boolean {
    const t = ticket as GCRATicket;
    if (state.at !== t.at || state.debt !== t.debt || state.quota !== t.quota) return false;
    state.debt -= units * TICKS_PER_MS * state.quota.windowMs;
    t.debt = state.debt;
    return true;
  }

  /**
   * Records `points` units whatever the TAT: `TAT = max(TAT, now) + points × T`, up to two
   * windows ahead of `now` (so that the arithmetic stays exact).
   */
  penalty(state: GCRAState, nowMs: number, points: number, quota: Quota): void {
    let now = onGrid(nowMs);
    if (now < state.at) now = state.at;
    const perRequest = TICKS_PER_MS * quota.windowMs;
    const span = quota.threshold * perRequest;
    let debt = debtAt(state, now);
    if (!sameQuota(state.quota, quota)) {
      debt = Math.ceil((debt / (state.quota.threshold * TICKS_PER_MS * state.quota.windowMs)) * span); // as `decide`
    }
    debt += points * perRequest;
    state.at = now;
    state.debt = debt > 2 * span ? 2 * span : debt;
    state.quota = quota;
  }
}

/** A reservation's ticket on a {@link GCRAState}: the state right after the decision. */
export interface GCRATicket {
  readonly at: number;
  debt: number;
  readonly quota: Quota;
}

function decide(state: GCRAState, nowMs: number, cost: number, quota: Quota, record: boolean): RateLimitResult {
  const threshold = quota.threshold;
  const perRequest = TICKS_PER_MS * quota.windowMs; // units per request: T = window / threshold
  const span = threshold * perRequest; // the window, in units: at most 2^52
  let now = onGrid(nowMs);
  let reading = nowMs;
  if (now < state.at) reading = now = state.at;
  let debt = debtAt(state, now);
  if (!sameQuota(state.quota, quota)) {
    // A tier change: the debt keeps its share of the window, computed in floating point and
    // rounded up (so within one unit, never in the caller's favour; the Redis script does the
    // same); the share is at most 1, so the debt at most `span`.
    debt = Math.ceil((debt / (state.quota.threshold * TICKS_PER_MS * state.quota.windowMs)) * span);
    if (record) {
      // The new quota applies from now on, whatever this decision (so that a refusal's
      // retryAfter, computed under it, holds); not from a peek.
      state.at = now;
      state.debt = debt;
      state.quota = quota;
    }
  }
  // Exact while `cost <= threshold` (at most 2 × 2^52); a larger cost exceeds `span` whatever
  // the rounding, and is refused.
  const needed = debt + cost * perRequest;
  if (needed <= span) {
    if (record) {
      state.at = now;
      state.debt = needed;
      state.quota = quota;
    }
    const used = record ? needed : debt;
    return outcome(true, Math.floor((span - used) / perRequest), 0, threshold, used / threshold / TICKS_PER_MS);
  }
  const remaining = debt < span ? Math.floor((span - debt) / perRequest) : 0;
  const resetAfter = debt / threshold / TICKS_PER_MS;
  if (cost > threshold) return outcome(false, remaining, Infinity, threshold, resetAfter);
  // Allowed once `debt + cost × T − elapsed` fits in the window: the excess, repaid at
  // `threshold` units per tick.
  const waitMs = ticksToRepay(needed - span, threshold) / TICKS_PER_MS;
  return outcome(false, remaining, retryAfterSeconds(reading, now, waitMs, quota.windowSeconds), threshold, resetAfter);
}

/**
 * The debt at `now` (on the grid) under the state's own quota: the debt at `state.at`, less
 * `threshold` units per tick since, and never below 0. A time before `state.at` (a direct
 * `sweep` with a clock that went back) counts as `state.at`.
 */
function debtAt(state: GCRAState, now: number): number {
  const old = state.quota;
  const elapsed = now - state.at; // exact on the grid; Infinity for a new key
  // A whole window repays any debt of at most a window (a penalty's may be longer).
  if (!(elapsed < old.windowMs) && (state.debt <= old.threshold * TICKS_PER_MS * old.windowMs || elapsed === Infinity)) return 0;
  if (elapsed <= 0) return state.debt;
  const debt = state.debt - elapsed * TICKS_PER_MS * old.threshold; // < 2^52: exact
  return debt > 0 ? debt : 0;
}
