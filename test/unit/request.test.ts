// Request parsing (src/request.ts): what a caller passes to a decision — `user`, `{ cost }`, the
// options of waitForSlot — through the public API, on every method that takes it.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RateLimiter, type RequestOptions, type WaitOptions } from '../../src/index.js';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
});

afterEach(() => {
  vi.useRealTimers();
});

function limiter(): RateLimiter {
  return new RateLimiter({ threshold: 3, windowSeconds: 10, clock: () => Date.now() });
}

describe('options without a cost count as one request', () => {
  // `{ cost: undefined }` comes from JavaScript (exactOptionalPropertyTypes forbids it in TypeScript).
  const cases: [string, RequestOptions][] = [
    ['{}', {}],
    ['{ cost: undefined }', { cost: undefined } as unknown as RequestOptions],
  ];
  for (const [name, options] of cases) {
    it(`${name}: on allowRequest, allowRequestSync, peek, peekSync and waitForSlot`, async () => {
      const l = limiter();
      expect(await l.peek('a', options)).toEqual({ allowed: true, remaining: 3, retryAfter: 0, limit: 3, resetAfter: 0 });
      expect(await l.allowRequest('a', options)).toEqual({ allowed: true, remaining: 2, retryAfter: 0, limit: 3, resetAfter: 10 });
      expect(l.allowRequestSync('a', options)).toEqual({ allowed: true, remaining: 1, retryAfter: 0, limit: 3, resetAfter: 10 });
      expect(l.peekSync('a', options)).toEqual({ allowed: true, remaining: 1, retryAfter: 0, limit: 3, resetAfter: 10 });
      expect(await l.waitForSlot('a', options)).toEqual({ allowed: true, remaining: 0, retryAfter: 0, limit: 3, resetAfter: 10 });
      expect(l.stats()).toMatchObject({ allowed: 3, rejected: 0, waiting: 0 });
    });
  }

  it('a cost is counted as that many requests on every method', async () => {
    const l = limiter();
    expect(l.peekSync('a', { cost: 3 })).toMatchObject({ allowed: true, remaining: 3 });
    expect(l.allowRequestSync('a', { cost: 2 })).toMatchObject({ allowed: true, remaining: 1 });
    expect(await l.peek('a', { cost: 2 })).toMatchObject({ allowed: false, remaining: 1, retryAfter: 10 });
    expect(await l.allowRequest('a', { cost: 2 })).toMatchObject({ allowed: false, remaining: 1, retryAfter: 10 });
    await expect(l.waitForSlot('a', { cost: 2, maxWaitSeconds: 9 })).rejects.toMatchObject({ retryAfter: 10, cost: 2 });
    expect(await l.waitForSlot('a', { cost: 1 })).toMatchObject({ allowed: true, remaining: 0 });
  });
});

describe('the key of a user', () => {
  it('is the string itself, or the id of a User object (other fields ignored)', () => {
    const l = limiter();
    l.allowRequestSync('alice');
    expect(l.allowRequestSync({ id: 'alice', name: 'Alice' }).remaining).toBe(1);
    expect(l.peekSync({ id: 'alice' }).remaining).toBe(1);
    expect(l.reset({ id: 'alice', name: 'someone else' })).toBe(true);
    expect(l.size).toBe(0);
  });

  it('rejects an empty id or string with messages naming user or user.id', () => {
    const l = limiter();
    expect(() => l.peekSync('')).toThrow(RangeError);
    expect(() => l.peekSync('')).toThrow('Expected `user` to be a non-empty string, got `""` (string)');
    expect(() => l.peekSync({ id: '' })).toThrow(RangeError);
    expect(() => l.peekSync({ id: '' })).toThrow('Expected `user.id` to be a non-empty string, got `""` (string)');
    expect(() => l.peekSync({ id: 5 } as never)).toThrow(TypeError);
    expect(() => l.peekSync({ id: 5 } as never)).toThrow('Expected `user.id` to be a non-empty string, got `5` (number)');
    expect(() => l.peekSync(null as never)).toThrow(TypeError);
    expect(() => l.peekSync(null as never)).toThrow(
      'Expected `user` to be a non-empty string or an object with a string `id`, got `null`',
    );
  });
});

describe('the options of waitForSlot', () => {
  it('accepts undefined members, a bound of 0 (a free slot only) and -0', async () => {
    const l = limiter();
    expect(await l.waitForSlot('a', { signal: undefined, maxWaitSeconds: undefined, cost: undefined } as unknown as WaitOptions)).toMatchObject({ remaining: 2 });
    expect(await l.waitForSlot('a', { maxWaitSeconds: 0 })).toMatchObject({ remaining: 1 });
    expect(await l.waitForSlot('a', { maxWaitSeconds: -0 })).toMatchObject({ remaining: 0 });
    await expect(l.waitForSlot('a', { maxWaitSeconds: 0 })).rejects.toMatchObject({ code: 'ERR_RATEWARDEN_WAIT_TOO_LONG', maxWaitSeconds: 0 });
  });

  it('rejects a maxWaitSeconds that is not a number of at least 0, naming it', async () => {
    const l = limiter();
    const expected = 'a number of seconds, at least 0 (Infinity for no bound)';
    await expect(l.waitForSlot('a', { maxWaitSeconds: -0.001 })).rejects.toThrow(RangeError);
    await expect(l.waitForSlot('a', { maxWaitSeconds: -0.001 })).rejects.toThrow(`Expected \`maxWaitSeconds\` to be ${expected}, got \`-0.001\` (number)`);
    await expect(l.waitForSlot('a', { maxWaitSeconds: -Infinity })).rejects.toThrow(RangeError);
    await expect(l.waitForSlot('a', { maxWaitSeconds: null as never })).rejects.toThrow(TypeError);
    await expect(l.waitForSlot('a', { maxWaitSeconds: '1' as never })).rejects.toThrow(`Expected \`maxWaitSeconds\` to be ${expected}, got \`"1"\` (string)`);
    expect(l.size).toBe(0);
  });

  it('recognises a signal by its shape: aborted a boolean, addEventListener and removeEventListener functions', async () => {
    const l = limiter();
    const like = { aborted: false, reason: undefined, addEventListener: () => {}, removeEventListener: () => {} };
    // A signal of another realm (the same shape) is taken.
    expect(await l.waitForSlot('a', { signal: like as unknown as AbortSignal })).toMatchObject({ allowed: true, remaining: 2 });
    const bad: unknown[] = [
      { ...like, aborted: 'no' },
      { ...like, addEventListener: undefined },
      { ...like, removeEventListener: 1 },
      () => {},
      'signal',
      null,
    ];
    for (const signal of bad) {
      const error = await l.waitForSlot('a', { signal: signal as AbortSignal }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TypeError);
      expect((error as Error).message).toMatch(/^Expected `signal` to be an AbortSignal or undefined, got /);
    }
    // An aborted signal of that shape rejects with its reason, before anything is decided.
    const reason = new Error('aborted elsewhere');
    await expect(l.waitForSlot('a', { signal: { ...like, aborted: true, reason } as unknown as AbortSignal })).rejects.toBe(reason);
    expect(l.stats()).toMatchObject({ allowed: 1, rejected: 0, waiting: 0 });
  });

  it('checks the cost first, and rejects options that are not an object', async () => {
    const l = limiter();
    await expect(l.waitForSlot('a', { cost: 0, signal: 'x' as never })).rejects.toThrow('Expected `cost` to be a positive safe integer, got `0` (number)');
    await expect(l.waitForSlot('a', 5 as never)).rejects.toThrow('Expected `options` to be an object or undefined, got `5` (number)');
    await expect(l.waitForSlot('a', null as never)).rejects.toThrow(TypeError);
  });
});
