/**
 * The default clock.
 *
 * @module
 */

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
