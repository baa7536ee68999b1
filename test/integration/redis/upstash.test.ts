// The Redis strategies on @upstash/redis (Redis over HTTPS, for Workers, Vercel's edge, Deno
// Deploy), driven by the real client against a real redis-server behind the test front of
// Upstash's REST protocol (test/support/upstash-front.ts): the client is recognised (its Node and
// Cloudflare entries, with and without auto-pipelining), every kind of reply parses as it does
// through ioredis whatever the client's encoding and deserialisation, NOSCRIPT and errors surface
// as they should, a group is one script call, and a random schedule of every operation decides
// exactly as the same strategies on ioredis (fast-check). The shared strategy contract runs over
// it in strategy-contract.test.ts, reserve/refund/penalty/block against the reference models in
// refunds-blocks-penalties.test.ts, faults in upstash-faults.test.ts. Timed by the limiters'
// injected clocks (`time: 'limiter'`): no wall-clock waits.
import { Redis, type RedisConfigNodejs, type Requester } from '@upstash/redis';
import { Redis as CloudflareRedis } from '@upstash/redis/cloudflare';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { RateLimitGroup, RateLimiter, createQuota, type Quota } from '../../../src/index.js';
import {
  RateWardenRedisCommandError,
  RedisGCRA,
  RedisSlidingWindowLog,
  toRedisAdapter,
  type RedisStrategyOptions,
} from '../../../src/redis/index.js';
import type { RedisStrategy } from '../../../src/redis/redis-strategy.js';
import { DECIDE_SHA } from '../../../src/redis/script.js';
import type { StoreReservation } from '../../../src/store.js';
import { useUpstashFront } from '../../support/upstash-front.js';

const setup = useUpstashFront();
/** A client of the front, with `config` over the defaults. */
const upstash = setup.upstash;

/** The client's options that change what it does to requests and replies: each combination. */
const CONFIGS: readonly Partial<RedisConfigNodejs>[] = [true, false].flatMap((automaticDeserialization) =>
  (['base64', false] as const).flatMap((responseEncoding) =>
    [true, false].map((enableAutoPipelining) => ({ automaticDeserialization, responseEncoding, enableAutoPipelining })),
  ),
);

/** The last script call the front received: its command. */
const lastCommand = (): readonly string[] => setup.front.received.at(-1)?.commands.at(-1) ?? [];

describe('recognising @upstash/redis', () => {
  it.each<[string, () => object]>([
    ['the Node entry, auto-pipelining (its default)', () => upstash()],
    ['the Node entry, without auto-pipelining', () => upstash({ enableAutoPipelining: false })],
    [
      'the Cloudflare Workers entry, Redis.fromEnv(env)',
      () => CloudflareRedis.fromEnv({ UPSTASH_REDIS_REST_URL: setup.front.url, UPSTASH_REDIS_REST_TOKEN: setup.front.token }),
    ],
  ])('%s: EVALSHA with its keys and arguments as Upstash lays them out, a re-sending adapter', async (_label, make) => {
    const client = make();
    const adapter = toRedisAdapter(client);
    expect(adapter).toMatchObject({ ratewardenAdapter: true, cluster: false, resends: true });
    expect(toRedisAdapter(client)).toBe(adapter);
    const limiter = new RateLimiter({ threshold: 2, windowSeconds: 60, strategy: new RedisSlidingWindowLog({ client, prefix: 'recognised:' }) });
    const results = [];
    for (let i = 0; i < 3; i++) results.push(await limiter.allowRequest(`u-${_label}`));
    expect(results.map((r) => [r.allowed, r.remaining])).toEqual([[true, 1], [true, 0], [false, 0]]);
    // ["evalsha", sha, numkeys, ...keys, ...args]: the key, its token (the client re-sends), mode r.
    const command = lastCommand();
    expect(command.slice(0, 3)).toEqual(['evalsha', DECIDE_SHA, '2']);
    expect(command[3]).toBe(`recognised:{u-${_label}}:log`);
    expect(command[4]).toMatch(/^recognised:\{u-.*\}:log:call:[\w-]{12}[0-9a-z]+$/);
    expect(command[5]).toBe('r');
  });

  it('re-sends unless created with retry: { retries: 0 } (retry: false still retries once in 1.39.0)', () => {
    expect(toRedisAdapter(upstash({ retry: { retries: 0 } })).resends).toBe(false);
    expect(toRedisAdapter(upstash({ retry: { retries: 0 }, enableAutoPipelining: false })).resends).toBe(false);
    expect(toRedisAdapter(upstash({ retry: false })).resends).toBe(true);
    expect(toRedisAdapter(upstash({ retry: { retries: 2 } })).resends).toBe(true);
    const env = { UPSTASH_REDIS_REST_URL: setup.front.url, UPSTASH_REDIS_REST_TOKEN: setup.front.token };
    expect(toRedisAdapter(CloudflareRedis.fromEnv(env, { retry: { retries: 0 } })).resends).toBe(false);
    // A client made over a requester of one's own: its retries cannot be read, so it counts as re-sending.
    const requester = { request: () => Promise.resolve({ result: null }) } as unknown as Requester;
    const own = new Redis(requester);
    expect(toRedisAdapter(own)).toMatchObject({ cluster: false, resends: true });
  });

  it('without re-sending, a decision sends no token', async () => {
    const client = upstash({ retry: { retries: 0 }, enableAutoPipelining: false });
    const limiter = new RateLimiter({ threshold: 2, windowSeconds: 60, strategy: new RedisGCRA({ client, prefix: 'no-token:' }) });
    expect((await limiter.allowRequest('u')).allowed).toBe(true);
    expect(lastCommand().slice(2, 5)).toEqual(['1', 'no-token:{u}:gcra', 'd']);
    expect(setup.front.received.at(-1)?.path).toBe('/');
  });
});

/** Every operation of the stores on one client, and a group: what each returned or threw. */
async function transcript(client: object, prefix: string): Promise<unknown[]> {
  const out: unknown[] = [];
  const note = async (what: string, run: () => Promise<unknown>): Promise<void> => {
    try {
      out.push([what, await run()]);
    } catch (error) {
      out.push([what, (error as Error).constructor.name, (error as Error).message.replaceAll(prefix, '<prefix>')]);
    }
  };
  const options = (name: string): RedisStrategyOptions => ({ client, prefix: `${prefix}${name}:`, time: 'limiter', blockCacheSize: 0 });
  const quota = createQuota({ threshold: 3, windowSeconds: 10 });
  const blocking = createQuota({ threshold: 1, windowSeconds: 1, blockSeconds: 5, extendBlock: true });
  for (const store of [new RedisSlidingWindowLog(options('log')), new RedisGCRA(options('gcra'))]) {
    await note('first', () => store.consume('k', 1_000, 1, quota));
    await note('peek', () => store.peek('k', 1_250.5, 2, quota));
    const reserved = await store.reserve('k', 1_500, 2, quota);
    out.push(['reserve', reserved.result, reserved.ticket !== undefined]);
    await note('refund', () => store.refund('k', reserved.ticket, 1, quota));
    await note('refund again', () => store.refund('k', reserved.ticket, 1, quota));
    await note('refund of nothing left', () => store.refund('k', reserved.ticket, 1, quota));
    await note('never', () => store.consume('k', 2_000, 4, quota));
    for (let i = 0; i < 4; i++) await note(`burst ${i}`, () => store.consume('k', 2_000 + i, 1, quota));
    await note('penalty', () => store.penalty('k', 3_000, 2, quota));
    await note('block', () => store.block('k', 3_000, 2_000, quota));
    await note('blocked', () => store.consume('k', 4_000, 1, quota));
    await note('delete', () => store.delete('k'));
    await note('delete again', () => store.delete('k'));
    await note('after delete', () => store.consume('k', 4_000, 1, quota));
    for (let i = 0; i < 3; i++) await note(`extending block ${i}`, () => store.consume('b', 10_000 + i * 700, 1, blocking));
  }
  // Replies carrying Redis's error message: a key of the wrong type (WRONGTYPE), a GCRA state the
  // script did not write (its own error, naming the key).
  await setup.redis.set(`${prefix}log:{w}:log`, 'not a sorted set');
  await setup.redis.set(`${prefix}gcra:{w}:gcra`, '{"json": "but not a state"}');
  await note('wrong type', () => new RedisSlidingWindowLog(options('log')).consume('w', 1_000, 1, quota));
  await note('tampered', () => new RedisGCRA(options('gcra')).consume('w', 1_000, 1, quota));
  // A group of both, decided in one script call.
  let now = 0;
  const limiter = (strategy: RedisStrategy, q: Quota): RateLimiter =>
    new RateLimiter({ threshold: q.threshold, windowSeconds: q.windowSeconds, strategy, clock: () => now });
  const group = new RateLimitGroup([
    limiter(new RedisSlidingWindowLog(options('glog')), createQuota({ threshold: 2, windowSeconds: 1 })),
    limiter(new RedisGCRA(options('ggcra')), createQuota({ threshold: 3, windowSeconds: 10 })),
  ]);
  for (let i = 0; i < 5; i++) {
    now += 400;
    await note(`group ${i}`, () => group.allowRequest('g'));
  }
  return out;
}

describe('replies parse as through ioredis, whatever the client does to them', () => {
  let expected: unknown[];
  beforeAll(async () => {
    expected = await transcript(setup.redis, 'io:');
    // The transcript holds each kind of reply: errors of both kinds among them.
    expect(JSON.stringify(expected)).toContain('RateWardenRedisCommandError","ERR ratewarden: unexpected data in <prefix>log:{w}:log (WRONGTYPE');
    expect(JSON.stringify(expected)).toContain('does not hold GCRA state written by ratewarden');
  });

  it.each(CONFIGS.map((config, i) => [JSON.stringify(config), config, i] as const))('%s', async (_label, config, i) => {
    expect(await transcript(upstash(config), `up${i}:`)).toEqual(expected);
  });
});

describe('NOSCRIPT and errors', () => {
  it.each([true, false])('auto-pipelining %s: after SCRIPT FLUSH, EVALSHA meets NOSCRIPT and EVAL loads the script, once each time', async (enableAutoPipelining) => {
    const limiter = new RateLimiter({
      threshold: 3,
      windowSeconds: 60,
      strategy: new RedisGCRA({ client: upstash({ enableAutoPipelining }), prefix: `flush-${enableAutoPipelining}:`, blockCacheSize: 0 }),
    });
    await limiter.peek('warm-up');
    const allowed = [];
    const from = setup.front.received.length;
    for (let i = 0; i < 5; i++) {
      await setup.redis.script('FLUSH');
      allowed.push((await limiter.allowRequest('u')).allowed);
    }
    expect(allowed).toEqual([true, true, true, false, false]);
    expect(setup.front.received.slice(from).map((r) => r.commands[0]?.[0])).toEqual(new Array(5).fill(['evalsha', 'eval']).flat());
  });

  it('the NOSCRIPT error carries NOSCRIPT, without the command the client appends (the script, the keys)', async () => {
    const adapter = toRedisAdapter(upstash({ enableAutoPipelining: false }));
    const error = await adapter.evalSha('0'.repeat(40), ['k:{NOSCRIPT}'], ['t']).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(error?.constructor.name).toBe('UpstashError');
    expect(error?.message).toBe('NOSCRIPT No matching script. Please use EVAL.');
  });

  it('another error is no NOSCRIPT, even on a key that says NOSCRIPT: no EVAL is sent', async () => {
    const client = new Redis({ url: setup.front.url, token: 'not the token', enableAutoPipelining: false, retry: { retries: 0 } });
    const errors: unknown[] = [];
    const limiter = new RateLimiter({
      threshold: 3,
      windowSeconds: 60,
      strategy: new RedisSlidingWindowLog({ client, prefix: 'unauthorised:', onFailure: 'fail-closed', onError: (e) => errors.push(e) }),
    });
    const before = setup.front.attempts;
    expect(await limiter.allowRequest('NOSCRIPT')).toMatchObject({ allowed: false, degraded: 'fail-closed' });
    // The handshake's one request, refused (401); no EVAL after it.
    expect(setup.front.attempts - before).toBe(1);
    expect((errors[0] as Error).message).toBe('Unauthorized');
  });

  it('a unit that fails in Redis fails alone, with Redis\'s message, the others of its call decided', async () => {
    await setup.redis.set('alone:{bad}:log', 'not a sorted set');
    const strategy = new RedisSlidingWindowLog({ client: upstash(), prefix: 'alone:' });
    const limiter = new RateLimiter({ threshold: 3, windowSeconds: 60, strategy });
    const settled = await Promise.allSettled([limiter.allowRequest('good'), limiter.allowRequest('bad'), limiter.allowRequest('good')]);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((settled[1] as PromiseRejectedResult).reason).toBeInstanceOf(RateWardenRedisCommandError);
    expect(((settled[1] as PromiseRejectedResult).reason as Error).message).toMatch(/^ERR ratewarden: unexpected data in alone:\{bad\}:log \(WRONGTYPE /);
    expect(await setup.redis.zcard('alone:{good}:log')).toBe(2);
  });
});

describe('groups', () => {
  it('a group of both strategies on one Upstash client is one script call, all or nothing', async () => {
    const client = upstash({ enableAutoPipelining: false });
    let now = 0;
    const clock = (): number => now;
    const perSecond = new RateLimiter({ threshold: 2, windowSeconds: 1, clock, strategy: new RedisSlidingWindowLog({ client, prefix: 'g1:', time: 'limiter' }) });
    const perMinute = new RateLimiter({ threshold: 3, windowSeconds: 60, clock, strategy: new RedisGCRA({ client, prefix: 'g2:', time: 'limiter' }) });
    const group = new RateLimitGroup([perSecond, perMinute]);
    await group.peek('warm-up');
    const from = setup.front.received.length;
    const allowed = [];
    for (let i = 0; i < 5; i++) {
      now += 600;
      allowed.push((await group.allowRequest('alice')).allowed);
    }
    expect(allowed).toEqual([true, true, true, false, false]);
    const calls = setup.front.received.slice(from).map((r) => r.commands);
    expect(calls).toHaveLength(5);
    // One EVALSHA per decision, on both keys (and the call's token).
    for (const [command] of calls) expect(command?.slice(0, 5)).toEqual(['evalsha', DECIDE_SHA, '3', 'g1:{alice}:log', 'g2:{alice}:gcra']);
    // The refusals (by the minute's GCRA, at 2.4 s and 3 s) recorded nothing in the per-second
    // log: at 3 s its window holds nothing.
    expect(await perSecond.peek('alice')).toMatchObject({ allowed: true, remaining: 2 });
  });
});

describe('the same decisions as on ioredis', () => {
  const op = fc.oneof(
    { weight: 5, arbitrary: fc.record({ kind: fc.constantFrom('consume' as const, 'peek' as const, 'reserve' as const), key: fc.constantFrom('a', 'b'), cost: fc.integer({ min: 1, max: 5 }) }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('refund' as const), pick: fc.nat(), units: fc.integer({ min: 1, max: 3 }) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('penalty' as const), key: fc.constantFrom('a', 'b'), cost: fc.integer({ min: 1, max: 4 }) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('block' as const), key: fc.constantFrom('a', 'b'), ms: fc.integer({ min: 1, max: 2_000 }) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('delete' as const), key: fc.constantFrom('a', 'b') }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('group' as const), key: fc.constantFrom('a', 'b'), cost: fc.integer({ min: 1, max: 3 }) }) },
  );
  const scheduleArb = fc.record({
    config: fc.constantFrom(...CONFIGS),
    threshold: fc.integer({ min: 1, max: 5 }),
    windowMs: fc.integer({ min: 1, max: 3_000 }),
    blockMs: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 2_000 })),
    extendBlock: fc.boolean(),
    cache: fc.boolean(),
    steps: fc.array(fc.record({ dt: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 1_500 })), op }), { minLength: 10, maxLength: 40 }),
  });
  type Schedule = typeof scheduleArb extends fc.Arbitrary<infer T> ? T : never;

  let run = 0;
  /** What a schedule does on one client: every result, refund and error, in order. */
  async function play(client: object, prefix: string, s: Schedule): Promise<unknown[]> {
    const quota = createQuota({ threshold: s.threshold, windowSeconds: s.windowMs / 1000, blockSeconds: s.blockMs / 1000, extendBlock: s.extendBlock });
    const options = (name: string): RedisStrategyOptions => ({ client, prefix: `${prefix}${name}:`, time: 'limiter', ...(s.cache ? {} : { blockCacheSize: 0 }) });
    const log = new RedisSlidingWindowLog(options('log'));
    const gcra = new RedisGCRA(options('gcra'));
    let now = 1_000_000;
    const clock = (): number => now;
    const group = new RateLimitGroup([
      new RateLimiter({ threshold: s.threshold, windowSeconds: s.windowMs / 1000, strategy: new RedisSlidingWindowLog(options('glog')), clock }),
      new RateLimiter({ threshold: s.threshold + 1, windowSeconds: (2 * s.windowMs) / 1000, strategy: new RedisGCRA(options('ggcra')), clock }),
    ]);
    const reservations: { store: RedisStrategy; key: string; reservation: StoreReservation; left: number }[] = [];
    const out: unknown[] = [];
    let i = 0;
    for (const { dt, op } of s.steps) {
      now += dt;
      const store = i++ % 2 === 0 ? log : gcra;
      const key = 'key' in op ? op.key : 'a';
      try {
        if (op.kind === 'consume') out.push(await store.consume(key, now, op.cost, quota));
        else if (op.kind === 'peek') out.push(await store.peek(key, now, op.cost, quota));
        else if (op.kind === 'reserve') {
          const reservation = await store.reserve(key, now, op.cost, quota);
          out.push(reservation.result);
          if (reservation.result.allowed) reservations.push({ store, key, reservation, left: op.cost });
        } else if (op.kind === 'refund') {
          const open = reservations.filter((r) => r.left > 0);
          const r = open[op.pick % Math.max(open.length, 1)];
          if (r === undefined) continue;
          const units = Math.min(op.units, r.left);
          const given = await r.store.refund(r.key, r.reservation.ticket, units, quota);
          if (given) r.left -= units;
          out.push(['refund', given]);
        } else if (op.kind === 'penalty') out.push(await store.penalty(key, now, Math.min(op.cost, s.threshold), quota));
        else if (op.kind === 'block') {
          await store.block(key, now, op.ms, quota);
          out.push(['block']);
        } else if (op.kind === 'delete') out.push(['delete', await store.delete(key)]);
        else out.push(await group.allowRequest(key, { cost: op.cost }));
      } catch (error) {
        out.push(['error', (error as Error).constructor.name, (error as Error).message.replaceAll(prefix, '<prefix>')]);
      }
    }
    return out;
  }

  it('property: a random schedule of every operation, any client options: identical results, refunds and errors', async () => {
    await fc.assert(
      fc.asyncProperty(scheduleArb, async (s) => {
        const n = run++;
        const onIoredis = await play(setup.redis, `same:io:${n}:`, s);
        const onUpstash = await play(upstash(s.config), `same:up:${n}:`, s);
        expect(onUpstash).toEqual(onIoredis);
      }),
      { numRuns: Number(process.env.CONTRACT_RUNS ?? 40) },
    );
  }, 120_000);
});
