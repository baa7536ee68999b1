import { result } from '../result.js';
import type { Quota } from '../quota.js';
import type { RateLimitResult } from '../result.js';
import type { RateLimitStrategy } from '../strategy.js';

/**
 * The per-key state of {@link SlidingWindowCounter}: the start of the key's current fixed window
 * and the counts of that window and of the one before it.
 */
export class SlidingWindowCounterState {
  /** Start of the current window, in milliseconds on the limiter's clock. */
  start = 0;
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
 * **Memory:** three numbers per key, whatever the threshold (101 bytes per key with its `Map`
 * entry, measured on Node 20 with `npm run bench:memory`): choose it over the sliding-window
 * log when thresholds are large (thousands per window) and an estimate is acceptable.
 * **Cost per decision:** O(1).
 *
 * **Arithmetic:** the comparison is done as `previous × (window − elapsed) + (current + c) ×
 * window <= threshold × window`, exact for integer millisecond times while
 * `threshold × windowMs < 2^52`.
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

  /** An empty state: the first window starts at the key's first allowed request. */
  createState(): SlidingWindowCounterState {
    return new SlidingWindowCounterState();
  }

  /** Decides a request of `cost` units at `nowMs` and records it when allowed. */
  consume(state: SlidingWindowCounterState, nowMs: number, cost: number, quota: Quota): RateLimitResult {
    return decide(state, nowMs, cost, quota, true);
  }

  /** The result a request of `cost` units would get at `nowMs`; records nothing. */
  peek(state: SlidingWindowCounterState | undefined, nowMs: number, cost: number, quota: Quota): RateLimitResult {
    return decide(state ?? EMPTY, nowMs, cost, quota, false);
  }

  /** Says whether both counted windows are over (the estimate is 0 from now on). */
  sweep(state: SlidingWindowCounterState, nowMs: number, quota: Quota): boolean {
    if (state.current === 0 && state.previous === 0) return true;
    const ends = state.start + (state.current === 0 ? 1 : 2) * quota.windowMs;
    return ends <= nowMs;
  }
}

const EMPTY = new SlidingWindowCounterState();

function decide(
  state: SlidingWindowCounterState,
  nowMs: number,
  cost: number,
  quota: Quota,
  record: boolean,
): RateLimitResult {
  const threshold = quota.threshold;
  const windowMs = quota.windowMs;
  let start = state.start;
  let current = state.current;
  let previous = state.previous;
  let now = nowMs;
  if (current === 0 && previous === 0) {
    // Nothing counted: a new window starts now (written only if this request is allowed).
    start = now;
  } else if (now < start) {
    now = start;
  } else if (start + windowMs <= now) {
    // Roll forward: the current window becomes the previous one if it is the one just before.
    const windows = Math.floor((now - start) / windowMs);
    current = 0;
    if (windows === 1) {
      previous = state.current;
      start += windowMs;
    } else {
      // Both windows are over: start afresh now, so that a key swept by cleanUp() decides
      // exactly as if it had been kept.
      previous = 0;
      start = now;
    }
  }
  const elapsed = now - start;
  const left = windowMs - elapsed; // in (0, windowMs]
  const limitScaled = threshold * windowMs;
  // The estimate, scaled by windowMs: previous × left + current × windowMs.
  const used = previous * left + current * windowMs;
  if (used + cost * windowMs <= limitScaled && cost <= threshold) {
    const after = record ? used + cost * windowMs : used;
    if (record) {
      state.start = start;
      state.current = current + cost;
      state.previous = previous;
    }
    const counted = record ? current + cost : current;
    return result(true, remainingOf(limitScaled - after, windowMs, threshold), 0, threshold, resetOf(counted, previous, left, windowMs), 2 * quota.windowSeconds);
  }
  const remaining = remainingOf(limitScaled - used, windowMs, threshold);
  const resetAfter = resetOf(current, previous, left, windowMs);
  if (cost > threshold) return result(false, remaining, Infinity, threshold, resetAfter, 2 * quota.windowSeconds);
  let wait: number;
  if (current + cost <= threshold) {
    // Within this window, once previous × left' <= (threshold − current − cost) × windowMs.
    const leftAllowed = ((threshold - current - cost) * windowMs) / previous;
    wait = left - leftAllowed;
  } else {
    // In the next window, where previous' = current and current' = 0:
    // current × left' <= (threshold − cost) × windowMs.
    const leftAllowed = ((threshold - cost) * windowMs) / current;
    wait = left + (leftAllowed >= windowMs ? 0 : windowMs - leftAllowed);
  }
  return result(false, remaining, wait, threshold, resetAfter, 2 * quota.windowSeconds);
}

/** Whole units left: floor(free / windowMs), clamped to [0, threshold]. */
function remainingOf(freeScaled: number, windowMs: number, threshold: number): number {
  if (freeScaled <= 0) return 0;
  const units = Math.floor(freeScaled / windowMs);
  return units > threshold ? threshold : units;
}

/** Milliseconds until the estimate is 0: the end of the next window if `current` counts. */
function resetOf(current: number, previous: number, left: number, windowMs: number): number {
  if (current > 0) return left + windowMs;
  return previous > 0 ? left : 0;
}
