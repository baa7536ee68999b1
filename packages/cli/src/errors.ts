/**
 * The CLI's errors for its own options and for the options of its internal parsers, in the
 * library's form (``Expected `name` to be …, got `value` (type)``) and with its public classes,
 * {@link RateWardenTypeError} and {@link RateWardenRangeError}, so that a command line's errors
 * read alike whether the library's validators (a quota's threshold and window, through
 * `createQuota`'s `names`) or the CLI's found them. The library's own helpers are internal to it.
 *
 * @module
 */

import { ErrorCode, RateWardenRangeError, RateWardenTypeError } from 'ratewarden';

/** A received value as messages show it: `` `"abc"` (string) ``, `` `3` (number) ``, `` `object` (object) ``. */
function shown(value: unknown): string {
  const type = value === null ? 'null' : typeof value;
  let text: string;
  if (typeof value === 'string') text = JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value);
  else if (type === 'object' || type === 'function') text = Array.isArray(value) ? 'array' : type;
  else if (typeof value === 'symbol') text = value.toString();
  else text = Object.is(value, -0) ? '-0' : String(value);
  return `\`${text}\` (${type})`;
}

/** The {@link RateWardenTypeError} of option `name`, which should be `expected`. */
export function typeError(name: string, expected: string, value: unknown): RateWardenTypeError {
  return new RateWardenTypeError(`Expected \`${name}\` to be ${expected}, got ${shown(value)}`);
}

/** The {@link RateWardenRangeError} of option `name`, which should be `expected`. */
export function rangeError(name: string, expected: string, value: unknown): RateWardenRangeError {
  return new RateWardenRangeError(`Expected \`${name}\` to be ${expected}, got ${shown(value)}`);
}

/**
 * Checks that `value` is a non-null object.
 * @throws {RateWardenTypeError} naming `name`, which should be `expected`.
 */
export function checkObject(name: string, value: unknown, expected: string): asserts value is object {
  if (value === null || typeof value !== 'object') throw typeError(name, expected, value);
}

/**
 * Checks that every own enumerable string key of `options` is one of `known`.
 * @throws {RateWardenTypeError} with code `ERR_RATEWARDEN_UNKNOWN_OPTION` naming the first other key.
 */
export function checkKnownKeys(options: object, known: readonly string[], what: string): void {
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) {
      const list = known.map((k) => `\`${k}\``).join(', ');
      throw new RateWardenTypeError(`Unknown option ${JSON.stringify(key)} in ${what}: expected one of ${list}`, ErrorCode.UnknownOption);
    }
  }
}
