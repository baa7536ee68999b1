// A group mixing in-memory limits with Redis limits, Redis failing between the group's check and
// its record (a real redis-server, CLIENT PAUSE WRITE issued just before the record's script
// call): the group reports the failure or refusal, and charges no in-memory limit.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { Redis } from 'ioredis';
import { RateLimitGroup, RateLimiter } from '../../../src/index.js';
import { RedisGCRA, RedisSlidingWindowLog, toRedisAdapter, type RedisFailurePolicy } from '../../../src/redis/index.js';
import type { RedisAdapter } from '../../../src/redis/client.js';
import { RedisServer } from '../../support/redis-server.js';

let server: RedisServer;
let io: Redis;
let admin: Redis;
beforeAll(async () => {
  server = await RedisServer.start();
  io = new Redis({ port: server.port, host: '127.0.0.1' });
  io.on('error', () => {});
  admin = new Redis({ port: server.port, host: '127.0.0.1' });
});
afterAll(async () => {
  io.disconnect();
  admin.disconnect();
  await server.stop();
});
afterEach(async () => {
  vi.useRealTimers();
  await admin.call('CLIENT', 'UNPAUSE');
});

/**
 * An adapter that pauses the server's writes (scripts) just before the `n`-th decision script
 * call (the group's check is the 1st, its record the 2nd), and tells when that call is sent.
 */
function pausingAdapter(n: number): { adapter: RedisAdapter; sent: Promise<void> } {
  const inner = toRedisAdapter(io);
  let calls = 0;
  let resolve!: () => void;
  const sent = new Promise<void>((r) => (resolve = r));
  const before = async (args: readonly (string | number)[]): Promise<void> => {
    if (args[0] === 't' || ++calls !== n) return;
    await admin.call('CLIENT', 'PAUSE', '10000', 'WRITE');
    resolve();
  };
  return {
    sent,
    adapter: {
      ratewardenAdapter: true,
      evalSha: async (sha, keys, args) => {
        await before(args);
        return inner.evalSha(sha, keys, args);
      },
      eval: async (script, keys, args) => {
        await before(args);
        return inner.eval(script, keys, args);
      },
    },
  };
}

describe('a refused group records nothing anywhere', () => {
  const strategies = {
    RedisGCRA: (o: ConstructorParameters<typeof RedisGCRA>[0]) => new RedisGCRA(o),
    RedisSlidingWindowLog: (o: ConstructorParameters<typeof RedisSlidingWindowLog>[0]) => new RedisSlidingWindowLog(o),
  };
  for (const [name, make] of Object.entries(strategies)) {
    for (const onFailure of ['throw', 'fail-closed'] as RedisFailurePolicy[]) {
      it(`${name}, onFailure '${onFailure}': Redis timing out on the record charges no in-memory limit`, async () => {
        const { adapter, sent } = pausingAdapter(2);
        const prefix = `store-first-${name}-${onFailure}:`;
        const local = new RateLimiter({ threshold: 5, windowSeconds: 60, maxKeys: 10 });
        const other = new RateLimiter({ threshold: 3, windowSeconds: 60 });
        const shared = new RateLimiter({
          threshold: 5,
          windowSeconds: 60,
          strategy: make({ client: adapter, prefix, onFailure, timeoutSeconds: 0.1 }),
        });
        const group = new RateLimitGroup([
          { limiter: local, name: 'local' },
          { limiter: shared, name: 'shared' },
          { limiter: other, name: 'org', key: (u) => `org:${u as string}` },
        ]);
        vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
        const decision = group.allowRequest('alice').then(
          (r) => ({ r }),
          (e: unknown) => ({ e }),
        );
        await sent; // the record's script call is on its way, the server paused
        await vi.advanceTimersByTimeAsync(100); // its deadline passes
        const out = await decision;
        vi.useRealTimers();
        if (onFailure === 'throw') {
          expect(out).toMatchObject({ e: { code: 'ERR_RATEWARDEN_REDIS_TIMEOUT' } });
        } else {
          expect(out).toMatchObject({ r: { allowed: false, binding: 1, results: [{}, { degraded: 'fail-closed' }, {}] } });
        }
        // No in-memory limit was charged (main: local 4 of 5, org 2 of 3), nor any key tracked.
        expect(local.peekSync('alice').remaining).toBe(5);
        expect(other.peekSync('org:alice').remaining).toBe(3);
        expect(local.stats().keys).toBe(0);
        expect(other.stats().keys).toBe(0);
        await admin.call('CLIENT', 'UNPAUSE');
        // Once Redis answers, the group records every limit.
        expect(await group.allowRequest('alice')).toMatchObject({ allowed: true });
        expect(local.peekSync('alice').remaining).toBe(4);
        expect(other.peekSync('org:alice').remaining).toBe(2);
      });
    }
  }

  it('a store that refuses on the record (another process took the last unit) charges no in-memory limit', async () => {
    const inner = toRedisAdapter(io);
    const prefix = 'store-first-refuse:';
    const outside = new RateLimiter({ threshold: 1, windowSeconds: 60, strategy: new RedisGCRA({ client: io, prefix }) });
    let calls = 0;
    const adapter: RedisAdapter = {
      ratewardenAdapter: true,
      evalSha: async (sha, keys, args) => {
        // Before the group's record: another process takes the last unit.
        if (args[0] !== 't' && ++calls === 2) expect((await outside.allowRequest('alice')).allowed).toBe(true);
        return inner.evalSha(sha, keys, args);
      },
      eval: (script, keys, args) => inner.eval(script, keys, args),
    };
    const local = new RateLimiter({ threshold: 5, windowSeconds: 60 });
    const shared = new RateLimiter({ threshold: 1, windowSeconds: 60, strategy: new RedisGCRA({ client: adapter, prefix }) });
    const group = new RateLimitGroup([local, shared]);
    expect(await group.allowRequest('alice')).toMatchObject({ allowed: false, binding: 1 });
    expect(local.peekSync('alice').remaining).toBe(5); // main: 4
    expect(local.stats().keys).toBe(0);
  });
});
