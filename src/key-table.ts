/**
 * The key table: each tracked key's state for an in-memory strategy (`Map<string, State>`), the
 * quota last applied to keys under a tier, and forgetting keys whose window is clear — by
 * `cleanUp()`, by the incremental automatic sweep, and to make room under `maxKeys` — by
 * **one** test (`#isClear`), so the three treat tiers alike. Room under `maxKeys` is found
 * before a decision and made only once the decision allows, so that a rejected request (or a
 * rejected group, {@link KeyTable.check}) forgets no key. It also
 * decides on its keys (the in-memory half of the limiter's one core operation), since only it
 * knows whether a key is new, and holds the reservations of groups awaiting their stores
 * ({@link KeyTable.reserve}), which every decision on the table accounts for.
 *
 * Why one file of about 970 lines (half of it comments): the `maxKeys` room search (a round robin with a look-ahead,
 * and the exact wait until the soonest key clears, issue 11) reads and writes the same map, the
 * same cursor and the same per-key quotas as the sweep and the decisions, under the same
 * invariant (a key is forgotten only by `#forgetIfClear`, only when a decision allows); a
 * group's reservations (issue 21) are counted by that same search and by every decision. Moving
 * the search into its own module behind an interface to the map is the next split to make; it
 * was left for later so as not to move code that the attack fixes had just changed.
 *
 * @module
 */
import { RateWardenRangeError, RateWardenTypeError, ErrorCode } from './errors.js';
import type { SweepInfo } from './observer.js';
import { sameQuota, type Quota } from './quota.js';
import type { RateLimitResult } from './result.js';
import type { RateLimitStrategy } from './strategy.js';
import { onGrid, retryAfterSeconds, TICKS_PER_MS } from './time.js';
import { MAX_TIMER_MS, unref } from './timers.js';

/**
 * In the look-ahead of the eviction round robin: where the cursor came to the end of the tracked
 * keys (and restarted from the oldest). A cursor read later would first have given the keys
 * tracked since: they are put in its place when a search comes to it.
 */
const END = Symbol('end of the round robin');

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
 * @internal One request of a joint decision on a key table ({@link KeyTable.check}): a group's
 * member on this limiter.
 */
export interface TableRequest {
  /** The key decided on; the keys of one joint decision are distinct. */
  readonly key: string;
  /** The limiter's clock in milliseconds, read for this request. */
  readonly now: number;
  /** A positive safe integer. */
  readonly cost: number;
  /** The quota to enforce. */
  readonly quota: Quota;
}

/**
 * @internal The outcome of {@link KeyTable.check}: what each request would get, as `peek`
 * reports it, and the clear keys that recording must forget to make room for the new keys.
 * Valid only in the synchronous step that made it (nothing may change the table in between).
 */
export interface TableCheck {
  /** One result per request, in order. */
  readonly results: readonly RateLimitResult[];
  /** Clear keys to forget before recording or reserving (none unless `maxKeys` is reached). */
  readonly evict: readonly string[];
  /** Entries of the eviction round robin the check looked at, passed once it records. */
  readonly looked: number;
}

/**
 * Clear keys found for forgetting, and when room is made otherwise: the soonest time a live key
 * looked at is clear.
 */
interface ClearKeys {
  readonly keys: string[];
  /**
   * Milliseconds on the 2^-10 ms grid, from `onGrid(now)`, until the soonest live key looked at
   * is clear; `Infinity` when none was looked at.
   */
  readonly waitMs: number;
  /** The quota of that key (its own tier), for the bound of `retryAfter`. */
  readonly quota: Quota | undefined;
  /** Entries of the round robin looked at (stale ones included), to pass once a key is forgotten. */
  readonly looked: number;
  /** The entries before the soonest live key looked at (`looked` when none): a refusal passes them. */
  readonly beforeSoonest: number;
}

/**
 * A group's request reserved on one key ({@link KeyTable.reserve}): checked, to be recorded
 * once the group's stores have recorded.
 */
interface Pending {
  /** The cost reserved. */
  readonly cost: number;
  /**
   * The quota it is to be recorded under: the group's, or the quota of a later decision on the
   * key that recorded under another one (a tier change applies at once, to the pending request too).
   */
  quota: Quota;
  /** Whether the key is not tracked: the reservation then holds a place of its own under `maxKeys`. */
  slot: boolean;
  /**
   * Whether a penalty was recorded on the key meanwhile ({@link KeyTable.penalty}): the reserved
   * request came first, so its commit records it even if the penalty left no room.
   */
  penalized?: boolean;
}

/**
 * @internal A decision recorded on a key table, for a refund ({@link KeyTable.ticketOf}): the
 * state it was recorded in (a key forgotten since has another one) and the strategy's ticket.
 */
export interface TableTicket<State> {
  readonly state: State;
  readonly ticket: unknown;
}

/** @internal A reserved request once recorded ({@link KeyTable.commit}): its result and its quota. */
export interface Committed {
  readonly result: RateLimitResult;
  readonly quota: Quota;
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
  /** The requests reserved by groups awaiting their stores, by key ({@link reserve}). */
  readonly #pending = new Map<string, Pending>();
  /** Reserved keys not tracked: places under `maxKeys` held for them. */
  #slots = 0;
  /**
   * No tiers and no reservation: a decision on a tracked key is the strategy's alone (the one
   * field the hot path of {@link consume} reads).
   */
  #plain: boolean;
  /**
   * The round robin of the search for a clear key to forget (under `maxKeys`): the entries
   * already taken from {@link #evictCursor} but not yet passed by a decision ({@link #ahead}), then
   * the cursor itself. A search that decides nothing (a peek, a group's check) only looks ahead;
   * a decision that forgets a key passes the entries it looked at; a request refused for want of
   * room passes those before the soonest key it looked at. So a peek moves nothing, and a refused
   * request retried once that key is clear looks at it first.
   */
  #evictCursor: Iterator<[string, State]> | undefined;
  /** Entries taken from {@link #evictCursor}, not yet passed; an entry whose key was forgotten since is stale. */
  #ahead: ([string, State] | typeof END)[] = [];
  /** Keys tracked since the {@link END} in {@link #ahead} was taken, if there is one. */
  #appended: string[] | undefined;
  /** The automatic sweep: its interval timer, the pending slice, and where the slice goes on. */
  #sweepTimer: ReturnType<typeof setInterval> | undefined;
  /**
   * The automatic sweep where the runtime refused its timer (Cloudflare Workers forbid timers in
   * a Worker's global scope, where a limiter is usually made, and drop those a request leaves
   * behind): driven by decisions instead. Each new key tracked runs one slice of the pass under
   * way, or starts a pass once `intervalMs` has passed since the last one (see {@link #drive}).
   */
  #driven: { readonly intervalMs: number; due: number | undefined } | undefined;
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
    this.#plain = !this.#tiered;
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
   * or be turned away. On a key reserved by a group ({@link reserve}), decided as if the group's
   * request had been recorded first.
   */
  consume(key: string, now: number, cost: number, quota: Quota): RateLimitResult {
    const state = this.#states.get(key);
    // The common case, a tracked key without tiers or reservations, kept this small so that V8
    // inlines it.
    if (state !== undefined && this.#plain) return this.#strategy.consume(state, now, cost, quota);
    return this.#consumeNoted(key, state, now, cost, quota);
  }

  /**
   * {@link consume} for a key not tracked, or under tiers: the quota of a decision is noted once
   * the strategy has decided (a decision that throws notes nothing), and for a new key only when
   * it is admitted.
   */
  #consumeNoted(key: string, state: State | undefined, now: number, cost: number, quota: Quota): RateLimitResult {
    if (this.#pending.size !== 0) {
      const pending = this.#pending.get(key);
      if (pending !== undefined) return this.#consumeReserved(key, state, now, cost, quota, pending);
    }
    if (state === undefined) return this.#admit(key, now, cost, quota);
    const result = this.#strategy.consume(state, now, cost, quota);
    if (this.#tiered) this.#noteQuota(key, quota);
    return result;
  }

  /**
   * The result a request would get now, recording nothing and forgetting no key: a new key with
   * no room under `maxKeys` gets the rejection a decision would give it, unless a clear key could
   * be forgotten for it. On a reserved key, as if the group's request had been recorded first.
   */
  peek(key: string, now: number, cost: number, quota: Quota): RateLimitResult {
    const state = this.#states.get(key);
    if (this.#pending.size !== 0) {
      const pending = this.#pending.get(key);
      if (pending !== undefined) return this.#peekReserved(state, now, cost, quota, pending);
    }
    if (state === undefined && this.#states.size + this.#slots >= this.#maxKeys) {
      const clear = this.#findClear(1, now, undefined);
      if (clear.keys.length === 0) return noRoom(clear, now, quota);
    }
    return this.#strategy.peek(state, now, cost, quota);
  }

  /** Whether `key` has state (a request of it was allowed and its state not forgotten since). */
  has(key: string): boolean {
    return this.#states.has(key);
  }

  /**
   * The strategy's answer for a request of `cost` on `key` at `at`, which may be **later** than
   * the clock (the end of a block): its `peek`, and nothing else — no room sought under
   * `maxKeys` (which would sweep keys at that later time), nothing dropped. On a reserved key, as
   * if the group's request had been recorded first.
   */
  peekAt(key: string, at: number, cost: number, quota: Quota): RateLimitResult {
    const state = this.#states.get(key);
    const pending = this.#pending.size === 0 ? undefined : this.#pending.get(key);
    if (pending !== undefined) return this.#peekReserved(state, at, cost, quota, pending);
    return this.#strategy.peek(state, at, cost, quota);
  }

  /**
   * Checks several requests on distinct keys together, recording nothing and forgetting no key:
   * the keys a `RateLimitGroup` decides on this limiter (one limiter may be a group's member
   * more than once, on different keys). Under `maxKeys`, room is needed for **every** new key
   * among them at once: the new keys beyond the room there is (free slots, plus clear keys that
   * recording would forget, never one of the requests' own) get the rejection a decision would
   * give them. {@link record} then records them all, with the same outcome (or {@link reserve}
   * reserves them). A reserved key is checked as if the group's request had been recorded first,
   * and needs no room (its place is held).
   */
  check(requests: readonly TableRequest[]): TableCheck {
    const states = this.#states;
    const pending = this.#pending;
    let fresh = 0;
    let now = -Infinity;
    for (const request of requests) {
      if (!states.has(request.key) && !pending.has(request.key)) fresh++;
      if (request.now > now) now = request.now;
    }
    let room = this.#maxKeys - states.size - this.#slots;
    let clear: ClearKeys = { keys: [], waitMs: Infinity, quota: undefined, looked: 0, beforeSoonest: 0 };
    if (fresh > room) {
      clear = this.#findClear(fresh - room, now, new Set(requests.map((r) => r.key)));
      room += clear.keys.length;
    }
    const results = requests.map((request) => {
      const state = states.get(request.key);
      const reserved = pending.size === 0 ? undefined : pending.get(request.key);
      if (reserved !== undefined) return this.#peekReserved(state, request.now, request.cost, request.quota, reserved);
      if (state === undefined) {
        if (room <= 0) return noRoom(clear, now, request.quota);
        room--;
      }
      return this.#strategy.peek(state, request.now, request.cost, request.quota);
    });
    return { results, evict: clear.keys, looked: clear.looked };
  }

  /**
   * Records the requests of a {@link check} whose results all allowed, in the same synchronous
   * step: forgets the clear keys it found, then decides each request (each then allows, as the
   * check said).
   * @returns one result per request, after recording, in order.
   */
  record(requests: readonly TableRequest[], checked: TableCheck): RateLimitResult[] {
    for (const key of checked.evict) this.#evict(key);
    if (checked.evict.length > 0) this.#pass(checked.looked);
    return requests.map((r) => this.consume(r.key, r.now, r.cost, r.quota));
  }

  /**
   * Reserves the requests of a {@link check} whose results all allowed, in the same synchronous
   * step, for a group that records its stores before them: forgets the clear keys the check
   * found (which changes no decision), then holds each request's cost on its key and, for a key
   * not tracked, a place under `maxKeys`. Until {@link commit} or {@link release}, every decision
   * on the table accounts for them: a reserved key is decided as if its request had been recorded
   * first, is never forgotten by a sweep or to make room, and keeps its place if `forget` drops
   * its state; a new key needs room beyond the tracked keys and the places held. So the commit
   * allows, whatever is decided in between (with strategies that are additive and never less
   * permissive as time passes: see `RateLimitStrategy`).
   *
   * The caller holds the keys' locks: one reservation per key at a time.
   */
  reserve(requests: readonly TableRequest[], checked: TableCheck): void {
    for (const key of checked.evict) this.#evict(key);
    if (checked.evict.length > 0) this.#pass(checked.looked);
    for (const r of requests) {
      const slot = !this.#states.has(r.key);
      if (slot) this.#slots++;
      this.#pending.set(r.key, { cost: r.cost, quota: r.quota, slot });
    }
    this.#plain = false;
  }

  /**
   * Records the requests of a {@link reserve}, in one synchronous step, at `now` (no earlier than
   * any decision since the reservation), each under the quota it was reserved with (or a later
   * one: {@link Pending.quota}); each then allows. The reservation is dropped first, whole: a
   * strategy that throws leaves none behind.
   */
  commit(requests: readonly TableRequest[], now: number): Committed[] {
    const pending = requests.map((r) => this.#pending.get(r.key) as Pending);
    this.release(requests);
    return requests.map((r, j) => {
      const { cost, quota, penalized } = pending[j] as Pending;
      const result = this.consume(r.key, now, cost, quota);
      if (result.allowed || penalized !== true) return { result, quota };
      // A penalty came after the reserved request: the request is recorded all the same.
      this.penalty(r.key, now, cost, quota);
      const after = this.peek(r.key, now, 1, quota);
      return { result: { ...after, allowed: true, retryAfter: 0 }, quota };
    });
  }

  /**
   * The ticket of the decision {@link consume} has just allowed on `key` (in the same
   * synchronous step), for {@link refund}.
   * @param now - the reading the decision was made at.
   * @throws {RateWardenTypeError} when the strategy has no `ticket` and `refund`.
   */
  ticketOf(key: string, now: number, cost: number, quota: Quota): TableTicket<State> {
    const strategy = this.#strategy;
    this.checkRefunds();
    const state = this.#states.get(key) as State;
    return { state, ticket: (strategy.ticket as NonNullable<RateLimitStrategy<State>['ticket']>)(state, now, cost, quota) };
  }

  /** @throws {RateWardenTypeError} naming the strategy when it has no `ticket` and `refund` (for `reserve`). */
  checkRefunds(): void {
    const strategy = this.#strategy;
    if (typeof strategy.ticket !== 'function' || typeof strategy.refund !== 'function') throw cannot(strategy.name, 'ticket` and `refund', 'reserve');
  }

  /**
   * Gives back `units` of the decision of `ticket` on `key`, at `now`: a no-op (`false`) when the
   * key's state is not the one the decision was recorded in (forgotten, reset or swept since),
   * else as the strategy's `refund` says.
   */
  refund(key: string, ticket: TableTicket<State>, units: number, now: number): boolean {
    const state = this.#states.get(key);
    if (state === undefined || state !== ticket.state) return false;
    return (this.#strategy.refund as NonNullable<RateLimitStrategy<State>['refund']>)(state, ticket.ticket, units, now, this.#quotaOf(key));
  }

  /**
   * Records `points` on `key` at `now` without asking (the strategy's `penalty`). A key not
   * tracked is tracked: under `maxKeys`, a clear key is forgotten to make room.
   * @throws {RateWardenTypeError} when the strategy has no `penalty`.
   * @throws {RateWardenRangeError} when `maxKeys` keys are tracked and none of those looked at
   *   is clear (nothing recorded).
   */
  penalty(key: string, now: number, points: number, quota: Quota): void {
    const strategy = this.#strategy;
    if (typeof strategy.penalty !== 'function') throw cannot(strategy.name, 'penalty', 'penalty');
    const penalize = (state: State): void => {
      (strategy as Required<Pick<RateLimitStrategy<State>, 'penalty'>>).penalty(state, now, points, quota);
    };
    const pending = this.#pending.size === 0 ? undefined : this.#pending.get(key);
    let state = this.#states.get(key);
    if (state === undefined) {
      let evict: string | undefined;
      let looked = 0;
      if (pending === undefined && this.#states.size + this.#slots >= this.#maxKeys) {
        const clear = this.#findClear(1, now, undefined);
        evict = clear.keys[0];
        if (evict === undefined) {
          throw new RateWardenRangeError(
            `Expected room under \`maxKeys\` (${this.#maxKeys}) for a penalty on the new key \`${key}\`, got none: every tracked key looked at is live`,
          );
        }
        looked = clear.looked;
      }
      state = strategy.createState(quota);
      penalize(state);
      if (evict !== undefined) {
        this.#evict(evict);
        this.#pass(looked);
      }
      this.#states.set(key, state);
      this.#appended?.push(key);
      if (this.#driven !== undefined) this.#drive(now);
      if (pending?.slot === true) {
        pending.slot = false;
        this.#slots--;
      }
    } else {
      penalize(state);
    }
    if (pending !== undefined) pending.penalized = true;
    if (this.#tiered) this.#noteQuota(key, quota);
  }

  /** Drops the reservation of `requests` (a store failed or refused): nothing was recorded. */
  release(requests: readonly TableRequest[]): void {
    for (const r of requests) {
      const pending = this.#pending.get(r.key);
      if (pending !== undefined) this.#unreserve(r.key, pending);
    }
  }

  #unreserve(key: string, pending: Pending): void {
    this.#pending.delete(key);
    if (pending.slot) this.#slots--;
    this.#plain = !this.#tiered && this.#pending.size === 0;
  }

  /**
   * The result a request of `cost` on the reserved key would get if the pending request had been
   * recorded first, at the same time ({@link reservedResult}).
   */
  #peekReserved(state: State | undefined, now: number, cost: number, quota: Quota, pending: Pending): RateLimitResult {
    return reservedResult(this.#strategy.peek(state, now, cost + pending.cost, quota), cost, pending.cost, quota);
  }

  /**
   * {@link consume} on a reserved key: allowed only if `cost` fits with the pending request
   * counted first; a refusal records nothing (not even a tier change). When allowed under another
   * quota than the pending request's (a tier change), the pending request is recorded under it
   * too: it fits there, along with this one.
   */
  #consumeReserved(key: string, state: State | undefined, now: number, cost: number, quota: Quota, pending: Pending): RateLimitResult {
    const strategy = this.#strategy;
    const checked = this.#peekReserved(state, now, cost, quota, pending);
    if (!checked.allowed) return checked;
    if (!sameQuota(pending.quota, quota)) pending.quota = quota;
    let result: RateLimitResult;
    if (state === undefined) {
      // Its place is held: no room needed.
      const fresh = strategy.createState(quota);
      result = strategy.consume(fresh, now, cost, quota);
      if (!result.allowed) return result;
      this.#states.set(key, fresh);
      this.#appended?.push(key);
      if (this.#driven !== undefined) this.#drive(now);
      pending.slot = false;
      this.#slots--;
    } else {
      result = strategy.consume(state, now, cost, quota);
      if (!result.allowed) return result;
    }
    if (this.#tiered) this.#noteQuota(key, quota);
    return reservedResult(result, cost, pending.cost, quota);
  }

  /**
   * Forgets `key`; returns whether it was tracked. A reserved key keeps its place under
   * `maxKeys` (its group records it next).
   */
  forget(key: string): boolean {
    this.#quotas.delete(key);
    const forgotten = this.#states.delete(key);
    if (forgotten && this.#pending.size !== 0) {
      const pending = this.#pending.get(key);
      if (pending !== undefined) {
        pending.slot = true;
        this.#slots++;
      }
    }
    return forgotten;
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
   * next request is then decided exactly as it would have been). A reserved key is kept.
   * @returns whether the key was forgotten.
   */
  #forgetIfClear(key: string, state: State, now: number): boolean {
    if (this.#pending.size !== 0 && this.#pending.has(key)) return false;
    if (!this.#isClear(key, state, now)) return false;
    this.#states.delete(key);
    if (this.#tiered) this.#quotas.delete(key);
    return true;
  }

  /**
   * Asks the strategy to drop what has expired at `now` from `key`'s state, under the quota last
   * applied to the key, and says whether the state is now clear: the one test of sweeps and of
   * `maxKeys` alike.
   */
  #isClear(key: string, state: State, now: number): boolean {
    return this.#strategy.sweep(state, now, this.#quotaOf(key));
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
    let timer: ReturnType<typeof setInterval>;
    try {
      timer = setInterval(() => {
        const table = self.deref();
        if (table === undefined) clearInterval(timer);
        else if (table.#sweepCursor === undefined) {
          table.#passSwept = 0;
          table.#sweepSlice(table.#states.entries(), read);
        }
      }, Math.min(intervalMs, MAX_TIMER_MS));
    } catch {
      // Cloudflare Workers throw "Disallowed operation called within global scope" for a timer
      // set while the Worker's module loads (and a timer set within a request does not outlive
      // it): decisions drive the sweep instead.
      this.#driven = { intervalMs, due: undefined };
      return;
    }
    unref(timer);
    this.#sweepTimer = timer;
  }

  /**
   * The sweep without a timer, after a new key was tracked at `now` (a decision's clock
   * reading): one slice of the pass under way, or, once `intervalMs` has passed since the last
   * pass began (or since the first key), a new pass and its first slice. So a pass of N keys ends
   * within N / 1,024 new keys, and an idle table is not swept (nor does it grow).
   */
  #drive(now: number): void {
    const driven = this.#driven as { readonly intervalMs: number; due: number | undefined };
    let cursor = this.#sweepCursor;
    if (cursor === undefined) {
      if (driven.due === undefined || now < driven.due) {
        driven.due ??= now + driven.intervalMs;
        return;
      }
      driven.due = now + driven.intervalMs;
      this.#passSwept = 0;
      cursor = this.#states.entries();
    }
    this.#sweepCursor = this.#sweepSteps(cursor, now);
  }

  /** Stops the automatic sweep, if any. Safe to call more than once. */
  stopSweeping(): void {
    this.#driven = undefined;
    if (this.#sweepTimer !== undefined) clearInterval(this.#sweepTimer);
    if (this.#sliceTimer !== undefined) clearTimeout(this.#sliceTimer);
    this.#sweepTimer = undefined;
    this.#sliceTimer = undefined;
    this.#sweepCursor = undefined;
  }

  /** Sweeps up to {@link SWEEP_SLICE} keys from `cursor`, then schedules the next slice. */
  /**
   * Sweeps up to {@link SWEEP_SLICE} keys from `cursor` at `now`: returns the cursor when the
   * pass goes on, `undefined` when it is over (reported to `onSweep`) or ended by a failing
   * strategy (a failing strategy fails `cleanUp()` for its caller; here, in a timer or after a
   * decision, the pass just ends).
   */
  #sweepSteps(cursor: Iterator<[string, State]>, now: number): Iterator<[string, State]> | undefined {
    for (let visited = 0; visited < SWEEP_SLICE; visited++) {
      const next = cursor.next();
      if (next.done === true) {
        this.#sweeps++;
        this.#onSweep?.({ dropped: this.#passSwept, automatic: true, keys: this.#states.size });
        return undefined;
      }
      const [key, state] = next.value;
      let cleared: boolean;
      try {
        cleared = this.#forgetIfClear(key, state, now);
      } catch {
        return undefined;
      }
      if (cleared) {
        this.#swept++;
        this.#passSwept++;
      }
    }
    return cursor;
  }

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
    this.#sweepCursor = this.#sweepSteps(cursor, now);
    if (this.#sweepCursor === undefined) return;
    const self = new WeakRef(this);
    const slice = setTimeout(() => {
      const table = self.deref();
      if (table !== undefined && table.#sweepCursor === cursor) table.#sweepSlice(cursor, read);
    }, 0);
    unref(slice);
    this.#sliceTimer = slice;
  }

  /**
   * Decides on a key not tracked, keeping its state if allowed. Under `maxKeys` with no free
   * slot, a clear key is found first (or the request is rejected) and forgotten only once the
   * request is allowed: a rejected request forgets nothing. The places held for groups' reserved
   * keys are not free.
   */
  #admit(key: string, now: number, cost: number, quota: Quota): RateLimitResult {
    const states = this.#states;
    let evict: string | undefined;
    let looked = 0;
    if (states.size + this.#slots >= this.#maxKeys) {
      const clear = this.#findClear(1, now, undefined);
      evict = clear.keys[0];
      if (evict === undefined) {
        // The next search starts at the soonest key looked at (found clear once the wait is
        // over), and goes on to keys beyond those looked at.
        this.#pass(clear.beforeSoonest);
        return noRoom(clear, now, quota);
      }
      looked = clear.looked;
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
      if (evict !== undefined) {
        this.#evict(evict);
        this.#pass(looked);
      } else if (states.size === WARN_KEYS && !this.#warned) this.#warnUnbounded();
      states.set(key, fresh);
      this.#appended?.push(key);
      if (this.#tiered) this.#noteQuota(key, quota);
      if (this.#driven !== undefined) this.#drive(now);
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
   * Looks for `needed` clear keys to forget under `maxKeys`, forgetting none and passing none:
   * among the next {@link EVICT_SCAN} entries of the round robin per key needed (each tracked key
   * at most once), skipping `keep` and the reserved keys. The round robin goes on from the
   * entries the last decision that forgot a key passed (restarting from the oldest would skip the
   * Map's deleted slots again and again). A key looked at has what expired at `now` dropped (as a sweep does). With none
   * clear, says when the soonest live key looked at is.
   */
  #findClear(needed: number, now: number, keep: ReadonlySet<string> | undefined): ClearKeys {
    const states = this.#states;
    const ahead = this.#ahead;
    const keys: string[] = [];
    const live: State[] = [];
    const liveKeys: string[] = [];
    const liveAt: number[] = [];
    const looks = Math.min(EVICT_SCAN * needed, states.size);
    let index = 0;
    for (let scanned = 0; scanned < looks && keys.length < needed; index++) {
      if (index === ahead.length && !this.#lookAhead()) break;
      const entry = ahead[index] as [string, State] | typeof END;
      if (entry === END) {
        // The keys tracked since the cursor came to the end, which it would have given first,
        // go before it (those tracked later, before it again when a search next comes here).
        const since = this.#trackedSince();
        if (since.length > 0) {
          ahead.splice(index, 0, ...since);
          index--; // looked at next
        }
        continue;
      }
      const [key, state] = entry;
      // An entry whose key was forgotten (or forgotten and tracked anew) since it was taken is
      // one a live iterator would no longer give.
      if (states.get(key) !== state) continue;
      scanned++;
      if (keep?.has(key) === true || (this.#pending.size !== 0 && this.#pending.has(key))) continue;
      if (this.#isClear(key, state, now)) {
        // (A key is met once per search: the round robin restarts only after every key.)
        if (!keys.includes(key)) keys.push(key);
      } else {
        live.push(state);
        liveKeys.push(key);
        liveAt.push(index);
      }
    }
    // Too few clear keys: room is made when the soonest live key looked at is clear.
    let waitMs = Infinity;
    let soonestQuota: Quota | undefined;
    let beforeSoonest = index;
    if (keys.length < needed && live.length > 0) {
      // Each key's estimate (one peek), then the exact grid wait of those that may be the
      // soonest (the estimates are within a tick of the exact waits).
      const estimates: number[] = [];
      let least = Infinity;
      for (let i = 0; i < live.length; i++) {
        const estimate = this.#estimate(live[i] as State, now, this.#quotaOf(liveKeys[i] as string));
        estimates.push(estimate);
        if (estimate < least) least = estimate;
      }
      for (let i = 0; i < live.length; i++) {
        const estimate = estimates[i] as number;
        if (estimate > least + 2) continue;
        const quota = this.#quotaOf(liveKeys[i] as string);
        const wait = this.#clearsIn(live[i] as State, now, quota, estimate);
        if (wait < waitMs) {
          waitMs = wait;
          soonestQuota = quota;
          beforeSoonest = liveAt[i] as number;
        }
      }
    }
    return { keys, waitMs, quota: soonestQuota, looked: index, beforeSoonest };
  }

  /**
   * Takes the next entry of the round robin into {@link #ahead}, restarting from the oldest key at
   * the end. @returns `false` when no key is tracked.
   */
  #lookAhead(): boolean {
    let next = this.#evictCursor?.next();
    if (next === undefined || next.done === true) {
      if (next !== undefined && this.#appended === undefined) {
        this.#ahead.push(END);
        this.#appended = [];
      }
      this.#evictCursor = this.#states.entries();
      next = this.#evictCursor.next();
      if (next.done === true) return false;
    }
    this.#ahead.push(next.value);
    return true;
  }

  /**
   * The keys tracked since the {@link END} in the look-ahead was taken (or last came to), still
   * tracked, in the order of the tracked keys; starts noting anew.
   */
  #trackedSince(): [string, State][] {
    const appended = this.#appended ?? [];
    this.#appended = [];
    const entries: [string, State][] = [];
    const seen = new Set<string>();
    // A key tracked twice since (forgotten in between) is where it was tracked last.
    for (let i = appended.length - 1; i >= 0; i--) {
      const key = appended[i] as string;
      const state = this.#states.get(key);
      if (seen.has(key) || state === undefined) continue;
      seen.add(key);
      entries.push([key, state]);
    }
    return entries.reverse();
  }

  /** Passes the first `looked` entries of the round robin: the next search goes on after them. */
  #pass(looked: number): void {
    const passed = this.#ahead.splice(0, looked);
    if (passed.includes(END)) this.#appended = undefined;
  }

  /** The strategy's `resetAfter` for the live `state` at `now`, in ticks of the grid (within a few units in the last place of the exact value). */
  #estimate(state: State, now: number, quota: Quota): number {
    return this.#strategy.peek(state, now, 1, quota).resetAfter * 1000 * TICKS_PER_MS;
  }

  /**
   * Milliseconds on the 2^-10 ms grid, from `onGrid(now)`, until the live `state` is clear (as
   * `sweep` would find it), under `quota`, the quota last applied to its key. Found from the
   * strategy's `resetAfter` (the time until the key is clear; `estimate`, in ticks), checked by `peek` at the
   * later time — which records nothing — since `resetAfter` is in seconds, off the grid. The
   * wait is at least one tick; `Infinity` if the key does not clear within 2^40 ticks of the
   * estimate (a custom strategy).
   */
  #clearsIn(state: State, now: number, quota: Quota, estimate: number): number {
    const strategy = this.#strategy;
    const grid = onGrid(now);
    const clearAt = (ticks: number): boolean => strategy.peek(state, grid + ticks / TICKS_PER_MS, 1, quota).resetAfter === 0;
    // Most often the exact wait is the estimate rounded up, or to the nearest tick when it is a
    // hair off a whole one (the seconds' rounding).
    const near = Math.round(estimate);
    const guess = Math.max(1, Math.abs(estimate - near) <= estimate * 1e-12 ? near : Math.ceil(estimate));
    if (clearAt(guess) && (guess === 1 || !clearAt(guess - 1))) return guess / TICKS_PER_MS;
    // The estimate is within a few units in the last place of the exact wait: bracket it.
    let low = Math.max(0, Math.floor(estimate) - 2); // not clear (0: now, not clear)
    let high = Math.max(1, Math.ceil(estimate) + 1);
    if (low > 0 && clearAt(low)) low = 0;
    for (let tries = 0; !clearAt(high); tries++) {
      if (tries === 40) return Infinity;
      low = high;
      high *= 2;
    }
    while (high - low > 1) {
      const middle = Math.floor((low + high) / 2);
      if (clearAt(middle)) high = middle;
      else low = middle;
    }
    return high / TICKS_PER_MS;
  }

  /** Forgets the clear `key` to make room under `maxKeys`. */
  #evict(key: string): void {
    this.#states.delete(key);
    if (this.#tiered) this.#quotas.delete(key);
    this.#evicted++;
  }

  /** Warns once when many keys are tracked with nothing to bound them. */
  #warnUnbounded(): void {
    this.#warned = true;
    if (this.#maxKeys !== Infinity || this.#sweepTimer !== undefined || this.#driven !== undefined || this.#cleaned) return;
    const message =
      `ratewarden: a RateLimiter tracks ${WARN_KEYS} keys with no bound: call cleanUp() ` +
      'periodically, or set sweepIntervalSeconds or maxKeys';
    const process = (globalThis as { process?: { emitWarning?: (message: string, type: string) => void } }).process;
    if (typeof process?.emitWarning === 'function') process.emitWarning(message, 'RateWardenWarning');
    else console.warn(message);
  }
}

/**
 * The rejection of a new key when `maxKeys` keys are tracked and none of those looked at is
 * clear: retry once the soonest live key looked at clears — `clear.waitMs` on the grid from the
 * reading `now`, converted as the strategies convert their waits (whole microseconds, enough in
 * the caller's floating point). At most that key's window (its own tier's), or two (the
 * sliding-window counter); the new key's window when no key was looked at.
 */
function noRoom(clear: ClearKeys, now: number, quota: Quota): RateLimitResult {
  const bound = clear.quota ?? quota;
  const waitMs = clear.waitMs === Infinity ? bound.windowMs : clear.waitMs;
  const windows = Math.max(1, Math.ceil(waitMs / bound.windowMs));
  return {
    allowed: false,
    remaining: 0,
    retryAfter: retryAfterSeconds(now, onGrid(now), waitMs, windows * bound.windowSeconds),
    limit: quota.threshold,
    resetAfter: 0,
  };
}

/**
 * The strategy's result `r` for `cost + pendingCost` on a key reserved for `pendingCost`, as the
 * result of `cost` with the pending request recorded first, at the same time (the same decision,
 * for strategies that are additive): `remaining` net of the pending cost; a refusal with `cost`
 * alone within the threshold waits at most one window (until the pending units, recorded now,
 * have left it), where the strategy says `Infinity` for the sum. `resetAfter` does not count the
 * pending units.
 */
function reservedResult(r: RateLimitResult, cost: number, pendingCost: number, quota: Quota): RateLimitResult {
  const remaining = r.remaining > pendingCost ? r.remaining - pendingCost : 0;
  const retryAfter = r.retryAfter === Infinity && cost <= quota.threshold ? quota.windowSeconds : r.retryAfter;
  return { allowed: r.allowed, remaining, retryAfter, limit: r.limit, resetAfter: r.resetAfter };
}

/** The error of a limiter's `method` whose in-memory strategy lacks `members`. */
function cannot(name: string, members: string, method: string): RateWardenTypeError {
  return new RateWardenTypeError(
    `Expected the in-memory strategy \`${name}\` to implement \`${members}\` for \`${method}\`: it does not (see RateLimitStrategy)`,
  );
}
