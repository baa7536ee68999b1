/**
 * Every error ratewarden throws or rejects with, the one registry of their codes
 * ({@link ErrorCode}), and the helpers that build their messages.
 *
 * Every error is a fresh instance (never a shared one): a `TypeError` for a value of the wrong
 * type, a `RangeError` for a value of the right type outside its valid range, an `Error` for a
 * failing store, each with a stable `code` and, for bad input, a message in the form
 * ``Expected `threshold` to be a positive safe integer, got `0` (number)``. As Node.js does for
 * its own errors, `name` is the built-in class's (`"TypeError"`, `"RangeError"`, `"Error"`) and
 * `code` tells them apart.
 *
 * Why one file of about 460 lines (most of it TSDoc): one registry of codes, its error classes
 * and the message helpers must agree on every code and message form, and a reader looking for
 * what ratewarden can throw finds all of it here; nothing in it depends on anything else.
 *
 * @module
 */
/** Stable error codes carried by the `code` property of every error ratewarden throws. */
export const ErrorCode = {
  /** A value had the wrong type (a {@link RateWardenTypeError}). */
  InvalidType: 'ERR_RATEWARDEN_INVALID_TYPE',
  /**
   * An options object had a key that is not one of its options, such as a misspelling
   * (`maxkeys` for `maxKeys`): a {@link RateWardenTypeError} naming the key, the options object
   * and, when one is close, the option meant.
   */
  UnknownOption: 'ERR_RATEWARDEN_UNKNOWN_OPTION',
  /** A value had the right type but was outside its valid range (a {@link RateWardenRangeError}). */
  OutOfRange: 'ERR_RATEWARDEN_OUT_OF_RANGE',
  /**
   * A synchronous method (`allowRequestSync`, `peekSync`) was called on a limiter whose strategy
   * is a store, which decides asynchronously (a {@link RateWardenTypeError}).
   */
  NotSynchronous: 'ERR_RATEWARDEN_NOT_SYNCHRONOUS',
  /** `waitForSlot` would wait longer than `maxWaitSeconds`, or forever (a {@link RateWardenWaitError}). */
  WaitTooLong: 'ERR_RATEWARDEN_WAIT_TOO_LONG',
  /** Redis did not answer within `timeoutSeconds` (a {@link RateWardenRedisTimeoutError}). */
  RedisTimeout: 'ERR_RATEWARDEN_REDIS_TIMEOUT',
  /** Redis answered with something the script never returns (a {@link RateWardenRedisReplyError}). */
  RedisReply: 'ERR_RATEWARDEN_REDIS_REPLY',
  /**
   * Redis refused a command of one decision in a script (a key of the wrong type) while the
   * other decisions of the same call went on (a {@link RateWardenRedisCommandError}).
   */
  RedisCommand: 'ERR_RATEWARDEN_REDIS_COMMAND',
  /**
   * The Redis client was known to be disconnected (node-redis reconnecting after it had been
   * ready; ioredis `reconnecting`, `close` or `end`, or `connecting` again after a lost or failed
   * connection attempt), so the decision was neither queued nor sent
   * and failed at once, through the strategy's failure policy (a
   * {@link RateWardenRedisUnavailableError}).
   */
  RedisUnavailable: 'ERR_RATEWARDEN_REDIS_UNAVAILABLE',
  /**
   * A node-redis or ioredis client (or cluster) without an `error` listener was handed to a Redis
   * strategy: the code of the process warning (`RateWardenWarning`, once per client) that says
   * what happens without one (node-redis: the first connection error crashes the process).
   */
  NoErrorListener: 'ERR_RATEWARDEN_NO_ERROR_LISTENER',
  /**
   * A middleware's refund after the response (`skipSuccessfulRequests` / `skipFailedRequests`)
   * failed, or its `requestWasSuccessful` threw, and no `onError` took the error: the code of the
   * process warning (`RateWardenWarning`) it is reported as; the request stays counted.
   */
  RefundFailed: 'ERR_RATEWARDEN_REFUND_FAILED',
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

/**
 * The rejection of `RateLimiter.waitForSlot` when the wait would exceed `maxWaitSeconds`, or
 * when the request can never be allowed (its cost exceeds the limit: `retryAfter` is
 * `Infinity`). A `RangeError` with the stable code {@link ErrorCode.WaitTooLong}, and a message
 * giving the wait that exceeds the bound (from the call, including the time already waited
 * behind earlier waiters), what remains of it, and the limit.
 */
export class RateWardenWaitError extends RangeError {
  /** The stable error code: always {@link ErrorCode.WaitTooLong}. */
  readonly code: typeof ErrorCode.WaitTooLong = ErrorCode.WaitTooLong;
  /**
   * The wait still needed from the moment of the rejection, in seconds: exact for the first
   * waiter of a key, a lower bound for one queued behind others (it cannot be served before
   * them); `Infinity` when never. For a waiter that had already waited (behind earlier waiters,
   * or for an earlier retry), the wait that exceeds `maxWaitSeconds` is longer: counted from
   * the call, it adds what was waited already. The message gives both.
   */
  readonly retryAfter: number;
  /** The `maxWaitSeconds` that was exceeded (`Infinity` when not set). */
  readonly maxWaitSeconds: number;
  /** The threshold that applied: requests (cost units) per window. */
  readonly limit: number;
  /** The window of the quota that applied, in seconds. */
  readonly windowSeconds: number;
  /** The cost of the request. */
  readonly cost: number;

  /**
   * @param message - the message.
   * @param retryAfter - the wait needed, in seconds.
   * @param maxWaitSeconds - the bound it exceeds.
   * @param quota - the quota that applied: its `threshold` and `windowSeconds`.
   * @param cost - the request's cost.
   */
  constructor(
    message: string,
    retryAfter: number,
    maxWaitSeconds: number,
    quota: { readonly threshold: number; readonly windowSeconds: number },
    cost: number,
  ) {
    super(message);
    this.name = 'RangeError';
    this.retryAfter = retryAfter;
    this.maxWaitSeconds = maxWaitSeconds;
    this.limit = quota.threshold;
    this.windowSeconds = quota.windowSeconds;
    this.cost = cost;
  }
}

/**
 * The error of a Redis call that took longer than `timeoutSeconds` (code
 * {@link ErrorCode.RedisTimeout}). Exported by `ratewarden/redis`.
 */
export class RateWardenRedisTimeoutError extends Error {
  /** The stable error code: always {@link ErrorCode.RedisTimeout}. */
  readonly code: typeof ErrorCode.RedisTimeout = ErrorCode.RedisTimeout;
  /** The timeout that passed, in seconds. */
  readonly timeoutSeconds: number;

  /** @param timeoutSeconds - the timeout that passed, in seconds. */
  constructor(timeoutSeconds: number) {
    super(`Redis did not answer within ${timeoutSeconds} s (timeoutSeconds)`);
    this.name = 'Error';
    this.timeoutSeconds = timeoutSeconds;
  }
}

/**
 * The error of a script reply that is not what the script returns: a misbehaving adapter or a
 * tampered key (code {@link ErrorCode.RedisReply}). Exported by `ratewarden/redis`.
 */
export class RateWardenRedisReplyError extends Error {
  /** The stable error code: always {@link ErrorCode.RedisReply}. */
  readonly code: typeof ErrorCode.RedisReply = ErrorCode.RedisReply;

  /** @param reply - a short, safe rendering of the reply received. */
  constructor(reply: string) {
    super(`Unexpected reply from the ratewarden script: ${reply}`);
    this.name = 'Error';
  }
}

/**
 * The error of one decision whose command Redis refused inside the script, such as `WRONGTYPE`
 * when the key holds another type (code {@link ErrorCode.RedisCommand}): that decision wrote
 * nothing, and the other decisions sent in the same call were decided as if it were absent.
 * Its `message` is Redis's error message. Exported by `ratewarden/redis`.
 */
export class RateWardenRedisCommandError extends Error {
  /** The stable error code: always {@link ErrorCode.RedisCommand}. */
  readonly code: typeof ErrorCode.RedisCommand = ErrorCode.RedisCommand;

  /** @param message - Redis's error message, such as `"WRONGTYPE Operation against a key holding the wrong kind of value"`. */
  constructor(message: string) {
    super(message);
    this.name = 'Error';
  }
}

/**
 * The error of a decision that was not sent because the Redis client was known to be
 * disconnected when it was made (code {@link ErrorCode.RedisUnavailable}): a node-redis client
 * reconnecting after it had been ready, an ioredis client or cluster whose `status` is
 * `"reconnecting"`, `"close"` or `"end"`, or `"connecting"` again after a lost or failed
 * connection attempt (its `retryAttempts` above 0; a new client's first `"connecting"` is not
 * failed), or a `RedisAdapter` whose `connected()` returned `false`. Rather than wait in the client's offline queue for `timeoutSeconds`, the decision
 * fails at once through the strategy's `onFailure` (it rejects with this error under
 * `"throw"`); nothing of it reached Redis. Exported by `ratewarden/redis`.
 */
export class RateWardenRedisUnavailableError extends Error {
  /** The stable error code: always {@link ErrorCode.RedisUnavailable}. */
  readonly code: typeof ErrorCode.RedisUnavailable = ErrorCode.RedisUnavailable;

  constructor() {
    super('Redis is unavailable: the client is disconnected (reconnecting or closed), so the decision was not sent');
    this.name = 'Error';
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

/** Builds the message ``Expected `name` to be expected, got `value` (type)``. */
function message(name: string, expected: string, value: unknown): string {
  return `Expected \`${name}\` to be ${expected}, got ${describeValue(value)}`;
}

/** @internal The {@link RateWardenTypeError} of option `name`, which should be `expected`. */
export function typeError(name: string, expected: string, value: unknown): RateWardenTypeError {
  return new RateWardenTypeError(message(name, expected, value));
}

/** @internal The {@link RateWardenRangeError} of option `name`, which should be `expected`. */
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

/**
 * @internal Checks that `value` is a non-null object: a caller from JavaScript may pass anything,
 * whatever the declared type.
 * @throws {RateWardenTypeError} naming `name`, which should be `expected`.
 */
export function checkObject(name: string, value: unknown, expected: string): asserts value is object {
  if (value === null || typeof value !== 'object') throw typeError(name, expected, value);
}

/** @internal Whether `value` is a non-null object. */
export function isObject(value: unknown): value is object {
  return value !== null && typeof value === 'object';
}

/**
 * @internal Checks an optional boolean option; `fallback` when undefined.
 * @throws {RateWardenTypeError} naming `name` when it is neither.
 */
export function optionalBoolean(name: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw typeError(name, 'a boolean or undefined', value);
  return value;
}

/**
 * @internal Checks a label option (a limiter's `name`, a quota's `tier`): a non-empty string or
 * undefined.
 * @throws {RateWardenTypeError} naming the option when it is neither a string nor undefined.
 * @throws {RateWardenRangeError} naming the option when it is the empty string.
 */
export function optionalLabel(name: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw typeError(name, 'a non-empty string or undefined', value);
  if (value === '') throw rangeError(name, 'a non-empty string or undefined', value);
  return value;
}

/** @internal Checks that an option is a function or undefined. */
export function optionalFunction<F>(name: string, value: F | undefined): F | undefined {
  if (value !== undefined && typeof value !== 'function') throw typeError(name, 'a function or undefined', value);
  return value;
}

/**
 * @internal The error of a synchronous method (`allowRequestSync`, `peekSync`, `blockSync`) called on a
 * limiter (or group) deciding with a store.
 */
export function notSynchronous(name: string, method: string): RateWardenTypeError {
  return new RateWardenTypeError(
    `Expected an in-memory strategy for \`${method}\`, got the store \`${name}\` (a store decides ` +
      `asynchronously): use \`${method.endsWith('Sync') ? method.slice(0, -4) : 'allowRequest'}\` instead`,
    ErrorCode.NotSynchronous,
  );
}

/**
 * @internal The known keys of one options object and how messages name the object, built once
 * per object type by {@link knownOptions}.
 */
export interface KnownOptions {
  /** How messages name the object: `"RateLimiter options"`. */
  readonly what: string;
  /** The known keys, in declaration order (listed by messages). */
  readonly keys: readonly string[];
  /** The same keys, for lookups. */
  readonly set: ReadonlySet<string>;
}

/**
 * @internal The {@link KnownOptions} of an options object. Pass the keys as an object literal
 * checked against the options' interface, so that the list cannot drift from the type:
 * `knownOptions('RateLimiter options', { threshold: true, ... } satisfies Record<keyof RateLimiterOptions, true>)`
 * fails to compile when a key is missing or extra.
 */
export function knownOptions(what: string, keys: Readonly<Record<string, true>>): KnownOptions {
  const list = Object.freeze(Object.keys(keys));
  return Object.freeze({ what, keys: list, set: new Set(list) });
}

/**
 * @internal Checks that every own enumerable string key of `options` is a known option.
 *
 * What is checked: own enumerable string-keyed properties, whatever their value (an unknown key
 * set to `undefined` is an error too: `{ maxkeys: config.maxKeys }` is a misspelling however
 * `config` is filled). What is not: symbol keys (tags that frameworks attach), non-enumerable
 * properties, and inherited ones (an enumerable property added to `Object.prototype` by some
 * other code must not make every options object invalid). Reads no value and calls no getter.
 *
 * Costs one `for…in` over the object's keys: nothing when the object has only known keys but a
 * set lookup per key.
 *
 * @param what - how the message names the object; default `known.what`.
 * @throws {RateWardenTypeError} with code {@link ErrorCode.UnknownOption} naming the first
 *   unknown key, the object and, when one is close, the option meant.
 */
export function checkKnownKeys(options: object, known: KnownOptions, what: string = known.what): void {
  for (const key in options) {
    if (!known.set.has(key) && Object.hasOwn(options, key)) throw unknownOption(key, known, what);
  }
}

/** The error of an unknown key: ``Unknown option `maxkeys` in RateLimiter options: did you mean `maxKeys`?``. */
function unknownOption(key: string, known: KnownOptions, what: string): RateWardenTypeError {
  const meant = closestOption(key, known.keys);
  const hint =
    meant === undefined
      ? `expected one of ${known.keys.map((k) => `\`${k}\``).join(', ')}`
      : `did you mean \`${meant}\`?`;
  return new RateWardenTypeError(`Unknown option ${quoteKey(key)} in ${what}: ${hint}`, ErrorCode.UnknownOption);
}

/**
 * @internal A key as messages show it: `` `maxkeys` `` for printable ASCII (without backticks,
 * at most 60 characters); otherwise as an escaped, quoted string, shortened, so that a message
 * never carries control characters to a log or a terminal.
 */
export function quoteKey(key: string): string {
  if (key.length <= 60 && /^[\x20-\x5f\x61-\x7e]+$/.test(key)) return `\`${key}\``;
  const shown = JSON.stringify(key.length > 60 ? `${key.slice(0, 57)}...` : key).replace(
    /[\u007f-\u009f\u00ad\u2028\u2029\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]|[\ud800-\udfff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return `\`${shown}\``;
}

/** The unit suffixes a key may carry in another library's spelling: `windowMs` for `windowSeconds`. */
const UNIT_SUFFIX = /(?:ms|millis|milliseconds|s|sec|secs|seconds)$/;

/**
 * The known option `key` most likely stands for, if one is close: equal ignoring case, equal
 * ignoring case and a unit suffix (`timeoutMs`, `timeout` for `timeoutSeconds`), or within a
 * Damerau–Levenshtein distance (optimal string alignment, ignoring case) of 1 for keys of up
 * to 5 characters and 2 for longer ones. The closest wins; ties go to the first declared.
 */
function closestOption(key: string, keys: readonly string[]): string | undefined {
  if (key.length > 100) return undefined;
  const lower = key.toLowerCase();
  const base = lower.replace(UNIT_SUFFIX, '');
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of keys) {
    const c = candidate.toLowerCase();
    let distance: number;
    if (c === lower) distance = 0;
    else if (base.length >= 3 && c.replace(UNIT_SUFFIX, '') === base) distance = 0.5;
    else {
      const bound = Math.max(key.length, candidate.length) <= 5 ? 1 : 2;
      distance = editDistance(lower, c, bound);
      if (distance > bound) continue;
    }
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/**
 * The optimal-string-alignment distance between `a` and `b` (insertions, deletions,
 * substitutions and transpositions of adjacent characters), or `bound + 1` as soon as it must
 * exceed `bound`.
 */
function editDistance(a: string, b: string, bound: number): number {
  if (Math.abs(a.length - b.length) > bound) return bound + 1;
  let before: number[] = [];
  let previous: number[] = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const substitution = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + substitution);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, (before[j - 2] ?? 0) + 1);
      current.push(d);
      if (d < rowMin) rowMin = d;
    }
    if (rowMin > bound) return bound + 1;
    before = previous;
    previous = current;
  }
  return previous[b.length] ?? 0;
}
