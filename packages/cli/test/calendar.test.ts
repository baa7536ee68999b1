// The calendar arithmetic of the log parser (src/calendar.ts).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { daysFromCivil } from '../src/calendar.js';

describe('parseLogLine', () => {
  it('daysFromCivil agrees with Date.UTC, before and after 1970', () => {
    expect(daysFromCivil(1970, 1, 1)).toBe(0);
    expect(daysFromCivil(1969, 12, 31)).toBe(-1);
    expect(daysFromCivil(2000, 3, 1)).toBe(Date.UTC(2000, 2, 1) / 86_400_000);
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 9999 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 28 }),
        (year, month, day) => {
          const utc = new Date(0);
          utc.setUTCFullYear(year, month - 1, day);
          return daysFromCivil(year, month, day) * 86_400_000 === utc.getTime();
        },
      ),
    );
  });
});
