/**
 * Reservations (issue 22): a recorded decision that can be given back, in part or whole —
 * {@link Reservation} from `RateLimiter.reserve`, {@link SyncReservation} from `reserveSync`,
 * and the refunds of a group's (`GroupReservation`, declared with `GroupResult` in
 * `./rate-limit-group.ts`). The model is Go's
 * `x/time/rate` `Reservation.Cancel()`, which gives back what a reservation took; it replaces
 * rate-limiter-flexible's `reward(key, points)` and express-rate-limit's decrement of a counted
 * request, but gives back only what the one decision took, never what was not recorded.
 *
 * @module
 */
import { refundReserved, type Decider, type Reserved } from './decider.js';
import { rangeError, typeError } from './errors.js';
import type { Quota } from './quota.js';
import type { RateLimitResult } from './result.js';

/**
 * A decision of `RateLimiter.reserve`: every {@link RateLimitResult} field, as
 * `allowRequest` reports it (the decision is made exactly as `allowRequest` makes it, counted
 * and published alike), plus its {@link cost} and a {@link refund} that gives back what it took.
 *
 * **What a refund does,** per strategy (see each strategy's `refund`):
 * - **sliding-window log**: drops `units` of the decision's own entries, wherever later entries
 *   are: the key is exactly as if they had never been recorded; `false` once they have left the
 *   window, or when a penalty has dropped old entries since (the log keeps only its newest
 *   `threshold`);
 * - **fixed window**: subtracts from the count while the key is in the decision's window
 *   (`false` once it has moved on: the decision no longer counts), except for the request that
 *   opened the window once others were recorded after it (`false`: the window would have opened
 *   later without it);
 * - **sliding-window counter**: subtracts from the window the decision was counted in, while
 *   it is the current or the previous one; `false` otherwise, and in the two cases where the
 *   grid of windows would have been anchored elsewhere without it (see the strategy);
 * - **token bucket and GCRA**: gives back exactly (`level += units` / `TAT −= units × T`) when
 *   nothing else was recorded on the key since the decision (and its own earlier refunds);
 *   otherwise `false`, as these states keep no history and any give-back could be more
 *   permissive than never having made the request;
 * - with a store ({@link RefundingStore}): the store's `refund`, with the same semantics,
 *   under the key's lock.
 *
 * A refund on a key forgotten since the decision (`reset`, a sweep, `maxKeys`) is a no-op
 * (`false`): the key's state is not the same any more, so a later request at the same
 * millisecond is never given back by mistake. A refund is not a decision: it is not counted in
 * `stats()` and no `decision` event is published; it makes the key's `waitForSlot` waiters try
 * again at once (as `reset` does).
 */
export interface Reservation extends RateLimitResult {
  /** The cost of the decision, in units: a positive safe integer (1 by default). */
  readonly cost: number;
  /**
   * Gives back `units` of what the decision took (Go's `Reservation.Cancel`, in part or whole).
   *
   * @param units - a positive safe integer, at most what is left to refund (the cost, less
   *   what was refunded through this reservation). Default: all that is left.
   * @returns a promise of `true` when the units were given back, `false` for a documented no-op:
   *   nothing left (the decision was refused, or all of it was refunded already; `units` is
   *   still type-checked), or a refund the strategy cannot make exactly (see above). After
   *   `false`, what is left is unchanged.
   * @throws never synchronously. Rejects with a `TypeError` naming `units` when it is not a
   *   number, a `RangeError` naming `units` ("an integer from 1 to <left>") when it is not an
   *   integer in that range (nothing given back), with a `TypeError` if the clock returns a
   *   non-number, or with the store's error.
   */
  refund(units?: number): Promise<boolean>;
}

/**
 * A decision of `RateLimiter.reserveSync` (in-memory strategies): a {@link Reservation} whose
 * {@link refund} returns directly.
 */
export interface SyncReservation extends RateLimitResult {
  /** The cost of the decision, in units: a positive safe integer (1 by default). */
  readonly cost: number;
  /**
   * {@link Reservation.refund}, returned directly.
   * @throws {RateWardenTypeError} / {@link RateWardenRangeError} naming `units`, as
   *   `Reservation.refund` rejects.
   */
  refund(units?: number): boolean;
}

/**
 * What is left to refund of one decision, and its refunds: units taken out before a refund runs
 * (so that two refunds in flight never give back more than the cost) and put back if it gives
 * nothing back.
 */
class Refunds {
  readonly #decider: Decider<unknown>;
  readonly #key: string;
  readonly #quota: Quota;
  readonly #ticket: unknown;
  #left: number;

  constructor(decider: Decider<unknown>, key: string, reserved: Reserved, cost: number) {
    this.#decider = decider;
    this.#key = key;
    this.#quota = reserved.quota;
    this.#ticket = reserved.ticket;
    this.#left = reserved.ticket === undefined ? 0 : cost;
  }

  /**
   * The units asked for, checked against what is left (0 when nothing is left).
   * @throws {RateWardenTypeError} / {@link RateWardenRangeError} naming `units`.
   */
  check(units: unknown): number {
    const left = this.#left;
    const expected = `an integer from 1 to ${left}`;
    if (units === undefined) return left;
    if (typeof units !== 'number') throw typeError('units', left === 0 ? 'a number or undefined' : expected, units);
    if (left === 0) return 0;
    if (!Number.isSafeInteger(units) || units < 1 || units > left) throw rangeError('units', expected, units);
    return units;
  }

  /** The units left to refund. */
  get left(): number {
    return this.#left;
  }

  /** Whether the refund runs in memory (synchronously), not on a store. */
  get inMemory(): boolean {
    return this.#decider.table !== undefined;
  }

  /**
   * The clock reading an in-memory refund will use (`undefined` with a store, which reads it
   * itself): read before a group's refunds run, so that a failing clock throws before any of
   * them changed anything.
   */
  readNow(): number | undefined {
    return this.#decider.table === undefined ? undefined : this.#decider.now(this.#quota);
  }

  /** Refunds `units` (checked, at least 1), in memory synchronously (at `nowMs` when given). */
  run(units: number, nowMs?: number): boolean | Promise<boolean> {
    this.#left -= units;
    let outcome: boolean | Promise<boolean>;
    try {
      outcome = refundReserved(this.#decider, this.#key, this.#quota, this.#ticket, units, nowMs);
    } catch (error) {
      this.#left += units;
      throw error;
    }
    if (typeof outcome === 'boolean') {
      if (!outcome) this.#left += units;
      return outcome;
    }
    return outcome.then(
      (refunded) => {
        if (!refunded) this.#left += units;
        return refunded;
      },
      (error: unknown) => {
        this.#left += units;
        throw error;
      },
    );
  }
}

/** @internal The {@link Reservation} of a decision on `key`. */
export function reservation(decider: Decider<unknown>, key: string, reserved: Reserved, cost: number): Reservation {
  return asyncReservation(reserved.result, new Refunds(decider, key, reserved, cost), cost);
}

/** @internal The {@link SyncReservation} of an in-memory decision on `key`. */
export function syncReservation(decider: Decider<unknown>, key: string, reserved: Reserved, cost: number): SyncReservation {
  return syncReservationOf(reserved.result, new Refunds(decider, key, reserved, cost), cost);
}

function asyncReservation(result: RateLimitResult, refunds: Refunds, cost: number): Reservation {
  return {
    ...result,
    cost,
    refund(units?: number): Promise<boolean> {
      try {
        const checked = refunds.check(units);
        return Promise.resolve(checked === 0 ? false : refunds.run(checked));
      } catch (error) {
        return Promise.reject(error);
      }
    },
  };
}

function syncReservationOf(result: RateLimitResult, refunds: Refunds, cost: number): SyncReservation {
  return {
    ...result,
    cost,
    refund(units?: number): boolean {
      const checked = refunds.check(units);
      return checked === 0 ? false : (refunds.run(checked) as boolean);
    },
  };
}

/**
 * Each limit's units asked for by a group refund ({@link Refunds.check}); a `RangeError` names
 * the limit whose units left are too few (`names`: the group's, in member order).
 */
function checkAll(all: readonly Refunds[], units: unknown, names: readonly string[] | undefined): number[] {
  return all.map((r, i) => {
    try {
      return r.check(units);
    } catch (error) {
      if (!(error instanceof RangeError)) throw error;
      const name = names?.[i] ?? `limit-${i + 1}`;
      throw rangeError('units', `an integer from 1 to ${r.left} (what is left to refund on the group's limit "${name}")`, units);
    }
  });
}

/** @internal One limit of a group reservation: its decider, key and decision. */
export interface MemberReserved {
  readonly decider: Decider<unknown>;
  readonly key: string;
  readonly reserved: Reserved;
}

/**
 * @internal A group decision's result (`R`, a `GroupResult`) as a `GroupReservation`: its cost,
 * one {@link Reservation} per limit and a refund of all.
 */
export function groupReservation<R extends object>(
  result: R,
  cost: number,
  members: readonly MemberReserved[],
): R & { readonly cost: number; readonly reservations: readonly Reservation[]; refund(units?: number): Promise<boolean> } {
  const all = members.map((m) => new Refunds(m.decider, m.key, m.reserved, cost));
  const reservations = members.map((m, i) => asyncReservation(m.reserved.result, all[i] as Refunds, cost));
  return {
    ...result,
    cost,
    reservations,
    refund(units?: number): Promise<boolean> {
      try {
        // Every check and clock first (either may throw: nothing has changed then); then the
        // stores' refunds, and the in-memory ones only once every store's has succeeded, so
        // that a store failing leaves the in-memory limits as they were (as a group records).
        const checked = checkAll(all, units, (result as { names?: readonly string[] }).names);
        const nows = all.map((r) => r.readNow());
        // (An in-memory limit's place holds `true` until it runs below; nothing left is `false`.)
        const stores = all.map((r, i) => Promise.resolve(checked[i] === 0 ? false : r.inMemory ? true : r.run(checked[i] as number)));
        return Promise.all(stores).then((done) => {
          let every = done.every(Boolean);
          all.forEach((r, i) => {
            if (r.inMemory && checked[i] !== 0 && !(r.run(checked[i] as number, nows[i]) as boolean)) every = false;
          });
          return every;
        });
      } catch (error) {
        return Promise.reject(error);
      }
    },
  };
}

/** @internal {@link groupReservation} of an in-memory group decision: its refunds return directly. */
export function syncGroupReservation<R extends object>(
  result: R,
  cost: number,
  members: readonly MemberReserved[],
): R & { readonly cost: number; readonly reservations: readonly SyncReservation[]; refund(units?: number): boolean } {
  const all = members.map((m) => new Refunds(m.decider, m.key, m.reserved, cost));
  const reservations = members.map((m, i) => syncReservationOf(m.reserved.result, all[i] as Refunds, cost));
  return {
    ...result,
    cost,
    reservations,
    refund(units?: number): boolean {
      // Every check and clock first (either may throw: nothing has changed then), then the refunds.
      const checked = checkAll(all, units, (result as { names?: readonly string[] }).names);
      const nows = all.map((r) => r.readNow());
      let every = true;
      all.forEach((r, i) => {
        if ((checked[i] as number) === 0 || !(r.run(checked[i] as number, nows[i]) as boolean)) every = false;
      });
      return every;
    },
  };
}
