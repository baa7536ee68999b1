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
