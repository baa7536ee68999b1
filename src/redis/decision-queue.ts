/**
 * The lean path of single decisions (`consume` and `peek` of a Redis strategy): micro-batching
 * per hash slot, one shared deadline sweep instead of a timer per call, and the block cache's
 * feed. A `RateLimitGroup`'s decisions take the group script instead (`./redis-batch.ts`).
 *
 * **Micro-batching.** A decision is sent at once when nothing of its slot is in flight (a lone
 * caller waits for nothing). Otherwise it queues; the queue is sent as one `EVALSHA` at the end
 * of the tick if fewer than {@link MAX_IN_FLIGHT} calls of the slot are in flight, else when one
 * returns (after the promise callbacks that the reply settled, so that callers issuing their
 * next decision join it), and at once when it holds `batchSize` decisions. Each
 * decision in a batch is decided alone, in arrival order (a key's decisions keep their order);
 * one that fails in Redis (a key of the wrong type) fails alone. A batch holds at most
 * `batchSize` decisions and at most {@link MAX_BATCH_UNITS} sliding-window-log units (one sorted-set
 * member each), so that one script never holds Redis long. On Redis Cluster the slot is the key's
 * (CRC16 of its hash tag, as Redis computes it): every key of one script must share a slot.
 *
 * **Deadlines.** Each decision's timeout counts from its submission. The decisions issued in
 * one tick of the event loop share one timer (they share the instant, under real and fake
 * timers alike), cleared once the last of them settles; when it fires it fails those still
 * pending, whether queued or in flight, and nothing more is sent for them. (A single sweep timer
 * for every pending decision would need `performance.now()` to tell which are due, which fake
 * timers do not move: a user's test advancing fake time by the timeout would not see it pass.)
 * A batch carries the earliest deadline of its decisions, in the
 * server's clock (less {@link DEADLINE_MARGIN_US}): a script that starts later writes nothing,
 * so no decision reported as failed is recorded (see `RedisStrategyOptions.timeoutSeconds`).
 *
 * @module
 */
import keySlot from 'cluster-key-slot';
import { RateWardenRedisCommandError, RateWardenRedisReplyError, RateWardenRedisTimeoutError } from '../errors.js';
import type { Quota } from '../quota.js';
import { outcome, type RateLimitResult } from '../result.js';
import { TICKS_PER_MS, onGrid, retryAfterSeconds } from '../time.js';
import { MAX_TIMER_MS, unref } from '../timers.js';
import type { BlockCache } from './block-cache.js';
import { LEAN_SCRIPT, LEAN_SHA } from './lean-script.js';
import { notifyError, type RedisLimit } from './redis-limit.js';
import { describeReply, toNumber } from './reply.js';
import type { ServerLink } from './server-link.js';

/**
 * How many calls of one slot may be in flight before further decisions wait for one to return:
 * two, so that Redis decides one batch while this process sends or settles the other.
 */
const MAX_IN_FLIGHT = 2;

/** The most sliding-window-log units (sorted-set members written) one batch carries. */
export const MAX_BATCH_UNITS = 1_000;

/** The shortest expiry set in `time: "limiter"` mode (Redis expires on its own clock), ms. */
export const LIMITER_TIME_MIN_EXPIRY_MS = 3_600_000;

/**
 * How much earlier than its timeout a call's deadline falls, in microseconds: Node's timers count
 * whole milliseconds, so a timeout may fire up to 1 ms before `performance.now()` says it is due.
 */
export const DEADLINE_MARGIN_US = 1_000;

/** The shortest expiry set in `time: "limiter"` mode, ms, as the script's argument. */
const MIN_EXPIRY_LIMITER_TIME = String(LIMITER_TIME_MIN_EXPIRY_MS);

/** @internal One decision, from submission until settled. */
export interface Pending {
  readonly limit: RedisLimit;
  readonly cache: BlockCache | undefined;
  readonly key: string;
  readonly redisKey: string;
  readonly nowMs: number;
  readonly cost: number;
  readonly quota: Quota;
  readonly record: boolean;
  /** `performance.now()` at submission, ms. */
  readonly startMs: number;
  /** Settled (answered, failed or timed out): nothing more is done for it. */
  done: boolean;
  /** Its deadline group (`undefined` without a timeout). */
  bucket: Bucket | undefined;
  readonly resolve: (result: RateLimitResult) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Decisions issued in one tick of the event loop, timed out together by one timer (armed when
 * the first is issued, cleared when the last settles).
 */
interface Bucket {
  readonly members: Pending[];
  left: number;
  timer: ReturnType<typeof setTimeout> | undefined;
}

/** Whether `p` is still pending (not settled). */
function isPending(p: Pending): boolean {
  return !p.done;
}

/** The decisions of one hash slot: queued, and how many calls are in flight. */
interface Slot {
  queue: Pending[];
  inFlight: number;
  /** A flush is scheduled (after the current promise callbacks). */
  scheduled: boolean;
}

/**
 * @internal The decisions of the strategies on one client, time mode, timeout and batch size:
 * queued per slot, sent in batches, timed out by one timer per tick of decisions.
 */
export class DecisionQueue {
  readonly #link: ServerLink;
  readonly #timeoutSeconds: number;
  readonly #timeoutMs: number;
  readonly #batchSize: number;
  readonly #cluster: boolean;
  readonly #redisTime: boolean;
  /** Standalone: the one slot. */
  readonly #slot: Slot = { queue: [], inFlight: 0, scheduled: false };
  /** Cluster: slots by number. */
  readonly #slots = new Map<number, Slot>();
  /** The deadline group decisions join now; `undefined` once the current tick is over. */
  #bucket: Bucket | undefined;
  readonly #closeBucket = (): void => {
    this.#bucket = undefined;
  };

  constructor(link: ServerLink, timeoutSeconds: number, batchSize: number) {
    this.#link = link;
    this.#timeoutSeconds = timeoutSeconds;
    this.#timeoutMs = timeoutSeconds * 1000;
    this.#batchSize = batchSize;
    this.#cluster = link.cluster;
    this.#redisTime = link.time === 'redis';
  }

  /** Decides one request (records it when `record` and allowed); see the module description. */
  submit(
    limit: RedisLimit,
    cache: BlockCache | undefined,
    key: string,
    nowMs: number,
    cost: number,
    quota: Quota,
    record: boolean,
  ): Promise<RateLimitResult> {
    // Until it settles, the cache neither answers for the key nor keeps an older refusal of it.
    if (record && cache !== undefined) cache.begin(key);
    return new Promise<RateLimitResult>((resolve, reject) => {
      const pending: Pending = {
        limit,
        cache,
        key,
        redisKey: limit.redisKey(key),
        nowMs,
        cost,
        quota,
        record,
        startMs: performance.now(),
        done: false,
        bucket: undefined,
        resolve,
        reject,
      };
      if (this.#timeoutSeconds !== Infinity) this.#watchFor(pending);
      const slot = this.#cluster ? this.#slotOf(pending.redisKey) : this.#slot;
      if (slot.inFlight === 0 && slot.queue.length === 0) {
        this.#send(slot, [pending]);
        return;
      }
      slot.queue.push(pending);
      if (slot.queue.length >= this.#batchSize) this.#flush(slot);
      else if (slot.inFlight < MAX_IN_FLIGHT) this.#schedule(slot);
    });
  }

  /** Flushes `slot`'s queue once the current promise callbacks have run (once per tick). */
  #schedule(slot: Slot): void {
    if (slot.scheduled) return;
    slot.scheduled = true;
    process.nextTick(() => {
      slot.scheduled = false;
      // Still room in flight (a full queue is sent at once, in flight or not); else the next
      // call of the slot to return sends it.
      if (slot.queue.length > 0 && slot.inFlight < MAX_IN_FLIGHT) this.#flush(slot);
    });
  }

  #slotOf(redisKey: string): Slot {
    const n = keySlot(redisKey);
    let slot = this.#slots.get(n);
    if (slot === undefined) {
      slot = { queue: [], inFlight: 0, scheduled: false };
      this.#slots.set(n, slot);
    }
    return slot;
  }

  /** Sends the queue's first decisions that are not settled, within the batch's bounds. */
  #flush(slot: Slot): void {
    const queue = slot.queue;
    const batch: Pending[] = [];
    let units = 0;
    let i = 0;
    for (; i < queue.length && batch.length < this.#batchSize; i++) {
      const p = queue[i] as Pending;
      if (p.done) continue;
      if (p.limit.kind === 'l' && p.record) {
        if (batch.length > 0 && units + p.cost > MAX_BATCH_UNITS) break;
        units += p.cost;
      }
      batch.push(p);
    }
    slot.queue = i === queue.length ? [] : queue.slice(i);
    if (batch.length > 0) this.#send(slot, batch);
  }

  /** After a call of `slot` returned: the queue goes once the callbacks it settled have run. */
  #returned(slot: Slot): void {
    slot.inFlight--;
    if (slot.queue.length > 0) this.#schedule(slot);
  }

  /** One script call for `batch`: after the handshake when the server's clock is not known yet. */
  #send(slot: Slot, batch: Pending[]): void {
    slot.inFlight++;
    const link = this.#link;
    if (this.#timeoutSeconds !== Infinity && link.offsetUs === undefined) {
      link.handshake(batch.map((p) => p.redisKey)).then(
        () => {
          this.#call(slot, batch);
        },
        (error: unknown) => {
          this.#returned(slot);
          for (const p of batch) this.#fail(p, error);
        },
      );
      return;
    }
    this.#call(slot, batch);
  }

  #call(slot: Slot, sent: Pending[]): void {
    // Only the decisions still pending: one whose time is up (while the handshake was late) has
    // been reported failed, and must not be sent.
    const batch = sent.filter(isPending);
    const n = batch.length;
    if (n === 0) {
      this.#returned(slot);
      return;
    }
    const link = this.#link;
    const keys: string[] = new Array<string>(n);
    const redisTime = this.#redisTime;
    const stride = redisTime ? 5 : 6;
    const args: string[] = new Array<string>(4 + stride * n);
    const first = batch[0] as Pending;
    const timed = this.#timeoutSeconds !== Infinity;
    // Each decision's deadline in the server's microseconds: its own start plus the timeout,
    // less the margin (a script starting later writes nothing for it).
    const offsetUs = timed ? (link.offsetUs as number) - DEADLINE_MARGIN_US + this.#timeoutMs * 1000 : 0;
    args[0] = '1';
    args[1] = redisTime ? '' : 'm';
    args[2] = redisTime ? '1' : MIN_EXPIRY_LIMITER_TIME;
    // The latest deadline: a script starting after it has nothing to decide.
    args[3] = timed ? String(Math.floor((batch[n - 1] as Pending).startMs * 1000 + offsetUs)) : '';
    for (let i = 0; i < n; i++) {
      const p = batch[i] as Pending;
      keys[i] = p.redisKey;
      const a = 4 + stride * i;
      const kind = p.limit.kind;
      args[a] = p.record ? kind : kind === 'g' ? 'G' : 'L';
      args[a + 1] = String(p.quota.threshold);
      args[a + 2] = String(p.quota.windowMs);
      args[a + 3] = String(p.cost);
      args[a + 4] = timed ? String(Math.floor(p.startMs * 1000 + offsetUs)) : '';
      // Each decision at its own reading, on the grid of 2^-10 ms, in ticks (an integer; printed exactly).
      if (!redisTime) args[a + 5] = String(Math.round(p.nowMs * TICKS_PER_MS));
    }
    let scriptKeys = keys;
    if (link.resends && batch.some((p) => p.record)) {
      args[0] = 'r';
      scriptKeys = [...keys, link.tokenFor(first.redisKey)];
    }
    link.run(LEAN_SHA, LEAN_SCRIPT, scriptKeys, args, () => batch.every((p) => p.done)).then(
      (reply) => {
        this.#returned(slot);
        this.#settle(batch, reply, keys.length);
      },
      (error: unknown) => {
        this.#returned(slot);
        for (const p of batch) this.#fail(p, error);
      },
    );
  }

  /** Settles each decision of `batch` from the script's reply. */
  #settle(batch: readonly Pending[], reply: unknown, n: number): void {
    if (!Array.isArray(reply)) {
      const error = new RateWardenRedisReplyError(describeReply(reply));
      for (const p of batch) this.#fail(p, error);
      return;
    }
    const link = this.#link;
    if (reply.length === 2 && toNumber(reply[0]) === -1) {
      // The script started after the deadline: nothing was written.
      link.learn(reply[1]);
      const error = new RateWardenRedisTimeoutError(this.#timeoutSeconds);
      for (const p of batch) this.#fail(p, error);
      return;
    }
    if (reply.length !== n * 4 + 1 || !link.learn(reply[n * 4])) {
      const error = new RateWardenRedisReplyError(describeReply(reply));
      for (const p of batch) this.#fail(p, error);
      return;
    }
    for (let i = 0; i < n; i++) {
      const p = batch[i] as Pending;
      if (p.done) continue;
      const o = i * 4;
      const wait = toNumber(reply[o]);
      if (wait === -2 && typeof reply[o + 1] === 'string' && reply[o + 1] !== '') {
        this.#fail(p, new RateWardenRedisCommandError(reply[o + 1] as string));
        continue;
      }
      if (wait === -3) {
        // Its deadline had passed when the script reached it: nothing was written for it.
        this.#fail(p, new RateWardenRedisTimeoutError(this.#timeoutSeconds));
        continue;
      }
      const result = this.#result(p, wait, toNumber(reply[o + 1]), toNumber(reply[o + 2]), toNumber(reply[o + 3]));
      if (result === undefined) {
        this.#fail(p, new RateWardenRedisReplyError(describeReply(reply.slice(o, o + 4))));
        continue;
      }
      this.#settled(p);
      p.limit.failure.recovered();
      p.resolve(result);
    }
  }

  /**
   * The result of one decision's four values, or `undefined` when they are not what the script
   * returns (a misbehaving adapter or a tampered key). Feeds the block cache with a refusal.
   */
  #result(p: Pending, wait: number, left: number, state: number, shift: number): RateLimitResult | undefined {
    const quota = p.quota;
    const threshold = quota.threshold;
    const window = quota.windowMs * TICKS_PER_MS;
    const log = p.limit.kind === 'l';
    if (
      !Number.isSafeInteger(wait) ||
      wait < -1 ||
      wait > 2 * window ||
      (wait === -1) !== p.cost > threshold ||
      !Number.isSafeInteger(left) ||
      // The log's refusal reports threshold − live, below 0 when more are live than the threshold.
      (left < 0 && !(log && wait !== 0)) ||
      left > threshold ||
      !Number.isSafeInteger(state) ||
      state < 0 ||
      !Number.isSafeInteger(shift) ||
      shift < 0
    ) {
      return undefined;
    }
    const remaining = left < 0 ? 0 : left;
    const resetMs = log ? state / TICKS_PER_MS : state / threshold / TICKS_PER_MS;
    if (!(resetMs <= quota.windowMs)) return undefined;
    if (wait === 0) {
      // Recorded here: a cached refusal of the key no longer describes its state.
      if (p.record && p.cache !== undefined) p.cache.forget(p.key);
      return outcome(true, remaining, 0, threshold, resetMs);
    }
    if (wait === -1) return outcome(false, remaining, Infinity, threshold, resetMs);
    const waitMs = wait / TICKS_PER_MS;
    let retryAfter: number;
    let baseMs: number;
    if (this.#redisTime) {
      retryAfter = retryAfterSeconds(0, 0, waitMs, quota.windowSeconds);
      // The refusal's time, in this process's clock: no earlier than the decision's submission.
      baseMs = p.startMs;
    } else {
      // The time decided at: the reading on the grid, or later when the key's state was ahead.
      const now = onGrid(p.nowMs);
      baseMs = now;
      const at = now + shift / TICKS_PER_MS;
      retryAfter = shift === 0 ? retryAfterSeconds(p.nowMs, now, waitMs, quota.windowSeconds) : retryAfterSeconds(at, at, waitMs, quota.windowSeconds);
    }
    if (p.record && p.cache !== undefined) p.cache.remember(p.key, baseMs, shift, p.cost, quota, wait, left, state);
    return outcome(false, remaining, retryAfter, threshold, resetMs);
  }

  /** Settles `p` by its strategy's failure policy (unless already settled). */
  #fail(p: Pending, error: unknown): void {
    if (p.done) return;
    this.#settled(p);
    const limit = p.limit;
    notifyError(limit, error, [p.redisKey]);
    if (limit.onFailure === 'throw') p.reject(error);
    else p.resolve(limit.failure.decide(p, p.record));
  }

  /** Marks `p` settled; clears its deadline group's timer once the group's last one is. */
  #settled(p: Pending): void {
    p.done = true;
    if (p.record && p.cache !== undefined) p.cache.end(p.key);
    const bucket = p.bucket;
    if (bucket !== undefined && --bucket.left === 0 && bucket.timer !== undefined) {
      clearTimeout(bucket.timer);
      bucket.timer = undefined;
    }
  }

  /**
   * Puts `p` in the current deadline group: decisions issued in one tick share one timer of the
   * timeout (the same instant, for real and fake timers alike), rather than one each.
   */
  #watchFor(p: Pending): void {
    let bucket = this.#bucket;
    // A group whose members have all settled has no timer any more: start a new one.
    if (bucket === undefined || bucket.left === 0) {
      const members: Pending[] = [];
      const group: Bucket = { members, left: 0, timer: undefined };
      // Whole milliseconds, rounded up: timers truncate a fraction, and would fire early.
      group.timer = setTimeout(() => {
        group.timer = undefined;
        for (const m of members) if (!m.done) this.#fail(m, new RateWardenRedisTimeoutError(this.#timeoutSeconds));
      }, Math.min(Math.ceil(this.#timeoutMs), MAX_TIMER_MS));
      unref(group.timer);
      bucket = this.#bucket = group;
      process.nextTick(this.#closeBucket);
    }
    bucket.members.push(p);
    bucket.left++;
    p.bucket = bucket;
  }
}
