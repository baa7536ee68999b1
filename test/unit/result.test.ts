// outcome(): the one place strategies (and the Redis reply) build a RateLimitResult.
import { describe, expect, it } from 'vitest';
import { outcome } from '../../src/result.js';

describe('outcome() builds every result in one shape, resetAfter converted from milliseconds', () => {
  it('an allowed result has retryAfter +0 (not -0) and the fields in one order', () => {
    const r = outcome(true, 2, 0, 3, 1_000);
    expect(r).toEqual({ allowed: true, remaining: 2, retryAfter: 0, limit: 3, resetAfter: 1 });
    expect(Object.is(r.retryAfter, 0)).toBe(true);
    expect(Object.keys(r)).toEqual(['allowed', 'remaining', 'retryAfter', 'limit', 'resetAfter']);
  });

  it('a refusal keeps the seconds it is given, Infinity included', () => {
    expect(outcome(false, 0, 0.9993, 1, 999.2998046875)).toEqual({ allowed: false, remaining: 0, retryAfter: 0.9993, limit: 1, resetAfter: 0.9992998046875 });
    expect(outcome(false, 1, Infinity, 2, 0)).toEqual({ allowed: false, remaining: 1, retryAfter: Infinity, limit: 2, resetAfter: 0 });
  });
});
