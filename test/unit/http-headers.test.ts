// rateLimitHeaders and rateLimitProblem: exact field values for single and group results.
import { describe, expect, it } from 'vitest';
import { GCRA, RateLimitGroup, RateLimiter, rateLimitHeaders, rateLimitProblem, type RateLimitResult } from '../../src/index.js';

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
    expect(() => rateLimitProblem(result({}), { title: 5 as never })).toThrow(TypeError);
  });
});

it('rateLimitProblem names a result or options that is not an object', () => {
  expect(() => rateLimitProblem(null as never)).toThrow(expect.objectContaining({ name: 'TypeError', code: 'ERR_RATEWARDEN_INVALID_TYPE', message: 'Expected `result` to be a RateLimitResult, got `null` (null)' }));
  const rejected: RateLimitResult = { allowed: false, remaining: 0, retryAfter: 2, limit: 1, resetAfter: 2 };
  expect(() => rateLimitProblem(rejected, null as never)).toThrow(/`options` to be an object or undefined, got `null`/);
});
