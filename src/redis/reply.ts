/**
 * Reading the decision script's replies: strictly, since only what the script returns is a
 * decision (anything else is a misbehaving adapter or a tampered key, and becomes a
 * `RateWardenRedisReplyError`).
 *
 * @module
 */
import type { RateLimitResult } from '../result.js';
import { outcome } from '../result.js';
import { TICKS_PER_MS, onGrid, retryAfterSeconds } from '../time.js';
import type { BatchRequest } from '../store.js';

/** @internal Which script branch decides a limit: `l` the sliding-window log, `g` GCRA. */
export type ScriptKind = 'l' | 'g';

/** Values per limit in a reply: allowed, remaining, wait (ticks), resetAfter (ms), shift (ticks). */
const PER_LIMIT = 5;

/**
 * @internal The results in a script reply, or `undefined` when the reply is not what the script
 * returns. `retryAfter` is computed here from the wait on the grid, as the in-memory strategies
 * do: from the limiter's reading when the script decided with it (`time: "limiter"`), so that a
 * caller who waits it is allowed; from the server's time otherwise (rounded up to the
 * microsecond).
 */
export function parseReply(reply: unknown, requests: readonly BatchRequest[], redisTime: boolean): RateLimitResult[] | undefined {
  if (!Array.isArray(reply) || reply.length !== requests.length * PER_LIMIT + 1) return undefined;
  const results: RateLimitResult[] = [];
  for (let i = 0; i < requests.length; i++) {
    const request = requests[i] as BatchRequest;
    const quota = request.quota;
    const o = i * PER_LIMIT;
    const allowed = toNumber(reply[o]);
    const remaining = toNumber(reply[o + 1]);
    const wait = toNumber(reply[o + 2]); // ticks; -1: never
    // A double, in milliseconds: a string with RESP2 clients (ioredis), a number with node-redis.
    const resetAfterMs = toNumber(reply[o + 3]);
    const shift = toNumber(reply[o + 4]); // ticks
    // Only what the script can return: anything else is a misbehaving adapter or a tampered key.
    if (
      (allowed !== 0 && allowed !== 1) ||
      !Number.isSafeInteger(remaining) ||
      remaining < 0 ||
      remaining > quota.threshold ||
      !Number.isSafeInteger(wait) ||
      (allowed === 1 ? wait !== 0 : !(wait > 0 || wait === -1)) ||
      wait > 2 * TICKS_PER_MS * quota.windowMs ||
      !(resetAfterMs >= 0 && resetAfterMs <= quota.windowMs) ||
      !Number.isSafeInteger(shift) ||
      shift < 0
    ) {
      return undefined;
    }
    let retryAfter = 0;
    if (wait === -1) retryAfter = Infinity;
    else if (wait > 0) {
      const waitMs = wait / TICKS_PER_MS;
      if (redisTime) retryAfter = retryAfterSeconds(0, 0, waitMs, quota.windowSeconds);
      else {
        // The time decided at: the reading on the grid, or later when the key's state was ahead.
        const now = onGrid(request.nowMs);
        retryAfter =
          shift === 0
            ? retryAfterSeconds(request.nowMs, now, waitMs, quota.windowSeconds)
            : retryAfterSeconds(now + shift / TICKS_PER_MS, now + shift / TICKS_PER_MS, waitMs, quota.windowSeconds);
      }
    }
    results.push(outcome(allowed === 1, remaining, retryAfter, quota.threshold, resetAfterMs));
  }
  return results;
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
