// Faults on the HTTP path: the real @upstash/redis client against the test front of Upstash's
// REST protocol (test/support/upstash-front.ts) in front of a real redis-server, the front made
// to go down, hang, answer slowly, or lose a reply after running the script (the client then
// re-sends the request). Every failure policy; a decision reported as failed is not recorded
// (but for the documented case of a reply that ran in time and came late); a re-sent request is
// recorded once; late replies change nothing; no unhandled rejection.
import { Redis, type RedisConfigNodejs } from '@upstash/redis';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RateLimitGroup, RateLimiter, type RateLimitResult } from '../../../src/index.js';
import {
  RateWardenRedisTimeoutError,
  RedisGCRA,
  RedisSlidingWindowLog,
  toRedisAdapter,
  type RedisFailurePolicy,
  type RedisStrategyOptions,
} from '../../../src/redis/index.js';
import { RedisServer, countingAdapter } from '../../support/redis-server.js';
import { failOnUnhandledRejections } from '../../support/unhandled.js';
import { UpstashFront, useUpstashFront } from '../../support/upstash-front.js';

failOnUnhandledRejections();
afterEach(() => {
  vi.useRealTimers();
});

const setup = useUpstashFront();
const upstash = setup.upstash;

const POLICIES: readonly RedisFailurePolicy[] = ['throw', 'fail-closed', 'fail-open', 'local'];

/** A limiter of `threshold` per minute on `client` for each policy, prefix `<prefix><policy>:`. */
function limiters(client: object, prefix: string, extra: Partial<RedisStrategyOptions> = {}, threshold = 3) {
  const errors: unknown[] = [];
  const make = (onFailure: RedisFailurePolicy): RateLimiter =>
    new RateLimiter({
      threshold,
      windowSeconds: 60,
      strategy: new RedisSlidingWindowLog({ client, prefix: `${prefix}${onFailure}:`, onFailure, onError: (e) => errors.push(e), ...extra }),
    });
  const [throwing, closed, open, local] = POLICIES.map(make) as [RateLimiter, RateLimiter, RateLimiter, RateLimiter];
  return { throwing, closed, open, local, errors };
}

/** A decision's outcome: its result, or the error it rejected with. */
const outcome = (p: Promise<RateLimitResult>): Promise<{ r: RateLimitResult } | { error: unknown }> =>
  p.then(
    (r) => ({ r }),
    (error: unknown) => ({ error }),
  );

/** Checks what each policy answered for a limiter of 3 whose key held one request: `failure` the error under `throw`. */
async function expectPolicies(l: ReturnType<typeof limiters>, decide: (limiter: RateLimiter) => Promise<RateLimitResult>, failure: unknown): Promise<void> {
  expect(await outcome(decide(l.throwing))).toEqual({ error: failure });
  expect(await decide(l.closed)).toEqual({ allowed: false, remaining: 0, retryAfter: 1, limit: 3, resetAfter: 1, degraded: 'fail-closed' });
  expect(await decide(l.open)).toEqual({ allowed: true, remaining: 2, retryAfter: 0, limit: 3, resetAfter: 0, degraded: 'fail-open' });
  expect(await decide(l.local)).toMatchObject({ allowed: true, remaining: 2, degraded: 'local' });
}

describe('the front down (connections refused)', () => {
  it('a client that does not retry: every policy at once, then the shared state again once it is back', async () => {
    const l = limiters(upstash({ retry: { retries: 0 } }), 'down:');
    for (const limiter of [l.throwing, l.closed, l.open, l.local]) expect(await limiter.allowRequest('alice')).toMatchObject({ allowed: true, remaining: 2 });
    await setup.front.down();
    try {
      await expectPolicies(l, (limiter) => limiter.allowRequest('alice'), expect.objectContaining({ message: 'fetch failed' }));
      // The local fallback enforces the limit in this process: 2 more (3 with the one above), then refused.
      const more = [await l.local.allowRequest('alice'), await l.local.allowRequest('alice'), await l.local.allowRequest('alice')];
      expect(more.map((r) => [r.allowed, r.degraded])).toEqual([[true, 'local'], [true, 'local'], [false, 'local']]);
      expect(l.errors.length).toBe(7);
    } finally {
      await setup.front.up();
    }
    for (const limiter of [l.throwing, l.closed, l.open, l.local]) {
      expect(await limiter.allowRequest('alice')).toEqual({ allowed: true, remaining: 1, retryAfter: 0, limit: 3, resetAfter: 60 });
    }
  });

  it('a client that retries (5 times, its default): the timeout decides first, by policy, and no retry reaches Redis', async () => {
    // A front of its own, which stays down: the client's retries (about 4 s of backoff, on timers
    // this test fakes) can only meet a closed port, whenever they run.
    const own = await UpstashFront.start(setup.server.port);
    try {
      const l = limiters(new Redis({ url: own.url, token: own.token }), 'down-retrying:', { timeoutSeconds: 1 });
      for (const limiter of [l.throwing, l.closed, l.open, l.local]) await limiter.allowRequest('alice');
      await own.down();
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      const pending = [l.throwing, l.closed, l.open, l.local].map((limiter) => outcome(limiter.allowRequest('alice')));
      let settled = 0;
      for (const p of pending) void p.then(() => settled++);
      await vi.advanceTimersByTimeAsync(999);
      // Still retrying (its backoffs: 50, 136, 369, 1,004 ms, …), within the timeout.
      expect(settled).toBe(0);
      await vi.advanceTimersByTimeAsync(1);
      const [thrown, closed, open, local] = await Promise.all(pending);
      expect(thrown).toEqual({ error: new RateWardenRedisTimeoutError(1) });
      expect(closed).toMatchObject({ r: { allowed: false, degraded: 'fail-closed' } });
      expect(open).toMatchObject({ r: { allowed: true, degraded: 'fail-open' } });
      expect(local).toMatchObject({ r: { allowed: true, degraded: 'local' } });
    } finally {
      vi.useRealTimers();
      await own.close();
    }
    for (const policy of POLICIES) expect(await setup.redis.zcard(`down-retrying:${policy}:{alice}:log`)).toBe(1);
  });
});

describe('the front hangs (holds every request before running it)', () => {
  it('each decision times out after timeoutSeconds of (fake) time, by policy, none waiting on another of its key', async () => {
    const l = limiters(upstash({ retry: { retries: 0 } }), 'hang:', { timeoutSeconds: 5 });
    for (const limiter of [l.throwing, l.closed, l.open, l.local]) await limiter.allowRequest('alice');
    setup.front.pause('before-running');
    try {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      // Two decisions on one key: each gives up after its own 5 s, not 5 s after the other.
      const first = outcome(l.throwing.allowRequest('alice'));
      const second = outcome(l.throwing.allowRequest('alice'));
      const others = [l.closed, l.open, l.local].map((limiter) => limiter.allowRequest('alice'));
      await setup.front.whenHeld(1);
      await vi.advanceTimersByTimeAsync(5_000);
      expect(await first).toEqual({ error: new RateWardenRedisTimeoutError(5) });
      expect(await second).toEqual({ error: new RateWardenRedisTimeoutError(5) });
      const [closed, open, local] = await Promise.all(others);
      expect(closed).toMatchObject({ allowed: false, degraded: 'fail-closed' });
      expect(open).toMatchObject({ allowed: true, degraded: 'fail-open' });
      expect(local).toMatchObject({ allowed: true, degraded: 'local' });
    } finally {
      vi.useRealTimers();
      // Dropped, never run: nothing of them reaches Redis.
      await setup.front.down();
      await setup.front.up();
    }
    for (const policy of POLICIES) expect(await setup.redis.zcard(`hang:${policy}:{alice}:log`)).toBe(1);
  });

  // The script's deadline is checked on Redis's clock (TIME), which fake timers cannot move: these
  // cases let the decisions' 50 ms timeouts pass on the real clock before the front runs them.
  it.each(['an answered client', 'a client never answered yet (its handshake held)'])(
    'a decision that timed out is not recorded when the front runs it later: %s',
    async (which) => {
      const prefix = `late:${which.length}:`;
      // Without auto-pipelining, one script call is one request: the adapter counts them.
      const client = countingAdapter(toRedisAdapter(upstash({ enableAutoPipelining: false })));
      const options = { client, onFailure: 'fail-closed' as const, timeoutSeconds: 0.05 };
      const log = new RateLimiter({ threshold: 5, windowSeconds: 60, strategy: new RedisSlidingWindowLog({ ...options, prefix: `${prefix}log:` }) });
      const gcra = new RateLimiter({ threshold: 5, windowSeconds: 60, strategy: new RedisGCRA({ ...options, prefix: `${prefix}gcra:` }) });
      const group = new RateLimitGroup([log, gcra]);
      if (which === 'an answered client') expect(await log.allowRequest('warm')).toMatchObject({ allowed: true });
      const sentBefore = client.calls.evalSha + client.calls.eval;
      const settled = setup.front.settled;
      setup.front.pause('before-running');
      const [a, b, g] = await Promise.all([log.allowRequest('alice'), gcra.allowRequest('alice'), group.allowRequest('bob')]);
      // Every call that will ever be sent has been (no EVAL follows a NOSCRIPT once its decisions
      // have failed); each reaches the front and is held there until it resumes.
      const sent = client.calls.evalSha + client.calls.eval - sentBefore;
      await setup.front.whenHeld(sent);
      setup.front.resume();
      await setup.front.whenSettled(settled + sent);
      for (const r of [a, b, ...(g?.results ?? [])]) expect(r).toMatchObject({ allowed: false, degraded: 'fail-closed' });
      expect(sent).toBeGreaterThanOrEqual(1);
      expect(await setup.redis.exists(`${prefix}log:{alice}:log`, `${prefix}gcra:{alice}:gcra`, `${prefix}log:{bob}:log`, `${prefix}gcra:{bob}:gcra`)).toBe(0);
      expect(await group.allowRequest('bob')).toMatchObject({ allowed: true, remaining: 4 });
    },
  );

  it('a retry that reaches Redis after the deadline writes nothing (the client backing off 300 ms, real time: Redis\'s clock decides)', async () => {
    const client = upstash({ retry: { retries: 1, backoff: () => 300 } });
    const limiter = new RateLimiter({ threshold: 5, windowSeconds: 60, strategy: new RedisSlidingWindowLog({ client, prefix: 'late-retry:', onFailure: 'fail-closed', timeoutSeconds: 0.05 }) });
    await limiter.peek('warm');
    const before = setup.front.settled;
    await setup.front.down();
    const failed = limiter.allowRequest('alice');
    expect(await failed).toMatchObject({ allowed: false, degraded: 'fail-closed' });
    await setup.front.up();
    // The client's retry, 300 ms after the refused attempt (250 ms after the decision failed),
    // reaches the front and Redis.
    await setup.front.whenSettled(before + 1);
    expect(setup.front.received.at(-1)?.commands[0]?.[0]).toBe('evalsha');
    expect(await setup.redis.exists('late-retry:{alice}:log')).toBe(0);
  });
});

describe('slow answers', () => {
  it('a reply later than the timeout: the decision fails by policy, the late reply changes nothing here (the script had run: Redis counts it)', async () => {
    const client = upstash();
    const strategy = new RedisSlidingWindowLog({ client, prefix: 'slow:', onFailure: 'fail-closed', timeoutSeconds: 0.05 });
    const limiter = new RateLimiter({ threshold: 2, windowSeconds: 60, strategy });
    await limiter.peek('warm');
    setup.front.slow(200);
    try {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      const pending = [limiter.allowRequest('alice'), limiter.allowRequest('alice'), limiter.allowRequest('alice')];
      await setup.front.whenDelaying(1);
      await vi.advanceTimersByTimeAsync(50);
      for (const r of await Promise.all(pending)) expect(r).toMatchObject({ allowed: false, degraded: 'fail-closed' });
      // The replies arrive, 150 ms after the decisions failed: read for nothing.
      await vi.advanceTimersByTimeAsync(200);
    } finally {
      setup.front.slow(0);
      vi.useRealTimers();
    }
    // The scripts ran in time (their replies were slow, not their start): Redis counted two and
    // refused the third — a decision reported failed though recorded, the documented case of a
    // reply slower than the allowance. The next decision asks Redis (the late refusal was not
    // cached) and reports Redis's state.
    expect(await setup.redis.zcard('slow:{alice}:log')).toBe(2);
    const before = setup.front.received.length;
    expect(await limiter.allowRequest('alice')).toMatchObject({ allowed: false, remaining: 0 });
    expect(setup.front.received.length).toBe(before + 1);
  });
});

describe('a re-sent request (the client retrying after a lost reply) is recorded once', () => {
  const WINDOW_MS = 60_000;
  type Path = 'RedisSlidingWindowLog' | 'RedisGCRA' | 'a group of both';

  /** The decider of `path`, and what Redis holds recorded for user u (log members; GCRA debt in requests). */
  function decider(path: Path, client: object, prefix: string) {
    const options = { client, onFailure: 'throw' as const, time: 'limiter' as const, blockCacheSize: 0 };
    const clock = (): number => 1_000;
    const log = new RateLimiter({ threshold: 3, windowSeconds: WINDOW_MS / 1000, clock, strategy: new RedisSlidingWindowLog({ ...options, prefix: `${prefix}log:` }) });
    const gcra = new RateLimiter({ threshold: 3, windowSeconds: WINDOW_MS / 1000, clock, strategy: new RedisGCRA({ ...options, prefix: `${prefix}gcra:` }) });
    const group = new RateLimitGroup([log, gcra]);
    const recorded = async (): Promise<number[]> => {
      const counts: number[] = [];
      if (path !== 'RedisGCRA') counts.push(await setup.redis.zcard(`${prefix}log:{u}:log`));
      if (path !== 'RedisSlidingWindowLog') {
        // Four little-endian doubles: at, debt (ticks), threshold, window.
        const state = await setup.redis.getBuffer(`${prefix}gcra:{u}:gcra`);
        counts.push(state === null ? 0 : Math.ceil(state.readDoubleLE(8) / (WINDOW_MS * 1024)));
      }
      return counts;
    };
    const decide = async (): Promise<boolean> => {
      if (path === 'RedisSlidingWindowLog') return (await log.allowRequest('u')).allowed;
      if (path === 'RedisGCRA') return (await gcra.allowRequest('u')).allowed;
      return (await group.allowRequest('u')).allowed;
    };
    return { decide, recorded, same: path === 'a group of both' ? 2 : 1, warmUp: () => group.peek('warm-up') };
  }

  const RETRYING: readonly [string, Partial<RedisConfigNodejs>][] = [
    ['retry: { retries: 3, backoff: () => 0 }', { retry: { retries: 3, backoff: () => 0 } }],
    ['retry: false (one retry in 1.39.0)', { retry: false }],
  ];
  const CASES = RETRYING.flatMap(([label, config]) => (['RedisSlidingWindowLog', 'RedisGCRA', 'a group of both'] as const).map((path) => [path, label, config] as const));

  it.each(CASES)('%s, %s: every reply lost once, the request re-sent', async (path, label, config) => {
    const client = upstash(config);
    expect(toRedisAdapter(client).resends).toBe(true);
    const d = decider(path, client, `resent:${path}:${label.length}:`);
    await d.warmUp();
    const reported: boolean[] = [];
    for (let i = 0; i < 5; i++) {
      const sent = setup.front.received.length;
      const dropped = setup.front.dropNextReply();
      reported.push(await d.decide());
      await dropped;
      // The same request twice: the first ran, its reply lost; the second found its token.
      const [first, again] = setup.front.received.slice(sent);
      expect(again).toEqual(first);
    }
    expect(reported).toEqual([true, true, true, false, false]);
    expect(await d.recorded()).toEqual(new Array(d.same).fill(3));
  });

  it('a client that never re-sends sends no token: a lost reply fails the decision (it had run: Redis counts it, as documented)', async () => {
    const client = upstash({ retry: { retries: 0 } });
    expect(toRedisAdapter(client).resends).toBe(false);
    const d = decider('RedisSlidingWindowLog', client, 'not-resent:');
    await d.warmUp();
    const dropped = setup.front.dropNextReply();
    await expect(d.decide()).rejects.toThrow('fetch failed');
    await dropped;
    expect(await d.recorded()).toEqual([1]);
    expect(setup.front.received.at(-1)?.commands[0]?.slice(2, 5)).toEqual(['1', 'not-resent:log:{u}:log', 'd']);
  });
});

describe('Redis down behind the front (it answers 500)', () => {
  it('fails by policy with the front\'s error', async () => {
    const own = await RedisServer.start();
    const ownFront = await UpstashFront.start(own.port);
    try {
      const l = limiters(new Redis({ url: ownFront.url, token: ownFront.token, retry: { retries: 0 } }), 'backend:');
      for (const limiter of [l.throwing, l.closed, l.open, l.local]) await limiter.allowRequest('alice');
      await own.kill();
      await expectPolicies(l, (limiter) => limiter.allowRequest('alice'), expect.objectContaining({ name: 'UpstashError', message: expect.stringMatching(/^ERR the front could not reach Redis/) as unknown }));
    } finally {
      await ownFront.close();
      await own.stop();
    }
  });
});
