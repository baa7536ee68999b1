/**
 * Time as the built-in strategies read it: on a grid of 2^-10 ms, and only as differences.
 *
 * **Why a grid.** A clock reading is a double in milliseconds: an epoch time (1.7 × 10^12), a
 * `performance.now()` of a process up for years, or a fraction such as `0.1`, which is not a
 * binary fraction. The difference of two arbitrary doubles is not exact, and the rate
 * strategies multiply time by the threshold. Each strategy therefore first rounds the reading to
 * the nearest multiple of {@link TICK_MS} (2^-10 ms, 0.977 µs; ties upwards). On that grid:
 * - the difference of two readings is exact whenever it is below 2^43 ms (278 years): both are
 *   multiples of 2^-10 and so is the difference, which then fits in 53 bits — whatever the
 *   readings' own size (a reading above 2^43 ms is already a multiple of a coarser power of two);
 * - a difference times 1024 is a whole number of ticks, so `elapsed × threshold` is an exact
 *   integer while it stays below 2^53 (the rate strategies bound `threshold × windowMs` for that).
 *
 * So the strategies never add a window to a reading (which can round at epoch scale): they
 * compare `now − t` with the window. Results then agree with exact rational arithmetic on the
 * grid readings.
 *
 * **Waiting `retryAfter` is enough.** {@link retryAfterSeconds} converts a wait on the grid into
 * the seconds a caller is told, checked in the caller's own floating point: a caller who read
 * `t` and waits until `t + retryAfter × 1000` is then allowed.
 *
 * @module
 */

/** Grid points per millisecond: strategies read time to 1/1024 ms. */
export const TICKS_PER_MS = 1024;

/** The grid's step, in milliseconds: 2^-10 (0.9765625 µs). */
export const TICK_MS = 1 / TICKS_PER_MS;

/**
 * The reading `ms` rounded to the grid (the nearest multiple of 2^-10 ms, ties upwards). Every
 * step is exact: `× 1024` and `/ 1024` are powers of two, and `Math.round` is exact.
 */
export function onGrid(ms: number): number {
  return Math.round(ms * TICKS_PER_MS) / TICKS_PER_MS;
}

/**
 * The seconds to tell a refused caller: the wait from `reading` to the moment the request is
 * allowed (`now + waitMs` on the grid), rounded up to the microsecond — for readings beyond
 * ±2^40 ms then stepped up by units in the last place until it suffices — so that a caller who
 * read `reading` and waits that long, computing `reading + retryAfter × 1000` in its own
 * floating point, reads a time at or after that moment. Capped at `maxSeconds` (the
 * strategy's documented maximum) when waiting `maxSeconds` is enough too, as it is when
 * `waitMs <= maxSeconds × 1000` for readings within the limiter's ±2^47 ms.
 *
 * @param reading - the caller's clock reading, in ms (or the effective time, if the strategy
 *   took a reading that went back as a later one).
 * @param now - `reading` on the grid (or that effective time).
 * @param waitMs - the wait on the grid, from `now`: a positive multiple of 2^-10 ms.
 * @param maxSeconds - the documented maximum of `retryAfter`.
 * @returns a number of seconds `> 0`.
 */
export function retryAfterSeconds(reading: number, now: number, waitMs: number, maxSeconds: number): number {
  // Rounded up to the microsecond, from the reading (which may lie half a tick either side of now).
  let seconds = Math.ceil((waitMs - (reading - now)) * 1000) / 1e6;
  if (seconds > maxSeconds) {
    if (fits(reading, now, waitMs, maxSeconds)) return maxSeconds;
  } else if (reading < 2 ** 40 && reading > -(2 ** 40)) {
    // Below 2^40 ms the caller's addition and the conversions err by less than 2^-12 ms, far
    // within the half tick that `onGrid` rounds away: the rounded-up value fits as it is (the
    // loop below would not step). Skipping the check keeps a refusal cheap.
    return seconds;
  }
  // The caller's addition can land below the target by a rounding step of a large reading: step
  // up until it does not (at most a few steps; each moves the sum by one or two units in its
  // last place).
  const step = (Math.abs(reading) / 1000 + seconds) * Number.EPSILON;
  while (!fits(reading, now, waitMs, seconds)) seconds += step;
  return seconds;
}

/** Whether a caller at `reading` who waits `seconds` reads a time at least `waitMs` after `now`. */
function fits(reading: number, now: number, waitMs: number, seconds: number): boolean {
  return onGrid(reading + seconds * 1000) - now >= waitMs;
}

/**
 * The smallest whole number of ticks `m` with `m × rate >= need` (positive integers below
 * 2^53): the grid wait, in ticks, until a deficit of `need` units is repaid at `rate` units per
 * tick. Exact: the rounded quotient of two integers below 2^53 never crosses an integer the
 * exact one does not reach (that would take a dividend of 2^53 or more), so its ceiling is the
 * integer ceiling.
 */
export function ticksToRepay(need: number, rate: number): number {
  return Math.ceil(need / rate);
}
