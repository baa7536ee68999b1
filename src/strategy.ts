/**
 * The in-memory strategy contract ({@link RateLimitStrategy}): an algorithm whose per-key state
 * the limiter holds. Its counterpart for state kept in a store is `RateLimitStore`
 * (`./store.ts`).
 *
 * @module
 */
import type { Quota } from './quota.js';
import type { RateLimitResult } from './result.js';

/**
 * A rate-limiting algorithm whose per-key state the limiter holds in memory, pluggable into
 * `RateLimiter` — the sliding-window log, the sliding-window counter, the fixed window, the
 * token bucket and GCRA are the built-in ones.
 *
 * The limiter owns the `Map<string, State>` of per-key state, the clock and the quotas; a
 * strategy says how to create a key's state and how to decide on it. Its methods are
 * **synchronous** pure computations on that state: nothing can interleave with a decision, so
 * evict → check → record is atomic per key without a lock (a strategy that must await, because
 * its state is somewhere else, is a `RateLimitStore`).
 *
 * A strategy never reads a clock: it is given `nowMs`, which never decreases from one call to
 * the next on one limiter (the limiter takes a clock reading earlier than its latest as the
 * latest), so a strategy may drop what has expired at `nowMs` in `consume` and `sweep` (never
 * in `peek`, which may be asked about a later time). The built-in
 * strategies also stay consistent when called directly with a time that goes back.
 *
 * A strategy holds no configuration: the {@link Quota} comes with every call, so one instance
 * can serve several limiters and tiers.
 *
 * **Reservations.** While a `RateLimitGroup` awaits its stores, it holds a reservation of its
 * request (cost `p`) on the key of each in-memory limit: a decision of cost `c` on that key is
 * then made as `peek(state, nowMs, c + p, quota)` and, if allowed, recorded as
 * `consume(state, nowMs, c, quota)`; the group records `consume(state, laterMs, p, quota)`
 * afterwards, at a time no earlier, and that must allow. The limiter therefore assumes that a
 * strategy is **additive** (if `c + p` would be allowed, then `c` is, and `p` right after it)
 * and **never less permissive as time passes** (what is allowed at one time is allowed later,
 * with nothing recorded in between): every built-in strategy is both. A strategy that is not
 * may refuse the group's record after its stores recorded; the group then reports the refusal,
 * and the stores keep what they recorded.
 *
 * @typeParam State - the per-key state the limiter stores for this strategy.
 */
export interface RateLimitStrategy<State = unknown> {
  /** A short name for messages and tooling, such as `"sliding-window-log"`. */
  readonly name: string;
  /**
   * The largest `threshold` the strategy supports, when it has one (the sliding-window log stores
   * a timestamp per unit, so it caps memory per key). Checked by `createQuota` for the limiter's
   * quota and every tier.
   * @default Number.MAX_SAFE_INTEGER
   */
  readonly maxThreshold?: number;
  /**
   * The longest window, in **seconds**, the strategy supports, when it has a bound. Checked by
   * `createQuota` for the limiter's quota and every tier.
   * @default no bound beyond the quota's own
   */
  readonly maxWindowSeconds?: number;
  /**
   * The largest `threshold × windowMs` (the window in **milliseconds**) the strategy supports,
   * when it has one: the rate strategies keep their state in integers scaled by both. Checked by
   * `createQuota` for the limiter's quota and every tier.
   * @default no bound
   */
  readonly maxThresholdTimesWindowMs?: number;
  /**
   * Creates the empty state of a key seen for the first time (or again after being forgotten).
   * The limiter keeps it only once a request on it has been allowed.
   *
   * @param quota - the quota of the key's first decision.
   */
  createState(quota: Quota): State;
  /**
   * Decides one request of `cost` units at `nowMs` and, only when it is allowed, records it.
   * A rejected request must leave the decision-relevant state as it was.
   *
   * @param state - the key's state, owned by the limiter.
   * @param nowMs - the limiter's clock in **milliseconds**, read for this decision.
   * @param cost - a positive safe integer, already validated.
   * @param quota - the quota to enforce.
   * @returns the result, with `remaining` and `resetAfter` after the request.
   */
  consume(state: State, nowMs: number, cost: number, quota: Quota): RateLimitResult;
  /**
   * The result a request of `cost` units would get at `nowMs`, without changing `state` at all:
   * {@link consume} called next with the same arguments must decide the same way. It must not
   * drop what has expired either: the limiter also peeks at a **later** time than its clock (to
   * find when a key under `maxKeys` clears), and a key whose tier changes to a longer window
   * would still count those entries.
   *
   * The result's `remaining` and `resetAfter` are as they stand before the request (nothing is
   * recorded), not after it as in {@link consume}'s result.
   *
   * @param state - the key's state, or `undefined` when the key is not tracked.
   * @param nowMs - the limiter's clock in **milliseconds**.
   * @param cost - a positive safe integer, already validated.
   * @param quota - the quota to check against.
   */
  peek(state: State | undefined, nowMs: number, cost: number, quota: Quota): RateLimitResult;
  /**
   * Drops what has expired at `nowMs` from `state` and says whether the state is now clear, so
   * that the limiter can forget the key: a key created afresh must then decide exactly as the
   * cleared one would have. Cheap; called by `cleanUp()`, the automatic sweep and `maxKeys`.
   *
   * @param state - the key's state.
   * @param nowMs - the limiter's clock in **milliseconds**.
   * @param quota - the quota last applied to the key.
   * @returns `true` when the key can be forgotten.
   */
  sweep(state: State, nowMs: number, quota: Quota): boolean;
  /**
   * Optional (needed by `RateLimiter.reserve` and `RateLimitGroup.reserve`): describes the
   * decision that {@link consume} has **just** allowed on `state` (nothing else ran in between),
   * so that {@link refund} can later give it back. The limiter keeps the ticket, unread, with
   * the reservation; the state stays the strategy's.
   *
   * @param state - the key's state, right after the allowed `consume`.
   * @param nowMs - the reading, in **milliseconds**, that `consume` was given.
   * @param cost - the cost that `consume` recorded.
   * @param quota - the quota it was recorded under.
   * @returns an opaque ticket (mutable by {@link refund}: a partial refund may update it).
   */
  ticket?(state: State, nowMs: number, cost: number, quota: Quota): unknown;
  /**
   * Optional (needed by `reserve`): gives back `units` of the decision `ticket` describes, as
   * `Reservation.refund` documents (Go's `Reservation.Cancel`): exactly as if those units had
   * never been recorded, or, when the state cannot tell, a no-op returning `false` — never a
   * give-back more permissive than never having made the request, never a negative count.
   * The limiter calls it only on the very state object the decision was recorded in (a key
   * forgotten, reset or swept since has a new state, and its refund is a no-op there).
   *
   * @param state - the key's state.
   * @param ticket - what {@link RateLimitStrategy.ticket | ticket} returned for the decision.
   * @param units - a positive safe integer, at most the decision's cost less what was refunded
   *   through it (checked by the limiter).
   * @param nowMs - the limiter's clock in **milliseconds**, no earlier than the decision's.
   * @param quota - the quota last applied to the key.
   * @returns whether the units were given back.
   */
  refund?(state: State, ticket: unknown, units: number, nowMs: number, quota: Quota): boolean;
  /**
   * Optional (needed by `RateLimiter.penalty`): records `points` units at `nowMs` **without
   * asking** (rate-limiter-flexible's `penalty`), even when the limit is exhausted: afterwards
   * the key may be refused for longer than a window.
   *
   * @param state - the key's state (a new one for a key not tracked).
   * @param nowMs - the limiter's clock in **milliseconds**.
   * @param points - a positive safe integer, at most `quota.threshold` (checked by the limiter).
   * @param quota - the quota to record under.
   */
  penalty?(state: State, nowMs: number, points: number, quota: Quota): void;
}
