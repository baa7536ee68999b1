// The invariants every result must hold, shared by the property and contract suites.
import { expect } from 'vitest';
import type { RateLimitResult } from '../../src/index.js';

/**
 * `remaining` an integer in [0, threshold]; `limit` the threshold; `retryAfter` 0 when allowed,
 * else in (0, maxWaitSeconds] or Infinity; `resetAfter` in [0, maxWaitSeconds].
 */
export function expectInRange(r: RateLimitResult, threshold: number, maxWaitSeconds: number): void {
  expect(Number.isInteger(r.remaining)).toBe(true);
  expect(r.remaining).toBeGreaterThanOrEqual(0);
  expect(r.remaining).toBeLessThanOrEqual(threshold);
  expect(r.limit).toBe(threshold);
  if (r.allowed) expect(r.retryAfter).toBe(0);
  else if (r.retryAfter !== Infinity) {
    expect(r.retryAfter).toBeGreaterThan(0);
    expect(r.retryAfter).toBeLessThanOrEqual(maxWaitSeconds);
  }
  expect(r.resetAfter).toBeGreaterThanOrEqual(0);
  expect(r.resetAfter).toBeLessThanOrEqual(maxWaitSeconds);
}
