import { performanceClock, type Clock } from './clock.js';
import {
  ErrorCode,
  RateWardenRangeError,
  RateWardenTypeError,
  checkPositiveFinite,
  checkPositiveInteger,
  describeValue,
  rangeError,
  typeError,
} from './errors.js';
import { KeyedMutex } from './keyed-mutex.js';
import { SlidingWindowLog } from './strategies/sliding-window-log.js';
import type { Limit, RateLimitResult, RateLimitStrategy } from './strategy.js';

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

/** Options of {@link RateLimiter}. */
export interface RateLimiterOptions<State = unknown> {
  /** Requests (cost units) allowed per window and key: a positive safe integer (1 to 2^53 - 1). */
  readonly threshold: number;
  /**
   * The window length in **seconds**: a finite number greater than 0; fractions are allowed
   * (`0.5` is half a second). `windowSeconds * 1000` must be finite too.
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
  /** Requests (cost units) allowed per window and key. */
  readonly threshold: number;
  /** The window length in seconds. */
  readonly windowSeconds: number;
  /** The strategy deciding requests. */
  readonly strategy: RateLimitStrategy<State>;

  readonly #limit: Limit;
  readonly #clock: Clock;
  readonly #synchronous: boolean;
  readonly #states = new Map<string, State>();
  readonly #mutex = new KeyedMutex();

  /**
   * @throws {RateWardenTypeError} (a `TypeError`) when `options` is not an object, an option has
   *   the wrong type, `strategy` lacks a method of {@link RateLimitStrategy}, or `clock` is not a
   *   function.
   * @throws {RateWardenRangeError} (a `RangeError`) when `threshold` is not a positive safe
   *   integer, or `windowSeconds` is not a finite number greater than 0 (or `windowSeconds * 1000`
   *   overflows).
   */
  constructor(options: RateLimiterOptions<State>) {
    if (options === null || typeof options !== 'object') {
      throw typeError('options', 'an object', options);
    }
    const threshold = checkPositiveInteger('threshold', options.threshold);
    const windowSeconds = checkPositiveFinite('windowSeconds', options.windowSeconds);
    const windowMs = windowSeconds * 1000;
    if (!Number.isFinite(windowMs)) {
      throw rangeError('windowSeconds', 'at most Number.MAX_VALUE / 1000', windowSeconds);
    }
    const strategy = options.strategy ?? (new SlidingWindowLog() as RateLimitStrategy<unknown>);
    checkStrategy(strategy);
    const clock = options.clock ?? performanceClock;
    if (typeof clock !== 'function') throw typeError('clock', 'a function', clock);

    this.threshold = threshold;
    this.windowSeconds = windowSeconds;
    this.strategy = strategy as RateLimitStrategy<State>;
    this.#limit = { threshold, windowMs };
    this.#clock = clock;
    this.#synchronous = strategy.synchronous;
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
   *   invalid `user` or `cost` (state unchanged), with the strategy's error if it fails (the
   *   key's lock is released, state unchanged), or with a `RangeError` if the clock returns a
   *   value that is not finite.
   */
  allowRequest(user: User | string, options?: RequestOptions): Promise<RateLimitResult> {
    let key: string;
    let cost: number;
    try {
      key = keyOf(user);
      cost = costOf(options);
    } catch (error) {
      return Promise.reject(error);
    }
    if (this.#synchronous) {
      try {
        return Promise.resolve(this.#decide(key, cost) as RateLimitResult);
      } catch (error) {
        return Promise.reject(error);
      }
    }
    return this.#mutex.runExclusive(key, () => this.#decide(key, cost));
  }

  /**
   * The same decision as {@link allowRequest}, returned directly, for synchronous strategies.
   *
   * @throws {RateWardenTypeError} with code `ERR_RATEWARDEN_NOT_SYNCHRONOUS` when the strategy is
   *   asynchronous; a `TypeError` / `RangeError` for an invalid `user` or `cost`; a `RangeError`
   *   when the clock returns a value that is not finite. State is unchanged in every case.
   */
  allowRequestSync(user: User | string, options?: RequestOptions): RateLimitResult {
    if (!this.#synchronous) throw notSynchronous(this.strategy.name, 'allowRequestSync');
    const key = keyOf(user);
    const cost = costOf(options);
    return this.#decide(key, cost) as RateLimitResult;
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
    let key: string;
    let cost: number;
    try {
      key = keyOf(user);
      cost = costOf(options);
    } catch (error) {
      return Promise.reject(error);
    }
    if (this.#synchronous) {
      try {
        return Promise.resolve(this.#peek(key, cost) as RateLimitResult);
      } catch (error) {
        return Promise.reject(error);
      }
    }
    return this.#mutex.runExclusive(key, () => this.#peek(key, cost));
  }

  /**
   * {@link peek}, returned directly, for synchronous strategies.
   * @throws as {@link allowRequestSync}.
   */
  peekSync(user: User | string, options?: RequestOptions): RateLimitResult {
    if (!this.#synchronous) throw notSynchronous(this.strategy.name, 'peekSync');
    const key = keyOf(user);
    return this.#peek(key, costOf(options)) as RateLimitResult;
  }

  /**
   * Forgets `user`'s state now: its next request is decided as a first request. A decision
   * already in flight for the key (asynchronous strategies) completes on the state it had read.
   *
   * @returns whether the key was tracked.
   * @throws {RateWardenTypeError} / {@link RateWardenRangeError} for an invalid `user`.
   */
  reset(user: User | string): boolean {
    return this.#states.delete(keyOf(user));
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
    const strategy = this.strategy;
    const limit = this.#limit;
    const states = this.#states;
    const mutex = this.#mutex;
    let dropped = 0;
    for (const [key, state] of states) {
      if (mutex.isLocked(key)) continue;
      if (strategy.sweep(state, now, limit)) {
        states.delete(key);
        dropped++;
      }
    }
    return dropped;
  }

  /** Reads the clock and checks the reading. */
  #now(): number {
    const now = this.#clock();
    if (typeof now !== 'number' || !Number.isFinite(now)) {
      throw new RateWardenRangeError(
        `Expected \`clock\` to return a finite number of milliseconds, got ${describeValue(now)}`,
      );
    }
    return now;
  }

  /** The critical section: read the clock, then evict, check and record through the strategy. */
  #decide(key: string, cost: number): RateLimitResult | PromiseLike<RateLimitResult> {
    const now = this.#now();
    const state = this.#states.get(key);
    if (state !== undefined) {
      return this.strategy.consume(key, state, now, cost, this.#limit);
    }
    // A key seen for the first time is stored only once a request has been allowed, so that a
    // rejected or failed first request leaves no trace.
    const fresh = this.strategy.createState(this.#limit);
    const result = this.strategy.consume(key, fresh, now, cost, this.#limit);
    if (this.#synchronous) {
      if ((result as RateLimitResult).allowed) this.#states.set(key, fresh);
      return result;
    }
    return Promise.resolve(result).then((settled) => {
      if (settled.allowed) this.#states.set(key, fresh);
      return settled;
    });
  }

  #peek(key: string, cost: number): RateLimitResult | PromiseLike<RateLimitResult> {
    const now = this.#now();
    return this.strategy.peek(key, this.#states.get(key), now, cost, this.#limit);
  }
}

/** Extracts and checks the key of a user. */
function keyOf(user: unknown): string {
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

/** Extracts and checks the cost of a request. */
function costOf(options: unknown): number {
  if (options === undefined) return 1;
  if (options === null || typeof options !== 'object') {
    throw typeError('options', 'an object or undefined', options);
  }
  const cost = (options as { cost?: unknown }).cost;
  if (cost === undefined) return 1;
  return checkPositiveInteger('cost', cost);
}

/** Checks that `strategy` has the shape of a {@link RateLimitStrategy}. */
function checkStrategy(strategy: unknown): void {
  if (strategy === null || typeof strategy !== 'object') {
    throw typeError('strategy', 'an object implementing RateLimitStrategy', strategy);
  }
  const s = strategy as Record<string, unknown>;
  for (const method of ['createState', 'consume', 'peek', 'sweep'] as const) {
    if (typeof s[method] !== 'function') {
      throw typeError(`strategy.${method}`, 'a function', s[method]);
    }
  }
  if (typeof s.synchronous !== 'boolean') {
    throw typeError('strategy.synchronous', 'a boolean', s.synchronous);
  }
  if (typeof s.name !== 'string') throw typeError('strategy.name', 'a string', s.name);
}

function notSynchronous(name: string, method: string): RateWardenTypeError {
  return new RateWardenTypeError(
    `Expected a synchronous strategy for \`${method}\`, got the asynchronous strategy ` +
      `\`${name}\`: use \`${method === 'peekSync' ? 'peek' : 'allowRequest'}\` instead`,
    ErrorCode.NotSynchronous,
  );
}
