// Issue 12, "Done when" 2: several processes' decisions interleaved on one key, with batching
// and the block cache on, checked for exact admission against the in-memory model. Each
// "process" is a strategy on its own connection (its own link, queue and block cache); they share
// an injected clock (`time: 'limiter'`). At each step every process issues a burst at once; the
// order across processes is unknown, so what is checked is order-independent: with cost 1 at one
// instant, the number allowed in the step is the in-memory model's for the combined burst (never
// more: that would break the limit; never fewer: the cache would have refused what Redis allows).
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GCRA, SlidingWindowLog, type Quota, type RateLimitResult, type RateLimitStrategy } from '../../../src/index.js';
import { RedisGCRA, RedisSlidingWindowLog, type RedisStrategyOptions } from '../../../src/redis/index.js';
import type { RedisStrategy } from '../../../src/redis/redis-strategy.js';
import { CLIENTS, RedisServer, type TestClient } from '../../support/redis-server.js';
import { MemoryModel, recordingAdapter, type RecordingAdapter } from '../../support/script-calls.js';

const PROCESSES = 3;
const RUNS = Number(process.env.INTERLEAVE_RUNS ?? 80);

const PAIRS: readonly [string, () => RateLimitStrategy<unknown>, (options: RedisStrategyOptions) => RedisStrategy][] = [
  ['sliding-window log', () => new SlidingWindowLog(), (o) => new RedisSlidingWindowLog(o)],
  ['GCRA', () => new GCRA(), (o) => new RedisGCRA(o)],
];

const schedule = fc.record({
  threshold: fc.integer({ min: 1, max: 8 }),
  windowMs: fc.integer({ min: 4, max: 4_000 }),
  steps: fc.array(
    fc.record({
      // Hundredths of the window since the previous step: refills and expiries, and re-tries
      // within a cached refusal's wait.
      dtHundredths: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 30 }), fc.integer({ min: 0, max: 150 })),
      bursts: fc.array(fc.integer({ min: 0, max: 5 }), { minLength: PROCESSES, maxLength: PROCESSES }),
    }),
    { minLength: 1, maxLength: 20 },
  ),
});

let server: RedisServer;
const connections: TestClient[] = [];
beforeAll(async () => {
  server = await RedisServer.start();
  // Separate connections, both libraries: each one a process of its own.
  for (let i = 0; i < PROCESSES; i++) connections.push(await (CLIENTS[i % 2] as (typeof CLIENTS)[number])[1](server.url));
});
afterAll(async () => {
  for (const c of connections) await c.close();
  await server?.stop();
});

describe(`${PROCESSES} processes (ioredis and node-redis connections) on one key, batching and the cache on`, () => {
  it.each(PAIRS)('the %s allows per step exactly what the in-memory model allows of the combined burst', async (label, memory, redis) => {
    let run = 0;
    let issued = 0;
    let cacheAnswered = 0;
    let batched = 0;
    await fc.assert(
      fc.asyncProperty(schedule, async ({ threshold, windowMs, steps }) => {
        run++;
        const quota: Quota = { threshold, windowMs, windowSeconds: windowMs / 1000 };
        const adapters: RecordingAdapter[] = connections.map((c) => recordingAdapter(c.client));
        const processes = adapters.map((adapter) => redis({ client: adapter, prefix: `il:${label}:${run}:`, time: 'limiter' }));
        const model = new MemoryModel(memory());
        let now = 1_000_000;
        for (const [index, step] of steps.entries()) {
          now += (step.dtHundredths * windowMs) / 100;
          // Interleaved issue: one decision of each process in turn, none awaited.
          const pending: Promise<RateLimitResult>[] = [];
          for (let round = 0; round < Math.max(...step.bursts); round++) {
            for (let p = 0; p < PROCESSES; p++) {
              if (round < (step.bursts[p] as number)) pending.push((processes[p] as RedisStrategy).consume('shared', now, 1, quota));
            }
          }
          const results = await Promise.all(pending);
          issued += results.length;
          const combined = results.map(() => model.consume('shared', now, 1, quota));
          const expected = combined.filter((r) => r.allowed).length;
          const allowed = results.filter((r) => r.allowed).length;
          expect(allowed, `${threshold}/${windowMs} ms, step ${index} at ${now}: bursts ${step.bursts.join(', ')}`).toBe(expected);
          for (const r of results) {
            expect(r.limit).toBe(threshold);
            if (!r.allowed) expect(r.retryAfter).toBeGreaterThan(0);
          }
        }
        const sent = adapters.reduce((n, a) => n + a.sentDecisions(), 0);
        cacheAnswered += steps.reduce((n, s) => n + s.bursts.reduce((m, b) => m + b, 0), 0) - sent;
        batched += adapters.reduce((n, a) => n + a.decidingCalls().filter((call) => call.decisions > 1).length, 0);
      }),
      { numRuns: RUNS },
    );
    // The features were exercised: refusals answered by the caches, and batches of several.
    expect(cacheAnswered).toBeGreaterThan(0);
    expect(batched).toBeGreaterThan(0);
    expect(issued).toBeGreaterThan(cacheAnswered);
  }, 60_000);
});
