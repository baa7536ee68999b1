// The default clock is read at decision time, so fake timers installed after import reach it.
import FakeTimers from '@sinonjs/fake-timers';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RateLimiter } from '../../src/index.js';

describe('the default clock under fake timers', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('follows @sinonjs/fake-timers installed after the limiter was created', async () => {
    const limiter = new RateLimiter({ threshold: 2, windowSeconds: 60 });
    const clock = FakeTimers.withGlobal(globalThis).install({ toFake: ['performance', 'Date'] });
    try {
      expect((await limiter.allowRequest('a')).allowed).toBe(true);
      clock.tick(30_000);
      expect((await limiter.allowRequest('a')).allowed).toBe(true);
      const third = await limiter.allowRequest('a');
      expect(third.allowed).toBe(false);
      expect(third.retryAfter).toBe(30);
      clock.tick(29_999);
      expect(limiter.allowRequestSync('a').allowed).toBe(false);
      clock.tick(1);
      expect(limiter.allowRequestSync('a').allowed).toBe(true);
      clock.tick(60_000);
      expect(limiter.cleanUp()).toBe(1);
    } finally {
      clock.uninstall();
    }
  });

  it("follows vitest's fake timers with performance faked", () => {
    const limiter = new RateLimiter({ threshold: 1, windowSeconds: 1 });
    vi.useFakeTimers({ toFake: ['performance', 'Date', 'setTimeout'] });
    expect(limiter.allowRequestSync('a').allowed).toBe(true);
    vi.advanceTimersByTime(999);
    expect(limiter.allowRequestSync('a').retryAfter).toBeCloseTo(0.001, 9);
    vi.advanceTimersByTime(1);
    expect(limiter.allowRequestSync('a').allowed).toBe(true);
  });
});

describe("the limiter's reading of its clock", () => {
  const finite = (got: string): string => `Expected \`clock\` to return a finite number of milliseconds, got ${got}`;

  it('fails on NaN and -Infinity, as the first reading or after others, with the one message', () => {
    for (const bad of [Number.NaN, -Infinity]) {
      let value = bad;
      const limiter = new RateLimiter({ threshold: 1, windowSeconds: 1, clock: () => value });
      const got = `\`${String(bad)}\` (number)`;
      expect(() => limiter.allowRequestSync('a')).toThrow(RangeError);
      expect(() => limiter.allowRequestSync('a')).toThrow(finite(got));
      value = 5;
      expect(limiter.allowRequestSync('a')).toMatchObject({ allowed: true, resetAfter: 1 });
      value = bad;
      expect(() => limiter.peekSync('a')).toThrow(finite(got));
      expect(() => limiter.cleanUp()).toThrow(finite(got));
      expect(limiter.size).toBe(1);
    }
  });

  it('fails on +Infinity as a clock too coarse for any window', () => {
    const limiter = new RateLimiter({ threshold: 1, windowSeconds: 2, clock: () => Infinity });
    expect(() => limiter.allowRequestSync('a')).toThrow(RangeError);
    expect(() => limiter.allowRequestSync('a')).toThrow(
      'Expected `clock` to return a finite number of milliseconds from -2^47 to 2^47 (about ±4,460 years; the window is 2000 ms), got `Infinity` (number)',
    );
    expect(limiter.size).toBe(0);
  });

  it('counts a reading earlier than the latest one used as that latest one (time stands still)', () => {
    let value = 5_000;
    const limiter = new RateLimiter({ threshold: 2, windowSeconds: 1, clock: () => value });
    expect(limiter.allowRequestSync('a')).toEqual({ allowed: true, remaining: 1, retryAfter: 0, limit: 2, resetAfter: 1 });
    value = 4_000;
    expect(limiter.allowRequestSync('a')).toEqual({ allowed: true, remaining: 0, retryAfter: 0, limit: 2, resetAfter: 1 });
    value = -1e12;
    expect(limiter.allowRequestSync('a')).toEqual({ allowed: false, remaining: 0, retryAfter: 1, limit: 2, resetAfter: 1 });
    value = 5_999;
    expect(limiter.peekSync('a')).toMatchObject({ allowed: false, retryAfter: 0.001 });
    value = 6_000;
    expect(limiter.peekSync('a')).toMatchObject({ allowed: true, remaining: 2 });
  });
});
