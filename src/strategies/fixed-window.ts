import { outcome } from '../result.js';
import { onGrid, retryAfterSeconds } from '../time.js';
import type { Quota } from '../quota.js';
import type { RateLimitResult } from '../result.js';
import type { RateLimitStrategy } from '../strategy.js';

/** The per-key state of {@link FixedWindow}: when the key's current window started, and its count. */
export class FixedWindowState {
  /** Start of the current window, in milliseconds on the limiter's clock (on the 2^-10 ms grid). */
  start = 0;
  /** Units allowed in the current window. */
  count = 0;
}

/**
 * The **fixed window** counter: per key, one counter that resets every `window`.
 *
 * A key's window starts at its first request and lasts `window`; the first request at or after
 * its end starts a new one (windows are anchored per key, not to the clock, so keys do not all
 * reset at the same instant). A request of cost `c` is allowed when `count + c <= threshold`;
 * rejected, it waits until the window ends: `retryAfter = start + window - now`.
 *
 * **Burst:** up to `2 × threshold` in a span of length `window` — with 100 per minute, 100
 * requests in the last second of one window and 100 more in the first second of the next are
 * all allowed: 200 within two seconds. Choose it when that is acceptable and the cheapest state
 * matters. The sliding-window log has no such burst; the sliding-window counter mostly smooths it.
 *
 * **Memory:** two numbers per key: 93 bytes per key with its `Map` entry, measured on Node 20
 * (`npm run bench:memory`), whatever the threshold.
 * **Cost per decision:** O(1). `retryAfter` is at most `window`; `resetAfter` likewise.
 *
 * **Clock going backwards:** a reading before the key's window start counts as that start.
 *
 * **Exactness:** readings are taken on a grid of 2^-10 ms and compared as differences
 * (`now − start >= window`), exact for any reading (see `src/time.ts`).
 *
 * In memory (a {@link RateLimitStrategy}): usable with both `allowRequest` and `allowRequestSync`.
 */
export class FixedWindow implements RateLimitStrategy<FixedWindowState> {
  /** `"fixed-window"`. */
  readonly name = 'fixed-window';

  /** An empty state: the window starts at the key's first allowed request. */
  createState(): FixedWindowState {
    return new FixedWindowState();
  }

  /** Decides a request of `cost` units at `nowMs` and records it when allowed. */
  consume(state: FixedWindowState, nowMs: number, cost: number, quota: Quota): RateLimitResult {
    return decide(state, nowMs, cost, quota, true);
  }

  /** The result a request of `cost` units would get at `nowMs`; records nothing. */
  peek(state: FixedWindowState | undefined, nowMs: number, cost: number, quota: Quota): RateLimitResult {
    return decide(state ?? EMPTY, nowMs, cost, quota, false);
  }

  /** Says whether the key's window has ended (or it never counted anything). */
  sweep(state: FixedWindowState, nowMs: number, quota: Quota): boolean {
    return state.count === 0 || onGrid(nowMs) - state.start >= quota.windowMs;
  }

  /** The decision just recorded: its window's start, its own time, and the count after it. */
  ticket(state: FixedWindowState, nowMs: number): FixedWindowTicket {
    const now = onGrid(nowMs);
    return { start: state.start, at: now < state.start ? state.start : now, count: state.count };
  }

  /**
   * Subtracts `units` from the count while the key is still in the decision's window (once it
   * has moved on, the decision no longer counts: `false`, which is exact). When the decision
   * opened the window (it came at the window's start) and something else was recorded since,
   * `false`: without it the window would have started later, at the next request, and ended
   * later (a subtraction would be more permissive than never having made the request).
   */
  refund(state: FixedWindowState, ticket: unknown, units: number, nowMs: number, quota: Quota): boolean {
    const t = ticket as FixedWindowTicket;
    if (state.start !== t.start || state.count < units || onGrid(nowMs) - t.start >= quota.windowMs) return false;
    if (t.at === t.start && state.count !== t.count) return false;
    state.count -= units;
    t.count = state.count;
    return true;
  }

  /** Adds `points` to the count (opening a window at `nowMs` if none is open), even past the threshold. */
  penalty(state: FixedWindowState, nowMs: number, points: number, quota: Quota): void {
    const now = onGrid(nowMs);
    if (state.count === 0 || now - state.start >= quota.windowMs) {
      state.start = now;
      state.count = 0;
    }
    state.count += points;
  }
}

/** A reservation's ticket on a {@link FixedWindowState}. */
export interface FixedWindowTicket {
  /** The decision's window start. */
  readonly start: number;
  /** The decision's time (on the grid). */
  readonly at: number;
  /** The count right after the decision, or after its last refund. */
  count: number;
}

const EMPTY = new FixedWindowState();

function decide(state: FixedWindowState, nowMs: number, cost: number, quota: Quota, record: boolean): RateLimitResult {
  const threshold = quota.threshold;
  const windowMs = quota.windowMs;
  let start = state.start;
  let count = state.count;
  let now = onGrid(nowMs);
  let reading = nowMs;
  if (count === 0 || now - start >= windowMs) {
    // A new window, starting now (written only if this request is allowed).
    start = now;
    count = 0;
  } else if (now < start) {
    reading = now = start;
  }
  const end = windowMs - (now - start); // ms until the window ends, in (0, windowMs]
  if (cost <= threshold - count) {
    if (!record) return outcome(true, threshold - count, 0, threshold, count === 0 ? 0 : end);
    state.start = start;
    state.count = count + cost;
    return outcome(true, threshold - count - cost, 0, threshold, end);
  }
  const remaining = count >= threshold ? 0 : threshold - count;
  const resetAfter = count === 0 ? 0 : end;
  const retryAfter = cost > threshold ? Infinity : retryAfterSeconds(reading, now, end, quota.windowSeconds);
  return outcome(false, remaining, retryAfter, threshold, resetAfter);
}
