// Review of issue 12 (branch wt-review): reproductions of suspected bugs in the block cache and
// the decision queue, against a real redis-server. Each test fails while the bug is there.
//
// 1. The block cache's exactness argument ("other processes can only add load") does not hold
//    when processes share a key under different limits (a tier change seen by one process
//    first): a decision under a shorter window removes load (GCRA: the converted debt repays a
//    shorter window's share per tick; the log: entries older than the shorter window are
//    dropped), so the process that cached a refusal refuses what Redis and the in-memory model
//    allow, with no DEL or reset anywhere. Not fixable locally: documented as the cache's bound
//    (as for a DEL elsewhere), and tested as such: the false refusal lasts at most the cached
//    retryAfter, then Redis decides.
// 2. A decision reported timed out while its batch waited for the handshake is still sent (and
//    recorded) when the handshake returns: `#call` skips only batches with no live member, and
//    the batch's deadline is that of its live members.
// 3. A fresh decision batched behind one that queued for most of the timeout fails with it.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { GCRA, SlidingWindowLog, type Quota, type RateLimitResult, type RateLimitStrategy } from '../../../src/index.js';
import {
  RateWardenRedisTimeoutError,
  RedisGCRA,
  RedisSlidingWindowLog,
  type RedisStrategyOptions,
} from '../../../src/redis/index.js';
import { DECIDE_SCRIPT } from '../../../src/redis/script.js';
import type { RedisStrategy } from '../../../src/redis/redis-strategy.js';
import { FAULT_CLIENTS } from '../../support/fault-clients.js';
import { CLIENTS, RedisServer, type TestClient } from '../../support/redis-server.js';
import { MemoryModel, recordingAdapter } from '../../support/script-calls.js';

const T0 = 3_000_000;

let server: RedisServer;
beforeAll(async () => {
  server = await RedisServer.start();
});
afterAll(async () => {
  await server?.stop();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('block cache: a process sharing the key under a shorter window removes load', () => {
  const connections: TestClient[] = [];
  beforeAll(async () => {
    // Two "processes": one connection of each library.
    for (const [, connect] of CLIENTS) connections.push(await connect(server.url));
  });
  afterAll(async () => {
    for (const c of connections) await c.close();
  });

  // The long tier (process 1) and the short tier (process 2) of the same key.
  const LONG: Quota = { threshold: 1, windowMs: 10_000, windowSeconds: 10 };
  const SHORT: Quota = { threshold: 1, windowMs: 1_000, windowSeconds: 1 };

  const CASES: readonly [
    string,
    () => RateLimitStrategy<unknown>,
    (options: RedisStrategyOptions) => RedisStrategy,
    // Process 2's request on the short tier (a decision that records, refused).
    number,
  ][] = [
    // GCRA: process 2's decision converts the debt to the short tier (a refusal writes the
    // converted state), where the same share is repaid ten times as fast.
    ['GCRA', () => new GCRA(), (o) => new RedisGCRA(o), 1],
    // The log: process 2's decision drops the entry older than its window (refused: cost 2
    // is above its threshold, so it records nothing of its own).
    ['sliding-window log', () => new SlidingWindowLog(), (o) => new RedisSlidingWindowLog(o), 2],
  ];

  it.each(CASES)('%s: process 1 refuses from its cache what Redis and the model allow, for at most the cached retryAfter', async (label, memory, redis, cost2) => {
    const prefix = `review-tier:${label}:`;
    const p1 = redis({ client: (connections[0] as TestClient).client, prefix, time: 'limiter' });
    const p2 = redis({ client: (connections[1] as TestClient).client, prefix, time: 'limiter' });
    // Redis's own answer, without a cache (peek records nothing).
    const direct = redis({ client: (connections[1] as TestClient).client, prefix, time: 'limiter', blockCacheSize: 0 });
    const model = new MemoryModel(memory());
    const step = (who: RedisStrategy, at: number, cost: number, quota: Quota): Promise<RateLimitResult> => who.consume('k', T0 + at, cost, quota);
    expect(await step(p1, 0, 1, LONG)).toEqual(model.consume('k', T0, 1, LONG));
    // Refused until T0 + 10 s: process 1 caches the refusal.
    const refusal = await step(p1, 1, 1, LONG);
    expect(refusal).toEqual(model.consume('k', T0 + 1, 1, LONG));
    expect(refusal.allowed).toBe(false);
    expect(refusal.retryAfter).toBeGreaterThan(9);
    // Process 2, on the short tier, at +1.5 s.
    expect(await step(p2, 1_500, cost2, SHORT)).toEqual(model.consume('k', T0 + 1_500, cost2, SHORT));
    // At +2.5 s, on the long tier: Redis (and the model) allow (GCRA: the converted debt was
    // repaid at +2.35 s; the log: the key is empty).
    const redisSays = await direct.peek('k', T0 + 2_500, 1, LONG);
    expect(redisSays.allowed).toBe(true);
    expect(redisSays).toEqual(model.peek('k', T0 + 2_500, 1, LONG));
    // Process 1's cache still refuses: the documented bound of the block cache when processes
    // decide one key under different limits (README, `blockCacheSize`): a false refusal, lasting
    // at most the cached refusal's retryAfter. Then process 1 asks Redis again, and is allowed.
    const answer = await step(p1, 2_500, 1, LONG);
    expect(answer.allowed).toBe(false);
    expect(T0 + 2_500 + answer.retryAfter * 1000).toBeLessThanOrEqual(T0 + 1 + refusal.retryAfter * 1000);
    const end = 1 + refusal.retryAfter * 1000;
    expect(await step(p1, end, 1, LONG)).toEqual(model.consume('k', T0 + end, 1, LONG));
    expect(model.peek('k', T0 + end, 1, LONG).allowed).toBe(false); // recorded: the model agrees
  });
});

describe.each(FAULT_CLIENTS)('with %s: a member timed out while its batch waits for the handshake', (_name, connect) => {
  it('is not sent, and not recorded, when the handshake returns', async () => {
    const raw = connect(server.port);
    const own = connect(server.port);
    await raw.ready();
    await own.ready();
    try {
      await raw.command('SCRIPT', 'LOAD', DECIDE_SCRIPT);
      const adapter = recordingAdapter(own.client);
      const prefix = `review-handshake:${_name}:`;
      const quota: Quota = { threshold: 3, windowMs: 60_000, windowSeconds: 60 };
      // A fresh client: its first calls wait for the handshake. batchSize 2: a full queue is
      // sent (to the handshake) at once.
      const strategy = new RedisSlidingWindowLog({ client: adapter, prefix, timeoutSeconds: 1, batchSize: 2, time: 'limiter' });
      // WRITE pauses every script (the handshake's too) and lets CLIENT UNPAUSE through.
      await raw.command('CLIENT', 'PAUSE', '20000', 'WRITE');
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      const settle = (p: Promise<RateLimitResult>): Promise<{ r: RateLimitResult } | { error: unknown }> =>
        p.then(
          (r) => ({ r }),
          (error: unknown) => ({ error }),
        );
      // p1 alone (to the handshake), p2 queued and sent in the next tick: two calls in flight.
      const p1 = settle(strategy.consume('a', T0, 1, quota));
      const p2 = settle(strategy.consume('b', T0, 1, quota));
      await new Promise<void>((resolve) => process.nextTick(resolve));
      // p3 queues (two in flight); p4, 600 ms later, fills the queue: [p3, p4] goes to the handshake.
      const p3 = settle(strategy.consume('x', T0, 1, quota));
      await vi.advanceTimersByTimeAsync(600);
      const p4 = settle(strategy.consume('y', T0 + 600, 1, quota));
      // p1, p2 and p3 time out (their timer: 1 s after they were issued); p4 has 600 ms left.
      await vi.advanceTimersByTimeAsync(400);
      const timedOut = await p3;
      expect(timedOut).toEqual({ error: expect.any(RateWardenRedisTimeoutError) });
      expect(await p1).toEqual({ error: expect.any(RateWardenRedisTimeoutError) });
      expect(await p2).toEqual({ error: expect.any(RateWardenRedisTimeoutError) });
      // The handshake returns now; p4 is decided.
      await raw.command('CLIENT', 'UNPAUSE');
      const decided = await p4;
      vi.useRealTimers();
      expect(decided).toMatchObject({ r: { allowed: true } });
      // p3 was reported timed out: it must not have been sent, nor recorded.
      expect(await raw.command('EXISTS', `${prefix}{x}:log`)).toBe(0);
      const sentKeys = adapter.calls.filter((c) => c.decisions > 0).flatMap((c) => c.keys);
      expect(sentKeys).not.toContain(`${prefix}{x}:log`);
    } finally {
      vi.useRealTimers();
      await raw.command('CLIENT', 'UNPAUSE');
      await own.close();
      await raw.close();
    }
  });
});

// 3. A decision issued just now, queued behind one that waited for almost the whole timeout, is
//    decided on its own deadline; the old one, which the server could no longer start in time,
//    fails without being sent (issue 21: a decision that cannot be sent before its deadline is
//    not sent). Fake timers fake `performance` too, so that the deadlines (derived from
//    performance.now() and the learnt offset) follow the fake clock.
describe.each(FAULT_CLIENTS)('with %s: a fresh decision batched behind one that queued for most of the timeout', (_name, connect) => {
  it('is decided (its own timeout has not passed)', async () => {
    const raw = connect(server.port);
    const own = connect(server.port);
    await raw.ready();
    await own.ready();
    try {
      const prefix = `review-deadline:${_name}:`;
      const quota: Quota = { threshold: 3, windowMs: 60_000, windowSeconds: 60 };
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
      const adapter = recordingAdapter(own.client);
      const strategy = new RedisSlidingWindowLog({ client: adapter, prefix, timeoutSeconds: 1, time: 'limiter' });
      // One answered decision teaches the link the offset, on the fake clock.
      expect(await strategy.consume('warm', T0, 1, quota)).toMatchObject({ allowed: true });
      await raw.command('CLIENT', 'PAUSE', '20000', 'WRITE');
      const settle = (p: Promise<RateLimitResult>): Promise<{ r: RateLimitResult } | { error: unknown }> =>
        p.then(
          (r) => ({ r }),
          (error: unknown) => ({ error }),
        );
      // Two calls in flight (paused), then the old decision queues.
      const c1 = settle(strategy.consume('c1', T0, 1, quota));
      const c2 = settle(strategy.consume('c2', T0, 1, quota));
      await new Promise<void>((resolve) => process.nextTick(resolve));
      const old = settle(strategy.consume('old', T0, 1, quota));
      // 999.5 ms later (no timer due yet), a fresh decision queues behind it.
      await vi.advanceTimersByTimeAsync(999.5);
      const fresh = settle(strategy.consume('fresh', T0 + 999.5, 1, quota));
      await raw.command('CLIENT', 'UNPAUSE');
      expect(await c1).toMatchObject({ r: { allowed: true } });
      expect(await c2).toMatchObject({ r: { allowed: true } });
      // When the calls in flight return, old's deadline (less the reply's allowance) has passed:
      // it fails unsent; fresh goes alone, on its own deadline.
      const outcome = await fresh;
      const oldOutcome = await old;
      vi.useRealTimers();
      const last = adapter.decidingCalls().at(-1);
      expect(last?.keys.filter((k) => !k.includes(':call:'))).toEqual([`${prefix}{fresh}:log`]);
      expect(outcome).toMatchObject({ r: { allowed: true } });
      expect(oldOutcome).toEqual({ error: expect.any(RateWardenRedisTimeoutError) });
      expect(await raw.command('EXISTS', `${prefix}{old}:log`)).toBe(0);
    } finally {
      vi.useRealTimers();
      await raw.command('CLIENT', 'UNPAUSE');
      await own.close();
      await raw.close();
    }
  });
});
