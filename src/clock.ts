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
   * The latest reading used, in milliseconds (`-Infinity` before the first): the time of a
   * record that must come no earlier than every decision made so far, without reading the clock
   * again (a group's in-memory record, once its stores have recorded).
   */
  get latest(): number {
    return this.#latest;
  }

  /**
   * Reads the clock for a decision under a window of `windowMs` milliseconds.
   *
   * @returns the reading, or the latest reading used if this one is earlier.
   * @throws {RateWardenTypeError} when the clock returns a non-number.
   * @throws {RateWardenRangeError} when it returns NaN, ±Infinity, or a time beyond ±2^47 ms
   *   (about ±4,460 years): within that range every reading is a multiple of 2^-10 ms once on
   *   the strategies' grid, its floating-point resolution is at most 1/32 of any window, and
   *   the Redis script's times in ticks stay exact. Nothing is changed then.
   */
  read(windowMs: number): number {
    const reading = this.#clock();
    if (typeof reading !== 'number') throw badClock(reading);
    let now = this.#latest;
    if (reading > now) now = reading;
    else if (reading !== reading || reading === -Infinity) throw badClock(reading);
    // Finite and within ±2^47 ms (false for ±Infinity): see the @throws above.
    if (!(now < MAX_READING && now > -MAX_READING)) throw coarseClock(now, windowMs);
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

/** The largest clock reading, in magnitude: 2^47 ms (about 4,460 years). */
const MAX_READING = 2 ** 47;

/** The error of a clock reading beyond ±2^47 ms. */
function coarseClock(reading: number, windowMs: number): Error {
  return new RateWardenRangeError(
    'Expected `clock` to return a finite number of milliseconds from -2^47 to 2^47 (about ' +
      `±4,460 years; the window is ${windowMs} ms), got ${describeValue(reading)}`,
  );
}
