import { result } from '../result.js';
import type { Limit, RateLimitResult, RateLimitStrategy } from '../strategy.js';

/**
 * The per-key state of {@link GCRA}: the theoretical arrival time (TAT), stored scaled by the
 * threshold (`TAT × threshold`, in units of `1 / threshold` ms) so that each emission interval
 * `window / threshold` adds exactly `windowMs` units.
 */
export class GCRAState {
  /** TAT × `limit.threshold`. */
  tat: number;
  /** The limit {@link tat} was computed under (a key whose tier changes is converted). */
  limit: Limit;

  /**
   * @param tat - the theoretical arrival time × `limit.threshold` (`-Infinity` for a new key).
   * @param limit - the limit `tat` was computed under.
   */
  constructor(tat: number, limit: Limit) {
    this.tat = tat;
    this.limit = limit;
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
 * **Memory:** one number per key (plus a reference to the limit it was computed under): 93 bytes per key with its
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
 * Synchronous: usable with both `allowRequest` and `allowRequestSync`.
 */
export class GCRA implements RateLimitStrategy<GCRAState> {
  /** `"gcra"`. */
  readonly name = 'gcra';
  /** Always `true`. */
  readonly synchronous = true;

  /** A TAT in the past: a full burst is available. */
  createState(limit: Limit): GCRAState {
    return new GCRAState(-Infinity, limit);
  }

  /** Decides a request of `cost` units at `nowMs` and records it when allowed. */
  consume(_key: string, state: GCRAState, nowMs: number, cost: number, limit: Limit): RateLimitResult {
    return decide(state, nowMs, cost, limit, true);
  }

  /** The result a request of `cost` units would get at `nowMs`; records nothing. */
  peek(_key: string, state: GCRAState | undefined, nowMs: number, cost: number, limit: Limit): RateLimitResult {
    return decide(state ?? this.createState(limit), nowMs, cost, limit, false);
  }

  /** Says whether the TAT has passed (a full burst is available: the key decides as new). */
  sweep(state: GCRAState, nowMs: number): boolean {
    return state.tat / state.limit.threshold <= nowMs;
  }
}

function decide(state: GCRAState, nowMs: number, cost: number, limit: Limit, record: boolean): RateLimitResult {
  const threshold = limit.threshold;
  const windowMs = limit.windowMs;
  const span = threshold * windowMs; // the window, scaled
  const now = nowMs * threshold;
  const tat = tatUnder(state, nowMs, limit, span);
  if (state.limit !== limit) {
    // The key's limit changed: the new one applies from now on, whatever this decision.
    state.tat = tat;
    state.limit = limit;
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
      state.limit = limit;
    }
    const used = record ? needed : debt;
    return result(true, Math.floor((span - used) / windowMs), 0, threshold, used / threshold, limit.windowSeconds);
  }
  const remaining = Math.floor((span - debt) / windowMs);
  const resetAfter = debt / threshold;
  if (cost > threshold) return result(false, remaining, Infinity, threshold, resetAfter, limit.windowSeconds);
  return result(false, remaining, (needed - span) / threshold, threshold, resetAfter, limit.windowSeconds);
}

/**
 * The state's TAT scaled under `limit`. A key whose limit changed (a tier change) keeps the
 * fraction of its burst that is used up: its debt (how far the TAT is ahead of now) as a share of
 * the old window becomes the same share of the new one.
 */
function tatUnder(state: GCRAState, nowMs: number, limit: Limit, span: number): number {
  const old = state.limit;
  if (old.threshold === limit.threshold && old.windowMs === limit.windowMs) return state.tat;
  if (state.tat === -Infinity) return -Infinity;
  const oldSpan = old.threshold * old.windowMs;
  const oldDebt = state.tat - nowMs * old.threshold;
  const share = oldDebt <= 0 ? 0 : oldDebt >= oldSpan ? 1 : oldDebt / oldSpan;
  return nowMs * limit.threshold + share * span;
}
