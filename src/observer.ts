/**
 * Observing a limiter: the decision counters of `RateLimiter.stats()` and the listeners of
 * `RateLimiter.on()` ({@link Observer}, one per limiter). The key table counts its own sweeps
 * and evictions; `RateLimiter.stats()` puts the two together.
 *
 * The design follows `node:diagnostics_channel` (without importing it: the core runs in
 * browsers and edge runtimes): publishing costs one check of a field when nobody listens, a
 * listener that throws never changes what the limiter decided, and its error is reported
 * rather than swallowed.
 *
 * @module
 */
import { rangeError, typeError } from './errors.js';
import type { Quota } from './quota.js';
import type { RateLimitResult } from './result.js';

/**
 * Counters of one `RateLimiter`, as returned by `RateLimiter.stats()`: a fresh plain
 * object per call (a snapshot). The counts run from the limiter's creation and never go down
 * (take differences between two snapshots for rates); `keys`, `waiting` and `blocked` are levels, as
 * they stand now.
 */
export interface RateLimiterStats {
  /**
   * Decisions that allowed (and recorded) a request: through `allowRequest`,
   * `allowRequestSync`, each attempt of `waitForSlot`, and each `RateLimitGroup` decision the
   * limiter took part in (a group that allows counts in every member limiter; one that rejects
   * counts in the limiters that rejected). `peek` is not a decision.
   */
  readonly allowed: number;
  /**
   * Decisions that rejected a request (including the rejections of new keys under `maxKeys`).
   * A `waitForSlot` that waits counts one rejection for each attempt that found no slot.
   */
  readonly rejected: number;
  /**
   * Of the {@link rejected} decisions, those made in shadow (`{ shadow: true }`, a middleware's
   * `mode: 'shadow'`): requests that a limit would have refused but that were let through.
   */
  readonly shadowRejected: number;
  /** Keys tracked now (as `RateLimiter.size`; always 0 with a store, which keeps its own state). */
  readonly keys: number;
  /**
   * Completed sweeps: each `cleanUp()` call that returned, and each full pass of the automatic
   * sweep (see `sweepIntervalSeconds`; a pass runs in slices). Always 0 with a store: the limiter
   * keeps no key to sweep.
   */
  readonly sweeps: number;
  /**
   * Keys forgotten by sweeps: by `cleanUp()` and by the automatic sweep together (as the getter
   * `RateLimiter.sweptKeys`).
   */
  readonly sweptKeys: number;
  /** Keys forgotten under `maxKeys` to make room for a new key (only clear ones ever are). */
  readonly evictedKeys: number;
  /** Callers of `waitForSlot` waiting now, over all keys. */
  readonly waiting: number;
  /**
   * Keys blocked now, in memory (a level): by a refusal under `blockSeconds`, or by
   * `RateLimiter.block`. Counted at the limiter's clock when `stats()` is called (the expired
   * blocks are dropped then). Always 0 with a store, which keeps its blocks itself.
   */
  readonly blocked: number;
}

/**
 * What a {@link DecisionListener} is told about a decision besides its key, result and cost:
 * the labels a metric or a log line needs.
 */
export interface DecisionInfo {
  /**
   * Whether the decision was made in shadow (`{ shadow: true }`, a middleware's
   * `mode: 'shadow'`): a rejection was then not enforced, the request went through.
   */
  readonly shadow: boolean;
  /** The limiter's `name` option (`"api"`, `"login"`); `undefined` when it has none. */
  readonly name: string | undefined;
  /**
   * The `tier` of the quota the decision applied: that of the object `limitFor` returned, or
   * the limiter's own `tier` option for the default quota; `undefined` when that has none.
   */
  readonly tier: string | undefined;
}

/**
 * Called after each decision the limiter counts in {@link RateLimiterStats} (`allowed` or
 * `rejected`), synchronously, before the caller gets the result.
 *
 * @param key - the key decided on (the user's id).
 * @param result - the result, the very object the caller gets: do not modify it.
 * @param cost - the request's cost.
 * @param info - the limiter's name, the quota's tier and whether the decision was a shadow one
 *   ({@link DecisionInfo}); a fresh object per decision, made only while a listener is registered.
 */
export type DecisionListener = (key: string, result: RateLimitResult, cost: number, info: DecisionInfo) => void;

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

/**
 * @internal The decision counters and the listeners of one limiter. Publishing costs one check
 * of a field while nobody listens; listener lists are copy-on-write (`undefined` when empty).
 */
export class Observer {
  /** Decisions that allowed a request. */
  allowed = 0;
  /** Decisions that rejected a request. */
  rejected = 0;
  /** Of those, the shadow ones. */
  shadowRejected = 0;
  /** The limiter's `name` option, for {@link DecisionInfo}. */
  readonly #name: string | undefined;
  #onDecision: readonly DecisionListener[] | undefined;
  #onSweep: readonly SweepListener[] | undefined;
  #onError: readonly ListenerErrorListener[] | undefined;

  /** @param name - the limiter's `name` option. */
  constructor(name: string | undefined) {
    this.#name = name;
  }

  /**
   * Counts a decision made under `quota` and tells the `decision` listeners, if any; returns
   * the result.
   */
  observe(key: string, cost: number, result: RateLimitResult, quota: Quota, shadow: boolean): RateLimitResult {
    if (result.allowed) this.allowed++;
    else {
      this.rejected++;
      if (shadow) this.shadowRejected++;
    }
    if (this.#onDecision !== undefined) this.#emitDecision(key, result, cost, { shadow, name: this.#name, tier: quota.tier });
    return result;
  }

  /** Tells the `sweep` listeners, if any, of a completed sweep. */
  swept(info: SweepInfo): void {
    const listeners = this.#onSweep;
    if (listeners === undefined) return;
    for (const listener of listeners) {
      try {
        listener(info);
      } catch (error) {
        this.#listenerFailed(error);
      }
    }
  }

  /**
   * Adds a listener (once, as `EventTarget` does); see `RateLimiter.on`.
   * @throws {RateWardenTypeError} / {@link RateWardenRangeError} for a bad event or listener.
   */
  on(event: unknown, listener: unknown): void {
    if (typeof listener !== 'function') throw typeError('listener', 'a function', listener);
    switch (checkEvent(event)) {
      case 'decision':
        this.#onDecision = withListener(this.#onDecision, listener as DecisionListener);
        break;
      case 'sweep':
        this.#onSweep = withListener(this.#onSweep, listener as SweepListener);
        break;
      case 'error':
        this.#onError = withListener(this.#onError, listener as ListenerErrorListener);
        break;
    }
  }

  /**
   * Removes a listener; returns whether it was registered. See `RateLimiter.off`.
   * @throws as {@link on}.
   */
  off(event: unknown, listener: unknown): boolean {
    if (typeof listener !== 'function') throw typeError('listener', 'a function', listener);
    switch (checkEvent(event)) {
      case 'decision': {
        const before = this.#onDecision;
        this.#onDecision = withoutListener(before, listener as DecisionListener);
        return before !== this.#onDecision;
      }
      case 'sweep': {
        const before = this.#onSweep;
        this.#onSweep = withoutListener(before, listener as SweepListener);
        return before !== this.#onSweep;
      }
      case 'error': {
        const before = this.#onError;
        this.#onError = withoutListener(before, listener as ListenerErrorListener);
        return before !== this.#onError;
      }
    }
  }

  #emitDecision(key: string, result: RateLimitResult, cost: number, info: DecisionInfo): void {
    for (const listener of this.#onDecision as readonly DecisionListener[]) {
      try {
        listener(key, result, cost, info);
      } catch (error) {
        this.#listenerFailed(error);
      }
    }
  }

  /** Hands what a listener threw to the `error` listeners, or reports it as uncaught. */
  #listenerFailed(error: unknown): void {
    const listeners = this.#onError;
    if (listeners === undefined) {
      reportUncaught(error);
      return;
    }
    for (const listener of listeners) {
      try {
        listener(error);
      } catch (failure) {
        reportUncaught(failure);
      }
    }
  }
}

/** Checks an event name of `RateLimiter.on`. */
function checkEvent(event: unknown): keyof RateLimiterEvents {
  if (typeof event !== 'string') throw typeError('event', "'decision', 'sweep' or 'error'", event);
  if (event !== 'decision' && event !== 'sweep' && event !== 'error') {
    throw rangeError('event', "'decision', 'sweep' or 'error'", event);
  }
  return event;
}

/** Adds `listener` to a copy-on-write list, once (as `EventTarget` does). */
function withListener<F>(list: readonly F[] | undefined, listener: F): readonly F[] {
  if (list === undefined) return [listener];
  return list.includes(listener) ? list : [...list, listener];
}

/** Removes `listener` from a copy-on-write list; `undefined` when none is left. */
function withoutListener<F>(list: readonly F[] | undefined, listener: F): readonly F[] | undefined {
  if (list === undefined) return undefined;
  const index = list.indexOf(listener);
  if (index < 0) return list;
  if (list.length === 1) return undefined;
  return list.filter((_, i) => i !== index);
}

/**
 * Rethrows `error` in a microtask, where the host reports it as uncaught: an error of a
 * listener is a bug to surface, never one to swallow, and never the caller's.
 */
function reportUncaught(error: unknown): void {
  queueMicrotask(() => {
    throw error;
  });
}
