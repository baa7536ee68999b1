import { RateWardenRangeError, typeError } from './errors.js';
import {
  RateLimiter,
  costOf,
  keyOf,
  limiterInternals,
  notSynchronous,
  type AnyLimiter,
  type RequestOptions,
  type User,
} from './rate-limiter.js';
import type { BatchRequest, Limit, RateLimitResult, StrategyBatch } from './strategy.js';

/** One limit of a {@link RateLimitGroup}. */
export interface GroupMember {
  /** The limiter enforcing this limit. */
  readonly limiter: AnyLimiter;
  /**
   * Maps the group's user to this limiter's user (its key), for limits on another key than the
   * user's own: `() => 'global'` for one limit shared by everyone, `(u) => apiKeyOf(u)`, ...
   * @default the user as given
   */
  readonly key?: (user: User | string) => User | string;
  /**
   * A name for this limit, such as `"per-second"` (HTTP headers name policies with it).
   * @default `"limit-1"`, `"limit-2"`, ... in member order
   */
  readonly name?: string;
}

/**
 * The outcome of a {@link RateLimitGroup} decision: the combined {@link RateLimitResult} plus the
 * result of each limit.
 *
 * - `allowed`: every limit allowed the request (and each recorded it); otherwise none recorded it.
 * - `remaining`: the smallest `remaining` over the limits.
 * - `retryAfter`: the longest wait over the limits, in seconds (`Infinity` if the cost exceeds
 *   some limit's threshold); waiting that long satisfies every limit, if nothing else arrives.
 * - `limit`: the threshold of the binding limit (the one with the longest wait when rejected,
 *   the one with the fewest remaining when allowed); `binding` is its index.
 * - `resetAfter`: the longest `resetAfter` over the limits.
 */
export interface GroupResult extends RateLimitResult {
  /** The result of each limit, in member order. When rejected, as a `peek` would report them. */
  readonly results: readonly RateLimitResult[];
  /** The names of the limits, in member order. */
  readonly names: readonly string[];
  /** Index of the binding limit in {@link results}. */
  readonly binding: number;
}

interface Member {
  readonly limiter: AnyLimiter;
  readonly key: ((user: User | string) => User | string) | undefined;
  readonly name: string;
  readonly synchronous: boolean;
}

/** One member's share of a decision. */
interface Step {
  readonly member: Member;
  readonly key: string;
  readonly limit: Limit;
}

/**
 * Several limits checked at once, **all or nothing**: a request is allowed only if every limit
 * allows it, and when one rejects it, none of them records it — for example 10 per second and
 * 1,000 per hour for each user, or a per-user limit and a global one.
 *
 * With synchronous strategies (the in-memory ones) the whole check — every limit checked, then
 * every limit recorded — is one synchronous step, so it is atomic with respect to any other
 * decision. With asynchronous strategies, the keys of the asynchronous limits are locked first,
 * always in the same global order (by limiter, then key), so two groups that share limiters or
 * keys cannot deadlock; the synchronous limits are re-checked and recorded in one synchronous
 * step once the asynchronous ones have been checked; then the asynchronous ones are recorded.
 * When every limit is on external strategies sharing one `batch` (the Redis strategies on one
 * client), the whole check is one step there: one script call that checks every limit and
 * records them only if all allow, atomic also against other processes.
 * If recording fails in an asynchronous strategy (a store error), or a store shared with other
 * processes refuses on recording what it allowed on checking, the group raises the error or
 * reports the refusal, and the limits already recorded stay recorded.
 *
 * (rate-limiter-flexible's `RLWrapperBlackAndWhite`/union consume from every limiter and never
 * roll back; this checks before recording anything.)
 *
 * @example
 * ```ts
 * const burst = new RateLimiter({ threshold: 10, windowSeconds: 1 });
 * const hourly = new RateLimiter({ threshold: 1000, windowSeconds: 3600, strategy: new GCRA() });
 * const both = new RateLimitGroup([
 *   { limiter: burst, name: 'per-second' },
 *   { limiter: hourly, name: 'per-hour' },
 * ]);
 * const r = both.allowRequestSync('alice');
 * ```
 */
export class RateLimitGroup {
  readonly #members: readonly Member[];
  /** Whether a limiter appears twice (a key could then be decided twice in one request). */
  readonly #repeats: boolean;
  readonly #synchronous: boolean;
  /** The batch deciding every limit in one step, when all the limits' strategies share one. */
  readonly #batch: StrategyBatch | undefined;
  /** Whether some limits keep their state in a store (their stored keys must then differ). */
  readonly #stored: boolean;

  /**
   * @param members - the limits: limiters, or {@link GroupMember}s; at least one.
   * @throws {RateWardenTypeError} when `members` is not a non-empty array of limiters or members.
   */
  constructor(members: ReadonlyArray<AnyLimiter | GroupMember>) {
    if (!Array.isArray(members) || members.length === 0) {
      throw typeError('members', 'a non-empty array of RateLimiter or { limiter, key?, name? }', members);
    }
    const internals = limiterInternals();
    const seen = new Set<AnyLimiter>();
    let repeats = false;
    const checked: Member[] = [];
    for (let index = 0; index < members.length; index++) {
      const entry = members[index] as AnyLimiter | GroupMember;
      const member = isLimiter(entry) ? { limiter: entry } : (entry as GroupMember);
      if (member === null || typeof member !== 'object' || !isLimiter(member.limiter)) {
        throw typeError(`members[${index}]`, 'a RateLimiter or { limiter: RateLimiter, key?, name? }', entry);
      }
      if (member.key !== undefined && typeof member.key !== 'function') {
        throw typeError(`members[${index}].key`, 'a function or undefined', member.key);
      }
      if (member.name !== undefined && typeof member.name !== 'string') {
        throw typeError(`members[${index}].name`, 'a string or undefined', member.name);
      }
      if (seen.has(member.limiter)) repeats = true;
      seen.add(member.limiter);
      checked.push({
        limiter: member.limiter,
        key: member.key,
        name: member.name ?? `limit-${index + 1}`,
        synchronous: internals.synchronous(member.limiter),
      });
    }
    this.#members = checked;
    this.#repeats = repeats;
    this.#synchronous = this.#members.every((m) => m.synchronous);
    const batch = checked[0]?.limiter.strategy.batch;
    this.#batch =
      batch !== undefined &&
      checked.every((m) => m.limiter.strategy.external === true && m.limiter.strategy.batch === batch)
        ? batch
        : undefined;
    this.#stored = checked.filter((m) => typeof m.limiter.strategy.storeKey === 'function').length > 1;
  }

  /** The limiters of the limits, in member order (for their windows and thresholds). */
  get limiters(): readonly AnyLimiter[] {
    return this.#members.map((m) => m.limiter);
  }

  /** The names of the limits, in member order. */
  get names(): readonly string[] {
    return this.#members.map((m) => m.name);
  }

  /**
   * Decides one request against every limit, all or nothing.
   * @throws never synchronously; rejects as `RateLimiter.allowRequest` does.
   */
  allowRequest(user: User | string, options?: RequestOptions): Promise<GroupResult> {
    try {
      if (this.#synchronous) return Promise.resolve(this.#decideSync(user, options, true));
      return this.#decideAsync(user, options, true);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * {@link allowRequest}, returned directly, when every limit's strategy is synchronous.
   * @throws {RateWardenTypeError} (`ERR_RATEWARDEN_NOT_SYNCHRONOUS`) when one is not; errors as
   *   `RateLimiter.allowRequestSync`.
   */
  allowRequestSync(user: User | string, options?: RequestOptions): GroupResult {
    if (!this.#synchronous) throw notSynchronous('a limiter of the group', 'allowRequestSync');
    return this.#decideSync(user, options, true);
  }

  /** Whether the request would be allowed by every limit now, recording nothing. */
  peek(user: User | string, options?: RequestOptions): Promise<GroupResult> {
    try {
      if (this.#synchronous) return Promise.resolve(this.#decideSync(user, options, false));
      return this.#decideAsync(user, options, false);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** {@link peek}, returned directly, when every limit's strategy is synchronous. */
  peekSync(user: User | string, options?: RequestOptions): GroupResult {
    if (!this.#synchronous) throw notSynchronous('a limiter of the group', 'peekSync');
    return this.#decideSync(user, options, false);
  }

  /** Each member's key and limit for `user` (validating the user and cost as limiters do). */
  #plan(user: User | string, options: RequestOptions | undefined): { steps: Step[]; cost: number } {
    const internals = limiterInternals();
    const cost = costOf(options);
    const steps = this.#members.map((member) => {
      const memberUser = member.key === undefined ? user : member.key(user);
      const key = keyOf(memberUser);
      return { member, key, limit: internals.limitOf(member.limiter, memberUser, key) };
    });
    if (this.#repeats) {
      const pairs = new Set<string>();
      for (const step of steps) {
        const pair = `${internals.id(step.member.limiter)}\u0000${step.key}`;
        if (pairs.has(pair)) {
          throw new RateWardenRangeError(
            `Expected the limits of a group to decide distinct keys, got the key \`${step.key}\` twice for one limiter`,
          );
        }
        pairs.add(pair);
      }
    }
    if (this.#stored) {
      // Two limits counting on one stored key (the same Redis prefix) would count each request twice.
      const stored = new Set<string>();
      for (const step of steps) {
        const strategy = step.member.limiter.strategy;
        if (typeof strategy.storeKey !== 'function') continue;
        const storeKey = strategy.storeKey(step.key);
        if (stored.has(storeKey)) {
          throw new RateWardenRangeError(
            `Expected the limits of a group to use distinct stored keys, got \`${storeKey}\` twice: give each limit its own \`prefix\``,
          );
        }
        stored.add(storeKey);
      }
    }
    return { steps, cost };
  }

  #decideSync(user: User | string, options: RequestOptions | undefined, record: boolean): GroupResult {
    const internals = limiterInternals();
    const { steps, cost } = this.#plan(user, options);
    const nows = steps.map((s) => internals.now(s.member.limiter, s.limit));
    const checked = steps.map(
      (s, i) => internals.peek(s.member.limiter, s.key, cost, s.limit, nows[i] as number) as RateLimitResult,
    );
    if (!record) return this.#combine(checked, null);
    if (!checked.every((r) => r.allowed)) return this.#observed(steps, cost, this.#combine(checked, false));
    const recorded = steps.map(
      (s, i) => internals.consume(s.member.limiter, s.key, cost, s.limit, nows[i] as number) as RateLimitResult,
    );
    // Every limit allowed on checking, so each allows on recording (same time, same state).
    return this.#observed(steps, cost, this.#combine(recorded, recorded.every((r) => r.allowed)));
  }

  /**
   * Counts a recorded (not peeked) group decision in each member limiter's `stats()` and tells
   * its `decision` listeners: every limit when the group allowed; when it rejected, the limits
   * that rejected (the others recorded nothing, and count nothing).
   */
  #observed(steps: readonly Step[], cost: number, result: GroupResult): GroupResult {
    const internals = limiterInternals();
    for (let i = 0; i < steps.length; i++) {
      const r = result.results[i] as RateLimitResult;
      if (result.allowed || !r.allowed) internals.observe((steps[i] as Step).member.limiter, (steps[i] as Step).key, cost, r);
    }
    return result;
  }

  async #decideAsync(user: User | string, options: RequestOptions | undefined, record: boolean): Promise<GroupResult> {
    const internals = limiterInternals();
    const { steps, cost } = this.#plan(user, options);
    // One atomic step in the store: no lock to take here.
    if (this.#batch !== undefined) return this.#criticalSection(steps, cost, record);
    // Lock the asynchronous limits' keys in one global order: by limiter, then key.
    const locked = steps
      .filter((s) => !s.member.synchronous)
      .sort((a, b) => internals.id(a.member.limiter) - internals.id(b.member.limiter) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    const run = (i: number): Promise<GroupResult> => {
      const step = locked[i];
      if (step === undefined) return this.#criticalSection(steps, cost, record);
      return internals.mutex(step.member.limiter).runExclusive(step.key, () => run(i + 1));
    };
    return run(0);
  }

  async #criticalSection(steps: readonly Step[], cost: number, record: boolean): Promise<GroupResult> {
    const internals = limiterInternals();
    const nows = steps.map((s) => internals.now(s.member.limiter, s.limit));
    const batch = this.#batch;
    if (batch !== undefined) {
      // One step for every limit (one script call for Redis): checked, and recorded only if all allow.
      const requests: BatchRequest[] = steps.map((s, i) => ({
        strategy: s.member.limiter.strategy,
        key: s.key,
        nowMs: nows[i] as number,
        cost,
        limit: s.limit,
      }));
      const results = await batch.decideAll(requests, record);
      if (!record) return this.#combine(results, null);
      return this.#observed(steps, cost, this.#combine(results, results.every((r) => r.allowed)));
    }
    // Every check settles before the locks are released, even when one fails.
    const settled = await Promise.allSettled(
      steps.map(async (s, i) => internals.peek(s.member.limiter, s.key, cost, s.limit, nows[i] as number)),
    );
    const failed = settled.find((o): o is PromiseRejectedResult => o.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    const checked = settled.map((o) => (o as PromiseFulfilledResult<RateLimitResult>).value);
    if (!checked.every((r) => r.allowed)) {
      return record ? this.#observed(steps, cost, this.#combine(checked, false)) : this.#combine(checked, null);
    }
    // Synchronous limits may have changed during the awaits: re-check and record them in one
    // synchronous step.
    for (let i = 0; i < steps.length; i++) {
      const s = steps[i] as Step;
      if (!s.member.synchronous) continue;
      nows[i] = internals.now(s.member.limiter, s.limit);
      checked[i] = internals.peek(s.member.limiter, s.key, cost, s.limit, nows[i] as number) as RateLimitResult;
    }
    if (!record) return this.#combine(checked, null);
    if (!checked.every((r) => r.allowed)) return this.#observed(steps, cost, this.#combine(checked, false));
    const recorded = new Array<RateLimitResult>(steps.length);
    for (let i = 0; i < steps.length; i++) {
      const s = steps[i] as Step;
      if (s.member.synchronous) {
        recorded[i] = internals.consume(s.member.limiter, s.key, cost, s.limit, nows[i] as number) as RateLimitResult;
      }
    }
    for (let i = 0; i < steps.length; i++) {
      const s = steps[i] as Step;
      if (!s.member.synchronous) {
        recorded[i] = await internals.consume(s.member.limiter, s.key, cost, s.limit, nows[i] as number);
      }
    }
    // A store shared with other processes may refuse on recording what it allowed on checking:
    // the group then reports the refusal (the limits already recorded stay recorded).
    return this.#observed(steps, cost, this.#combine(recorded, recorded.every((r) => r.allowed)));
  }

  /**
   * Combines per-limit results. `allowed` is the group's outcome, or `null` for a peek (allowed
   * when every limit would allow).
   */
  #combine(results: readonly RateLimitResult[], allowed: boolean | null): GroupResult {
    const outcome = allowed ?? results.every((r) => r.allowed);
    let remaining = Infinity;
    let retryAfter = 0;
    let resetAfter = 0;
    let binding = 0;
    for (let i = 0; i < results.length; i++) {
      const r = results[i] as RateLimitResult;
      if (r.resetAfter > resetAfter) resetAfter = r.resetAfter;
      if (outcome) {
        if (r.remaining < remaining) {
          remaining = r.remaining;
          binding = i;
        }
      } else {
        if (r.remaining < remaining) remaining = r.remaining;
        if (r.retryAfter > retryAfter) {
          retryAfter = r.retryAfter;
          binding = i;
        }
      }
    }
    const names = this.#members.map((m) => m.name);
    return {
      allowed: outcome,
      remaining,
      retryAfter: outcome ? 0 : retryAfter,
      limit: (results[binding] as RateLimitResult).limit,
      resetAfter,
      results,
      names,
      binding,
    };
  }
}

function isLimiter(value: unknown): value is AnyLimiter {
  return value instanceof RateLimiter;
}
