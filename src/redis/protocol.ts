/**
 * The decision protocol's two sides, written once: the argument layout of a call of the script
 * (`./script.ts`) and the reading of its reply, strictly (only what the script returns is a
 * decision; anything else is a misbehaving adapter or a tampered key, and becomes a
 * `RateWardenRedisReplyError`).
 *
 * @module
 */
import type { Quota } from '../quota.js';
import { outcome, type RateLimitResult } from '../result.js';
import { TICKS_PER_MS, onGrid, retryAfterSeconds } from '../time.js';
import type { RedisAlgorithm } from './algorithm.js';
import { ALGORITHMS } from './script.js';

/** @internal Values per entry in a reply: wait, left, state, shift. */
export const PER_ENTRY = 4;

/** @internal The reply's wait for an entry whose unit failed in Redis (the left value is the message). */
export const WAIT_COMMAND_ERROR = -2;
/** @internal The reply's wait for an entry whose unit's deadline had passed. */
export const WAIT_PAST_DEADLINE = -3;

/** @internal One limit's share of a unit: what the script decides for it. */
export interface Entry {
  readonly algorithm: RedisAlgorithm;
  /** The Redis key. */
  readonly redisKey: string;
  /** The limiter's reading, ms (sent under `time: "limiter"`). */
  readonly nowMs: number;
  /** A positive safe integer. */
  readonly cost: number;
  readonly quota: Quota;
}

/** @internal A unit as the layout needs it: entries decided all or nothing. */
export interface UnitLayout {
  readonly entries: readonly Entry[];
  readonly record: boolean;
  /**
   * The unit's operation, when it is not a plain decision (`record` says `1` or `0`): `v<id>`
   * reserve, `p` penalty, `u<time> <n0> <cost> <id>` refund, `b` block, `x` delete (see the
   * script's description).
   */
  readonly op?: string | undefined;
  /** The unit's deadline in the server's microseconds (an integer), or `undefined` for none. */
  readonly deadlineUs: number | undefined;
}

/**
 * @internal The keys and arguments of one call deciding `units`, in order.
 * @param redisTime - whether the server's clock times the entries (`time: "redis"`).
 * @param minExpiryMs - the shortest expiry to set.
 * @param token - the call's token key (mode `r`), or `undefined` (mode `d`).
 */
export function layCall(
  units: readonly UnitLayout[],
  redisTime: boolean,
  minExpiryMs: number,
  token: string | undefined,
): { keys: string[]; args: string[] } {
  const keys: string[] = [];
  const args: string[] = [token === undefined ? 'd' : 'r', redisTime ? '' : 'm', String(minExpiryMs), ''];
  let latest = -Infinity;
  let deadlines = true;
  for (const unit of units) {
    const entries = unit.entries;
    const deadline = unit.deadlineUs;
    if (deadline === undefined) deadlines = false;
    else if (deadline > latest) latest = deadline;
    const op = unit.op;
    args.push(String(entries.length), op ?? (unit.record ? '1' : '0'), deadline === undefined ? '' : String(deadline));
    for (const e of entries) {
      keys.push(e.redisKey);
      const quota = e.quota;
      // A quota that blocks: its block in ms, and `e` when refused attempts extend it.
      const blockMs = quota.blockMs;
      const id = blockMs === undefined || blockMs === 0 ? e.algorithm.id : `${e.algorithm.id}${blockMs}${quota.extendBlock === true ? 'e' : ''}`;
      args.push(id, String(quota.threshold), String(quota.windowMs), String(e.cost));
      // Each entry at its own reading, on the grid of 2^-10 ms, in ticks (an integer; printed exactly).
      if (!redisTime) args.push(String(Math.round(e.nowMs * TICKS_PER_MS)));
    }
  }
  // The latest deadline: a script starting after it has nothing to decide.
  if (deadlines && units.length > 0) args[3] = String(latest);
  if (token !== undefined) keys.push(token);
  return { keys, args };
}

/** @internal A unit read back from a call's arguments (for tests and diagnostics). */
export interface LaidUnit {
  readonly record: boolean;
  /** The unit's operation as laid: `1`, `0`, or one of {@link UnitLayout.op}'s. */
  readonly op: string;
  readonly deadlineUs: number | undefined;
  readonly entries: readonly { readonly id: string; readonly threshold: number; readonly windowMs: number; readonly cost: number; readonly ticks: number | undefined }[];
}

/**
 * @internal The units of a call, read back from its arguments (the inverse of {@link layCall}), or
 * `undefined` for the handshake.
 * @throws {Error} when the arguments are not a call of the script.
 */
export function readCall(args: readonly string[]): { mode: string; units: LaidUnit[] } | undefined {
  const mode = args[0];
  if (mode === 't') return undefined;
  if (mode !== 'd' && mode !== 'r') throw new Error(`not a call of the script: mode ${String(mode)}`);
  const own = args[1] === 'm';
  const units: LaidUnit[] = [];
  let a = 4;
  while (a < args.length) {
    const count = Number(args[a]);
    if (!Number.isSafeInteger(count) || count < 1) throw new Error(`not a call of the script: a unit of ${String(args[a])}`);
    const entries = [];
    let b = a + 3;
    for (let j = 0; j < count; j++) {
      entries.push({
        id: args[b] as string,
        threshold: Number(args[b + 1]),
        windowMs: Number(args[b + 2]),
        cost: Number(args[b + 3]),
        ticks: own ? Number(args[b + 4]) : undefined,
      });
      b += own ? 5 : 4;
    }
    if (b > args.length) throw new Error('not a call of the script: a unit cut short');
    const op = String(args[a + 1]);
    units.push({ record: op !== '0', op, deadlineUs: args[a + 2] === '' ? undefined : Number(args[a + 2]), entries });
    a = b;
  }
  return { mode, units };
}

/**
 * @internal The result of one entry from its four reply values, or `undefined` when they are not
 * what the script returns (a misbehaving adapter or a tampered key). `retryAfter` is computed
 * from the wait on the grid as the in-memory strategies do: from the limiter's reading when the
 * script decided with it (`time: "limiter"`), so that a caller who waits it is allowed; from the
 * server's time otherwise (rounded up to the microsecond). A blocked entry (`shift` below 0:
 * `-1 -` the block's remaining ticks) waits from the time given.
 * @param wait - ticks (`0` allowed, positive refused, `-1` never).
 */
export function entryResult(e: Entry, wait: number, left: number, state: number, shift: number, redisTime: boolean): RateLimitResult | undefined {
  const quota = e.quota;
  const threshold = quota.threshold;
  if (
    !Number.isSafeInteger(wait) ||
    wait < -1 ||
    (wait === -1) !== e.cost > threshold ||
    !Number.isSafeInteger(left) ||
    (left < 0 && !(e.algorithm.leftMayBeNegative && wait !== 0)) ||
    left > threshold ||
    !Number.isSafeInteger(state) ||
    state < 0 ||
    !Number.isSafeInteger(shift) ||
    (shift < 0 && wait === 0)
  ) {
    return undefined;
  }
  // Beyond one window only after a penalty or with a block: both bounded by the largest debt or
  // block the script writes (below 2^53 ticks).
  const resetMs = e.algorithm.resetMs(state, quota);
  if (!Number.isFinite(resetMs)) return undefined;
  const remaining = left < 0 ? 0 : left;
  if (wait === 0) return outcome(true, remaining, 0, threshold, resetMs);
  if (wait === -1) return outcome(false, remaining, Infinity, threshold, resetMs);
  const waitMs = wait / TICKS_PER_MS;
  let retryAfter: number;
  if (redisTime) retryAfter = retryAfterSeconds(0, 0, waitMs, quota.windowSeconds);
  else if (shift <= 0) retryAfter = retryAfterSeconds(e.nowMs, onGrid(e.nowMs), waitMs, quota.windowSeconds);
  else {
    // The time decided at: the reading on the grid, or later when the key's state was ahead.
    const at = onGrid(e.nowMs) + shift / TICKS_PER_MS;
    retryAfter = retryAfterSeconds(at, at, waitMs, quota.windowSeconds);
  }
  return outcome(false, remaining, retryAfter, threshold, resetMs);
}

/** @internal The algorithm of an id the script knows. */
export function algorithmOf(id: string): RedisAlgorithm | undefined {
  return ALGORITHMS.find((a) => a.id === id);
}

/** @internal A number from a reply: a number, or a decimal string such as `"0.5"`, `"-1"` or `"inf"`; else NaN. */
export function toNumber(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value !== 'string') return Number.NaN;
  if (value === 'inf') return Infinity;
  return /^-?\d+(\.\d+)?(e[-+]?\d+)?$/i.test(value) ? Number(value) : Number.NaN;
}

/** @internal A short, safe rendering of a reply for an error message (never throws). */
export function describeReply(reply: unknown): string {
  try {
    // JSON.stringify returns undefined for a function, a symbol or undefined (its types say string).
    const text = JSON.stringify(reply, (_key, value: unknown) => (typeof value === 'bigint' ? `${value}n` : value)) as string | undefined;
    return text === undefined ? typeof reply : text.slice(0, 200);
  } catch {
    return Array.isArray(reply) ? `an array of ${reply.length} elements` : typeof reply;
  }
}
