// rateLimitHeaders and rateLimitProblem: exact field values for single and group results.
// Why one file of about 740 lines: one module's two functions and the result checks they share,
// with their property tests; split, each half would repeat the result builders.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  GCRA,
  RateLimitGroup,
  RateLimiter,
  RateWardenRangeError,
  RateWardenTypeError,
  rateLimitHeaders,
  rateLimitProblem,
  type RateLimitHeadersOptions,
  type RateLimitResult,
} from '../../src/index.js';
import { exactly } from '../support/errors.js';

function result(partial: Partial<RateLimitResult>): RateLimitResult {
  return { allowed: true, remaining: 0, retryAfter: 0, limit: 10, resetAfter: 0, ...partial };
}

describe('rateLimitHeaders', () => {
  it('gives the IETF fields for an allowed request, t rounded up to whole seconds', () => {
    let now = 0;
    const limiter = new RateLimiter({ threshold: 300, windowSeconds: 60, clock: () => now });
    limiter.allowRequestSync('alice');
    now = 500;
    const r = limiter.allowRequestSync('alice');
    expect(rateLimitHeaders(r, { policy: { windowSeconds: limiter.windowSeconds } })).toEqual({
      'RateLimit-Policy': '"default";q=300;w=60',
      RateLimit: '"default";r=298;t=60',
    });
  });

  it('adds Retry-After in whole seconds, rounded up and at least 1, when rejected', () => {
    const headers = (retryAfter: number): Record<string, string> =>
      rateLimitHeaders(result({ allowed: false, retryAfter, resetAfter: 30 }), { policy: { windowSeconds: 30, name: 'api' } });
    expect(headers(12.000001)['Retry-After']).toBe('13');
    expect(headers(12)['Retry-After']).toBe('12');
    expect(headers(0.000001)['Retry-After']).toBe('1');
    // t on a rejection: when the request fits, as Retry-After (not the 30 s until the window is clear).
    expect(headers(12)).toMatchObject({ 'RateLimit-Policy': '"api";q=10;w=30', RateLimit: '"api";r=0;t=12' });
    expect(headers(Infinity)).toMatchObject({ RateLimit: '"api";r=0;t=30' });
    // Waiting cannot help a cost above the limit: no Retry-After.
    expect(headers(Infinity)).not.toHaveProperty('Retry-After');
    expect(rateLimitHeaders(result({ allowed: true }), { policy: { windowSeconds: 1 } })).not.toHaveProperty('Retry-After');
  });

  it('lists one policy per limit of a group, named by the group', () => {
    const now = 0;
    const perSecond = new RateLimiter({ threshold: 2, windowSeconds: 1, clock: () => now });
    const perHour = new RateLimiter({ threshold: 100, windowSeconds: 3600, clock: () => now, strategy: new GCRA() });
    const group = new RateLimitGroup([
      { limiter: perSecond, name: 'per-second' },
      { limiter: perHour, name: 'per-hour' },
    ]);
    group.allowRequestSync('alice');
    group.allowRequestSync('alice');
    const rejected = group.allowRequestSync('alice');
    const headers = rateLimitHeaders(rejected, {
      policy: [{ windowSeconds: perSecond.windowSeconds }, { windowSeconds: perHour.windowSeconds }],
      legacy: true,
    });
    expect(headers).toEqual({
      'RateLimit-Policy': '"per-second";q=2;w=1, "per-hour";q=100;w=3600',
      RateLimit: '"per-second";r=0;t=1, "per-hour";r=98;t=72',
      'Retry-After': '1',
      'X-RateLimit-Limit': '2',
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': '1',
    });
  });

  it('escapes names as Structured Field Strings, rounds windows up, and can leave the IETF fields out', () => {
    expect(rateLimitHeaders(result({}), { policy: { name: 'a "b" \\c', windowSeconds: 0.5 } })['RateLimit-Policy']).toBe(
      '"a \\"b\\" \\\\c";q=10;w=1',
    );
    expect(rateLimitHeaders(result({ remaining: 3, resetAfter: 2.5 }), { policy: { windowSeconds: 5 }, standard: false, legacy: true })).toEqual({
      'X-RateLimit-Limit': '10',
      'X-RateLimit-Remaining': '3',
      'X-RateLimit-Reset': '3',
    });
  });

  it.each([
    [undefined, TypeError, /`options`/],
    [{}, TypeError, /`policy`/],
    [{ policy: { windowSeconds: '60' } }, TypeError, /`policy\[0\]\.windowSeconds`/],
    [{ policy: { windowSeconds: 0 } }, RangeError, /`policy\[0\]\.windowSeconds` to be a finite number of seconds from 0.001 to 999999999999999, got `0`/],
    [{ policy: { windowSeconds: 0.0005 } }, RangeError, /`policy\[0\]\.windowSeconds` .* got `0.0005`/],
    [{ policy: { windowSeconds: Infinity } }, RangeError, /`policy\[0\]\.windowSeconds`/],
    [{ policy: { windowSeconds: 1e15 } }, RangeError, /`policy\[0\]\.windowSeconds` to be a finite number of seconds from 0.001 to 999999999999999, got `1000000000000000`/],
    [{ policy: { windowSeconds: 1 }, standard: 'no' }, TypeError, /`standard`/],
    [{ policy: { windowSeconds: 1 }, legacy: 1 }, TypeError, /`legacy`/],
    [{ policy: { windowSeconds: 1, name: 'é' } }, RangeError, /`policy\[0\]\.name`.*printable ASCII/],
    [{ policy: { windowSeconds: 1, name: 5 } }, TypeError, /`policy\[0\]\.name`/],
    [{ policy: [{ windowSeconds: 1 }, { windowSeconds: 2 }] }, RangeError, /`policy`.*1 policy.*`2`/],
  ])('rejects bad options %o', (options, type, message) => {
    const call = (): unknown => rateLimitHeaders(result({}), options as never);
    expect(call).toThrow(type);
    expect(call).toThrow(message);
  });
});

it('clamps quotas beyond a Structured Field Integer, and refuses a result that is not an object', () => {
  const huge = result({ limit: Number.MAX_SAFE_INTEGER, remaining: Number.MAX_SAFE_INTEGER - 1, resetAfter: 1 });
  expect(rateLimitHeaders(huge, { policy: { windowSeconds: 1 } })).toEqual({
    'RateLimit-Policy': '"default";q=999999999999999;w=1',
    RateLimit: '"default";r=999999999999999;t=1',
  });
  expect(() => rateLimitHeaders(null as never, { policy: { windowSeconds: 1 } })).toThrow(/`result`/);
});

describe('rateLimitProblem', () => {
  it('describes a 429 as RFC 9457 problem details', () => {
    expect(rateLimitProblem(result({ allowed: false, retryAfter: 2.2 }))).toEqual({
      type: 'about:blank',
      title: 'Too Many Requests',
      status: 429,
      detail: 'Rate limit of 10 exceeded; retry in 3 s.',
      retryAfter: 3,
    });
    expect(rateLimitProblem(result({ allowed: false, retryAfter: Infinity }), { type: 'https://example.com/too-big' })).toEqual({
      type: 'https://example.com/too-big',
      title: 'Too Many Requests',
      status: 429,
      detail: 'This request costs more than the limit of 10 allows; it can never be accepted.',
    });
    expect(() => rateLimitProblem(result({ allowed: false, retryAfter: 1 }), { title: 5 as never })).toThrow(TypeError);
  });

  it('describes a refusal by a store failure (degraded: fail-closed) as a 503, not a 429', () => {
    const failedClosed = result({ allowed: false, retryAfter: 1, resetAfter: 1, limit: 5, degraded: 'fail-closed' });
    expect(rateLimitProblem(failedClosed)).toEqual({
      type: 'about:blank',
      title: 'Rate limit store unavailable',
      status: 503,
      detail: "This request was refused because the rate limit's store could not be reached, not because the client exceeded the limit; retry in 1 s.",
      retryAfter: 1,
    });
    // The options still apply; the wait is rounded up as for a 429.
    expect(rateLimitProblem({ ...failedClosed, retryAfter: 0.2 }, { type: 'https://example.com/store-down', title: 'Down' })).toMatchObject({
      type: 'https://example.com/store-down',
      title: 'Down',
      status: 503,
      retryAfter: 1,
    });
    // The other policies never refuse by themselves; a local fallback's refusal is a real limit.
    expect(rateLimitProblem(result({ allowed: false, retryAfter: 2, degraded: 'local' })).status).toBe(429);
    // A cost over the limit could never be accepted, store or not: the 429 that says so.
    expect(rateLimitProblem(result({ allowed: false, retryAfter: Infinity, degraded: 'fail-closed' }))).toEqual({
      type: 'about:blank',
      title: 'Too Many Requests',
      status: 429,
      detail: 'This request costs more than the limit of 10 allows; it can never be accepted.',
    });
  });

  it('describes a group refused only by limits whose stores failed closed as a 503; one limit over its count makes it a 429', () => {
    const overCount = result({ allowed: false, retryAfter: 30, resetAfter: 30, limit: 2 });
    const storeDown = result({ allowed: false, retryAfter: 1, resetAfter: 1, limit: 100, degraded: 'fail-closed' });
    const fine = result({ allowed: true, remaining: 4, limit: 5 });
    const group = (results: RateLimitResult[], binding: number): RateLimitResult => ({
      allowed: false,
      remaining: 0,
      retryAfter: Math.max(...results.map((r) => r.retryAfter)),
      limit: (results[binding] as RateLimitResult).limit,
      resetAfter: Math.max(...results.map((r) => r.resetAfter)),
      results,
      names: results.map((_, i) => `l${i}`),
      binding,
    }) as RateLimitResult;
    expect(rateLimitProblem(group([fine, storeDown], 1))).toMatchObject({ status: 503, title: 'Rate limit store unavailable', retryAfter: 1 });
    expect(rateLimitProblem(group([storeDown, storeDown], 0)).status).toBe(503);
    expect(rateLimitProblem(group([overCount, storeDown], 0))).toMatchObject({ status: 429, title: 'Too Many Requests', retryAfter: 30 });
    expect(rateLimitProblem(group([storeDown, overCount], 1)).status).toBe(429);
  });

  it('reports a real fail-closed group refusal (a store that rejects, under its policy) as a 503', async () => {
    // A store of one's own whose failure policy refused: its result carries degraded.
    const down: RateLimitResult = { allowed: false, remaining: 0, retryAfter: 1, limit: 3, resetAfter: 1, degraded: 'fail-closed' };
    const store = { name: 'down', atomic: true, consume: async () => down, peek: async () => down };
    const group = new RateLimitGroup([
      { limiter: new RateLimiter({ threshold: 5, windowSeconds: 60 }), name: 'memory' },
      { limiter: new RateLimiter({ threshold: 3, windowSeconds: 60, strategy: store }), name: 'store' },
    ]);
    const refused = await group.allowRequest('alice');
    expect(refused.allowed).toBe(false);
    expect(rateLimitProblem(refused)).toMatchObject({ status: 503, retryAfter: 1 });
  });
});

it('rateLimitProblem names a result or options that is not an object', () => {
  expect(() => rateLimitProblem(null as never)).toThrow(expect.objectContaining({ name: 'TypeError', code: 'ERR_RATEWARDEN_INVALID_TYPE', message: 'Expected `result` to be a RateLimitResult, got `null` (null)' }));
  const rejected: RateLimitResult = { allowed: false, remaining: 0, retryAfter: 2, limit: 1, resetAfter: 2 };
  expect(() => rateLimitProblem(rejected, null as never)).toThrow(/`options` to be an object or undefined, got `null`/);
});

// ---- impossible results --------------------------------------------------------------------------

describe('a header builder refuses a result it cannot describe in valid fields, naming the field', () => {
  const policy = { windowSeconds: 60 };
  it.each([
    // The inputs: q=NaN, r=-5, q=1.5, Retry-After: NaN.
    [{ limit: NaN }, RangeError, 'Expected `result.limit` to be a positive safe integer, got `NaN` (number)'],
    [{ remaining: -5 }, RangeError, 'Expected `result.remaining` to be a non-negative safe integer, at most `limit` (10), got `-5` (number)'],
    [{ limit: 1.5 }, RangeError, 'Expected `result.limit` to be a positive safe integer, got `1.5` (number)'],
    [{ allowed: false, retryAfter: NaN }, RangeError, 'Expected `result.retryAfter` to be a positive number of seconds, or Infinity (never) (the result is refused: `allowed` is false), got `NaN` (number)'],
    // The rest of the class.
    [{ allowed: 'yes' }, TypeError, 'Expected `result.allowed` to be a boolean, got `"yes"` (string)'],
    [{ allowed: undefined }, TypeError, 'Expected `result.allowed` to be a boolean, got `undefined` (undefined)'],
    [{ remaining: '3' }, TypeError, 'Expected `result.remaining` to be a non-negative safe integer, at most `limit` (10), got `"3"` (string)'],
    [{ remaining: 11 }, RangeError, 'Expected `result.remaining` to be a non-negative safe integer, at most `limit` (10), got `11` (number)'],
    [{ remaining: 0.5 }, RangeError, 'Expected `result.remaining` to be a non-negative safe integer, at most `limit` (10), got `0.5` (number)'],
    [{ limit: 2 ** 53, remaining: 0 }, RangeError, 'Expected `result.limit` to be a positive safe integer, got `9007199254740992` (number)'],
    [{ limit: Infinity }, RangeError, 'Expected `result.limit` to be a positive safe integer, got `Infinity` (number)'],
    [{ limit: 10n }, TypeError, 'Expected `result.limit` to be a positive safe integer, got `10n` (bigint)'],
    [{ retryAfter: -1 }, RangeError, 'Expected `result.retryAfter` to be 0 (the result is allowed: `allowed` is true), got `-1` (number)'],
    [{ allowed: false, retryAfter: -1 }, RangeError, 'Expected `result.retryAfter` to be a positive number of seconds, or Infinity (never) (the result is refused: `allowed` is false), got `-1` (number)'],
    [{ allowed: false, retryAfter: -Infinity }, RangeError, 'Expected `result.retryAfter` to be a positive number of seconds, or Infinity (never) (the result is refused: `allowed` is false), got `-Infinity` (number)'],
    [{ retryAfter: null }, TypeError, 'Expected `result.retryAfter` to be 0 (the result is allowed: `allowed` is true), got `null` (null)'],
    [{ resetAfter: Infinity }, RangeError, 'Expected `result.resetAfter` to be a finite non-negative number of seconds, got `Infinity` (number)'],
    [{ resetAfter: NaN }, RangeError, 'Expected `result.resetAfter` to be a finite non-negative number of seconds, got `NaN` (number)'],
    [{ resetAfter: -0.5 }, RangeError, 'Expected `result.resetAfter` to be a finite non-negative number of seconds, got `-0.5` (number)'],
  ] as const)('%o: %o', (partial, type, message) => {
    const bad = { ...result({}), ...partial } as unknown as RateLimitResult;
    expect(() => rateLimitHeaders(bad, { policy })).toThrow(exactly(type, message));
    expect(() => rateLimitHeaders(bad, { policy, standard: false, legacy: true })).toThrow(exactly(type, message));
    expect(() => rateLimitProblem(bad)).toThrow(exactly(type, message));
  });

  // Found by attack: each field in its range, but the fields contradict one another, or a
  // group's fields on a result that is not a group.
  describe('a header builder refuses a result whose fields are inconsistent, naming the field', () => {
    const refused = { allowed: false, remaining: 0, retryAfter: 5, limit: 10, resetAfter: 5 };
    it.each([
      // An allowed result has no wait; a refused one always has one.
      [{ allowed: true, remaining: 0, retryAfter: 5, limit: 10, resetAfter: 5 }, RangeError, 'Expected `result.retryAfter` ALLOWED `5` (number)'],
      [{ allowed: true, remaining: 0, retryAfter: Infinity, limit: 10, resetAfter: 5 }, RangeError, 'Expected `result.retryAfter` ALLOWED `Infinity` (number)'],
      [{ ...refused, retryAfter: 0 }, RangeError, 'Expected `result.retryAfter` REFUSED `0` (number)'],
      [{ ...refused, retryAfter: -0 }, RangeError, 'Expected `result.retryAfter` REFUSED `-0` (number)'],
      // A limit of 0 allows nothing: no quota to advertise as q=0.
      [{ ...refused, limit: 0 }, RangeError, 'Expected `result.limit` to be a positive safe integer, got `0` (number)'],
      // A group's fields are not ignored on a result without `results`.
      [{ ...refused, results: {}, names: 7, binding: 'x' }, TypeError, 'Expected `result.results` to be an array of results (one per limit of a group), or undefined for a single result, got `object` (object)'],
      [{ ...refused, results: 'a' }, TypeError, 'Expected `result.results` to be an array of results (one per limit of a group), or undefined for a single result, got `"a"` (string)'],
      [{ ...refused, names: 7 }, TypeError, 'Expected `result.names` to be undefined for a single result (a group result has `results`, `names` and `binding`), got `7` (number)'],
      [{ ...refused, binding: 0 }, TypeError, 'Expected `result.binding` to be undefined for a single result (a group result has `results`, `names` and `binding`), got `0` (number)'],
      // A group whose fields contradict its members.
      [{ ...refused, results: [refused, { ...refused, limit: 3 }], names: ['a', 'b'], binding: 1 }, RangeError, "Expected `result.limit` to be the binding limit's `limit` (`result.results[1].limit`, 3), got `10` (number)"],
      [
        { allowed: true, remaining: 1, retryAfter: 0, limit: 10, resetAfter: 1, results: [{ allowed: true, remaining: 1, retryAfter: 0, limit: 10, resetAfter: 1 }, refused], names: ['a', 'b'], binding: 0 },
        RangeError,
        'Expected `result.results[1].allowed` to be true, as the group result is allowed (`result.allowed`), got `false` (boolean)',
      ],
      [{ ...refused, results: [refused, { ...refused, allowed: true }], names: ['a', 'b'], binding: 0 }, RangeError, 'Expected `result.results[1].retryAfter` ALLOWED `5` (number)'],
    ] as const)('%o', (bad, type, message) => {
      const text = message.replace('ALLOWED', 'to be 0 (the result is allowed: `allowed` is true), got').replace(
        'REFUSED',
        'to be a positive number of seconds, or Infinity (never) (the result is refused: `allowed` is false), got',
      );
      const r = bad as unknown as RateLimitResult;
      const policies = 'results' in bad && Array.isArray(bad.results) ? [policy, policy] : policy;
      expect(() => rateLimitHeaders(r, { policy: policies })).toThrow(exactly(type, text));
      expect(() => rateLimitHeaders(r, { policy: policies, standard: false, legacy: true })).toThrow(exactly(type, text));
      if (!bad.allowed) expect(() => rateLimitProblem(r)).toThrow(exactly(type, text));
    });

    it('rateLimitProblem refuses an allowed result: a 429 body describes a refusal', () => {
      const allowed = { allowed: true, remaining: 3, retryAfter: 0, limit: 10, resetAfter: 5 };
      expect(() => rateLimitProblem(allowed)).toThrow(
        exactly(RangeError, 'Expected `result.allowed` to be false (a problem body describes a refused request), got `true` (boolean)'),
      );
      const group = { ...allowed, results: [allowed], names: ['a'], binding: 0 } as RateLimitResult;
      expect(() => rateLimitProblem(group)).toThrow(exactly(RangeError, 'Expected `result.allowed` to be false (a problem body describes a refused request), got `true` (boolean)'));
    });
  });

  it('refuses a group result with a bad member, names or binding, naming the field', () => {
    const ok = result({ remaining: 1 });
    const group = (extra: Record<string, unknown>): RateLimitResult =>
      ({ ...ok, results: [ok, ok], names: ['a', 'b'], binding: 0, ...extra }) as unknown as RateLimitResult;
    const policies = [{ windowSeconds: 1 }, { windowSeconds: 60 }];
    const headers = (r: RateLimitResult): Record<string, string> => rateLimitHeaders(r, { policy: policies, legacy: true });
    expect(headers(group({}))['RateLimit-Policy']).toBe('"a";q=10;w=1, "b";q=10;w=60');
    expect(() => headers(group({ results: [ok, { ...ok, remaining: -5 }] }))).toThrow(
      exactly(RangeError, 'Expected `result.results[1].remaining` to be a non-negative safe integer, at most `limit` (10), got `-5` (number)'),
    );
    expect(() => headers(group({ results: [ok, null] }))).toThrow(exactly(TypeError, 'Expected `result.results[1]` to be a RateLimitResult, got `null` (null)'));
    expect(() => headers(group({ results: [] }))).toThrow(exactly(RangeError, 'Expected `result.results` to be a non-empty array (one result per limit of a group), got `array` (object)'));
    expect(() => headers(group({ names: undefined }))).toThrow(exactly(TypeError, 'Expected `result.names` to be an array of names (one per result), got `undefined` (undefined)'));
    expect(() => headers(group({ names: ['a'] }))).toThrow(exactly(RangeError, 'Expected `result.names` to be an array of 2 names (one per result), got `array` (object)'));
    expect(() => headers(group({ names: ['a', 7] }))).toThrow(exactly(TypeError, 'Expected `result.names[1]` to be a string of printable ASCII, got `7` (number)'));
    // A group's own names are checked as Structured Field Strings when they name the policies.
    expect(() => headers(group({ names: ['a', 'b\n'] }))).toThrow(exactly(RangeError, 'Expected `result.names[1]` to be a string of printable ASCII (0x20-0x7E), got `"b\\n"` (string)'));
    expect(() => rateLimitHeaders(group({ names: ['a', 'é'] }), { policy: [{ windowSeconds: 1 }, { windowSeconds: 60, name: 'ok' }] })).not.toThrow();
    const range = 'an index into `result.results` (an integer from 0 to 1)';
    expect(() => headers(group({ binding: 2 }))).toThrow(exactly(RangeError, `Expected \`result.binding\` to be ${range}, got \`2\` (number)`));
    expect(() => headers(group({ binding: -1 }))).toThrow(exactly(RangeError, `Expected \`result.binding\` to be ${range}, got \`-1\` (number)`));
    expect(() => headers(group({ binding: 0.5 }))).toThrow(RangeError);
    expect(() => headers(group({ binding: '0' }))).toThrow(exactly(TypeError, `Expected \`result.binding\` to be ${range}, got \`"0"\` (string)`));
  });

  it('writes huge finite waits as digits, clamped to a Structured Field Integer, never in exponent form', () => {
    const huge = result({ allowed: false, retryAfter: 1e300, resetAfter: 1e300 });
    expect(rateLimitHeaders(huge, { policy, legacy: true })).toEqual({
      'RateLimit-Policy': '"default";q=10;w=60',
      RateLimit: '"default";r=0;t=999999999999999',
      'Retry-After': '999999999999999',
      'X-RateLimit-Limit': '10',
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': '999999999999999',
    });
    expect(rateLimitProblem(huge).retryAfter).toBe(999_999_999_999_999);
  });
});

// A strict parser of the Structured Fields used (RFC 8941 / RFC 9651 §4.2): Lists of Items with
// Parameters; bare items are Integers, Decimals, Strings, Tokens or Booleans. Throws on anything
// else, including surrounding or stray whitespace.
type BareItem = { type: 'integer' | 'decimal'; value: number } | { type: 'string' | 'token'; value: string } | { type: 'boolean'; value: boolean };
interface Item {
  readonly value: BareItem;
  readonly params: Map<string, BareItem>;
}

function parseList(input: string): Item[] {
  let i = 0;
  const fail = (why: string): never => {
    throw new Error(`invalid Structured Field List at ${i}: ${why} in ${JSON.stringify(input)}`);
  };
  const bare = (): BareItem => {
    const c = input[i];
    if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) {
      const match = /^-?([0-9]+)(\.([0-9]+))?/.exec(input.slice(i)) ?? fail('number');
      const [text, whole = '', dot, fraction = ''] = match;
      i += text.length;
      if (dot === undefined) {
        if (whole.length > 15) fail('integer of more than 15 digits');
        return { type: 'integer', value: Number(text) };
      }
      if (whole.length > 12 || fraction.length === 0 || fraction.length > 3) fail('decimal');
      return { type: 'decimal', value: Number(text) };
    }
    if (c === '"') {
      i++;
      let value = '';
      for (;;) {
        const d = input[i++] ?? fail('unterminated string');
        if (d === '\\') {
          const e = input[i++];
          if (e !== '"' && e !== '\\') fail('bad escape');
          value += e as string;
        } else if (d === '"') {
          return { type: 'string', value };
        } else if (d < ' ' || d > '~') {
          fail('non-printable character in string');
        } else {
          value += d;
        }
      }
    }
    if (c !== undefined && /[A-Za-z*]/.test(c)) {
      const match = /^[A-Za-z*][!#$%&'*+\-.^_`|~0-9A-Za-z:/]*/.exec(input.slice(i)) as RegExpExecArray;
      i += match[0].length;
      return { type: 'token', value: match[0] };
    }
    if (c === '?') {
      const d = input[i + 1];
      if (d !== '0' && d !== '1') fail('boolean');
      i += 2;
      return { type: 'boolean', value: d === '1' };
    }
    return fail('bare item');
  };
  const items: Item[] = [];
  if (input.length === 0) fail('empty list');
  for (;;) {
    const value = bare();
    const params = new Map<string, BareItem>();
    while (input[i] === ';') {
      i++;
      while (input[i] === ' ') i++;
      const key = (/^[a-z*][a-z0-9_\-.*]*/.exec(input.slice(i)) ?? fail('parameter key'))[0];
      i += key.length;
      let param: BareItem = { type: 'boolean', value: true };
      if (input[i] === '=') {
        i++;
        param = bare();
      }
      params.set(key, param);
    }
    items.push({ value, params });
    while (input[i] === ' ' || input[i] === '\t') i++;
    if (i === input.length) return items;
    if (input[i] !== ',') fail('expected a comma');
    i++;
    while (input[i] === ' ' || input[i] === '\t') i++;
    if (i === input.length) fail('trailing comma');
  }
}

/** A non-negative Integer parameter, or the test fails. */
function integerParam(item: Item, key: string): number {
  const param = item.params.get(key);
  expect(param?.type, `parameter ${key}`).toBe('integer');
  const value = param?.value as number;
  expect(value).toBeGreaterThanOrEqual(0);
  return value;
}

/** Checks every field rateLimitHeaders may send against its grammar. */
function checkHeaders(headers: Record<string, string>, standard: boolean, legacy: boolean): void {
  const expected = [
    ...(standard ? ['RateLimit', 'RateLimit-Policy'] : []),
    ...('Retry-After' in headers ? ['Retry-After'] : []),
    ...(legacy ? ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'] : []),
  ];
  expect(Object.keys(headers).sort()).toEqual(expected.sort());
  if (standard) {
    const policies = parseList(headers['RateLimit-Policy'] as string);
    const limits = parseList(headers.RateLimit as string);
    expect(limits.length).toBe(policies.length);
    policies.forEach((p, i) => {
      expect(p.value.type).toBe('string');
      expect([...p.params.keys()]).toEqual(['q', 'w']);
      integerParam(p, 'q');
      expect(integerParam(p, 'w')).toBeGreaterThanOrEqual(1);
      const l = limits[i] as Item;
      expect(l.value).toEqual(p.value);
      expect([...l.params.keys()]).toEqual(['r', 't']);
      expect(integerParam(l, 'r')).toBeLessThanOrEqual(integerParam(p, 'q'));
      integerParam(l, 't');
    });
  }
  // RFC 9110 §10.2.3: delay-seconds = 1*DIGIT (and at least 1 here).
  if ('Retry-After' in headers) {
    expect(headers['Retry-After']).toMatch(/^[1-9][0-9]{0,14}$/);
  }
  if (legacy) {
    for (const name of ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']) expect(headers[name]).toMatch(/^(0|[1-9][0-9]*)$/);
  }
}

interface Plain {
  allowed: boolean;
  remaining: number;
  retryAfter: number;
  limit: number;
  resetAfter: number;
  degraded?: unknown;
}

/** Whether `value` is a result as RateLimitResult documents it: fields in range and consistent. */
function isConsistent(value: unknown): value is Plain {
  if (typeof value !== 'object' || value === null) return false;
  const r = value as Record<string, unknown>;
  const { allowed, remaining, retryAfter, limit, resetAfter } = r;
  if (typeof allowed !== 'boolean' || typeof retryAfter !== 'number' || typeof resetAfter !== 'number') return false;
  if (!Number.isSafeInteger(limit) || (limit as number) < 1) return false;
  if (!Number.isSafeInteger(remaining) || (remaining as number) < 0 || (remaining as number) > (limit as number)) return false;
  if (allowed ? retryAfter !== 0 : !(retryAfter > 0)) return false;
  return resetAfter >= 0 && resetAfter < Infinity;
}

/** The results of a plain or group result as the builders must read them, or `undefined` when it is neither. */
function limitsOf(value: unknown): { top: Plain; results: Plain[]; binding: number } | undefined {
  if (!isConsistent(value)) return undefined;
  const { results, names, binding } = value as unknown as Record<string, unknown>;
  if (results === undefined) return names === undefined && binding === undefined ? { top: value, results: [value], binding: 0 } : undefined;
  if (!Array.isArray(results) || results.length === 0 || !results.every(isConsistent)) return undefined;
  if (!Array.isArray(names) || names.length !== results.length || !names.every((n) => typeof n === 'string')) return undefined;
  if (!Number.isInteger(binding) || (binding as number) < 0 || (binding as number) >= results.length) return undefined;
  if ((results[binding as number] as Plain).limit !== value.limit) return undefined;
  if (value.allowed && !results.every((m: Plain) => m.allowed)) return undefined;
  return { top: value, results, binding: binding as number };
}

const SF_MAX = 999_999_999_999_999;
const whole = (seconds: number): number => (seconds > 0 ? Math.min(Math.ceil(seconds), SF_MAX) : 0);
const delay = (seconds: number): number => Math.max(1, whole(seconds));

/** The fields sent say what the (consistent) input says: the same limits, counts and waits. */
function checkAgainstInput(headers: Record<string, string>, input: unknown, standard: boolean, legacy: boolean): void {
  const limits = limitsOf(input);
  expect(limits, 'a builder sent fields for an inconsistent result').toBeDefined();
  const { top, results, binding } = limits as NonNullable<typeof limits>;
  if (standard) {
    const policies = parseList(headers['RateLimit-Policy'] as string);
    const items = parseList(headers.RateLimit as string);
    expect(policies.length).toBe(results.length);
    results.forEach((r, i) => {
      expect(integerParam(policies[i] as Item, 'q')).toBe(Math.min(r.limit, SF_MAX));
      // `|| 0`: a remaining of -0 is sent as 0.
      expect(integerParam(items[i] as Item, 'r')).toBe(Math.min(r.remaining, SF_MAX) || 0);
      const t = !r.allowed && r.retryAfter !== Infinity ? delay(r.retryAfter) : whole(r.resetAfter);
      expect(integerParam(items[i] as Item, 't')).toBe(t);
    });
  }
  // Retry-After exactly when the request was refused and waiting helps, never shorter than the wait.
  if (!top.allowed && top.retryAfter !== Infinity) expect(headers['Retry-After']).toBe(String(delay(top.retryAfter)));
  else expect(headers['Retry-After']).toBeUndefined();
  if (legacy) {
    const bound = results[binding] as Plain;
    expect(headers['X-RateLimit-Limit']).toBe(String(bound.limit));
    expect(headers['X-RateLimit-Remaining']).toBe(String(top.remaining));
    expect(Number(headers['X-RateLimit-Remaining'])).toBeLessThanOrEqual(Number(headers['X-RateLimit-Limit']));
    expect(headers['X-RateLimit-Reset']).toBe(String(whole(bound.resetAfter)));
  }
}

describe('a header builder either throws a RateWarden error or sends only valid fields', () => {
  it('the strict parser accepts what RFC 8941 allows and refuses the issue\'s fields', () => {
    expect(parseList('"a";q=1;w=60, "b\\"c";q=0;w=1').length).toBe(2);
    for (const bad of ['"a";q=N@N', '"a";r=-5;t=1"x', '"a";q=1;w=-', '"a";q=1.5;w=1.', '"a",', ' "a"', '"a";q=1234567890123456', '"é"', '"a";Q=1']) {
      expect(() => parseList(bad), bad).toThrow(/invalid Structured Field List/);
    }
    // NaN (a Token), -5 and 1.5 are valid Structured Fields, but not what `r` and `q` may be.
    expect(() => {
      checkHeaders({ 'RateLimit-Policy': '"a";q=NaN;w=1', RateLimit: '"a";r=1;t=1' }, true, false);
    }).toThrow();
    expect(() => {
      checkHeaders({ 'RateLimit-Policy': '"a";q=1.5;w=1', RateLimit: '"a";r=1;t=1' }, true, false);
    }).toThrow();
    expect(() => {
      checkHeaders({ 'RateLimit-Policy': '"a";q=1;w=1', RateLimit: '"a";r=-5;t=1' }, true, false);
    }).toThrow();
  });

  const hostileNumber = fc.oneof(
    { weight: 6, arbitrary: fc.nat(1_000) },
    { weight: 2, arbitrary: fc.double() },
    {
      weight: 3,
      arbitrary: fc.constantFrom(NaN, Infinity, -Infinity, -0, 0, 1, 1.5, -5, 2 ** 53, 2 ** 53 - 1, 999_999_999_999_999, 1e15, 1e21, 1e300, 5e-324),
    },
  );
  const hostile = fc.oneof(
    { weight: 12, arbitrary: hostileNumber },
    { weight: 1, arbitrary: fc.anything() },
  );
  const flag = fc.oneof({ weight: 10, arbitrary: fc.boolean() }, { weight: 1, arbitrary: fc.anything() });
  /** A result as RateLimitResult documents it: its fields in range and consistent. */
  const validResult = fc
    .record({
      allowed: fc.boolean(),
      limit: fc.oneof(fc.integer({ min: 1, max: 1_000 }), fc.constantFrom(1, 2 ** 53 - 1, 999_999_999_999_999, 1e15)),
      remaining: fc.nat(),
      wait: fc.oneof(fc.constant(Infinity), fc.double({ min: Number.MIN_VALUE, noNaN: true })),
      resetAfter: fc.double({ min: 0, noNaN: true, noDefaultInfinity: true }),
      // A store's failure policy (`fail-closed` refusals are answered 503).
      degraded: fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 2, arbitrary: fc.constantFrom('fail-closed', 'fail-open', 'local') }),
    })
    .map(({ wait, degraded, ...r }) => ({
      ...r,
      remaining: r.remaining % (r.limit + 1),
      retryAfter: r.allowed ? 0 : wait,
      ...(degraded === undefined ? {} : { degraded }),
    }));
  /** Fields each in range, but inconsistent with one another (or a limit of 0). */
  const inconsistentResult = fc.oneof(
    validResult.map((r) => (r.allowed ? { ...r, retryAfter: 5 } : { ...r, retryAfter: 0 })),
    validResult.map((r) => ({ ...r, limit: 0, remaining: 0 })),
  );
  const hostileResult = fc.record({ allowed: flag, remaining: hostile, retryAfter: hostile, limit: hostile, resetAfter: hostile });
  const resultArb = fc.oneof({ weight: 6, arbitrary: validResult }, { weight: 1, arbitrary: inconsistentResult }, { weight: 3, arbitrary: hostileResult });
  /** A group result as RateLimitGroup builds one (see GroupResult), from its members' results. */
  const consistentGroup = (results: readonly { allowed: boolean; remaining: number; retryAfter: number; limit: number; resetAfter: number }[], names: unknown[], allowed: boolean) => {
    const members = allowed ? results.map((r) => ({ ...r, allowed: true, retryAfter: 0 })) : results;
    const refusedAll = !allowed && members.every((r) => r.allowed);
    const list = refusedAll ? [{ ...(members[0] as (typeof members)[number]), allowed: false, retryAfter: 1 }, ...members.slice(1)] : members;
    let binding = 0;
    list.forEach((r, i) => {
      const b = list[binding] as (typeof list)[number];
      if (allowed ? r.remaining < b.remaining : r.retryAfter > b.retryAfter) binding = i;
    });
    return {
      allowed,
      remaining: Math.min(...list.map((r) => r.remaining)),
      retryAfter: allowed ? 0 : Math.max(...list.map((r) => r.retryAfter)),
      limit: (list[binding] as (typeof list)[number]).limit,
      resetAfter: Math.max(...list.map((r) => r.resetAfter)),
      results: list,
      names,
      binding,
    };
  };
  const nameArb = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom('default', 'per-second', 'q"uote', 'back\\slash', '', ' ', '~!#') },
    { weight: 1, arbitrary: fc.constantFrom('é', 'tab\t', 'nul\0', 'del\x7f') },
    { weight: 1, arbitrary: fc.string() },
    { weight: 1, arbitrary: fc.string({ unit: 'binary' }) },
  );
  const policyArb = fc.record(
    { windowSeconds: fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 1, max: 3600 }) }, { weight: 1, arbitrary: hostileNumber }), name: nameArb },
    { requiredKeys: ['windowSeconds'] },
  );
  /** A result (plain or group) with policies: usually one per result, sometimes not. */
  const caseArb = fc.integer({ min: 0, max: 3 }).chain((n) =>
    fc.tuple(
      n === 0
        ? resultArb
        : fc.oneof(
            {
              weight: 3,
              arbitrary: fc
                .tuple(fc.array(validResult, { minLength: n, maxLength: n }), fc.array(nameArb, { minLength: n, maxLength: n }), fc.boolean())
                .map(([results, names, allowed]) => consistentGroup(results, names, allowed)),
            },
            {
              weight: 2,
              arbitrary: fc
                .tuple(resultArb, fc.array(resultArb, { minLength: n, maxLength: n }), fc.array(nameArb, { minLength: n, maxLength: n }), fc.oneof({ weight: 4, arbitrary: fc.nat(n - 1) }, { weight: 1, arbitrary: hostile }))
                .map(([top, results, names, binding]) => ({ ...top, results, names, binding })),
            },
          ),
      fc.oneof(
        { weight: 4, arbitrary: n === 0 ? policyArb : fc.array(policyArb, { minLength: n, maxLength: n }) },
        { weight: 1, arbitrary: fc.oneof(policyArb, fc.array(policyArb, { maxLength: 3 }), hostile) },
      ),
    ),
  );
  const options = fc.record({ standard: fc.option(flag, { nil: undefined }), legacy: fc.option(flag, { nil: undefined }) });

  /**
   * A RateWarden error, with its stable code and a message naming what it expected (or, for an
   * unknown option key, the key and the options it is not one of).
   */
  const isRateWardenError = (error: unknown): boolean =>
    (error instanceof RateWardenTypeError || error instanceof RateWardenRangeError) &&
    (/^Expected `[^`]+` to be /.test(error.message) || /^Unknown option `.*` in /s.test(error.message));

  it('rateLimitHeaders: for arbitrary (hostile) results, policies and options', () => {
    let sent = 0;
    fc.assert(
      fc.property(caseArb, options, ([r, policy], { standard, legacy }) => {
        let headers: Record<string, string>;
        try {
          headers = rateLimitHeaders(r as unknown as RateLimitResult, { policy, standard, legacy } as unknown as RateLimitHeadersOptions);
        } catch (error) {
          expect(isRateWardenError(error), String(error)).toBe(true);
          return;
        }
        sent++;
        checkHeaders(headers, (standard as boolean | undefined) ?? true, (legacy as boolean | undefined) ?? false);
        checkAgainstInput(headers, r, (standard as boolean | undefined) ?? true, (legacy as boolean | undefined) ?? false);
      }),
      { numRuns: 5000 },
    );
    // The generators reach the success path often enough for the check to mean something.
    expect(sent).toBeGreaterThan(500);
  });

  it('rateLimitProblem: for arbitrary (hostile) results', () => {
    let sent = 0;
    fc.assert(
      fc.property(caseArb, ([r]) => {
        let problem: ReturnType<typeof rateLimitProblem>;
        try {
          problem = rateLimitProblem(r as unknown as RateLimitResult);
        } catch (error) {
          expect(isRateWardenError(error), String(error)).toBe(true);
          return;
        }
        expect(problem.detail).not.toMatch(/NaN|Infinity|e\+|-\d/);
        // Only for a consistent, refused result; and it says what the result says.
        const limits = limitsOf(r);
        expect(limits, 'a problem body for an inconsistent result').toBeDefined();
        const { top, results } = limits as NonNullable<typeof limits>;
        expect(top.allowed).toBe(false);
        expect(problem.retryAfter).toBe(top.retryAfter === Infinity ? undefined : delay(top.retryAfter));
        // A 503 exactly when only store failures refused it and waiting helps (the model).
        const refusing = top.degraded === 'fail-closed' ? [top] : results.filter((m) => !m.allowed);
        const byStore = top.retryAfter !== Infinity && (top.degraded === 'fail-closed' || (refusing.length > 0 && refusing.every((m) => m.degraded === 'fail-closed')));
        if (byStore) {
          expect(problem.status).toBe(503);
          expect(problem.title).toBe('Rate limit store unavailable');
          expect(problem.detail).toContain("store could not be reached, not because the client exceeded the limit");
        } else {
          expect(problem.status).toBe(429);
          expect(problem.detail).toContain(`limit of ${top.limit} `);
        }
        sent++;
        if (problem.retryAfter !== undefined) {
          expect(Number.isSafeInteger(problem.retryAfter) && problem.retryAfter >= 1 && problem.retryAfter <= 999_999_999_999_999).toBe(true);
        }
      }),
      { numRuns: 3000 },
    );
    expect(sent).toBeGreaterThan(300);
  });
});

describe('the header builders name what is wrong, exactly (from mutation testing)', () => {
  const refused = { allowed: false, remaining: 0, retryAfter: 2, limit: 5, resetAfter: 2 };
  const policy = { windowSeconds: 60 };
  const message = (f: () => unknown): string => {
    try {
      f();
    } catch (error) {
      return `${(error as Error).constructor.name}: ${(error as Error).message}`;
    }
    return 'no error';
  };
  it.each<[string, () => unknown, string]>([
    ['options not an object', () => rateLimitHeaders(refused, 7 as never), 'RateWardenTypeError: Expected `options` to be an object with a `policy`, got `7` (number)'],
    ['problem type not a string', () => rateLimitProblem(refused, { type: 5 as never }), 'RateWardenTypeError: Expected `type` to be a string (a URI), got `5` (number)'],
    ['problem title not a string', () => rateLimitProblem(refused, { title: 5 as never }), 'RateWardenTypeError: Expected `title` to be a string, got `5` (number)'],
    ['policy not an object', () => rateLimitHeaders(refused, { policy: 'x' as never }), 'RateWardenTypeError: Expected `policy` to be a RateLimitPolicy ({ windowSeconds, name? }) or an array of them, got `"x"` (string)'],
    ['a policy of an array not an object', () => rateLimitHeaders(refused, { policy: [3 as never] }), 'RateWardenTypeError: Expected `policy[0]` to be a RateLimitPolicy, got `3` (number)'],
    ['two policies for one limit', () => rateLimitHeaders(refused, { policy: [policy, policy] }), 'RateWardenRangeError: Expected `policy` to be 1 policy (one per limit of the result), got `2` (number)'],
    ['a policy name not a string', () => rateLimitHeaders(refused, { policy: { windowSeconds: 60, name: 4 as never } }), 'RateWardenTypeError: Expected `policy[0].name` to be a string of printable ASCII, got `4` (number)'],
    ['a count not a number', () => rateLimitHeaders({ ...refused, remaining: '1' as never }, { policy }), 'RateWardenTypeError: Expected `result.remaining` to be a non-negative safe integer, at most `limit` (5), got `"1"` (string)'],
  ])('%s', (_label, f, expected) => {
    expect(message(f)).toBe(expected);
  });

  it('a group: its names are checked even when every policy has its own; the count of policies; a non-ASCII group name', () => {
    const group = (names: unknown[]) => ({ ...refused, results: [refused, refused], names, binding: 0 });
    expect(message(() => rateLimitHeaders(group([7, 'b']) as never, { policy: [{ windowSeconds: 60, name: 'a' }, { windowSeconds: 60, name: 'b' }] }))).toBe(
      'RateWardenTypeError: Expected `result.names[0]` to be a string of printable ASCII, got `7` (number)',
    );
    expect(message(() => rateLimitHeaders(group(['a', 'b']) as never, { policy: [policy] }))).toBe(
      'RateWardenRangeError: Expected `policy` to be 2 policies (one per limit of the result), got `1` (number)',
    );
    expect(message(() => rateLimitHeaders(group(['é', 'b']) as never, { policy: [policy, policy] }))).toBe(
      'RateWardenRangeError: Expected `result.names[0]` to be a string of printable ASCII (0x20-0x7E), got `"é"` (string)',
    );
  });

  it('a time that is a numeric string is a TypeError, not coerced', () => {
    expect(message(() => rateLimitHeaders({ ...refused, resetAfter: '2' as never }, { policy }))).toBe(
      'RateWardenTypeError: Expected `result.resetAfter` to be a finite non-negative number of seconds, got `"2"` (string)',
    );
  });

  it('group names that are not strings are a TypeError naming the name', () => {
    const group = { ...refused, results: [refused], names: [7], binding: 0 };
    expect(message(() => rateLimitHeaders(group as never, { policy: [policy] }))).toMatch(/^RateWardenTypeError: Expected `result\.names\[0\]` to be a string of printable ASCII/);
  });
});
