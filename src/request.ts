/**
 * Request parsing: what a caller passes to a decision (`user`, `{ cost }`, the options of
 * `waitForSlot`), checked and turned into plain values, with the library's messages. Nothing
 * here reads a clock or touches state, so a call with bad input changes nothing.
 *
 * @module
 */
import { checkKnownKeys, checkObject, checkPositiveInteger, isObject, knownOptions, optionalBoolean, rangeError, typeError } from './errors.js';

/**
 * A client of the limited resource. Only `id` is used: it is the key the limit applies to. Not an
 * options object: other keys are allowed (a user record may be passed as it is).
 */
export interface User {
  /** The key: a non-empty string, compared exactly (case and unicode as given). */
  readonly id: string;
  /** A display name; not used for decisions. */
  readonly name?: string;
}

/**
 * Options of one decision. Any other own enumerable string key is rejected (a
 * `RateWardenTypeError`, code `ERR_RATEWARDEN_UNKNOWN_OPTION`), so a misspelled `cost` is never
 * ignored.
 */
export interface RequestOptions {
  /**
   * How many requests this one counts as: a positive safe integer. A cost greater than the
   * quota's `threshold` can never be allowed: the result then has `retryAfter: Infinity`.
   * @default 1
   */
  readonly cost?: number;
  /**
   * A shadow decision, for rolling out a limit on live traffic: the request is decided and
   * recorded exactly as without it (the same result, the same state afterwards), but a
   * rejection is also counted in `stats().shadowRejected` and `decision` listeners are told
   * `info.shadow === true`. The caller then lets the request proceed anyway (the middlewares'
   * `mode: 'shadow'` does); the limiter itself refuses nothing either way. `peek` counts
   * nothing, so the flag changes nothing there (it is checked all the same).
   * A value other than a boolean or `undefined` is a `RateWardenTypeError` naming `shadow`
   * (nothing decided, nothing recorded).
   * @default false
   */
  readonly shadow?: boolean;
}

/**
 * Options of `RateLimiter.waitForSlot`. Any other own enumerable string key is rejected (a
 * `RateWardenTypeError`, code `ERR_RATEWARDEN_UNKNOWN_OPTION`).
 */
export interface WaitOptions {
  /**
   * Cancels the wait: on `abort` the promise rejects with `signal.reason` (at once when the
   * signal is already aborted), the waiter leaves its queue, its timer and its listener are
   * removed, and nothing is recorded for it. `AbortSignal.timeout(ms)` bounds the wait in
   * time; `AbortSignal.any([...])` combines signals. One signal may be shared by any number of
   * waiters, of any limiters: it gets one `abort` listener in all (no
   * `MaxListenersExceededWarning`), removed when its last waiter settles however it settles;
   * aborting it rejects every one of them, none decided after the abort.
   * @default undefined — the wait can only end by a slot or an error
   */
  readonly signal?: AbortSignal;
  /**
   * The longest wait accepted, in **seconds**, counted from the call: a number of at least 0,
   * or `Infinity`. When the limiter can tell that the slot comes later than that, the promise
   * rejects at once with a `RateWardenWaitError` (code `ERR_RATEWARDEN_WAIT_TOO_LONG`)
   * rather than waiting in vain: told by `retryAfter`, never found out by waiting. `0` takes a
   * slot only if one is free now (and no earlier waiter is waiting for one).
   * @default Infinity
   */
  readonly maxWaitSeconds?: number;
  /**
   * How many requests this one counts as: a positive safe integer. A cost greater than the
   * quota's `threshold` can never be allowed: the promise rejects at once.
   * @default 1
   */
  readonly cost?: number;
}

/** The keys of {@link RequestOptions}: a decision rejects any other. */
const REQUEST_OPTIONS = knownOptions('request options', { cost: true, shadow: true } satisfies Record<keyof RequestOptions, true>);

/** The keys of {@link WaitOptions}: `waitForSlot` rejects any other. */
const WAIT_OPTIONS = knownOptions('waitForSlot options', {
  signal: true,
  maxWaitSeconds: true,
  cost: true,
} satisfies Record<keyof WaitOptions, true>);

/** @internal Checked options of `waitForSlot`. */
export interface ParsedWaitOptions {
  readonly cost: number;
  readonly signal: AbortSignal | undefined;
  readonly maxWaitSeconds: number;
}

/**
 * @internal The key of `user`: the string itself, or its `id`.
 * @throws {RateWardenTypeError} naming `user` or `user.id` for a value of the wrong type.
 * @throws {RateWardenRangeError} naming `user` or `user.id` for an empty string.
 */
export function keyOf(user: unknown): string {
  if (typeof user === 'string') {
    if (user.length === 0) throw rangeError('user', 'a non-empty string', user);
    return user;
  }
  checkObject('user', user, 'a non-empty string or an object with a string `id`');
  const id = (user as { id?: unknown }).id;
  if (typeof id !== 'string') throw typeError('user.id', 'a non-empty string', id);
  if (id.length === 0) throw rangeError('user.id', 'a non-empty string', id);
  return id;
}

/**
 * @internal The cost in {@link RequestOptions}: 1 when absent. The check of the keys is a
 * `for…in` over the object: nothing when `options` is absent.
 * @throws {RateWardenTypeError} naming `options` or `cost`, or an unknown key (code
 *   `ERR_RATEWARDEN_UNKNOWN_OPTION`); {@link RateWardenRangeError} naming `cost`.
 */
export function costOf(options: unknown): number {
  if (options === undefined) return 1;
  checkObject('options', options, 'an object or undefined');
  // The hot path: `checkKnownKeys` unrolled for its one key.
  for (const key in options) {
    if (key !== 'cost' && key !== 'shadow' && Object.hasOwn(options, key)) checkKnownKeys(options, REQUEST_OPTIONS);
  }
  return costIn(options);
}

/**
 * @internal The `shadow` flag of {@link RequestOptions} already checked by {@link costOf}:
 * `false` when absent.
 * @throws {RateWardenTypeError} naming `shadow` when it is neither a boolean nor `undefined`.
 */
export function shadowOf(options: object | undefined): boolean {
  if (options === undefined) return false;
  return optionalBoolean('shadow', (options as { shadow?: unknown }).shadow, false);
}

/** The `cost` of a checked options object: 1 when absent. */
function costIn(options: object): number {
  const cost = (options as { cost?: unknown }).cost;
  if (cost === undefined) return 1;
  return checkPositiveInteger('cost', cost);
}

const NO_WAIT_OPTIONS: ParsedWaitOptions = { cost: 1, signal: undefined, maxWaitSeconds: Infinity };

/**
 * @internal Checks the options of `waitForSlot`.
 * @throws {RateWardenTypeError} / {@link RateWardenRangeError} naming the option.
 */
export function waitOptionsOf(options: unknown): ParsedWaitOptions {
  if (options === undefined) return NO_WAIT_OPTIONS;
  checkObject('options', options, 'an object or undefined');
  checkKnownKeys(options, WAIT_OPTIONS);
  const cost = costIn(options);
  const o = options as { signal?: unknown; maxWaitSeconds?: unknown };
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
  if (!isObject(value)) return false;
  const s = value as { aborted?: unknown; addEventListener?: unknown; removeEventListener?: unknown };
  return typeof s.aborted === 'boolean' && typeof s.addEventListener === 'function' && typeof s.removeEventListener === 'function';
}
