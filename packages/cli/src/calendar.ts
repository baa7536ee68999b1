/**
 * Calendar arithmetic for the log parser's timestamps, on plain integers: the number of a month
 * from its three-letter English name ({@link monthNumber}), the days of a month
 * ({@link daysInMonth}) and the days from 1970-01-01 to a date ({@link daysFromCivil}), all in the
 * proleptic Gregorian calendar.
 *
 * @module
 */

/**
 * Months by their three-letter name packed into an integer (`b0 << 16 | b1 << 8 | b2`):
 * 1 to 12, or 0 for anything else.
 */
export function monthNumber(b0: number, b1: number, b2: number): number {
  switch ((b0 << 16) | (b1 << 8) | b2) {
    case 0x4a616e: return 1; // Jan
    case 0x466562: return 2; // Feb
    case 0x4d6172: return 3; // Mar
    case 0x417072: return 4; // Apr
    case 0x4d6179: return 5; // May
    case 0x4a756e: return 6; // Jun
    case 0x4a756c: return 7; // Jul
    case 0x417567: return 8; // Aug
    case 0x536570: return 9; // Sep
    case 0x4f6374: return 10; // Oct
    case 0x4e6f76: return 11; // Nov
    case 0x446563: return 12; // Dec
    default: return 0;
  }
}

/** Days in `month` (1–12) of `year` in the proleptic Gregorian calendar. */
export function daysInMonth(year: number, month: number): number {
  if (month === 2) {
    return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  }
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/**
 * Days from 1970-01-01 to the given date of the proleptic Gregorian calendar (negative before),
 * by the "days from civil" arithmetic: years are counted from March so that the leap day comes
 * last, in 400-year eras of 146097 days.
 *
 * @param year - any integer year (year 0 is 1 BC).
 * @param month - 1 to 12.
 * @param day - 1 to 31.
 */
export function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400; // 0 to 399
  const dayOfYear = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const dayOfEra =
    yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146097 + dayOfEra - 719468;
}
