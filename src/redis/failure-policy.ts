/**
 * What a Redis strategy decides when Redis fails or does not answer in time: its failure
 * policy ({@link RedisFailurePolicy}), including the in-memory fallback of `"local"`, which keeps
 * its keys in the core's key table.
 *
 * @module
 */
import { KeyTable } from '../key-table.js';
import type { RateLimitResult } from '../result.js';
import type { BatchRequest } from '../store.js';
import type { RateLimitStrategy } from '../strategy.js';

/**
 * What a Redis strategy does when Redis does not answer in time or fails:
 * - `"throw"`: the decision rejects with the error (a `RateWardenRedisTimeoutError` on
 *   timeout); the caller decides.
 * - `"fail-closed"`: the request is **rejected** (`allowed: false`, `remaining: 0`, `retryAfter`
 *   the smaller of 1 s and the window), marked `degraded: "fail-closed"`.
 * - `"fail-open"`: the request is **allowed** (`remaining` as for a first request), marked
 *   `degraded: "fail-open"`: an outage of Redis lifts the limit.
 * - `"local"`: the request is decided by the same algorithm in memory, in this process, marked
 *   `degraded: "local"`: each process then enforces the limit on its own (N processes may allow
 *   up to N × threshold together, besides what Redis allows) until Redis answers again. What the
 *   fallback allowed stays counted in it until its window passes, across answers and outages
 *   (Redis never learns of it): a key whose outages alternate with answers is still held to the
 *   threshold by this process's fallback.
 *
 * A request whose cost exceeds the threshold is rejected with `retryAfter: Infinity` under every
 * policy but `"throw"`: it could never be allowed.
 */
export type RedisFailurePolicy = 'throw' | 'fail-closed' | 'fail-open' | 'local';

/** The policies, for validation and messages. */
export const FAILURE_POLICIES: readonly RedisFailurePolicy[] = ['throw', 'fail-closed', 'fail-open', 'local'];

/** Keys of the local fallback at which it first sweeps; then twice the keys left. */
const LOCAL_SWEEP_AT = 1_024;

/**
 * @internal The degraded decisions of one Redis strategy under its failure policy (any but
 * `"throw"`, which the caller handles), with the local fallback's keys for `"local"`.
 */
export class FailurePolicy {
  readonly #policy: RedisFailurePolicy;
  readonly #local: RateLimitStrategy<unknown>;
  #table: KeyTable<unknown> | undefined;
  #sweepAt = LOCAL_SWEEP_AT;

  /**
   * @param policy - the strategy's `onFailure`.
   * @param local - the in-memory algorithm deciding like the script, for `"local"`.
   */
  constructor(policy: RedisFailurePolicy, local: RateLimitStrategy<unknown>) {
    this.#policy = policy;
    this.#local = local;
  }

  /** Keys tracked by the local fallback now. */
  get localSize(): number {
    return this.#table?.size ?? 0;
  }

  /** Forgets what the local fallback kept for `key` (a deleted key starts afresh here too). */
  forget(key: string): void {
    this.#table?.forget(key);
  }

  /** The degraded decision of `request`: recorded when `record`, else checked (`peek`). */
  decide(request: Omit<BatchRequest, 'store'>, record: boolean): RateLimitResult {
    const { cost, quota } = request;
    const policy = this.#policy;
    if (cost > quota.threshold && policy !== 'local') {
      return { allowed: false, remaining: 0, retryAfter: Infinity, limit: quota.threshold, resetAfter: 0, degraded: policy as 'fail-open' | 'fail-closed' };
    }
    if (policy === 'fail-closed') {
      const wait = Math.min(1, quota.windowSeconds);
      return { allowed: false, remaining: 0, retryAfter: wait, limit: quota.threshold, resetAfter: wait, degraded: 'fail-closed' };
    }
    if (policy === 'fail-open') {
      // As for a key seen for the first time: after the request (recorded), or before it (peek).
      const remaining = record ? quota.threshold - cost : quota.threshold;
      return { allowed: true, remaining, retryAfter: 0, limit: quota.threshold, resetAfter: 0, degraded: 'fail-open' };
    }
    return { ...this.#decideLocally(request, record), degraded: 'local' };
  }

  /** Decides in this process's memory, with the same algorithm, in the core's key table. */
  #decideLocally(request: Omit<BatchRequest, 'store'>, record: boolean): RateLimitResult {
    const { key, nowMs, cost, quota } = request;
    const table = (this.#table ??= new KeyTable(this.#local, { maxKeys: Infinity, defaultQuota: undefined, tiered: true }));
    if (!record) return table.peek(key, nowMs, cost, quota);
    const decided = table.consume(key, nowMs, cost, quota);
    if (table.size >= this.#sweepAt) {
      // Amortised sweep: forget the keys whose windows are clear, then wait for twice as many.
      table.cleanUp(nowMs);
      this.#sweepAt = Math.max(LOCAL_SWEEP_AT, table.size * 2);
    }
    return decided;
  }
}
