/**
 * Waiting for a slot (`RateLimiter.waitForSlot`): its options, its error, and the per-key FIFO
 * queue of waiters.
 *
 * @module
 */
import { checkPositiveInteger, rangeError, typeError } from './errors.js';
import type { Limit, RateLimitResult } from './strategy.js';
import { MAX_TIMER_MS } from './timers.js';

/** Options of `RateLimiter.waitForSlot`. */
export interface WaitOptions {
  /**
   * Cancels the wait: on `abort` the promise rejects with `signal.reason` (at once when the
   * signal is already aborted), the waiter leaves its queue, its timer and its listener are
   * removed, and nothing is recorded for it. `AbortSignal.timeout(ms)` bounds the wait in
   * time; `AbortSignal.any([...])` combines signals.
   * @default undefined — the wait can only end by a slot or an error
   */
  readonly signal?: AbortSignal;
  /**
   * The longest wait accepted, in **seconds**, counted from the call: a number of at least 0,
   * or `Infinity`. When the limiter can tell that the slot comes later than that, the promise
   * rejects at once with a {@link RateWardenWaitError} (code `ERR_RATEWARDEN_WAIT_TOO_LONG`)
   * rather than waiting in vain: told by `retryAfter`, never found out by waiting. `0` takes a
   * slot only if one is free now (and no earlier waiter is waiting for one).
   * @default Infinity
   */
  readonly maxWaitSeconds?: number;
  /**
   * How many requests this one counts as: a positive safe integer. A cost greater than the
   * limit's `threshold` can never be allowed: the promise rejects at once.
   * @default 1
   */
  readonly cost?: number;
}

/** The code of {@link RateWardenWaitError}. */
export const WAIT_TOO_LONG = 'ERR_RATEWARDEN_WAIT_TOO_LONG';

/**
 * The rejection of `waitForSlot` when the wait would exceed `maxWaitSeconds`, or when the
 * request can never be allowed (its cost exceeds the limit: `retryAfter` is `Infinity`). A
 * `RangeError` with the stable code `ERR_RATEWARDEN_WAIT_TOO_LONG`, and a message giving the
 * wait needed and the limit.
 */
export class RateWardenWaitError extends RangeError {
  /** The stable error code. */
  readonly code: typeof WAIT_TOO_LONG = WAIT_TOO_LONG;
  /**
   * The wait needed, in seconds: exact for the first waiter of a key, a lower bound for one
   * queued behind others (it cannot be served before them); `Infinity` when never.
   */
  readonly retryAfter: number;
  /** The `maxWaitSeconds` that was exceeded (`Infinity` when not set). */
  readonly maxWaitSeconds: number;
  /** The threshold that applied: requests (cost units) per window. */
  readonly limit: number;
  /** The window of the limit that applied, in seconds. */
  readonly windowSeconds: number;
  /** The cost of the request. */
  readonly cost: number;

  /**
   * @param message - the message.
   * @param retryAfter - the wait needed, in seconds.
   * @param maxWaitSeconds - the bound it exceeds.
   * @param limit - the limit that applied.
   * @param cost - the request's cost.
   */
  constructor(message: string, retryAfter: number, maxWaitSeconds: number, limit: Limit, cost: number) {
    super(message);
    this.name = 'RangeError';
    this.retryAfter = retryAfter;
    this.maxWaitSeconds = maxWaitSeconds;
    this.limit = limit.threshold;
    this.windowSeconds = limit.windowSeconds;
    this.cost = cost;
  }
}

/** Seconds for a message: up to the microsecond, without float noise. */
function seconds(value: number): string {
  return `${Math.round(value * 1e6) / 1e6} s`;
}

function limitText(limit: Limit): string {
  return `the limit is ${limit.threshold} request${limit.threshold === 1 ? '' : 's'} per ${seconds(limit.windowSeconds)}`;
}

/** @internal The error of a wait that would take longer than `maxWaitSeconds`. */
export function waitTooLong(
  retryAfter: number,
  maxWaitSeconds: number,
  limit: Limit,
  cost: number,
  ahead: number,
): RateWardenWaitError {
  const wait = ahead > 0 ? `at least ${seconds(retryAfter)} (behind ${ahead} earlier waiter${ahead === 1 ? '' : 's'} for the key)` : seconds(retryAfter);
  return new RateWardenWaitError(
    `Expected a slot within \`maxWaitSeconds\` (${seconds(maxWaitSeconds)}), but waiting for one would take ${wait}: ${limitText(limit)}`,
    retryAfter,
    maxWaitSeconds,
    limit,
    cost,
  );
}

/** @internal The error of a request whose cost exceeds the limit: no wait would help. */
export function neverAllowed(maxWaitSeconds: number, limit: Limit, cost: number): RateWardenWaitError {
  return new RateWardenWaitError(
    `Expected a request the limit can allow, but one of cost ${cost} never can (${limitText(limit)}): waiting would not help`,
    Infinity,
    maxWaitSeconds,
    limit,
    cost,
  );
}

/** @internal Validated options of `waitForSlot`. */
export interface ParsedWaitOptions {
  readonly cost: number;
  readonly signal: AbortSignal | undefined;
  readonly maxWaitSeconds: number;
}

const NO_OPTIONS: ParsedWaitOptions = { cost: 1, signal: undefined, maxWaitSeconds: Infinity };

/**
 * @internal Checks the options of `waitForSlot`.
 * @throws `RateWardenTypeError` / `RateWardenRangeError` naming the option.
 */
export function waitOptions(options: unknown): ParsedWaitOptions {
  if (options === undefined) return NO_OPTIONS;
  if (options === null || typeof options !== 'object') {
    throw typeError('options', 'an object or undefined', options);
  }
  const o = options as { cost?: unknown; signal?: unknown; maxWaitSeconds?: unknown };
  const cost = o.cost === undefined ? 1 : checkPositiveInteger('cost', o.cost);
  const signal = o.signal;
  if (signal !== undefined && !isSignal(signal)) {
    throw typeError('signal', 'an AbortSignal or undefined', signal);
  }
  let maxWaitSeconds = Infinity;
  const max = o.maxWaitSeconds;
  if (max !== undefined) {
    if (typeof max !== 'number') {
      throw typeError('maxWaitSeconds', 'a number of seconds, at least 0 (Infinity for no bound)', max);
    }
    if (!(max >= 0)) throw rangeError('maxWaitSeconds', 'a number of seconds, at least 0 (Infinity for no bound)', max);
    maxWaitSeconds = max;
  }
  return { cost, signal, maxWaitSeconds };
}

/** An `AbortSignal`, recognised by its shape (so a signal of another realm passes too). */
function isSignal(value: unknown): value is AbortSignal {
  if (value === null || typeof value !== 'object') return false;
  const s = value as { aborted?: unknown; addEventListener?: unknown; removeEventListener?: unknown };
  return typeof s.aborted === 'boolean' && typeof s.addEventListener === 'function' && typeof s.removeEventListener === 'function';
}


/**
 * @internal The timer delay, in whole milliseconds, for a wait of `retryAfter` seconds: never
 * shorter (a timer that fires early would find no slot yet and wait again), at least 1 ms.
 * `retryAfter` is rounded to the microsecond first, so that 0.03 s is 30 ms, not 31.
 */
export function delayMs(retryAfter: number): number {
  const ms = Math.ceil(Math.round(retryAfter * 1e6) / 1e3);
  return ms < 1 ? 1 : ms > MAX_TIMER_MS ? MAX_TIMER_MS : ms;
}

/** @internal One caller of `waitForSlot`, linked into its key's {@link WaitQueue}. */
export interface Waiter {
  readonly user: unknown;
  readonly cost: number;
  readonly limit: Limit;
  /** The latest limiter time (ms) at which it accepts a slot; `Infinity` for no bound. */
  readonly deadline: number;
  readonly maxWaitSeconds: number;
  readonly signal: AbortSignal | undefined;
  readonly resolve: (result: RateLimitResult) => void;
  readonly reject: (error: unknown) => void;
  onAbort: (() => void) | undefined;
  settled: boolean;
  prev: Waiter | undefined;
  next: Waiter | undefined;
}

/**
 * @internal The waiters of one key, first come first served: only the head tries for a slot;
 * when it gets one, gives up or is aborted, the next one tries at once.
 */
export interface WaitQueue {
  head: Waiter | undefined;
  tail: Waiter | undefined;
  /** The head's timer, while it waits for `retryAfter`. */
  timer: ReturnType<typeof setTimeout> | undefined;
  /** The limiter time (ms) at which the head tries next; `-Infinity` while it is trying. */
  retryAt: number;
  /** Whether the head's attempt is in flight (asynchronous strategies). */
  busy: boolean;
}

/** @internal Appends `waiter` to `queue`. */
export function enqueue(queue: WaitQueue, waiter: Waiter): void {
  waiter.prev = queue.tail;
  if (queue.tail === undefined) queue.head = waiter;
  else queue.tail.next = waiter;
  queue.tail = waiter;
}

/** @internal Takes `waiter` out of `queue`, wherever it is, in O(1). */
export function unlink(queue: WaitQueue, waiter: Waiter): void {
  const { prev, next } = waiter;
  if (prev === undefined) {
    if (queue.head === waiter) queue.head = next;
  } else {
    prev.next = next;
  }
  if (next === undefined) {
    if (queue.tail === waiter) queue.tail = prev;
  } else {
    next.prev = prev;
  }
  waiter.prev = undefined;
  waiter.next = undefined;
}
