// The quota value: one builder, one set of rules and messages, for the limiter, its tiers, the
// replay command and the HTTP header policies.
import { describe, expect, it } from 'vitest';
import { ErrorCode, RateLimiter, createQuota } from '../../src/index.js';
import { checkSeconds } from '../../src/quota.js';

function caught(fn: () => unknown): Error & { code?: string } {
  try {
    fn();
  } catch (error) {
    return error as Error & { code?: string };
  }
  throw new Error('expected a throw');
}

describe('createQuota', () => {
  it('builds a frozen quota with the window in whole milliseconds', () => {
    const quota = createQuota({ threshold: 300, windowSeconds: 60 });
    expect(quota).toEqual({ threshold: 300, windowMs: 60_000, windowSeconds: 60, tier: undefined, blockMs: 0, extendBlock: false });
    expect(Object.isFrozen(quota)).toBe(true);
    // 1.017 s is exactly 1017 ms, not 1016.9999999999999.
    expect(createQuota({ threshold: 1, windowSeconds: 1.017 }).windowMs).toBe(1017);
    expect(createQuota({ threshold: 1, windowSeconds: 0.333 }).windowMs).toBe(333);
    expect(createQuota({ threshold: 1, windowSeconds: 1e9 }).windowMs).toBe(1e12);
    expect(createQuota({ threshold: 1, windowSeconds: 0.001 }).windowMs).toBe(1);
    expect(createQuota({ threshold: 2 ** 53 - 1, windowSeconds: 1 }).threshold).toBe(2 ** 53 - 1);
  });

  const cases: [string, unknown, typeof TypeError | typeof RangeError, string][] = [
    ['options null', null, TypeError, 'Expected `options` to be an object, got `null` (null)'],
    ['threshold a string', { threshold: '5', windowSeconds: 1 }, TypeError, 'Expected `threshold` to be a positive safe integer, got `"5"` (string)'],
    ['threshold 0', { threshold: 0, windowSeconds: 1 }, RangeError, 'Expected `threshold` to be a positive safe integer, got `0` (number)'],
    ['threshold 2^53', { threshold: 2 ** 53, windowSeconds: 1 }, RangeError, 'Expected `threshold` to be a positive safe integer, got `9007199254740992` (number)'],
    ['window missing', { threshold: 1 }, TypeError, 'Expected `windowSeconds` to be a finite number of seconds from 0.001 to 1000000000, got `undefined` (undefined)'],
    ['window below 1 ms', { threshold: 1, windowSeconds: 0.0009 }, RangeError, 'Expected `windowSeconds` to be a finite number of seconds from 0.001 to 1000000000, got `0.0009` (number)'],
    ['window NaN', { threshold: 1, windowSeconds: NaN }, RangeError, 'Expected `windowSeconds` to be a finite number of seconds from 0.001 to 1000000000, got `NaN` (number)'],
    ['window whose milliseconds overflow', { threshold: 1, windowSeconds: 1e308 }, RangeError, 'Expected `windowSeconds` to be a finite number of seconds from 0.001 to 1000000000, got `1e+308` (number)'],
  ];
  for (const [name, options, type, message] of cases) {
    it(`throws a ${type.name} for ${name}, with the one message`, () => {
      const error = caught(() => createQuota(options as never));
      expect(error).toBeInstanceOf(type);
      expect(error.message).toBe(message);
      expect(error.code).toBe(type === TypeError ? ErrorCode.InvalidType : ErrorCode.OutOfRange);
    });
  }

  it("checks a strategy's bounds, naming the strategy", () => {
    const bounds = { name: 'capped', maxThreshold: 10, maxWindowSeconds: 60 };
    expect(createQuota({ threshold: 10, windowSeconds: 60 }, bounds).threshold).toBe(10);
    expect(caught(() => createQuota({ threshold: 11, windowSeconds: 1 }, bounds)).message).toBe(
      'Expected `threshold` to be at most 10 with the capped strategy (its maxThreshold), got `11` (number)',
    );
    expect(caught(() => createQuota({ threshold: 1, windowSeconds: 61 }, bounds)).message).toBe(
      'Expected `windowSeconds` to be a finite number of seconds from 0.001 to 60 with the capped strategy, got `61` (number)',
    );
  });

  it('names the fields as the caller asks (a tier, a command-line option)', () => {
    const names = { threshold: '--threshold', windowSeconds: '--window' };
    expect(caught(() => createQuota({ threshold: 0, windowSeconds: 1 }, undefined, names)).message).toBe(
      'Expected `--threshold` to be a positive safe integer, got `0` (number)',
    );
    expect(caught(() => createQuota({ threshold: 1, windowSeconds: 'abc' } as never, undefined, names)).message).toBe(
      'Expected `--window` to be a finite number of seconds from 0.001 to 1000000000, got `"abc"` (string)',
    );
  });

  it('is the rule of the constructor and of tiers: the same message for the same mistake', () => {
    const direct = caught(() => createQuota({ threshold: 1, windowSeconds: 0 })).message;
    expect(caught(() => new RateLimiter({ threshold: 1, windowSeconds: 0 })).message).toBe(direct);
    const tiered = new RateLimiter({ threshold: 1, windowSeconds: 1, limitFor: () => ({ threshold: 1, windowSeconds: 0 }) });
    expect(caught(() => tiered.allowRequestSync('a')).message).toBe(direct.replace('`windowSeconds`', '`limitFor().windowSeconds`'));
  });
});

describe('checkSeconds (windows, sweep intervals, header policies)', () => {
  it('accepts 0.001 s up to the bound, and says the bound when it has one', () => {
    expect(checkSeconds('w', 0.001)).toBe(0.001);
    expect(checkSeconds('w', 5, 5)).toBe(5);
    expect(caught(() => checkSeconds('w', 6, 5)).message).toBe('Expected `w` to be a finite number of seconds from 0.001 to 5, got `6` (number)');
    expect(caught(() => checkSeconds('w', 6, 5, 'the x strategy')).message).toBe(
      'Expected `w` to be a finite number of seconds from 0.001 to 5 with the x strategy, got `6` (number)',
    );
    expect(caught(() => checkSeconds('w', Infinity)).message).toBe('Expected `w` to be a finite number of seconds, at least 0.001, got `Infinity` (number)');
  });
});
