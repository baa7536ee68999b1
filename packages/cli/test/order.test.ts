// Ordering the requests by time (src/order.ts): sortByTime is a stable sort, whatever its path,
// and sortPath tells which path it takes.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RADIX_MIN_COUNT, sortByTime, sortPath, type SortPath } from '../src/order.js';

/** A deterministic pseudo-random sequence (a linear congruential generator). */
function lcg(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/** The reference: the indexes `0 … count - 1` sorted stably by time (Array.prototype.sort is stable). */
const reference = (times: Float64Array, count: number): number[] =>
  Array.from({ length: count }, (_, i) => i).sort(
    (a, b) => (times[a] as number) - (times[b] as number) || a - b,
  );

/** `count` times spread over about 400 days in whole seconds, with many ties (seeded). */
function longSpan(count: number): Float64Array {
  const random = lcg(7);
  const times = new Float64Array(count);
  for (let i = 0; i < count; i++) times[i] = 1.4e12 + Math.floor(random() * 3_000) * 11_520_000;
  return times;
}

describe('sortByTime', () => {
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

  it('falls back to the comparison sort for times that are not whole milliseconds', () => {
    const times = Float64Array.from([5500, 1000, 5500, 1000.25, -3000, 1000]);
    expect(Array.from(sortByTime(times, times.length))).toEqual([4, 1, 5, 3, 0, 2]);
  });

  it('equals a reference stable sort on every path: counting, radix and comparison (property)', () => {
    const seen = new Set<SortPath>();
    const SECOND = 1000;
    fc.assert(
      fc.property(
        // An offset in ms (not a whole second: only differences count), and times in whole seconds
        // after it: few distinct ones (ties), or anywhere in 32 bits (both radix passes), or
        // beyond them (three passes); or any whole milliseconds (by millisecond); or fractions of
        // a millisecond (the comparison sort).
        fc.integer({ min: -1e12, max: 1e12 }),
        fc.oneof(
          fc.array(fc.integer({ min: 0, max: 5 }).map((s) => s * SECOND), { maxLength: 40 }),
          fc.array(fc.integer({ min: 0, max: 2 ** 32 - 1 }).map((s) => s * SECOND), { maxLength: 40 }),
          fc.array(fc.integer({ min: 0, max: 2 ** 33 }).map((s) => s * SECOND), { maxLength: 40 }),
          fc.array(fc.integer({ min: 0, max: 10_000 }), { maxLength: 40 }),
          fc.array(fc.integer({ min: 0, max: 2 ** 40 }), { maxLength: 40 }),
          fc.array(fc.integer({ min: 0, max: 4000 }).map((t) => t / 4), { maxLength: 40 }),
        ),
        fc.nat({ max: 5 }), // entries past `count`, ignored
        fc.constantFrom(0, 1, 4, 1 << 16, undefined), // maxBuckets
        fc.constantFrom(0, 2, 20, RADIX_MIN_COUNT), // radixMinCount
        (offset, after, extra, maxBuckets, radixMinCount) => {
          const count = Math.max(0, after.length - extra);
          const times = Float64Array.from(after, (t) => offset + t);
          const path = sortPath(times, count, maxBuckets, radixMinCount);
          seen.add(path);
          expect(Array.from(sortByTime(times, count, maxBuckets, radixMinCount))).toEqual(reference(times, count));
        },
      ),
      { numRuns: 3000 },
    );
    // Every path was taken.
    expect([...seen].sort()).toEqual(['comparison', 'counting', 'radix']);
  });
});

describe('sortPath', () => {
  it('takes the radix sort for whole seconds over a span too long for the counting sort', () => {
    // 400 days is far beyond the counting sort's default range (2^16 s, or 2 s per request).
    const times = longSpan(20_000);
    expect(sortPath(times, times.length)).toBe('radix');
    expect(sortPath(times, RADIX_MIN_COUNT)).toBe('radix');
    // The span of the built-in sample: 10,000 requests over about 83 hours.
    const hours = Float64Array.from({ length: 10_000 }, (_, i) => 1.43e12 + ((i * 7_919) % 298_860) * 1000);
    expect(sortPath(hours, hours.length)).toBe('radix');
    // Up to a span of 2^32 - 1 seconds, the largest key of 32 bits.
    const widest = Float64Array.from([0, (2 ** 32 - 1) * 1000, 5000]);
    expect(sortPath(widest, 3, 1 << 16, 3)).toBe('radix');
    expect(Array.from(sortByTime(widest, 3, 1 << 16, 3))).toEqual([0, 2, 1]);
  });

  it('takes the counting sort for whole seconds over a span within maxBuckets', () => {
    const times = Float64Array.from([5000, 1000, 5000, -3000, 1000]);
    expect(sortPath(times, times.length)).toBe('counting');
    expect(sortPath(times, times.length, 9)).toBe('counting'); // a span of 8 s: 9 buckets
    expect(sortPath(times, times.length, 8, 0)).toBe('radix'); // one bucket short
    expect(sortPath(longSpan(20_000), 20_000, 400 * 86_400)).toBe('counting');
    expect(sortPath(new Float64Array(0), 0)).toBe('counting');
  });

  it('sorts whole milliseconds by millisecond: counting over short spans, radix (two or three passes) over long ones', () => {
    const ms = Float64Array.from([5500, 1000, 5500, 1001, -3000, 1000]);
    expect(sortPath(ms, ms.length)).toBe('counting');
    expect(Array.from(sortByTime(ms, ms.length))).toEqual([4, 1, 5, 3, 0, 2]);
    // 400 days in milliseconds: about 2^35 units, three radix passes.
    const millis = longSpan(20_000);
    millis[123] = (millis[123] as number) + 1;
    expect(sortPath(millis, 20_000)).toBe('radix');
    expect(Array.from(sortByTime(millis, 20_000))).toEqual(reference(millis, 20_000));
    // A day in milliseconds: below 2^32 units, two passes.
    const day = Float64Array.from({ length: 20_000 }, (_, i) => 1.4e12 + ((i * 7_919) % 86_400_000));
    expect(sortPath(day, day.length)).toBe('radix');
    expect(Array.from(sortByTime(day, day.length))).toEqual(reference(day, day.length));
  });

  it('takes the comparison sort for times not whole milliseconds apart, too few requests, or a span of 2^48 units or more', () => {
    // Not whole milliseconds apart, whatever the span.
    expect(sortPath(Float64Array.from([5500, 1000, 1000.25]), 3)).toBe('comparison');
    const fractional = longSpan(20_000);
    fractional[123] = (fractional[123] as number) + 0.5;
    expect(sortPath(fractional, 20_000)).toBe('comparison');
    // Too few requests for the radix sort.
    expect(sortPath(longSpan(RADIX_MIN_COUNT - 1), RADIX_MIN_COUNT - 1)).toBe('comparison');
    expect(sortPath(longSpan(20_000), 20_000, 0, 20_001)).toBe('comparison');
    // A span of 2^48 units does not fit the radix sort's keys; 2^32 seconds does (three passes).
    const tooWide = Float64Array.from([0, 2 ** 48 + 1, 5001]);
    expect(sortPath(tooWide, 3, 1 << 16, 3)).toBe('comparison');
    expect(Array.from(sortByTime(tooWide, 3, 1 << 16, 3))).toEqual([0, 2, 1]);
    const wide = Float64Array.from([0, 2 ** 32 * 1000, 5000]);
    expect(sortPath(wide, 3, 1 << 16, 3)).toBe('radix');
    expect(Array.from(sortByTime(wide, 3, 1 << 16, 3))).toEqual([0, 2, 1]);
  });
});
