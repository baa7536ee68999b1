import { performanceClock, type Clock } from './clock.js';
import {
  ErrorCode,
  RateWardenRangeError,
  RateWardenTypeError,
  checkPositiveInteger,
  describeValue,
  rangeError,
  typeError,
} from './errors.js';
import {
  reportUncaught,
  withListener,
  withoutListener,
  type DecisionListener,
  type ListenerErrorListener,
  type RateLimiterEvents,
  type RateLimiterStats,
  type SweepInfo,
  type SweepListener,
} from './events.js';
import { KeyedMutex } from './keyed-mutex.js';
import { MAX_TIMER_MS, unref } from './timers.js';
import { SlidingWindowLog } from './strategies/sliding-window-log.js';
import type { Limit, RateLimitResult, RateLimitStrategy } from './strategy.js';
import {
  delayMs,
  enqueue,
  neverAllowed,
  unlink,
  waitOptions,
  waitTooLong,
  type WaitOptions,
  type WaitQueue,
  type Waiter,
} from './wait.js';

/** A client of the limited resource. Only `id` is used: it is the key the limit applies to. */
export interface User {
  /** The key: a non-empty string, compared exactly (case and unicode as given). */
  readonly id: string;
  /** A display name; not used for decisions. */
  readonly name?: string;
}

/** Options of one decision. */
export interface RequestOptions {
  /**
   * How many requests this one counts as: a positive safe integer. A cost greater than the
   * limit's `threshold` can never be allowed: the result then has `retryAfter: Infinity`.
   * @default 1
   */
  readonly cost?: number;
}

/**
 * A limit chosen for a user by {@link RateLimiterOptions.limitFor} (a tier, a plan). The same
 * ranges as the limiter's own options apply; return the same object for the same tier (results
 * of validating it are cached by object identity, so treat it as immutable).
 */
export interface LimitOptions {
  /** Requests (cost units) allowed per window: a positive safe integer (at most the strategy's `maxThreshold`). */
  readonly threshold: number;
  /** The window length in **seconds**: a finite number of at least 0.001, rounded to the millisecond. */
  readonly windowSeconds: number;
}

/** Options of {@link RateLimiter}. */
export interface RateLimiterOptions<State = unknown> {
  /**
   * Requests (cost units) allowed per window and key: a positive safe integer (1 to 2^53 - 1), at
   * most the strategy's `maxThreshold` (1,048,576 for the sliding-window log).
   */
  readonly threshold: number;
  /**
   * The window length in **seconds**: a finite number of at least 0.001 (one millisecond);
   * fractions are allowed (`0.5` is half a second) and rounded to the millisecond, so that the
   * strategies' arithmetic on whole milliseconds is exact.
   */
  readonly windowSeconds: number;
  /**
   * The algorithm. Synchronous strategies (the in-memory ones) work with both `allowRequest`
   * and `allowRequestSync`; asynchronous ones only with `allowRequest`.
   * @default new SlidingWindowLog()
   */
  readonly strategy?: RateLimitStrategy<State>;
  /**
   * A monotonic clock in **milliseconds**, read once per decision, inside the key's critical
   * section. Inject one to replay recorded traffic or to test without fake timers.
   * @default performanceClock — `performance.now()`, looked up at each call, so fake timers
   *   installed after import take effect.
   */
  readonly clock?: Clock;
  /**
   * Chooses the limit per user — **tiers**, such as plans: free 60 per minute, pro 600 per
   * minute. Called at every decision (and by `peek`) with the user as passed and its key;
   * returning `undefined` applies `threshold` and `windowSeconds`. The result's `limit` reports
   * the threshold that applied.
   *
   * **A key whose tier changes mid-window** keeps its state, and the new limit applies to it at
   * once: with the sliding-window log, the requests already in the window count against the new
   * threshold (a downgrade from 600 to 60 with 100 requests in the window rejects until fewer
   * than 60 remain); counters compare their counts with the new threshold; the token bucket and
   * GCRA keep the used share of their burst, from the key's first decision under the new limit.
   * A key is swept under the limit last applied to it.
   *
   * @throws from a decision: a `TypeError` / `RangeError` naming `limitFor().threshold` or
   *   `limitFor().windowSeconds` when the returned limit is invalid, or what the function throws.
   * @default undefined — every key gets `threshold` per `windowSeconds`.
   */
  readonly limitFor?: (user: User | string, key: string) => LimitOptions | undefined;
  /**
   * Sweep automatically every this many **seconds**: an incremental {@link RateLimiter.cleanUp}
   * that visits at most 1,024 keys per slice and yields to the event loop between slices, so a
   * sweep over millions of keys never stalls it. The timers are `unref()`ed (they never keep a
   * Node process alive), hold the limiter only weakly (an abandoned limiter is collected and its
   * timer stops), are clamped below 2^31 − 1 ms, and are stopped by `close()` or
   * `[Symbol.dispose]()`.
   *
   * A finite number of at least 0.001. Off by default: timers in a library surprise tests that
   * run all fake timers.
   * @default undefined — no automatic sweep
   */
  readonly sweepIntervalSeconds?: number;
  /**
   * The most keys tracked at once: a bound on memory against floods of distinct keys.
   *
   * When a new key arrives with `maxKeys` keys tracked, the limiter looks at the next 16 tracked
   * keys (round robin, oldest first) and forgets the first whose window is clear (forgetting it
   * changes no decision). It never forgets a key whose window is live, so a flood of new keys
   * can never reset another client's limit. When every key it looks at is live, the new key's
   * request is **rejected**, recording nothing, with `remaining: 0`, `resetAfter: 0` (the new key
   * has no state) and `retryAfter` the time until the first key it looked at clears, capped at
   * the window: an estimate, since by then the search has moved on round robin and may meet
   * other live keys. The flood is held off, not the clients already tracked. `peek` answers the
   * same way. O(1) per new key.
   *
   * With tiers, a key is forgotten when it is clear under the limit last applied to it; a later
   * tier with a longer window cannot count requests from before the change that were forgotten.
   *
   * A positive safe integer, or `Infinity`.
   * @default Infinity
   */
  readonly maxKeys?: number;
}

/** A limiter of any state type (the type of a group member's `limiter`). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyLimiter = RateLimiter<any>;

/** @internal What {@link RateLimitGroup} needs of a limiter's internals. */
export interface LimiterInternals {
  id(limiter: AnyLimiter): number;
  synchronous(limiter: AnyLimiter): boolean;
  mutex(limiter: AnyLimiter): KeyedMutex;
  limitOf(limiter: AnyLimiter, user: User | string, key: string): Limit;
  now(limiter: AnyLimiter, limit: Limit): number;
  peek(limiter: AnyLimiter, key: string, cost: number, limit: Limit, now: number): RateLimitResult | PromiseLike<RateLimitResult>;
  consume(limiter: AnyLimiter, key: string, cost: number, limit: Limit, now: number): RateLimitResult | PromiseLike<RateLimitResult>;
  /** Counts a decision made for the limiter by a group, and tells its listeners. */
  observe(limiter: AnyLimiter, key: string, cost: number, result: RateLimitResult): RateLimitResult;
}

/** The outcome of a waiter's attempt skipped because the waiter was aborted before its turn. */
const SKIPPED: RateLimitResult = Object.freeze({ allowed: false, remaining: 0, retryAfter: 0, limit: 0, resetAfter: 0 });

let nextId = 0;
/** Keys per slice of the automatic sweep: well under a millisecond of work. */
const SWEEP_SLICE = 1_024;
/** Keys looked at, under `maxKeys`, for one to forget. */
const EVICT_SCAN = 16;
/** Tracked keys at which an unbounded limiter warns once. */
const WARN_KEYS = 1_000_000;
// Assigned by the class's static block, which alone can reach its private members.
let internals: LimiterInternals;

/** @internal The internals of limiters, for {@link RateLimitGroup}; not part of the public API. */
export function limiterInternals(): LimiterInternals {
  return internals;
}

/**
 * A per-key rate limiter: each key (user) may make at most `threshold` requests per rolling
 * window of `windowSeconds`, decided by a pluggable {@link RateLimitStrategy}, by default the
 * exact sliding-window log ({@link SlidingWindowLog}).
 *
 * The limiter holds a `Map<string, State>` of per-key state (for the default strategy, the
 * timestamps of the allowed requests) and a per-key async mutex ({@link KeyedMutex}). A decision
 * — evict, check, record — is atomic per key: with a synchronous strategy it runs to completion
 * in one synchronous step (nothing else can interleave in JavaScript, so no lock is taken); with
 * an asynchronous strategy it runs under the key's mutex, FIFO, and the clock is read after the
 * lock is acquired. Different keys never wait for each other.
 *
 * Memory: state is kept for every key seen until {@link cleanUp} finds its window clear (or
 * {@link reset} forgets it). Call `cleanUp()` periodically when keys are many and short-lived.
 *
 * @example
 * ```ts
 * const limiter = new RateLimiter({ threshold: 300, windowSeconds: 60 });
 * const { allowed, remaining, retryAfter } = await limiter.allowRequest('alice');
 * if (!allowed) console.log(`retry in ${retryAfter} s`);
 * ```
 *
 * @typeParam State - the per-key state of the strategy.
 */
export class RateLimiter<State = unknown> {
  readonly #strategy: RateLimitStrategy<State>;
  readonly #limit: Limit;
  readonly #limitFor: ((user: User | string, key: string) => LimitOptions | undefined) | undefined;
  /** Validated tier limits, by the object `limitFor` returned. */
  readonly #tiers = new WeakMap<object, Limit>();
  /** The limit last applied to each key whose limit is not the default (for `cleanUp`). */
  readonly #keyLimits = new Map<string, Limit>();
  /** A number unique to this limiter: the lock order of multi-limit checks. */
  readonly #id = nextId++;
  readonly #maxKeys: number;
  /** Where the search for a clear key to forget (under `maxKeys`) goes on from. */
  #evictCursor: Iterator<[string, State]> | undefined;
  /** The automatic sweep: its interval timer, the pending slice, and where the slice goes on. */
  #sweepTimer: ReturnType<typeof setInterval> | undefined;
  #sliceTimer: ReturnType<typeof setTimeout> | undefined;
  #sweepCursor: Iterator<[string, State]> | undefined;
  #swept = 0;
  #warned = false;
  /** Whether cleanUp() was ever called (then the unbounded-keys warning is not needed). */
  #cleaned = false;
  readonly #clock: Clock;
  readonly #synchronous: boolean;
  /** Whether the strategy keeps the per-key state itself (in a store): no map entries here. */
  readonly #external: boolean;
  readonly #states = new Map<string, State>();
  readonly #mutex = new KeyedMutex();
  /** The latest clock reading used: the limiter's time never runs backwards. */
  #latest = -Infinity;
  /** Counters of {@link stats}: plain integers, one increment per decision. */
  #allowed = 0;
  #rejected = 0;
  #sweeps = 0;
  /** Keys dropped by cleanUp() (the automatic sweep's are in #swept). */
  #cleanedKeys = 0;
  /** Keys dropped by the automatic sweep's current pass. */
  #passSwept = 0;
  #evicted = 0;
  /** Listeners (copy-on-write lists, `undefined` when empty: the hot path checks only that). */
  #onDecision: readonly DecisionListener[] | undefined;
  #onSweep: readonly SweepListener[] | undefined;
  #onError: readonly ListenerErrorListener[] | undefined;
  /** Callers of waitForSlot, by key, first come first served. */
  readonly #waits = new Map<string, WaitQueue>();
  #waiting = 0;

  /**
   * @throws {RateWardenTypeError} (a `TypeError`) when `options` is not an object, an option has
   *   the wrong type, `strategy` lacks a method of {@link RateLimitStrategy}, or `clock` is not a
   *   function.
   * @throws {RateWardenRangeError} (a `RangeError`) when `threshold` is not a positive safe
   *   integer (or exceeds the strategy's `maxThreshold`), or `windowSeconds` is not a finite
   *   number from 0.001 (one millisecond) up, with `windowSeconds * 1000` finite.
   */
  constructor(options: RateLimiterOptions<State>) {
    if (options === null || typeof options !== 'object') {
      throw typeError('options', 'an object', options);
    }
    const threshold = checkPositiveInteger('threshold', options.threshold);
    const windowSeconds = checkWindow('windowSeconds', options.windowSeconds);
    const strategy =
      options.strategy === undefined ? (new SlidingWindowLog() as RateLimitStrategy<unknown>) : options.strategy;
    const synchronous = checkStrategy(strategy);
    const maxThreshold = strategy.maxThreshold ?? Number.MAX_SAFE_INTEGER;
    if (threshold > maxThreshold) {
      throw rangeError(
        'threshold',
        `at most ${maxThreshold} with the ${strategy.name} strategy (${strategy.name === 'sliding-window-log' ? 'it stores a timestamp per request; for larger limits use a counter, a token bucket or GCRA' : 'its documented maximum'})`,
        threshold,
      );
    }
    checkMaxWindow(strategy, 'windowSeconds', windowSeconds);
    const clock = options.clock === undefined ? performanceClock : options.clock;
    if (typeof clock !== 'function') throw typeError('clock', 'a function', clock);
    const limitFor = options.limitFor;
    if (limitFor !== undefined && typeof limitFor !== 'function') {
      throw typeError('limitFor', 'a function or undefined', limitFor);
    }
    this.#limitFor = limitFor;

    this.#strategy = strategy as RateLimitStrategy<State>;
    // The window in whole milliseconds: 1.017 s is exactly 1017 ms (not 1016.9999999999999), so
    // that the strategies' scaled arithmetic (threshold × windowMs) stays in integers.
    const windowMs = Math.round(windowSeconds * 1000);
    this.#limit = { threshold, windowMs, windowSeconds };
    this.#clock = clock;
    this.#synchronous = synchronous;
    const external = (strategy as { external?: unknown }).external;
    if (external !== undefined && typeof external !== 'boolean') {
      throw typeError('strategy.external', 'a boolean or undefined', external);
    }
    this.#external = external === true;
    const maxKeys = options.maxKeys === undefined ? Infinity : options.maxKeys;
    if (maxKeys !== Infinity) checkPositiveInteger('maxKeys', maxKeys);
    this.#maxKeys = maxKeys;
    const sweep = options.sweepIntervalSeconds;
    if (sweep !== undefined) {
      if (typeof sweep !== 'number') throw typeError('sweepIntervalSeconds', 'a finite number of seconds, at least 0.001', sweep);
      if (!(sweep >= 0.001) || !Number.isFinite(sweep)) {
        throw rangeError('sweepIntervalSeconds', 'a finite number of seconds, at least 0.001', sweep);
      }
      this.#startSweeping(Math.min(sweep * 1000, MAX_TIMER_MS));
    }
  }

  /** Requests (cost units) allowed per window and key (read-only). */
  get threshold(): number {
    return this.#limit.threshold;
  }

  /** The window length in seconds (read-only). */
  get windowSeconds(): number {
    return this.#limit.windowSeconds;
  }

  /** The strategy deciding requests (read-only). */
  get strategy(): RateLimitStrategy<State> {
    return this.#strategy;
  }

  /** Number of keys tracked now (keys with state that {@link cleanUp} has not dropped). */
  get size(): number {
    return this.#states.size;
  }

  /**
   * Decides one request for `user`: allowed and recorded, or rejected with nothing recorded.
   * Never rejects for a denial: a denial is a result with `allowed: false`.
   *
   * @param user - the key: a non-empty string, or a {@link User} whose `id` is one.
   * @param options - {@link RequestOptions}: `cost`, default 1.
   * @returns a promise of the {@link RateLimitResult}.
   * @throws never synchronously. The promise rejects with a `TypeError` / `RangeError` for an
   *   invalid `user` or `cost` (state unchanged); with the strategy's error if it fails (the
   *   key's lock is released; a new key is forgotten; an existing key's state is as the strategy
   *   left it, unchanged for the built-in strategies, which do not fail); with a `TypeError` if
   *   the clock returns a non-number, a `RangeError` if it returns NaN, ±Infinity or a reading so
   *   large that adding the window does not change it.
   *
   * The limiter's time never runs backwards: a clock reading earlier than the latest one used
   * counts as that latest one, so after the clock steps back, time stands still (and waits such
   * as `retryAfter` are in the limiter's time) until it catches up.
   *
   * A strategy must not call back into the same limiter for the same key from `consume`: with
   * an asynchronous strategy that would wait for its own lock.
   */
  allowRequest(user: User | string, options?: RequestOptions): Promise<RateLimitResult> {
    try {
      const key = keyOf(user);
      const cost = costOf(options);
      if (this.#synchronous) {
        return Promise.resolve(this.#observe(key, cost, this.#decide(user, key, cost) as RateLimitResult));
      }
      return this.#request(user, key, cost);
    } catch (error) {
      // Bad input, a failing clock or synchronous strategy, or `this` not a RateLimiter.
      return Promise.reject(error);
    }
  }

  /**
   * The same decision as {@link allowRequest}, returned directly, for synchronous strategies.
   *
   * @throws {RateWardenTypeError} with code `ERR_RATEWARDEN_NOT_SYNCHRONOUS` when the strategy is
   *   asynchronous; a `TypeError` / `RangeError` for an invalid `user` or `cost`; a `RangeError`
   *   when the clock returns a value that is not finite. State is unchanged in every case.
   */
  allowRequestSync(user: User | string, options?: RequestOptions): RateLimitResult {
    if (!this.#synchronous) throw notSynchronous(this.#strategy.name, 'allowRequestSync');
    if (typeof user === 'string' && options === undefined && this.#limitFor === undefined && user !== '') {
      // The common case, kept small so that V8 inlines it: a tracked key, cost 1, no tiers.
      const now = this.#now();
      const state = this.#states.get(user);
      const result = (
        state !== undefined
          ? this.#strategy.consume(user, state, now, 1, this.#limit)
          : this.#decideAt(user, 1, this.#limit, now)
      ) as RateLimitResult;
      // Observability: one increment, and a field check while nobody listens.
      if (result.allowed) this.#allowed++;
      else this.#rejected++;
      if (this.#onDecision !== undefined) this.#emitDecision(user, result, 1);
      return result;
    }
    const key = keyOf(user);
    const cost = costOf(options);
    return this.#observe(key, cost, this.#decide(user, key, cost) as RateLimitResult);
  }

  /**
   * Whether a request by `user` of `cost` units (default 1) would be allowed now, without
   * recording or evicting anything. The result's `remaining` and `resetAfter` are as they stand
   * before the request (a following {@link allowRequest} reports them after recording it);
   * `retryAfter` is as {@link allowRequest} would report it. With an asynchronous strategy it waits for the decisions already
   * queued on the key.
   *
   * @throws never synchronously; rejects as {@link allowRequest} does.
   */
  peek(user: User | string, options?: RequestOptions): Promise<RateLimitResult> {
    try {
      const key = keyOf(user);
      const cost = costOf(options);
      if (this.#synchronous) return Promise.resolve(this.#peek(user, key, cost) as RateLimitResult);
      if (this.#external) return Promise.resolve(this.#peek(user, key, cost));
      return this.#mutex.runExclusive(key, () => this.#peek(user, key, cost));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * {@link peek}, returned directly, for synchronous strategies.
   * @throws as {@link allowRequestSync}.
   */
  peekSync(user: User | string, options?: RequestOptions): RateLimitResult {
    if (!this.#synchronous) throw notSynchronous(this.#strategy.name, 'peekSync');
    const key = keyOf(user);
    return this.#peek(user, key, costOf(options)) as RateLimitResult;
  }

  /**
   * Waits until a request by `user` is allowed, then resolves with its result (`allowed: true`,
   * recorded): for **outbound** throttling, where the limited resource is someone else's API and
   * the caller would rather wait its turn than be turned away.
   *
   * A request allowed now resolves at once (in a microtask). Otherwise the caller waits
   * `retryAfter` seconds (a `setTimeout`, looked up on the global object at each call, so that
   * fake timers apply; the limiter's own time, its `clock`, decides), tries again, and so on until
   * allowed. The timer is not `unref()`ed: a wait keeps a Node process alive, as a pending
   * `fetch` would.
   *
   * **Fairness.** The waiters of one key are served in arrival order (FIFO): only the first one
   * tries for a slot; when it gets one, gives up or is aborted, the next one tries at once. A
   * later waiter never overtakes an earlier one, not even with a smaller `cost` (a large request
   * is not starved by small ones). Waiters of different keys never wait for each other. Calls of
   * {@link allowRequest} and {@link allowRequestSync} do not queue: they take whatever slot is
   * free when they are decided, ahead of waiters.
   *
   * **Cancellation.** An `AbortSignal` ends the wait: the promise rejects with `signal.reason`,
   * the waiter leaves the queue (the next one tries at once), its timer and listener are
   * removed, and an aborted waiter consumes nothing. With an asynchronous strategy, an attempt
   * already sent to the store when the signal aborts completes there: if it is allowed, that unit
   * is recorded (the promise has rejected all the same). Peers: limiter's `removeTokens` takes no
   * signal (its open issue #33, "cancel removeTokens()"), nor does rate-limiter-flexible's
   * `RateLimiterQueue.removeTokens`; bottleneck can only drop every waiting job at once
   * (`stop({ dropWaitingJobs })`; its issue #60); p-queue takes a per-task `signal`, but throttles
   * a whole queue, not per key. Go's `rate.Limiter.Wait(ctx)` is the model
   * here: it returns when the context is cancelled, and at once when the wait would outlast the
   * context's deadline, as `maxWaitSeconds` does.
   *
   * @param user - the key: a non-empty string, or a {@link User} whose `id` is one.
   * @param options - {@link WaitOptions}: `signal` (default none), `maxWaitSeconds` (in
   *   **seconds**, default `Infinity`), `cost` (default 1).
   * @returns a promise of the {@link RateLimitResult} of the attempt that was allowed.
   * @throws never synchronously. The promise rejects with
   *   - `signal.reason` when the signal aborts (or had aborted at the call);
   *   - a {@link RateWardenWaitError} (a `RangeError`, code `ERR_RATEWARDEN_WAIT_TOO_LONG`) at
   *     once, without waiting, when `cost` exceeds the limit's threshold (its `retryAfter` is
   *     `Infinity`), or as soon as the limiter can tell from `retryAfter` that the slot comes
   *     later than `maxWaitSeconds` after the call (for a waiter queued behind others, when the
   *     first of them is due later than that);
   *   - a `TypeError` / `RangeError` naming the option for an invalid `user`, `cost`, `signal`
   *     or `maxWaitSeconds`;
   *   - whatever a decision rejects with ({@link allowRequest}): a failing strategy or clock
   *     (the next waiter then tries).
   *
   * @example
   * ```ts
   * const github = new RateLimiter({ threshold: 5_000, windowSeconds: 3_600 });
   * await github.waitForSlot('token-1', { signal: AbortSignal.timeout(5_000) });
   * const response = await fetch(url);
   * ```
   */
  waitForSlot(user: User | string, options?: WaitOptions): Promise<RateLimitResult> {
    try {
      const key = keyOf(user);
      const { cost, signal, maxWaitSeconds } = waitOptions(options);
      if (signal !== undefined && signal.aborted) return Promise.reject(signal.reason);
      const limit = this.#limitOf(user, key);
      if (cost > limit.threshold) return Promise.reject(neverAllowed(maxWaitSeconds, limit, cost));
      let queue = this.#waits.get(key);
      let deadline = Infinity;
      if (maxWaitSeconds !== Infinity) {
        const now = this.#nowFor(limit);
        deadline = now + maxWaitSeconds * 1000;
        if (queue !== undefined && queue.retryAt > deadline + WAIT_EPSILON_MS) {
          // Queued behind a waiter due later than the deadline: no slot in time.
          let ahead = 0;
          for (let w = queue.head; w !== undefined; w = w.next) ahead++;
          return Promise.reject(waitTooLong((queue.retryAt - now) / 1000, maxWaitSeconds, limit, cost, ahead));
        }
      }
      return new Promise<RateLimitResult>((resolve, reject) => {
        const waiter: Waiter = {
          user,
          cost,
          limit,
          deadline,
          maxWaitSeconds,
          signal,
          resolve,
          reject,
          onAbort: undefined,
          settled: false,
          prev: undefined,
          next: undefined,
        };
        const fresh = queue === undefined;
        if (queue === undefined) {
          queue = { head: undefined, tail: undefined, timer: undefined, retryAt: -Infinity, busy: false };
          this.#waits.set(key, queue);
        }
        const mine = queue;
        enqueue(mine, waiter);
        this.#waiting++;
        if (signal !== undefined) {
          const onAbort = (): void => {
            const head = mine.head === waiter;
            this.#settleWaiter(mine, waiter, false, signal.reason);
            if (head && !mine.busy) {
              // The next waiter tries now (it may ask for less than the aborted one).
              if (mine.timer !== undefined) clearTimeout(mine.timer);
              mine.timer = undefined;
              this.#pump(key, mine);
            }
          };
          waiter.onAbort = onAbort;
          signal.addEventListener('abort', onAbort, { once: true });
        }
        if (fresh || (mine.head === waiter && !mine.busy)) this.#pump(key, mine);
      });
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Forgets `user`'s state now: its next request is decided as a first request. A decision
   * already in flight for the key (asynchronous strategies) completes on the state it had read.
   * A {@link waitForSlot} caller waiting for the key's next slot tries again at once.
   *
   * @returns whether the key was tracked.
   * @throws {RateWardenTypeError} / {@link RateWardenRangeError} for an invalid `user`.
   */
  reset(user: User | string): boolean {
    const key = keyOf(user);
    this.#keyLimits.delete(key);
    const tracked = this.#states.delete(key);
    // A waiter for the key's next slot need not wait for it any longer: it tries again now.
    const queue = this.#waits.get(key);
    if (queue !== undefined && queue.timer !== undefined) {
      clearTimeout(queue.timer);
      queue.timer = undefined;
      this.#pump(key, queue);
    }
    return tracked;
  }

  /**
   * Sweeps every key: asks the strategy to drop what has expired now, and forgets each key whose
   * window is clear (its next request is decided exactly as it would have been). Keys with a
   * decision in flight are skipped. Mutex entries need no sweep: they exist only while a
   * decision holds or waits for a key's lock.
   *
   * Runs synchronously over all keys: O(number of keys).
   *
   * @returns how many keys were dropped.
   * @throws a `RangeError` if the clock returns a value that is not finite (nothing dropped).
   */
  cleanUp(): number {
    const now = this.#now();
    this.#cleaned = true;
    const strategy = this.#strategy;
    const limit = this.#limit;
    const states = this.#states;
    const mutex = this.#mutex;
    let dropped = 0;
    const keyLimits = this.#keyLimits;
    const tiered = keyLimits.size > 0;
    // Only asynchronous strategies hold locks across a decision.
    const locking = !this.#synchronous && mutex.size > 0;
    try {
      // forEach, not for-of: no [key, value] array allocated per key.
      states.forEach((state, key) => {
        if (locking && mutex.isLocked(key)) return;
        if (strategy.sweep(state, now, tiered ? (keyLimits.get(key) ?? limit) : limit)) {
          states.delete(key);
          if (tiered) keyLimits.delete(key);
          dropped++;
        }
      });
    } finally {
      // Keys dropped before a strategy failed are dropped all the same.
      this.#cleanedKeys += dropped;
    }
    this.#sweeps++;
    if (this.#onSweep !== undefined) this.#emitSweep({ dropped, automatic: false, keys: states.size });
    return dropped;
  }

  /**
   * Stops the automatic sweep, if any (see `sweepIntervalSeconds`). Decisions keep working; only
   * the timers stop. Safe to call more than once. Callers of {@link waitForSlot} keep waiting
   * (end their waits with their signals).
   */
  close(): void {
    if (this.#sweepTimer !== undefined) clearInterval(this.#sweepTimer);
    if (this.#sliceTimer !== undefined) clearTimeout(this.#sliceTimer);
    this.#sweepTimer = undefined;
    this.#sliceTimer = undefined;
    this.#sweepCursor = undefined;
  }

  /** {@link close}, for `using limiter = new RateLimiter(...)`. */
  [Symbol.dispose](): void {
    this.close();
  }

  /**
   * Keys the automatic sweep has dropped since the limiter was created (each full pass visits
   * every key once, in slices).
   */
  get sweptKeys(): number {
    return this.#swept;
  }

  /**
   * The limiter's counters, as a fresh plain object (a snapshot): decisions `allowed` and
   * `rejected`, `keys` tracked now, `sweeps` completed and `sweptKeys` dropped by them,
   * `evictedKeys` forgotten under `maxKeys`, callers `waiting` in {@link waitForSlot}. See
   * {@link RateLimiterStats}.
   *
   * Always on, and cheap enough to leave on: a decision costs one integer increment more; the
   * snapshot is built only when asked for. Poll it for metrics (a Prometheus scrape, a log line
   * a minute), and take differences between snapshots for rates.
   */
  stats(): RateLimiterStats {
    return {
      allowed: this.#allowed,
      rejected: this.#rejected,
      keys: this.#states.size,
      sweeps: this.#sweeps,
      sweptKeys: this.#cleanedKeys + this.#swept,
      evictedKeys: this.#evicted,
      waiting: this.#waiting,
    };
  }

  /**
   * Listens to the limiter's events (see {@link RateLimiterEvents}):
   * - `'decision'`: `(key, result, cost)`, after each decision counted in {@link stats}, in the
   *   order of the decisions of a key, synchronously, before the caller gets the result;
   * - `'sweep'`: `({ dropped, automatic, keys })`, after each `cleanUp()` and each full pass of
   *   the automatic sweep;
   * - `'error'`: `(error)`, with what a `decision` or `sweep` listener threw.
   *
   * While no `decision` listener is registered, deciding costs one check of a field more; with
   * listeners, it costs their calls. Keep listeners cheap: they run inside every decision (with
   * an asynchronous strategy, while the key's lock is held). A listener added twice is called
   * once. Listeners added or removed while an event is delivered apply from the next event.
   *
   * **A listener that throws** never changes the decision: the request stays allowed and
   * recorded (or rejected), the caller gets its result, and the other listeners are still
   * called. The error goes to the `error` listeners, or, when there are none, is rethrown in a
   * microtask, where the host reports it as uncaught (Node's `uncaughtException`, the browser's
   * `error` event), as `EventTarget` and `node:diagnostics_channel` do: a bug in a metrics hook
   * is surfaced, never swallowed, and never becomes the caller's error. What an `error` listener
   * throws is reported as uncaught the same way.
   *
   * @param event - `'decision'`, `'sweep'` or `'error'`.
   * @param listener - the function to call.
   * @returns a function that removes the listener (as {@link off}); calling it again does nothing.
   * @throws {RateWardenTypeError} when `listener` is not a function or `event` not a string.
   * @throws {RateWardenRangeError} when `event` is not one of the three names.
   *
   * @example
   * ```ts
   * const stop = limiter.on('decision', (key, result) => {
   *   if (!result.allowed) rejections.inc({ key });
   * });
   * // later
   * stop();
   * ```
   */
  on<E extends keyof RateLimiterEvents>(event: E, listener: RateLimiterEvents[E]): () => void {
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
    let registered = true;
    return () => {
      if (registered) {
        registered = false;
        this.off(event, listener);
      }
    };
  }

  /**
   * Removes a listener added by {@link on}.
   * @returns whether it was registered.
   * @throws as {@link on}.
   */
  off<E extends keyof RateLimiterEvents>(event: E, listener: RateLimiterEvents[E]): boolean {
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

  /** Counts a decision and tells the `decision` listeners, if any; returns the result. */
  #observe(key: string, cost: number, result: RateLimitResult): RateLimitResult {
    if (result.allowed) this.#allowed++;
    else this.#rejected++;
    if (this.#onDecision !== undefined) this.#emitDecision(key, result, cost);
    return result;
  }

  #emitDecision(key: string, result: RateLimitResult, cost: number): void {
    const listeners = this.#onDecision as readonly DecisionListener[];
    for (let i = 0; i < listeners.length; i++) {
      try {
        (listeners[i] as DecisionListener)(key, result, cost);
      } catch (error) {
        this.#listenerFailed(error);
      }
    }
  }

  #emitSweep(info: SweepInfo): void {
    const listeners = this.#onSweep as readonly SweepListener[];
    for (let i = 0; i < listeners.length; i++) {
      try {
        (listeners[i] as SweepListener)(info);
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

  /**
   * A decision with an asynchronous strategy, counted when it settles: under the key's lock, or
   * without one for an external strategy (it decides atomically in its store, one script per
   * decision: a lock here would only queue this process's decisions one round trip apart).
   */
  #request(user: User | string, key: string, cost: number, waiter?: Waiter): Promise<RateLimitResult> {
    if (this.#external) {
      return Promise.resolve(this.#decide(user, key, cost)).then((result) => this.#observe(key, cost, result));
    }
    return this.#mutex.runExclusive(key, () => {
      // A waiter aborted while its attempt waited for the lock: decide nothing, consume nothing.
      if (waiter?.settled === true) return SKIPPED;
      return Promise.resolve(this.#decide(user, key, cost)).then((result) => this.#observe(key, cost, result));
    });
  }

  /**
   * Lets the head of `queue` try for a slot, and the next one after it when it is served or
   * gives up, until one has to wait (a timer), an attempt is in flight, or the queue is empty.
   */
  #pump(key: string, queue: WaitQueue): void {
    for (;;) {
      const waiter = queue.head;
      if (waiter === undefined) {
        if (!queue.busy && this.#waits.get(key) === queue) this.#waits.delete(key);
        return;
      }
      queue.retryAt = -Infinity;
      if (!this.#synchronous) {
        this.#attempt(key, queue, waiter);
        return;
      }
      let result: RateLimitResult;
      // Busy while deciding: a decision listener that aborts this waiter must not pump the
      // queue from inside this loop.
      queue.busy = true;
      try {
        result = this.#observe(key, waiter.cost, this.#decide(waiter.user as User | string, key, waiter.cost) as RateLimitResult);
      } catch (error) {
        queue.busy = false;
        this.#settleWaiter(queue, waiter, false, error);
        continue;
      }
      queue.busy = false;
      // Aborted by a listener of this very decision: it was decided before the abort (an
      // allowed one is recorded); the queue goes on with the next waiter.
      if (waiter.settled) continue;
      if (this.#afterAttempt(key, queue, waiter, result)) return;
    }
  }

  /** The head's attempt with an asynchronous strategy; the queue moves on when it settles. */
  #attempt(key: string, queue: WaitQueue, waiter: Waiter): void {
    queue.busy = true;
    let attempt: Promise<RateLimitResult>;
    try {
      attempt = this.#request(waiter.user as User | string, key, waiter.cost, waiter);
    } catch (error) {
      attempt = Promise.reject(error);
    }
    attempt.then(
      (result) => {
        queue.busy = false;
        // Aborted while in flight (or before it got the lock: SKIPPED): already rejected; the
        // next waiter tries.
        if (waiter.settled || result === SKIPPED || !this.#afterAttempt(key, queue, waiter, result)) this.#pump(key, queue);
      },
      (error: unknown) => {
        queue.busy = false;
        this.#settleWaiter(queue, waiter, false, error);
        this.#pump(key, queue);
      },
    );
  }

  /**
   * Acts on the head's attempt: resolves it when allowed; otherwise rejects it when no wait
   * would do, or sets its timer for `retryAfter`. Returns whether it waits (the queue stops).
   */
  #afterAttempt(key: string, queue: WaitQueue, waiter: Waiter, result: RateLimitResult): boolean {
    if (result.allowed) {
      this.#settleWaiter(queue, waiter, true, result);
      return false;
    }
    const retryAfter = result.retryAfter;
    if (!(retryAfter < Infinity)) {
      this.#settleWaiter(queue, waiter, false, neverAllowed(waiter.maxWaitSeconds, waiter.limit, waiter.cost));
      return false;
    }
    let now: number;
    try {
      now = this.#now();
    } catch (error) {
      this.#settleWaiter(queue, waiter, false, error);
      return false;
    }
    const retryAt = now + retryAfter * 1000;
    if (retryAt > waiter.deadline + WAIT_EPSILON_MS) {
      this.#settleWaiter(queue, waiter, false, waitTooLong(retryAfter, waiter.maxWaitSeconds, waiter.limit, waiter.cost, 0));
      return false;
    }
    // The waiters behind it cannot be served before it: those who will not wait that long
    // learn it now rather than at their deadline.
    let ahead = 1;
    for (let w = waiter.next; w !== undefined; ) {
      const next = w.next;
      if (retryAt > w.deadline + WAIT_EPSILON_MS) {
        this.#settleWaiter(queue, w, false, waitTooLong((retryAt - now) / 1000, w.maxWaitSeconds, w.limit, w.cost, ahead));
      } else {
        ahead++;
      }
      w = next;
    }
    queue.retryAt = retryAt;
    queue.timer = setTimeout(() => {
      queue.timer = undefined;
      this.#pump(key, queue);
    }, delayMs(retryAfter));
    return true;
  }

  /** Settles a waiter once: takes it out of its queue, removes its abort listener. */
  #settleWaiter(queue: WaitQueue, waiter: Waiter, allowed: true, outcome: RateLimitResult): void;
  #settleWaiter(queue: WaitQueue, waiter: Waiter, allowed: false, outcome: unknown): void;
  #settleWaiter(queue: WaitQueue, waiter: Waiter, allowed: boolean, outcome: unknown): void {
    if (waiter.settled) return;
    waiter.settled = true;
    unlink(queue, waiter);
    this.#waiting--;
    if (waiter.onAbort !== undefined) {
      (waiter.signal as AbortSignal).removeEventListener('abort', waiter.onAbort);
      waiter.onAbort = undefined;
    }
    if (allowed) waiter.resolve(outcome as RateLimitResult);
    else waiter.reject(outcome);
  }

  #startSweeping(intervalMs: number): void {
    const self = new WeakRef(this);
    const timer = setInterval(() => {
      const limiter = self.deref();
      if (limiter === undefined) clearInterval(timer);
      else if (limiter.#sweepCursor === undefined) {
        limiter.#passSwept = 0;
        limiter.#sweepSlice(limiter.#states.entries());
      }
    }, intervalMs);
    unref(timer);
    this.#sweepTimer = timer;
  }

  /** Sweeps up to {@link SWEEP_SLICE} keys from `cursor`, then schedules the next slice. */
  #sweepSlice(cursor: Iterator<[string, State]>): void {
    this.#sliceTimer = undefined;
    let now: number;
    try {
      now = this.#now();
    } catch {
      // A clock that fails now fails decisions too, where the caller sees the error.
      this.#sweepCursor = undefined;
      return;
    }
    const strategy = this.#strategy;
    const states = this.#states;
    const mutex = this.#mutex;
    const keyLimits = this.#keyLimits;
    const locking = !this.#synchronous && mutex.size > 0;
    const tiered = keyLimits.size > 0;
    const limit = this.#limit;
    for (let visited = 0; visited < SWEEP_SLICE; visited++) {
      const next = cursor.next();
      if (next.done === true) {
        this.#sweepCursor = undefined;
        this.#sweeps++;
        if (this.#onSweep !== undefined) this.#emitSweep({ dropped: this.#passSwept, automatic: true, keys: states.size });
        return;
      }
      const [key, state] = next.value;
      if (locking && mutex.isLocked(key)) continue;
      let clear: boolean;
      try {
        clear = strategy.sweep(state, now, tiered ? (keyLimits.get(key) ?? limit) : limit);
      } catch {
        // A failing strategy fails cleanUp() for its caller; here, in a timer, end this pass.
        this.#sweepCursor = undefined;
        return;
      }
      if (clear) {
        states.delete(key);
        keyLimits.delete(key);
        this.#swept++;
        this.#passSwept++;
      }
    }
    this.#sweepCursor = cursor;
    const self = new WeakRef(this);
    const slice = setTimeout(() => {
      const limiter = self.deref();
      if (limiter !== undefined && limiter.#sweepCursor === cursor) limiter.#sweepSlice(cursor);
    }, 0);
    unref(slice);
    this.#sliceTimer = slice;
  }

  /**
   * Makes room for a new key under `maxKeys`: forgets the first clear key among the next
   * {@link EVICT_SCAN} longest-tracked ones. Returns `undefined` when it did, else the rejection
   * for the new key.
   */
  #makeRoom(now: number, limit: Limit): RateLimitResult | undefined {
    const states = this.#states;
    const strategy = this.#strategy;
    let soonest = Infinity;
    // With every key looked at live, this is when the first of them clears.
    for (let scanned = 0; scanned < EVICT_SCAN; scanned++) {
      let next = this.#evictCursor?.next();
      if (next === undefined || next.done === true) {
        this.#evictCursor = states.entries();
        next = this.#evictCursor.next();
        if (next.done === true) break;
      }
      const [key, state] = next.value;
      if (this.#mutex.isLocked(key)) continue;
      const keyLimit = this.#keyLimits.get(key) ?? this.#limit;
      if (strategy.sweep(state, now, keyLimit)) {
        states.delete(key);
        this.#keyLimits.delete(key);
        this.#evicted++;
        return undefined;
      }
      if (scanned === 0 && this.#synchronous) {
        // The first key looked at gives the estimate of when room will be made.
        soonest = (strategy.peek(key, state, now, 1, keyLimit) as RateLimitResult).resetAfter;
      }
    }
    // None was clear: the next new key goes on from here (round robin over the tracked keys;
    // restarting from the oldest would skip the Map's deleted slots again and again).
    const wait = Math.min(soonest === Infinity ? limit.windowSeconds : soonest, limit.windowSeconds);
    return {
      allowed: false,
      remaining: 0,
      retryAfter: wait > 0 ? wait : limit.windowSeconds,
      limit: limit.threshold,
      resetAfter: 0,
    };
  }

  /**
   * Reads the clock, checks the reading and keeps time monotonic: a reading earlier than the
   * latest one used counts as that one, so that no key (and no sweep) ever sees time go back.
   */
  #now(): number {
    const reading = this.#clock();
    if (typeof reading !== 'number') throw badClock(reading);
    const latest = this.#latest;
    if (reading > latest) {
      // Finite, and large enough a window still moves it: `t + windowMs > t` (false for NaN).
      if (!(reading + this.#limit.windowMs > reading) || reading === Infinity) {
        throw coarseClock(reading, this.#limit.windowMs);
      }
      this.#latest = reading;
      return reading;
    }
    if (reading !== reading || reading === -Infinity) throw badClock(reading);
    return latest;
  }

  /** The limit for `user`: its tier when `limitFor` chooses one, else the default. */
  #limitOf(user: User | string, key: string): Limit {
    const limitFor = this.#limitFor;
    if (limitFor === undefined) return this.#limit;
    const chosen = limitFor(user, key);
    if (chosen === undefined) return this.#limit;
    if (chosen === null || typeof chosen !== 'object') {
      throw typeError('limitFor()', 'a LimitOptions object or undefined', chosen);
    }
    let limit = this.#tiers.get(chosen);
    if (limit === undefined) {
      const threshold = checkPositiveInteger('limitFor().threshold', chosen.threshold);
      const windowSeconds = checkWindow('limitFor().windowSeconds', chosen.windowSeconds);
      const maxThreshold = this.#strategy.maxThreshold ?? Number.MAX_SAFE_INTEGER;
      if (threshold > maxThreshold) {
        throw rangeError('limitFor().threshold', `at most ${maxThreshold} with the ${this.#strategy.name} strategy`, threshold);
      }
      checkMaxWindow(this.#strategy, 'limitFor().windowSeconds', windowSeconds);
      limit = { threshold, windowMs: Math.round(windowSeconds * 1000), windowSeconds };
      this.#tiers.set(chosen, limit);
    }
    return limit;
  }

  /** The critical section: read the clock, then evict, check and record through the strategy. */
  #decide(user: User | string, key: string, cost: number): RateLimitResult | PromiseLike<RateLimitResult> {
    const limit = this.#limitOf(user, key);
    return this.#decideAt(key, cost, limit, this.#nowFor(limit));
  }

  /** Reads the clock for a decision under `limit` (checking its window's resolution too). */
  #nowFor(limit: Limit): number {
    const now = this.#now();
    if (limit !== this.#limit && !(now + limit.windowMs > now)) {
      throw new RateWardenRangeError(
        `Expected \`clock\` to return a number of milliseconds whose floating-point resolution is ` +
          `finer than the window (${limit.windowMs} ms), got ${describeValue(now)}`,
      );
    }
    return now;
  }

  /** Decides at `now` under `limit`: evict, check and record through the strategy. */
  #decideAt(key: string, cost: number, limit: Limit, now: number): RateLimitResult | PromiseLike<RateLimitResult> {
    if (this.#external) return this.#strategy.consume(key, undefined as State, now, cost, limit);
    const state = this.#states.get(key);
    if (this.#limitFor !== undefined) this.#noteLimit(key, limit, state !== undefined);
    if (state !== undefined) {
      return this.#strategy.consume(key, state, now, cost, limit);
    }
    // A key seen for the first time keeps its state only once a request has been allowed, so
    // that a rejected or failed first request leaves no trace.
    if (this.#states.size >= this.#maxKeys) {
      const full = this.#makeRoom(now, limit);
      if (full !== undefined) {
        this.#keyLimits.delete(key);
        return full;
      }
    } else if (this.#states.size === WARN_KEYS && !this.#warned) {
      this.#warnUnbounded();
    }
    const fresh = this.#strategy.createState(limit);
    if (this.#synchronous) {
      const result = this.#strategy.consume(key, fresh, now, cost, limit) as RateLimitResult;
      if (typeof (result as { then?: unknown }).then === 'function') {
        throw new RateWardenTypeError(
          `Expected the strategy \`${this.#strategy.name}\` (declared synchronous) to return a ` +
            'result, got a promise: declare `synchronous: false`',
          ErrorCode.NotSynchronous,
        );
      }
      if (result.allowed) this.#states.set(key, fresh);
      else this.#keyLimits.delete(key);
      return result;
    }
    // Asynchronous: the state is in the map while the decision is in flight, so that reset()
    // can forget it; it is taken out again if the request is not allowed.
    this.#states.set(key, fresh);
    const forget = (): void => {
      if (this.#states.get(key) === fresh) {
        this.#states.delete(key);
        this.#keyLimits.delete(key);
      }
    };
    let pending: PromiseLike<RateLimitResult> | RateLimitResult;
    try {
      pending = this.#strategy.consume(key, fresh, now, cost, limit);
    } catch (error) {
      forget();
      throw error;
    }
    return Promise.resolve(pending).then(
      (settled) => {
        if (!settled.allowed) forget();
        return settled;
      },
      (error: unknown) => {
        forget();
        throw error;
      },
    );
  }

  /** Records the limit applied to `key` (for sweeps), when it is not the default. */
  #noteLimit(key: string, limit: Limit, tracked: boolean): void {
    if (limit === this.#limit) {
      if (tracked) this.#keyLimits.delete(key);
    } else {
      this.#keyLimits.set(key, limit);
    }
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

  #peek(user: User | string, key: string, cost: number): RateLimitResult | PromiseLike<RateLimitResult> {
    const limit = this.#limitOf(user, key);
    return this.#peekAt(key, cost, limit, this.#nowFor(limit));
  }

  #peekAt(key: string, cost: number, limit: Limit, now: number): RateLimitResult | PromiseLike<RateLimitResult> {
    if (this.#external) return this.#strategy.peek(key, undefined, now, cost, limit);
    const state = this.#states.get(key);
    if (state === undefined && this.#states.size >= this.#maxKeys) {
      // A new key with no room: the request would be turned away unless a clear key can be
      // forgotten now (forgetting it changes no decision), as allowRequest would do.
      const full = this.#makeRoom(now, limit);
      if (full !== undefined) return full;
    }
    return this.#strategy.peek(key, state, now, cost, limit);
  }

  static {
    internals = {
      id: (limiter) => limiter.#id,
      synchronous: (limiter) => limiter.#synchronous,
      mutex: (limiter) => limiter.#mutex,
      limitOf: (limiter, user, key) => limiter.#limitOf(user, key),
      now: (limiter, limit) => limiter.#nowFor(limit),
      peek: (limiter, key, cost, limit, now) => limiter.#peekAt(key, cost, limit, now),
      consume: (limiter, key, cost, limit, now) => limiter.#decideAt(key, cost, limit, now),
      observe: (limiter, key, cost, result) => limiter.#observe(key, cost, result),
    };
  }
}

/** Slack when comparing limiter times (ms) of waits: float noise is not a longer wait. */
const WAIT_EPSILON_MS = 1e-6;

/** Checks an event name of {@link RateLimiter.on}. */
function checkEvent(event: unknown): keyof RateLimiterEvents {
  if (typeof event !== 'string') throw typeError('event', "'decision', 'sweep' or 'error'", event);
  if (event !== 'decision' && event !== 'sweep' && event !== 'error') {
    throw rangeError('event', "'decision', 'sweep' or 'error'", event);
  }
  return event;
}

/** The error of a clock reading that is not a finite number (out of line: keeps `#now` small). */
function badClock(reading: unknown): Error {
  return typeof reading !== 'number'
    ? new RateWardenTypeError(`Expected \`clock\` to return a number of milliseconds, got ${describeValue(reading)}`)
    : new RateWardenRangeError(`Expected \`clock\` to return a finite number of milliseconds, got ${describeValue(reading)}`);
}

/** The error of a clock reading so large that adding the window does not change it. */
function coarseClock(reading: number, windowMs: number): Error {
  return new RateWardenRangeError(
    'Expected `clock` to return a finite number of milliseconds whose floating-point ' +
      `resolution is finer than the window (${windowMs} ms), got ${describeValue(reading)}`,
  );
}

/** @internal Extracts and checks the key of a user. */
export function keyOf(user: unknown): string {
  if (typeof user === 'string') {
    if (user.length === 0) throw rangeError('user', 'a non-empty string', user);
    return user;
  }
  if (user === null || typeof user !== 'object') {
    throw typeError('user', 'a non-empty string or an object with a string `id`', user);
  }
  const id = (user as { id?: unknown }).id;
  if (typeof id !== 'string') throw typeError('user.id', 'a non-empty string', id);
  if (id.length === 0) throw rangeError('user.id', 'a non-empty string', id);
  return id;
}

/** @internal Extracts and checks the cost of a request. */
export function costOf(options: unknown): number {
  if (options === undefined) return 1;
  if (options === null || typeof options !== 'object') {
    throw typeError('options', 'an object or undefined', options);
  }
  const cost = (options as { cost?: unknown }).cost;
  if (cost === undefined) return 1;
  return checkPositiveInteger('cost', cost);
}

/** Checks that `strategy` has the shape of a {@link RateLimitStrategy}; returns `synchronous`. */
function checkStrategy(strategy: unknown): boolean {
  if (strategy === null || typeof strategy !== 'object') {
    throw typeError('strategy', 'an object implementing RateLimitStrategy', strategy);
  }
  const s = strategy as Record<string, unknown>;
  for (const method of ['createState', 'consume', 'peek', 'sweep'] as const) {
    if (typeof s[method] !== 'function') {
      throw typeError(`strategy.${method}`, 'a function', s[method]);
    }
  }
  const synchronous = s.synchronous; // read once: a getter cannot answer twice differently
  if (typeof synchronous !== 'boolean') {
    throw typeError('strategy.synchronous', 'a boolean', synchronous);
  }
  if (typeof s.name !== 'string') throw typeError('strategy.name', 'a string', s.name);
  const maxThreshold = s.maxThreshold;
  if (maxThreshold !== undefined && typeof maxThreshold !== 'number') {
    throw typeError('strategy.maxThreshold', 'a number or undefined', maxThreshold);
  }
  const maxWindow = s.maxWindowSeconds;
  if (maxWindow !== undefined && typeof maxWindow !== 'number') {
    throw typeError('strategy.maxWindowSeconds', 'a number or undefined', maxWindow);
  }
  return synchronous;
}

/** Checks a window against the strategy's `maxWindowSeconds`, if it has one. */
function checkMaxWindow(strategy: RateLimitStrategy<unknown>, name: string, windowSeconds: number): void {
  const max = strategy.maxWindowSeconds;
  if (max !== undefined && windowSeconds > max) {
    throw rangeError(name, `a finite number of seconds from 0.001 to ${max} with the ${strategy.name} strategy`, windowSeconds);
  }
}

/** The smallest window: one millisecond. */
const MIN_WINDOW_SECONDS = 0.001;

/**
 * Checks a window length in seconds: a finite number of at least one millisecond whose value in
 * milliseconds is finite too.
 */
function checkWindow(name: string, value: unknown): number {
  if (typeof value !== 'number') throw typeError(name, 'a finite number of seconds, at least 0.001', value);
  if (!(value >= MIN_WINDOW_SECONDS) || !Number.isFinite(value * 1000)) {
    throw rangeError(name, 'a finite number of seconds, at least 0.001', value);
  }
  return value;
}

/** @internal The error of a synchronous method called with an asynchronous strategy. */
export function notSynchronous(name: string, method: string): RateWardenTypeError {
  return new RateWardenTypeError(
    `Expected a synchronous strategy for \`${method}\`, got the asynchronous strategy ` +
      `\`${name}\`: use \`${method === 'peekSync' ? 'peek' : 'allowRequest'}\` instead`,
    ErrorCode.NotSynchronous,
  );
}
