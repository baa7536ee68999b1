// Shadow decisions and the labels of `decision` listeners (DecisionInfo): the `shadow` request
// option, the limiter's `name` option, the quota's `tier`. Injected clock, no wall time.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  FixedWindow,
  GCRA,
  RateLimitGroup,
  RateLimiter,
  SlidingWindowCounter,
  TokenBucket,
  type DecisionInfo,
  type RateLimitResult,
  type RateLimitStore,
} from '../../src/index.js';

type Seen = [key: string, allowed: boolean, cost: number, info: DecisionInfo];

function listen(limiter: RateLimiter): Seen[] {
  const seen: Seen[] = [];
  limiter.on('decision', (key, result, cost, info) => seen.push([key, result.allowed, cost, info]));
  return seen;
}

describe('shadow decisions', () => {
  it('decide and record as usual, count a rejection in shadowRejected too, and tell listeners', async () => {
    let now = 0;
    const limiter = new RateLimiter({ threshold: 2, windowSeconds: 10, clock: () => now });
    const seen = listen(limiter);
    expect((await limiter.allowRequest('a', { shadow: true })).allowed).toBe(true);
    expect(limiter.allowRequestSync('a', { shadow: true }).remaining).toBe(0);
    const refused = await limiter.allowRequest('a', { shadow: true });
    expect(refused).toMatchObject({ allowed: false, remaining: 0, retryAfter: 10 });
    expect((await limiter.allowRequest('a')).allowed).toBe(false);
    expect(limiter.stats()).toMatchObject({ allowed: 2, rejected: 2, shadowRejected: 1 });
    expect(seen.map(([, allowed, , info]) => [allowed, info.shadow])).toEqual([
      [true, true],
      [true, true],
      [false, true],
      [false, false],
    ]);
    now = 10_000;
    expect((await limiter.allowRequest('a', { shadow: false })).allowed).toBe(true);
    expect(limiter.stats().shadowRejected).toBe(1);
  });

  it.each([
    ['sliding-window log', () => undefined],
    ['fixed window', () => new FixedWindow()],
    ['sliding-window counter', () => new SlidingWindowCounter()],
    ['token bucket', () => new TokenBucket()],
    ['GCRA', () => new GCRA()],
  ])('leave the %s in the state enforcing leaves (property)', (_name, strategy) => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ dt: fc.integer({ min: 0, max: 700 }), key: fc.constantFrom('a', 'b'), cost: fc.integer({ min: 1, max: 3 }) }), {
          maxLength: 60,
        }),
        (steps) => {
          let now = 0;
          const options = { threshold: 4, windowSeconds: 2, clock: () => now };
          const build = (): RateLimiter => {
            const s = strategy();
            return s === undefined ? new RateLimiter(options) : new RateLimiter<unknown>({ ...options, strategy: s });
          };
          const enforced = build();
          const shadowed = build();
          let rejected = 0;
          for (const { dt, key, cost } of steps) {
            now += dt;
            const a = enforced.allowRequestSync(key, { cost });
            const b = shadowed.allowRequestSync(key, { cost, shadow: true });
            expect(b).toEqual(a);
            if (!a.allowed) rejected++;
          }
          expect(shadowed.stats().shadowRejected).toBe(rejected);
          expect(enforced.stats().shadowRejected).toBe(0);
        },
      ),
    );
  });

  it('through a group: every member that rejected counts a shadow rejection', async () => {
    const clock = (): number => 0;
    const burst = new RateLimiter({ threshold: 1, windowSeconds: 1, clock, name: 'burst' });
    const hourly = new RateLimiter({ threshold: 5, windowSeconds: 3600, clock, name: 'hourly' });
    const group = new RateLimitGroup([burst, hourly]);
    const burstSeen = listen(burst);
    const hourlySeen = listen(hourly);
    expect((await group.allowRequest('u', { shadow: true })).allowed).toBe(true);
    expect(group.allowRequestSync('u', { shadow: true }).allowed).toBe(false);
    expect(burst.stats()).toMatchObject({ allowed: 1, rejected: 1, shadowRejected: 1 });
    expect(hourly.stats()).toMatchObject({ allowed: 1, rejected: 0, shadowRejected: 0 });
    expect(burstSeen.map(([, allowed, , info]) => [allowed, info])).toEqual([
      [true, { shadow: true, name: 'burst', tier: undefined }],
      [false, { shadow: true, name: 'burst', tier: undefined }],
    ]);
    expect(hourlySeen.map(([, , , info]) => info.name)).toEqual(['hourly']);
  });

  it('through a store: counted when the store settles', async () => {
    const store: RateLimitStore = {
      name: 'refusing',
      consume: async () => ({ allowed: false, remaining: 0, retryAfter: 1, limit: 1, resetAfter: 1 }) satisfies RateLimitResult,
      peek: async () => ({ allowed: false, remaining: 0, retryAfter: 1, limit: 1, resetAfter: 1 }),
    };
    const limiter = new RateLimiter({ threshold: 1, windowSeconds: 1, strategy: store, name: 'stored' });
    const seen = listen(limiter);
    await limiter.allowRequest('k', { shadow: true });
    await limiter.allowRequest('k');
    expect(limiter.stats()).toMatchObject({ rejected: 2, shadowRejected: 1 });
    expect(seen.map(([, , , info]) => info)).toEqual([
      { shadow: true, name: 'stored', tier: undefined },
      { shadow: false, name: 'stored', tier: undefined },
    ]);
  });

  it('are not counted by peek, which takes the flag and counts nothing', async () => {
    const limiter = new RateLimiter({ threshold: 1, windowSeconds: 1, clock: () => 0 });
    limiter.allowRequestSync('k');
    expect((await limiter.peek('k', { shadow: true })).allowed).toBe(false);
    expect(limiter.peekSync('k', { shadow: true }).allowed).toBe(false);
    expect(limiter.stats()).toMatchObject({ rejected: 0, shadowRejected: 0 });
  });

  it('refuse a shadow flag that is not a boolean, changing nothing', async () => {
    const limiter = new RateLimiter({ threshold: 1, windowSeconds: 1, clock: () => 0 });
    const message = 'Expected `shadow` to be a boolean or undefined, got `1` (number)';
    await expect(limiter.allowRequest('k', { shadow: 1 as unknown as boolean })).rejects.toThrow(TypeError);
    await expect(limiter.allowRequest('k', { shadow: 1 as unknown as boolean })).rejects.toThrow(message);
    expect(() => limiter.allowRequestSync('k', { shadow: 'yes' as unknown as boolean })).toThrow(TypeError);
    const group = new RateLimitGroup([limiter]);
    await expect(group.allowRequest('k', { shadow: null as unknown as boolean })).rejects.toThrow(TypeError);
    // peek records nothing, but takes the same options, checked alike (as the group's peek does).
    await expect(group.peek('k', { shadow: 0 as unknown as boolean })).rejects.toThrow(TypeError);
    await expect(limiter.peek('k', { shadow: 1 as unknown as boolean })).rejects.toThrow(message);
    expect(() => limiter.peekSync('k', { shadow: 'yes' as unknown as boolean })).toThrow(TypeError);
    expect(limiter.stats()).toMatchObject({ allowed: 0, rejected: 0, keys: 0 });
    expect(limiter.allowRequestSync('k').remaining).toBe(0);
  });
});

describe('names and tiers', () => {
  it('tell listeners the limiter name and the tier limitFor chose (the limiter tier by default)', () => {
    const PRO = { threshold: 3, windowSeconds: 1, tier: 'pro' };
    const ANONYMOUS = { threshold: 1, windowSeconds: 1 };
    const limiter = new RateLimiter({
      threshold: 2,
      windowSeconds: 1,
      name: 'api',
      tier: 'free',
      clock: () => 0,
      limitFor: (_user, key) => (key.startsWith('pro:') ? PRO : key === 'anon' ? ANONYMOUS : undefined),
    });
    expect(limiter.name).toBe('api');
    const seen = listen(limiter);
    limiter.allowRequestSync('pro:1');
    limiter.allowRequestSync('free:1');
    limiter.allowRequestSync('anon');
    expect(seen.map(([key, , , info]) => [key, info])).toEqual([
      ['pro:1', { shadow: false, name: 'api', tier: 'pro' }],
      ['free:1', { shadow: false, name: 'api', tier: 'free' }],
      ['anon', { shadow: false, name: 'api', tier: undefined }],
    ]);
    expect(new RateLimiter({ threshold: 1, windowSeconds: 1 }).name).toBeUndefined();
  });

  it('refuse a name or tier that is not a non-empty string', () => {
    expect(() => new RateLimiter({ threshold: 1, windowSeconds: 1, name: 3 as unknown as string })).toThrow(
      expect.objectContaining({ name: 'TypeError', message: 'Expected `name` to be a non-empty string or undefined, got `3` (number)' }),
    );
    expect(() => new RateLimiter({ threshold: 1, windowSeconds: 1, name: '' })).toThrow(RangeError);
    expect(() => new RateLimiter({ threshold: 1, windowSeconds: 1, tier: '' })).toThrow(RangeError);
    expect(() => new RateLimiter({ threshold: 1, windowSeconds: 1, tier: false as unknown as string })).toThrow(
      expect.objectContaining({ name: 'TypeError', message: 'Expected `tier` to be a non-empty string or undefined, got `false` (boolean)' }),
    );
    const limiter = new RateLimiter({ threshold: 1, windowSeconds: 1, clock: () => 0, limitFor: () => ({ threshold: 1, windowSeconds: 1, tier: '' }) });
    expect(() => limiter.allowRequestSync('k')).toThrow(/`limitFor\(\)\.tier`/);
    expect(limiter.stats()).toMatchObject({ allowed: 0, rejected: 0, keys: 0 });
  });
});
