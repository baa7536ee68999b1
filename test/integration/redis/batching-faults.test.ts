// Issue 12, "Done when" 3: the faults with micro-batching on, each with a batch that really forms
// (several decisions issued at once, checked in the calls the adapter forwarded): a member whose
// key has the wrong type fails alone; a batch paused past its timeout records nothing; SCRIPT
// FLUSH before a batch decides every member once; a server killed under a batch, then
// restarted; a server that never answers. Real servers, fake timers, both clients.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { SlidingWindowLog, type Quota, type RateLimitResult } from '../../../src/index.js';
import {
  RateWardenRedisCommandError,
  RateWardenRedisTimeoutError,
  RedisSlidingWindowLog,
  type RedisFailurePolicy,
} from '../../../src/redis/index.js';
import { DECIDE_SCRIPT } from '../../../src/redis/script.js';
import { FAULT_CLIENTS, queueingClient, type FaultClient } from '../../support/fault-clients.js';
import { failOnUnhandledRejections } from '../../support/unhandled.js';
import { RedisServer, blackHole } from '../../support/redis-server.js';
import { MemoryModel, recordingAdapter } from '../../support/script-calls.js';

failOnUnhandledRejections();
afterEach(() => {
  vi.useRealTimers();
});

const QUOTA: Quota = { threshold: 3, windowMs: 60_000, windowSeconds: 60 };
const NOW = 5_000_000;

/** A decision's outcome: its result, or the error it rejected with. */
type Outcome = { r: RateLimitResult } | { error: unknown };

function settle(promise: Promise<RateLimitResult>): Promise<Outcome> {
  return promise.then(
    (r) => ({ r }),
    (error: unknown) => ({ error }),
  );
}

describe.each(FAULT_CLIENTS)('with %s', (name, connect) => {
  let server: RedisServer;
  let raw: FaultClient;
  beforeAll(async () => {
    server = await RedisServer.start();
    raw = connect(server.port);
    await raw.ready();
  });
  afterAll(async () => {
    await raw?.close();
    await server?.stop();
  });

  /** A fresh connection (its own link, queue and clock offset), closed after `body`. */
  async function withOwn(body: (own: FaultClient) => Promise<void>): Promise<void> {
    const own = connect(server.port);
    await own.ready();
    try {
      await body(own);
    } finally {
      vi.useRealTimers();
      await raw.command('CLIENT', 'UNPAUSE');
      await own.close();
    }
  }

  it('a member whose key has the wrong type fails alone, by its policy; the batch\'s others are decided and recorded', async () => {
    await withOwn(async (own) => {
      const adapter = recordingAdapter(own.client);
      const options = { client: adapter, time: 'limiter' as const };
      // Strategies with the same time, timeout and batch size share one queue: one batch.
      const throwing = new RedisSlidingWindowLog({ ...options, prefix: 'wt:', onFailure: 'throw' });
      const closed = new RedisSlidingWindowLog({ ...options, prefix: 'wc:', onFailure: 'fail-closed' });
      await raw.command('SET', 'wt:{bad}:log', 'not a sorted set');
      await raw.command('SET', 'wc:{bad}:log', 'not a sorted set');
      const model = new MemoryModel(new SlidingWindowLog());
      const plan: [RedisSlidingWindowLog, string][] = [
        [throwing, 'first'], // a fresh client: every decision queues behind the handshake
        [throwing, 'a'],
        [throwing, 'bad'],
        [closed, 'a'],
        [throwing, 'a'],
        [closed, 'bad'],
        [throwing, 'b'],
      ];
      const outcomes = await Promise.all(plan.map(([s, key]) => settle(s.consume(key, NOW, 1, QUOTA))));
      const batch = adapter.decidingCalls().find((call) => call.keys.includes('wt:{bad}:log'));
      expect(batch?.decisions).toBe(7);
      expect(batch?.keys).toContain('wc:{bad}:log');
      // The wrong-type members: `throw` rejects with the command error, `fail-closed` degrades.
      expect(outcomes[2]).toMatchObject({ error: expect.any(RateWardenRedisCommandError) });
      expect((outcomes[2] as { error: Error }).error.message).toMatch(/WRONGTYPE/);
      expect(outcomes[5]).toMatchObject({ r: { allowed: false, degraded: 'fail-closed' } });
      // The others: exactly as decided alone, in order (two prefixes: two models).
      const modelC = new MemoryModel(new SlidingWindowLog());
      expect(outcomes[0]).toEqual({ r: model.consume('first', NOW, 1, QUOTA) });
      expect(outcomes[1]).toEqual({ r: model.consume('a', NOW, 1, QUOTA) });
      expect(outcomes[3]).toEqual({ r: modelC.consume('a', NOW, 1, QUOTA) });
      expect(outcomes[4]).toEqual({ r: model.consume('a', NOW, 1, QUOTA) });
      expect(outcomes[6]).toEqual({ r: model.consume('b', NOW, 1, QUOTA) });
      expect(await raw.command('ZCARD', 'wt:{a}:log')).toBe(2);
      expect(await raw.command('ZCARD', 'wc:{a}:log')).toBe(1);
      expect(await raw.command('ZCARD', 'wt:{b}:log')).toBe(1);
      expect(await raw.command('GET', 'wt:{bad}:log')).toBe('not a sorted set');
      // A degraded result is not cached: the next request for the bad key goes to Redis again.
      const sent = adapter.sentDecisions();
      expect(await closed.consume('bad', NOW, 1, QUOTA)).toMatchObject({ degraded: 'fail-closed' });
      expect(adapter.sentDecisions()).toBe(sent + 1);
    });
  });

  it.each<RedisFailurePolicy>(['throw', 'fail-closed', 'fail-open', 'local'])(
    'Redis paused under batches in flight and queued (onFailure %s): every member times out by policy, none is recorded',
    async (policy) => {
      await withOwn(async (own) => {
        const adapter = recordingAdapter(own.client);
        const prefix = `pause-${policy}:`;
        // batchSize 3: a full batch is sent at once (up to 16 calls in flight), so batches are
        // in flight during the pause; a batch that is not full waits while two are.
        const strategy = new RedisSlidingWindowLog({ client: adapter, prefix, onFailure: policy, timeoutSeconds: 0.05, batchSize: 3, time: 'limiter' });
        // One answered decision teaches the link the server's clock offset (no handshake below).
        expect(await strategy.consume('warm', NOW, 1, QUOTA)).toMatchObject({ allowed: true });
        await raw.command('SCRIPT', 'LOAD', DECIDE_SCRIPT);
        // ALL, for 300 ms of the server's time: the scripts below start after their deadline.
        await raw.command('CLIENT', 'PAUSE', '300', 'ALL');
        vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
        const callsBefore = adapter.calls.length;
        const keys = ['a', 'b', 'a', 'c', 'a', 'b', 'd', 'e'];
        const pending = keys.map((key) => settle(strategy.consume(key, NOW, 1, QUOTA)));
        // Sent: the first alone, then two full batches of 3; the last decision is queued.
        expect(adapter.calls.slice(callsBefore).map((call) => call.decisions)).toEqual([1, 3, 3]);
        let settled = 0;
        for (const p of pending) void p.then(() => settled++);
        await vi.advanceTimersByTimeAsync(49);
        expect(settled).toBe(0);
        await vi.advanceTimersByTimeAsync(1);
        // The queued ones fail at once; those in flight once the replies already received are
        // read (a real setImmediate here: only the timers are fake).
        await new Promise<void>((resolve) => setImmediate(resolve));
        expect(settled).toBe(keys.length);
        const outcomes = await Promise.all(pending);
        vi.useRealTimers();
        for (const outcome of outcomes) {
          if (policy === 'throw') expect(outcome).toMatchObject({ error: expect.any(RateWardenRedisTimeoutError) });
          else expect((outcome as { r: RateLimitResult }).r.degraded).toBe(policy);
        }
        if (policy === 'local') {
          // Decided in this process, in order: a, b, a, c, a (a's third is still within 3).
          expect(outcomes.map((o) => (o as { r: RateLimitResult }).r.allowed)).toEqual(keys.map(() => true));
        }
        // After the pause (this PING is answered after the scripts queued before it): nothing
        // recorded, and the queued decision was never sent.
        expect(await own.command('PING')).toBe('PONG');
        expect(await raw.command('EXISTS', ...['a', 'b', 'c', 'd', 'e'].map((k) => `${prefix}{${k}}:log`))).toBe(0);
        expect(adapter.calls.length - callsBefore).toBe(3);
        // Redis counts from zero: the next decision is a first request.
        expect(await strategy.consume('a', NOW, 1, QUOTA)).toEqual(new MemoryModel(new SlidingWindowLog()).consume('a', NOW, 1, QUOTA));
      });
    },
  );

  it('SCRIPT FLUSH before the batches: NOSCRIPT, then EVAL, decides every member exactly once', async () => {
    await withOwn(async (own) => {
      const adapter = recordingAdapter(own.client);
      const strategy = new RedisSlidingWindowLog({ client: adapter, prefix: 'flush:', batchSize: 3, time: 'limiter', blockCacheSize: 0 });
      expect(await strategy.consume('warm', NOW, 1, QUOTA)).toMatchObject({ allowed: true });
      await raw.command('SCRIPT', 'FLUSH');
      const before = adapter.calls.length;
      const model = new MemoryModel(new SlidingWindowLog());
      const keys = ['a', 'a', 'b', 'a', 'a', 'b', 'a'];
      const expected = keys.map((key) => model.consume(key, NOW, 1, QUOTA));
      const actual = await Promise.all(keys.map((key) => strategy.consume(key, NOW, 1, QUOTA)));
      expect(actual).toEqual(expected);
      const calls = adapter.calls.slice(before);
      const evalSha = calls.filter((call) => call.command === 'evalSha');
      const evals = calls.filter((call) => call.command === 'eval');
      // Every decision was sent once by EVALSHA; those that met NOSCRIPT once more by EVAL.
      expect(evalSha.reduce((n, call) => n + call.decisions, 0)).toBe(keys.length);
      expect(evals.length).toBeGreaterThanOrEqual(1);
      expect(evals.some((call) => call.decisions > 1)).toBe(true);
      expect(await raw.command('ZCARD', 'flush:{a}:log')).toBe(3);
      expect(await raw.command('ZCARD', 'flush:{b}:log')).toBe(2);
    });
  });

  it('a batch in flight when redis-server is killed: every member settles by policy; after a restart, batches are shared again', async () => {
    const own = connect(server.port);
    await own.ready();
    const adapter = recordingAdapter(own.client);
    const closed = new RedisSlidingWindowLog({ client: adapter, prefix: 'kill:', onFailure: 'fail-closed', time: 'limiter', batchSize: 3 });
    try {
      expect(await closed.consume('warm', NOW, 1, QUOTA)).toMatchObject({ allowed: true });
      const before = adapter.calls.length;
      const pending = ['a', 'a', 'b', 'a', 'b', 'c', 'c'].map((key) => closed.consume(key, NOW, 1, QUOTA));
      expect(adapter.calls.slice(before).some((call) => call.decisions === 3)).toBe(true);
      await server.kill();
      // Answered by Redis before it died (not degraded), or failed closed.
      // (Every request fits in its key's quota, so Redis allowed each one it answered.)
      for (const r of await Promise.all(pending)) {
        if (r.degraded === undefined) expect(r.allowed).toBe(true);
        else expect(r).toMatchObject({ allowed: false, degraded: 'fail-closed' });
      }
    } finally {
      await server.restart();
      await own.ready();
      await raw.ready();
    }
    try {
      // Empty (persistence off) and without the script: decided exactly, from zero.
      const model = new MemoryModel(new SlidingWindowLog());
      const keys = ['a', 'a', 'b', 'a', 'a', 'c'];
      const expected = keys.map((key) => model.consume(key, NOW + 1, 1, QUOTA));
      const actual = await Promise.all(keys.map((key) => closed.consume(key, NOW + 1, 1, QUOTA)));
      expect(actual).toEqual(expected);
      expect(await raw.command('ZCARD', 'kill:{a}:log')).toBe(3);
    } finally {
      await own.close();
    }
  });

  it('a server that never answers: each member of the batches times out after timeoutSeconds, by policy', async () => {
    const hole = await blackHole();
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const c = queueingClient(name, hole.port);
    try {
      const adapter = recordingAdapter(c.client);
      const errors: unknown[] = [];
      const options = { client: adapter, timeoutSeconds: 5, batchSize: 4, onError: (error: unknown) => errors.push(error) };
      const throwing = new RedisSlidingWindowLog({ ...options, prefix: 'hole-t:', onFailure: 'throw' });
      const local = new RedisSlidingWindowLog({ ...options, prefix: 'hole-l:', onFailure: 'local' });
      const quota: Quota = { threshold: 2, windowMs: 10_000, windowSeconds: 10 };
      const pending = [throwing, local, throwing, local, local, throwing, local, throwing, local].map((s) => settle(s.consume('alice', 0, 1, quota)));
      let settled = 0;
      for (const p of pending) void p.then(() => settled++);
      await vi.advanceTimersByTimeAsync(4_999);
      expect(settled).toBe(0);
      await vi.advanceTimersByTimeAsync(1);
      expect(settled).toBe(pending.length);
      const outcomes = await Promise.all(pending);
      const thrown = [0, 2, 5, 7].map((i) => outcomes[i]);
      for (const o of thrown) expect(o).toMatchObject({ error: expect.any(RateWardenRedisTimeoutError) });
      // The local fallback, in order: two allowed, then refused.
      const locals = [1, 3, 4, 6, 8].map((i) => (outcomes[i] as { r: RateLimitResult }).r);
      expect(locals.map((r) => [r.allowed, r.degraded])).toEqual([
        [true, 'local'],
        [true, 'local'],
        [false, 'local'],
        [false, 'local'],
        [false, 'local'],
      ]);
      expect(errors).toHaveLength(pending.length);
      expect(errors.every((e) => e instanceof RateWardenRedisTimeoutError)).toBe(true);
    } finally {
      vi.useRealTimers();
      await c.close();
      await hole.close();
    }
  });
});
