// The grid of 2^-10 ms and retryAfterSeconds (src/time.ts): waiting the seconds
// reported is enough, computed in the caller's floating point, for any reading.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TICK_MS, onGrid, retryAfterSeconds, ticksToRepay } from '../../src/time.js';

const reading = fc.oneof(
  fc.double({ min: -(2 ** 40), max: 2 ** 40, noNaN: true }),
  fc.double({ min: 2 ** 40, max: 2 ** 47, noNaN: true }),
  fc.integer({ min: -(2 ** 45), max: 2 ** 45 }),
);

describe('retryAfterSeconds: waiting the seconds reported is enough, and they are the least whole microseconds that are', () => {
  it('property: a caller at `reading` who waits the result reads a time at least the wait after `now` on the grid', () => {
    fc.assert(
      fc.property(reading, fc.integer({ min: 1, max: 2 ** 38 }), fc.boolean(), (t, ticks, capped) => {
        const now = onGrid(t);
        const waitMs = ticks * TICK_MS;
        const max = capped ? Math.max(TICK_MS, Math.floor(waitMs) / 1000) : 2 * waitMs;
        const seconds = retryAfterSeconds(t, now, waitMs, max);
        expect(seconds).toBeGreaterThan(0);
        expect(onGrid(t + seconds * 1000) - now).toBeGreaterThanOrEqual(waitMs);
        // Whole microseconds where no rounding step had to be added.
        if (Math.abs(t) < 2 ** 40 && seconds <= max) expect(Math.abs(seconds * 1e6 - Math.round(seconds * 1e6))).toBeLessThan(1e-3);
      }),
      { numRuns: 3_000 },
    );
  });

  it('is the wait rounded up to the microsecond, from the reading (not from its grid point)', () => {
    // 0.8 ms is 819.2 ticks: on the grid 0.7998046875 ms; a 999.2998046875 ms wait from there
    // is 999.2996 ms from the reading itself, 0.9993 s once rounded up.
    expect(retryAfterSeconds(0.8, onGrid(0.8), 1000.099609375 - onGrid(0.8), 1)).toBe(0.9993);
    expect(retryAfterSeconds(0, 0, 1, 1)).toBe(0.001);
    expect(retryAfterSeconds(0, 0, TICK_MS, 1)).toBe(0.000001);
  });

  it('caps at the maximum when waiting the maximum is enough too', () => {
    expect(retryAfterSeconds(0.3, onGrid(0.3), 1000, 1)).toBe(1);
  });
});

describe('ticksToRepay: the least whole number of ticks that repays a debt', () => {
  it('property: m × rate >= need > (m − 1) × rate', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 52 }), fc.integer({ min: 1, max: 2 ** 42 }), (need, rate) => {
        const m = ticksToRepay(need, rate);
        expect(m * rate).toBeGreaterThanOrEqual(need);
        expect((m - 1) * rate).toBeLessThan(need);
      }),
      { numRuns: 3_000 },
    );
  });
});
