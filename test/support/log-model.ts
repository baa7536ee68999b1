// The one reference model of the sliding-window log, written as plainly as possible, shared by
// the property tests (test/unit/property.test.ts: whole results) and the strategy models
// (test/unit/strategies/models.test.ts: units free at a time, retryAfter found by search).
import type { RateLimitResult } from '../../src/index.js';

/**
 * Per key, an array of the effective times of allowed units. Time never runs backwards (a
 * decision's reading before the latest one counts as the latest); entries `u` with
 * `u + window <= t` are expired.
 */
export class LogModel {
  readonly #logs = new Map<string, number[]>();
  /** The limiter's time never runs backwards: the latest reading decided so far. */
  #latest = -Infinity;

  constructor(
    readonly threshold: number,
    readonly windowMs: number,
  ) {}

  /** The units of `key` still in the window at `t` (no later than the latest time decided). */
  live(key: string, t: number): number[] {
    const at = Math.max(t, this.#latest);
    return (this.#logs.get(key) ?? []).filter((u) => u + this.windowMs > at);
  }

  /** Whole units that would fit for `key` at `t`; changes nothing. */
  free(key: string, t: number): number {
    return this.threshold - this.live(key, t).length;
  }

  /** Records `cost` units for `key` at `t` (taken as the latest time if earlier). */
  record(key: string, t: number, cost: number): void {
    const at = Math.max(t, this.#latest);
    this.#latest = at;
    const log = this.live(key, at);
    for (let i = 0; i < cost; i++) log.push(at);
    this.#logs.set(key, log);
  }

  /** The whole result of a request of `cost` for `key` at `now`, recorded when allowed. */
  decide(key: string, now: number, cost: number): RateLimitResult {
    const { threshold: limit, windowMs } = this;
    const t = Math.max(now, this.#latest);
    this.#latest = t;
    const live = this.live(key, t);
    const resetAfter = live.length > 0 ? (live[live.length - 1]! + windowMs - t) / 1000 : 0;
    if (live.length + cost <= limit) {
      this.record(key, t, cost);
      return { allowed: true, remaining: limit - live.length - cost, retryAfter: 0, limit, resetAfter: windowMs / 1000 };
    }
    const remaining = Math.max(0, limit - live.length);
    if (cost > limit) return { allowed: false, remaining, retryAfter: Infinity, limit, resetAfter };
    const k = live.length + cost - limit;
    return { allowed: false, remaining, retryAfter: (live[k - 1]! + windowMs - t) / 1000, limit, resetAfter };
  }
}
