import { result } from '../result.js';
import type { Quota } from '../quota.js';
import type { RateLimitResult } from '../result.js';
import type { RateLimitStrategy } from '../strategy.js';

/**
 * The per-key state of {@link GCRA}: the theoretical arrival time (TAT), stored scaled by the
 * threshold (`TAT × threshold`, in units of `1 / threshold` ms) so that each emission interval
 * `window / threshold` adds exactly `windowMs` units.
 */
export class GCRAState {
  /** TAT × `quota.threshold`. */
  tat: number;
  /** The quota {@link tat} was computed under (a key whose tier changes is converted). */
  quota: Quota;

  /**
   * @param tat - the theoretical arrival time × `quota.threshold` (`-Infinity` for a new key).
   * @param quota - the quota `tat` was computed under.
   */
  constructor(tat: number, quota: Quota) {
    this.tat = tat;
    this.quota = quota;
  }
}

/**
 * **GCRA**, the generic cell rate algorithm: per key, one number, the theoretical arrival time
 * (TAT) of the next request if requests came exactly at the allowed rate.
 *
 * With emission interval `T = window / threshold` and burst tolerance `τ = window − T`: a
 * request of cost `c` at `now` is allowed when `max(TAT, now) + c × T − now <= window`, and then
 * `TAT = max(TAT, now) + c × T`. Rejected, `retryAfter = max(TAT, now) + c × T − window − now`.
 * `remaining` is how many more units would fit now; `resetAfter = TAT − now`, when the key is
 * back to a full burst. Both are at most `window`.
 *
 * **Burst:** the same as a token bucket of `threshold` tokens refilled at `threshold` per
 * `window` — `threshold` at once after idling, then one per `window / threshold`; up to
 * `2 × threshold` within one `window`. It smooths traffic to an even rate, with one number of
 * state instead of two.
 *
 * **Memory:** one number per key (plus a reference to the quota it was computed under): 93 bytes per key with its
 * `Map` entry, measured on Node 20 (`npm run bench:memory`), whatever the threshold.
 * **Cost per decision:** O(1).
 *
 * **Arithmetic:** times are scaled by `threshold`, so that every step is a whole `windowMs` and
 * no rounding drift accumulates: exact for integer-millisecond clocks while
 * `now × threshold < 2^53` and `threshold × windowMs < 2^52`.
 *
 * **Clock going backwards:** `now` is taken as at least `TAT − window`, the earliest reading
 * consistent with the state, so `retryAfter` never exceeds `window`.
 *
 * **Source:** the ATM Forum Traffic Management Specification 4.0 (1996), the virtual scheduling
 * form of the GCRA; the algorithm of Rust's `governor` crate and of `redis-cell`.
 *
 * In memory (a {@link RateLimitStrategy}): usable with both `allowRequest` and `allowRequestSync`.
 */
export class GCRA implements RateLimitStrategy<GCRAState> {
  /** `"gcra"`. */
  readonly name = 'gcra';

  /** A TAT in the past: a full burst is available. */
  createState(quota: Quota): GCRAState {
    return new GCRAState(-Infinity, quota);
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
    return state.tat / state.quota.threshold <= nowMs;
  }
}

function decide(state: GCRAState, nowMs: number, cost: number, quota: Quota, record: boolean): RateLimitResult {
  const threshold = quota.threshold;
  const windowMs = quota.windowMs;
  const span = threshold * windowMs; // the window, scaled
  const now = nowMs * threshold;
  const tat = tatUnder(state, nowMs, quota, span);
  if (state.quota !== quota) {
    // The key's quota changed: the new one applies from now on, whatever this decision.
    state.tat = tat;
    state.quota = quota;
  }
  // The debt: how far the TAT is ahead of now (0 when it has passed; `-Infinity` for a new key).
  // Working on the debt rather than on `tat + c × T − now` keeps a new key's first request exact
  // with a fractional clock. A debt beyond the window means the clock went back: `now` is then
  // taken as `tat − span`, the earliest reading consistent with the state.
  let debt = tat - now;
  let from = now;
  if (debt > span) {
    debt = span;
    from = tat - span;
  } else if (!(debt > 0)) {
    debt = 0;
  }
  const needed = debt + cost * windowMs;
  if (needed <= span) {
    if (record) {
      state.tat = from + needed;
      state.quota = quota;
    }
    const used = record ? needed : debt;
    return result(true, Math.floor((span - used) / windowMs), 0, threshold, used / threshold, quota.windowSeconds);
  }
  const remaining = Math.floor((span - debt) / windowMs);
  const resetAfter = debt / threshold;
  if (cost > threshold) return result(false, remaining, Infinity, threshold, resetAfter, quota.windowSeconds);
  return result(false, remaining, (needed - span) / threshold, threshold, resetAfter, quota.windowSeconds);
}

/**
 * The state's TAT scaled under `quota`. A key whose quota changed (a tier change) keeps the
 * fraction of its burst that is used up: its debt (how far the TAT is ahead of now) as a share of
 * the old window becomes the same share of the new one.
 */
function tatUnder(state: GCRAState, nowMs: number, quota: Quota, span: number): number {
  const old = state.quota;
  if (old.threshold === quota.threshold && old.windowMs === quota.windowMs) return state.tat;
  if (state.tat === -Infinity) return -Infinity;
  const oldSpan = old.threshold * old.windowMs;
  const oldDebt = state.tat - nowMs * old.threshold;
  const share = oldDebt <= 0 ? 0 : oldDebt >= oldSpan ? 1 : oldDebt / oldSpan;
  return nowMs * quota.threshold + share * span;
}
