/**
 * The key table: each tracked key's state for an in-memory strategy (`Map<string, State>`), the
 * quota last applied to keys under a tier, and forgetting keys whose window is clear — by
 * `cleanUp()`, by the incremental automatic sweep, and to make room under `maxKeys` — through
 * **one** routine (`#forgetIfClear`), so the three treat tiers alike. It also
 * decides on its keys (the in-memory half of the limiter's one core operation), since only it
 * knows whether a key is new.
 *
 * @module
 */
import { RateWardenTypeError, ErrorCode } from './errors.js';
import type { SweepInfo } from './observer.js';
import type { Quota } from './quota.js';
import type { RateLimitResult } from './result.js';
import type { RateLimitStrategy } from './strategy.js';
import { MAX_TIMER_MS, unref } from './timers.js';

/** Keys per slice of the automatic sweep: well under a millisecond of work. */
const SWEEP_SLICE = 1_024;
/** Keys looked at, under `maxKeys`, for one to forget. */
const EVICT_SCAN = 16;
/** Tracked keys at which an unbounded table warns once. */
const WARN_KEYS = 1_000_000;

/** @internal Options of a {@link KeyTable}. */
export interface KeyTableOptions {
  /** The most keys tracked at once: a positive safe integer, or `Infinity`. */
  readonly maxKeys: number;
  /**
   * The quota most decisions come with: a key decided under another one (a tier) has it noted,
   * so that sweeps judge it by the quota last applied to it. `undefined`: every key's is noted.
   */
  readonly defaultQuota: Quota | undefined;
  /** Whether decisions may come with another quota than `defaultQuota` (tiers). */
  readonly tiered: boolean;
  /** Called after each completed sweep: each `cleanUp()` and each full automatic pass. */
  readonly onSweep?: ((info: SweepInfo) => void) | undefined;
}

/**
 * @internal The per-key state of one in-memory strategy. Decisions on it are synchronous, so
 * none is ever in flight while a sweep runs.
 */
export class KeyTable<State> {
  readonly #strategy: RateLimitStrategy<State>;
  readonly #states = new Map<string, State>();
  /** The quota last applied to each key whose quota is not the default (tiers). */
  readonly #quotas = new Map<string, Quota>();
  readonly #default: Quota | undefined;
  readonly #tiered: boolean;
  readonly #maxKeys: number;
  readonly #onSweep: ((info: SweepInfo) => void) | undefined;
  /** Where the search for a clear key to forget (under `maxKeys`) goes on from. */
  #evictCursor: Iterator<[string, State]> | undefined;
  /** The automatic sweep: its interval timer, the pending slice, and where the slice goes on. */
  #sweepTimer: ReturnType<typeof setInterval> | undefined;
  #sliceTimer: ReturnType<typeof setTimeout> | undefined;
  #sweepCursor: Iterator<[string, State]> | undefined;
  /** Keys dropped by the automatic sweep's current pass. */
  #passSwept = 0;
  #sweeps = 0;
  #swept = 0;
  #evicted = 0;
  #warned = false;
  /** Whether cleanUp() was ever called (then the unbounded-keys warning is not needed). */
  #cleaned = false;

  /**
   * @param strategy - the in-memory strategy deciding on the states.
   * @param options - {@link KeyTableOptions}.
   */
  constructor(strategy: RateLimitStrategy<State>, options: KeyTableOptions) {
    this.#strategy = strategy;
    this.#default = options.defaultQuota;
    this.#tiered = options.tiered || options.defaultQuota === undefined;
    this.#maxKeys = options.maxKeys;
    this.#onSweep = options.onSweep;
  }

  /** Keys tracked now. */
  get size(): number {
    return this.#states.size;
  }

  /** Completed sweeps: `cleanUp()` calls and full automatic passes. */
  get sweeps(): number {
    return this.#sweeps;
  }

  /** Keys forgotten by sweeps (`cleanUp()` and the automatic sweep). */
  get sweptKeys(): number {
    return this.#swept;
  }

  /** Keys forgotten under `maxKeys` to make room for a new key. */
  get evictedKeys(): number {
    return this.#evicted;
  }

  /**
   * Decides a request of `cost` units on `key` at `now` and records it when allowed. A key seen
   * for the first time keeps its state only once a request has been allowed, so that a rejected
   * or failed first request leaves no trace; under `maxKeys` it may first forget a clear key,
   * or be turned away.
   */
  consume(key: string, now: number, cost: number, quota: Quota): RateLimitResult {
    const state = this.#states.get(key);
    // The common case, a tracked key without tiers, kept this small so that V8 inlines it.
    if (state !== undefined && !this.#tiered) return this.#strategy.consume(state, now, cost, quota);
    return this.#consumeNoted(key, state, now, cost, quota);
  }

  /**
   * {@link consume} for a key not tracked, or under tiers: the quota of a decision is noted once
   * the strategy has decided (a decision that throws notes nothing), and for a new key only when
   * it is admitted.
   */
  #consumeNoted(key: string, state: State | undefined, now: number, cost: number, quota: Quota): RateLimitResult {
    if (state === undefined) return this.#admit(key, now, cost, quota);
    const result = this.#strategy.consume(state, now, cost, quota);
    if (this.#tiered) this.#noteQuota(key, quota);
    return result;
  }

  /** The result a request would get now, recording nothing (a clear key may be forgotten). */
  peek(key: string, now: number, cost: number, quota: Quota): RateLimitResult {
    const state = this.#states.get(key);
    if (state === undefined && this.#states.size >= this.#maxKeys) {
      // A new key with no room: turned away unless a clear key can be forgotten now
      // (forgetting it changes no decision), as a decision would do.
      const full = this.#makeRoom(now, quota);
      if (full !== undefined) return full;
    }
    return this.#strategy.peek(state, now, cost, quota);
  }

  /** Forgets `key`; returns whether it was tracked. */
  forget(key: string): boolean {
    this.#quotas.delete(key);
    return this.#states.delete(key);
  }

  /**
   * Sweeps every key at `now`, forgetting those whose window is clear, synchronously:
   * O(number of keys). Keys forgotten before a strategy throws stay forgotten.
   * @returns how many keys were forgotten.
   */
  cleanUp(now: number): number {
    this.#cleaned = true;
    let dropped = 0;
    try {
      // forEach, not for-of: no [key, value] array allocated per key.
      this.#states.forEach((state, key) => {
        if (this.#forgetIfClear(key, state, now)) dropped++;
      });
    } finally {
      this.#swept += dropped;
    }
    this.#sweeps++;
    this.#onSweep?.({ dropped, automatic: false, keys: this.#states.size });
    return dropped;
  }

  /**
   * The one routine that forgets a key: asks the strategy to drop what has expired at `now`,
   * under the quota last applied to the key, and forgets the key when its state is clear (its
   * next request is then decided exactly as it would have been).
   * @returns whether the key was forgotten.
   */
  #forgetIfClear(key: string, state: State, now: number): boolean {
    if (!this.#strategy.sweep(state, now, this.#quotaOf(key))) return false;
    this.#states.delete(key);
    if (this.#tiered) this.#quotas.delete(key);
    return true;
  }

  /**
   * Starts the automatic sweep: every `intervalMs`, a pass over every key in slices of
   * {@link SWEEP_SLICE}, yielding to the event loop between slices. The timers are `unref()`ed
   * and hold the table only weakly (an abandoned limiter is collected and its timer stops).
   * @param intervalMs - milliseconds between passes (clamped below 2^31 − 1).
   * @param read - reads the clock for a slice; a slice whose reading fails ends its pass.
   */
  startSweeping(intervalMs: number, read: () => number): void {
    const self = new WeakRef(this);
    const timer = setInterval(() => {
      const table = self.deref();
      if (table === undefined) clearInterval(timer);
      else if (table.#sweepCursor === undefined) {
        table.#passSwept = 0;
        table.#sweepSlice(table.#states.entries(), read);
      }
    }, Math.min(intervalMs, MAX_TIMER_MS));
    unref(timer);
    this.#sweepTimer = timer;
  }

  /** Stops the automatic sweep, if any. Safe to call more than once. */
  stopSweeping(): void {
    if (this.#sweepTimer !== undefined) clearInterval(this.#sweepTimer);
    if (this.#sliceTimer !== undefined) clearTimeout(this.#sliceTimer);
    this.#sweepTimer = undefined;
    this.#sliceTimer = undefined;
    this.#sweepCursor = undefined;
  }

  /** Sweeps up to {@link SWEEP_SLICE} keys from `cursor`, then schedules the next slice. */
  #sweepSlice(cursor: Iterator<[string, State]>, read: () => number): void {
    this.#sliceTimer = undefined;
    let now: number;
    try {
      now = read();
    } catch {
      // A clock that fails now fails decisions too, where the caller sees the error.
      this.#sweepCursor = undefined;
      return;
    }
    for (let visited = 0; visited < SWEEP_SLICE; visited++) {
      const next = cursor.next();
      if (next.done === true) {
        this.#sweepCursor = undefined;
        this.#sweeps++;
        this.#onSweep?.({ dropped: this.#passSwept, automatic: true, keys: this.#states.size });
        return;
      }
      const [key, state] = next.value;
      let cleared: boolean;
      try {
        cleared = this.#forgetIfClear(key, state, now);
      } catch {
        // A failing strategy fails cleanUp() for its caller; here, in a timer, end this pass.
        this.#sweepCursor = undefined;
        return;
      }
      if (cleared) {
        this.#swept++;
        this.#passSwept++;
      }
    }
    this.#sweepCursor = cursor;
    const self = new WeakRef(this);
    const slice = setTimeout(() => {
      const table = self.deref();
      if (table !== undefined && table.#sweepCursor === cursor) table.#sweepSlice(cursor, read);
    }, 0);
    unref(slice);
    this.#sliceTimer = slice;
  }

  /** Decides on a key not tracked: makes room under `maxKeys`, keeps its state if allowed. */
  #admit(key: string, now: number, cost: number, quota: Quota): RateLimitResult {
    const states = this.#states;
    if (states.size >= this.#maxKeys) {
      const full = this.#makeRoom(now, quota);
      if (full !== undefined) return full;
    } else if (states.size === WARN_KEYS && !this.#warned) {
      this.#warnUnbounded();
    }
    const strategy = this.#strategy;
    const fresh = strategy.createState(quota);
    const result = strategy.consume(fresh, now, cost, quota);
    if (typeof (result as { then?: unknown }).then === 'function') {
      throw new RateWardenTypeError(
        `Expected the in-memory strategy \`${strategy.name}\` to return a result, got a promise: a ` +
          'strategy that awaits keeps its state in a store (implement RateLimitStore)',
        ErrorCode.NotSynchronous,
      );
    }
    if (result.allowed) {
      states.set(key, fresh);
      if (this.#tiered) this.#noteQuota(key, quota);
    }
    return result;
  }

  /** Notes the quota last applied to the tracked `key` (for sweeps), when it is not the default. */
  #noteQuota(key: string, quota: Quota): void {
    if (quota !== this.#default) this.#quotas.set(key, quota);
    else this.#quotas.delete(key);
  }

  /** The quota last applied to the tracked `key`. */
  #quotaOf(key: string): Quota {
    return (this.#tiered ? (this.#quotas.get(key) ?? this.#default) : this.#default) as Quota;
  }

  /**
   * Makes room for a new key under `maxKeys`: forgets the first clear key among the next
   * {@link EVICT_SCAN} longest-tracked ones. Returns `undefined` when it did, else the rejection
   * for the new key.
   */
  #makeRoom(now: number, quota: Quota): RateLimitResult | undefined {
    const states = this.#states;
    let soonest = Infinity;
    for (let scanned = 0; scanned < EVICT_SCAN; scanned++) {
      let next = this.#evictCursor?.next();
      if (next === undefined || next.done === true) {
        this.#evictCursor = states.entries();
        next = this.#evictCursor.next();
        if (next.done === true) break;
      }
      const [key, state] = next.value;
      if (this.#forgetIfClear(key, state, now)) {
        this.#evicted++;
        return undefined;
      }
      if (scanned === 0) {
        // With every key looked at live, the first one gives the estimate of when room is made.
        soonest = this.#strategy.peek(state, now, 1, this.#quotaOf(key)).resetAfter;
      }
    }
    // None was clear: the next new key goes on from here (round robin over the tracked keys;
    // restarting from the oldest would skip the Map's deleted slots again and again).
    const wait = Math.min(soonest === Infinity ? quota.windowSeconds : soonest, quota.windowSeconds);
    return {
      allowed: false,
      remaining: 0,
      retryAfter: wait > 0 ? wait : quota.windowSeconds,
      limit: quota.threshold,
      resetAfter: 0,
    };
  }

  /** Warns once when many keys are tracked with nothing to bound them. */
  #warnUnbounded(): void {
    this.#warned = true;
    if (this.#maxKeys !== Infinity || this.#sweepTimer !== undefined || this.#cleaned) return;
    const message =
      `ratewarden: a RateLimiter tracks ${WARN_KEYS} keys with no bound: call cleanUp() ` +
      'periodically, or set sweepIntervalSeconds or maxKeys';
    const process = (globalThis as { process?: { emitWarning?: (message: string, type: string) => void } }).process;
    if (typeof process?.emitWarning === 'function') process.emitWarning(message, 'RateWardenWarning');
    else console.warn(message);
  }
}
