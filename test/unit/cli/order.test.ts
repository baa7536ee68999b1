// Ordering the requests by time (src/cli/order.ts): sortByTime is a stable sort, whatever its path.
import { describe, expect, it } from 'vitest';
import { sortByTime } from '../../../src/cli/order.js';

describe('sortByTime', () => {
  /** A deterministic pseudo-random sequence (a linear congruential generator). */
  function lcg(seed: number): () => number {
    let state = seed >>> 0;
    return () => {
      state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
      return state / 2 ** 32;
    };
  }
  const reference = (times: Float64Array, count: number): number[] =>
    Array.from({ length: count }, (_, i) => i).sort(
      (a, b) => (times[a] as number) - (times[b] as number) || a - b,
    );

  it('orders by time, ties in index order, with both the counting and the comparison sort', () => {
    const random = lcg(42);
    for (const count of [0, 1, 2, 10, 1000]) {
      const times = new Float64Array(count + 5); // extra entries past `count` are ignored
      for (let i = 0; i < times.length; i++) times[i] = 1e12 + Math.floor(random() * 50) * 1000;
      const expected = reference(times, count);
      expect(Array.from(sortByTime(times, count))).toEqual(expected);
      expect(Array.from(sortByTime(times, count, 0))).toEqual(expected); // comparison sort
    }
  });

  it('sorts long spans of whole seconds with the radix sort, stably', () => {
    const random = lcg(7);
    const count = 20_000;
    const times = new Float64Array(count);
    // Spread over about 400 days (far beyond the counting sort's range), with many ties.
    for (let i = 0; i < count; i++) times[i] = 1.4e12 + Math.floor(random() * 3_000) * 11_520_000;
    expect(Array.from(sortByTime(times, count))).toEqual(reference(times, count));
    expect(Array.from(sortByTime(times, count, 0))).toEqual(reference(times, count));
  });

  it('falls back to the comparison sort for times that are not whole seconds', () => {
    const times = Float64Array.from([5500, 1000, 5500, 1000.25, -3000, 1000]);
    expect(Array.from(sortByTime(times, times.length))).toEqual([4, 1, 5, 3, 0, 2]);
  });
});
