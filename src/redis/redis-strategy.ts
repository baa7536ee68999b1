/**
 * `RedisStrategy`, the base of the Redis strategies: a {@link BatchingStore} whose keys live in
 * Redis and whose every decision is one atomic script call. It validates the options, lays out
 * the keys, and hands each decision to the shared script runner (`./redis-batch.ts`); what
 * happens when Redis fails is its failure policy (`./failure-policy.ts`).
 *
 * Why one file of about 500 lines (two thirds of it TSDoc: units, failure rules and the block
 * cache's bound for each operation): one concern, the public surface of a Redis limit —
 * options, key layout, and each store operation (decide, reserve, refund, penalty, block,
 * delete) handed in a few lines to the queue (`./decision-queue.ts`).
 *
 * @module
 */
import { checkKnownKeys, checkObject, knownOptions, optionalFunction, rangeError, typeError } from '../errors.js';
import type { Quota } from '../quota.js';
import type { RateLimitResult } from '../result.js';
import type { BatchingStore, CachingStore, RefundingStore, StoreBatch, StoreReservation } from '../store.js';
import { MAX_TIMER_MS } from '../timers.js';
import type { RedisAlgorithm } from './algorithm.js';
import { BlockCache } from './block-cache.js';
import { toRedisAdapter } from './client.js';
import { DEGRADED_TICKET, queueFor, type DecisionQueue, type RedisTicket } from './decision-queue.js';
import { FAILURE_POLICIES, FailurePolicy, type RedisFailurePolicy } from './failure-policy.js';
import { warnIfNoErrorListener } from './error-listener.js';
import { escapeKey } from './keys.js';
import { batchFor, type RedisBatch } from './redis-batch.js';
import { registerRedisLimit, type RedisLimit } from './redis-limit.js';
import { linkFor } from './server-link.js';

export type { RedisFailurePolicy } from './failure-policy.js';

/**
 * Options shared by the Redis strategies. Any other own enumerable string key is rejected (a
 * `RateWardenTypeError`, code `ERR_RATEWARDEN_UNKNOWN_OPTION`).
 */
export interface RedisStrategyOptions {
  /**
   * The Redis client: a node-redis client or cluster (`redis` v4 and later, connected), an
   * ioredis client or cluster, an `@upstash/redis` client (`new Redis({ url, token })` or
   * `Redis.fromEnv()`, 1.34.7 and later, from `@upstash/redis` or `@upstash/redis/cloudflare`:
   * Redis over HTTPS, for runtimes without TCP such as Cloudflare Workers, Vercel's edge and Deno
   * Deploy; each script call, a decision or a micro-batch of them, is one HTTPS request), or a
   * {@link RedisAdapter}. Strategies on the same client decide a
   * {@link ratewarden!RateLimitGroup} of theirs in one script call. See
   * {@link toRedisAdapter} for how each is recognised and whether it may re-send a call.
   *
   * **Give it an `error` listener** (`client.on('error', …)`) before connecting: node-redis emits
   * `error` on every connection error, and without a listener Node.js throws it, crashing the
   * process before `onFailure` can act (ioredis prints each one to stderr instead). A node-redis
   * or ioredis client or cluster with none draws one process warning per client
   * (`RateWardenWarning`, code `ERR_RATEWARDEN_NO_ERROR_LISTENER`; `console.warn` where there is
   * no `process`) when the strategy is built.
   *
   * While the client is known to be disconnected (see {@link RedisAdapter.connected}: node-redis
   * reconnecting, ioredis `reconnecting`, `close` or `end`), decisions fail at once with a
   * `RateWardenRedisUnavailableError` through {@link onFailure}, neither queued in the client nor
   * sent, instead of waiting `timeoutSeconds` each.
   */
  readonly client: unknown;
  /**
   * Prepended to every key: the limit's **identity**, required. Limiters in every process that
   * use the same prefix (and algorithm) share their counts per user; two different limits (10
   * per second and 1,000 per hour) need two prefixes, or they count on the same keys. A string
   * without `{` or `}` (the keys' hash tag, for Redis Cluster, is the user id), such as
   * `"api:"` or `"rl:login:"`.
   */
  readonly prefix: string;
  /**
   * How long to wait for Redis, in **seconds**, per decision (including a `NOSCRIPT` retry);
   * then the decision fails with a `RateWardenRedisTimeoutError` and {@link onFailure} applies. A
   * finite number from 0.001 to 2,147,483 (the longest timer), or `Infinity` for no timeout.
   *
   * **A decision reported as failed is not recorded**, from the first call on, whatever shares
   * its tick, its batch or its connection. Its timer and the deadline sent with it are one
   * instant: its submission plus `timeoutSeconds` (decisions submitted in one tick within 1 ms
   * of each other share the first one's timer). The
   * server is told that deadline less a **reply allowance** (1 ms, as Node's timers may fire up
   * to 1 ms early, plus a quarter of the timeout up to 10 ms: 11 ms at the default; at most half
   * the timeout, so a timeout of a few milliseconds leaves the server little time) and a script that starts later writes nothing — queued
   * behind `CLIENT PAUSE`, sent again by the client after a reconnect, or run by `EVAL` after
   * `NOSCRIPT` — so that the reply of a script that did start in time reaches this process
   * before the timer. When the timer fires, a decision not yet sent fails at once and is never
   * sent; one in flight fails only after the replies that already reached this process are read
   * (an event loop blocked past the deadline does not turn a decision Redis answered in time
   * into a failure). A decision whose deadline (less the allowance) has passed when its turn to
   * be sent comes fails unsent. The offset of the server's clock comes from the server time
   * every reply carries; until one reply has taught it, the first call on a client (per `time`
   * mode) waits for a handshake (one extra round trip, once, shared by concurrent first calls,
   * under their timeouts). What remains: a script that started in time but whose reply was lost
   * (the connection dropped) or took longer than the allowance to arrive (a script of a
   * thousand log units on a slow server, a stalled network) may be recorded though reported
   * failed; so may one whose timeout is under about 4 ms (its allowance, at most half of it, is
   * less than the 1 ms by which a timer may fire early), or one on a server whose clock differs
   * from the others' by more than the allowance (the offset is one per client: Cluster nodes and
   * a failover's new primary must keep their clocks synchronised). A timeout never ends later
   * than `timeoutSeconds` (plus the time to read the replies already received), but may end
   * sooner: by up to 1 ms, by the allowance, and by the offset's error (an event loop stall
   * makes it low until the next reply). With `Infinity`, calls carry no deadline and no
   * handshake is made.
   * @default 1
   */
  readonly timeoutSeconds?: number;
  /**
   * What to do when Redis fails or times out: see {@link RedisFailurePolicy}. It decides
   * **decisions** (`consume`, `peek`, `reserve`, groups). The refunding operations follow one
   * rule: a refund resolves `false` (nothing given back) under every policy but `"throw"`,
   * which rejects, and a reservation the policy decided refunds nothing; `penalty`, `block`
   * and `delete` reject under every policy (they have no honest degraded outcome). A failed call
   * leaves Redis as it was (but for the lost-reply case of {@link timeoutSeconds}).
   * @default "throw"
   */
  readonly onFailure?: RedisFailurePolicy;
  /**
   * Called with every error of a Redis call (before the failure policy applies), for logging
   * and metrics. What it returns is ignored, what it throws too, and a promise it returns that
   * rejects is caught (an async logger may fail without an unhandled rejection).
   */
  readonly onError?: (error: unknown, keys: readonly string[]) => unknown;
  /**
   * Whose clock times the decisions:
   * - `"redis"`: the Redis server's (`TIME`, read inside the script). Processes on different
   *   machines agree, whatever their own clocks. The limiter's clock is not used.
   * - `"limiter"`: the limiter's (`clock` option, milliseconds), passed to the script on the
   *   grid of 2^-10 ms (as an integer number of ticks), so that decisions and `retryAfter` are
   *   exactly the in-memory strategies', at any reading (epoch times included) — but for a
   *   reading more than a window behind a key's state, which the scripts take as state written
   *   under a clock that was ahead (a failover) and forget, where the in-memory strategies
   *   count the reading as the state's time. Only for tests
   *   and replays driven by an injected or fake clock shared by every user of the prefix.
   *   Redis expires keys on its own clock, which does not follow an injected one, so in this
   *   mode keys are kept for at least an hour after their last write.
   * @default "redis"
   */
  readonly time?: 'redis' | 'limiter';
  /**
   * **Micro-batching:** the most decisions (entries: a single decision is one, a
   * `RateLimitGroup`'s one per limit) one script call carries. A decision is sent at once when
   * nothing of its hash slot is in flight or queued, so a lone caller waits for nothing;
   * decisions issued while a call is in flight queue, and go together in one `EVALSHA` at the
   * end of the tick (if fewer than two calls of the slot are in flight), or when a call returns;
   * a full batch goes at once. **At most 16 calls per hash slot are ever in flight**, whatever
   * the load and however long Redis hangs, so the client's command queue and this process's
   * memory stay bounded (what waits is only the decisions still pending: settled ones are
   * released). Each decision is still decided on its own, in arrival order, exactly
   * as if sent alone (a group's limits all or nothing); one that fails in Redis (a key of the
   * wrong type: a `RateWardenRedisCommandError`) fails alone. A call also carries at most 1,000
   * sliding-window-log units (sorted-set members to write), so one script never holds Redis
   * long. Every strategy on one client (and `time` mode) shares the queue; a call carries at
   * most the smallest `batchSize` of the decisions in it. On Redis Cluster, per hash slot (no
   * script may span slots). An integer from 1 to 1,000; `1` sends every decision in a call of
   * its own.
   * @default 32
   */
  readonly batchSize?: number;
  /**
   * The **exact local block cache**: how many keys it holds (`0` turns it off). After Redis
   * refuses a key, this process refuses that key's further requests (same limit) itself, with no
   * round trip, for as long as the refusal certainly holds: other processes can only add load,
   * so what Redis refused on the state it described stays refused until that state frees a slot
   * (GCRA: any request its debt refuses; the sliding-window log: a request of the refused cost,
   * when no entry expires before the refused wait ends, as for every refusal of cost 1). The
   * cached answer is the one Redis would give if nothing else had been recorded for the key
   * since: under `time: "limiter"` exactly the in-memory strategy's; under `time: "redis"` its
   * wait counts from when the refused decision was issued (no later than Redis decided it),
   * timed by `performance.now()` (fake timers that fake `performance` time it too: a test that
   * lets real time pass for Redis without advancing them sees the block last longer; turn the
   * cache off there). With other processes recording meanwhile, Redis would report a longer
   * `retryAfter`.
   *
   * **What changes — the cache's bound:** it assumes load on a key only grows, which holds while
   * every process decides the key under the same limit and Redis keeps the key. When load is
   * removed another way, this process may refuse what Redis would allow, for at most the
   * `retryAfter` of the refusal it cached: the key deleted or reset elsewhere (another process's
   * reset, a `DEL`), evicted by Redis (a `maxmemory` policy that evicts keys with an expiry), or
   * decided by another process under a different limit (a tier change it saw first: under a
   * shorter window it frees load sooner), or given back elsewhere (another process's
   * {@link RedisStrategy.refund | refund}, `delete`, or a manual `block` replacing a longer one).
   * It never allows what Redis would refuse. A refusal by a **block** is cached until the block
   * ends (so the bound is then up to the block's remaining time: turn the cache off, or lift
   * blocks with `delete` in every process, where an administrator's unblock must take effect at
   * once); with `extendBlock` the cache never answers (each attempt must restart the block in
   * Redis). `RateLimiter.reset(user)`, and a refund, penalty, block or delete, in this process
   * drop the entry. Degraded results (failure
   * policies) are never cached, and `RateLimitGroup` decisions neither read nor feed it. Memory:
   * one entry per key refused recently (about 125 bytes plus the key string, measured over
   * 200,000 entries), the oldest evicted first past the size.
   * An integer from 0 to 10,000,000.
   * @default 10000
   */
  readonly blockCacheSize?: number;
}

/** The keys of {@link RedisStrategyOptions}: the constructors reject any other. */
const REDIS_OPTIONS = knownOptions('RedisStrategy options', {
  client: true,
  prefix: true,
  timeoutSeconds: true,
  onFailure: true,
  onError: true,
  time: true,
  batchSize: true,
  blockCacheSize: true,
} satisfies Record<keyof RedisStrategyOptions, true>);

/** The longest window: Redis's expiry times and integer replies stay in range. */
const MAX_WINDOW_SECONDS = 100_000_000;

/**
 * The base class of {@link RedisSlidingWindowLog} and {@link RedisGCRA}: the key layout, the
 * script call with its timeout and `NOSCRIPT` fallback, and the failure policies. Not meant to
 * be extended outside ratewarden (its constructor is internal); use it for `instanceof` checks.
 *
 * `RateLimiter.reset(user)` does not touch Redis (the limiter keeps nothing per key with a
 * store): to forget a user's shared state, {@link delete} it (`RateLimiter.delete(user)`).
 *
 * **Refunds, penalties, blocks (issue 22):** a {@link RefundingStore}: {@link reserve},
 * {@link refund}, {@link penalty}, {@link block} and {@link delete} each run inside the same one
 * script as the decisions (one round trip, the server's clock, atomic with the key's decisions,
 * batched with them and under the same deadlines). With a quota's `blockSeconds`, a refused
 * request (a cost up to the threshold) blocks its key in every process: a second key next to the
 * state, `redisKey(id) + ":block"` (the same hash slot, so Cluster works), holding the block's end
 * and expiring with it; a blocked key is refused without being recorded, `remaining: 0`,
 * `retryAfter` the block's remaining time plus what the algorithm would still make the request
 * wait at its end, `resetAfter` at least the block's remaining time. Every decision reads the
 * block key (one `GET` of a missing key in the common case).
 */
export abstract class RedisStrategy implements BatchingStore, CachingStore, RefundingStore {
  abstract readonly name: string;
  /** Always `true`: each decision is one script, atomic in Redis; the limiter takes no lock. */
  readonly atomic = true;
  /**
   * Always `true`: the script applies the quota's `blockMs` and `extendBlock` inside each
   * decision (see {@link reserve}'s class description of blocks), so a limiter with
   * `blockSeconds` can use a Redis strategy.
   */
  readonly blocks = true;
  /**
   * 100,000,000 seconds (about 3 years): the script's waits, integer ticks of 2^-10 ms, stay
   * below 2^53, and Redis's expiry times and integer replies in range.
   */
  readonly maxWindowSeconds = MAX_WINDOW_SECONDS;
  /** The key prefix. */
  readonly prefix: string;
  /** The failure policy. */
  readonly onFailure: RedisFailurePolicy;
  /** The timeout per call, in seconds (`Infinity`: none). */
  readonly timeoutSeconds: number;
  /** Whose clock times decisions. */
  readonly time: 'redis' | 'limiter';
  /** The most single decisions per script call (1: no micro-batching). */
  readonly batchSize: number;
  /** The block cache's size in keys (0: off). */
  readonly blockCacheSize: number;
  readonly #batch: RedisBatch;
  readonly #suffix: string;
  readonly #queue: DecisionQueue;
  readonly #limit: RedisLimit;
  readonly #cache: BlockCache | undefined;

  /**
   * @internal Validates `options` and registers the strategy's internals for the batch.
   * @param algorithm - the algorithm on Redis (`./algorithms/`).
   * @param className - the public class's name, for messages.
   */
  constructor(options: RedisStrategyOptions, algorithm: RedisAlgorithm, className: string) {
    checkObject('options', options, 'an object');
    checkKnownKeys(options, REDIS_OPTIONS, `${className} options`);
    const adapter = toRedisAdapter(options.client);
    warnIfNoErrorListener(options.client, className);
    const prefix = options.prefix;
    if (typeof prefix !== 'string') throw typeError('prefix', 'a string without `{` or `}`', prefix);
    if (/[{}]/.test(prefix)) throw rangeError('prefix', 'a string without `{` or `}`', prefix);
    this.prefix = prefix;
    const timeout = options.timeoutSeconds === undefined ? 1 : options.timeoutSeconds;
    if (typeof timeout !== 'number') {
      throw typeError('timeoutSeconds', 'a number of seconds from 0.001 to 2147483, or Infinity', timeout);
    }
    if (timeout !== Infinity && !(timeout >= 0.001 && timeout * 1000 <= MAX_TIMER_MS)) {
      throw rangeError('timeoutSeconds', 'a number of seconds from 0.001 to 2147483, or Infinity', timeout);
    }
    this.timeoutSeconds = timeout;
    const failure: unknown = options.onFailure === undefined ? 'throw' : options.onFailure;
    const policies = `one of ${FAILURE_POLICIES.map((p) => `"${p}"`).join(', ')}`;
    if (typeof failure !== 'string') throw typeError('onFailure', policies, failure);
    const onFailure = FAILURE_POLICIES.find((p) => p === failure);
    if (onFailure === undefined) throw rangeError('onFailure', policies, failure);
    this.onFailure = onFailure;
    const onError = optionalFunction('onError', options.onError);
    const time: unknown = options.time === undefined ? 'redis' : options.time;
    if (typeof time !== 'string') throw typeError('time', '"redis" or "limiter"', time);
    if (time !== 'redis' && time !== 'limiter') throw rangeError('time', '"redis" or "limiter"', time);
    this.time = time;
    this.batchSize = integerOption('batchSize', options.batchSize, 32, 1, MAX_BATCH_SIZE);
    this.blockCacheSize = integerOption('blockCacheSize', options.blockCacheSize, 10_000, 0, MAX_BLOCK_CACHE_SIZE);
    this.#suffix = algorithm.suffix;
    const link = linkFor(adapter, time);
    this.#batch = batchFor(link);
    this.#queue = queueFor(link);
    this.#cache = this.blockCacheSize === 0 ? undefined : new BlockCache(algorithm, this.blockCacheSize, time === 'limiter');
    this.#limit = {
      algorithm,
      timeoutSeconds: timeout,
      batchSize: this.batchSize,
      onFailure,
      onError,
      failure: new FailurePolicy(onFailure, algorithm.createLocal()),
      redisKey: (key) => this.redisKey(key),
    };
    registerRedisLimit(this, this.#limit);
  }

  /**
   * Decides a `RateLimitGroup` whose limits are all on Redis strategies with the same client
   * (and `time`) in one script call: every limit checked and, only if all allow, all recorded.
   */
  get batch(): StoreBatch {
    return this.#batch;
  }

  /**
   * The Redis key of `key`: `prefix + "{" + key + "}" + suffix`, with `%`, `{` and `}` in the
   * key percent-encoded (and lone UTF-16 surrogates, which UTF-8 cannot carry), so that the
   * hash tag is exactly the user id and distinct ids never share a Redis key.
   */
  redisKey(key: string): string {
    return `${this.prefix}{${escapeKey(key)}}${this.#suffix}`;
  }

  /** The Redis key of `key` ({@link redisKey}): a group refuses two limits on one stored key. */
  storeKey(key: string): string {
    return this.redisKey(key);
  }

  /**
   * Decides a request of `cost` units in one script call (possibly batched with others, see
   * {@link RedisStrategyOptions.batchSize}), and records it when allowed; or refuses it here
   * from the block cache ({@link RedisStrategyOptions.blockCacheSize}).
   */
  consume(key: string, nowMs: number, cost: number, quota: Quota): Promise<RateLimitResult> {
    return this.#decide(key, nowMs, cost, quota, true);
  }

  /** The result a request of `cost` units would get now; records nothing. */
  peek(key: string, nowMs: number, cost: number, quota: Quota): Promise<RateLimitResult> {
    return this.#decide(key, nowMs, cost, quota, false);
  }

  /** The block cache's answer if it has one, else Redis's (recording when `record` and allowed). */
  #decide(key: string, nowMs: number, cost: number, quota: Quota, record: boolean): Promise<RateLimitResult> {
    const cache = this.#cache;
    if (cache !== undefined && cache.size > 0) {
      const cached = cache.answer(key, nowMs, performance.now(), cost, quota);
      if (cached !== undefined) return Promise.resolve(cached);
    }
    return this.#queue.single(this.#limit, cache, key, nowMs, cost, quota, record);
  }

  /**
   * {@link consume} that also returns a ticket for {@link refund} (`ticket: undefined` when the
   * request was refused). The same decision, in the same script call, with no extra round trip:
   * a reservation's units are marked with its id (the log's members are named
   * `<time>-<n>:<id>`, GCRA's state keeps the id), so that its refund finds exactly them, never
   * another decision's, also after the key was deleted and written again. Used by
   * `RateLimiter.reserve`. A reservation decided by the failure policy (Redis unreachable) has a
   * ticket whose refund gives nothing back.
   * @param key - the user id.
   * @param nowMs - the limiter's clock, **milliseconds** (used under `time: "limiter"`).
   * @param cost - a positive safe integer.
   * @param quota - the quota to enforce.
   */
  reserve(key: string, nowMs: number, cost: number, quota: Quota): Promise<StoreReservation> {
    const cache = this.#cache;
    if (cache !== undefined && cache.size > 0) {
      const cached = cache.answer(key, nowMs, performance.now(), cost, quota);
      if (cached !== undefined) return Promise.resolve({ result: cached, ticket: undefined });
    }
    return this.#queue.reserve(this.#limit, cache, key, nowMs, cost, quota);
  }

  /**
   * Gives back `units` of the reservation `ticket` describes, in one script call, atomically with
   * the key's decisions. Resolves `true` when they were given back, `false` for the documented
   * no-ops:
   * - **sliding-window log:** removes `units` of that reservation's own members (the highest
   *   numbered first), wherever later entries are: the key is then exactly as if those units had
   *   never been recorded. `false` (nothing removed) once the window has passed since the
   *   reservation (the server's clock, or the limiter's reading for the refund under
   *   `time: "limiter"`), after a penalty trimmed the log's oldest entries (any of them: those
   *   would count again without the reservation's, as in memory), and when fewer than `units`
   *   of them are left (the key was deleted or expired, or they were refunded already).
   * - **GCRA:** the theoretical arrival time goes back by `units × window / threshold` only when
   *   the reservation's write is still the key's last (nothing else was recorded, penalised or
   *   converted to another limit since; its own earlier partial refunds excepted) and the key is
   *   still there: the key is then exactly as if those units had not been taken. Otherwise
   *   `false`: giving back without the history would be more permissive than never having made
   *   the request. A key whose theoretical arrival time has passed has expired from Redis (under
   *   `time: "redis"`): `false`, and nothing would change anyway.
   * A refund is not a decision: the block cache's entry for the key is dropped, when the refund
   * is sent and again when Redis answers (a refusal decided before the refund whose reply came
   * after it is not kept), so this process then asks Redis. Another process's refund is not seen by this process's cache: see the
   * cache's bound ({@link RedisStrategyOptions.blockCacheSize}).
   *
   * **When Redis fails:** under `onFailure: "throw"` the promise rejects (the refund did not
   * happen: a call that timed out before the script started writes nothing); under the other
   * policies it resolves `false` (nothing given back: never more permissive). A ticket of a
   * reservation the failure policy decided resolves `false` at once (Redis never recorded it;
   * the local fallback keeps what it allowed).
   * @param key - the user id of the reservation.
   * @param ticket - the reservation's ticket, as {@link reserve} or the batch's `reserveAll`
   *   returned it.
   * @param units - a positive safe integer, at most what is left to refund (the limiter checks).
   * @param quota - the reservation's quota.
   * @param nowMs - the limiter's reading for the refund (used under `time: "limiter"`).
   * @throws {RateWardenTypeError} (as a rejection) when `ticket` is not a ticket of a Redis
   *   strategy for `key` on this strategy's prefix.
   */
  refund(key: string, ticket: unknown, units: number, quota: Quota, nowMs = 0): Promise<boolean> {
    if (ticket === DEGRADED_TICKET) return Promise.resolve(false);
    const redisKey = this.redisKey(key);
    const t = ticket as Partial<RedisTicket> | null;
    if (t === null || typeof t !== 'object' || t.redisKey !== redisKey || typeof t.id !== 'string' || !Number.isSafeInteger(t.ticks) || !Number.isSafeInteger(t.first) || !Number.isSafeInteger(t.cost)) {
      return Promise.reject(typeError('ticket', `a ticket of a reservation of this strategy for ${JSON.stringify(key)}`, ticket));
    }
    const cache = this.#cache;
    if (cache === undefined) return this.#queue.operate(this.#limit, 'refund', key, nowMs, units, quota, t as RedisTicket) as Promise<boolean>;
    cache.forget(key);
    // Again once Redis answered: the reply of a refusal decided before the refund may have
    // reached this process after the refund was sent, and cached that refusal again.
    const forget = (): void => {
      cache.forget(key);
    };
    const pending = this.#queue.operate(this.#limit, 'refund', key, nowMs, units, quota, t as RedisTicket) as Promise<boolean>;
    return pending.finally(forget);
  }

  /**
   * Records `points` units against `key` now without asking, in one script call: the log adds
   * `points` members at now and keeps only the newest `threshold` (so the penalty counts even
   * when the limit is exhausted); GCRA moves its theoretical arrival time to
   * `max(TAT, now) + points × window / threshold`, at most two windows ahead of now, as in
   * memory (`retryAfter` may then exceed the window; repeated penalties saturate there). Starts no block. Resolves to what a peek of cost 1
   * reports right after (a blocked key's block included). The block cache's entry for the key is
   * dropped. Rejects when Redis fails, under every failure policy (a penalty has no degraded
   * outcome; a call that timed out before the script started wrote nothing).
   * @param points - a positive safe integer, at most the quota's threshold (the limiter checks).
   */
  penalty(key: string, nowMs: number, points: number, quota: Quota): Promise<RateLimitResult> {
    this.#cache?.forget(key);
    return this.#queue.operate(this.#limit, 'penalty', key, nowMs, points, quota) as Promise<RateLimitResult>;
  }

  /**
   * Blocks `key` for `blockMs` **milliseconds** from now (the server's clock, or the limiter's
   * under `time: "limiter"`), replacing any block it had, in one script call: a key of its own next
   * to the state (`redisKey(key) + ":block"`, the same hash slot), holding the block's end and
   * expiring with it. While blocked, every decision on the key by every process is refused
   * without being recorded, with `retryAfter` the block's remaining time plus whatever the
   * algorithm would still make the request wait at the block's end. Rejects when Redis fails,
   * under every failure policy.
   * @param blockMs - a positive whole number of milliseconds (the limiter validates `seconds`).
   */
  block(key: string, nowMs: number, blockMs: number, quota: Quota): Promise<void> {
    this.#cache?.forget(key);
    return this.#queue.operate(this.#limit, 'block', key, nowMs, blockMs, quota) as Promise<void>;
  }

  /**
   * Deletes everything kept for `key`: its state and its block in Redis (one `DEL` in the
   * script), its block cache entry and what the local fallback kept for it in this process.
   * Resolves whether Redis held anything for it. Rejects when Redis fails, under every failure
   * policy (this process's entries are dropped all the same).
   */
  delete(key: string): Promise<boolean> {
    this.#cache?.forget(key);
    this.#limit.failure.forget(key);
    return this.#queue.operate(this.#limit, 'delete', key, 0, 1, DELETE_QUOTA) as Promise<boolean>;
  }

  /**
   * Drops what this process keeps for `key` (its block cache entry); called by
   * `RateLimiter.reset(user)`. The shared state in Redis is not touched: delete
   * {@link redisKey}`(key)` for that.
   * @param key - the user id (not the Redis key).
   */
  forget(key: string): void {
    this.#cache?.forget(key);
  }
}

/** A delete needs no quota; the layout sends one all the same. */
const DELETE_QUOTA: Quota = Object.freeze({ threshold: 1, windowMs: 1, windowSeconds: 0.001 });

/** The largest {@link RedisStrategyOptions.batchSize}. */
const MAX_BATCH_SIZE = 1_000;
/** The largest {@link RedisStrategyOptions.blockCacheSize}. */
const MAX_BLOCK_CACHE_SIZE = 10_000_000;

/** An integer option from `min` to `max`, `fallback` when absent. */
function integerOption(name: string, value: unknown, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max) return value;
  const expected = `an integer from ${min} to ${max.toLocaleString('en-US')}`;
  if (typeof value !== 'number') throw typeError(name, expected, value);
  throw rangeError(name, expected, value);
}
