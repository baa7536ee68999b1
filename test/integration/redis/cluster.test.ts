// Redis Cluster (three masters, created here with redis-cli --cluster create), with both
// clients' cluster modes: one key per decision, hash-tagged by the user id; a group on one user
// in one script call; a group with a global limit (another slot) checked, then recorded.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RateLimitGroup, RateLimiter } from '../../../src/index.js';
import { RedisGCRA, RedisSlidingWindowLog, toRedisAdapter } from '../../../src/redis/index.js';
import { countingAdapter, startCluster } from '../../support/redis-server.js';
import { CLUSTER_CLIENTS, type ClusterClient } from '../../support/script-calls.js';

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

  it('is recognised as a cluster client', () => {
    expect(toRedisAdapter(c.client).cluster).toBe(true);
  });

  it('decides users on every slot, ids with braces included', async () => {
    const limiter = new RateLimiter({
      threshold: 2,
      windowSeconds: 60,
      strategy: new RedisSlidingWindowLog({ client: c.client, prefix: `c:${name}:` }),
    });
    const ids = Array.from({ length: 30 }, (_, i) => (i % 3 === 0 ? `user{${i}}` : `user-${i}`));
    for (const id of ids) {
      const decided = [];
      for (let i = 0; i < 3; i++) decided.push((await limiter.allowRequest(id)).allowed);
      expect(decided).toEqual([true, true, false]);
    }
  });

  it('decides a group on one user in one script call (one slot)', async () => {
    const adapter = countingAdapter(toRedisAdapter(c.client));
    const perMinute = new RateLimiter({ threshold: 3, windowSeconds: 60, strategy: new RedisSlidingWindowLog({ client: adapter, prefix: `m:${name}:` }) });
    const perSecond = new RateLimiter({ threshold: 2, windowSeconds: 1, strategy: new RedisGCRA({ client: adapter, prefix: `s:${name}:` }) });
    const group = new RateLimitGroup([perMinute, perSecond]);
    expect(await group.allowRequest('alice')).toMatchObject({ allowed: true });
    // The handshake (the first call on a client learns the server's clock), then one call.
    expect(adapter.calls.evalSha).toBe(2);
  });

  it('decides a group with a global limit (another slot): checked, then recorded, all or nothing', async () => {
    const adapter = countingAdapter(toRedisAdapter(c.client));
    const perUser = new RateLimiter({ threshold: 5, windowSeconds: 60, strategy: new RedisSlidingWindowLog({ client: adapter, prefix: `u:${name}:` }) });
    const global = new RateLimiter({ threshold: 2, windowSeconds: 60, strategy: new RedisSlidingWindowLog({ client: adapter, prefix: `g:${name}:` }) });
    const group = new RateLimitGroup([
      { limiter: perUser, name: 'per-user' },
      { limiter: global, name: 'global', key: () => 'everyone' },
    ]);
    const decided = [];
    for (const user of ['alice', 'bob', 'carol']) decided.push(await group.allowRequest(user));
    expect(decided.map((r) => r.allowed)).toEqual([true, true, false]);
    expect(decided[2]).toMatchObject({ binding: 1, names: ['per-user', 'global'] });
    // Checked on both slots, then recorded on both: 2 + 2 calls per allowed request, 2 for the
    // rejected one; and the first call's handshake, shared by the two slots' checks.
    expect(adapter.calls.evalSha).toBe(11);
    // Carol was rejected by the global limit: her own limit recorded nothing.
    expect(await perUser.peek('carol')).toMatchObject({ remaining: 5 });
    expect(await perUser.peek('alice')).toMatchObject({ remaining: 4 });
  });
});
