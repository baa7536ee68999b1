/**
 * Time: the {@link Clock} type, the default clock, and the limiter's reading of its clock
 * ({@link MonotonicClock}), which checks every reading and never lets time run backwards.
 *
 * Only the limiter reads a clock, once per decision, inside the key's critical section; the
 * strategies are given the time (`nowMs`) as an argument, as Go's `x/time/rate` takes it in
 * `AllowN(t, n)`.
 *
 * @module
 */
import { RateWardenRangeError, RateWardenTypeError, describeValue } from './errors.js';

/**
 * A monotonic clock: returns the current time in **milliseconds**, as a finite number that does
 * not go backwards in normal operation (its origin is arbitrary). Decisions only ever use
 * differences between two readings.
 */
export type Clock = () => number;

/**
 * The default {@link Clock}: `performance.now()`, looked up on the global object **at every
 * call**, never captured at import. Fake timers installed after ratewarden was imported (such as
 * `@sinonjs/fake-timers` or `vi.useFakeTimers({ toFake: ['performance'] })`) therefore take
 * effect.
 */
export const performanceClock: Clock = () => performance.now();

/**
 * @internal A limiter's reading of its clock: each reading is checked (a finite number, fine
 * enough for the window), and a reading earlier than the latest one used counts as that latest
 * one, so that no key (and no sweep) ever sees time go back.
 */
export class MonotonicClock {
  readonly #clock: Clock;
  /** The latest reading used, in milliseconds. */
  #latest = -Infinity;

  /** @param clock - the clock to read (checked to be a function by the caller). */
  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /**
   * Reads the clock for a decision under a window of `windowMs` milliseconds.
   *
   * @returns the reading, or the latest reading used if this one is earlier.
   * @throws {RateWardenTypeError} when the clock returns a non-number.
   * @throws {RateWardenRangeError} when it returns NaN or ±Infinity, or a time so large that
   *   adding a 64th of the window does not change it (its floating-point resolution is coarser
   *   than 1/32 of the window: 2^52 ms for a 1 s window, 2^45 ms still fine for 1 ms). Nothing is
   *   changed then.
   */
  read(windowMs: number): number {
    const reading = this.#clock();
    if (typeof reading !== 'number') throw badClock(reading);
    let now = this.#latest;
    if (reading > now) now = reading;
    else if (reading !== reading || reading === -Infinity) throw badClock(reading);
    // Finite, and fine enough for the window: a 64th of it still moves the reading (false for
    // Infinity), so that the reading's rounding step is at most 1/32 of the window.
    if (!(now + windowMs / 64 > now)) throw coarseClock(now, windowMs);
    this.#latest = now;
    return now;
  }
}

/** The error of a clock reading that is not a finite number (out of line: keeps `read` small). */
function badClock(reading: unknown): Error {
  return typeof reading !== 'number'
    ? new RateWardenTypeError(`Expected \`clock\` to return a number of milliseconds, got ${describeValue(reading)}`)
    : new RateWardenRangeError(`Expected \`clock\` to return a finite number of milliseconds, got ${describeValue(reading)}`);
}

/** The error of a clock reading so large that adding the window does not change it. */
function coarseClock(reading: number, windowMs: number): Error {
  return new RateWardenRangeError(
    'Expected `clock` to return a finite number of milliseconds whose floating-point ' +
      `resolution is finer than 1/32 of the window (${windowMs} ms), got ${describeValue(reading)}`,
  );
}
