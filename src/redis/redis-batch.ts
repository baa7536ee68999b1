/**
 * Running the decision script (`./script.ts`) for one or more limits on one client: the
 * `StoreBatch` shared by every Redis strategy on that client and time mode. It owns the call —
 * the `NOSCRIPT` fallback, the timeout and the server-side deadline, Redis Cluster groups across
 * slots — and hands failures to each strategy's failure policy.
 *
 * @module
 */
import { RateWardenRangeError, RateWardenRedisReplyError, RateWardenRedisTimeoutError } from '../errors.js';
import type { RateLimitResult } from '../result.js';
import type { BatchRequest, StoreBatch } from '../store.js';
import { MAX_TIMER_MS, unref } from '../timers.js';
import { isNoScript, type RedisAdapter } from './client.js';
import { hashTag } from './keys.js';
import { redisLimitOf, type RedisLimit } from './redis-limit.js';
import { describeReply, parseReply, toNumber } from './reply.js';
import { DECIDE_SCRIPT, DECIDE_SHA } from './script.js';

/** The shortest expiry set in `time: "limiter"` mode (Redis expires on its own clock). */
const LIMITER_TIME_MIN_EXPIRY_MS = 3_600_000;

/** Batches, by adapter and time mode: strategies on one client share them. */
const batches = new WeakMap<RedisAdapter, { redis?: RedisBatch; limiter?: RedisBatch }>();

/** @internal The batch of the strategies on `adapter` with time mode `time`. */
export function batchFor(adapter: RedisAdapter, time: 'redis' | 'limiter'): RedisBatch {
  let shared = batches.get(adapter);
  if (shared === undefined) {
    shared = {};
    batches.set(adapter, shared);
  }
  return (shared[time] ??= new RedisBatch(adapter, time));
}

/**
 * @internal Runs the decision script for one or more limits on one client: the `StoreBatch` of
 * every Redis strategy on that client (and time mode).
 */
export class RedisBatch implements StoreBatch {
  readonly #adapter: RedisAdapter;
  readonly #time: 'redis' | 'limiter';
  /**
   * The server's clock minus this process's (`performance.now()`), in microseconds, learnt from
   * the server time every reply carries; `undefined` until the first reply. Deadlines sent to
   * the script are in the server's time, so a script that runs after its caller gave up (queued
   * behind a pause, or replayed by the client after a reconnect) writes nothing.
   */
  #offsetUs: number | undefined;

  constructor(adapter: RedisAdapter, time: 'redis' | 'limiter') {
    this.#adapter = adapter;
    this.#time = time;
  }

  async decideAll(requests: readonly BatchRequest[], record: boolean): Promise<readonly RateLimitResult[]> {
    const limits = requests.map((r) => redisLimitOf(r.store));
    const keys = requests.map((r, i) => (limits[i] as RedisLimit).redisKey(r.key));
    if (keys.length > 1 && new Set(keys).size !== keys.length) {
      throw new RateWardenRangeError(
        'Expected the limits of a group to use distinct Redis keys, got one key twice: give each limit its own `prefix`',
      );
    }
    if (keys.length > 1 && this.#adapter.cluster === true && new Set(keys.map(hashTag)).size > 1) {
      return this.#decideAcrossSlots(requests, keys, record);
    }
    let timeout = 0;
    for (const l of limits) if (l.timeoutSeconds > timeout) timeout = l.timeoutSeconds;
    let results: RateLimitResult[];
    try {
      results = await this.#call(requests, limits, keys, record, timeout);
    } catch (error) {
      return this.#fail(error, requests, limits, keys, record);
    }
    for (const l of limits) l.failure.recovered();
    return results;
  }

  /**
   * A group on Redis Cluster whose keys are in different slots (a per-user and a global limit):
   * no script can touch them together, so each slot's limits are checked (one script call per
   * slot, in parallel), then, only if all allow, recorded (one more per slot). Atomic per slot,
   * not across slots: another process may take the last slot of one limit in between, and the
   * limits already recorded then stay recorded (the group reports the refusal).
   */
  async #decideAcrossSlots(
    requests: readonly BatchRequest[],
    keys: readonly string[],
    record: boolean,
  ): Promise<readonly RateLimitResult[]> {
    const slots = new Map<string, number[]>();
    keys.forEach((key, i) => {
      const tag = hashTag(key);
      const members = slots.get(tag);
      if (members === undefined) slots.set(tag, [i]);
      else members.push(i);
    });
    const run = async (write: boolean): Promise<RateLimitResult[]> => {
      const results = new Array<RateLimitResult>(requests.length);
      await Promise.all(
        [...slots.values()].map(async (indexes) => {
          const decided = await this.decideAll(
            indexes.map((i) => requests[i] as BatchRequest),
            write,
          );
          indexes.forEach((i, j) => {
            results[i] = decided[j] as RateLimitResult;
          });
        }),
      );
      return results;
    };
    const checked = await run(false);
    if (!record || !checked.every((r) => r.allowed)) return checked;
    return run(true);
  }

  /** One script call, with its timeout, `NOSCRIPT` fallback and deadline; the parsed results. */
  async #call(
    requests: readonly BatchRequest[],
    limits: readonly RedisLimit[],
    keys: readonly string[],
    record: boolean,
    timeoutSeconds: number,
  ): Promise<RateLimitResult[]> {
    const nowMs = (requests[0] as BatchRequest).nowMs;
    const redisTime = this.#time === 'redis';
    const offset = this.#offsetUs;
    const deadline =
      offset === undefined || timeoutSeconds === Infinity
        ? ''
        : String(Math.ceil(performance.now() * 1000 + timeoutSeconds * 1e6 + offset));
    const args: string[] = [
      record ? '1' : '0',
      redisTime ? '' : String(nowMs),
      redisTime ? '' : String(Math.round(nowMs * 1000)),
      redisTime ? '1' : String(LIMITER_TIME_MIN_EXPIRY_MS),
      deadline,
    ];
    for (let i = 0; i < requests.length; i++) {
      const r = requests[i] as BatchRequest;
      args.push((limits[i] as RedisLimit).kind, String(r.quota.threshold), String(r.quota.windowMs), String(r.cost));
    }
    const state = { timedOut: false };
    const reply = await withTimeout(this.#run(keys, args, state), timeoutSeconds, state);
    const serverUs = Array.isArray(reply) ? toNumber(reply[reply.length - 1]) : Number.NaN;
    if (Number.isFinite(serverUs)) this.#offsetUs = serverUs - performance.now() * 1000;
    if (Array.isArray(reply) && reply.length === 2 && toNumber(reply[0]) === -1) {
      // The script started after the deadline (this process's clock and the server's disagree
      // by more than the timeout's margin): nothing was written.
      throw new RateWardenRedisTimeoutError(timeoutSeconds);
    }
    const results = parseReply(reply, requests, limits.map((l) => l.kind));
    if (results === undefined) throw new RateWardenRedisReplyError(describeReply(reply));
    return results;
  }

  /**
   * `EVALSHA`, then `EVAL` when the server does not have the script (after a flush or restart),
   * unless the caller has given up by then.
   */
  async #run(keys: readonly string[], args: readonly string[], state: { timedOut: boolean }): Promise<unknown> {
    try {
      return await this.#adapter.evalSha(DECIDE_SHA, keys, args);
    } catch (error) {
      if (!isNoScript(error) || state.timedOut) throw error;
      return this.#adapter.eval(DECIDE_SCRIPT, keys, args);
    }
  }

  /** Applies the failure policies: each limit's own; all or nothing across the limits. */
  #fail(
    error: unknown,
    requests: readonly BatchRequest[],
    limits: readonly RedisLimit[],
    keys: readonly string[],
    record: boolean,
  ): RateLimitResult[] {
    for (const l of new Set(limits)) {
      if (l.onError === undefined) continue;
      try {
        const returned = l.onError(error, keys);
        // An async logger that rejects must not leave an unhandled rejection behind.
        if (typeof (returned as PromiseLike<unknown> | undefined)?.then === 'function') {
          Promise.resolve(returned).catch(() => {});
        }
      } catch {
        // A failing logger must not change the decision.
      }
    }
    if (limits.some((l) => l.onFailure === 'throw')) throw error;
    if (requests.length === 1) return [(limits[0] as RedisLimit).failure.decide(requests[0] as BatchRequest, record)];
    const checked = requests.map((r, i) => (limits[i] as RedisLimit).failure.decide(r, false));
    if (!record || !checked.every((r) => r.allowed)) return checked;
    return requests.map((r, i) => (limits[i] as RedisLimit).failure.decide(r, true));
  }
}

/**
 * Races `pending` against a timer of `seconds` (unref'ed; cleared when `pending` settles); marks
 * `state.timedOut` when the timer wins, so that the call sends nothing more.
 */
function withTimeout<T>(pending: Promise<T>, seconds: number, state: { timedOut: boolean }): Promise<T> {
  if (seconds === Infinity) return pending;
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      state.timedOut = true;
      reject(new RateWardenRedisTimeoutError(seconds));
    }, Math.min(seconds * 1000, MAX_TIMER_MS));
    unref(timer);
    pending.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        // After a timeout this rejection is expected and handled here: never unhandled.
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
