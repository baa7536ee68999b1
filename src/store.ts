/**
 * The store contract ({@link RateLimitStore}): a strategy whose per-key state lives in a store
 * (Redis, a database, any asynchronous key-value store) and which decides by key. Its optional
 * capability, deciding several limits at once for a `RateLimitGroup`, is a contract of its own
 * ({@link BatchingStore}). The in-memory counterpart is `RateLimitStrategy` (`./strategy.ts`).
 *
 * @module
 */
import type { Quota } from './quota.js';
import type { RateLimitResult } from './result.js';

/**
 * A rate-limiting strategy whose state lives in a store, pluggable into `RateLimiter` as its
 * `strategy`. `ratewarden/redis`'s strategies are the built-in ones.
 *
 * The limiter keeps nothing per key for a store (its `size` stays 0; `cleanUp()` and `maxKeys`
 * have nothing to do: the store expires what it keeps). It reads the clock, chooses the quota
 * (tiers) and counts the decisions; the store decides.
 *
 * **Atomicity.** Evict → check → record must not interleave with another decision on the same
 * key. Unless the store declares {@link atomic}, the limiter runs the decisions of each key one
 * at a time under a per-key async mutex — one per store, shared by every limiter that uses it —
 * first come first served, and reads the clock after the lock is acquired: a store that reads,
 * awaits and writes is then exact within one process.
 * A store that makes each decision atomically itself (one Redis script, one transaction) sets
 * `atomic: true`: its decisions of a key then run together, without waiting for each other, so
 * that one process's decisions on a hot key do not queue one round trip apart. They only wait
 * while a `RateLimitGroup` holds the key between its check and its record (the group holds it
 * exclusively, these hold it shared), so that no decision lands in between.
 */
export interface RateLimitStore {
  /** A short name for messages and tooling, such as `"redis-gcra"`. */
  readonly name: string;
  /**
   * `true` when the store makes each decision atomically by itself, so the limiter does not
   * serialise its decisions (they wait only for a group holding the key); see the interface's
   * description.
   * @default false — the limiter serialises each key's decisions with its per-key mutex
   */
  readonly atomic?: boolean;
  /**
   * The largest `threshold` the store supports, when it has one. Checked by `createQuota` for the
   * limiter's quota and every tier.
   * @default Number.MAX_SAFE_INTEGER
   */
  readonly maxThreshold?: number;
  /**
   * The longest window, in **seconds**, the store supports, when it has a bound (its integer
   * arithmetic or expiry times). Checked by `createQuota` for the limiter's quota and every tier.
   * @default no bound beyond the quota's own
   */
  readonly maxWindowSeconds?: number;
  /**
   * The largest `threshold × windowMs` (the window in **milliseconds**) the strategy supports,
   * when it has one: the rate strategies keep their state in integers scaled by both. Checked by
   * `createQuota` for the limiter's quota and every tier.
   * @default no bound
   */
  readonly maxThresholdTimesWindowMs?: number;
  /**
   * Decides one request of `cost` units for `key` at `nowMs` and, only when it is allowed,
   * records it.
   *
   * @param key - the key (user id), a non-empty string.
   * @param nowMs - the limiter's clock in **milliseconds**, read for this decision (a store may
   *   use its own clock instead, as Redis's `TIME` by default).
   * @param cost - a positive safe integer, already validated.
   * @param quota - the quota to enforce.
   * @returns a promise of the result, `remaining` and `resetAfter` after the request. A rejection
   *   (a store error) reaches the caller of the decision.
   */
  consume(key: string, nowMs: number, cost: number, quota: Quota): PromiseLike<RateLimitResult>;
  /**
   * The result a request of `cost` units would get now, recording nothing; `remaining` and
   * `resetAfter` as they stand before the request.
   *
   * @param key - the key (user id) asked about.
   * @param nowMs - the limiter's clock in **milliseconds**.
   * @param cost - a positive safe integer, already validated.
   * @param quota - the quota to check against.
   */
  peek(key: string, nowMs: number, cost: number, quota: Quota): PromiseLike<RateLimitResult>;
}

/**
 * The capability of a store that keeps something per key **in this process** (a local cache,
 * such as the Redis strategies' block cache) to forget it: `RateLimiter.reset(user)` calls
 * {@link forget} on a store that has it (recognised by the method).
 */
export interface CachingStore extends RateLimitStore {
  /**
   * Drops what the store keeps in this process for `key`, so that `key`'s next decision asks the
   * store itself. Must not throw. The shared state is not touched.
   * @param key - the key (user id).
   */
  forget(key: string): void;
}

/**
 * The capability of a store to decide a `RateLimitGroup`'s limits in one step: when every limit
 * of a group is on stores sharing the same {@link batch} object, the group makes one call
 * (one script for Redis), atomic across the limits.
 */
export interface BatchingStore extends RateLimitStore {
  /** Decides several limits at once; shared by the stores that can be decided together. */
  readonly batch: StoreBatch;
  /**
   * The key under which `key`'s state is stored, so that a group can refuse two limits that
   * would count on one stored key.
   */
  storeKey(key: string): string;
}

/** One limit's share of a batched decision (see {@link StoreBatch}). */
export interface BatchRequest {
  /** The store of the limit; its `batch` is the batch deciding. */
  readonly store: BatchingStore;
  /** The key decided on. */
  readonly key: string;
  /** The limiter's clock in **milliseconds**. */
  readonly nowMs: number;
  /** A positive safe integer. */
  readonly cost: number;
  /** The quota to enforce. */
  readonly quota: Quota;
}

/**
 * Decides several limits at once, all or nothing, for a `RateLimitGroup`: each limit is checked
 * and, only when `record` and every limit allows, each is recorded, atomically.
 */
export interface StoreBatch {
  /**
   * @param requests - one per limit, in member order.
   * @param record - `true` to record when every limit allows; `false` to only check (`peek`).
   * @returns one result per request, in order: when every one is allowed and `record`, the
   *   results of recording; otherwise the results of checking, as `peek` reports them.
   */
  decideAll(requests: readonly BatchRequest[], record: boolean): PromiseLike<readonly RateLimitResult[]>;
  /**
   * {@link decideAll} with `record: true`, each result with its ticket for
   * {@link RefundingStore.refund} on its store (`ticket: undefined` for results that did not
   * record). Present when the batch's stores are {@link RefundingStore}s.
   */
  reserveAll?(requests: readonly BatchRequest[]): PromiseLike<readonly StoreReservation[]>;
}

/** @internal Whether `store` offers the batching capability. */
export function isBatching(store: RateLimitStore): store is BatchingStore {
  const s = store as Partial<BatchingStore>;
  return typeof s.storeKey === 'function' && typeof s.batch?.decideAll === 'function';
}

/**
 * A store's recorded decision with what it takes to give it back ({@link RefundingStore.reserve}).
 */
export interface StoreReservation {
  /** The decision, as {@link RateLimitStore.consume} reports it. */
  readonly result: RateLimitResult;
  /**
   * What the store needs to refund this decision, opaque to the limiter (for Redis: the
   * server time it was recorded at, and what identifies its entries). `undefined` when the
   * decision was refused (nothing to refund).
   */
  readonly ticket: unknown;
}

/**
 * The capability of a store to give back, penalise, block and delete: what `RateLimiter`'s
 * `reserve`, `penalty`, `block` and `delete` and the `blockSeconds` option need of a store
 * (recognised by its methods). Each operation is atomic with the decisions of the key, as the
 * store's decisions are. The Redis strategies have it.
 */
export interface RefundingStore extends RateLimitStore {
  /**
   * Whether the store's decisions apply the quota's `blockMs` and `extendBlock` (blocking for a
   * while). A limiter with `blockSeconds > 0` needs it.
   */
  readonly blocks: true;
  /**
   * {@link RateLimitStore.consume} that also returns a ticket for {@link refund}.
   */
  reserve(key: string, nowMs: number, cost: number, quota: Quota): PromiseLike<StoreReservation>;
  /**
   * Gives back `units` of the decision `ticket` describes, with the semantics of
   * `Reservation.refund` (exact for the log, never more permissive for GCRA).
   * @param units - a positive safe integer, at most what the ticket's decision has left to
   *   refund (the limiter checks it).
   * @param nowMs - the limiter's clock in **milliseconds**, read for this refund (a store may use
   *   its own clock instead, as Redis's `TIME` by default): a refund once the decision has left
   *   the window is a no-op, as in memory. Absent when called by an older limiter.
   * @returns whether the units were given back (`false`: a documented no-op).
   */
  refund(key: string, ticket: unknown, units: number, quota: Quota, nowMs?: number): PromiseLike<boolean>;
  /**
   * Records `points` units against `key` without asking (see `RateLimiter.penalty`).
   * @returns what a peek of cost 1 reports right after.
   */
  penalty(key: string, nowMs: number, points: number, quota: Quota): PromiseLike<RateLimitResult>;
  /** Blocks `key` for `blockMs` milliseconds from now, replacing any block it had. */
  block(key: string, nowMs: number, blockMs: number, quota: Quota): PromiseLike<void>;
  /**
   * Deletes everything the store keeps for `key`, shared state and block included.
   * @returns whether anything was there.
   */
  delete(key: string): PromiseLike<boolean>;
}

/** @internal Whether `store` offers the refunding capability. */
export function isRefunding(store: RateLimitStore): store is RefundingStore {
  const s = store as Partial<RefundingStore>;
  return typeof s.reserve === 'function' && typeof s.refund === 'function' && typeof s.penalty === 'function' && typeof s.block === 'function' && typeof s.delete === 'function';
}
