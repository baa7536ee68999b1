/**
 * `RateLimiter`, the class users call: a facade that validates its options once, builds the
 * units that do the work, and reads like a table of contents of them:
 *
 * - the options (`./rate-limiter-options.ts`), the strategy's contract (`./strategy-shape.ts`),
 *   the quota ({@link createQuota}, `./quota.ts`) and the tiers (`./tiers.ts`);
 * - the clock (`./clock.ts`), read once per decision, monotonic;
 * - the key table (`./key-table.ts`): per-key state, sweeping, `maxKeys`;
 * - the blocks (`./blocks.ts`): the keys refused for a while, in memory, apart from the state;
 * - the decider (`./decider.ts`): the one core operation (blocks included), and the per-key mutex;
 * - the wait queues (`./wait-queue.ts`), the listeners and counters (`./observer.ts`), and
 *   request parsing (`./request.ts`).
 *
 * One concern, the public surface: of its ~700 lines, more than half are the TSDoc of the public
 * methods (units, ranges, errors); each method's code is a few lines handing over to a unit above.
 *
 * @module
 */
import { Blocks } from './blocks.js';
import { MonotonicClock, performanceClock } from './clock.js';
import { Decider, penaltyAsync, penaltySync, registerDecider, reserveAsync, reserveSync, type Keeper } from './decider.js';
import { reservation, syncReservation, type Reservation, type SyncReservation } from './reservation.js';
import { RateWardenTypeError, checkKnownKeys, checkObject, checkPositiveInteger, notSynchronous, optionalFunction, optionalLabel, typeError } from './errors.js';
import { checkStrategy } from './strategy-shape.js';
import { KeyTable } from './key-table.js';
import { Observer, type RateLimiterEvents, type RateLimiterStats } from './observer.js';
import { buildQuota, checkBlockSeconds, checkSeconds } from './quota.js';
import { RATE_LIMITER_OPTIONS, type RateLimiterOptions } from './rate-limiter-options.js';
import { costOf, keyOf, shadowOf, waitOptionsOf, type RequestOptions, type User, type WaitOptions } from './request.js';
import type { RateLimitResult } from './result.js';
import { isRefunding, type CachingStore, type RateLimitStore, type RefundingStore } from './store.js';
import { SlidingWindowLog } from './strategies/sliding-window-log.js';
import type { RateLimitStrategy } from './strategy.js';
import { Tiers } from './tiers.js';
import { onGrid } from './time.js';
import { WaitQueues } from './wait-queue.js';

export type { RateLimiterOptions } from './rate-limiter-options.js';

/** A limiter of any state type (the type of a group member's `limiter`). */
export type AnyLimiter = RateLimiter<unknown>;

/**
 * A per-key rate limiter: each key (user) may make at most `threshold` requests per rolling
 * window of `windowSeconds`, decided by a pluggable strategy, by default the exact sliding-window
 * log ({@link SlidingWindowLog}).
 *
 * The limiter holds a `Map<string, State>` of per-key state (for the default strategy, the
 * timestamps of the allowed requests) and a per-key async mutex. A decision — evict, check,
 * record — is atomic per key: with an in-memory {@link RateLimitStrategy} it runs to completion in
 * one synchronous step (nothing else can interleave in JavaScript, so no lock is taken); with a
 * {@link RateLimitStore} that awaits, it runs under the key's mutex, FIFO, and the clock is read
 * after the lock is acquired (the decisions of a store that decides atomically itself, as Redis
 * in one script, do not wait for each other, only for a `RateLimitGroup` holding the key).
 * Different keys never wait for each other.
 *
 * Memory: state is kept for every key seen until {@link cleanUp} finds its window clear (or
 * {@link reset} forgets it). Call `cleanUp()` periodically when keys are many and short-lived,
 * or set `sweepIntervalSeconds` or `maxKeys`.
 *
 * @example
 * ```ts
 * const limiter = new RateLimiter({ threshold: 300, windowSeconds: 60 });
 * const { allowed, remaining, retryAfter } = await limiter.allowRequest('alice');
 * if (!allowed) console.log(`retry in ${retryAfter} s`);
 * ```
 *
 * @typeParam State - the per-key state of an in-memory strategy.
 */
export class RateLimiter<State = unknown> {
  readonly #strategy: RateLimitStrategy<State> | RateLimitStore;
  readonly #decider: Decider<State>;
  readonly #waits: WaitQueues;
  readonly #name: string | undefined;

  /**
   * @throws {RateWardenTypeError} (a `TypeError`) when `options` is not an object, has a key that
   *   is not one of its options (code `ERR_RATEWARDEN_UNKNOWN_OPTION`, naming the key and, when
   *   one is close, the option meant: ``Unknown option `maxkeys` in RateLimiter options: did you
   *   mean `maxKeys`?``), an option has the wrong type, `strategy` is neither a {@link RateLimitStrategy} nor a
   *   {@link RateLimitStore} (a member missing or of the wrong type), or `clock` is not a
   *   function.
   * @throws {RateWardenRangeError} (a `RangeError`) when `threshold` or `windowSeconds` is out of
   *   range (see {@link createQuota}: a positive safe integer up to the strategy's
   *   `maxThreshold`; a whole number of milliseconds, in seconds, from 0.001 up to 10^9 and its
   *   `maxWindowSeconds`; `threshold × windowMs` up to its `maxThresholdTimesWindowMs`), or
   *   `maxKeys` or `sweepIntervalSeconds` is, or `name` or `tier` is the empty string (each a
   *   non-empty string or `undefined`; another type is a `RateWardenTypeError`), or
   *   `blockSeconds` is neither 0 nor a whole number of milliseconds from 0.001 to 10^9 seconds.
   * @throws {RateWardenTypeError} naming `blockSeconds` when it is above 0 and `strategy` is a
   *   store that does not block keys (one without `blocks: true` and the `RefundingStore`
   *   methods): with a store, the store applies blocks inside its decisions. (A tier of
   *   `limitFor` with `blockSeconds` on such a store fails its decisions the same way, naming
   *   `limitFor().blockSeconds`.)
   */
  constructor(options: RateLimiterOptions<State>) {
    checkObject('options', options, 'an object');
    checkKnownKeys(options, RATE_LIMITER_OPTIONS);
    const strategy = options.strategy === undefined ? (new SlidingWindowLog() as unknown as RateLimitStrategy<State>) : options.strategy;
    const shape = checkStrategy(strategy);
    const quota = buildQuota(options, shape);
    const clock = options.clock === undefined ? performanceClock : options.clock;
    if (typeof clock !== 'function') throw typeError('clock', 'a function', clock);
    const limitFor = optionalFunction('limitFor', options.limitFor);
    const maxKeys = options.maxKeys === undefined ? Infinity : options.maxKeys;
    if (maxKeys !== Infinity) checkPositiveInteger('maxKeys', maxKeys);
    const sweep = options.sweepIntervalSeconds;
    if (sweep !== undefined) checkSeconds('sweepIntervalSeconds', sweep);

    this.#strategy = strategy;
    const tiers = limitFor === undefined ? undefined : new Tiers(limitFor, quota, shape);
    const time = new MonotonicClock(clock);
    const name = optionalLabel('name', options.name);
    this.#name = name;
    const observer = new Observer(name);
    let keeper: Keeper<State>;
    // Blocks in memory are the limiter's, apart from the strategy's state; a store keeps its own.
    let blocks: Blocks | undefined;
    if (shape.inMemory) {
      const blocked = new Blocks();
      blocks = blocked;
      const table = new KeyTable(strategy as RateLimitStrategy<State>, {
        maxKeys,
        defaultQuota: quota,
        tiered: tiers !== undefined,
        onSweep: (info) => {
          // The sweep has just read the clock: the blocks expired by then go too.
          blocked.sweep(onGrid(time.latest));
          observer.swept(info);
        },
      });
      if (sweep !== undefined) table.startSweeping(sweep * 1000, clockReader(time, quota.windowMs));
      keeper = { table };
    } else {
      keeper = { store: strategy as RateLimitStore };
    }
    const decider = new Decider<State>({ keeper, quota, clock: time, tiers, observer, name: shape.name, atomic: shape.atomic, blocks });
    this.#decider = decider;
    this.#waits = new WaitQueues(decider);
    const waits = this.#waits;
    decider.refunds.wake = (key) => {
      waits.retryNow(key);
    };
    registerDecider(this, decider);
  }

  /** The `name` option: the limit's label in `decision` listeners' `DecisionInfo`; `undefined` when none. */
  get name(): string | undefined {
    return this.#name;
  }

  /** Requests (cost units) allowed per window and key (read-only). */
  get threshold(): number {
    return this.#decider.quota.threshold;
  }

  /** The window length in seconds (read-only). */
  get windowSeconds(): number {
    return this.#decider.quota.windowSeconds;
  }

  /** The strategy or store deciding requests (read-only). */
  get strategy(): RateLimitStrategy<State> | RateLimitStore {
    return this.#strategy;
  }

  /** Number of keys tracked now (keys with state that {@link cleanUp} has not dropped; 0 with a store). */
  get size(): number {
    return this.#decider.table?.size ?? 0;
  }

  /**
   * Decides one request for `user`: allowed and recorded, or rejected with nothing recorded.
   * Never rejects for a denial: a denial is a result with `allowed: false`.
   *
   * @param user - the key: a non-empty string, or a {@link User} whose `id` is one.
   * @param options - {@link RequestOptions}: `cost` (default 1), `shadow` (default `false`).
   * @returns a promise of the {@link RateLimitResult}.
   * @throws never synchronously. The promise rejects with a `TypeError` / `RangeError` for an
   *   invalid `user` or `cost`, a `shadow` that is not a boolean, or an unknown key in `options`
   *   (state unchanged); with the store's error if it fails (the key's
   *   lock is released); with a `TypeError` if the clock returns a non-number, a `RangeError` if
   *   it returns NaN, ±Infinity or a reading so large that adding the window does not change it.
   *
   * The limiter's time never runs backwards: a clock reading earlier than the latest one used
   * counts as that latest one, so after the clock steps back, time stands still (and waits such
   * as `retryAfter` are in the limiter's time) until it catches up.
   *
   * A store must not call back into the same limiter for the same key from `consume`: that
   * would wait for its own lock (for an atomic store, when a group waits for the key).
   */
  allowRequest(user: User | string, options?: RequestOptions): Promise<RateLimitResult> {
    try {
      // The common case, a string key and no options, skips the parsing (as allowRequestSync
      // does); everything else is checked by `keyOf` and `costOf`.
      if (typeof user === 'string' && options === undefined && user !== '') return this.#allow(user, user, 1, false);
      return this.#allow(user, keyOf(user), costOf(options), shadowOf(options));
    } catch (error) {
      // Bad input, a failing clock or strategy, or `this` not a RateLimiter.
      return Promise.reject(error);
    }
  }

  /**
   * {@link allowRequest} on a checked key and cost. In memory: decided now, unless a group holds
   * the key between its check and its record (a group with a store): then once the group is
   * done. May throw (its caller turns that into a rejection).
   */
  #allow(user: User | string, key: string, cost: number, shadow: boolean): Promise<RateLimitResult> {
    const decider = this.#decider;
    if (decider.table !== undefined && !decider.mutex.isHeld(key)) return Promise.resolve(decider.decideSync(user, key, cost, shadow));
    return decider.decideAsync(user, key, cost, true, undefined, shadow);
  }

  /**
   * The same decision as {@link allowRequest}, returned directly, for in-memory strategies.
   *
   * @throws {RateWardenTypeError} with code `ERR_RATEWARDEN_NOT_SYNCHRONOUS` when the strategy is
   *   a store; a `TypeError` / `RangeError` for an invalid `user` or `cost` (or an unknown key in
   *   `options`); a `RangeError`
   *   when the clock returns a value that is not finite. State is unchanged in every case.
   */
  allowRequestSync(user: User | string, options?: RequestOptions): RateLimitResult {
    const decider = this.#decider;
    if (decider.table === undefined) throw notSynchronous(decider.name, 'allowRequestSync');
    // The common case, a string key and no options, skips the parsing.
    if (typeof user === 'string' && options === undefined && user !== '') return decider.decideSync(user, user, 1);
    return decider.decideSync(user, keyOf(user), costOf(options), shadowOf(options));
  }

  /**
   * Decides one request for `user` exactly as {@link allowRequest} does (the same counting,
   * `decision` listeners, shadow flag and tiers) and returns it as a {@link Reservation}: the
   * result, its `cost`, and `refund(units?)`, which gives back what the decision took — after a
   * successful login, a request that turned out not to count, a cancelled job. Decide first and
   * refund after (rather than check first and record after): the limit then holds however many
   * requests run at once. Go's `Reservation.Cancel()` is the model; it replaces
   * rate-limiter-flexible's `reward(key, points)` and express-rate-limit's decrement, and gives
   * back only what this decision recorded. See {@link Reservation} for what a refund does per
   * strategy (exact for the log and the window strategies, never more permissive for the token
   * bucket and GCRA).
   *
   * @param user - the key: a non-empty string, or a {@link User} whose `id` is one.
   * @param options - {@link RequestOptions}: `cost` (default 1), `shadow` (default `false`).
   * @returns a promise of the {@link Reservation}.
   * @throws never synchronously. Rejects as {@link allowRequest}, and with a `TypeError` naming
   *   the strategy when it has no `ticket` and `refund` (a strategy of your own: see
   *   {@link RateLimitStrategy}), or naming the store when it is not a {@link RefundingStore}
   *   (nothing decided).
   *
   * @example
   * ```ts
   * const failures = new RateLimiter({ threshold: 5, windowSeconds: 900 });
   * const attempt = await failures.reserve(`${username}:${ip}`);
   * if (!attempt.allowed) return tooManyAttempts(attempt.retryAfter);
   * if (await passwordMatches(username, password)) await attempt.refund(); // only failures count
   * ```
   */
  reserve(user: User | string, options?: RequestOptions): Promise<Reservation> {
    try {
      const key = keyOf(user);
      const cost = costOf(options);
      const shadow = shadowOf(options);
      const decider = this.#decider as Decider<unknown>;
      if (decider.table === undefined) return reserveAsync(decider, user, key, cost, shadow).then((r) => reservation(decider, key, r, cost));
      // In memory: decided now, unless a group holds the key between its check and its record.
      if (!decider.mutex.isHeld(key)) return Promise.resolve(reservation(decider, key, reserveSync(decider, user, key, cost, shadow), cost));
      return decider.locked(key, () => reservation(decider, key, reserveSync(decider, user, key, cost, shadow), cost));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * {@link reserve}, returned directly, for in-memory strategies: a {@link SyncReservation}.
   *
   * @throws {RateWardenTypeError} with code `ERR_RATEWARDEN_NOT_SYNCHRONOUS` when the strategy is
   *   a store; a `TypeError` naming the strategy when it cannot refund; otherwise as
   *   {@link allowRequestSync}. State is unchanged in every case.
   */
  reserveSync(user: User | string, options?: RequestOptions): SyncReservation {
    const decider = this.#decider as Decider<unknown>;
    if (decider.table === undefined) throw notSynchronous(decider.name, 'reserveSync');
    const key = keyOf(user);
    const cost = costOf(options);
    const shadow = shadowOf(options);
    return syncReservation(decider, key, reserveSync(decider, user, key, cost, shadow), cost);
  }

  /**
   * Records `points` units against `user` now **without asking** (rate-limiter-flexible's
   * `penalty(key, points)`): an abuse signal from elsewhere. Recorded even when the limit is
   * exhausted. Not a decision: not counted in `stats()`, no `decision` event.
   *
   * Per strategy: the log records `points` entries now and keeps only its newest `threshold`
   * (which decide every request exactly as all of them would); the fixed window and the
   * sliding-window counter add `points` to the current window's count; the token bucket takes
   * `points` tokens and may go into debt (down to `−threshold` tokens); GCRA moves its TAT to
   * `max(TAT, now) + points × T` (at most two windows ahead). So afterwards `retryAfter` and
   * `resetAfter` may exceed the window. A key not tracked is tracked (under `maxKeys`, a clear
   * key is forgotten to make room). With a store: the store's `penalty`, under the key's lock.
   *
   * @param user - the key: a non-empty string, or a {@link User} whose `id` is one.
   * @param points - a positive safe integer, at most the key's `threshold` (its tier's).
   *   @default 1
   * @returns a promise of what a {@link peek} of cost 1 reports right after.
   * @throws never synchronously. Rejects with a `TypeError` naming `points` when it is not a
   *   number, a `RangeError` naming `points` when it is not an integer from 1 to the threshold,
   *   a `TypeError` naming the strategy (or store) when it cannot record penalties, a
   *   `RangeError` when `maxKeys` keys are tracked and none looked at is clear, or as
   *   {@link allowRequest} (nothing recorded in every case).
   */
  penalty(user: User | string, points?: number): Promise<RateLimitResult> {
    try {
      const key = keyOf(user);
      const checked = points === undefined ? 1 : checkPositiveInteger('points', points);
      const decider = this.#decider as Decider<unknown>;
      if (decider.table === undefined) return penaltyAsync(decider, user, key, checked);
      if (!decider.mutex.isHeld(key)) return Promise.resolve(penaltySync(decider, user, key, checked));
      return decider.locked(key, () => penaltySync(decider, user, key, checked));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * {@link penalty}, returned directly, for in-memory strategies. On a key that a group holds
   * between its check and its record, the group's request counts as recorded first.
   *
   * @throws {RateWardenTypeError} with code `ERR_RATEWARDEN_NOT_SYNCHRONOUS` when the strategy is
   *   a store; otherwise as {@link penalty} rejects.
   */
  penaltySync(user: User | string, points?: number): RateLimitResult {
    const decider = this.#decider as Decider<unknown>;
    if (decider.table === undefined) throw notSynchronous(decider.name, 'penaltySync');
    const key = keyOf(user);
    const checked = points === undefined ? 1 : checkPositiveInteger('points', points);
    return penaltySync(decider, user, key, checked);
  }

  /**
   * Whether a request by `user` of `cost` units (default 1) would be allowed now, without
   * recording anything. The result's `remaining` and `resetAfter` are as they stand before the
   * request (a following {@link allowRequest} reports them after recording it); `retryAfter` is
   * as {@link allowRequest} would report it. With a store that is not atomic, it waits for the
   * decisions already queued on the key.
   *
   * @throws never synchronously; rejects as {@link allowRequest} does.
   */
  peek(user: User | string, options?: RequestOptions): Promise<RateLimitResult> {
    try {
      const key = keyOf(user);
      const cost = costOf(options);
      // Checked as `allowRequest` checks it (and the group's `peek`), though a peek counts nothing.
      shadowOf(options);
      const decider = this.#decider;
      if (decider.table !== undefined) return Promise.resolve(decider.checkSync(user, key, cost));
      return decider.decideAsync(user, key, cost, false);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * {@link peek}, returned directly, for in-memory strategies.
   * @throws as {@link allowRequestSync}.
   */
  peekSync(user: User | string, options?: RequestOptions): RateLimitResult {
    const decider = this.#decider;
    if (decider.table === undefined) throw notSynchronous(decider.name, 'peekSync');
    const key = keyOf(user);
    const cost = costOf(options);
    shadowOf(options);
    return decider.checkSync(user, key, cost);
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
   * removed, and an aborted waiter consumes nothing. With a store, an attempt already sent to
   * the store when the signal aborts completes there: if it is allowed, that unit is recorded
   * (the promise has rejected all the same). Peers: limiter's `removeTokens` takes no signal (its
   * open issue #33, "cancel removeTokens()"), nor does rate-limiter-flexible's
   * `RateLimiterQueue.removeTokens`; bottleneck can only drop every waiting job at once
   * (`stop({ dropWaitingJobs })`; its issue #60); p-queue takes a per-task `signal`, but throttles
   * a whole queue, not per key. Go's `rate.Limiter.Wait(ctx)` is the model here: it returns when
   * the context is cancelled, and at once when the wait would outlast the context's deadline, as
   * `maxWaitSeconds` does.
   *
   * @param user - the key: a non-empty string, or a {@link User} whose `id` is one.
   * @param options - {@link WaitOptions}: `signal` (default none), `maxWaitSeconds` (in
   *   **seconds**, default `Infinity`), `cost` (default 1).
   * @returns a promise of the {@link RateLimitResult} of the attempt that was allowed.
   * @throws never synchronously. The promise rejects with
   *   - `signal.reason` when the signal aborts (or had aborted at the call);
   *   - a {@link RateWardenWaitError} (a `RangeError`, code `ERR_RATEWARDEN_WAIT_TOO_LONG`) at
   *     once, without waiting, when `cost` exceeds the quota's threshold (its `retryAfter` is
   *     `Infinity`), or as soon as the limiter can tell from `retryAfter` that the slot comes
   *     later than `maxWaitSeconds` after the call (for a waiter queued behind others, when the
   *     first of them is due later than that);
   *   - a `TypeError` / `RangeError` naming the option for an invalid `user`, `cost`, `signal`
   *     or `maxWaitSeconds`, or an unknown key in `options`;
   *   - whatever a decision rejects with ({@link allowRequest}): a failing store or clock (the
   *     next waiter then tries).
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
      return this.#waits.wait(user, keyOf(user), waitOptionsOf(options));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Forgets `user`'s state now, and lifts its block (in memory): its next request is decided
   * as a first request. A
   * {@link waitForSlot} caller waiting for the key's next slot tries again at once. With a store,
   * only what the store keeps in this process is dropped (a {@link CachingStore}'s
   * `forget(key)`: the Redis strategies' block cache entry); to forget the shared state, delete the key in the store (for
   * Redis, its `redisKey(id)`), or call {@link delete}.
   *
   * @returns whether the key was tracked or blocked.
   * @throws {RateWardenTypeError} / {@link RateWardenRangeError} for an invalid `user`.
   */
  reset(user: User | string): boolean {
    const key = keyOf(user);
    const decider = this.#decider;
    const tracked = decider.table?.forget(key) ?? false;
    const unblocked = decider.unblock(key);
    const store = decider.store as Partial<CachingStore> | undefined;
    if (typeof store?.forget === 'function') store.forget(key);
    this.#waits.retryNow(key);
    return tracked || unblocked;
  }

  /**
   * Blocks `user` for `seconds` from now: every decision on its key is refused until then,
   * recording nothing, with `remaining: 0` and `retryAfter` the block's remaining time (plus
   * whatever the strategy would still make the request wait at the block's end). Replaces any
   * block the key had, longer or shorter (a refusal under `blockSeconds` or an earlier call). A
   * key need not have been seen. {@link reset} or {@link delete} lift the block.
   *
   * In memory, the block is kept by the limiter apart from the key's state, and dropped once
   * expired. With a store, the store keeps it (`RefundingStore.block`, atomic with the key's
   * decisions; for Redis, shared by every process).
   *
   * rate-limiter-flexible's `block(key, secDuration)`; @fastify/rate-limit's `ban`.
   *
   * @param user - the key: a non-empty string, or a {@link User} whose `id` is one.
   * @param seconds - how long, in **seconds**: a whole number of milliseconds from 0.001 to
   *   10^9 (as `blockSeconds`, but not 0).
   * @returns a promise that resolves once the block is in place.
   * @throws never synchronously. The promise rejects with a `TypeError` / `RangeError` naming
   *   `user` or `seconds` for invalid input; a {@link RateWardenTypeError} naming the store when it
   *   cannot block keys (not a `RefundingStore`); the store's error if it fails; a clock's error
   *   as {@link allowRequest}. Nothing is changed then.
   *
   * @example
   * ```ts
   * // Abuse reported elsewhere: refuse this client for 15 minutes.
   * await limiter.block(clientIp, 15 * 60);
   * ```
   */
  block(user: User | string, seconds: number): Promise<void> {
    try {
      const key = keyOf(user);
      const ms = checkBlockSeconds('seconds', seconds, false);
      const decider = this.#decider;
      if (decider.table !== undefined) {
        decider.block(key, decider.now(decider.quota), ms);
        return Promise.resolve();
      }
      const store = this.#refunding('block');
      const quota = decider.quotaFor(user, key);
      return decider.onKey(key, () => store.block(key, decider.now(quota), ms, quota)).then(() => undefined);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * {@link block}, done at once, for in-memory strategies.
   *
   * @throws {RateWardenTypeError} with code `ERR_RATEWARDEN_NOT_SYNCHRONOUS` when the strategy is
   *   a store (use {@link block}); a `TypeError` / `RangeError` naming `user` or `seconds` for
   *   invalid input; a clock's error as {@link allowRequestSync}. Nothing is changed then.
   */
  blockSync(user: User | string, seconds: number): void {
    const decider = this.#decider;
    if (decider.table === undefined) throw notSynchronous(decider.name, 'blockSync');
    const key = keyOf(user);
    const ms = checkBlockSeconds('seconds', seconds, false);
    decider.block(key, decider.now(decider.quota), ms);
  }

  /**
   * Forgets `user` everywhere: its next request is decided as a first request. In memory, as
   * {@link reset} (its state and its block). With a store, the store's shared state and block
   * too (`RefundingStore.delete`; for Redis, the key's entries, for every process), then what the
   * store keeps in this process (a {@link CachingStore}'s `forget`). A {@link waitForSlot} caller
   * waiting for the key's next slot tries again at once.
   *
   * rate-limiter-flexible's `delete(key)`.
   *
   * @param user - the key: a non-empty string, or a {@link User} whose `id` is one.
   * @returns a promise of whether anything was there (state or a block in force).
   * @throws never synchronously. The promise rejects with a `TypeError` / `RangeError` for an
   *   invalid `user`; a {@link RateWardenTypeError} naming the store when it cannot delete keys
   *   (not a `RefundingStore`); the store's error if it fails (what this process keeps for the
   *   key is then kept too).
   */
  delete(user: User | string): Promise<boolean> {
    try {
      const key = keyOf(user);
      const decider = this.#decider;
      if (decider.table !== undefined) return Promise.resolve(this.reset(key));
      const store = this.#refunding('delete');
      return decider.onKey(key, () => store.delete(key)).then((deleted) => {
        this.reset(key);
        return deleted;
      });
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * The store, when it can do `operation` (a `RefundingStore`).
   * @throws {RateWardenTypeError} naming the store otherwise.
   */
  #refunding(operation: string): RefundingStore {
    const store = this.#decider.store as RateLimitStore;
    if (isRefunding(store)) return store;
    throw new RateWardenTypeError(
      `Expected a store that can ${operation} keys (a RefundingStore, with \`${operation}\`) for \`${operation}\`, got the store \`${this.#decider.name}\``,
    );
  }

  /**
   * Sweeps every key: asks the strategy to drop what has expired now, and forgets each key whose
   * window is clear (its next request is decided exactly as it would have been); drops the
   * blocks that have expired. Mutex entries
   * need no sweep: they exist only while a decision holds or waits for a key's lock.
   *
   * Runs synchronously over all keys: O(number of keys).
   *
   * @returns how many keys were dropped (always 0 with a store, for which nothing is swept: no
   *   sweep is counted or published).
   * @throws a `RangeError` if the clock returns a value that is not finite (nothing dropped).
   */
  cleanUp(): number {
    const decider = this.#decider;
    const now = decider.now(decider.quota);
    return decider.table?.cleanUp(now) ?? 0;
  }

  /**
   * Stops the automatic sweep, if any (see `sweepIntervalSeconds`). Decisions keep working; only
   * the timers stop. Safe to call more than once. Callers of {@link waitForSlot} keep waiting
   * (end their waits with their signals).
   */
  close(): void {
    this.#decider.table?.stopSweeping();
  }

  /** {@link close}, for `using limiter = new RateLimiter(...)`. */
  [Symbol.dispose](): void {
    this.close();
  }

  /**
   * Keys forgotten by sweeps since the limiter was created: by {@link cleanUp} and by the
   * automatic sweep (the same count as `stats().sweptKeys`).
   */
  get sweptKeys(): number {
    return this.#decider.table?.sweptKeys ?? 0;
  }

  /**
   * The limiter's counters, as a fresh plain object (a snapshot): decisions `allowed` and
   * `rejected` (of which `shadowRejected` were shadow decisions), `keys` tracked now, `sweeps` completed and `sweptKeys` dropped by them,
   * `evictedKeys` forgotten under `maxKeys`, callers `waiting` in {@link waitForSlot}, keys
   * `blocked` now. See {@link RateLimiterStats}.
   *
   * Always on, and cheap enough to leave on: a decision costs one integer increment more; the
   * snapshot is built only when asked for. Poll it for metrics (a Prometheus scrape, a log line
   * a minute), and take differences between snapshots for rates.
   */
  stats(): RateLimiterStats {
    const { observer, table } = this.#decider;
    return {
      allowed: observer.allowed,
      rejected: observer.rejected,
      shadowRejected: observer.shadowRejected,
      keys: table?.size ?? 0,
      sweeps: table?.sweeps ?? 0,
      sweptKeys: table?.sweptKeys ?? 0,
      evictedKeys: table?.evictedKeys ?? 0,
      waiting: this.#waits.waiting,
      blocked: this.#blocked(),
    };
  }

  /** Keys blocked now, in memory: the clock is read (a failing clock: as of the latest reading). */
  #blocked(): number {
    const decider = this.#decider;
    if (decider.blocks === undefined || decider.blocks.size === 0) return 0;
    try {
      decider.now(decider.quota);
    } catch {
      // stats() never throws: count at the latest reading.
    }
    return decider.blockedKeys();
  }

  /**
   * Listens to the limiter's events (see {@link RateLimiterEvents}):
   * - `'decision'`: `(key, result, cost, info)`, after each decision counted in {@link stats}, in the
   *   order of the decisions of a key, synchronously, before the caller gets the result;
   * - `'sweep'`: `({ dropped, automatic, keys })`, after each `cleanUp()` and each full pass of
   *   the automatic sweep (never with a store, which keeps no key here);
   * - `'error'`: `(error)`, with what a `decision` or `sweep` listener threw.
   *
   * While no `decision` listener is registered, deciding costs one check of a field more; with
   * listeners, it costs their calls. Keep listeners cheap: they run inside every decision (with
   * a store that is not atomic, while the key's lock is held). A listener added twice is called
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
    this.#decider.observer.on(event, listener);
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
    return this.#decider.observer.off(event, listener);
  }
}

/**
 * The automatic sweep's reading of the clock. Made here, outside the constructor, so that the
 * timer holds the clock and nothing else: a closure made in the constructor would share its
 * scope with the listeners' (through the observer), and a listener that refers to the limiter
 * would then keep an abandoned limiter, and its timer, alive.
 */
function clockReader(time: MonotonicClock, windowMs: number): () => number {
  return () => time.read(windowMs);
}
