// Tiers: a limit chosen per user by `limitFor`.
import { describe, expect, it } from 'vitest';
import { GCRA, type QuotaOptions, RateLimiter, type RateLimitStrategy, SlidingWindowCounter, SlidingWindowLog, type SlidingWindowLogState, TokenBucket, type User } from '../../src/index.js';

interface Customer extends User {
  readonly plan: 'free' | 'pro';
}
const TIERS: Record<Customer['plan'], QuotaOptions> = {
  free: { threshold: 60, windowSeconds: 60 },
  pro: { threshold: 600, windowSeconds: 60 },
};

function tiered(plans: Map<string, Customer['plan']>, strategy?: ConstructorParameters<typeof RateLimiter>[0]['strategy']) {
  const clock = { now: 0 };
  const limiter = new RateLimiter({
    threshold: 10,
    windowSeconds: 60,
    clock: () => clock.now,
    ...(strategy ? { strategy } : {}),
    limitFor: (_user, key) => {
      const plan = plans.get(key);
      return plan === undefined ? undefined : TIERS[plan];
    },
  });
  return { clock, limiter };
}

describe('tiers (limitFor)', () => {
  it('applies each user its plan, and the default to users without one; results carry the limit', () => {
    const plans = new Map<string, Customer['plan']>([['free-user', 'free'], ['pro-user', 'pro']]);
    const { limiter } = tiered(plans);
    const count = (key: string) => {
      let allowed = 0;
      for (let i = 0; i < 1_000; i++) if (limiter.allowRequestSync(key).allowed) allowed++;
      return allowed;
    };
    expect(count('free-user')).toBe(60);
    expect(count('pro-user')).toBe(600);
    expect(count('anonymous')).toBe(10);
    expect(limiter.peekSync('pro-user').limit).toBe(600);
    expect(limiter.peekSync('free-user').limit).toBe(60);
    expect(limiter.peekSync('anonymous').limit).toBe(10);
  });

  it('receives the user object as passed, so the plan can travel with it', () => {
    const limiter = new RateLimiter<unknown>({
      threshold: 1,
      windowSeconds: 60,
      clock: () => 0,
      limitFor: (user) => (typeof user === 'object' && (user as Customer).plan === 'pro' ? TIERS.pro : TIERS.free),
    });
    const pro: Customer = { id: 'p', plan: 'pro' };
    expect(limiter.allowRequestSync(pro).remaining).toBe(599);
    expect(limiter.allowRequestSync('x').remaining).toBe(59);
  });

  it('downgrade mid-window: the requests already in the window count against the new threshold', () => {
    const plans = new Map<string, Customer['plan']>([['u', 'pro']]);
    const { clock, limiter } = tiered(plans);
    for (let i = 0; i < 100; i++) {
      clock.now = i * 100; // 100 requests over 10 s
      expect(limiter.allowRequestSync('u').allowed).toBe(true);
    }
    plans.set('u', 'free');
    clock.now = 10_000;
    const r = limiter.allowRequestSync('u');
    expect(r).toMatchObject({ allowed: false, remaining: 0, limit: 60 });
    // It fits again once fewer than 60 remain: when the 41st oldest (at 4,000 ms) expires at 64 s.
    expect(r.retryAfter).toBe(54);
    clock.now = 63_999;
    expect(limiter.allowRequestSync('u').allowed).toBe(false);
    clock.now = 64_000;
    expect(limiter.allowRequestSync('u')).toMatchObject({ allowed: true, remaining: 0, limit: 60 });
  });

  it('upgrade mid-window: the larger threshold applies at once', () => {
    const plans = new Map<string, Customer['plan']>([['u', 'free']]);
    const { limiter } = tiered(plans);
    for (let i = 0; i < 60; i++) limiter.allowRequestSync('u');
    expect(limiter.allowRequestSync('u').allowed).toBe(false);
    plans.set('u', 'pro');
    expect(limiter.allowRequestSync('u')).toMatchObject({ allowed: true, remaining: 539, limit: 600 });
  });

  it('token bucket and GCRA: a downgrade caps the burst at the new threshold', () => {
    for (const strategy of [new TokenBucket(), new GCRA()]) {
      const plans = new Map<string, Customer['plan']>([['u', 'pro']]);
      const { limiter } = tiered(plans, strategy);
      expect(limiter.allowRequestSync('u').remaining).toBe(599);
      plans.set('u', 'free');
      let allowed = 0;
      for (let i = 0; i < 100; i++) if (limiter.allowRequestSync('u').allowed) allowed++;
      expect(allowed).toBeLessThanOrEqual(60);
      expect(allowed).toBeGreaterThanOrEqual(59);
    }
  });

  it('token bucket and GCRA keep the used share of the burst across a tier change, both ways', () => {
    for (const make of [(): RateLimitStrategy<unknown> => new TokenBucket(), (): RateLimitStrategy<unknown> => new GCRA()]) {
      let tier: QuotaOptions = { threshold: 10, windowSeconds: 60 };
      const clock = { now: 0 };
      const limiter = new RateLimiter({ threshold: 1, windowSeconds: 1, strategy: make(), clock: () => clock.now, limitFor: () => tier });
      for (let i = 0; i < 5; i++) limiter.allowRequestSync('u');
      tier = { threshold: 100, windowSeconds: 60 }; // half the burst was used: half of 100 is left
      expect(limiter.peekSync('u').remaining).toBe(50);
      tier = { threshold: 10, windowSeconds: 60 };
      for (let i = 0; i < 5; i++) limiter.allowRequestSync('u'); // now all used
      tier = { threshold: 10, windowSeconds: 1 }; // all used: wait one emission interval, 0.1 s
      const r = limiter.allowRequestSync('u');
      expect(r).toMatchObject({ allowed: false, retryAfter: 0.1 });
      clock.now += 100;
      expect(limiter.allowRequestSync('u').allowed).toBe(true);
      tier = { threshold: 10, windowSeconds: 60 };
      let admitted = 0;
      for (let t = 0; t < 59_000; t += 100) {
        clock.now += 100;
        if (limiter.allowRequestSync('u').allowed) admitted++;
      }
      expect(admitted).toBeLessThanOrEqual(20); // the new limit's bound: 2 × 10 per 60 s
    }
  });

  it("cleanUp sweeps each key with its own tier's window", () => {
    const long: QuotaOptions = { threshold: 5, windowSeconds: 3_600 };
    const clock = { now: 0 };
    const limiter = new RateLimiter({
      threshold: 5,
      windowSeconds: 60,
      strategy: new SlidingWindowCounter(),
      clock: () => clock.now,
      limitFor: (_u, key) => (key === 'hourly' ? long : undefined),
    });
    limiter.allowRequestSync('hourly');
    limiter.allowRequestSync('minutely');
    clock.now = 200_000; // past two minute-windows, well within an hour
    expect(limiter.cleanUp()).toBe(1);
    expect(limiter.size).toBe(1);
    expect(limiter.allowRequestSync('hourly').remaining).toBe(3);
  });

  it('an invalid tier fails the call with an error naming it, changing nothing', async () => {
    let tier: unknown = { threshold: 0, windowSeconds: 60 };
    const limiter = new RateLimiter({ threshold: 2, windowSeconds: 60, clock: () => 0, limitFor: () => tier as QuotaOptions });
    expect(() => limiter.allowRequestSync('a')).toThrow(RangeError);
    expect(() => limiter.allowRequestSync('a')).toThrow(/`limitFor\(\).threshold` to be a positive safe integer, got `0`/);
    tier = { threshold: 5, windowSeconds: '60' };
    await expect(limiter.allowRequest('a')).rejects.toThrow(/`limitFor\(\).windowSeconds` .* got `"60"` \(string\)/);
    tier = 42;
    expect(() => limiter.allowRequestSync('a')).toThrow(TypeError);
    tier = { threshold: 2 ** 21, windowSeconds: 1 };
    expect(() => limiter.allowRequestSync('a')).toThrow(/at most 1048576/);
    expect(limiter.size).toBe(0);
    expect(() => new RateLimiter({ threshold: 1, windowSeconds: 1, limitFor: 'pro' as never })).toThrow(/`limitFor` to be a function/);
  });

  it('an error thrown by limitFor reaches the caller and changes nothing', async () => {
    const limiter = new RateLimiter({
      threshold: 2,
      windowSeconds: 60,
      clock: () => 0,
      limitFor: (_u, key) => {
        if (key === 'boom') throw new Error('plan lookup failed');
        return undefined;
      },
    });
    await expect(limiter.allowRequest('boom')).rejects.toThrow('plan lookup failed');
    expect(limiter.allowRequestSync('ok').remaining).toBe(1);
    expect(limiter.size).toBe(1);
  });

  it('a first request that fails under a tier leaves no note of that tier: sweeps judge the key by the quota it was admitted under (found by review)', () => {
    const inner = new SlidingWindowLog();
    let boom = true;
    const flaky: RateLimitStrategy<SlidingWindowLogState> = {
      name: 'flaky',
      createState: (quota) => inner.createState(quota),
      consume: (state, now, cost, quota) => {
        if (boom) {
          boom = false;
          throw new Error('boom');
        }
        return inner.consume(state, now, cost, quota);
      },
      peek: (state, now, cost, quota) => inner.peek(state, now, cost, quota),
      sweep: (state, now, quota) => inner.sweep(state, now, quota),
    };
    let now = 0;
    const short = { threshold: 1, windowSeconds: 1 };
    let tier: QuotaOptions | undefined = short;
    const limiter = new RateLimiter({ threshold: 1, windowSeconds: 10, strategy: flaky, clock: () => now, limitFor: () => tier });
    expect(() => limiter.allowRequestSync('k')).toThrow('boom');
    tier = undefined; // the default, 1 per 10 s, from now on
    expect(limiter.allowRequestSync('k').allowed).toBe(true);
    now = 2_000;
    expect(limiter.cleanUp()).toBe(0); // its window (10 s) is still live
    expect(limiter.allowRequestSync('k').allowed).toBe(false);
  });
});

describe('a tier object is validated once: the same object always gives the same quota', () => {
  it('changing the object after its first use changes nothing; a new object is a new quota', () => {
    const tier = { threshold: 2, windowSeconds: 60 };
    let chosen: QuotaOptions = tier;
    const limiter = new RateLimiter({ threshold: 1, windowSeconds: 1, clock: () => 0, limitFor: () => chosen });
    expect(limiter.allowRequestSync('a')).toMatchObject({ allowed: true, remaining: 1, limit: 2, resetAfter: 60 });
    tier.threshold = 0; // invalid now, but already validated: the quota is the one built then
    tier.windowSeconds = 1;
    expect(limiter.allowRequestSync('a')).toMatchObject({ allowed: true, remaining: 0, limit: 2, resetAfter: 60 });
    chosen = { threshold: 5, windowSeconds: 60 };
    expect(limiter.allowRequestSync('a')).toMatchObject({ allowed: true, remaining: 2, limit: 5 });
    chosen = { threshold: 0, windowSeconds: 60 };
    expect(() => limiter.allowRequestSync('a')).toThrow(RangeError);
  });

  it('limitFor returning neither an object nor undefined fails with a TypeError naming limitFor()', () => {
    let chosen: unknown = null;
    const limiter = new RateLimiter({ threshold: 1, windowSeconds: 1, clock: () => 0, limitFor: () => chosen as QuotaOptions });
    for (const [value, got] of [
      [null, '`null`'],
      [42, '`42` (number)'],
      ['pro', '`"pro"` (string)'],
    ] as const) {
      chosen = value;
      expect(() => limiter.allowRequestSync('a')).toThrow(TypeError);
      expect(() => limiter.peekSync('a')).toThrow(`Expected \`limitFor()\` to be a QuotaOptions object or undefined, got ${got}`);
    }
    expect(limiter.size).toBe(0);
  });
});
