import { RateWardenRangeError, rangeError, typeError } from '../errors.js';
import { result } from '../result.js';
import { MAX_TIMER_MS, unref } from '../timers.js';
import type { BatchRequest, Limit, RateLimitResult, RateLimitStrategy, StrategyBatch } from '../strategy.js';
import { isNoScript, toRedisAdapter, type RedisAdapter } from './client.js';
import { DECIDE_SCRIPT, DECIDE_SHA } from './script.js';

/**
 * What a Redis strategy does when Redis does not answer in time or fails:
 * - `"throw"`: the decision rejects with the error (a {@link RedisTimeoutError} on timeout);
 *   the caller decides.
 * - `"fail-closed"`: the request is **rejected** (`allowed: false`, `remaining: 0`, `retryAfter`
 *   the smaller of 1 s and the window), marked `degraded: "fail-closed"`.
 * - `"fail-open"`: the request is **allowed** (`remaining` as for a first request), marked
 *   `degraded: "fail-open"`: an outage of Redis lifts the limit.
 * - `"local"`: the request is decided by the same algorithm in memory, in this process, marked
 *   `degraded: "local"`: each process then enforces the limit on its own (N processes may allow
 *   up to N × threshold together) until Redis is back, when the shared state takes over again.
 *
 * A request whose cost exceeds the threshold is rejected with `retryAfter: Infinity` under every
 * policy but `"throw"`: it could never be allowed.
 */
export type RedisFailurePolicy = 'throw' | 'fail-closed' | 'fail-open' | 'local';

/** Options shared by the Redis strategies. */
export interface RedisStrategyOptions {
  /**
   * The Redis client: a node-redis client or cluster (`redis` v4 and later, connected), an
   * ioredis client or cluster, or a {@link RedisAdapter}. Strategies on the same client decide a
   * {@link ratewarden!RateLimitGroup} of theirs in one script call.
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
   * then the decision fails with a {@link RedisTimeoutError} and {@link onFailure} applies. A
   * finite number from 0.001 to 2,147,483 (the longest timer), or `Infinity` for no timeout.
   *
   * A timed-out command may still reach Redis and be recorded there later: a timeout says the
   * answer was late, not that nothing happened.
   * @default 1
   */
  readonly timeoutSeconds?: number;
  /**
   * What to do when Redis fails or times out: see {@link RedisFailurePolicy}.
   * @default "throw"
   */
  readonly onFailure?: RedisFailurePolicy;
  /**
   * Called with every error of a Redis call (before the failure policy applies), for logging
   * and metrics. What it throws is ignored.
   */
  readonly onError?: (error: unknown, keys: readonly string[]) => void;
  /**
   * Whose clock times the decisions:
   * - `"redis"`: the Redis server's (`TIME`, read inside the script). Processes on different
   *   machines agree, whatever their own clocks. The limiter's clock is not used.
   * - `"limiter"`: the limiter's (`clock` option, milliseconds), passed to the script. Only for
   *   tests and replays driven by an injected or fake clock shared by every user of the prefix.
   *   Redis expires keys on its own clock, which does not follow an injected one, so in this
   *   mode keys are kept for at least an hour after their last write.
   * @default "redis"
   */
  readonly time?: 'redis' | 'limiter';
}

/** The error of a Redis call that took longer than `timeoutSeconds`. */
export class RedisTimeoutError extends Error {
  /** `"ERR_RATEWARDEN_REDIS_TIMEOUT"`. */
  readonly code = 'ERR_RATEWARDEN_REDIS_TIMEOUT';
  /** @param timeoutSeconds - the timeout that passed. */
  constructor(timeoutSeconds: number) {
    super(`Redis did not answer within ${timeoutSeconds} s (timeoutSeconds)`);
    this.name = 'RedisTimeoutError';
  }
}

/** The error of a script reply that is not what the script returns (a misbehaving adapter). */
export class RedisReplyError extends Error {
  /** `"ERR_RATEWARDEN_REDIS_REPLY"`. */
  readonly code = 'ERR_RATEWARDEN_REDIS_REPLY';
  /** @param reply - the reply received. */
  constructor(reply: unknown) {
    super(`Unexpected reply from the ratewarden script: ${describeReply(reply)}`);
    this.name = 'RedisReplyError';
  }
}

/** The longest window: times in microseconds stay far below 2^53. */
const MAX_WINDOW_SECONDS = 100_000_000;
/** The shortest expiry set in `time: "limiter"` mode (Redis expires on its own clock). */
const LIMITER_TIME_MIN_EXPIRY_MS = 3_600_000;
const POLICIES: readonly RedisFailurePolicy[] = ['throw', 'fail-closed', 'fail-open', 'local'];

/** Which script branch decides a strategy's limits. */
type Kind = 'l' | 'g';

/** The in-memory algorithm a strategy falls back to under `onFailure: "local"`. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type LocalStrategy = RateLimitStrategy<any>;

/** A key's state in the local fallback. */
interface LocalEntry {
  readonly state: unknown;
  limit: Limit;
}

/** Batches, by adapter and time mode: strategies on one client share them. */
const batches = new WeakMap<RedisAdapter, { redis?: RedisBatch; limiter?: RedisBatch }>();

/**
 * The base class of {@link RedisSlidingWindowLog} and {@link RedisGCRA}: the key layout, the
 * script call with its timeout and `NOSCRIPT` fallback, and the failure policies. Not meant to
 * be extended outside ratewarden (its constructor is internal); use it for `instanceof` checks.
 *
 * `RateLimiter.reset(user)` does not touch Redis (the limiter keeps nothing per key with these
 * strategies): to forget a user's shared state, delete its key, {@link redisKey}`(id)`.
 */
export abstract class RedisStrategy implements RateLimitStrategy<undefined> {
  abstract readonly name: string;
  /** Always `false`: decisions await Redis. */
  readonly synchronous = false;
  /** Always `true`: the state is in Redis; the limiter keeps none. */
  readonly external = true;
  /**
   * 100,000,000 seconds (about 3 years): the script's times are integer microseconds, exact
   * below 2^53, and Redis's expiry times and integer replies must stay in range.
   */
  readonly maxWindowSeconds = MAX_WINDOW_SECONDS;
  readonly #batch: RedisBatch;
  /** The key prefix. */
  readonly prefix: string;
  /** The failure policy. */
  readonly onFailure: RedisFailurePolicy;
  /** The timeout per call, in seconds (`Infinity`: none). */
  readonly timeoutSeconds: number;
  /** Whose clock times decisions. */
  readonly time: 'redis' | 'limiter';
  /** @internal */
  readonly kind: Kind;
  /** @internal */
  readonly adapter: RedisAdapter;
  /** @internal */
  readonly onError: ((error: unknown, keys: readonly string[]) => void) | undefined;
  readonly #suffix: string;
  readonly #local: LocalStrategy;
  readonly #localStates = new Map<string, LocalEntry>();
  #localSweepAt = 1_024;

  /** @internal */
  constructor(options: RedisStrategyOptions, kind: Kind, suffix: string, local: LocalStrategy) {
    if (options === null || typeof options !== 'object') throw typeError('options', 'an object', options);
    this.adapter = toRedisAdapter(options.client);
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
    const onFailure = options.onFailure === undefined ? 'throw' : options.onFailure;
    if (typeof onFailure !== 'string') throw typeError('onFailure', `one of ${POLICIES.map((p) => `"${p}"`).join(', ')}`, onFailure);
    if (!POLICIES.includes(onFailure)) {
      throw rangeError('onFailure', `one of ${POLICIES.map((p) => `"${p}"`).join(', ')}`, onFailure);
    }
    this.onFailure = onFailure;
    if (options.onError !== undefined && typeof options.onError !== 'function') {
      throw typeError('onError', 'a function or undefined', options.onError);
    }
    this.onError = options.onError;
    const time = options.time === undefined ? 'redis' : options.time;
    if (typeof time !== 'string') throw typeError('time', '"redis" or "limiter"', time);
    if (time !== 'redis' && time !== 'limiter') throw rangeError('time', '"redis" or "limiter"', time);
    this.time = time;
    this.kind = kind;
    this.#suffix = suffix;
    this.#local = local;
    let shared = batches.get(this.adapter);
    if (shared === undefined) {
      shared = {};
      batches.set(this.adapter, shared);
    }
    this.#batch = shared[time] ??= new RedisBatch(this.adapter, time);
  }

  /**
   * Decides a `RateLimitGroup` whose limits are all on Redis strategies with the same client
   * (and `time`) in one script call: every limit checked and, only if all allow, all recorded.
   */
  get batch(): StrategyBatch {
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

  /** Never called (the state is in Redis). */
  createState(): undefined {
    return undefined;
  }

  /** Decides a request of `cost` units in one script call, and records it when allowed. */
  consume(key: string, _state: undefined, nowMs: number, cost: number, limit: Limit): Promise<RateLimitResult> {
    return this.#batch.decideAll([{ strategy: this, key, nowMs, cost, limit }], true).then(first);
  }

  /** The result a request of `cost` units would get now; records nothing. */
  peek(key: string, _state: undefined, nowMs: number, cost: number, limit: Limit): Promise<RateLimitResult> {
    return this.#batch.decideAll([{ strategy: this, key, nowMs, cost, limit }], false).then(first);
  }

  /** Never called (the state is in Redis, which expires it). */
  sweep(): boolean {
    return true;
  }

  /** @internal The degraded decision, by the failure policy (not `"throw"`). */
  degraded(request: BatchRequest, record: boolean): RateLimitResult {
    const { cost, limit } = request;
    const policy = this.onFailure;
    if (cost > limit.threshold && policy !== 'local') {
      return { allowed: false, remaining: 0, retryAfter: Infinity, limit: limit.threshold, resetAfter: 0, degraded: policy as 'fail-open' | 'fail-closed' };
    }
    if (policy === 'fail-closed') {
      const wait = Math.min(1, limit.windowSeconds);
      return { allowed: false, remaining: 0, retryAfter: wait, limit: limit.threshold, resetAfter: wait, degraded: 'fail-closed' };
    }
    if (policy === 'fail-open') {
      // As for a key seen for the first time: after the request (recorded), or before it (peek).
      const remaining = record ? limit.threshold - cost : limit.threshold;
      return { allowed: true, remaining, retryAfter: 0, limit: limit.threshold, resetAfter: 0, degraded: 'fail-open' };
    }
    return { ...this.#decideLocally(request, record), degraded: 'local' };
  }

  /** Decides in this process's memory, with the same algorithm (`onFailure: "local"`). */
  #decideLocally(request: BatchRequest, record: boolean): RateLimitResult {
    const { key, nowMs, cost, limit } = request;
    const states = this.#localStates;
    const local = this.#local;
    const entry = states.get(key);
    if (!record) return local.peek(key, entry?.state, nowMs, cost, limit) as RateLimitResult;
    if (entry !== undefined) {
      entry.limit = limit;
      return local.consume(key, entry.state, nowMs, cost, limit) as RateLimitResult;
    }
    const state = local.createState(limit);
    const decided = local.consume(key, state, nowMs, cost, limit) as RateLimitResult;
    if (decided.allowed) {
      states.set(key, { state, limit });
      if (states.size >= this.#localSweepAt) {
        // Amortised sweep: forget the keys whose windows are clear, then wait for twice as many.
        for (const [k, e] of states) if (local.sweep(e.state, nowMs, e.limit)) states.delete(k);
        this.#localSweepAt = Math.max(1_024, states.size * 2);
      }
    }
    return decided;
  }

  /**
   * @internal Called after Redis answered: the shared state is authoritative again, so the
   * local fallback's state (from an outage) is dropped.
   */
  recovered(): void {
    if (this.#localStates.size > 0) {
      this.#localStates.clear();
      this.#localSweepAt = 1_024;
    }
  }

  /** @internal Keys tracked by the local fallback (for tests and monitoring). */
  get localSize(): number {
    return this.#localStates.size;
  }
}

function first(results: readonly RateLimitResult[]): RateLimitResult {
  return results[0] as RateLimitResult;
}

/** Percent-encodes `%`, `{`, `}` and lone surrogates, so the hash tag is exactly the id. */
function escapeKey(key: string): string {
  if (!/[%{}\uD800-\uDFFF]/.test(key)) return key;
  let out = '';
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    if (c === 0x25 || c === 0x7b || c === 0x7d) {
      out += `%${c.toString(16)}`;
    } else if (c >= 0xd800 && c <= 0xdbff && i + 1 < key.length && (key.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      out += key[i] as string;
      out += key[++i] as string;
    } else if (c >= 0xd800 && c <= 0xdfff) {
      out += `%u${c.toString(16)}`;
    } else {
      out += key[i] as string;
    }
  }
  return out;
}

/**
 * Runs the decision script for one or more limits on one client: the {@link StrategyBatch} of
 * every Redis strategy on that client (and time mode).
 */
class RedisBatch implements StrategyBatch {
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
    const strategies = requests.map((r) => r.strategy as RedisStrategy);
    const keys = requests.map((r, i) => (strategies[i] as RedisStrategy).redisKey(r.key));
    if (keys.length > 1 && new Set(keys).size !== keys.length) {
      throw new RateWardenRangeError(
        'Expected the limits of a group to use distinct Redis keys, got one key twice: give each limit its own `prefix`',
      );
    }
    if (keys.length > 1 && this.#adapter.cluster === true && new Set(keys.map(hashTag)).size > 1) {
      return this.#decideAcrossSlots(requests, keys, record);
    }
    let timeout = 0;
    for (const s of strategies) if (s.timeoutSeconds > timeout) timeout = s.timeoutSeconds;
    let results: RateLimitResult[];
    try {
      results = await this.#call(requests, strategies, keys, record, timeout);
    } catch (error) {
      return this.#fail(error, requests, strategies, keys, record);
    }
    for (const s of strategies) s.recovered();
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
    strategies: readonly RedisStrategy[],
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
      args.push((strategies[i] as RedisStrategy).kind, String(r.limit.threshold), String(r.limit.windowMs), String(r.cost));
    }
    const state = { timedOut: false };
    const reply = await withTimeout(this.#run(keys, args, state), timeoutSeconds, state);
    const serverUs = Array.isArray(reply) ? toNumber(reply[reply.length - 1]) : Number.NaN;
    if (Number.isFinite(serverUs)) this.#offsetUs = serverUs - performance.now() * 1000;
    if (Array.isArray(reply) && reply.length === 2 && toNumber(reply[0]) === -1) {
      // The script started after the deadline (this process's clock and the server's disagree
      // by more than the timeout's margin): nothing was written.
      throw new RedisTimeoutError(timeoutSeconds);
    }
    const results = parse(reply, requests, strategies);
    if (results === undefined) throw new RedisReplyError(reply);
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
    strategies: readonly RedisStrategy[],
    keys: readonly string[],
    record: boolean,
  ): RateLimitResult[] {
    for (const s of new Set(strategies)) {
      if (s.onError === undefined) continue;
      try {
        const returned = s.onError(error, keys) as unknown;
        // An async logger that rejects must not leave an unhandled rejection behind.
        if (typeof (returned as PromiseLike<unknown> | undefined)?.then === 'function') {
          Promise.resolve(returned).catch(() => {});
        }
      } catch {
        // A failing logger must not change the decision.
      }
    }
    if (strategies.some((s) => s.onFailure === 'throw')) throw error;
    if (requests.length === 1) return [(strategies[0] as RedisStrategy).degraded(requests[0] as BatchRequest, record)];
    const checked = requests.map((r, i) => (strategies[i] as RedisStrategy).degraded(r, false));
    if (!record || !checked.every((r) => r.allowed)) return checked;
    return requests.map((r, i) => (strategies[i] as RedisStrategy).degraded(r, true));
  }
}

/** Redis Cluster's hash tag of a key: between the first `{` and the next `}`, if not empty. */
function hashTag(key: string): string {
  const open = key.indexOf('{');
  if (open === -1) return key;
  const close = key.indexOf('}', open + 1);
  return close === -1 || close === open + 1 ? key : key.slice(open + 1, close);
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
      reject(new RedisTimeoutError(seconds));
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

/** The results in a script reply, or `undefined` when the reply is not what the script returns. */
function parse(reply: unknown, requests: readonly BatchRequest[], strategies: readonly RedisStrategy[]): RateLimitResult[] | undefined {
  if (!Array.isArray(reply) || reply.length !== requests.length * 4 + 1) return undefined;
  const results: RateLimitResult[] = [];
  for (let i = 0; i < requests.length; i++) {
    const limit = (requests[i] as BatchRequest).limit;
    const o = i * 4;
    const allowed = toNumber(reply[o]);
    const remaining = toNumber(reply[o + 1]);
    let retryAfterMs: number;
    let resetAfterMs: number;
    if ((strategies[i] as RedisStrategy).kind === 'l') {
      // Integers, in microseconds; -1: never.
      const retry = toNumber(reply[o + 2]);
      retryAfterMs = retry === -1 ? Infinity : retry / 1000;
      resetAfterMs = toNumber(reply[o + 3]) / 1000;
    } else {
      // Doubles, in milliseconds: strings with RESP2 clients (ioredis), numbers with node-redis.
      retryAfterMs = toNumber(reply[o + 2]);
      resetAfterMs = toNumber(reply[o + 3]);
    }
    // Only what the script can return: anything else is a misbehaving adapter or a tampered key.
    if (
      (allowed !== 0 && allowed !== 1) ||
      !Number.isSafeInteger(remaining) ||
      remaining < 0 ||
      remaining > limit.threshold ||
      (allowed === 1 ? retryAfterMs !== 0 : !(retryAfterMs > 0)) ||
      // (GCRA's span / threshold may land a rounding step above the window: result() clamps it.)
      !(resetAfterMs >= 0 && resetAfterMs <= limit.windowMs * (1 + 1e-9))
    ) {
      return undefined;
    }
    results.push(result(allowed === 1, remaining, retryAfterMs, limit.threshold, resetAfterMs, limit.windowSeconds));
  }
  return results;
}

/** A number from a reply: a number, or a decimal string such as `"0.5"`, `"-1"` or `"inf"`; else NaN. */
function toNumber(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value !== 'string') return Number.NaN;
  if (value === 'inf') return Infinity;
  return /^-?\d+(\.\d+)?(e[-+]?\d+)?$/i.test(value) ? Number(value) : Number.NaN;
}

/** A short, safe rendering of a reply for an error message (never throws). */
function describeReply(reply: unknown): string {
  try {
    const text = JSON.stringify(reply, (_key, value: unknown) => (typeof value === 'bigint' ? `${value}n` : value));
    return text === undefined ? String(typeof reply) : text.slice(0, 200);
  } catch {
    return Array.isArray(reply) ? `an array of ${reply.length} elements` : typeof reply;
  }
}
