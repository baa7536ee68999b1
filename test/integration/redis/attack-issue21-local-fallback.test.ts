// Issue 21's attack, onFailure 'local' under a flapping Redis. README: "'local': decided by the
// same algorithm in this process's memory ... N processes may then allow up to N × threshold
// together". The attack found ONE process allowing far more than threshold for one key within
// one window: every reply Redis gave for ANY key of the limit dropped the whole local table
// (FailurePolicy.recovered), so each outage started the fallback from scratch (12 of 12 allowed
// at a threshold of 3). Now what the fallback allowed stays counted until its window passes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RateLimiter, type RateLimitResult } from '../../../src/index.js';
import { RedisGCRA, RedisSlidingWindowLog } from '../../../src/redis/index.js';
import { FAULT_CLIENTS, type FaultClient } from '../../support/fault-clients.js';
import { failOnUnhandledRejections } from '../../support/unhandled.js';
import { RedisServer } from '../../support/redis-server.js';

failOnUnhandledRejections();
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(FAULT_CLIENTS)('with %s', (_name, connect) => {
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

  for (const Kind of [RedisGCRA, RedisSlidingWindowLog]) {
    it(`${Kind.name}: a wrong-type key under 'local' stays limited to the threshold while other keys get answers`, async () => {
      const own = connect(server.port);
      await own.ready();
      try {
        const prefix = `wt-${Kind.name}-${_name}:`;
        const strategy = new Kind({ client: own.client, prefix, onFailure: 'local', batchSize: 1, blockCacheSize: 0 });
        const limiter = new RateLimiter({ threshold: 3, windowSeconds: 60, strategy });
        // The user "mallory"'s key holds another type: every decision of it fails in Redis and
        // is decided locally (degraded: 'local').
        await raw.command('HSET', strategy.redisKey('mallory'), 'x', '1');
        let allowed = 0;
        for (let i = 0; i < 10; i++) {
          const r = await limiter.allowRequest('mallory');
          expect(r.degraded).toBe('local');
          if (r.allowed) allowed++;
          await limiter.allowRequest(`bob${i}`); // answered by Redis: the local table is dropped
        }
        // The local fallback with threshold 3 per 60 s allows 3 of mallory's 10.
        expect(allowed).toBeLessThanOrEqual(3);
      } finally {
        await own.close();
      }
    });

    it(`${Kind.name}: CLIENT PAUSE outages separated by an answer for another key let one key through no more than the threshold`, async () => {
      const own = connect(server.port);
      await own.ready();
      try {
        const prefix = `fl-${Kind.name}-${_name}:`;
        const strategy = new Kind({ client: own.client, prefix, onFailure: 'local', timeoutSeconds: 0.05, blockCacheSize: 0 });
        const limiter = new RateLimiter({ threshold: 3, windowSeconds: 60, strategy });
        await limiter.allowRequest('warmup'); // the handshake, the offset
        const results: RateLimitResult[] = [];
        for (let round = 0; round < 4; round++) {
          await raw.command('CLIENT', 'PAUSE', '150', 'ALL');
          for (let i = 0; i < 3; i++) results.push(await limiter.allowRequest('alice'));
          await sleep(200); // the pause ends
          const ok = await limiter.allowRequest(`other${round}`);
          expect(ok.degraded).toBeUndefined();
        }
        const allowed = results.filter((r) => r.allowed).length;
        expect(results.every((r) => r.degraded === 'local')).toBe(true);
        // One process, threshold 3 per minute: the fallback alone should allow at most 3 (plus
        // what Redis itself allowed, here nothing for alice).
        expect(allowed).toBeLessThanOrEqual(3);
      } finally {
        await own.close();
      }
    });
  }
});
