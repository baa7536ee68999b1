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
import { hashTag } from './keys.js';
import { notifyError, redisLimitOf, type RedisLimit } from './redis-limit.js';
import { describeReply, parseReply, toNumber } from './reply.js';
import { DECIDE_SCRIPT, DECIDE_SHA } from './script.js';
import { TICKS_PER_MS } from '../time.js';
import { DEADLINE_MARGIN_US, LIMITER_TIME_MIN_EXPIRY_MS } from './decision-queue.js';
import type { ServerLink } from './server-link.js';

/** Group batches, by link: strategies on one client and time mode share one. */
const batches = new WeakMap<ServerLink, RedisBatch>();

/** @internal The group batch of the strategies on `link`'s client and time mode. */
export function batchFor(link: ServerLink): RedisBatch {
  let batch = batches.get(link);
  if (batch === undefined) {
    batch = new RedisBatch(link);
    batches.set(link, batch);
  }
  return batch;
}

/**
 * @internal Runs the decision script for one or more limits on one client: the `StoreBatch` of
 * every Redis strategy on that client (and time mode).
 */
export class RedisBatch implements StoreBatch {
  readonly #link: ServerLink;

  constructor(link: ServerLink) {
    this.#link = link;
  }

  async decideAll(requests: readonly BatchRequest[], record: boolean): Promise<readonly RateLimitResult[]> {
    const limits = requests.map((r) => redisLimitOf(r.store));
    const keys = requests.map((r, i) => (limits[i] as RedisLimit).redisKey(r.key));
    if (keys.length > 1 && new Set(keys).size !== keys.length) {
      throw new RateWardenRangeError(
        'Expected the limits of a group to use distinct Redis keys, got one key twice: give each limit its own `prefix`',
      );
    }
    if (keys.length > 1 && this.#link.cluster && new Set(keys.map(hashTag)).size > 1) {
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

  /**
   * One decision: the script call with its timeout, `NOSCRIPT` fallback and deadline; the parsed
   * results.
   *
   * **No decision reported as failed is recorded** — from the first call on. The call's
   * deadline, {@link DEADLINE_MARGIN_US} short of its timeout and counted from its start, is
   * sent in the server's time: a script that starts later (queued behind `CLIENT PAUSE`, or
   * replayed by the client after a reconnect, or sent by `EVAL` after `NOSCRIPT`) writes
   * nothing. Converting the deadline needs the offset of the server's clock, so until one reply
   * has taught it, the call first sends the handshake (the script in its `t` mode, which writes
   * nothing, on the same keys so that it reaches the same node), under the same timeout: a
   * call whose handshake is late never sends its decision. The handshake costs one extra round
   * trip, once per client and time mode (concurrent first calls share it); with no timeout
   * (`Infinity`) there is no deadline and no handshake.
   *
   * **A decision is recorded at most once, even when the client re-sends it** (ioredis re-sends
   * the commands in flight after a reconnect: a script that ran, but whose reply was lost with
   * the connection, would run again). With such a client ({@link RedisAdapter.resends}) a
   * decision that records sends mode `r` and a token key of its own (`<first key>:call:<id>`,
   * in the first key's hash slot): the first run stores its reply there, a re-sent run returns
   * it and writes nothing. A re-sent run that finds no token and starts after the deadline
   * writes nothing (as above); the token outlives the deadline by a second, so one that ran
   * before always answers a re-send. The caller may still have timed out before a re-sent reply
   * comes: a reply lost after the script ran cannot be reported in time, by any client.
   */
  async #call(
    requests: readonly BatchRequest[],
    limits: readonly RedisLimit[],
    keys: readonly string[],
    record: boolean,
    timeoutSeconds: number,
  ): Promise<RateLimitResult[]> {
    const startUs = performance.now() * 1000;
    const nowMs = (requests[0] as BatchRequest).nowMs;
    const redisTime = this.#link.time === 'redis';
    const args: string[] = [
      record ? '1' : '0',
      // The reading on the grid of 2^-10 ms, in ticks (an integer; printed exactly).
      redisTime ? '' : String(Math.round(nowMs * TICKS_PER_MS)),
      redisTime ? '1' : String(LIMITER_TIME_MIN_EXPIRY_MS),
      '', // the deadline, set once the offset is known
    ];
    for (let i = 0; i < requests.length; i++) {
      const r = requests[i] as BatchRequest;
      args.push((limits[i] as RedisLimit).kind, String(r.quota.threshold), String(r.quota.windowMs), String(r.cost));
    }
    let scriptKeys = keys;
    if (record && this.#link.resends) {
      args[0] = 'r';
      // In the first key's hash slot: every key has a hash tag, the user id (never empty), and
      // it stays the first `{…}` of the token's name.
      scriptKeys = [...keys, this.#link.tokenFor(keys[0] as string)];
    }
    const state = { timedOut: false };
    const reply = await withTimeout(this.#decide(keys, scriptKeys, args, state, startUs, timeoutSeconds), timeoutSeconds, state);
    if (Array.isArray(reply) && reply.length === 2 && toNumber(reply[0]) === -1) {
      // The script started after the deadline (the reply took longer than the margin the
      // offset leaves): nothing was written.
      throw new RateWardenRedisTimeoutError(timeoutSeconds);
    }
    const results = parseReply(reply, requests, redisTime);
    if (results === undefined) throw new RateWardenRedisReplyError(describeReply(reply));
    return results;
  }

  /**
   * Sends the decision (after the handshake if the offset is unknown) with its deadline, unless
   * the caller has given up by then; learns the offset from the reply. `keys`: the limits' (the
   * handshake's); `scriptKeys`: the decision's (with its token, if any).
   */
  async #decide(
    keys: readonly string[],
    scriptKeys: readonly string[],
    args: string[],
    state: { timedOut: boolean },
    startUs: number,
    timeoutSeconds: number,
  ): Promise<unknown> {
    if (timeoutSeconds !== Infinity) {
      if (this.#link.offsetUs === undefined) await this.#link.handshake(keys);
      // Too late: the caller has reported a failure, so nothing may be sent that could write.
      if (state.timedOut) throw new RateWardenRedisTimeoutError(timeoutSeconds);
      args[3] = String(Math.floor(startUs + timeoutSeconds * 1e6 - DEADLINE_MARGIN_US + (this.#link.offsetUs as number)));
    }
    const reply = await this.#link.run(DECIDE_SHA, DECIDE_SCRIPT, scriptKeys, args, () => state.timedOut);
    this.#link.learn(Array.isArray(reply) ? reply[reply.length - 1] : undefined);
    return reply;
  }

  /** Applies the failure policies: each limit's own; all or nothing across the limits. */
  #fail(
    error: unknown,
    requests: readonly BatchRequest[],
    limits: readonly RedisLimit[],
    keys: readonly string[],
    record: boolean,
  ): RateLimitResult[] {
    for (const l of new Set(limits)) notifyError(l, error, keys);
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
