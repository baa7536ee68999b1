// A shared contract: the in-memory strategies and their Redis counterparts make identical
// decisions on the same schedule (driven by the same injected times, `time: 'limiter'`), so the
// Lua script and the TypeScript cannot drift apart. Property-based, against a real redis-server.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GCRA, RateLimiter, SlidingWindowLog, type QuotaOptions, type RateLimitStore, type RateLimitStrategy } from '../../../src/index.js';
import { RedisGCRA, RedisSlidingWindowLog, type RedisStrategyOptions } from '../../../src/redis/index.js';
import { CLIENTS, RedisServer, type TestClient } from '../../support/redis-server.js';

let server: RedisServer;
beforeAll(async () => {
  server = await RedisServer.start();
});
afterAll(async () => {
  await server?.stop();
});

const schedule = fc.record({
  threshold: fc.integer({ min: 1, max: 8 }),
  windowMs: fc.integer({ min: 1, max: 4_000 }),
  tiered: fc.boolean(),
  ops: fc.array(
    fc.record({
      // Milliseconds since the previous operation, in quarters: exact in binary.
      dtQuarters: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 8_000 }), fc.integer({ min: 0, max: 40 })),
      key: fc.constantFrom('a', 'b', 'c'),
      cost: fc.oneof(fc.constant(1), fc.integer({ min: 1, max: 10 })),
      peek: fc.boolean(),
      tier: fc.constantFrom<0 | 1>(0, 1),
    }),
    { minLength: 1, maxLength: 40 },
  ),
});

/**
 * Issue 11: the clocks of the exactness suite (test/unit/strategies/exactness.test.ts) — epoch
 * times, readings up to 2^45 ms, fractions — with thresholds near each strategy's maximum and
 * costs near the threshold.
 */
const exactSchedule = fc.record({
  base: fc.oneof(
    fc.double({ min: 0, max: 1e7, noNaN: true }),
    fc.integer({ min: 2 ** 40, max: 2 ** 45 }),
    fc.double({ min: 2 ** 40, max: 2 ** 45, noNaN: true }),
    fc.constant(1_764_500_000_000.123),
  ),
  windowMs: fc.oneof(fc.constantFrom(1, 1_000, 60_000), fc.integer({ min: 1, max: 5_000 })),
  big: fc.boolean(),
  below: fc.integer({ min: 0, max: 3 }),
  ops: fc.array(
    fc.record({
      dt: fc.oneof(fc.constant(0), fc.double({ min: 0, max: 3_000, noNaN: true }), fc.integer({ min: 0, max: 30 }).map((n) => n * 0.1), fc.constant(-1)),
      key: fc.constantFrom('a', 'b'),
      share: fc.oneof(fc.constant(0), fc.double({ min: 0, max: 1.01, noNaN: true })),
      peek: fc.boolean(),
    }),
    { minLength: 1, maxLength: 30 },
  ),
});

const pairs: readonly [string, () => RateLimitStrategy<unknown>, (options: RedisStrategyOptions) => RateLimitStore][] = [
  ['sliding-window log', () => new SlidingWindowLog(), (o) => new RedisSlidingWindowLog(o)],
  ['GCRA', () => new GCRA(), (o) => new RedisGCRA(o)],
];

describe.each(CLIENTS)("with %s", (name, connect) => {
  let c: TestClient;
  beforeAll(async () => {
    c = await connect(server.url);
  });
  afterAll(async () => {
    await c?.close();
  });

  it.each(pairs)("the in-memory and Redis %s decide identically", async (label, memory, redis) => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(schedule, async ({ threshold, windowMs, tiered, ops }) => {
        run++;
        let now = 1_000_000;
        const clock = (): number => now;
        const tiers: QuotaOptions[] = [
          { threshold, windowSeconds: windowMs / 1000 },
          { threshold: threshold + 2, windowSeconds: (windowMs * 2) / 1000 },
        ];
        let tier = 0;
        const limitFor = tiered ? (): QuotaOptions => tiers[tier] as QuotaOptions : undefined;
        const options = { threshold, windowSeconds: windowMs / 1000, clock, ...(limitFor ? { limitFor } : {}) };
        const local = new RateLimiter({ ...options, strategy: memory() });
        const shared = new RateLimiter({
          ...options,
          strategy: redis({ client: c.client, prefix: `contract:${name}:${label}:${run}:`, time: 'limiter' }),
        });
        for (const op of ops) {
          now += op.dtQuarters / 4;
          tier = op.tier;
          const expected = op.peek ? await local.peek(op.key, { cost: op.cost }) : await local.allowRequest(op.key, { cost: op.cost });
          const actual = op.peek ? await shared.peek(op.key, { cost: op.cost }) : await shared.allowRequest(op.key, { cost: op.cost });
          expect(actual).toEqual(expected);
        }
      }),
      { numRuns: Number(process.env.CONTRACT_RUNS ?? 60) },
    );
  }, 120_000);
});

describe.each(CLIENTS)('with %s, at epoch-scale and fractional clocks (issue 11)', (name, connect) => {
  let c: TestClient;
  beforeAll(async () => {
    c = await connect(server.url);
  });
  afterAll(async () => {
    await c?.close();
  });

  it.each(pairs)('the in-memory and Redis %s decide identically, thresholds near the maximum, costs near the threshold', async (label, memory, redis) => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(exactSchedule, async ({ base, windowMs, big, below, ops }) => {
        run++;
        // The log's maximum on Redis is 10,000; GCRA's is threshold × windowMs <= 2^42.
        const max = label === 'GCRA' ? Math.floor(2 ** 42 / windowMs) : 10_000;
        const threshold = big ? max - below : 1 + below;
        let now = base;
        let lastRetry = 0;
        const clock = (): number => now;
        const options = { threshold, windowSeconds: windowMs / 1000, clock };
        const local = new RateLimiter({ ...options, strategy: memory() });
        const shared = new RateLimiter({ ...options, strategy: redis({ client: c.client, prefix: `exact:${name}:${label}:${run}:`, time: 'limiter' }) });
        for (const op of ops) {
          // dt −1: wait exactly the last retryAfter, as a caller computes it.
          now += op.dt === -1 ? lastRetry * 1000 : op.dt;
          const cost = Math.max(1, Math.round(op.share * threshold));
          const expected = op.peek ? await local.peek(op.key, { cost }) : await local.allowRequest(op.key, { cost });
          const actual = op.peek ? await shared.peek(op.key, { cost }) : await shared.allowRequest(op.key, { cost });
          expect(actual, `${label} ${threshold}/${windowMs} ms, cost ${cost} at ${now}`).toEqual(expected);
          if (!actual.allowed && actual.retryAfter !== Infinity) lastRetry = actual.retryAfter;
        }
      }),
      { numRuns: Number(process.env.CONTRACT_RUNS ?? 60) },
    );
  }, 120_000);

  it('RedisGCRA at 6,000,000 per second on an epoch clock admits exactly the threshold (issue 11, item 1)', async () => {
    const limiter = new RateLimiter({
      threshold: 6_000_000,
      windowSeconds: 1,
      clock: () => 1_764_500_000_000,
      strategy: new RedisGCRA({ client: c.client, prefix: `epoch:${name}:`, time: 'limiter' }),
    });
    expect(await limiter.allowRequest('u', { cost: 5_999_999 })).toMatchObject({ allowed: true, remaining: 1 });
    expect(await limiter.allowRequest('u')).toMatchObject({ allowed: true, remaining: 0 });
    const refused = await limiter.allowRequest('u');
    expect(refused).toMatchObject({ allowed: false, remaining: 0 });
    // One emission interval (1/6 µs) on the grid: one tick, rounded up to the microsecond.
    expect(refused.retryAfter).toBe(0.000001);
  });
});

// Called directly (without a limiter, whose time never runs backwards), the strategies see time
// go back; both sides treat a time behind the newest entry as that entry's time.
describe.each(CLIENTS)('with %s, time going backwards', (name, connect) => {
  let c: TestClient;
  beforeAll(async () => {
    c = await connect(server.url);
  });
  afterAll(async () => {
    await c?.close();
  });

  it.each(pairs)('the in-memory and Redis %s decide identically when the clock steps back within a window', async (label, memory, redis) => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 10, max: 4_000 }),
        fc.array(fc.record({ dt: fc.integer({ min: -1, max: 1 }), frac: fc.double({ min: 0, max: 1, noNaN: true }), cost: fc.integer({ min: 1, max: 7 }) }), { minLength: 1, maxLength: 30 }),
        async (threshold, windowMs, ops) => {
          run++;
          const limit = { threshold, windowMs, windowSeconds: windowMs / 1000 };
          const local = memory();
          const shared = redis({ client: c.client, prefix: `back:${name}:${label}:${run}:`, time: 'limiter' });
          const state = local.createState(limit);
          let now = 1_000_000;
          let latest = now;
          for (const op of ops) {
            // Steps of up to half a window, back or forward, in whole milliseconds, never more
            // than a window behind the latest time seen (beyond that the Redis strategies forget
            // the state as written under a clock that was ahead; tested below).
            now = Math.max(now + Math.round(op.dt * op.frac * (windowMs / 2)), latest - windowMs);
            latest = Math.max(latest, now);
            const expected = local.consume(state, now, op.cost, limit);
            const actual = await shared.consume('k', now, op.cost, limit);
            expect(actual).toEqual(expected);
          }
        },
      ),
      { numRuns: Number(process.env.CONTRACT_RUNS ?? 60) },
    );
  }, 120_000);

  it('forgets log entries written more than a window ahead of the clock (a clock that was ahead)', async () => {
    const shared = new RedisSlidingWindowLog({ client: c.client, prefix: `ahead:${name}:`, time: 'limiter' });
    const limit = { threshold: 2, windowMs: 1_000, windowSeconds: 1 };
    expect(await shared.consume('k', 50_000, 2, limit)).toMatchObject({ allowed: true, remaining: 0 });
    // 10 s earlier, within no window of those entries: they are dropped, not waited for.
    expect(await shared.consume('k', 40_000, 1, limit)).toMatchObject({ allowed: true, remaining: 1, resetAfter: 1 });
    expect(await c.command('ZCARD', `ahead:${name}:{k}:log`)).toBe(1);
  });

  it('forgets a GCRA TAT more than a window too far ahead', async () => {
    const shared = new RedisGCRA({ client: c.client, prefix: `ahead:${name}:`, time: 'limiter' });
    const limit = { threshold: 2, windowMs: 1_000, windowSeconds: 1 };
    expect(await shared.consume('k', 50_000, 2, limit)).toMatchObject({ allowed: true, remaining: 0 });
    expect(await shared.consume('k', 40_000, 1, limit)).toMatchObject({ allowed: true, remaining: 1 });
  });
});
