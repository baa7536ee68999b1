/**
 * Observing a limiter: the counters of `RateLimiter.stats()` and the listeners of
 * `RateLimiter.on()`.
 *
 * The design follows `node:diagnostics_channel` (without importing it: the core runs in
 * browsers and edge runtimes): publishing costs one check of a field when nobody listens, a
 * listener that throws never changes what the limiter decided, and its error is reported
 * rather than swallowed.
 *
 * @module
 */
import type { RateLimitResult } from './strategy.js';

/**
 * Counters of one `RateLimiter`, as returned by `RateLimiter.stats()`: a fresh plain
 * object per call (a snapshot). The counts run from the limiter's creation and never go down
 * (take differences between two snapshots for rates); `keys` and `waiting` are levels, as
 * they stand now.
 */
export interface RateLimiterStats {
  /**
   * Decisions that allowed (and recorded) a request: through `allowRequest`,
   * `allowRequestSync` and each attempt of `waitForSlot`. Decisions of a
   * `RateLimitGroup` are not counted in its members' limiters. `peek` is not a decision.
   */
  readonly allowed: number;
  /**
   * Decisions that rejected a request (including the rejections of new keys under `maxKeys`).
   * A `waitForSlot` that waits counts one rejection for each attempt that found no slot.
   */
  readonly rejected: number;
  /** Keys tracked now (as `RateLimiter.size`; always 0 with an external strategy). */
  readonly keys: number;
  /**
   * Completed sweeps: each `cleanUp()` call that returned, and each full pass of the automatic
   * sweep (see `sweepIntervalSeconds`; a pass runs in slices).
   */
  readonly sweeps: number;
  /**
   * Keys forgotten by sweeps: by `cleanUp()` and by the automatic sweep together (the getter
   * `RateLimiter.sweptKeys` counts the automatic sweep's alone).
   */
  readonly sweptKeys: number;
  /** Keys forgotten under `maxKeys` to make room for a new key (only clear ones ever are). */
  readonly evictedKeys: number;
  /** Callers of `waitForSlot` waiting now, over all keys. */
  readonly waiting: number;
}

/**
 * Called after each decision the limiter counts in {@link RateLimiterStats} (`allowed` or
 * `rejected`), synchronously, before the caller gets the result.
 *
 * @param key - the key decided on (the user's id).
 * @param result - the result, the very object the caller gets: do not modify it.
 * @param cost - the request's cost.
 */
export type DecisionListener = (key: string, result: RateLimitResult, cost: number) => void;

/** What a {@link SweepListener} is told about a completed sweep. */
export interface SweepInfo {
  /** Keys the sweep forgot. */
  readonly dropped: number;
  /** `true` for a full pass of the automatic sweep, `false` for a `cleanUp()` call. */
  readonly automatic: boolean;
  /** Keys still tracked after the sweep. */
  readonly keys: number;
}

/** Called after each completed sweep (see {@link RateLimiterStats.sweeps}). */
export type SweepListener = (info: SweepInfo) => void;

/**
 * Called with what a `decision` or `sweep` listener threw. Without an `error` listener, such
 * an error is rethrown in a microtask, where the host reports it as uncaught (Node's
 * `uncaughtException`, the browser's `error` event), as `EventTarget` does.
 */
export type ListenerErrorListener = (error: unknown) => void;

/** The events of `RateLimiter.on()`, by name, with their listener types. */
export interface RateLimiterEvents {
  /** After every counted decision: see {@link DecisionListener}. */
  decision: DecisionListener;
  /** After every completed sweep: see {@link SweepListener}. */
  sweep: SweepListener;
  /** When a `decision` or `sweep` listener throws: see {@link ListenerErrorListener}. */
  error: ListenerErrorListener;
}

/** @internal Adds `listener` to a copy-on-write list, once (as `EventTarget` does). */
export function withListener<F>(list: readonly F[] | undefined, listener: F): readonly F[] {
  if (list === undefined) return [listener];
  return list.includes(listener) ? list : [...list, listener];
}

/** @internal Removes `listener` from a copy-on-write list; `undefined` when none is left. */
export function withoutListener<F>(list: readonly F[] | undefined, listener: F): readonly F[] | undefined {
  if (list === undefined) return undefined;
  const index = list.indexOf(listener);
  if (index < 0) return list;
  if (list.length === 1) return undefined;
  return list.filter((_, i) => i !== index);
}

/**
 * @internal Rethrows `error` in a microtask, where the host reports it as uncaught: an error
 * of a listener is a bug to surface, never one to swallow, and never the caller's.
 */
export function reportUncaught(error: unknown): void {
  queueMicrotask(() => {
    throw error;
  });
}
