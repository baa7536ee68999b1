/**
 * Reading the decision script's replies: strictly, since only what the script returns is a
 * decision (anything else is a misbehaving adapter or a tampered key, and becomes a
 * `RateWardenRedisReplyError`).
 *
 * @module
 */
import type { RateLimitResult } from '../result.js';
import { result } from '../result.js';
import type { BatchRequest } from '../store.js';

/** @internal Which script branch decides a limit: `l` the sliding-window log, `g` GCRA. */
export type ScriptKind = 'l' | 'g';

/** @internal The results in a script reply, or `undefined` when the reply is not what the script returns. */
export function parseReply(reply: unknown, requests: readonly BatchRequest[], kinds: readonly ScriptKind[]): RateLimitResult[] | undefined {
  if (!Array.isArray(reply) || reply.length !== requests.length * 4 + 1) return undefined;
  const results: RateLimitResult[] = [];
  for (let i = 0; i < requests.length; i++) {
    const quota = (requests[i] as BatchRequest).quota;
    const o = i * 4;
    const allowed = toNumber(reply[o]);
    const remaining = toNumber(reply[o + 1]);
    let retryAfterMs: number;
    let resetAfterMs: number;
    if (kinds[i] === 'l') {
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
      remaining > quota.threshold ||
      (allowed === 1 ? retryAfterMs !== 0 : !(retryAfterMs > 0)) ||
      // (GCRA's span / threshold may land a rounding step above the window: result() clamps it.)
      !(resetAfterMs >= 0 && resetAfterMs <= quota.windowMs * (1 + 1e-9))
    ) {
      return undefined;
    }
    results.push(result(allowed === 1, remaining, retryAfterMs, quota.threshold, resetAfterMs, quota.windowSeconds));
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
