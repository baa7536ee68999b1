/**
 * The `StoreBatch` of the Redis strategies on one client and time mode: a `RateLimitGroup`'s
 * limits decided as one unit of the decision queue (`./decision-queue.ts`), all or nothing,
 * atomically, in the same script, layout, reply and deadlines as single decisions (and batched
 * with them).
 *
 * @module
 */
import { RateWardenRangeError } from '../errors.js';
import type { RateLimitResult } from '../result.js';
import type { BatchRequest, StoreBatch, StoreReservation } from '../store.js';
import { queueFor, type DecisionQueue, type QueuedEntry } from './decision-queue.js';
import { hashTag } from './keys.js';
import { redisLimitOf } from './redis-limit.js';
import { perLink, type ServerLink } from './server-link.js';

/** Group batches, by link: strategies on one client and time mode share one. */
const batches = new WeakMap<ServerLink, RedisBatch>();

/** @internal The group batch of the strategies on `link`'s client and time mode. */
export function batchFor(link: ServerLink): RedisBatch {
  return perLink(batches, link, (l) => new RedisBatch(l));
}

/**
 * @internal Decides a group's limits on one client (and time mode) in one unit: every limit
 * checked and, only if all allow, all recorded, in one script call.
 */
export class RedisBatch implements StoreBatch {
  readonly #link: ServerLink;
  readonly #queue: DecisionQueue;

  constructor(link: ServerLink) {
    this.#link = link;
    this.#queue = queueFor(link);
  }

  decideAll(requests: readonly BatchRequest[], record: boolean): Promise<readonly RateLimitResult[]> {
    return this.#decide(requests, record, false) as Promise<readonly RateLimitResult[]>;
  }

  /**
   * {@link decideAll} recording, with a ticket per limit for its store's `refund` (`undefined`
   * for every limit when the group was refused). One script call, as `decideAll`.
   */
  reserveAll(requests: readonly BatchRequest[]): Promise<readonly StoreReservation[]> {
    return this.#decide(requests, true, true) as Promise<readonly StoreReservation[]>;
  }

  #decide(requests: readonly BatchRequest[], record: boolean, reserve: boolean): Promise<readonly RateLimitResult[] | readonly StoreReservation[]> {
    const entries = requests.map((r): QueuedEntry => {
      const limit = redisLimitOf(r.store);
      return { algorithm: limit.algorithm, redisKey: limit.redisKey(r.key), nowMs: r.nowMs, cost: r.cost, quota: r.quota, limit, key: r.key };
    });
    if (entries.length > 1 && new Set(entries.map((e) => e.redisKey)).size !== entries.length) {
      return Promise.reject(
        new RateWardenRangeError('Expected the limits of a group to use distinct Redis keys, got one key twice: give each limit its own `prefix`'),
      );
    }
    if (entries.length > 1 && this.#link.cluster && new Set(entries.map((e) => hashTag(e.redisKey))).size > 1) {
      return this.#decideAcrossSlots(entries, record, reserve);
    }
    return reserve ? this.#queue.group(entries, true, true) : this.#queue.group(entries, record);
  }

  /**
   * A group on Redis Cluster whose keys are in different slots (a per-user and a global limit):
   * no script can touch them together, so each slot's limits are checked (one unit per slot, in
   * parallel), then, only if all allow, recorded (one more per slot). Atomic per slot, not across
   * slots: another process may take the last slot of one limit in between, and the limits already
   * recorded then stay recorded (the group reports the refusal).
   */
  async #decideAcrossSlots(entries: readonly QueuedEntry[], record: boolean, reserve: boolean): Promise<readonly RateLimitResult[] | readonly StoreReservation[]> {
    const slots = new Map<string, number[]>();
    entries.forEach((e, i) => {
      const tag = hashTag(e.redisKey);
      const members = slots.get(tag);
      if (members === undefined) slots.set(tag, [i]);
      else members.push(i);
    });
    const run = async (write: boolean): Promise<RateLimitResult[]> => {
      const results = new Array<RateLimitResult>(entries.length);
      await Promise.all(
        [...slots.values()].map(async (indexes) => {
          const decided = await this.#queue.group(
            indexes.map((i) => entries[i] as QueuedEntry),
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
    if (!reserve) {
      if (!record || !checked.every((r) => r.allowed)) return checked;
      return run(true);
    }
    if (!checked.every((r) => r.allowed)) return checked.map((result) => ({ result, ticket: undefined }));
    // Recorded per slot with tickets; a slot refused in between leaves the others recorded (as
    // above), and then no ticket is given (the group reports the refusal).
    const reserved = new Array<StoreReservation>(entries.length);
    await Promise.all(
      [...slots.values()].map(async (indexes) => {
        const decided = await this.#queue.group(
          indexes.map((i) => entries[i] as QueuedEntry),
          true,
          true,
        );
        indexes.forEach((i, j) => {
          reserved[i] = decided[j] as StoreReservation;
        });
      }),
    );
    if (reserved.every((r) => r.result.allowed)) return reserved;
    return reserved.map((r) => ({ result: r.result, ticket: undefined }));
  }
}
