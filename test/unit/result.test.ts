// result(): the one place strategies build a RateLimitResult from milliseconds.
import { describe, expect, it } from 'vitest';
import { result } from '../../src/result.js';

describe('result() converts milliseconds to seconds, rounding retryAfter up to the microsecond', () => {
  const cases: [string, number, number, number, number, number][] = [
    // name, retryAfterMs, resetAfterMs, maxSeconds, retryAfter, resetAfter
    ['whole milliseconds', 700, 1_000, 1, 0.7, 1],
    ['a fraction of a microsecond is a whole one', 0.0001, 1, 1, 0.000001, 0.001],
    ['just above a microsecond rounds up', 0.0011, 0.5, 1, 0.000002, 0.0005],
    ['float noise under 1e-12 s does not round up', 300.0000000001, 300, 1, 0.3, 0.3],
    ['a wait past maxSeconds after rounding is clamped to it', 2, 2, 0.0015, 0.0015, 0.0015],
    ['exactly maxSeconds stays', 2_500, 2_500, 2.5, 2.5, 2.5],
    ['never (Infinity) is not clamped', Infinity, 1_000, 1, Infinity, 1],
  ];
  for (const [name, retryMs, resetMs, max, retryAfter, resetAfter] of cases) {
    it(name, () => {
      expect(result(false, 0, retryMs, 3, resetMs, max)).toEqual({ allowed: false, remaining: 0, retryAfter, limit: 3, resetAfter });
    });
  }

  it('an allowed result has retryAfter +0 (not -0) and the fields in one order', () => {
    const r = result(true, 2, 0, 3, 1_000, 1);
    expect(r).toEqual({ allowed: true, remaining: 2, retryAfter: 0, limit: 3, resetAfter: 1 });
    expect(Object.is(r.retryAfter, 0)).toBe(true);
    expect(Object.keys(r)).toEqual(['allowed', 'remaining', 'retryAfter', 'limit', 'resetAfter']);
  });
});
