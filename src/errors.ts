/**
 * Errors thrown by ratewarden, and the helpers that build their messages.
 *
 * Every error is a fresh instance (never a shared one), a `TypeError` for a value of the wrong
 * type and a `RangeError` for a value of the right type outside its valid range, with a stable
 * `code` and a message in the form
 * ``Expected `threshold` to be a positive safe integer, got `0` (number)``.
 *
 * @module
 */

/** Stable error codes carried by the `code` property of every error ratewarden throws. */
export const ErrorCode = {
  /** A value had the wrong type (a `TypeError`). */
  InvalidType: 'ERR_RATEWARDEN_INVALID_TYPE',
  /** A value had the right type but was outside its valid range (a `RangeError`). */
  OutOfRange: 'ERR_RATEWARDEN_OUT_OF_RANGE',
  /** `allowRequestSync` was called with a strategy that is not synchronous (a `TypeError`). */
  NotSynchronous: 'ERR_RATEWARDEN_NOT_SYNCHRONOUS',
} as const;

/** One of the {@link ErrorCode} values. */
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** A `TypeError` with a stable {@link ErrorCode}. */
export class RateWardenTypeError extends TypeError {
  /** The stable error code. */
  readonly code: ErrorCode;

  /**
   * @param message - the message.
   * @param code - the stable code; default {@link ErrorCode.InvalidType}.
   */
  constructor(message: string, code: ErrorCode = ErrorCode.InvalidType) {
    super(message);
    this.name = 'TypeError';
    this.code = code;
  }
}

/** A `RangeError` with the stable code {@link ErrorCode.OutOfRange}. */
export class RateWardenRangeError extends RangeError {
  /** The stable error code: always {@link ErrorCode.OutOfRange}. */
  readonly code: typeof ErrorCode.OutOfRange = ErrorCode.OutOfRange;

  /** @param message - the message. */
  constructor(message: string) {
    super(message);
    this.name = 'RangeError';
  }
}

/** Renders a received value for an error message: `` `0` (number) ``, `` `"abc"` (string) ``. */
export function describeValue(value: unknown): string {
  let shown: string;
  if (typeof value === 'string') {
    shown = JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value);
  } else if (typeof value === 'bigint') {
    shown = `${value}n`;
  } else if (typeof value === 'function') {
    shown = 'function';
  } else if (value !== null && typeof value === 'object') {
    let array = false;
    try {
      array = Array.isArray(value);
    } catch {
      // A revoked Proxy: Array.isArray throws on it.
    }
    shown = array ? 'array' : 'object';
  } else if (typeof value === 'symbol') {
    shown = value.toString();
  } else if (Object.is(value, -0)) {
    shown = '-0';
  } else {
    shown = String(value);
  }
  const type = value === null ? 'null' : typeof value;
  return `\`${shown}\` (${type})`;
}

/** @internal Builds the message ``Expected `name` to be expected, got `value` (type)``. */
function message(name: string, expected: string, value: unknown): string {
  return `Expected \`${name}\` to be ${expected}, got ${describeValue(value)}`;
}

/** @internal */
export function typeError(name: string, expected: string, value: unknown): RateWardenTypeError {
  return new RateWardenTypeError(message(name, expected, value));
}

/** @internal */
export function rangeError(name: string, expected: string, value: unknown): RateWardenRangeError {
  return new RateWardenRangeError(message(name, expected, value));
}

/**
 * @internal Checks that `value` is a positive safe integer (1 to 2^53 - 1).
 * @throws {RateWardenTypeError} when `value` is not a number.
 * @throws {RateWardenRangeError} when it is a number but not a positive safe integer.
 */
export function checkPositiveInteger(name: string, value: unknown): number {
  if (typeof value !== 'number') throw typeError(name, 'a positive safe integer', value);
  if (!Number.isSafeInteger(value) || value < 1) {
    throw rangeError(name, 'a positive safe integer', value);
  }
  return value;
}
