/**
 * @internal What the decision queue (`./decision-queue.ts`) and the group batch
 * (`./redis-batch.ts`) need of each Redis strategy — its algorithm, key layout, timeout, batch
 * size and failure handling — reached through one internal door ({@link redisLimitOf}) rather
 * than public members of the strategy.
 *
 * @module
 */
import { typeError } from '../errors.js';
import type { BatchingStore } from '../store.js';
import type { RedisAlgorithm } from './algorithm.js';
import type { FailurePolicy, RedisFailurePolicy } from './failure-policy.js';

/** @internal The internals of one Redis strategy. */
export interface RedisLimit {
  /** The algorithm deciding it. */
  readonly algorithm: RedisAlgorithm;
  /** Seconds to wait for Redis per decision (`Infinity`: no timeout). */
  readonly timeoutSeconds: number;
  /** The most entries one script call carries when this limit's decisions are in it. */
  readonly batchSize: number;
  /** The failure policy's name. */
  readonly onFailure: RedisFailurePolicy;
  /** The user's error hook. */
  readonly onError: ((error: unknown, keys: readonly string[]) => unknown) | undefined;
  /** The degraded decisions (and the local fallback). */
  readonly failure: FailurePolicy;
  /** The Redis key of a user id. */
  redisKey(key: string): string;
}

const limits = new WeakMap<object, RedisLimit>();

/** @internal Registers a Redis strategy's internals (by its constructor). */
export function registerRedisLimit(strategy: object, limit: RedisLimit): void {
  limits.set(strategy, limit);
}

/**
 * @internal The internals of a Redis strategy.
 * @throws {RateWardenTypeError} when `store` is not a Redis strategy (a batch got a foreign store: a bug).
 */
export function redisLimitOf(store: BatchingStore): RedisLimit {
  const limit = limits.get(store);
  if (limit === undefined) throw typeError('store', 'a ratewarden/redis strategy (a batch got a foreign store)', store);
  return limit;
}

/** @internal Calls `limit`'s error hook, never letting it change the decision. */
export function notifyError(limit: RedisLimit, error: unknown, keys: readonly string[]): void {
  if (limit.onError === undefined) return;
  try {
    const returned = limit.onError(error, keys);
    // An async logger that rejects must not leave an unhandled rejection behind.
    if (typeof (returned as PromiseLike<unknown> | undefined)?.then === 'function') {
      Promise.resolve(returned).catch(() => {});
    }
  } catch {
    // A failing logger must not change the decision.
  }
}
