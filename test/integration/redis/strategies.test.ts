// The Redis strategies against a real redis-server, with both maintained clients.
// Edge cases are driven by an injected clock (`time: 'limiter'`); the server-clock mode is tested
// with limiters whose own clocks disagree.
//
// Why one file of about 560 lines: one redis-server and one pair of clients serve every case
// (starting them per file would cost more than the cases); the cases are the strategies'
// public behaviour on Redis, the contract's cases aside (strategy-contract.test.ts).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { RateLimitGroup, RateLimiter, type QuotaOptions } from '../../../src/index.js';
import {
  RedisGCRA,
  RateWardenRedisCommandError,
  RateWardenRedisReplyError,
  RedisSlidingWindowLog,
  toRedisAdapter,
  type RedisAdapter,
  type RedisStrategyOptions,
} from '../../../src/redis/index.js';
import { CLIENTS, RedisServer, countingAdapter, type TestClient } from '../../support/redis-server.js';

let server: RedisServer;
beforeAll(async () => {
  server = await RedisServer.start();
});
afterAll(async () => {
  await server?.stop();
});

/** Redis Cluster's hash tag rule: the part between the first `{` and the next `}`, if non-empty. */
function hashTag(key: string): string {
  const open = key.indexOf('{');
  if (open === -1) return key;
  const close = key.indexOf('}', open + 1);
  if (close === -1 || close === open + 1) return key;
  return key.slice(open + 1, close);
}

describe.each(CLIENTS)('with %s', (_name, connect) => {
  let c: TestClient;
  let now = 0;
  const clock = (): number => now;

  beforeAll(async () => {
    c = await connect(server.url);
  });
  afterAll(async () => {
    await c?.close();
  });
  beforeEach(async () => {
    await c.command('FLUSHALL');
    now = 1_000;
  });

  function log(threshold: number, windowSeconds: number, options: Partial<RedisStrategyOptions> = {}): RateLimiter {
    return new RateLimiter({
      threshold,
      windowSeconds,
      clock,
      strategy: new RedisSlidingWindowLog({ client: c.client, prefix: 't:', time: 'limiter', ...options }),
    });
  }

  describe('RedisSlidingWindowLog on an injected clock', () => {
    it('allows a first request with the whole window left, and records one member', async () => {
      const limiter = log(3, 10);
      expect(await limiter.allowRequest('alice')).toEqual({
        allowed: true,
        remaining: 2,
        retryAfter: 0,
        limit: 3,
        resetAfter: 10,
      });
      expect(await c.command('ZCARD', 't:{alice}:log')).toBe(1);
      expect(limiter.size).toBe(0); // the state is in Redis, not in the limiter
    });

    it('allows exactly `threshold` at one instant, then rejects with the whole window to wait', async () => {
      const limiter = log(3, 10);
      const results = [];
      for (let i = 0; i < 5; i++) results.push(await limiter.allowRequest('alice'));
      expect(results.map((r) => r.allowed)).toEqual([true, true, true, false, false]);
      expect(results.map((r) => r.remaining)).toEqual([2, 1, 0, 0, 0]);
      expect(results[3]).toEqual({ allowed: false, remaining: 0, retryAfter: 10, limit: 3, resetAfter: 10 });
      // Same-instant requests are distinct members; rejections record nothing.
      expect(await c.command('ZCARD', 't:{alice}:log')).toBe(3);
    });

    it('rejects 1 ms before the window has passed, and allows when it just has', async () => {
      const limiter = log(2, 10);
      await limiter.allowRequest('alice'); // t = 1000
      now = 4_000;
      await limiter.allowRequest('alice'); // t = 4000
      now = 10_999;
      expect(await limiter.allowRequest('alice')).toMatchObject({ allowed: false, retryAfter: 0.001, resetAfter: 3.001 });
      now = 11_000; // 1000 + 10 s: the first entry has expired (t <= now - window)
      expect(await limiter.allowRequest('alice')).toEqual({
        allowed: true,
        remaining: 0,
        retryAfter: 0,
        limit: 2,
        resetAfter: 10,
      });
      expect(await c.command('ZCARD', 't:{alice}:log')).toBe(2); // the expired entry was evicted
    });

    it('weighs requests by cost, and never allows a cost above the threshold', async () => {
      const limiter = log(5, 10);
      expect(await limiter.allowRequest('alice', { cost: 3 })).toMatchObject({ allowed: true, remaining: 2 });
      now = 2_000;
      expect(await limiter.allowRequest('alice', { cost: 3 })).toMatchObject({ allowed: false, remaining: 2, retryAfter: 9 });
      expect(await limiter.allowRequest('alice', { cost: 6 })).toMatchObject({ allowed: false, retryAfter: Infinity });
      expect(await limiter.allowRequest('alice', { cost: 2 })).toMatchObject({ allowed: true, remaining: 0 });
      expect(await c.command('ZCARD', 't:{alice}:log')).toBe(5);
    });

    it('peek reports without recording', async () => {
      const limiter = log(2, 10);
      await limiter.allowRequest('alice');
      expect(await limiter.peek('alice')).toMatchObject({ allowed: true, remaining: 1, resetAfter: 10 });
      expect(await limiter.peek('alice', { cost: 2 })).toMatchObject({ allowed: false, retryAfter: 10 });
      expect(await limiter.peek('bob')).toEqual({ allowed: true, remaining: 2, retryAfter: 0, limit: 2, resetAfter: 0 });
      expect(await c.command('ZCARD', 't:{alice}:log')).toBe(1);
      expect(await c.command('EXISTS', 't:{bob}:log')).toBe(0);
    });

    it('keeps members unique when many requests share one instant', async () => {
      const limiter = log(1_000, 10);
      await Promise.all(Array.from({ length: 250 }, () => limiter.allowRequest('alice', { cost: 2 })));
      expect(await c.command('ZCARD', 't:{alice}:log')).toBe(500);
      expect(await limiter.allowRequest('alice', { cost: 501 })).toMatchObject({ allowed: false, remaining: 500 });
    });

    it('applies a tier chosen per user (limitFor), on the same Redis key', async () => {
      const free: QuotaOptions = { threshold: 2, windowSeconds: 10 };
      const pro: QuotaOptions = { threshold: 4, windowSeconds: 10 };
      let tier = free;
      const limiter = new RateLimiter({
        threshold: 100,
        windowSeconds: 10,
        clock,
        limitFor: () => tier,
        strategy: new RedisSlidingWindowLog({ client: c.client, prefix: 't:', time: 'limiter' }),
      });
      await limiter.allowRequest('alice');
      await limiter.allowRequest('alice');
      expect(await limiter.allowRequest('alice')).toMatchObject({ allowed: false, limit: 2 });
      tier = pro; // an upgrade mid-window: the two requests already made count against the new limit
      expect(await limiter.allowRequest('alice')).toMatchObject({ allowed: true, remaining: 1, limit: 4 });
    });
  });

  describe('RedisGCRA on an injected clock', () => {
    it('allows a burst of `threshold`, then one per emission interval', async () => {
      const limiter = new RateLimiter({
        threshold: 4,
        windowSeconds: 8,
        clock,
        strategy: new RedisGCRA({ client: c.client, prefix: 't:', time: 'limiter' }),
      });
      const burst = [];
      for (let i = 0; i < 5; i++) burst.push(await limiter.allowRequest('alice'));
      expect(burst.map((r) => r.allowed)).toEqual([true, true, true, true, false]);
      expect(burst[4]).toMatchObject({ remaining: 0, retryAfter: 2, resetAfter: 8 });
      now += 1_999;
      expect(await limiter.allowRequest('alice')).toMatchObject({ allowed: false, retryAfter: 0.001 });
      now += 1;
      expect(await limiter.allowRequest('alice')).toMatchObject({ allowed: true, remaining: 0 });
      expect(await limiter.allowRequest('alice', { cost: 5 })).toMatchObject({ allowed: false, retryAfter: Infinity });
      // The state: four little-endian doubles (at, debt, threshold, window ms), read by Lua.
      const state = await c.command('EVAL', "local a, d, t, w = struct.unpack('<dddd', redis.call('GET', KEYS[1])) return { a, d, t, w }", '1', 't:{alice}:gcra');
      expect((state as unknown[]).slice(2).map(Number)).toEqual([4, 8000]);
    });
  });

  describe('on the Redis server clock', () => {
    it('shares one limit between limiters whose own clocks disagree by days', async () => {
      const strategy = (): RedisSlidingWindowLog => new RedisSlidingWindowLog({ client: c.client, prefix: 's:' });
      const a = new RateLimiter({ threshold: 5, windowSeconds: 60, clock: () => 0, strategy: strategy() });
      const b = new RateLimiter({ threshold: 5, windowSeconds: 60, clock: () => 3e8, strategy: strategy() });
      const results = [];
      for (let i = 0; i < 8; i++) results.push(await (i % 2 === 0 ? a : b).allowRequest('alice'));
      expect(results.filter((r) => r.allowed)).toHaveLength(5);
      const rejected = results.find((r) => !r.allowed);
      // The server's clock runs during the test: bounds wide enough for a stalled machine.
      expect(rejected?.retryAfter).toBeGreaterThan(50);
      expect(rejected?.retryAfter).toBeLessThanOrEqual(60);
    });

    it('sets every written key to expire when its window clears (no sweep needed)', async () => {
      const logLimiter = new RateLimiter({
        threshold: 5,
        windowSeconds: 30,
        strategy: new RedisSlidingWindowLog({ client: c.client, prefix: 's:' }),
      });
      const gcra = new RateLimiter({
        threshold: 5,
        windowSeconds: 30,
        strategy: new RedisGCRA({ client: c.client, prefix: 's:' }),
      });
      await logLimiter.allowRequest('alice');
      await gcra.allowRequest('alice');
      await gcra.allowRequest('alice');
      const logTtl = Number(await c.command('PTTL', 's:{alice}:log'));
      const gcraTtl = Number(await c.command('PTTL', 's:{alice}:gcra'));
      // (The server's clock runs during the test: lower bounds leave room for a stall.)
      expect(logTtl).toBeGreaterThan(20_000);
      expect(logTtl).toBeLessThanOrEqual(30_000);
      // GCRA: two of five per 30 s used: back to a full burst in 12 s.
      expect(gcraTtl).toBeGreaterThan(6_000);
      expect(gcraTtl).toBeLessThanOrEqual(12_000);
    });

    it('extends a log key\'s expiry when a longer window applies, even on a rejection', async () => {
      let tier: QuotaOptions = { threshold: 2, windowSeconds: 1 };
      const limiter = new RateLimiter({
        threshold: 2,
        windowSeconds: 1,
        limitFor: () => tier,
        strategy: new RedisSlidingWindowLog({ client: c.client, prefix: 's:' }),
      });
      await limiter.allowRequest('alice');
      await limiter.allowRequest('alice');
      expect(Number(await c.command('PTTL', 's:{alice}:log'))).toBeLessThanOrEqual(1_000);
      tier = { threshold: 2, windowSeconds: 30 };
      expect(await limiter.allowRequest('alice')).toMatchObject({ allowed: false });
      // The two entries now count for 30 s: Redis must keep them that long, not 1 s.
      expect(Number(await c.command('PTTL', 's:{alice}:log'))).toBeGreaterThan(20_000);
    });
  });

  describe('keys', () => {
    const ids = [
      'a{b}c',
      '}x',
      '{}',
      '%7b',
      'with space',
      'ünïcødé 用户 🙂',
      'x'.repeat(1_024),
      '\uD800', // lone surrogates: UTF-8 cannot carry them, so they are escaped
      '\uDC00',
    ];

    it('gives every id its own key, hash-tagged by the id, under the prefix', async () => {
      const logLimiter = log(2, 10);
      const gcra = new RateLimiter({
        threshold: 2,
        windowSeconds: 10,
        clock,
        strategy: new RedisGCRA({ client: c.client, prefix: 't:', time: 'limiter' }),
      });
      for (const id of ids) {
        expect(await logLimiter.allowRequest(id)).toMatchObject({ allowed: true, remaining: 1 });
        expect(await gcra.allowRequest(id)).toMatchObject({ allowed: true, remaining: 1 });
      }
      const all = (await c.command('KEYS', '*')) as string[];
      // With a client that re-sends (ioredis), each recorded decision also left its token.
      const tokens = all.filter((key) => key.includes(':call:'));
      const keys = all.filter((key) => !key.includes(':call:'));
      expect(tokens).toHaveLength(c.name === 'ioredis' ? ids.length * 2 : 0);
      expect(keys).toHaveLength(ids.length * 2);
      for (const key of keys) expect(key.startsWith('t:{')).toBe(true);
      // Each id's two keys share a hash tag (one Cluster slot), and no two ids do.
      const tags = new Map<string, string[]>();
      for (const key of keys) tags.set(hashTag(key), [...(tags.get(hashTag(key)) ?? []), key]);
      expect(tags.size).toBe(ids.length);
      for (const group of tags.values()) expect(group.sort().map((k) => k.slice(k.lastIndexOf(':')))).toEqual([':gcra', ':log']);
      // A token is in its decision's slot.
      for (const token of tokens) expect(tags.has(hashTag(token))).toBe(true);
      // Every id is limited on its own.
      for (const id of ids) {
        expect(await logLimiter.allowRequest(id)).toMatchObject({ allowed: true, remaining: 0 });
        expect(await logLimiter.allowRequest(id)).toMatchObject({ allowed: false });
      }
    });

    it('puts ids with braces under a tag equal to the escaped id', () => {
      const strategy = new RedisSlidingWindowLog({ client: c.client, prefix: 'p:' });
      expect(strategy.redisKey('a{b}c')).toBe('p:{a%7bb%7dc}:log');
      expect(hashTag(strategy.redisKey('}x'))).toBe('%7dx');
      expect(strategy.redisKey('100%')).toBe('p:{100%25}:log');
    });
  });

  describe('scripts', () => {
    it('falls back to EVAL after SCRIPT FLUSH (NOSCRIPT), then uses EVALSHA again', async () => {
      const adapter = countingAdapter(toRedisAdapter(c.client));
      const limiter = new RateLimiter({
        threshold: 3,
        windowSeconds: 10,
        clock,
        strategy: new RedisSlidingWindowLog({ client: adapter, prefix: 't:', time: 'limiter' }),
      });
      await limiter.allowRequest('alice'); // the script may or may not be cached yet
      await c.command('SCRIPT', 'FLUSH');
      const before = { ...adapter.calls };
      expect(await limiter.allowRequest('alice')).toMatchObject({ allowed: true, remaining: 1 });
      expect(adapter.calls.evalSha - before.evalSha).toBe(1);
      expect(adapter.calls.eval - before.eval).toBe(1);
      expect(await limiter.allowRequest('alice')).toMatchObject({ allowed: true, remaining: 0 });
      expect(adapter.calls.evalSha - before.evalSha).toBe(2);
      expect(adapter.calls.eval - before.eval).toBe(1);
    });

    it('makes one script call per decision', async () => {
      const adapter = countingAdapter(toRedisAdapter(c.client));
      const limiter = new RateLimiter({
        threshold: 50,
        windowSeconds: 10,
        strategy: new RedisSlidingWindowLog({ client: adapter, prefix: 't:' }),
      });
      await limiter.allowRequest('warm'); // loads the script if the server does not have it
      const before = { ...adapter.calls };
      await c.command('CONFIG', 'RESETSTAT');
      for (let i = 0; i < 20; i++) await limiter.allowRequest(`k${i % 4}`);
      const stats = String(await c.command('INFO', 'commandstats'));
      // Redis counts the commands a script runs too: leave those out, and the stats calls.
      const inScript = new Set(['time', 'zrange', 'zrangebyscore', 'zrevrangebyscore', 'zremrangebyscore', 'zcount', 'zcard', 'zadd', 'pexpire', 'get', 'set']);
      const sent = [...stats.matchAll(/cmdstat_([\w|]+):calls=(\d+)/g)]
        .filter(([, name]) => !inScript.has(name as string) && !/^(config|info)\b/.test(name as string))
        .map(([, name, n]) => `${name}=${n}`);
      expect(sent).toEqual(['evalsha=20']);
      expect(adapter.calls).toEqual({ evalSha: before.evalSha + 20, eval: before.eval });
    });
  });

  describe('groups (all or nothing)', () => {
    it('decides every limit in one script call, and records none when one rejects', async () => {
      const adapter = countingAdapter(toRedisAdapter(c.client));
      const perMinute = new RateLimiter({
        threshold: 3,
        windowSeconds: 60,
        clock,
        strategy: new RedisSlidingWindowLog({ client: adapter, prefix: 'minute:', time: 'limiter' }),
      });
      const perSecond = new RateLimiter({
        threshold: 2,
        windowSeconds: 1,
        clock,
        strategy: new RedisGCRA({ client: adapter, prefix: 'second:', time: 'limiter' }),
      });
      const group = new RateLimitGroup([
        { limiter: perMinute, name: 'per-minute' },
        { limiter: perSecond, name: 'per-second' },
      ]);
      const first = await group.allowRequest('alice');
      expect(first).toMatchObject({ allowed: true, remaining: 1, binding: 1 });
      // The handshake (the first call on a client learns the server's clock), then one call.
      expect(adapter.calls.evalSha).toBe(2);
      expect(await group.allowRequest('alice')).toMatchObject({ allowed: true, remaining: 0 });
      const third = await group.allowRequest('alice');
      expect(third).toMatchObject({ allowed: false, binding: 1, retryAfter: 0.5 });
      expect(third.results[0]).toMatchObject({ allowed: true, remaining: 1 });
      // The per-minute log did not record the rejected request.
      expect(await c.command('ZCARD', 'minute:{alice}:log')).toBe(2);
      expect(adapter.calls.evalSha).toBe(4);
      now += 1_000;
      expect(await group.allowRequest('alice')).toMatchObject({ allowed: true, remaining: 0, binding: 0 });
      expect(await group.allowRequest('alice')).toMatchObject({ allowed: false, binding: 0, retryAfter: 59 });
      expect(await c.command('ZCARD', 'minute:{alice}:log')).toBe(3);
    });

    it('refuses two limits on one Redis key, changing nothing', async () => {
      const strategy = new RedisSlidingWindowLog({ client: c.client, prefix: 'same:', time: 'limiter' });
      const a = new RateLimiter({ threshold: 3, windowSeconds: 60, clock, strategy });
      const b = new RateLimiter({ threshold: 5, windowSeconds: 1, clock, strategy });
      const group = new RateLimitGroup([a, b]);
      await expect(group.allowRequest('alice')).rejects.toThrow(/distinct stored keys.*prefix/);
      expect(await c.command('EXISTS', 'same:{alice}:log')).toBe(0);
    });

    it('refuses two limits on one Redis key through different clients or time modes too', async () => {
      const other = toRedisAdapter(c.client);
      const viaAdapter = countingAdapter(other); // another client object, same server
      const a = new RateLimiter({ threshold: 5, windowSeconds: 10, strategy: new RedisSlidingWindowLog({ client: c.client, prefix: 'dup:' }) });
      const b = new RateLimiter({ threshold: 2, windowSeconds: 10, strategy: new RedisSlidingWindowLog({ client: viaAdapter, prefix: 'dup:' }) });
      const d = new RateLimiter({ threshold: 2, windowSeconds: 10, clock, strategy: new RedisSlidingWindowLog({ client: c.client, prefix: 'dup:', time: 'limiter' }) });
      await expect(new RateLimitGroup([a, b]).allowRequest('alice')).rejects.toThrow(/distinct stored keys.*dup:\{alice\}:log.*prefix/);
      await expect(new RateLimitGroup([a, d]).allowRequest('alice')).rejects.toThrow(RangeError);
      expect(await c.command('EXISTS', 'dup:{alice}:log')).toBe(0);
      expect(viaAdapter.calls).toEqual({ evalSha: 0, eval: 0 });
    });

    it('works in a group with an in-memory limit too (checked, then recorded)', async () => {
      const redis = log(2, 60);
      const memory = new RateLimiter({ threshold: 5, windowSeconds: 60, clock });
      const group = new RateLimitGroup([redis, memory]);
      const decided = [];
      for (let i = 0; i < 3; i++) decided.push((await group.allowRequest('alice')).allowed);
      expect(decided).toEqual([true, true, false]);
      expect(memory.peekSync('alice').remaining).toBe(3);
    });
  });
});

describe('options', () => {
  const client = { evalsha: () => Promise.resolve(), eval: () => Promise.resolve() };
  it.each([
    [{ client, prefix: 'a{b' }, RangeError, /`prefix`.*without `\{` or `\}`.*"a\{b"/],
    [{ client, prefix: 7 }, TypeError, /`prefix`/],
    [{ client }, TypeError, /`prefix`.*without.*`undefined`/],
    [{ client, prefix: 'p:', timeoutSeconds: 0 }, RangeError, /`timeoutSeconds`.*0\.001.*`0`/],
    [{ client, prefix: 'p:', timeoutSeconds: Number.NaN }, RangeError, /`timeoutSeconds`/],
    [{ client, prefix: 'p:', timeoutSeconds: '1' }, TypeError, /`timeoutSeconds`/],
    [{ client, prefix: 'p:', onFailure: 'maybe' }, RangeError, /`onFailure`.*"fail-closed".*"maybe"/],
    [{ client, prefix: 'p:', time: 'local' }, RangeError, /`time`.*"redis" or "limiter"/],
    [{ client, prefix: 'p:', onError: 'log' }, TypeError, /`onError`/],
    [{ client, prefix: null }, TypeError, /`prefix`.*`null`/],
    [{ client, prefix: 'p:', timeoutSeconds: null }, TypeError, /`timeoutSeconds`.*`null`/],
    [{ client, prefix: 'p:', onFailure: null }, TypeError, /`onFailure`.*`null`/],
    [{ client, prefix: 'p:', time: null }, TypeError, /`time`.*`null`/],
    [{ client: {}, prefix: 'p:' }, TypeError, /`client`.*node-redis, ioredis or @upstash\/redis/],
    [{ client: null, prefix: 'p:' }, TypeError, /`client`/],
  ])('rejects %o', (options, type, message) => {
    expect(() => new RedisSlidingWindowLog(options as unknown as RedisStrategyOptions)).toThrow(type);
    expect(() => new RedisGCRA(options as unknown as RedisStrategyOptions)).toThrow(message);
  });

  it('caps the log threshold at 10,000 (one member per unit) and both windows at 10^8 s', () => {
    const strategy = new RedisSlidingWindowLog({ client, prefix: 'p:' });
    expect(() => new RateLimiter({ threshold: 10_001, windowSeconds: 1, strategy })).toThrow(/`threshold`.*at most 10000/);
    expect(() => new RateLimiter({ threshold: 1, windowSeconds: 1e8 + 1, strategy })).toThrow(
      /`windowSeconds`.*0\.001 to 100000000 with the redis-sliding-window-log strategy, got `100000001`/,
    );
    const tiered = new RateLimiter({
      threshold: 1,
      windowSeconds: 1,
      strategy: new RedisGCRA({ client, prefix: 'p:' }),
      limitFor: () => ({ threshold: 1, windowSeconds: 9.3e12 }),
    });
    // The tier is checked at the decision, before Redis is called: nothing is written.
    return expect(tiered.allowRequest('a')).rejects.toThrow(/`limitFor\(\)\.windowSeconds`.*100000000/);
    expect(() => new RateLimiter({ threshold: 1e9, windowSeconds: 1, strategy: new RedisGCRA({ client, prefix: 'p:' }) })).not.toThrow();
  });
});

describe('replies that are not what the script returns (a misbehaving adapter)', () => {
  /**
   * An adapter that answers every decision with `reply`, as a broken client or proxy might (and
   * the handshake, which the first call sends, with a server time).
   */
  function answering(reply: unknown): RedisAdapter {
    const answer = async (_script: string, _keys: readonly string[], args: readonly string[]): Promise<unknown> =>
      args[0] === 't' ? [0] : reply;
    return { ratewardenAdapter: true, evalSha: answer, eval: answer };
  }
  const circular: unknown[] = [1];
  circular.push(circular);

  it.each([
    // Per decision: wait (ticks of 2^-10 ms; 0 allowed, -1 never, -2 failed), remaining, the
    // state (the log: reset in ticks; GCRA: debt in ticks × threshold), shift (ticks); then the
    // server time. (Every case is wrong for both the log and GCRA, threshold 10 per 10 s.)
    ['remaining below 0', [0, -5, 0, 0, 0]],
    ['remaining above the limit', [0, 11, 0, 0, 0]],
    ['a wait below -2', [-5000, 0, 0, 0, 0]],
    ['a fractional wait', [1.5, 0, 0, 0, 0]],
    // (A wait or state beyond the window is a block's or a penalty's, issue 22: not wrong.)
    ['a wait beyond 2^53', [2 ** 53, 0, 0, 0, 0]],
    ['a negative state', [0, 3, -5000, 0, 0]],
    ['a state beyond 2^53', [0, 3, 2 ** 53, 0, 0]],
    ['a fractional state', [0, 3, 0.5, 0, 0]],
    // (A negative shift says a block's remaining time, on a refusal only.)
    ['a negative shift on an allowed entry', [0, 3, 0, -1, 0]],
    ['a fractional shift', [1024, 0, 0, 0.5, 0]],
    ['nulls', [null, null, null, null, 0]],
    ['empty strings', ['', '', '', '', 0]],
    ['nested arrays', [[0], [4], [0], [0], 0]],
    ['booleans', [true, 3, 0, 0, 0]],
    ['too few elements', [0, 3, 0, 0]],
    ['too many elements', [0, 3, 0, 0, 0, 0]],
    ['a server time that is not a number', [0, 3, 0, 0, 'soon']],
    ['a circular array', circular],
    ['not an array', 'OK'],
  ])('%s: a RateWardenRedisReplyError, through the failure policy', async (_label, reply) => {
    const errors: unknown[] = [];
    const strict = new RateLimiter({
      threshold: 10,
      windowSeconds: 10,
      strategy: new RedisSlidingWindowLog({ client: answering(reply), prefix: 'p:', onError: (e) => errors.push(e) }),
    });
    await expect(strict.allowRequest('alice')).rejects.toThrow(RateWardenRedisReplyError);
    const open = new RateLimiter({
      threshold: 10,
      windowSeconds: 10,
      strategy: new RedisGCRA({ client: answering(reply), prefix: 'p:', onFailure: 'fail-open', onError: (e) => errors.push(e) }),
    });
    expect(await open.allowRequest('alice')).toMatchObject({ allowed: true, degraded: 'fail-open' });
    expect(errors).toHaveLength(2);
    expect(errors.every((e) => e instanceof RateWardenRedisReplyError)).toBe(true);
  });

  it.each([
    ['not an array', 'OK'],
    ['an empty array', []],
    ['a decision\'s reply', [1, 3, 0, 0, 0, 0]],
    ['a time that is not a number', ['soon']],
  ])('a handshake answered with %s: a RateWardenRedisReplyError, and no decision sent', async (_label, reply) => {
    const sent: string[] = [];
    const answer = async (_script: string, _keys: readonly string[], args: readonly string[]): Promise<unknown> => {
      sent.push(args[0] as string);
      return reply;
    };
    const limiter = new RateLimiter({
      threshold: 10,
      windowSeconds: 10,
      strategy: new RedisSlidingWindowLog({ client: { ratewardenAdapter: true, evalSha: answer, eval: answer }, prefix: 'p:', onFailure: 'local' }),
    });
    await expect(new RateLimiter({ threshold: 10, windowSeconds: 10, strategy: new RedisGCRA({ client: { ratewardenAdapter: true, evalSha: answer, eval: answer }, prefix: 'p:' }) }).allowRequest('alice')).rejects.toThrow(RateWardenRedisReplyError);
    expect(await limiter.allowRequest('alice')).toMatchObject({ allowed: true, remaining: 9, degraded: 'local' });
    // Only handshakes: a decision is never sent without a deadline.
    expect(sent).toEqual(['t', 't']);
  });

  it('accepts the replies the script does return, from either client shape', async () => {
    // Integers, as numbers (node-redis, ioredis) or decimal strings (a RESP2 adapter of one's own).
    const log = new RateLimiter({ threshold: 10, windowSeconds: 10, strategy: new RedisSlidingWindowLog({ client: answering([2_560_000, 0, 9_216_000, 0, 0]), prefix: 'p:' }) });
    expect(await log.allowRequest('alice')).toEqual({ allowed: false, remaining: 0, retryAfter: 2.5, limit: 10, resetAfter: 9 });
    const gcra = new RateLimiter({ threshold: 10, windowSeconds: 10, strategy: new RedisGCRA({ client: answering(['-1', '0', '15365120', '0', '0']), prefix: 'p:' }) });
    expect(await gcra.allowRequest('alice', { cost: 11 })).toEqual({ allowed: false, remaining: 0, retryAfter: Infinity, limit: 10, resetAfter: 1.5005 });
    const allowed = new RateLimiter({ threshold: 10, windowSeconds: 10, strategy: new RedisGCRA({ client: answering([0, 9, 10_240_000, 0, 0]), prefix: 'p:' }) });
    expect(await allowed.allowRequest('alice')).toEqual({ allowed: true, remaining: 9, retryAfter: 0, limit: 10, resetAfter: 1 });
  });

  it('fails one decision alone when Redis refused its command (-2, the message)', async () => {
    const errors: unknown[] = [];
    const limiter = new RateLimiter({
      threshold: 10,
      windowSeconds: 10,
      strategy: new RedisGCRA({ client: answering([-2, 'WRONGTYPE Operation against a key holding the wrong kind of value', 0, 0, 0]), prefix: 'p:', onError: (e) => errors.push(e) }),
    });
    await expect(limiter.allowRequest('alice')).rejects.toThrow(/^WRONGTYPE/);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(RateWardenRedisCommandError);
    expect((errors[0] as RateWardenRedisCommandError).code).toBe('ERR_RATEWARDEN_REDIS_COMMAND');
  });

  it('ignores an onError that rejects (no unhandled rejection)', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => {
      unhandled.push(reason);
    };
    process.on('unhandledRejection', onUnhandled);
    try {
      const limiter = new RateLimiter({
        threshold: 10,
        windowSeconds: 10,
        strategy: new RedisGCRA({
          client: answering('garbage'),
          prefix: 'p:',
          onFailure: 'fail-closed',
          onError: async () => {
            throw new Error('the logger is down');
          },
        }),
      });
      expect(await limiter.allowRequest('alice')).toMatchObject({ allowed: false, degraded: 'fail-closed' });
      // Let the rejected logger promise settle (macrotask: unhandled rejections are reported by then).
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
