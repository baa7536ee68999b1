/**
 * HTTP header fields for rate-limit results: the IETF `RateLimit` and `RateLimit-Policy` fields,
 * `Retry-After`, the legacy `X-RateLimit-*` trio, and an RFC 9457 problem body for refusals (429,
 * or 503 when a store failure refused the request).
 * Pure functions of a result: no I/O, no clock, no `node:` imports.
 *
 * @module
 */
import { checkKnownKeys, checkObject, knownOptions, optionalBoolean, rangeError, typeError } from './errors.js';
import { checkSeconds } from './quota.js';
import type { RateLimitResult } from './result.js';

/** A quota policy, as `RateLimit-Policy` advertises it. Any other own enumerable string key is rejected. */
export interface RateLimitPolicy {
  /**
   * The policy's name, sent as a Structured Field String: printable ASCII (0x20–0x7E).
   * @default `"default"` for one result; the group's limit names for a group
   */
  readonly name?: string;
  /**
   * The window in **seconds**, sent as the `w` parameter: as a quota's window, a finite number
   * of at least 0.001 (see `createQuota`), and at most 999,999,999,999,999 (a Structured Field
   * Integer), rounded up to a whole second.
   */
  readonly windowSeconds: number;
}

/** Options of {@link rateLimitHeaders}. Any other own enumerable string key is rejected. */
export interface RateLimitHeadersOptions {
  /**
   * The policy of the result, or one per limit of a group result (in member order). The
   * limiter's own `windowSeconds` is the usual window; with tiers whose windows differ, pass the
   * window of the tier that applied.
   */
  readonly policy: RateLimitPolicy | readonly RateLimitPolicy[];
  /** Whether to send `RateLimit-Policy` and `RateLimit`. @default true */
  readonly standard?: boolean;
  /**
   * Whether to also send the legacy `X-RateLimit-Limit`, `X-RateLimit-Remaining` and
   * `X-RateLimit-Reset` (seconds until the window is clear, rounded up; the binding limit's for
   * a group). @default false
   */
  readonly legacy?: boolean;
}

/** Options of {@link rateLimitProblem}. Any other own enumerable string key is rejected. */
export interface RateLimitProblemOptions {
  /** A URI identifying the problem type. @default "about:blank" */
  readonly type?: string;
  /**
   * The problem's title.
   * @default "Too Many Requests"; "Rate limit store unavailable" for a refusal by a store failure
   *   (a `degraded: "fail-closed"` result: see {@link rateLimitProblem})
   */
  readonly title?: string;
}

/** The keys of {@link RateLimitHeadersOptions}: any other is rejected. */
const HEADERS_OPTIONS = knownOptions('rateLimitHeaders options', {
  policy: true,
  standard: true,
  legacy: true,
} satisfies Record<keyof RateLimitHeadersOptions, true>);

/** The keys of {@link RateLimitPolicy}: any other is rejected. */
const POLICY_OPTIONS = knownOptions('a RateLimitPolicy', {
  name: true,
  windowSeconds: true,
} satisfies Record<keyof RateLimitPolicy, true>);

/** The keys of {@link RateLimitProblemOptions}: any other is rejected. */
const PROBLEM_OPTIONS = knownOptions('rateLimitProblem options', {
  type: true,
  title: true,
} satisfies Record<keyof RateLimitProblemOptions, true>);

/**
 * The HTTP header fields that describe a decision, as a plain object of field name → value
 * (names in their usual capitalisation; HTTP field names are case-insensitive):
 *
 * - `RateLimit-Policy`: `"name";q=<limit>;w=<window s>`, one list member per policy.
 * - `RateLimit`: `"name";r=<remaining>;t=<seconds>`, one member per policy, `t` rounded up to a
 *   whole second: for a limit that rejected the request, the wait until it fits (as
 *   `Retry-After`, so `t` is never earlier than it); otherwise the time until the window is
 *   clear (`resetAfter`). Both are Structured Field Lists (RFC 9651), as
 *   draft-ietf-httpapi-ratelimit-headers-10 defines them; integers beyond the 15 digits of a
 *   Structured Field Integer are clamped to 999,999,999,999,999.
 * - `Retry-After`, only when the request was rejected and waiting can help: the wait in whole
 *   delay-seconds, rounded **up** and at least 1 (RFC 9110 §10.2.3: never fractional, and 0
 *   would invite an immediate retry that is still rejected), at most 999,999,999,999,999.
 *   Absent when `retryAfter` is `Infinity` (a cost above the limit: waiting does not help).
 * - With `legacy: true`, `X-RateLimit-Limit`, `X-RateLimit-Remaining`, `X-RateLimit-Reset`
 *   (each a non-negative integer in decimal digits).
 *
 * The result is checked first, as {@link RateLimitResult} documents it, so that nothing but
 * valid fields consistent with one another is ever sent: `allowed` a boolean; `limit` a positive
 * safe integer; `remaining` a non-negative safe integer, at most `limit`; `retryAfter` `0` when
 * allowed, and a positive number of seconds or `Infinity` when refused; `resetAfter` a finite
 * non-negative number of seconds. A group result (one with `results`) also needs a non-empty
 * array `results` of such results, `names` with one string per result, `binding` an index into
 * `results` whose `limit` is the group's, and, when the group is allowed, every result allowed;
 * a result without `results` must have no `names` or `binding` either. Names are sent as
 * Structured Field Strings, so each must be printable ASCII.
 *
 * @param result - a `RateLimitResult`, or a `GroupResult` (then one policy per limit).
 * @param options - {@link RateLimitHeadersOptions}.
 * @returns a new object; values are strings.
 * @throws {RateWardenTypeError} when `result` (or a member of a group's `results`) is not an
 *   object or one of its fields has the wrong type (named in the message, such as
 *   `result.results[1].remaining`), `results` is neither an array nor undefined, `names` or
 *   `binding` is set without `results`, `options.policy` is missing or not an object (or array of
 *   them), a policy name is not a string, or `standard` / `legacy` is not a boolean; with code
 *   `ERR_RATEWARDEN_UNKNOWN_OPTION` when `options` or a policy has a key that is not one of its
 *   options, naming the key and, when one is close, the option meant.
 * @throws {RateWardenRangeError} when a field of the result is out of its range or inconsistent
 *   with the others (a negative, fractional or `NaN` count, a `limit` of 0, `remaining` above
 *   `limit`, a `retryAfter` other than 0 when allowed or not positive when refused, a negative,
 *   `NaN` or infinite `resetAfter`, a `binding` outside `results`, an empty group, a group
 *   `limit` other than the binding limit's, an allowed group with a refused limit), a window is not a number of
 *   seconds from 0.001 to 999,999,999,999,999, a policy or group name has characters outside
 *   printable ASCII, or a group result gets a different number of policies.
 *
 * @example
 * ```ts
 * const result = await limiter.allowRequest(userId);
 * const headers = rateLimitHeaders(result, { policy: { windowSeconds: limiter.windowSeconds } });
 * // { 'RateLimit-Policy': '"default";q=300;w=60', RateLimit: '"default";r=299;t=60' }
 * ```
 */
export function rateLimitHeaders(result: RateLimitResult, options: RateLimitHeadersOptions): Record<string, string> {
  const checked = checkResult(result);
  checkObject('options', options, 'an object with a `policy`');
  checkKnownKeys(options, HEADERS_OPTIONS);
  const standard = optionalBoolean('standard', options.standard, true);
  const legacy = optionalBoolean('legacy', options.legacy, false);
  const { top, results, names, binding } = checked;
  const policies = policiesOf(options.policy, results.length, names);
  const headers: Record<string, string> = {};
  if (standard) {
    let policyField = '';
    let limitField = '';
    for (let i = 0; i < results.length; i++) {
      const r = results[i] as CheckedResult;
      const p = policies[i] as { name: string; window: number };
      const name = sfString(p.name);
      const separator = i === 0 ? '' : ', ';
      policyField += `${separator}${name};q=${sfInteger(r.limit)};w=${sfInteger(p.window)}`;
      // t: when more quota is available. For a limit that turns the request away, that is when
      // the request fits (as Retry-After says, never earlier); otherwise when the window is clear.
      const t = !r.allowed && r.retryAfter !== Infinity ? delaySeconds(r.retryAfter) : wholeSeconds(r.resetAfter);
      limitField += `${separator}${name};r=${sfInteger(r.remaining)};t=${sfInteger(t)}`;
    }
    headers['RateLimit-Policy'] = policyField;
    headers.RateLimit = limitField;
  }
  if (!top.allowed && top.retryAfter !== Infinity) {
    headers['Retry-After'] = String(delaySeconds(top.retryAfter));
  }
  if (legacy) {
    const bound = results[binding] ?? top;
    headers['X-RateLimit-Limit'] = String(bound.limit);
    headers['X-RateLimit-Remaining'] = String(top.remaining);
    headers['X-RateLimit-Reset'] = String(wholeSeconds(bound.resetAfter));
  }
  return headers;
}

/**
 * An RFC 9457 problem details object for a refused request (`application/problem+json`): a 429,
 * or a 503 when the refusal came from a store failure (see {@link rateLimitProblem}).
 */
export interface RateLimitProblem {
  /** A URI identifying the problem type. @default "about:blank" */
  readonly type: string;
  /** `"Too Many Requests"` (429) or `"Rate limit store unavailable"` (503), unless given. */
  readonly title: string;
  /**
   * The HTTP status to send: 429 (Too Many Requests) when the client exceeded a limit (or its
   * request costs more than a limit allows); 503 (Service Unavailable) when the request was
   * refused only because a limit's store could not be reached (`degraded: "fail-closed"`).
   */
  readonly status: 429 | 503;
  /** A human-readable explanation, in English: why the request was refused, and how long to wait. */
  readonly detail: string;
  /** Seconds to wait before retrying (an extension member), as `Retry-After` says; absent when waiting cannot help. */
  readonly retryAfter?: number;
}

/**
 * @internal Whether a refused result was refused **only because a limit's store could not be reached**,
 * not because the client exceeded a limit: the store's failure policy refused it
 * (`degraded: "fail-closed"`, such as a Redis strategy with `onFailure: "fail-closed"` while
 * Redis is down) and waiting can help (`retryAfter` finite; a request that costs more than the
 * limit could never be allowed anyway). For a `GroupResult` (one with `results`): every limit
 * that refused it failed closed (one limit that refused on its own count makes it an ordinary
 * rate-limit refusal). `false` for an allowed result. The middleware answer such a refusal with
 * a 503 instead of a 429. Reads the fields without checking them; never throws on an object.
 * @param result - a decision, or a group's.
 */
export function refusedByStoreFailure(result: RateLimitResult): boolean {
  if (result.allowed || !(result.retryAfter < Infinity)) return false;
  if (result.degraded === 'fail-closed') return true;
  const results: unknown = (result as { results?: unknown }).results;
  if (!Array.isArray(results)) return false;
  let refused = false;
  for (const member of results as readonly unknown[]) {
    if (member === null || typeof member !== 'object') continue;
    const r = member as RateLimitResult;
    if (r.allowed) continue;
    if (r.degraded !== 'fail-closed') return false;
    refused = true;
  }
  return refused;
}

/**
 * An RFC 9457 problem details body for a rejected request: send it as JSON with its `status`
 * and `Content-Type: application/problem+json`, beside {@link rateLimitHeaders}.
 *
 * - The client exceeded the limit: status 429, title `"Too Many Requests"`, detail
 *   `"Rate limit of 5 exceeded; retry in 30 s."`, `retryAfter` (seconds).
 * - Its cost exceeds the limit (`retryAfter: Infinity`): status 429, a detail saying it can
 *   never be accepted, no `retryAfter`.
 * - Refused because a limit's store could not be reached: a result with
 *   `degraded: "fail-closed"` (a Redis strategy with `onFailure: "fail-closed"` while Redis is
 *   down or disconnected) whose `retryAfter` is finite, or a `GroupResult` whose every refusing
 *   limit's result is such (one limit refusing on its own count makes it an ordinary 429): status
 *   **503** (Service Unavailable), title `"Rate limit store unavailable"`, a detail saying the
 *   request was refused because the limit's store could not be reached, not because the client
 *   exceeded the limit, and `retryAfter` (as `Retry-After`). A fail-closed refusal of a request
 *   that costs more than the limit stays the 429 above: it could never be accepted anyway.
 *
 * @param result - the refused result (`allowed: false`).
 * @param options - `type` (a URI; default `"about:blank"`) and `title` (default
 *   `"Too Many Requests"`, or `"Rate limit store unavailable"` for a store failure).
 * @throws {RateWardenTypeError} when `result` or `options` is not an object, a field of
 *   `result` has the wrong type, `options` has a key other than `type` and `title` (code
 *   `ERR_RATEWARDEN_UNKNOWN_OPTION`), or `type` or `title` is given and not a string.
 * @throws {RateWardenRangeError} when `result` is allowed (naming `result.allowed`: a 429 body
 *   describes a refusal), or a field of `result` is out of its range or inconsistent (as for
 *   {@link rateLimitHeaders}).
 */
export function rateLimitProblem(result: RateLimitResult, options: RateLimitProblemOptions = {}): RateLimitProblem {
  const { top } = checkResult(result);
  if (top.allowed) throw rangeError('result.allowed', 'false (a problem body describes a refused request)', top.allowed);
  checkObject('options', options, 'an object or undefined');
  checkKnownKeys(options, PROBLEM_OPTIONS);
  const storeFailure = refusedByStoreFailure(result);
  const type: unknown = options.type ?? 'about:blank';
  const title: unknown = options.title ?? (storeFailure ? 'Rate limit store unavailable' : 'Too Many Requests');
  if (typeof type !== 'string') throw typeError('type', 'a string (a URI)', type);
  if (typeof title !== 'string') throw typeError('title', 'a string', title);
  if (storeFailure) {
    const wait = delaySeconds(top.retryAfter);
    return {
      type,
      title,
      status: 503,
      detail: `This request was refused because the rate limit's store could not be reached, not because the client exceeded the limit; retry in ${wait} s.`,
      retryAfter: wait,
    };
  }
  if (top.retryAfter === Infinity) {
    return {
      type,
      title,
      status: 429,
      detail: `This request costs more than the limit of ${top.limit} allows; it can never be accepted.`,
    };
  }
  const wait = delaySeconds(top.retryAfter);
  return {
    type,
    title,
    status: 429,
    detail: `Rate limit of ${top.limit} exceeded; retry in ${wait} s.`,
    retryAfter: wait,
  };
}

/** The fields of a result the headers use, read once and checked. */
interface CheckedResult {
  readonly allowed: boolean;
  readonly remaining: number;
  readonly retryAfter: number;
  readonly limit: number;
  readonly resetAfter: number;
}

/** A checked result: the top-level fields, and one entry per limit (one for a plain result). */
interface Checked {
  readonly top: CheckedResult;
  readonly results: readonly CheckedResult[];
  /** A group's names, checked as strings (their characters are checked with the policies). */
  readonly names: readonly string[] | undefined;
  readonly binding: number;
}

/**
 * Checks a result (or a group result, one with a `results` array) against what
 * {@link RateLimitResult} documents, reading each field once.
 * @throws {RateWardenTypeError} / {@link RateWardenRangeError} naming the field.
 */
function checkResult(result: unknown): Checked {
  const top = checkFields('result', result);
  const list: unknown = (result as { results?: unknown }).results;
  if (list === undefined) {
    // A single result: a group's other fields without `results` are a mistake, not ignored.
    for (const field of ['names', 'binding'] as const) {
      const value: unknown = (result as Record<string, unknown>)[field];
      if (value !== undefined) {
        throw typeError(`result.${field}`, 'undefined for a single result (a group result has `results`, `names` and `binding`)', value);
      }
    }
    return { top, results: [top], names: undefined, binding: 0 };
  }
  if (!Array.isArray(list)) {
    throw typeError('result.results', 'an array of results (one per limit of a group), or undefined for a single result', list);
  }
  if (list.length === 0) throw rangeError('result.results', 'a non-empty array (one result per limit of a group)', list);
  const results = list.map((r: unknown, i) => checkFields(`result.results[${i}]`, r));
  const names: unknown = (result as { names?: unknown }).names;
  if (!Array.isArray(names)) throw typeError('result.names', 'an array of names (one per result)', names);
  if (names.length !== results.length) {
    throw rangeError('result.names', `an array of ${results.length} names (one per result)`, names);
  }
  names.forEach((name: unknown, i) => {
    if (typeof name !== 'string') throw typeError(`result.names[${i}]`, 'a string of printable ASCII', name);
  });
  const binding: unknown = (result as { binding?: unknown }).binding;
  const range = `an index into \`result.results\` (an integer from 0 to ${results.length - 1})`;
  if (typeof binding !== 'number') throw typeError('result.binding', range, binding);
  if (!Number.isInteger(binding) || binding < 0 || binding >= results.length) throw rangeError('result.binding', range, binding);
  // As GroupResult documents: `limit` is the binding limit's, and an allowed group was allowed
  // by every limit.
  const bound = results[binding] as CheckedResult;
  if (top.limit !== bound.limit) {
    throw rangeError('result.limit', `the binding limit's \`limit\` (\`result.results[${binding}].limit\`, ${bound.limit})`, top.limit);
  }
  if (top.allowed) {
    results.forEach((r, i) => {
      if (!r.allowed) throw rangeError(`result.results[${i}].allowed`, 'true, as the group result is allowed (`result.allowed`)', r.allowed);
    });
  }
  return { top, results, names: names as string[], binding };
}

/** Checks the fields of one result; `path` names it in errors. */
function checkFields(path: string, value: unknown): CheckedResult {
  checkObject(path, value, 'a RateLimitResult');
  const r = value as Partial<Record<keyof CheckedResult, unknown>>;
  const allowed = r.allowed;
  if (typeof allowed !== 'boolean') throw typeError(`${path}.allowed`, 'a boolean', allowed);
  const limit = checkCount(`${path}.limit`, r.limit, 'a positive safe integer');
  if (limit === 0) throw rangeError(`${path}.limit`, 'a positive safe integer', limit);
  const remaining = checkCount(`${path}.remaining`, r.remaining, `a non-negative safe integer, at most \`limit\` (${limit})`);
  if (remaining > limit) throw rangeError(`${path}.remaining`, `a non-negative safe integer, at most \`limit\` (${limit})`, remaining);
  // An allowed result has nothing to wait for; a refused one always has (or can never fit).
  const retryAfter = r.retryAfter;
  const expected = allowed
    ? '0 (the result is allowed: `allowed` is true)'
    : 'a positive number of seconds, or Infinity (never) (the result is refused: `allowed` is false)';
  if (typeof retryAfter !== 'number') throw typeError(`${path}.retryAfter`, expected, retryAfter);
  if (allowed ? retryAfter !== 0 : !(retryAfter > 0)) throw rangeError(`${path}.retryAfter`, expected, retryAfter);
  const resetAfter = checkTime(`${path}.resetAfter`, r.resetAfter);
  return { allowed, remaining, retryAfter, limit, resetAfter };
}

/** A count: a non-negative safe integer. */
function checkCount(name: string, value: unknown, expected: string): number {
  if (typeof value !== 'number') throw typeError(name, expected, value);
  if (!Number.isSafeInteger(value) || value < 0) throw rangeError(name, expected, value);
  return value;
}

/** A time in seconds: finite and non-negative. */
function checkTime(name: string, value: unknown): number {
  const expected = 'a finite non-negative number of seconds';
  if (typeof value !== 'number') throw typeError(name, expected, value);
  if (!(value >= 0) || value === Infinity) throw rangeError(name, expected, value);
  return value;
}

/** Checks and normalises the policies: one per result, with names and whole-second windows. */
function policiesOf(
  policy: RateLimitPolicy | readonly RateLimitPolicy[] | undefined,
  count: number,
  names: readonly string[] | undefined,
): { name: string; window: number }[] {
  checkObject('policy', policy, 'a RateLimitPolicy ({ windowSeconds, name? }) or an array of them');
  const list: readonly RateLimitPolicy[] = Array.isArray(policy) ? policy : [policy as RateLimitPolicy];
  if (list.length !== count) {
    throw rangeError('policy', `${count} ${count === 1 ? 'policy' : 'policies'} (one per limit of the result)`, list.length);
  }
  return list.map((p, i) => {
    checkObject(`policy[${i}]`, p, 'a RateLimitPolicy');
    checkKnownKeys(p, POLICY_OPTIONS, Array.isArray(policy) ? `policy[${i}]` : 'policy');
    // The quota's rule for windows, capped at what a Structured Field Integer can carry.
    const window = checkSeconds(`policy[${i}].windowSeconds`, p.windowSeconds, SF_INTEGER_MAX);
    const own: unknown = p.name;
    // A Structured Field String holds printable ASCII only (RFC 9651 §3.3.3).
    const field = own !== undefined ? `policy[${i}].name` : names !== undefined ? `result.names[${i}]` : 'name';
    const name: unknown = own ?? names?.[i] ?? 'default';
    if (typeof name !== 'string') throw typeError(field, 'a string of printable ASCII', name);
    if (!/^[\x20-\x7e]*$/.test(name)) throw rangeError(field, 'a string of printable ASCII (0x20-0x7E)', name);
    return { name, window: Math.ceil(window) };
  });
}

/** The largest Structured Field Integer (RFC 9651 §3.3.1: at most 15 digits). */
const SF_INTEGER_MAX = 999_999_999_999_999;

/** A non-negative integer as a Structured Field Integer, clamped to its 15 digits. */
function sfInteger(value: number): string {
  return String(value > SF_INTEGER_MAX ? SF_INTEGER_MAX : value);
}

/** A Structured Field String (RFC 9651 §4.1.6): quoted, with `\` and `"` escaped. */
function sfString(value: string): string {
  return `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/** Checked seconds rounded up to a whole non-negative integer, at most {@link SF_INTEGER_MAX}. */
function wholeSeconds(seconds: number): number {
  return seconds > 0 ? Math.min(Math.ceil(seconds), SF_INTEGER_MAX) : 0;
}

/**
 * A checked finite wait as RFC 9110 delay-seconds: rounded up, at least 1 (0 would invite a
 * retry that is still refused), at most {@link SF_INTEGER_MAX} (`String` of a larger number
 * could be exponent notation, which is not delay-seconds).
 */
function delaySeconds(seconds: number): number {
  return Math.max(1, wholeSeconds(seconds));
}
