import { outcome } from '../result.js';
import { MAX_THRESHOLD_TIMES_WINDOW_MS } from '../quota.js';
import { TICKS_PER_MS, onGrid, retryAfterSeconds } from '../time.js';
import type { Quota } from '../quota.js';
import type { RateLimitResult } from '../result.js';
import type { RateLimitStrategy } from '../strategy.js';

/**
 * The per-key state of {@link SlidingWindowCounter}: where the key's grid of windows is anchored,
 * which window is current, and the counts of that window and of the one before it. The current
 * window starts at `anchor + index × windowMs`; it is kept as the pair, never summed, so that
 * the arithmetic stays exact at any clock reading.
 */
export class SlidingWindowCounterState {
  /** Start of the key's first window, in milliseconds on the limiter's clock (on the 2^-10 ms grid). */
  anchor = 0;
  /** The current window's number, counted from {@link anchor}: a non-negative integer. */
  index = 0;
  /**
   * The length in milliseconds of the windows {@link index} counts (the window of the last
   * recorded decision; a key whose tier changes its window continues from the current
   * window's start with the new length). 0 before the first.
   */
  windowMs = 0;
  /** Units allowed in the current window. */
  current = 0;
  /** Units allowed in the previous window (0 if it was not the one just before). */
  previous = 0;
}

/**
 * The **sliding-window counter**: two fixed-window counters, the previous one weighted by how much
 * of it the sliding window still covers.
 *
 * Windows are anchored at the key's first request, and again at the first request that comes
 * after the window following the last allowed request's window, when both counts would be 0
 * (anchored per key, not to the clock, so keys do not all roll over at once). At time `now`, `elapsed` into the current
 * window, the estimated count is `previous × (window − elapsed) / window + current`; a request of
 * cost `c` is allowed when `estimate + c <= threshold`. It assumes the previous window's requests
 * were spread evenly.
 *
 * **Burst:** `current` alone never exceeds `threshold`, but a span of length `window` can
 * straddle two windows: if the previous window's requests all came at its very end, up to
 * `2 × threshold` can be allowed within one `window` (the bound; in Cloudflare's measurement
 * on real traffic, 0.003 % of requests were wrongly allowed or limited). A steady stream above the
 * limit is held to `threshold` per window.
 *
 * **`retryAfter`** is exact for this estimate: at most `2 × window` (when the current window is
 * full, the wait runs into the next one until the carried-over weight has decayed enough);
 * `resetAfter` likewise at most `2 × window`.
 *
 * **Memory:** five numbers per key, whatever the threshold (113 to 119 bytes per key with its `Map`
 * entry, measured on Node 20 with `npm run bench:memory`): choose it over the sliding-window
 * log when thresholds are large (thousands per window) and an estimate is acceptable.
 * **Cost per decision:** O(1).
 *
 * **Arithmetic:** exact. Readings are taken on a grid of 2^-10 ms and only their differences
 * are used (see `src/time.ts`); the comparison is done in integers as
 * `previous × left + (current + c) × 1024 × window <= threshold × 1024 × window`, with `left`
 * the ticks left in the current window. That needs `threshold × windowMs <= 2^42`
 * ({@link SlidingWindowCounter.maxThresholdTimesWindowMs}), checked when the quota is built.
 *
 * **Clock going backwards:** a reading before the key's window start counts as that start.
 *
 * **Source:** Cloudflare, "How we built rate limiting capable of scaling to millions of domains"
 * (2017).
 *
 * In memory (a {@link RateLimitStrategy}): usable with both `allowRequest` and `allowRequestSync`.
 */
export class SlidingWindowCounter implements RateLimitStrategy<SlidingWindowCounterState> {
  /** `"sliding-window-counter"`. */
  readonly name = 'sliding-window-counter';
  /**
   * 2^42: the largest `threshold × windowMs` (the window in milliseconds), so that the
   * estimate's integer arithmetic stays exact (below 2^53 with the 1024 grid points per
   * millisecond).
   */
  readonly maxThresholdTimesWindowMs = MAX_THRESHOLD_TIMES_WINDOW_MS;

  /** An empty state: the first window starts at the key's first allowed request. */
  createState(): SlidingWindowCounterState {
    return new SlidingWindowCounterState();
  }

  /** Decides a request of `cost` units at `nowMs` and records it when allowed. */
  consume(state: SlidingWindowCounterState, nowMs: number, cost: number, quota: Quota): RateLimitResult {
    return decide(state, nowMs, cost, quota, true, false);
  }

  /** The result a request of `cost` units would get at `nowMs`; records nothing. */
  peek(state: SlidingWindowCounterState | undefined, nowMs: number, cost: number, quota: Quota): RateLimitResult {
    return decide(state ?? EMPTY, nowMs, cost, quota, false, false);
  }

  /** Says whether both counted windows are over (the estimate is 0 from now on), in the windows the key last recorded under. */
  sweep(state: SlidingWindowCounterState, nowMs: number): boolean {
    if (state.current === 0 && state.previous === 0) return true;
    const into = onGrid(nowMs) - state.anchor - state.index * state.windowMs;
    return into >= (state.current === 0 ? 1 : 2) * state.windowMs;
  }

  /** The decision just recorded: its window (on the key's grid) and the counts after it. */
  ticket(state: SlidingWindowCounterState, nowMs: number): SlidingWindowCounterTicket {
    return {
      anchor: state.anchor,
      windowMs: state.windowMs,
      index: state.index,
      // It anchored the grid (or came at the same instant as the request that did).
      anchored: state.index === 0 && onGrid(nowMs) <= state.anchor,
      stateIndex: state.index,
      current: state.current,
      previous: state.previous,
    };
  }

  /**
   * Subtracts `units` from the count of the decision's window: the current window's, or the
   * previous one's when the decision's window is now the previous one; `false` once it is older
   * (it no longer counts: exact). Also `false`, because a subtraction would not be the key
   * without the request (the grid of windows is anchored at requests): when the decision
   * anchored the grid and something else was recorded since; and when emptying the previous
   * window while the current one counts (its first request would then have anchored a new grid).
   */
  refund(state: SlidingWindowCounterState, ticket: unknown, units: number, nowMs: number): boolean {
    const t = ticket as SlidingWindowCounterTicket;
    if (state.anchor !== t.anchor || state.windowMs !== t.windowMs) return false;
    const windowMs = state.windowMs;
    const into = onGrid(nowMs) - state.anchor - state.index * windowMs;
    const unchanged = state.index === t.stateIndex && state.current === t.current && state.previous === t.previous;
    if (state.index === t.index) {
      if (into >= 2 * windowMs || state.current < units || (t.anchored && !unchanged)) return false;
      if (state.current === units && state.index > 0) {
        // The window is left empty: without its units the grid would not have rolled into it (a
        // request two windows on would anchor a new grid): roll back. The count of the window
        // before the previous one is not needed any more (`now` is past it).
        state.index--;
        state.current = state.previous;
        state.previous = 0;
      } else state.current -= units;
    } else if (state.index === t.index + 1) {
      if (into >= windowMs || state.previous < units) return false;
      if (t.anchored && !(t.stateIndex === t.index && state.previous === t.current && state.current === 0)) return false;
      if (state.previous === units && state.current > 0) return false;
      state.previous -= units;
    } else {
      return false;
    }
    t.stateIndex = state.index;
    t.current = state.current;
    t.previous = state.previous;
    return true;
  }

  /** Adds `points` to the current window's count (rolling windows as a decision does), even past the threshold. */
  penalty(state: SlidingWindowCounterState, nowMs: number, points: number, quota: Quota): void {
    decide(state, nowMs, points, quota, true, true);
  }
}

/** A reservation's ticket on a {@link SlidingWindowCounterState}. */
export interface SlidingWindowCounterTicket {
  readonly anchor: number;
  readonly windowMs: number;
  /** The decision's window number. */
  readonly index: number;
  /** Whether the decision anchored the grid. */
  readonly anchored: boolean;
  /** The state's window number and counts right after the decision (or its last refund). */
  stateIndex: number;
  current: number;
  previous: number;
}

const EMPTY = new SlidingWindowCounterState();

function decide(
  state: SlidingWindowCounterState,
  nowMs: number,
  cost: number,
  quota: Quota,
  record: boolean,
  force: boolean,
): RateLimitResult {
  const threshold = quota.threshold;
  const windowMs = quota.windowMs;
  const perWindow = TICKS_PER_MS * windowMs; // ticks per window
  let anchor = state.anchor;
  let index = state.index;
  let current = state.current;
  let previous = state.previous;
  let now = onGrid(nowMs);
  let reading = nowMs;
  // Time into the current window (a difference, exact on the grid).
  let into = 0;
  if (current === 0 && previous === 0) {
    // Nothing counted: a new grid of windows starts now (written only if this request is allowed).
    anchor = now;
    index = 0;
  } else {
    into = now - anchor - index * state.windowMs;
    if (state.windowMs !== windowMs) {
      // A tier changed the window: the current window keeps its start and takes the new
      // length (its start is computed here, once per change).
      anchor += index * state.windowMs;
      index = 0;
    }
    if (into < 0) {
      // The clock went back before the window's start: the start it is.
      reading = now = anchor + index * windowMs;
      into = 0;
    } else if (into >= windowMs) {
      current = 0;
      if (into < 2 * windowMs) {
        // Roll forward: the current window becomes the previous one.
        previous = state.current;
        index++;
        into -= windowMs;
      } else {
        // Both windows are over: start afresh now, so that a key swept by cleanUp() decides
        // exactly as if it had been kept.
        previous = 0;
        anchor = now;
        index = 0;
        into = 0;
      }
    }
  }
  const left = perWindow - into * TICKS_PER_MS; // ticks left in the window, in (0, perWindow]
  const limit = threshold * perWindow;
  // The estimate, in ticks × units: previous × left + current × perWindow (at most 2^53).
  const used = previous * left + current * perWindow;
  const free = limit - used;
  // (A cost above the threshold needs more than `limit` and is refused here too.)
  // (`force`: a penalty, recorded whatever the estimate.)
  if (cost * perWindow <= free || force) {
    if (record) {
      state.anchor = anchor;
      state.index = index;
      state.windowMs = windowMs;
      state.current = current + cost;
      state.previous = previous;
    }
    const counted = record ? current + cost : current;
    const after = record ? free - cost * perWindow : free;
    return outcome(true, remainingOf(after, perWindow), 0, threshold, resetOf(counted, previous, left, perWindow));
  }
  const remaining = remainingOf(free, perWindow);
  const resetAfter = resetOf(current, previous, left, perWindow);
  if (cost > threshold) return outcome(false, remaining, Infinity, threshold, resetAfter);
  let wait: number; // ticks
  if (current + cost <= threshold) {
    // Within this window, once previous × left' <= (threshold − current − cost) × perWindow.
    wait = left - Math.floor(((threshold - current - cost) * perWindow) / previous);
  } else {
    // In the next window, where previous' = current and current' = 0, once
    // current × left' <= (threshold − cost) × perWindow (so left' < perWindow: here
    // current > threshold − cost).
    wait = left + perWindow - Math.floor(((threshold - cost) * perWindow) / current);
  }
  const retryAfter = retryAfterSeconds(reading, now, wait / TICKS_PER_MS, 2 * quota.windowSeconds);
  return outcome(false, remaining, retryAfter, threshold, resetAfter);
}

/**
 * Whole units left: floor(free / perWindow), at least 0 (`free` is at most `threshold ×
 * perWindow`). The quotients in this file are exact: for integers below 2^53 the rounded
 * quotient never reaches the next integer (that would take a dividend of 2^53 or more), so
 * `Math.floor` of it is the integer quotient.
 */
function remainingOf(free: number, perWindow: number): number {
  return free <= 0 ? 0 : Math.floor(free / perWindow);
}

/** Milliseconds until the estimate is 0: the end of the next window if `current` counts. */
function resetOf(current: number, previous: number, left: number, perWindow: number): number {
  if (current > 0) return (left + perWindow) / TICKS_PER_MS;
  return previous > 0 ? left / TICKS_PER_MS : 0;
}
