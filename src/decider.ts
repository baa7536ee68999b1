/**
 * The decider: a limiter's one core operation — read the clock, choose the quota, then evict,
 * check and record through the strategy — on which `allowRequest`, `allowRequestSync`, `peek`,
 * each attempt of `waitForSlot` and each `RateLimitGroup` step are built (as `Allow`, `Reserve`
 * and `Wait` are built on one operation in Go's `x/time/rate`). It owns the per-key async mutex
 * that serialises the decisions of a store that awaits, and counts decisions in the observer.
 *
 * It is also the documented internal interface of a limiter for `RateLimitGroup`
 * ({@link deciderOf}): the group plans its steps with {@link Decider.quotaFor} and
 * {@link Decider.now}, locks with {@link Decider.mutex}, decides with {@link Decider.decideAt}
 * (and, in memory, through {@link Decider.table}, recording a reservation at
 * {@link Decider.latestNow}) and counts with {@link Decider.observer}.
 *
 * Why one file of about 540 lines (nearly half of it comments): everything that reads the
 * clock, chooses the quota and touches a key for one limiter is here — decisions, the blocks
 * they start and answer (issue 22), and the reservations, refunds and penalties built on the
 * same core operation (the free functions at the end) — so that every path to a key goes
 * through one `decideAt` and one lock; split, the block check and the lock would be repeated in
 * each file that decides. The blocks' storage is `./blocks.ts`, the refund handles
 * `./reservation.ts`.
 *
 * @module
 */
import type { Blocks } from './blocks.js';
import type { MonotonicClock } from './clock.js';
import { RateWardenTypeError, rangeError, typeError } from './errors.js';
import type { KeyTable, TableTicket } from './key-table.js';
import { KeyedMutex } from './keyed-mutex.js';
import type { Observer } from './observer.js';
import type { Quota } from './quota.js';
import type { User } from './request.js';
import type { RateLimitResult } from './result.js';
import { isRefunding, type RateLimitStore, type RefundingStore } from './store.js';
import type { Tiers } from './tiers.js';
import { onGrid, retryAfterSeconds } from './time.js';

/** The next lock's place in the global lock order. */
let nextId = 0;

/**
 * The per-key lock of each store, shared by every limiter deciding with it: a store that reads,
 * awaits and writes is exact across them too. `order` is its place in the global lock order of
 * groups.
 */
const storeLocks = new WeakMap<RateLimitStore, { readonly mutex: KeyedMutex; readonly order: number }>();

/** The lock of `store`, made the first time a limiter uses it. */
function lockOf(store: RateLimitStore): { readonly mutex: KeyedMutex; readonly order: number } {
  let lock = storeLocks.get(store);
  if (lock === undefined) {
    lock = { mutex: new KeyedMutex(), order: nextId++ };
    storeLocks.set(store, lock);
  }
  return lock;
}

/**
 * @internal What an attempt returns when its `skip` says, once it holds the key's lock, that it
 * is no longer wanted (an aborted waiter): nothing was decided or counted.
 */
export const NOT_DECIDED: RateLimitResult = Object.freeze({
  allowed: false,
  remaining: 0,
  retryAfter: 0,
  limit: 0,
  resetAfter: 0,
});

/**
 * @internal Where a limiter's state is: a key table for an in-memory strategy, or a store. A
 * discriminated union, so that each path is typed without casts.
 */
export type Keeper<State> =
  | { readonly table: KeyTable<State>; readonly store?: undefined }
  | { readonly table?: undefined; readonly store: RateLimitStore };

/** @internal The units a decider decides with, built and validated by `RateLimiter`. */
export interface DeciderParts<State> {
  readonly keeper: Keeper<State>;
  /** The default quota. */
  readonly quota: Quota;
  readonly clock: MonotonicClock;
  /** `undefined` when every key has the default quota. */
  readonly tiers: Tiers | undefined;
  /** The decision counters and listeners. */
  readonly observer: Observer;
  /** The strategy's name, for messages. */
  readonly name: string;
  /** Whether the store decides atomically by itself (read once, when the limiter was built). */
  readonly atomic: boolean;
  /** The blocked keys, for an in-memory strategy; `undefined` for a store (which blocks itself). */
  readonly blocks?: Blocks | undefined;
}

/** @internal The core operation of one limiter; see the module description. */
export class Decider<State> {
  /** The limiter's default quota. */
  readonly quota: Quota;
  /** The key table, for an in-memory strategy; `undefined` for a store. */
  readonly table: KeyTable<State> | undefined;
  /** The store, for a store strategy; `undefined` for an in-memory one. */
  readonly store: RateLimitStore | undefined;
  /** The strategy's name, for messages. */
  readonly name: string;
  /**
   * The per-key async mutex: serialises a store's decisions on a key, unless it is atomic (its
   * decisions then hold the key shared, only to keep out of a group's exclusive hold). One per
   * store, shared by the limiters that use it; a limiter of its own for an in-memory strategy
   * (whose decisions are synchronous and never lock).
   */
  readonly mutex: KeyedMutex;
  /** The mutex's place in the global lock order of a group's keys (then by key). */
  readonly lockOrder: number;
  /** The decision counters and listeners. */
  readonly observer: Observer;
  readonly #clock: MonotonicClock;
  readonly #tiers: Tiers | undefined;
  /** Whether a store's decisions run under the key's lock (a store that is not atomic). */
  readonly #locking: boolean;
  /** The blocked keys, in memory ({@link DeciderParts.blocks}). */
  readonly blocks: Blocks | undefined;
  /** Whether a quota of this limiter (the default, or a tier met so far) blocks on refusal. */
  #quotaBlocks = false;
  /**
   * Whether an in-memory decision must look at blocks: a quota that blocks was met, or a key is
   * blocked (or was: cleared by sweeps). The one check blocks add to a decision without them.
   */
  #blocking = false;

  /** @param parts - the validated units ({@link DeciderParts}). */
  constructor(parts: DeciderParts<State>) {
    this.table = parts.keeper.table;
    this.store = parts.keeper.store;
    this.quota = parts.quota;
    this.name = parts.name;
    this.observer = parts.observer;
    this.#clock = parts.clock;
    this.#tiers = parts.tiers;
    this.#locking = this.store !== undefined && !parts.atomic;
    const lock = this.store === undefined ? { mutex: new KeyedMutex(), order: nextId++ } : lockOf(this.store);
    this.mutex = lock.mutex;
    this.lockOrder = lock.order;
    this.blocks = parts.blocks;
    this.#quotaBuilt(this.quota, 'blockSeconds');
    if (this.#tiers !== undefined) {
      this.#tiers.onQuota = (quota) => {
        this.#quotaBuilt(quota, 'limitFor().blockSeconds');
      };
    }
  }

  /**
   * Takes note of a quota of this limiter (the default one, or a tier's when first built): in
   * memory, one that blocks makes decisions look at blocks; with a store, one that blocks needs a
   * store that blocks.
   * @throws {RateWardenTypeError} naming `name` when the quota blocks and the store cannot.
   */
  #quotaBuilt(quota: Quota, name: string): void {
    const blockMs = quota.blockMs ?? 0;
    if (blockMs === 0) return;
    const store = this.store;
    if (store === undefined) {
      this.#quotaBlocks = true;
      this.#blocking = true;
    } else if (!isRefunding(store) || (store as { blocks?: unknown }).blocks !== true) {
      throw typeError(
        name,
        `0 with the store \`${this.name}\`, which does not block keys (blocking needs a store with \`blocks: true\` and the RefundingStore methods)`,
        blockMs / 1000,
      );
    }
  }

  /** The quota for `user`: its tier when `limitFor` chooses one, else the default. */
  quotaFor(user: User | string, key: string): Quota {
    return this.#tiers === undefined ? this.quota : this.#tiers.quotaFor(user, key);
  }

  /** Refunds' hooks ({@link DeciderRefunds}), set by the limiter. */
  readonly refunds: DeciderRefunds = { wake: () => {} };

  /**
   * Runs `fn` under `key`'s lock as a store's decision runs (exclusive unless the store is
   * atomic, shared if it is or for an in-memory strategy): for refunds and penalties.
   */
  locked<T>(key: string, fn: () => T | PromiseLike<T>): Promise<T> {
    return this.#locking ? this.mutex.runExclusive(key, fn) : this.mutex.runShared(key, fn);
  }

  /** Reads the clock for a decision under `quota` (monotonic, checked; may throw). */
  now(quota: Quota): number {
    return this.#clock.read(quota.windowMs);
  }

  /**
   * The latest clock reading used by this limiter, in milliseconds: no earlier than any of its
   * decisions so far (a group's in-memory record is made at it). Reads no clock; never throws.
   */
  latestNow(): number {
    return this.#clock.latest;
  }

  /**
   * The core operation: decides a request of `cost` units on `key` at `now` under `quota` and
   * records it when allowed (`record`), or only checks it (`peek`). Synchronous with an
   * in-memory strategy; with a store, a promise, and the caller holds the key's lock if needed.
   * Counts nothing.
   */
  decideAt(key: string, cost: number, quota: Quota, now: number, record: boolean): RateLimitResult | PromiseLike<RateLimitResult> {
    const table = this.table;
    if (table !== undefined) {
      if (this.#blocking) return this.#decideBlocking(table, key, cost, quota, now, record);
      return record ? table.consume(key, now, cost, quota) : table.peek(key, now, cost, quota);
    }
    const store = this.store as RateLimitStore;
    return record ? store.consume(key, now, cost, quota) : store.peek(key, now, cost, quota);
  }

  /**
   * A whole decision with an in-memory strategy: the quota, the clock, the core operation;
   * counted and published. (Kept small, and apart from {@link checkSync}, so that V8 inlines it
   * into the callers' hot loops.)
   * @throws for a bad tier or clock, or what the strategy throws (nothing recorded).
   */
  decideSync(user: User | string, key: string, cost: number, shadow = false): RateLimitResult {
    const quota = this.#tiers === undefined ? this.quota : this.#tiers.quotaFor(user, key);
    const now = this.#clock.read(quota.windowMs);
    const table = this.table as KeyTable<State>;
    const result = this.#blocking ? this.#decideBlocking(table, key, cost, quota, now, true) : table.consume(key, now, cost, quota);
    return this.observer.observe(key, cost, result, quota, shadow);
  }

  /**
   * {@link decideSync} without recording (`peek`): not counted.
   * @throws as {@link decideSync}.
   */
  checkSync(user: User | string, key: string, cost: number): RateLimitResult {
    const quota = this.#tiers === undefined ? this.quota : this.#tiers.quotaFor(user, key);
    const now = this.#clock.read(quota.windowMs);
    const table = this.table as KeyTable<State>;
    return this.#blocking ? this.#decideBlocking(table, key, cost, quota, now, false) : table.peek(key, now, cost, quota);
  }

  /**
   * The in-memory core operation when blocks may apply: a blocked key is refused, recording
   * nothing ({@link #blockedResult}; a recorded attempt of `cost ≤ threshold` restarts the block
   * under `extendBlock`); otherwise the strategy decides, and a recorded refusal of a tracked key
   * with `cost ≤ threshold`, under a quota that blocks, starts a block.
   */
  #decideBlocking(table: KeyTable<State>, key: string, cost: number, quota: Quota, now: number, record: boolean): RateLimitResult {
    const blocked = this.#blockedAt(table, key, cost, quota, now, record);
    if (blocked !== undefined) return blocked;
    const result = record ? table.consume(key, now, cost, quota) : table.peek(key, now, cost, quota);
    return record && !result.allowed ? this.#startBlock(table, key, cost, quota, now, result) : result;
  }

  /**
   * The refusal of a blocked `key` at `now`, or `undefined` when it is not blocked (an expired
   * block is dropped). With `record` (a decision, not a peek) and the quota's `extendBlock`, an
   * attempt of `cost ≤ threshold` restarts the block first (never shortening it).
   */
  #blockedAt(table: KeyTable<State>, key: string, cost: number, quota: Quota, now: number, record: boolean): RateLimitResult | undefined {
    const blocks = this.blocks as Blocks;
    if (blocks.size === 0) {
      // Every block is gone (lifted, or expired and swept): back to the one check per decision.
      this.#blocking = this.#quotaBlocks;
      return undefined;
    }
    const grid = onGrid(now);
    let left = blocks.remaining(key, grid);
    if (left === 0) return undefined;
    const blockMs = quota.blockMs ?? 0;
    if (record && quota.extendBlock === true && blockMs > 0 && cost <= quota.threshold) {
      blocks.extend(key, grid, blockMs);
      left = blocks.remaining(key, grid);
    }
    return this.#blockedResult(quota, now, grid, left, table.peekAt(key, now, cost, quota));
  }

  /**
   * After the strategy refused a recorded request: starts `key`'s block when the quota blocks,
   * the cost could ever be allowed (`cost ≤ threshold`), and the key is tracked (the strategy
   * refused it on its own record: a new key refused for want of room under `maxKeys` is not
   * blocked, so that a flood of new keys cannot fill the blocks). Returns the block's refusal,
   * or `result` when no block starts.
   */
  #startBlock(table: KeyTable<State>, key: string, cost: number, quota: Quota, now: number, result: RateLimitResult): RateLimitResult {
    const blockMs = quota.blockMs ?? 0;
    if (blockMs === 0 || cost > quota.threshold || !table.has(key)) return result;
    const grid = onGrid(now);
    (this.blocks as Blocks).set(key, grid, blockMs);
    this.#blocking = true;
    return this.#blockedResult(quota, now, grid, blockMs, result);
  }

  /**
   * The refusal of a request on a key blocked for `leftMs` more milliseconds from `grid` (`now`
   * on the grid), given `atNow`, the strategy's result for the request now (a peek, or the
   * refusal just decided): `remaining: 0`; `retryAfter` the block's remaining time plus what the
   * strategy would still make the request wait at the block's end (`Infinity` for a cost above
   * the threshold); `resetAfter` the longer of the block's remaining time and the strategy's
   * `resetAfter` now.
   *
   * Nothing is recorded while blocked, and a request that fits at some time fits at every later
   * one (the log's live entries and GCRA's debt only decrease with time), so the block's end
   * plus the wait a peek would report then is the later of the block's end and the moment the
   * strategy allows it, counted from now: `max(leftMs, the strategy's wait now)`, exactly, and
   * rounded once (rounding up is monotonic), as the Redis script computes it in ticks. (A peek
   * at the block's end, its `retryAfter` already rounded up to the microsecond, then added to
   * the block's time, erred by a microsecond.)
   */
  #blockedResult(quota: Quota, now: number, grid: number, leftMs: number, atNow: RateLimitResult): RateLimitResult {
    let retryAfter = atNow.retryAfter;
    if (retryAfter !== Infinity) {
      const block = retryAfterSeconds(now, grid, leftMs, quota.windowSeconds);
      if (atNow.allowed || block > retryAfter) retryAfter = block;
    }
    const leftSeconds = leftMs / 1000;
    const resetAfter = atNow.resetAfter;
    // The shape `outcome` gives every result (built here in seconds, not converted from ms).
    return { allowed: false, remaining: 0, retryAfter, limit: quota.threshold, resetAfter: resetAfter > leftSeconds ? resetAfter : leftSeconds };
  }

  /**
   * @internal For `RateLimitGroup`, in memory, right after its check of `key` (at this limiter's
   * latest time): the refusal of a blocked key, to put in place of the check's `result`; or
   * `result` when the key is not blocked. Changes no block.
   */
  checkBlock(key: string, cost: number, quota: Quota, result: RateLimitResult): RateLimitResult {
    if (!this.#blocking) return result;
    const table = this.table as KeyTable<State>;
    return this.#blockedAt(table, key, cost, quota, this.#clock.latest, false) ?? result;
  }

  /**
   * @internal For `RateLimitGroup`, in memory, when its recorded decision is refused and this
   * member's check `result` refused: a blocked key's attempt restarts its block under
   * `extendBlock`, another refusal starts one (as a single decision would). Returns the result to
   * report for the member.
   */
  groupRefused(key: string, cost: number, quota: Quota, result: RateLimitResult): RateLimitResult {
    if (!this.#blocking) return result;
    const table = this.table as KeyTable<State>;
    const now = this.#clock.latest;
    return this.#blockedAt(table, key, cost, quota, now, true) ?? this.#startBlock(table, key, cost, quota, now, result);
  }

  /** Whether in-memory decisions look at blocks now (a quota that blocks, or a block set). */
  get blocking(): boolean {
    return this.#blocking;
  }

  /**
   * Blocks `key` for `ms` milliseconds from `now`, replacing any block it had (in memory).
   */
  block(key: string, now: number, ms: number): void {
    (this.blocks as Blocks).set(key, onGrid(now), ms);
    this.#blocking = true;
  }

  /**
   * Lifts `key`'s block (in memory); returns whether it was blocked now (the clock is read; a
   * failing clock: as of the latest reading, since lifting a block never fails).
   */
  unblock(key: string): boolean {
    const blocks = this.blocks;
    if (blocks === undefined || blocks.size === 0) return false;
    try {
      this.#clock.read(this.quota.windowMs);
    } catch {
      // Lifted all the same.
    }
    return blocks.delete(key, onGrid(this.#clock.latest));
  }

  /**
   * The keys blocked at the latest time (the blocks expired by then are dropped). Reads no
   * clock. (Once no block is left, the next decision goes back to the path without blocks.)
   */
  blockedKeys(): number {
    const blocks = this.blocks;
    return blocks === undefined ? 0 : blocks.count(onGrid(this.#clock.latest));
  }

  /**
   * Runs `operation` on `key` of a store as its decisions run: under the key's lock, exclusive
   * for a store that is not atomic, shared for an atomic one (so that it never lands inside a
   * group's check-then-record of the key).
   */
  onKey<T>(key: string, operation: () => PromiseLike<T>): Promise<T> {
    return this.#locking ? this.mutex.runExclusive(key, operation) : this.mutex.runShared(key, operation);
  }

  /**
   * A whole decision with a store, under the key's lock (the clock is read once the lock is
   * held): exclusive unless the store is atomic, shared if it is (atomic decisions of a key run
   * together, but wait for a group that holds the key); counted and published when it settles,
   * if it records.
   *
   * @param skip - asked once the lock is held: `true` decides nothing and resolves to
   *   {@link NOT_DECIDED} (a waiter aborted while its attempt waited for the lock).
   * @param shadow - counted and published as a shadow decision (`RequestOptions.shadow`).
   * @returns a promise of the result; it rejects (never throws) for a bad tier or clock, or a
   *   store error.
   */
  decideAsync(user: User | string, key: string, cost: number, record: boolean, skip?: () => boolean, shadow = false): Promise<RateLimitResult> {
    const decide = (): Promise<RateLimitResult> => {
      if (skip?.() === true) return Promise.resolve(NOT_DECIDED);
      const quota = this.quotaFor(user, key);
      const pending = Promise.resolve(this.decideAt(key, cost, quota, this.#clock.read(quota.windowMs), record));
      return record ? pending.then((result) => this.observer.observe(key, cost, result, quota, shadow)) : pending;
    };
    if (this.#locking) return this.mutex.runExclusive(key, decide);
    // An atomic store: decisions run together, but never inside a group's check-then-record of
    // the key (which holds it exclusively), so that the group's check stays true until it records.
    return this.mutex.runShared(key, decide);
  }
}

/**
 * @internal A decision with what it takes to refund it ({@link Decider.reserveSync},
 * {@link Decider.reserveAsync}): the result, the quota it was decided under, and the ticket of
 * the key table or the store (`undefined` when refused).
 */
export interface Reserved {
  readonly result: RateLimitResult;
  readonly quota: Quota;
  readonly ticket: unknown;
}

/** @internal The {@link Decider} members of refunds and penalties (issue 22), kept apart from the decisions. */
export interface DeciderRefunds {
  /** Called with a key after a refund gave something back: its `waitForSlot` waiters try again. */
  wake: (key: string) => void;
}

/**
 * @internal A decision in memory, recorded with a ticket for a refund: {@link Decider.decideSync}
 * (the same quota, clock, counting and listeners), then, in the same synchronous step, the key
 * table's ticket when allowed.
 * @throws as `decideSync`, and a `TypeError` naming the strategy when it cannot refund.
 */
export function reserveSync<State>(decider: Decider<State>, user: User | string, key: string, cost: number, shadow: boolean): Reserved {
  const table = decider.table as KeyTable<State>;
  table.checkRefunds();
  const quota = decider.quotaFor(user, key);
  const now = decider.now(quota);
  // The core operation, so that blocks apply (a blocked key is refused; a refusal may block).
  const decided = decider.decideAt(key, cost, quota, now, true) as RateLimitResult;
  // The ticket before the listeners: one of them may reset the key (its refund is then a no-op).
  const ticket = decided.allowed ? table.ticketOf(key, now, cost, quota) : undefined;
  const result = decider.observer.observe(key, cost, decided, quota, shadow);
  return { result, quota, ticket };
}

/**
 * @internal {@link reserveSync} with a store that can refund ({@link RefundingStore}), under
 * the key's lock as {@link Decider.decideAsync} decides.
 * @returns a promise; it rejects (never throws) with a `TypeError` naming the store when it
 *   cannot refund, or what the decision rejects with.
 */
export function reserveAsync(decider: Decider<unknown>, user: User | string, key: string, cost: number, shadow: boolean): Promise<Reserved> {
  const store = refundingStore(decider, 'reserve');
  return decider.locked(key, async () => {
    const quota = decider.quotaFor(user, key);
    const reserved = await store.reserve(key, decider.now(quota), cost, quota);
    const result = decider.observer.observe(key, cost, reserved.result, quota, shadow);
    return { result, quota, ticket: result.allowed ? reserved.ticket : undefined };
  });
}

/**
 * @internal Gives back `units` of a reserved decision on `key` (its {@link Reserved.ticket}):
 * in memory at once (synchronously, at `nowMs` when given, else the clock read now), with a
 * store under the key's lock. Wakes the key's waiters when something was given back.
 */
export function refundReserved(decider: Decider<unknown>, key: string, quota: Quota, ticket: unknown, units: number, nowMs?: number): boolean | Promise<boolean> {
  const table = decider.table;
  if (table !== undefined) {
    // `nowMs`: the clock read beforehand by a group refund, so that nothing throws once it runs.
    const refunded = table.refund(key, ticket as TableTicket<unknown>, units, nowMs ?? decider.now(quota));
    if (refunded) decider.refunds.wake(key);
    return refunded;
  }
  const store = decider.store as RefundingStore;
  return decider.locked(key, async () => {
    // The clock is read for the refund as for a decision (a store timed by it needs it).
    const refunded = await store.refund(key, ticket, units, quota, decider.now(quota));
    if (refunded) decider.refunds.wake(key);
    return refunded;
  });
}

/**
 * @internal Records `points` on `user`'s key without asking, in memory: the result of a peek of
 * cost 1 right after. Not counted, not published.
 * @throws a `RangeError` naming `points` above the key's threshold; what the key table throws.
 */
export function penaltySync<State>(decider: Decider<State>, user: User | string, key: string, points: number): RateLimitResult {
  const table = decider.table as KeyTable<State>;
  const quota = decider.quotaFor(user, key);
  checkPoints(points, quota);
  const now = decider.now(quota);
  table.penalty(key, now, points, quota);
  // A peek through the core operation, so that a block in force is reported.
  return decider.decideAt(key, 1, quota, now, false) as RateLimitResult;
}

/** @internal {@link penaltySync} with a store that can refund, under the key's lock. */
export function penaltyAsync(decider: Decider<unknown>, user: User | string, key: string, points: number): Promise<RateLimitResult> {
  const store = refundingStore(decider, 'penalty');
  return decider.locked(key, async () => {
    const quota = decider.quotaFor(user, key);
    checkPoints(points, quota);
    return store.penalty(key, decider.now(quota), points, quota);
  });
}

/** @throws a `RangeError` naming `points` when above `quota.threshold` (checked positive before). */
function checkPoints(points: number, quota: Quota): void {
  if (points > quota.threshold) throw rangeError('points', `an integer from 1 to the threshold, ${quota.threshold}`, points);
}

/**
 * @internal The decider's store, when it can refund. @throws a `TypeError` naming the store otherwise.
 */
export function refundingStore(decider: Decider<unknown>, method: string): RefundingStore {
  const store = decider.store as RateLimitStore;
  if (!isRefunding(store)) {
    throw new RateWardenTypeError(
      `Expected a store implementing RefundingStore (reserve, refund, penalty, block, delete) for \`${method}\`, got the store \`${store.name}\`, which does not`,
    );
  }
  return store;
}

/** The decider of each limiter, registered by its constructor. */
const deciders = new WeakMap<object, Decider<unknown>>();

/** @internal Registers `decider` as `limiter`'s (called once, by the `RateLimiter` constructor). */
export function registerDecider(limiter: object, decider: Decider<unknown>): void {
  deciders.set(limiter, decider);
}

/**
 * @internal The documented internal door to a limiter's {@link Decider}, for `RateLimitGroup`;
 * `undefined` when `limiter` is not a `RateLimiter`.
 */
export function deciderOf(limiter: unknown): Decider<unknown> | undefined {
  return typeof limiter === 'object' && limiter !== null ? deciders.get(limiter) : undefined;
}
