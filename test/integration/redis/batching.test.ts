// Issue 12, "Done when" 1: the in-memory vs Redis contract with micro-batching and the block
// cache on, decisions issued CONCURRENTLY (so that they really batch), both clients, on a
// standalone server and on a 3-master cluster. One process's decisions, issued in one order on
// one connection, are decided by Redis in that order: the in-memory strategy fed in the same
// order must give identical results. Also the batch caps (batchSize, 1,000 log units) and, on the
// cluster, that no script call mixes hash slots.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GCRA, SlidingWindowLog, type Quota, type RateLimitResult, type RateLimitStrategy } from '../../../src/index.js';
import { RedisGCRA, RedisSlidingWindowLog, type RedisStrategyOptions } from '../../../src/redis/index.js';
import type { RedisStrategy } from '../../../src/redis/redis-strategy.js';
import { CLIENTS, RedisServer, startCluster, type TestClient } from '../../support/redis-server.js';
import { CLUSTER_CLIENTS, MemoryModel, idsInDistinctSlots, recordingAdapter, type ClusterClient, type RecordingAdapter } from '../../support/script-calls.js';

const RUNS = Number(process.env.BATCHING_RUNS ?? 25);

const PAIRS: readonly [string, () => RateLimitStrategy<unknown>, (options: RedisStrategyOptions) => RedisStrategy][] = [
  ['sliding-window log', () => new SlidingWindowLog(), (o) => new RedisSlidingWindowLog(o)],
  ['GCRA', () => new GCRA(), (o) => new RedisGCRA(o)],
];

/**
 * Steps of concurrent bursts: between steps every decision has settled; within a step the
 * decisions are issued one after the other without awaiting, the clock sometimes moving between
 * two of them (a decision issued later, at a later reading, while earlier ones are in flight).
 */
const scheduleOf = (moving: boolean) => fc.record({
  threshold: fc.integer({ min: 1, max: 6 }),
  windowMs: fc.oneof(fc.integer({ min: 1, max: 4_000 }), fc.constantFrom(1_000, 60_000)),
  steps: fc.array(
    fc.record({
      // Milliseconds since the previous step, in quarters: exact in binary.
      dtQuarters: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 8_000 }), fc.integer({ min: 0, max: 40 })),
      burst: fc.array(
        fc.record({
          key: fc.integer({ min: 0, max: 3 }),
          cost: fc.oneof(fc.constant(1), fc.integer({ min: 1, max: 8 })),
          peek: fc.oneof(fc.constant(false), fc.boolean()),
          // Quarters of a millisecond the clock moves before this decision is issued.
          within: moving ? fc.oneof(fc.constant(0), fc.constant(0), fc.integer({ min: 1, max: 2_000 })) : fc.constant(0),
        }),
        { minLength: 1, maxLength: 10 },
      ),
    }),
    { minLength: 1, maxLength: 10 },
  ),
});

const SCHEDULES = [
  ['one clock reading per burst', scheduleOf(false)],
  ['the clock moving within a burst', scheduleOf(true)],
] as const;

/** Every algorithm with every kind of schedule. */
const CASES = PAIRS.flatMap(([label, memory, redis]) => SCHEDULES.map(([kind, arbitrary]) => [label, kind, memory, redis, arbitrary] as const));

type Schedule = ReturnType<typeof scheduleOf> extends fc.Arbitrary<infer T> ? T : never;

/**
 * Runs `s` on a fresh prefix against `strategy` (on `adapter`) and the in-memory model, burst by
 * burst, and checks every result; returns how many decisions were issued.
 */
async function runSchedule(s: Schedule, keys: readonly string[], model: MemoryModel, strategy: RedisStrategy): Promise<number> {
  let now = 1_000_000;
  let issued = 0;
  const quota: Quota = { threshold: s.threshold, windowMs: s.windowMs, windowSeconds: s.windowMs / 1000 };
  for (const [stepIndex, step] of s.steps.entries()) {
    now += step.dtQuarters / 4;
    const expected: RateLimitResult[] = [];
    const actual: Promise<RateLimitResult>[] = [];
    const labels: string[] = [];
    for (const op of step.burst) {
      now += op.within / 4;
      const key = keys[op.key] as string;
      labels.push(`step ${stepIndex}: ${op.peek ? 'peek' : 'consume'} ${key} cost ${op.cost} at ${now}`);
      expected.push(op.peek ? model.peek(key, now, op.cost, quota) : model.consume(key, now, op.cost, quota));
      actual.push(op.peek ? strategy.peek(key, now, op.cost, quota) : strategy.consume(key, now, op.cost, quota));
      issued++;
    }
    const got = await Promise.all(actual);
    for (let i = 0; i < got.length; i++) expect(got[i], `${s.threshold}/${s.windowMs} ms, ${labels[i]}`).toEqual(expected[i]);
  }
  return issued;
}

describe('on a standalone server', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await RedisServer.start();
  });
  afterAll(async () => {
    await server?.stop();
  });

  describe.each(CLIENTS)('with %s', (name, connect) => {
    let c: TestClient;
    beforeAll(async () => {
      c = await connect(server.url);
    });
    afterAll(async () => {
      await c?.close();
    });

    it.each(CASES)('the %s decides concurrent bursts (%s) exactly as the in-memory strategy in issue order (batching and cache on)', async (label, _kind, memory, redis, schedule) => {
      const adapter = recordingAdapter(c.client);
      let run = 0;
      let issued = 0;
      await fc.assert(
        fc.asyncProperty(schedule, async (s) => {
          run++;
          const strategy = redis({ client: adapter, prefix: `batch:${name}:${label}:${_kind}:${run}:`, time: 'limiter' });
          expect([strategy.batchSize, strategy.blockCacheSize]).toEqual([32, 10_000]);
          issued += await runSchedule(s, ['a', 'b', 'c', 'd'], new MemoryModel(memory()), strategy);
        }),
        { numRuns: RUNS },
      );
      // Batching happened: fewer decisions reached Redis than were issued in calls, fewer calls
      // than decisions sent, and some call carried several decisions.
      const deciding = adapter.decidingCalls();
      expect(deciding.some((call) => call.decisions > 1)).toBe(true);
      expect(deciding.length).toBeLessThan(adapter.sentDecisions());
      expect(adapter.sentDecisions()).toBeLessThanOrEqual(issued);
    }, 60_000);

    // The properties' smallest counterexamples, as plain cases (GCRA: the fields show it best).
    it('a queued decision issued at a later clock reading is decided at its own reading, not the batch\'s first', async () => {
      const strategy = new RedisGCRA({ client: c.client, prefix: `later:${name}:`, time: 'limiter' });
      const model = new MemoryModel(new GCRA());
      const quota: Quota = { threshold: 1, windowMs: 1, windowSeconds: 0.001 };
      // The first goes alone; the second and third queue behind it and go in one call.
      const times = [1_000_000, 1_000_000, 1_000_000.25];
      const expected = times.map((t) => model.consume('a', t, 1, quota));
      const actual = await Promise.all(times.map((t) => strategy.consume('a', t, 1, quota)));
      // The third waits 0.75 ms from its own reading (in memory); decided at the second's, 1 ms.
      expect(expected[2]).toMatchObject({ allowed: false, retryAfter: 0.00075 });
      expect(actual).toEqual(expected);
    });

    it('the cache does not answer a key from a refusal made stale by this process\'s own decision in flight on it', async () => {
      const strategy = new RedisGCRA({ client: c.client, prefix: `stale:${name}:`, time: 'limiter' });
      const model = new MemoryModel(new GCRA());
      const quota: Quota = { threshold: 4, windowMs: 2, windowSeconds: 0.002 };
      const burst = async (t: number, costs: readonly number[]): Promise<void> => {
        const expected = costs.map((cost) => model.consume('a', t, cost, quota));
        const actual = await Promise.all(costs.map((cost) => strategy.consume('a', t, cost, quota)));
        expect(actual, `costs ${costs.join(', ')} at ${t}`).toEqual(expected);
      };
      await burst(1_000_000, [2, 1]);
      await burst(1_000_000, [1, 2]); // the cost-2 request is refused, and cached
      // Half a millisecond later one unit has been repaid: the cost-1 request goes to Redis and is
      // allowed (recorded); the cost-2 one, issued in the same tick, must see that debt, not the
      // cached one (remaining 0, not 1).
      await burst(1_000_000.5, [1, 2]);
    });

    it.each(PAIRS)('the %s: batchSize 3 caps every call at 3 decisions, all decided in order', async (label, memory, redis) => {
      const adapter = recordingAdapter(c.client);
      const strategy = redis({ client: adapter, prefix: `cap:${name}:${label}:`, time: 'limiter', batchSize: 3, timeoutSeconds: Infinity });
      const model = new MemoryModel(memory());
      const quota: Quota = { threshold: 4, windowMs: 1_000, windowSeconds: 1 };
      const expected: RateLimitResult[] = [];
      const actual: Promise<RateLimitResult>[] = [];
      for (let i = 0; i < 20; i++) {
        const key = `k${i % 3}`;
        expected.push(model.consume(key, 5_000, 1, quota));
        actual.push(strategy.consume(key, 5_000, 1, quota));
      }
      expect(await Promise.all(actual)).toEqual(expected);
      const deciding = adapter.decidingCalls();
      expect(Math.max(...deciding.map((call) => call.decisions))).toBe(3);
      // Each decision sent exactly once (none answered by the cache: all issued before any reply).
      expect(adapter.sentDecisions()).toBe(20);
    });

    it('a batch carries at most 1,000 sliding-window-log units (a larger single decision goes alone)', async () => {
      const adapter = recordingAdapter(c.client);
      const strategy = new RedisSlidingWindowLog({ client: adapter, prefix: `units:${name}:`, time: 'limiter', timeoutSeconds: Infinity });
      const model = new MemoryModel(new SlidingWindowLog());
      const quota: Quota = { threshold: 10_000, windowMs: 60_000, windowSeconds: 60 };
      const costs = [1, 400, 400, 400, 300, 1_500, 200, 999, 2, 1];
      const expected = costs.map((cost, i) => model.consume(`u${i % 4}`, 7_000, cost, quota));
      const actual = costs.map((cost, i) => strategy.consume(`u${i % 4}`, 7_000, cost, quota));
      expect(await Promise.all(actual)).toEqual(expected);
      const deciding = adapter.decidingCalls();
      expect(adapter.sentDecisions()).toBe(costs.length);
      for (const call of deciding) {
        if (call.decisions > 1) expect(call.logUnits).toBeLessThanOrEqual(1_000);
      }
      // The 1,500-unit decision was sent, in a call of its own.
      expect(deciding.filter((call) => call.logUnits > 1_000).map((call) => call.decisions)).toEqual([1]);
      // Batches formed: the 9 queued decisions did not go one per call.
      expect(deciding.length).toBeLessThan(costs.length);
    });
  });
});

describe('on a 3-master cluster', () => {
  let cluster: Awaited<ReturnType<typeof startCluster>>;
  beforeAll(async () => {
    cluster = await startCluster();
  }, 30_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  describe.each(CLUSTER_CLIENTS)('with %s', (name, connect) => {
    let c: ClusterClient;
    beforeAll(async () => {
      c = await connect(cluster.ports);
    });
    afterAll(async () => {
      await c?.close();
    });

    /** Every call's keys (its call token's included) share one hash slot. */
    function expectOneSlotPerCall(adapter: RecordingAdapter): void {
      const mixed = adapter.calls.filter((call) => call.slots.size !== 1);
      expect(mixed.map((call) => call.keys)).toEqual([]);
    }

    it.each(CASES)('the %s decides concurrent bursts (%s) on keys in different slots as the in-memory strategy, one slot per call', async (label, _kind, memory, redis, schedule) => {
      const adapter = recordingAdapter(c.client);
      const keys = idsInDistinctSlots(4);
      let run = 0;
      await fc.assert(
        fc.asyncProperty(schedule, async (s) => {
          run++;
          const strategy = redis({ client: adapter, prefix: `cbatch:${name}:${label}:${_kind}:${run}:`, time: 'limiter' });
          await runSchedule(s, keys, new MemoryModel(memory()), strategy);
          expectOneSlotPerCall(adapter);
        }),
        { numRuns: Math.max(5, Math.round(RUNS / 2)) },
      );
      expect(adapter.decidingCalls().some((call) => call.decisions > 1)).toBe(true);
    }, 60_000);

    it('groups a burst over several slots by slot: one call per slot, each carrying that slot\'s decisions in order', async () => {
      const adapter = recordingAdapter(c.client);
      const strategy = new RedisGCRA({ client: adapter, prefix: `cslots:${name}:`, time: 'limiter', timeoutSeconds: Infinity });
      const model = new MemoryModel(new GCRA());
      const quota: Quota = { threshold: 2, windowMs: 1_000, windowSeconds: 1 };
      const keys = idsInDistinctSlots(3, 'slot');
      // Warm each slot so that the burst below queues behind a call in flight on each.
      const order = [0, 1, 2, 0, 1, 2, 0, 0, 1, 2, 2, 1];
      const expected = order.map((k) => model.consume(keys[k] as string, 9_000, 1, quota));
      const actual = order.map((k) => strategy.consume(keys[k] as string, 9_000, 1, quota));
      expect(await Promise.all(actual)).toEqual(expected);
      expectOneSlotPerCall(adapter);
      const deciding = adapter.decidingCalls();
      expect(adapter.sentDecisions()).toBe(order.length);
      // Per slot: the first decision alone, the others of that slot in one call.
      expect(deciding.length).toBe(6);
      expect(deciding.map((call) => call.decisions).sort()).toEqual([1, 1, 1, 3, 3, 3]);
    });
  });
});
