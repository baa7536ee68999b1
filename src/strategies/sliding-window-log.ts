import { outcome } from '../result.js';
import { onGrid, retryAfterSeconds } from '../time.js';
import type { Quota } from '../quota.js';
import type { RateLimitResult } from '../result.js';
import type { RateLimitStrategy } from '../strategy.js';

/** The largest threshold of the sliding-window log: 2^20 timestamps, 8 MiB per key at most. */
const MAX_THRESHOLD = 1 << 20;
/** Capacity of a key's ring buffer when it is created, before it grows by doubling. */
const INITIAL_CAPACITY = 4;

/**
 * The per-key state of {@link SlidingWindowLog}: the timestamps (milliseconds, on the 2^-10 ms grid) of the allowed
 * requests still in the window, oldest first, in a ring buffer.
 *
 * The ring is a plain array of numbers, which V8 stores as unboxed doubles: 8 bytes per
 * timestamp plus about 150 bytes per key with the key's `Map` entry (165 bytes for a key holding
 * one timestamp, 2,531 for one holding 300, measured on Node 20; see the README). A
 * `Float64Array` ring measured 2,667 bytes for 300 timestamps: its separate buffer object costs
 * more. It starts with room for 4 timestamps and is replaced by one twice as large
 * when full, up to `threshold`; it never holds more than `threshold` entries, since a request is
 * recorded only when it fits. Treat the fields as read-only.
 */
export class SlidingWindowLogState {
  /** The ring buffer; its length is the capacity. */
  times: number[];
  /** Index in {@link times} of the oldest entry. */
  head = 0;
  /** Number of entries, from {@link head} onwards, wrapping around. */
  count = 0;

  /** @param capacity - the ring's initial capacity: an integer from 1 to `threshold`. */
  constructor(capacity: number) {
    this.times = newRing(capacity);
  }
}

/** A ring of exactly `capacity` slots, filled with a double so V8 stores it unboxed. */
function newRing(capacity: number): number[] {
  return new Array<number>(capacity).fill(0.5);
}

/** The state of a key not tracked: never written (peek does not record). */
const EMPTY = new SlidingWindowLogState(1);

/**
 * The exact **sliding-window log**: per key, the timestamps of the allowed requests.
 *
 * A request of cost `c` at time `now` (milliseconds):
 * 1. evicts the timestamps `t` with `t <= now - window` (computed as `now − t >= window`, on the 2^-10 ms grid);
 * 2. is allowed when `live + c <= threshold`, where `live` is the number of timestamps left; it is
 *    then recorded as `c` copies of `now`, and `remaining = threshold - live - c`;
 * 3. is otherwise rejected, recording nothing, with
 *    `retryAfter = (t_k + window - now) / 1000` seconds, where `t_k` is the k-th oldest live
 *    timestamp for `k = live + c - threshold` (for `c = 1`, the oldest: `oldest + window - now`).
 *    A request with `c > threshold` can never be allowed: `retryAfter = Infinity`.
 *
 * Only allowed requests are recorded, so a client that keeps calling while blocked still recovers
 * one window after its oldest allowed request. In **any** interval of length `window` (half-open,
 * `(t - window, t]`) at most `threshold` units are allowed: the log is exact, with no boundary
 * burst (a fixed window of 100 per minute can let 200 through around a minute boundary; this
 * cannot).
 *
 * **Clock going backwards.** The limiter never passes a time earlier than one it passed before
 * (see {@link RateLimitStrategy}); used on its own, the log also treats a reading earlier than
 * its newest timestamp as that timestamp, so it stays sorted and `retryAfter` never exceeds the
 * window.
 *
 * **Exactness.** Readings are taken on a grid of 2^-10 ms and compared as differences
 * (`now − t >= window`), which are exact on that grid for any reading, epoch times and
 * fractional `performance.now()` readings included (see `src/time.ts`): the log is exact,
 * with no rounding step, and a refused caller who waits `retryAfter` is allowed.
 *
 * **Cost.** Eviction and recording are O(1) amortized per cost unit: a ring buffer, never
 * `Array.prototype.shift`. Every decision drops the entries that have expired, so each entry
 * is read a bounded number of times; a rejection then finds the entry it waits for by index.
 * `peek` drops nothing: it reads the expired entries again, O(expired) until the next decision
 * or sweep.
 * **Memory:** 8 bytes per ring slot plus a constant per key (see the README). The ring grows by
 * doubling from 4 slots up to `threshold`, and `cleanUp()` halves it again while at most a
 * quarter is in use, so a key that once burst does not keep its peak size. Choose another
 * strategy when `threshold` is large (thousands) and keys are many.
 *
 * **Source:** the "sliding log" algorithm, as named and compared with fixed windows and the
 * sliding-window counter in Cloudflare's "How we built rate limiting capable of scaling to
 * millions of domains" (2017), which trades it for a counter to save memory.
 *
 * In memory (a {@link RateLimitStrategy}): usable with both `allowRequest` and `allowRequestSync`.
 */
export class SlidingWindowLog implements RateLimitStrategy<SlidingWindowLogState> {
  /** `"sliding-window-log"`. */
  readonly name = 'sliding-window-log';
  /**
   * 1,048,576 (2^20): the log stores one timestamp per allowed unit, so a key may hold up to
   * 8 MiB. For larger limits use {@link SlidingWindowCounter}, {@link TokenBucket} or
   * {@link GCRA}, whose state does not grow with the threshold.
   */
  readonly maxThreshold = MAX_THRESHOLD;

  /** Creates an empty log with room for `min(4, threshold)` timestamps. */
  createState(quota: Quota): SlidingWindowLogState {
    return new SlidingWindowLogState(Math.min(INITIAL_CAPACITY, quota.threshold));
  }

  /** Decides a request of `cost` units at `nowMs` and records it when allowed. */
  consume(
    state: SlidingWindowLogState,
    nowMs: number,
    cost: number,
    quota: Quota,
  ): RateLimitResult {
    return decide(state, nowMs, cost, quota, true);
  }

  /**
   * The result a request of `cost` units would get at `nowMs`; changes nothing (not even the
   * expired entries, which a key whose tier changes to a longer window would still count).
   */
  peek(
    state: SlidingWindowLogState | undefined,
    nowMs: number,
    cost: number,
    quota: Quota,
  ): RateLimitResult {
    return decide(state ?? EMPTY, nowMs, cost, quota, false);
  }

  /**
   * Drops the timestamps expired at `nowMs`; says whether none is left (the key can then be
   * forgotten). A ring at most a quarter full is reallocated at twice its live size (at least 4
   * slots), so memory follows the key's current traffic, not its peak.
   */
  sweep(state: SlidingWindowLogState, nowMs: number, quota: Quota): boolean {
    const times = state.times;
    const capacity = times.length;
    let first = state.head;
    let live = state.count;
    const windowMs = quota.windowMs;
    const now = onGrid(nowMs);
    while (live > 0 && now - (times[first] as number) >= windowMs) {
      live--;
      if (++first === capacity) first = 0;
    }
    state.head = first;
    state.count = live;
    if (live === 0) return true;
    if (capacity > INITIAL_CAPACITY && live * 4 <= capacity) {
      state.times = copyRing(times, first, live, Math.max(INITIAL_CAPACITY, live * 2));
      state.head = 0;
    }
    return false;
  }

  /** The decision just recorded: the time of its entries (the newest), and the log's truncations so far. */
  ticket(state: SlidingWindowLogState): SlidingWindowLogTicket {
    let newest = state.head + state.count - 1;
    if (newest >= state.times.length) newest -= state.times.length;
    return { at: state.times[newest] as number, cuts: truncations.get(state) ?? 0 };
  }

  /**
   * Drops `units` entries of the decision's time, wherever later entries are: the key is then
   * exactly as if they had never been recorded (entries of one time are alike, so which of
   * several same-time decisions they came from makes no difference). `false` when they have
   * expired (the window moved on: exact), and when a {@link penalty} has dropped old entries since the
   * decision (those would count again without it: a refund could be more permissive).
   */
  refund(state: SlidingWindowLogState, ticket: unknown, units: number, nowMs: number, quota: Quota): boolean {
    const t = ticket as SlidingWindowLogTicket;
    if ((truncations.get(state) ?? 0) !== t.cuts || onGrid(nowMs) - t.at >= quota.windowMs) return false;
    const times = state.times;
    const capacity = times.length;
    const count = state.count;
    // The entries are sorted: those of time `at` are one run, [from, from + run) from the oldest.
    let from = 0;
    let index = state.head;
    while (from < count && (times[index] as number) !== t.at) {
      from++;
      if (++index === capacity) index = 0;
    }
    let run = 0;
    while (from + run < count && (times[index] as number) === t.at) {
      run++;
      if (++index === capacity) index = 0;
    }
    if (run < units) return false;
    // Moves the later entries back over the dropped ones.
    let to = state.head + from + run - units;
    if (to >= capacity) to -= capacity;
    for (let i = from + run; i < count; i++) {
      times[to] = times[index] as number;
      if (++to === capacity) to = 0;
      if (++index === capacity) index = 0;
    }
    state.count = count - units;
    return true;
  }

  /**
   * Records `points` entries at `nowMs` (after the newest, if the clock went back), even past
   * the threshold, keeping only the newest `threshold` entries: a decision needs fewer than
   * `threshold` entries in the window, and the newest `threshold` decide every request exactly
   * as all of them would (so memory stays bounded by the threshold).
   */
  penalty(state: SlidingWindowLogState, nowMs: number, points: number, quota: Quota): void {
    const threshold = quota.threshold;
    const windowMs = quota.windowMs;
    let times = state.times;
    let capacity = times.length;
    let first = state.head;
    let live = state.count;
    let now = onGrid(nowMs);
    if (live > 0) {
      let newestIndex = first + live - 1;
      if (newestIndex >= capacity) newestIndex -= capacity;
      const newest = times[newestIndex] as number;
      if (now < newest) now = newest;
    }
    // The expired entries, then the oldest beyond the newest `threshold` once the points are in.
    while (live > 0 && now - (times[first] as number) >= windowMs) {
      live--;
      if (++first === capacity) first = 0;
    }
    const drop = live + points - threshold;
    if (drop > 0) {
      truncations.set(state, (truncations.get(state) ?? 0) + 1);
      live -= drop;
      first += drop;
      if (first >= capacity) first -= capacity;
    }
    const total = live + points;
    if (total > capacity) {
      times = grow(state, first, live, total, threshold);
      capacity = times.length;
      first = 0;
    }
    let index = first + live;
    if (index >= capacity) index -= capacity;
    for (let i = 0; i < points; i++) {
      times[index] = now;
      if (++index === capacity) index = 0;
    }
    state.head = first;
    state.count = total;
  }
}

/**
 * How many live entries {@link SlidingWindowLog.penalty} has dropped from each state, when it has
 * (kept apart so that a state costs nothing more in memory): a refund of a decision made
 * before the last drop is a no-op.
 */
const truncations = new WeakMap<SlidingWindowLogState, number>();

/** A reservation's ticket on a {@link SlidingWindowLogState}. */
export interface SlidingWindowLogTicket {
  /** The time of the decision's entries (on the grid). */
  readonly at: number;
  /** The state's truncation count at the decision. */
  readonly cuts: number;
}

/**
 * The decision of {@link SlidingWindowLog}: drops the expired entries, and records the request
 * when `record` and allowed.
 */
function decide(
  state: SlidingWindowLogState,
  nowMs: number,
  cost: number,
  quota: Quota,
  record: boolean,
): RateLimitResult {
  const threshold = quota.threshold;
  const windowMs = quota.windowMs;
  let times = state.times;
  let capacity = times.length;
  const head = state.head;
  const count = state.count;
  let now = onGrid(nowMs);
  let reading = nowMs;
  // `first` ends at the oldest live entry; `live` counts the entries from there on.
  let first = head;
  let live = count;
  let newest = 0;
  if (count > 0) {
    let newestIndex = head + count - 1;
    if (newestIndex >= capacity) newestIndex -= capacity;
    newest = times[newestIndex] as number;
    if (now < newest) reading = now = newest;
    // Expired: `t <= now − window`, compared as a difference (exact on the grid).
    while (live > 0 && now - (times[first] as number) >= windowMs) {
      live--;
      if (++first === capacity) first = 0;
    }
  }

  if (live !== count && record) {
    // Expired entries are dropped whatever the outcome: time never runs backwards, so no later
    // decision could count them again. Not by `peek`: a key whose tier changes to a longer
    // window would still count them.
    state.head = first;
    state.count = live;
  }

  if (cost <= threshold - live) {
    if (!record) {
      return outcome(true, threshold - live, 0, threshold, live === 0 ? 0 : windowMs - (now - newest));
    }
    const total = live + cost;
    if (total > capacity) {
      times = grow(state, first, live, total, threshold);
      capacity = times.length;
      first = 0;
    }
    let index = first + live;
    if (index >= capacity) index -= capacity;
    for (let i = 0; i < cost; i++) {
      times[index] = now;
      if (++index === capacity) index = 0;
    }
    state.head = first;
    state.count = total;
    return outcome(true, threshold - total, 0, threshold, windowMs);
  }

  // Rejected: nothing changes. With a threshold lowered below what the log holds (a key whose
  // quota changed), `live` may exceed `threshold`; `remaining` is then 0.
  const remaining = live >= threshold ? 0 : threshold - live;
  const resetAfter = live === 0 ? 0 : windowMs - (now - newest);
  if (cost > threshold) return outcome(false, remaining, Infinity, threshold, resetAfter);
  // The request fits once the k oldest live entries have expired.
  let index = first + (live + cost - threshold) - 1;
  if (index >= capacity) index -= capacity;
  const waitMs = windowMs - (now - (times[index] as number));
  return outcome(false, remaining, retryAfterSeconds(reading, now, waitMs, quota.windowSeconds), threshold, resetAfter);
}

/**
 * Moves the `live` entries starting at `first` into a larger buffer, oldest at index 0, with
 * room for at least `needed` entries: double the capacity, clamped to `[needed, max(threshold,
 * needed)]`.
 */
function grow(
  state: SlidingWindowLogState,
  first: number,
  live: number,
  needed: number,
  threshold: number,
): number[] {
  const old = state.times;
  const oldCapacity = old.length;
  let capacity = oldCapacity * 2;
  if (capacity > threshold) capacity = threshold;
  if (capacity < needed) capacity = needed;
  const next = copyRing(old, first, live, capacity);
  state.times = next;
  return next;
}

/** A new ring of `capacity` slots holding the `live` entries of `old` from `first`, at index 0. */
function copyRing(old: number[], first: number, live: number, capacity: number): number[] {
  const next = newRing(capacity);
  const oldCapacity = old.length;
  let index = first;
  for (let i = 0; i < live; i++) {
    next[i] = old[index] as number;
    if (++index === oldCapacity) index = 0;
  }
  return next;
}
