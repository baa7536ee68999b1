// Testing code that uses a limiter, with fake timers: the README shows this file verbatim.
import FakeTimers from '@sinonjs/fake-timers';
import { afterEach, expect, it, vi } from 'vitest';
import { RateLimiter } from 'ratewarden';

afterEach(() => {
  vi.useRealTimers();
});

it('lets a user in again once the window has passed (vitest fake timers)', () => {
  vi.useFakeTimers({ toFake: ['performance', 'Date'] });
  const limiter = new RateLimiter({ threshold: 2, windowSeconds: 60 });
  expect(limiter.allowRequestSync('alice').allowed).toBe(true);
  expect(limiter.allowRequestSync('alice').allowed).toBe(true);
  expect(limiter.allowRequestSync('alice')).toMatchObject({ allowed: false, retryAfter: 60 });
  vi.advanceTimersByTime(60_000);
  expect(limiter.allowRequestSync('alice').allowed).toBe(true);
});

it('does the same with @sinonjs/fake-timers', async () => {
  const clock = FakeTimers.install({ toFake: ['performance', 'Date'] });
  try {
    const limiter = new RateLimiter({ threshold: 1, windowSeconds: 1 });
    expect((await limiter.allowRequest('bob')).allowed).toBe(true);
    clock.tick(999);
    expect((await limiter.allowRequest('bob')).allowed).toBe(false);
    clock.tick(1);
    expect((await limiter.allowRequest('bob')).allowed).toBe(true);
  } finally {
    clock.uninstall();
  }
});
