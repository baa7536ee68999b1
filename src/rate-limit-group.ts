/**
 * `RateLimitGroup`: several limits decided at once, all or nothing. It reaches each member
 * limiter through the limiter's documented internal interface, its {@link Decider}
 * (`deciderOf`), never through private fields.
 *
 * One concern in about 740 lines (reserve and refund tickets, issue 22, added about 180): planning the steps (locks in a global order), checking every
 * member (in-memory limits jointly per limiter, stores by batch), and recording stores before
 * in-memory limits (reserved in their key tables meanwhile), on a synchronous and an
 * asynchronous path that must agree.
 *
 * @module
 */
import { NOT_DECIDED, deciderOf, refundingStore, type Decider } from './decider.js';
import { groupReservation, syncGroupReservation, type MemberReserved, type Reservation, type SyncReservation } from './reservation.js';
import { RateWardenRangeError, RateWardenTypeError, checkKnownKeys, isObject, knownOptions, notSynchronous, typeError } from './errors.js';
import type { Committed, KeyTable, TableCheck, TableRequest } from './key-table.js';
import type { Quota } from './quota.js';
import type { AnyLimiter } from './rate-limiter.js';
import { costOf, keyOf, shadowOf, type RequestOptions, type User } from './request.js';
import type { RateLimitResult } from './result.js';
import { isBatching, type BatchRequest, type BatchingStore, type RefundingStore, type StoreBatch } from './store.js';

/** One limit of a {@link RateLimitGroup}. Any other own enumerable string key is rejected. */
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
 * - `allowed`: every limit allowed the request (and each recorded it, once, its cost); otherwise
 *   none recorded it, and no limiter changed (no key forgotten under `maxKeys` either; only the
 *   limits that rejected count the rejection in `stats()`), but for what a store shared with
 *   other processes may do (see {@link RateLimitGroup}).
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

/**
 * A decision of `RateLimitGroup.reserve`: the {@link GroupResult} plus one {@link Reservation}
 * per limit, in member order (refunding one refunds that limit only; when the group was
 * refused, its limits recorded nothing and refund nothing (`false`), except a store of a group
 * not decided in one step that recorded before another store refused: its unit stays recorded,
 * as `RateLimitGroup` describes, and its reservation can give it back), and a {@link refund} of
 * every limit.
 */
export interface GroupReservation extends GroupResult {
  /** The cost of the request, in units, charged to every limit. */
  readonly cost: number;
  /** One reservation per limit, in member order. */
  readonly reservations: readonly Reservation[];
  /**
   * Refunds `units` (default: what is left) on every limit.
   * @returns a promise of `true` when every limit's refund returned `true`.
   * @throws never synchronously. Rejects as {@link Reservation.refund}; `units` is checked
   *   against every limit before any is refunded.
   */
  refund(units?: number): Promise<boolean>;
}

/** A decision of `RateLimitGroup.reserveSync` (every limit in memory): {@link GroupReservation}, returned directly. */
export interface SyncGroupReservation extends GroupResult {
  /** The cost of the request, in units, charged to every limit. */
  readonly cost: number;
  /** One reservation per limit, in member order. */
  readonly reservations: readonly SyncReservation[];
  /**
   * {@link GroupReservation.refund}, returned directly.
   * @throws as {@link SyncReservation.refund}.
   */
  refund(units?: number): boolean;
}

/** The keys of {@link GroupMember}: the group rejects a member with any other. */
const MEMBER_OPTIONS = knownOptions('a RateLimitGroup member', {
  limiter: true,
  key: true,
  name: true,
} satisfies Record<keyof GroupMember, true>);

interface Member {
  readonly limiter: AnyLimiter;
  /** The limiter's core operation. */
  readonly decider: Decider<unknown>;
  readonly key: ((user: User | string) => User | string) | undefined;
  readonly name: string;
  /** Whether the limiter's strategy is in memory (decided synchronously). */
  readonly inMemory: boolean;
}

/** One member's share of a decision. */
interface Step {
  readonly member: Member;
  readonly key: string;
  readonly quota: Quota;
}

/** A request, planned: each member's step, the cost, and whether it is a shadow decision. */
interface Plan {
  readonly steps: Step[];
  readonly cost: number;
  readonly shadow: boolean;
}

/**
 * Several limits checked at once, **all or nothing**: a request is allowed only if every limit
 * allows it, and when one rejects it, none of them records it — for example 10 per second and
 * 1,000 per hour for each user, or a per-user limit and a global one.
 *
 * With in-memory strategies the whole check — every limit checked, then every limit recorded —
 * is one synchronous step, so it is atomic with respect to any other decision. One limiter may
 * be a member more than once, on different keys: under `maxKeys` its members are checked
 * together, room for all of its new keys at once, and a clear key is forgotten to make room
 * only once every limit has allowed. With stores, the keys of the store limits are locked first,
 * exclusively (atomic stores too, whose own decisions of the key then wait: the group checks,
 * then records, and nothing in this process lands in between), always in the same global order
 * (by limiter, then key), so two groups that share limiters or keys cannot deadlock; the stores
 * are checked; then the in-memory limits are checked and, in the same synchronous step,
 * **reserved**; then the stores record; then, in one synchronous step, the reservations are
 * recorded. When every limit is on
 * stores sharing one `batch` ({@link BatchingStore}: the Redis strategies on one client), the
 * whole check is one step there: one script call that checks every limit and records them only
 * if all allow, atomic also against other processes.
 *
 * **Never refused after recording.** A reservation counts as recorded for every other call of
 * this process on the limiter, on any key, asynchronous or synchronous (`allowRequestSync`,
 * `peekSync`, `waitForSlot`, another group): a request on a reserved key is decided as if the
 * group's request had been recorded first, and a new key needs a place under `maxKeys` beyond
 * the reserved ones. Sweeps (`cleanUp()`, the automatic sweep) and eviction leave a reserved key
 * alone, `reset()` of one keeps its place, and a tier change of its key (`limitFor`) applies at
 * once to the reserved request too. So once its stores have recorded, the group's in-memory
 * limits allow (for strategies that are additive and never less permissive as time passes, as
 * the built-in ones are: see `RateLimitStrategy`); asynchronous decisions on its in-memory
 * keys still wait for the group. If a store fails (a store error) or refuses, the reservations
 * are dropped: no in-memory limit was charged (clear keys forgotten to make room stay
 * forgotten, which changes no decision).
 *
 * What remains: a store shared with other processes may refuse on recording what it allowed on
 * checking (another process took the last unit in between). The group then reports the refusal
 * (or raises a store's error) and records no further limit; with two or more limits on stores
 * recorded one after the other (not in one `batch` step), those already recorded stay recorded.
 * The same holds for Redis limits on a Cluster across hash slots, recorded one slot at a time.
 *
 * (rate-limiter-flexible's `RLWrapperBlackAndWhite`/union consume from every limiter and never
 * roll back; this checks before recording anything.)
 *
 * **Blocks** (a member's `blockSeconds`, or its `RateLimiter.block`): a member whose key is
 * blocked refuses the group, with the block's refusal as its result (so the group's `retryAfter`
 * covers the block), and no other member is charged. When a recorded group decision is refused,
 * each member limit that refused starts its own key's block (or, blocked already, restarts it
 * under `extendBlock`), as its own decision would; the members that allowed are not blocked. In
 * memory the group applies the blocks; with stores, each store does it in its decision.
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
  /** Whether every limit is in memory: the group then decides synchronously. */
  readonly #inMemory: boolean;
  /** The batch deciding every limit in one step, when all the limits' stores share one. */
  readonly #batch: StoreBatch | undefined;
  /** Whether several limits are on batching stores (their stored keys must then differ). */
  readonly #stored: boolean;

  /**
   * @param members - the limits: limiters, or {@link GroupMember}s; at least one.
   * @throws {RateWardenTypeError} when `members` is not a non-empty array of limiters or members,
   *   or a member object has a key other than `limiter`, `key` and `name` (code
   *   `ERR_RATEWARDEN_UNKNOWN_OPTION`, naming the key and, when one is close, the key meant).
   */
  constructor(members: readonly (AnyLimiter | GroupMember)[]) {
    if (!Array.isArray(members) || members.length === 0) {
      throw typeError('members', 'a non-empty array of RateLimiter or { limiter, key?, name? }', members);
    }
    // Limiters (or stores shared by limiters) met twice: a key must then not be decided twice.
    const seen = new Set<number>();
    let repeats = false;
    const checked: Member[] = [];
    for (let index = 0; index < members.length; index++) {
      const entry: unknown = members[index];
      const member = (deciderOf(entry) !== undefined ? { limiter: entry } : entry) as GroupMember;
      if (isObject(member) && !Array.isArray(member)) checkKnownKeys(member, MEMBER_OPTIONS, `RateLimitGroup members[${index}]`);
      const decider = isObject(member) ? deciderOf(member.limiter) : undefined;
      if (decider === undefined) {
        throw typeError(`members[${index}]`, 'a RateLimiter or { limiter: RateLimiter, key?, name? }', entry);
      }
      if (member.key !== undefined && typeof member.key !== 'function') {
        throw typeError(`members[${index}].key`, 'a function or undefined', member.key);
      }
      if (member.name !== undefined && typeof member.name !== 'string') {
        throw typeError(`members[${index}].name`, 'a string or undefined', member.name);
      }
      if (seen.has(decider.lockOrder)) repeats = true;
      seen.add(decider.lockOrder);
      checked.push({
        limiter: member.limiter,
        decider,
        key: member.key,
        name: member.name ?? `limit-${index + 1}`,
        inMemory: decider.table !== undefined,
      });
    }
    this.#members = checked;
    this.#repeats = repeats;
    this.#inMemory = checked.every((m) => m.inMemory);
    const stores = checked.map((m) => m.decider.store);
    const batching = stores.filter((store): store is BatchingStore => store !== undefined && isBatching(store));
    const batch = batching[0]?.batch;
    this.#batch = batching.length === checked.length && batching.every((store) => store.batch === batch) ? batch : undefined;
    this.#stored = batching.length > 1;
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
      if (this.#inMemory) {
        const planned = this.#plan(user, options);
        // Decided now, unless another group holds one of its keys between its check and its record.
        if (!planned.steps.some((s) => s.member.decider.mutex.isHeld(s.key))) return Promise.resolve(this.#decidePlanned(planned, true));
        return this.#decideLocked(planned, true);
      }
      return this.#decideAsync(user, options, true);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * {@link allowRequest}, returned directly, when every limit's strategy is in memory.
   * @throws {RateWardenTypeError} (`ERR_RATEWARDEN_NOT_SYNCHRONOUS`) when one is a store; errors
   *   as `RateLimiter.allowRequestSync`.
   */
  allowRequestSync(user: User | string, options?: RequestOptions): GroupResult {
    if (!this.#inMemory) throw notSynchronous(this.#storeName(), 'allowRequestSync');
    return this.#decideSync(user, options, true);
  }

  /**
   * Decides one request against every limit, all or nothing, exactly as {@link allowRequest}
   * does, and returns it as a {@link GroupReservation}: the {@link GroupResult}, one
   * `Reservation` per limit (in member order; refunding one gives back that limit only) and
   * `refund(units?)`, which gives back on every limit (see `RateLimiter.reserve` and
   * `Reservation` for what a refund does). When the group refuses, no limit recorded anything
   * and every refund is a no-op (`false`).
   *
   * @throws never synchronously; rejects as {@link allowRequest}, and with a `TypeError` naming
   *   the strategy or store of a limit that cannot refund (an in-memory strategy without
   *   `ticket` and `refund`, a store that is not a `RefundingStore`, a shared batch without
   *   `reserveAll`), before anything is decided.
   */
  reserve(user: User | string, options?: RequestOptions): Promise<GroupReservation> {
    try {
      this.#checkRefunds();
      const planned = this.#plan(user, options);
      const tickets = new Array<unknown>(planned.steps.length);
      const reserved = (result: GroupResult): GroupReservation => groupReservation(result, planned.cost, this.#reserved(planned, result, tickets));
      if (this.#inMemory && !planned.steps.some((s) => s.member.decider.mutex.isHeld(s.key))) {
        return Promise.resolve(reserved(this.#decidePlanned(planned, true, tickets)));
      }
      return this.#decideLocked(planned, true, tickets).then(reserved);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * {@link reserve}, returned directly, when every limit's strategy is in memory.
   * @throws {RateWardenTypeError} (`ERR_RATEWARDEN_NOT_SYNCHRONOUS`) when one is a store; a
   *   `TypeError` naming a strategy that cannot refund; errors as `RateLimiter.allowRequestSync`.
   */
  reserveSync(user: User | string, options?: RequestOptions): SyncGroupReservation {
    if (!this.#inMemory) throw notSynchronous(this.#storeName(), 'reserveSync');
    this.#checkRefunds();
    const planned = this.#plan(user, options);
    const tickets = new Array<unknown>(planned.steps.length);
    const result = this.#decidePlanned(planned, true, tickets);
    return syncGroupReservation(result, planned.cost, this.#reserved(planned, result, tickets));
  }

  /** @throws a `TypeError` naming the first limit's strategy or store that cannot refund. */
  #checkRefunds(): void {
    const batch = this.#batch;
    if (batch !== undefined && typeof batch.reserveAll !== 'function') {
      throw new RateWardenTypeError(
        `Expected the batch of the group's stores to implement \`reserveAll\` for \`reserve\`, got the store \`${this.#storeName()}\`'s batch, which does not`,
      );
    }
    for (const member of this.#members) {
      if (member.decider.table !== undefined) member.decider.table.checkRefunds();
      else refundingStore(member.decider, 'reserve');
    }
  }

  /** Each limit's share of a reservation: its key, its quota and its ticket (none when refused). */
  #reserved(plan: Plan, result: GroupResult, tickets: readonly unknown[]): MemberReserved[] {
    return plan.steps.map((step, i) => ({
      decider: step.member.decider,
      key: step.key,
      reserved: {
        result: result.results[i] as RateLimitResult,
        quota: step.quota,
        // Set for the limits that recorded (a store that recorded before another refused keeps its ticket).
        ticket: tickets[i],
      },
    }));
  }

  /** Whether the request would be allowed by every limit now, recording nothing. */
  peek(user: User | string, options?: RequestOptions): Promise<GroupResult> {
    try {
      if (this.#inMemory) return Promise.resolve(this.#decideSync(user, options, false));
      return this.#decideAsync(user, options, false);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** {@link peek}, returned directly, when every limit's strategy is in memory. */
  peekSync(user: User | string, options?: RequestOptions): GroupResult {
    if (!this.#inMemory) throw notSynchronous(this.#storeName(), 'peekSync');
    return this.#decideSync(user, options, false);
  }

  /** The name of the first store among the limits, for messages. */
  #storeName(): string {
    return this.#members.find((m) => !m.inMemory)?.decider.name ?? '';
  }

  /** Each member's key and quota for `user` (validating the user and cost as limiters do). */
  #plan(user: User | string, options: RequestOptions | undefined): Plan {
    const cost = costOf(options);
    const shadow = shadowOf(options);
    const steps = this.#members.map((member) => {
      const memberUser = member.key === undefined ? user : member.key(user);
      const key = keyOf(memberUser);
      return { member, key, quota: member.decider.quotaFor(memberUser, key) };
    });
    if (this.#stored) {
      // Two limits counting on one stored key (the same Redis prefix) would count each request twice.
      const stored = new Set<string>();
      for (const step of steps) {
        const store = step.member.decider.store;
        if (store === undefined || !isBatching(store)) continue;
        const storeKey = store.storeKey(step.key);
        if (stored.has(storeKey)) {
          throw new RateWardenRangeError(
            `Expected the limits of a group to use distinct stored keys, got \`${storeKey}\` twice: give each limit its own \`prefix\``,
          );
        }
        stored.add(storeKey);
      }
    }
    if (this.#repeats) {
      const pairs = new Set<string>();
      for (const step of steps) {
        const pair = `${step.member.decider.lockOrder}\u0000${step.key}`;
        if (pairs.has(pair)) {
          throw new RateWardenRangeError(
            `Expected the limits of a group to decide distinct keys, got the key \`${step.key}\` twice for one limiter (or one store)`,
          );
        }
        pairs.add(pair);
      }
    }
    return { steps, cost, shadow };
  }

  #decideSync(user: User | string, options: RequestOptions | undefined, record: boolean): GroupResult {
    return this.#decidePlanned(this.#plan(user, options), record);
  }

  /** {@link #decideSync} of a planned request. */
  #decidePlanned(plan: Plan, record: boolean, tickets?: unknown[]): GroupResult {
    const { steps, cost } = plan;
    const results = new Array<RateLimitResult>(steps.length);
    const tables = checkInMemory(steps, cost, results);
    blockedInMemory(steps, cost, results);
    if (!record) return this.#combine(results, null);
    if (!results.every((r) => r.allowed)) return this.#observed(plan, this.#combine(refusedInMemory(steps, cost, results), false));
    recordInMemory(tables, results);
    if (tickets !== undefined) ticketInMemory(tables, cost, tickets, undefined);
    // Every limit allowed on checking, so each allows on recording (same time, same state).
    return this.#observed(plan, this.#combine(results, results.every((r) => r.allowed)));
  }

  /**
   * Counts a recorded (not peeked) group decision in each member limiter's `stats()` and tells
   * its `decision` listeners: every limit when the group allowed; when it rejected, the limits
   * that rejected (the others recorded nothing, and count nothing).
   */
  #observed({ steps, cost, shadow }: Plan, result: GroupResult): GroupResult {
    for (let i = 0; i < steps.length; i++) {
      const r = result.results[i] as RateLimitResult;
      const step = steps[i] as Step;
      if (result.allowed || !r.allowed) step.member.decider.observer.observe(step.key, cost, r, step.quota, shadow);
    }
    return result;
  }

  async #decideAsync(user: User | string, options: RequestOptions | undefined, record: boolean): Promise<GroupResult> {
    return this.#decideLocked(this.#plan(user, options), record);
  }

  /**
   * Decides a planned request under the locks of its keys. The in-memory limits' keys are locked
   * too, when recording: the asynchronous decisions of this process on them (`allowRequest`, other
   * groups) then wait until the group has recorded, so that what it checked still holds once its
   * stores have recorded.
   */
  async #decideLocked(plan: Plan, record: boolean, tickets?: unknown[]): Promise<GroupResult> {
    const { steps } = plan;
    // One atomic step in the store: no lock to take here.
    if (this.#batch !== undefined) return this.#criticalSection(plan, record, tickets);
    // Lock the keys in one global order: by lock (a store's is shared by its limiters; each
    // in-memory limiter has its own), then key.
    const locked = steps
      .filter((s) => record || !s.member.inMemory)
      .sort((a, b) => a.member.decider.lockOrder - b.member.decider.lockOrder || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    const run = (i: number): Promise<GroupResult> => {
      const step = locked[i];
      if (step === undefined) return this.#criticalSection(plan, record, tickets);
      return step.member.decider.mutex.runExclusive(step.key, () => run(i + 1));
    };
    return run(0);
  }

  async #criticalSection(plan: Plan, record: boolean, tickets?: unknown[]): Promise<GroupResult> {
    const { steps, cost } = plan;
    const batch = this.#batch;
    if (batch !== undefined) {
      // One step for every limit (one script call for Redis): checked, and recorded only if all allow.
      const requests: BatchRequest[] = steps.map((s) => ({
        store: s.member.decider.store as BatchingStore,
        key: s.key,
        nowMs: s.member.decider.now(s.quota),
        cost,
        quota: s.quota,
      }));
      if (tickets !== undefined) {
        // A reservation: each result with its ticket (checked present before any lock).
        const reserved = await (batch.reserveAll as NonNullable<StoreBatch['reserveAll']>)(requests);
        const results = reserved.map((r) => r.result);
        const allowed = results.every((r) => r.allowed);
        reserved.forEach((r, i) => {
          tickets[i] = allowed ? r.ticket : undefined;
        });
        return this.#observed(plan, this.#combine(results, allowed));
      }
      const results = await batch.decideAll(requests, record);
      if (!record) return this.#combine(results, null);
      return this.#observed(plan, this.#combine(results, results.every((r) => r.allowed)));
    }
    // The stores' limits first; every check settles before the locks are released, even when
    // one fails. (The in-memory limits are checked once the awaits are over: they may change
    // meanwhile.)
    const nows = steps.map((s) => (s.member.inMemory ? 0 : s.member.decider.now(s.quota)));
    const settled = await Promise.allSettled(
      steps.map(async (s, i) =>
        s.member.inMemory ? NOT_DECIDED : s.member.decider.decideAt(s.key, cost, s.quota, nows[i] as number, false),
      ),
    );
    const failed = settled.find((o): o is PromiseRejectedResult => o.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    const results = settled.map((o) => (o as PromiseFulfilledResult<RateLimitResult>).value);
    // The in-memory limits, checked in one synchronous step, all of a limiter's keys together.
    const tables = checkInMemory(steps, cost, results);
    blockedInMemory(steps, cost, results);
    if (!record) return this.#combine(results, null);
    if (!results.every((r) => r.allowed)) return this.#observed(plan, this.#combine(refusedInMemory(steps, cost, results), false));
    if (steps.every((s) => s.member.inMemory)) {
      // Nothing to await: recorded in the same synchronous step.
      recordInMemory(tables, results);
      if (tickets !== undefined) ticketInMemory(tables, cost, tickets, undefined);
      return this.#observed(plan, this.#combine(results, true));
    }
    // The stores are recorded first, the in-memory limits only once every store has: a store that
    // fails (or times out) or refuses between the check and the record leaves them uncharged.
    // Meanwhile the in-memory requests are reserved, in the same synchronous step as their check:
    // every other decision of this process on those limiters (on any key, synchronous ones too),
    // sweep and reset, counts them as recorded, so that they still allow once the stores have.
    reserveInMemory(tables);
    try {
      // The stores hold their keys (exclusively, atomic ones too), so each allows on recording
      // what it allowed on checking; but a store shared with other processes may refuse: the
      // group then reports the refusal, records no further limit, and the stores already
      // recorded stay recorded.
      for (let i = 0; i < steps.length; i++) {
        const s = steps[i] as Step;
        if (s.member.inMemory) continue;
        let recorded: RateLimitResult;
        if (tickets === undefined) recorded = await s.member.decider.decideAt(s.key, cost, s.quota, nows[i] as number, true);
        else {
          const reserved = await (s.member.decider.store as RefundingStore).reserve(s.key, nows[i] as number, cost, s.quota);
          recorded = reserved.result;
          tickets[i] = recorded.allowed ? reserved.ticket : undefined;
        }
        results[i] = recorded;
        if (!recorded.allowed) {
          releaseInMemory(tables);
          return this.#observed(plan, this.#combine(results, false));
        }
      }
    } catch (error) {
      releaseInMemory(tables);
      throw error;
    }
    // Recorded as reserved, each allowing (under the built-in strategies' assumptions: see
    // RateLimitStrategy), at each limiter's latest time.
    const quotas = commitInMemory(tables, results);
    if (tickets !== undefined) ticketInMemory(tables, cost, tickets, quotas);
    const committed = { ...plan, steps: steps.map((s, i) => (quotas[i] === undefined ? s : { ...s, quota: quotas[i] })) };
    return this.#observed(committed, this.#combine(results, results.every((r) => r.allowed)));
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

/** The in-memory members of one limiter in a decision: its key table and their requests. */
interface TableSteps {
  readonly table: KeyTable<unknown>;
  /** The limiter's decider (its clock). */
  readonly decider: Decider<unknown>;
  /** The members' places in the group's steps. */
  readonly indices: number[];
  readonly requests: TableRequest[];
  /** The table's joint check, once made. */
  checked: TableCheck | undefined;
}

/**
 * Checks the in-memory members, recording nothing, and puts their results in `results`: the
 * members on one limiter are checked together ({@link KeyTable.check}), so that under `maxKeys`
 * room is needed for all of its new keys at once. Reads each member's clock.
 * @returns the checks, for {@link recordInMemory} or {@link reserveInMemory} in the same synchronous step.
 * @throws for a bad clock, or what a strategy throws (nothing recorded).
 */
function checkInMemory(steps: readonly Step[], cost: number, results: RateLimitResult[]): TableSteps[] {
  const byTable = new Map<KeyTable<unknown>, TableSteps>();
  for (let i = 0; i < steps.length; i++) {
    const step = steps[i] as Step;
    const table = step.member.decider.table;
    if (table === undefined) continue;
    let entry = byTable.get(table);
    if (entry === undefined) {
      entry = { table, decider: step.member.decider, indices: [], requests: [], checked: undefined };
      byTable.set(table, entry);
    }
    entry.indices.push(i);
    entry.requests.push({ key: step.key, now: step.member.decider.now(step.quota), cost, quota: step.quota });
  }
  const tables = [...byTable.values()];
  for (const entry of tables) {
    const checked = entry.table.check(entry.requests);
    entry.checked = checked;
    entry.indices.forEach((index, j) => {
      results[index] = checked.results[j] as RateLimitResult;
    });
  }
  return tables;
}

/**
 * Blocks, in memory: puts in `results` the refusal of each in-memory member whose key is blocked
 * (`blockSeconds`, `RateLimiter.block`), in the synchronous step of {@link checkInMemory}, right
 * after it. A blocked member refuses the group; no other member is charged.
 */
function blockedInMemory(steps: readonly Step[], cost: number, results: RateLimitResult[]): void {
  for (let i = 0; i < steps.length; i++) {
    const step = steps[i] as Step;
    const decider = step.member.decider;
    if (decider.table !== undefined && decider.blocking) results[i] = decider.checkBlock(step.key, cost, step.quota, results[i] as RateLimitResult);
  }
}

/**
 * Blocks, in memory, when a recorded group decision is refused: each in-memory member that
 * refused starts its key's block under its quota's `blockSeconds` (or, already blocked,
 * restarts it under `extendBlock`), as a single decision of its limiter would; a member that
 * allowed is left alone. Its result becomes the block's refusal. Returns `results`.
 */
function refusedInMemory(steps: readonly Step[], cost: number, results: RateLimitResult[]): RateLimitResult[] {
  for (let i = 0; i < steps.length; i++) {
    const step = steps[i] as Step;
    const decider = step.member.decider;
    const result = results[i] as RateLimitResult;
    if (decider.table !== undefined && decider.blocking && !result.allowed) results[i] = decider.groupRefused(step.key, cost, step.quota, result);
  }
  return results;
}

/** Records the in-memory members checked by {@link checkInMemory}, every one allowed, in `results`. */
function recordInMemory(tables: readonly TableSteps[], results: RateLimitResult[]): void {
  for (const entry of tables) {
    const recorded = entry.table.record(entry.requests, entry.checked as TableCheck);
    entry.indices.forEach((index, j) => {
      results[index] = recorded[j] as RateLimitResult;
    });
  }
}

/**
 * Reserves the in-memory members checked by {@link checkInMemory}, every one allowed, in the same
 * synchronous step ({@link KeyTable.reserve}).
 */
function reserveInMemory(tables: readonly TableSteps[]): void {
  for (const entry of tables) entry.table.reserve(entry.requests, entry.checked as TableCheck);
}

/**
 * The tickets of the in-memory members just recorded (by {@link recordInMemory} or
 * {@link commitInMemory}, in the same synchronous step), into `tickets` by step.
 * @param quotas - the quotas {@link commitInMemory} recorded under (at each limiter's latest
 *   time), or `undefined` after {@link recordInMemory} (at each request's time and quota).
 */
function ticketInMemory(tables: readonly TableSteps[], cost: number, tickets: unknown[], quotas: readonly (Quota | undefined)[] | undefined): void {
  for (const entry of tables) {
    entry.indices.forEach((index, j) => {
      const request = entry.requests[j] as TableRequest;
      const now = quotas === undefined ? request.now : entry.decider.latestNow();
      const quota = quotas?.[index] ?? request.quota;
      tickets[index] = entry.table.ticketOf(request.key, now, cost, quota);
    });
  }
}

/** Drops the reservations of {@link reserveInMemory}: nothing in memory was recorded. */
function releaseInMemory(tables: readonly TableSteps[]): void {
  for (const entry of tables) entry.table.release(entry.requests);
}

/**
 * Records the reservations of {@link reserveInMemory}, in one synchronous step, each at its
 * limiter's latest time, and puts the results in `results`.
 * @returns the quota each in-memory member was recorded under, by step (the reserved one, or a
 *   tier that a decision on the key applied since), `undefined` for the other steps.
 */
function commitInMemory(tables: readonly TableSteps[], results: RateLimitResult[]): (Quota | undefined)[] {
  const quotas = new Array<Quota | undefined>(results.length);
  try {
    for (const entry of tables) {
      const committed = entry.table.commit(entry.requests, entry.decider.latestNow());
      entry.indices.forEach((index, j) => {
        const c = committed[j] as Committed;
        results[index] = c.result;
        quotas[index] = c.quota;
      });
    }
  } catch (error) {
    // A strategy that throws: no reservation is left behind.
    releaseInMemory(tables);
    throw error;
  }
  return quotas;
}
