// Issue 22 on Redis, at the store level: reserve/refund, penalty, block (manual and blockSeconds,
// extendBlock) and delete of RedisSlidingWindowLog and RedisGCRA against the reference models of
// test/support/refund-models.ts (random sequences, fast-check), through both clients and
// @upstash/redis (HTTP, through test/support/upstash-front.ts), on a real
// redis-server, timed by the limiter's clock (`time: 'limiter'`, integer milliseconds); then the
// edge cases, groups through the batch, the block cache and the failure policies.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createQuota, type RateLimitResult } from '../../../src/index.js';
import type { StoreReservation } from '../../../src/store.js';
import { RedisGCRA, RedisSlidingWindowLog, type RedisStrategyOptions } from '../../../src/redis/index.js';
import type { RedisStrategy } from '../../../src/redis/redis-strategy.js';
import { gcraModel, logModel, type ModelQuota, type ModelResult, type RefundModel } from '../../support/refund-models.js';
import { CLIENTS, RedisServer, blackHole, type TestClient } from '../../support/redis-server.js';
import { UPSTASH_CLIENT } from '../../support/upstash-front.js';

let server: RedisServer;
beforeAll(async () => {
  server = await RedisServer.start();
});
afterAll(async () => {
  await server?.stop();
});

const algorithms: readonly [string, (o: RedisStrategyOptions) => RedisStrategy, (q: ModelQuota) => RefundModel, number][] = [
  // name, strategy, model, tolerance of retryAfter/resetAfter in seconds (GCRA's waits are
  // fractions of a millisecond, rounded up to the tick and then to the microsecond)
  ['sliding-window log', (o) => new RedisSlidingWindowLog(o), logModel, 0],
  ['GCRA', (o) => new RedisGCRA(o), gcraModel, 3e-6],
];

function expectMatches(actual: RateLimitResult, expected: ModelResult, tolerance: number, what: string): void {
  expect(actual.allowed, what).toBe(expected.allowed);
  expect(actual.remaining, what).toBe(expected.remaining);
  if (expected.retryMs === Infinity || tolerance === 0) expect(actual.retryAfter, what).toBe(expected.retryMs / 1000);
  else expect(Math.abs(actual.retryAfter - expected.retryMs / 1000), what).toBeLessThanOrEqual(tolerance);
  if (tolerance === 0) expect(actual.resetAfter, what).toBe(expected.resetMs / 1000);
  else expect(Math.abs(actual.resetAfter - expected.resetMs / 1000), what).toBeLessThanOrEqual(tolerance);
}

const opArb = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constantFrom('consume' as const, 'reserve' as const, 'peek' as const), cost: fc.integer({ min: 1, max: 6 }) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('refund' as const), pick: fc.nat(), units: fc.integer({ min: 1, max: 4 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('penalty' as const), cost: fc.integer({ min: 1, max: 5 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('block' as const), ms: fc.integer({ min: 1, max: 3_000 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('delete' as const) }) },
);
const scheduleArb = fc.record({
  threshold: fc.integer({ min: 1, max: 5 }),
  windowMs: fc.integer({ min: 1, max: 2_000 }),
  blockMs: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 3_000 })),
  extendBlock: fc.boolean(),
  ops: fc.array(fc.record({ dt: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 1_500 })), op: opArb }), { minLength: 1, maxLength: 40 }),
});

describe.each([...CLIENTS, UPSTASH_CLIENT])('with %s', (clientName, connect) => {
  let c: TestClient;
  beforeAll(async () => {
    c = await connect(server.url);
  });
  afterAll(async () => {
    await c?.close();
  });
  let namespace = 0;
  const options = (extra: Partial<RedisStrategyOptions> = {}): RedisStrategyOptions => ({
    client: c.client,
    prefix: `i22:${clientName}:${++namespace}:`,
    time: 'limiter',
    ...extra,
  });

  it.each(algorithms)('the Redis %s decides, refunds, penalises, blocks and deletes as the reference model', async (_label, make, model, tolerance) => {
    await fc.assert(
      fc.asyncProperty(scheduleArb, fc.boolean(), async ({ threshold, windowMs, blockMs, extendBlock, ops }, cached) => {
        const quota = createQuota({ threshold, windowSeconds: windowMs / 1000, blockSeconds: blockMs / 1000, extendBlock });
        const store = make(options(cached ? {} : { blockCacheSize: 0 }));
        const ref = model({ threshold, windowMs, blockMs, extendBlock });
        const reservations: { reservation: StoreReservation; cost: number; left: number; id: number }[] = [];
        let now = 1_000_000;
        let step = 0;
        for (const { dt, op } of ops) {
          now += dt;
          const what = `step ${step++} at ${now}: ${JSON.stringify(op)}`;
          if (op.kind === 'consume') expectMatches(await store.consume('k', now, op.cost, quota), ref.decide(now, op.cost, true), tolerance, what);
          else if (op.kind === 'peek') expectMatches(await store.peek('k', now, op.cost, quota), ref.decide(now, op.cost, false), tolerance, what);
          else if (op.kind === 'reserve') {
            const id = reservations.length;
            const reservation = await store.reserve('k', now, op.cost, quota);
            expectMatches(reservation.result, ref.decide(now, op.cost, true, id), tolerance, what);
            expect(reservation.ticket === undefined, what).toBe(!reservation.result.allowed);
            if (reservation.result.allowed) reservations.push({ reservation, cost: op.cost, left: op.cost, id });
          } else if (op.kind === 'refund') {
            if (reservations.length === 0) continue;
            const r = reservations[op.pick % reservations.length]!;
            // The limiter's rule: at most what is left of the reservation.
            if (r.left === 0) continue;
            const units = Math.min(op.units, r.left);
            const given = await store.refund('k', r.reservation.ticket, units, quota);
            expect(given, what).toBe(ref.refund(r.id, units));
            if (given) r.left -= units;
          } else if (op.kind === 'penalty') {
            const points = Math.min(op.cost, threshold);
            expectMatches(await store.penalty('k', now, points, quota), ref.penalty(now, points), tolerance, what);
          } else if (op.kind === 'block') {
            await store.block('k', now, op.ms, quota);
            ref.block(now, op.ms);
          } else {
            expect(await store.delete('k'), what).toBe(ref.delete());
          }
        }
      }),
      { numRuns: Number(process.env.CONTRACT_RUNS ?? 40) },
    );
  }, 180_000);

  describe.each(algorithms)('%s: edge cases', (_label, make) => {
    const quota = createQuota({ threshold: 3, windowSeconds: 10 });

    it('a refund twice, partial refunds, and a refund of more than is left', async () => {
      const s = make(options());
      const r = await s.reserve('k', 1_000, 2, quota);
      expect(await s.refund('k', r.ticket, 1, quota)).toBe(true);
      expect(await s.refund('k', r.ticket, 1, quota)).toBe(true);
      // Nothing left of it in the key: a no-op, nothing else touched.
      expect(await s.refund('k', r.ticket, 1, quota)).toBe(false);
      expect((await s.peek('k', 1_000, 1, quota)).remaining).toBe(3);
      const other = await s.reserve('k', 1_000, 1, quota);
      expect(other.result.remaining).toBe(2);
      // More than that reservation holds: no-op (the limiter refuses it before the store).
      expect(await s.refund('k', other.ticket, 2, quota)).toBe(false);
      expect((await s.peek('k', 1_000, 1, quota)).remaining).toBe(2);
    });

    it('a refund never touches a decision made after the key was deleted, even at the same time', async () => {
      const s = make(options());
      const first = await s.reserve('k', 5_000, 1, quota);
      expect(await s.delete('k')).toBe(true);
      expect(await s.delete('k')).toBe(false);
      const second = await s.consume('k', 5_000, 1, quota);
      expect(second.remaining).toBe(2);
      expect(await s.refund('k', first.ticket, 1, quota)).toBe(false);
      expect((await s.peek('k', 5_000, 1, quota)).remaining).toBe(2);
    });

    it('two strategies (as two processes) deciding at the same time: each refund takes back only its own', async () => {
      const prefix = options().prefix;
      const a = make({ client: c.client, prefix, time: 'limiter' });
      const b = make({ client: c.client, prefix, time: 'limiter' });
      const [ra, rb] = await Promise.all([a.reserve('k', 7_000, 1, quota), b.reserve('k', 7_000, 1, quota)]);
      expect([ra.result.allowed, rb.result.allowed]).toEqual([true, true]);
      // The log refunds each exactly; GCRA only the last writer's.
      const gaveA = await a.refund('k', ra.ticket, 1, quota);
      const gaveB = await b.refund('k', rb.ticket, 1, quota);
      const left = (await a.peek('k', 7_000, 1, quota)).remaining;
      expect(left).toBe(1 + (gaveA ? 1 : 0) + (gaveB ? 1 : 0));
      if (a instanceof RedisSlidingWindowLog) expect([gaveA, gaveB]).toEqual([true, true]);
      else expect(gaveA !== gaveB).toBe(true);
    });

    it('a refund after the window moved on (server clock) is a no-op', async () => {
      const s = make(options({ time: 'redis' }));
      const short = createQuota({ threshold: 1, windowSeconds: 0.05 });
      const r = await s.reserve('k', 0, 1, short);
      expect(r.result.allowed).toBe(true);
      // Redis's own clock (TIME) cannot be faked: this one test waits on it, past a 50 ms
      // window. The same rule under the limiter's clock is tested with an injected clock
      // (contract-refunds.test.ts).
      await new Promise((resolve) => setTimeout(resolve, 80));
      expect(await s.refund('k', r.ticket, 1, short)).toBe(false);
    });

    it('rejects a ticket that is not one of its own', async () => {
      const s = make(options());
      await expect(s.refund('k', { nope: true }, 1, quota)).rejects.toThrow(TypeError);
      const r = await s.reserve('k', 1, 1, quota);
      await expect(s.refund('other', r.ticket, 1, quota)).rejects.toThrow(TypeError);
    });

    it('blockSeconds: a refusal blocks for exactly its duration, cached locally until its end; delete lifts it', async () => {
      const blocking = createQuota({ threshold: 1, windowSeconds: 1, blockSeconds: 60 });
      const s = make(options());
      expect((await s.consume('k', 10_000, 1, blocking)).allowed).toBe(true);
      const refused = await s.consume('k', 10_500, 1, blocking);
      expect(refused).toMatchObject({ allowed: false, remaining: 0, retryAfter: 60, resetAfter: 60 });
      // Answered by the block cache (no round trip) exactly as Redis would.
      const cachedAnswer = await s.consume('k', 40_500, 1, blocking);
      const uncached = make({ client: c.client, prefix: s.prefix, time: 'limiter', blockCacheSize: 0 });
      expect(cachedAnswer).toEqual(await uncached.peek('k', 40_500, 1, blocking));
      expect(cachedAnswer.retryAfter).toBe(30);
      expect((await uncached.consume('k', 70_499, 1, blocking)).allowed).toBe(false);
      expect((await uncached.consume('k', 70_500, 1, blocking)).allowed).toBe(true);
      // A block again, lifted by delete (through this process: the cache entry goes too).
      expect((await s.consume('k', 70_600, 1, blocking)).retryAfter).toBe(60);
      expect(await s.delete('k')).toBe(true);
      expect((await s.consume('k', 70_700, 1, blocking)).allowed).toBe(true);
    });

    it('extendBlock: refused attempts restart the block (never answered from the cache)', async () => {
      const extending = createQuota({ threshold: 1, windowSeconds: 1, blockSeconds: 10, extendBlock: true });
      const s = make(options());
      await s.consume('k', 0, 1, extending);
      expect((await s.consume('k', 100, 1, extending)).retryAfter).toBe(10);
      expect((await s.consume('k', 5_000, 1, extending)).retryAfter).toBe(10);
      expect((await s.consume('k', 14_999, 1, extending)).retryAfter).toBe(10);
      expect((await s.peek('k', 24_998, 1, extending)).retryAfter).toBe(0.001);
      expect((await s.consume('k', 24_999, 1, extending)).allowed).toBe(true);
    });

    it('a manual block replaces the previous one and holds for a cost above the threshold too (retryAfter Infinity)', async () => {
      const s = make(options());
      await s.block('k', 0, 100_000, quota);
      await s.block('k', 0, 2_000, quota);
      expect(await s.peek('k', 1_000, 1, quota)).toMatchObject({ allowed: false, remaining: 0, retryAfter: 1 });
      expect((await s.consume('k', 1_000, 4, quota)).retryAfter).toBe(Infinity);
      expect((await s.consume('k', 2_000, 1, quota)).allowed).toBe(true);
    });

    it('a group through the batch: reserveAll gives tickets per limit, refunds each; a block on one refuses all without recording', async () => {
      const a = make(options());
      const b = make({ client: c.client, prefix: `${a.prefix}b:`, time: 'limiter' });
      const batch = a.batch;
      expect(batch).toBe(b.batch);
      const req = (nowMs: number) => [
        { store: a, key: 'u', nowMs, cost: 1, quota },
        { store: b, key: 'u', nowMs, cost: 2, quota },
      ];
      const reserved = await batch.reserveAll!(req(1_000));
      expect(reserved.map((r) => r.result.remaining)).toEqual([2, 1]);
      expect(await b.refund('u', reserved[1]!.ticket, 2, quota)).toBe(true);
      expect((await b.peek('u', 1_000, 1, quota)).remaining).toBe(3);
      expect((await a.peek('u', 1_000, 1, quota)).remaining).toBe(2);
      await b.block('u', 1_000, 5_000, quota);
      const refused = await batch.reserveAll!(req(2_000));
      expect(refused.every((r) => r.ticket === undefined)).toBe(true);
      expect(refused[1]!.result).toMatchObject({ allowed: false, retryAfter: 4 });
      expect((await a.peek('u', 2_000, 1, quota)).remaining).toBe(2);
    });

    it('penalties: never a negative count; the key recovers', async () => {
      const s = make(options());
      for (let i = 0; i < 5; i++) {
        const r = await s.penalty('k', 0, 3, quota);
        expect(r.allowed).toBe(false);
        expect(r.remaining).toBe(0);
      }
      const later = await s.peek('k', 1_000_000, 1, quota);
      expect(later).toMatchObject({ allowed: true, remaining: 3 });
    });
  });

  it('failure policies: a degraded reservation refunds nothing; a refund resolves false except under throw; penalty, block and delete reject', async () => {
    const hole = await blackHole();
    try {
      const { Redis } = await import('ioredis');
      const dead = new Redis({ port: hole.port, lazyConnect: false, maxRetriesPerRequest: 0, enableOfflineQueue: true });
      dead.on('error', () => {});
      try {
        const quota = createQuota({ threshold: 2, windowSeconds: 1 });
        const open = new RedisSlidingWindowLog({ client: dead, prefix: 'dead:', timeoutSeconds: 0.05, onFailure: 'fail-open' });
        const r = await open.reserve('k', 0, 1, quota);
        expect(r.result).toMatchObject({ allowed: true, degraded: 'fail-open' });
        expect(await open.refund('k', r.ticket, 1, quota)).toBe(false);
        const live = new RedisSlidingWindowLog({ client: c.client, prefix: options().prefix, time: 'limiter' });
        const ticket = (await live.reserve('k', 0, 1, quota)).ticket as { redisKey: string };
        const foreign = { ...ticket, redisKey: open.redisKey('k') };
        expect(await open.refund('k', foreign, 1, quota)).toBe(false);
        const strict = new RedisSlidingWindowLog({ client: dead, prefix: 'dead:', timeoutSeconds: 0.05 });
        await expect(strict.refund('k', foreign, 1, quota)).rejects.toThrow();
        await expect(open.penalty('k', 0, 1, quota)).rejects.toThrow();
        await expect(open.block('k', 0, 1_000, quota)).rejects.toThrow();
        await expect(open.delete('k')).rejects.toThrow();
      } finally {
        dead.disconnect();
      }
    } finally {
      await hole.close();
    }
  });
});
