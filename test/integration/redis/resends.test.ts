// Clients that re-send a command after a reconnect (ioredis, by default): a decision whose
// script ran but whose reply was lost with the connection is run again. It must take effect
// once, and the caller must get the reply of the run that took effect. Real redis-server; the
// lost reply is made by a TCP proxy that drops the server's next reply and closes the
// connection (the script has run: its reply was on its way), or by CLIENT KILL.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { RateLimitGroup, RateLimiter } from '../../../src/index.js';
import { RedisGCRA, RedisSlidingWindowLog, toRedisAdapter } from '../../../src/redis/index.js';
import { DECIDE_SCRIPT } from '../../../src/redis/script.js';
import { RedisServer, lossyProxy } from '../../support/redis-server.js';

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown): void => {
  unhandled.push(reason);
};
let server: RedisServer;
let raw: Redis;
beforeAll(async () => {
  process.on('unhandledRejection', onUnhandled);
  server = await RedisServer.start();
  raw = new Redis({ port: server.port, host: '127.0.0.1' });
});
afterAll(async () => {
  process.off('unhandledRejection', onUnhandled);
  raw?.disconnect();
  await server?.stop();
});
afterEach(() => {
  expect(unhandled).toEqual([]);
});

const WINDOW_MS = 60_000;
/** GCRA's debt unit: a request of cost 1 adds the window in ticks (2^-10 ms). */
const GCRA_UNIT = WINDOW_MS * 1024;

type Path = 'RedisSlidingWindowLog' | 'RedisGCRA' | 'a group of both';
const PATHS: readonly Path[] = ['RedisSlidingWindowLog', 'RedisGCRA', 'a group of both'];
const TIMES = ['redis', 'limiter'] as const;

/** The decider of `path` on `client`, and how many requests Redis holds recorded for `u`. */
function decider(path: Path, client: object, time: 'redis' | 'limiter', prefix: string, threshold: number) {
  // No block cache: every decision (refusals too) must reach Redis, to have its reply lost.
  const options = { client, onFailure: 'throw' as const, timeoutSeconds: 1, time, blockCacheSize: 0 };
  // A constant clock in `limiter` mode: the GCRA's debt is then an exact multiple of its unit.
  const clock = time === 'limiter' ? { clock: () => 1_000 } : {};
  const log = new RateLimiter({
    threshold,
    windowSeconds: WINDOW_MS / 1000,
    ...clock,
    strategy: new RedisSlidingWindowLog({ ...options, prefix: `${prefix}log:` }),
  });
  const gcra = new RateLimiter({
    threshold,
    windowSeconds: WINDOW_MS / 1000,
    ...clock,
    strategy: new RedisGCRA({ ...options, prefix: `${prefix}gcra:` }),
  });
  const logKey = `${prefix}log:{u}:log`;
  const gcraKey = `${prefix}gcra:{u}:gcra`;
  /** Requests recorded: the log's members; the GCRA's debt in requests (rounded up: it is repaid as time passes). */
  const recorded = async (): Promise<number[]> => {
    const counts: number[] = [];
    if (path !== 'RedisGCRA') counts.push(await raw.zcard(logKey));
    if (path !== 'RedisSlidingWindowLog') {
      // Four little-endian doubles: at, debt, threshold, window.
      const state = await raw.getBuffer(gcraKey);
      counts.push(state === null ? 0 : Math.ceil(state.readDoubleLE(8) / GCRA_UNIT));
    }
    return counts;
  };
  const group = new RateLimitGroup([log, gcra]);
  const decide = async (cost = 1): Promise<boolean> => {
    if (path === 'RedisSlidingWindowLog') return (await log.allowRequest('u', { cost })).allowed;
    if (path === 'RedisGCRA') return (await gcra.allowRequest('u', { cost })).allowed;
    return (await group.allowRequest('u', { cost })).allowed;
  };
  // A peek on another user: the handshake (and the script cached), before any reply is dropped.
  const warmUp = async (): Promise<void> => {
    await log.peek('warm-up');
    await gcra.peek('warm-up');
  };
  return { decide, recorded, warmUp, same: path === 'a group of both' ? 2 : 1 };
}

describe('a re-sent decision is recorded once, and answered as it was recorded', () => {
  let proxy: Awaited<ReturnType<typeof lossyProxy>>;
  let client: Redis;
  beforeAll(async () => {
    proxy = await lossyProxy(server.port);
    // ioredis's defaults: autoResendUnfulfilledCommands, the offline queue, reconnecting.
    client = new Redis({ port: proxy.port, host: '127.0.0.1' });
    client.on('error', () => {});
  });
  afterAll(async () => {
    client?.disconnect();
    await proxy?.close();
  });

  it('ioredis re-sends by default (the adapter says so)', () => {
    expect(toRedisAdapter(client).resends).toBe(true);
  });

  const CASES = PATHS.flatMap((path) => TIMES.map((time) => [path, time] as const));
  it.each(CASES)('%s, time "%s": every reply lost once, the call re-sent', async (path, time) => {
    const d = decider(path, client, time, `lost:${path}:${time}:`, 3);
    await d.warmUp();
    const reported: boolean[] = [];
    for (let i = 0; i < 5; i++) {
      const dropped = proxy.dropNextReply();
      reported.push(await d.decide());
      await dropped;
    }
    expect(reported).toEqual([true, true, true, false, false]);
    expect(await d.recorded()).toEqual(new Array(d.same).fill(3));
  });

  it.each(PATHS)('%s: the script flushed before each call (NOSCRIPT, then EVAL), the EVAL\'s reply lost', async (path) => {
    const d = decider(path, client, 'redis', `noscript:${path}:`, 3);
    await d.warmUp();
    const reported: boolean[] = [];
    for (let i = 0; i < 5; i++) {
      await raw.script('FLUSH');
      // Let the NOSCRIPT error through, drop the EVAL's reply.
      const dropped = proxy.dropNextReply(1);
      reported.push(await d.decide());
      await dropped;
    }
    expect(reported).toEqual([true, true, true, false, false]);
    expect(await d.recorded()).toEqual(new Array(d.same).fill(3));
  });

  it('property: any path, any costs, any replies lost: the units recorded are the units reported allowed', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...PATHS),
        fc.array(fc.record({ cost: fc.integer({ min: 1, max: 3 }), lose: fc.boolean() }), { minLength: 1, maxLength: 6 }),
        async (path, steps) => {
          const d = decider(path, client, 'limiter', `prop:${run++}:`, 5);
          await d.warmUp();
          let allowed = 0;
          for (const { cost, lose } of steps) {
            const dropped = lose ? proxy.dropNextReply() : undefined;
            if (await d.decide(cost)) allowed += cost;
            await dropped;
          }
          expect(await d.recorded()).toEqual(new Array(d.same).fill(allowed));
        },
      ),
      { numRuns: 12 },
    );
  }, 60_000);

  it('keeps the token for the time left to the deadline plus 1 s', async () => {
    const d = decider('RedisSlidingWindowLog', client, 'redis', 'token:', 3);
    await d.warmUp();
    await d.decide();
    const tokens = await raw.keys('token:log:{u}:log:call:*');
    expect(tokens).toHaveLength(1);
    const ttl = await raw.pttl(tokens[0] as string);
    expect(ttl).toBeGreaterThan(1_000);
    expect(ttl).toBeLessThanOrEqual(2_000);
  });
});

describe('the attacker\'s loop: 20 parallel decisions, then CLIENT KILL TYPE normal, round after round', () => {
  // ioredis re-sends what was unanswered after each kill: some of those scripts had run.
  const SETUPS = [
    ['RedisSlidingWindowLog', 'redis'],
    ['a group of both', 'limiter'],
  ] as const;
  it.each(SETUPS)('%s, time "%s": as many requests recorded as reported allowed, none failed', async (path, time) => {
    const client = new Redis({ port: server.port, host: '127.0.0.1' });
    client.on('error', () => {});
    try {
      const d = decider(path, client, time, `loop:${path}:`, 1_000);
      await d.warmUp();
      let allowed = 0;
      let failed = 0;
      for (let round = 0; round < 8; round++) {
        const settled = Promise.allSettled(Array.from({ length: 20 }, () => d.decide()));
        await raw.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
        for (const o of await settled) {
          if (o.status === 'rejected') failed++;
          else if (o.value) allowed++;
        }
      }
      expect(failed).toBe(0);
      expect(allowed).toBe(160);
      expect(await d.recorded()).toEqual(new Array(d.same).fill(160));
    } finally {
      client.disconnect();
    }
  });
});

describe('a client that never re-sends keeps exactly one write per decision (no token)', () => {
  const NO_RESEND: readonly [string, () => Promise<{ client: object; close(): void }>][] = [
    [
      'node-redis',
      async () => {
        const c = createClient({ url: server.url });
        c.on('error', () => {});
        await c.connect();
        return { client: c, close: () => c.destroy() };
      },
    ],
    [
      'ioredis with autoResendUnfulfilledCommands: false',
      async () => {
        const c = new Redis({ port: server.port, host: '127.0.0.1', autoResendUnfulfilledCommands: false });
        c.on('error', () => {});
        return { client: c, close: () => c.disconnect() };
      },
    ],
  ];
  it.each(NO_RESEND)('%s', async (name, connect) => {
    const c = await connect();
    try {
      expect(toRedisAdapter(c.client).resends).toBe(false);
      const prefix = `once:${name}:`;
      const d = decider('a group of both', c.client, 'redis', prefix, 3);
      await d.warmUp();
      for (let i = 0; i < 4; i++) await d.decide();
      expect(await d.recorded()).toEqual([3, 3]);
      expect(await raw.keys(`${prefix}*`)).toHaveLength(2);
    } finally {
      c.close();
    }
  });
});

describe('the script in mode "r": a call re-sent after its deadline', () => {
  // The script called directly (raw connection), in the layout of src/redis/protocol.ts: ARGV[4]
  // is the call's latest deadline in the server's microseconds since 2027-01-15T08:00:00Z; then
  // one unit (one entry, recording, the same deadline) deciding one unit of a log of 1 per 60 s.
  const serverUs = async (): Promise<number> => {
    const [s, us] = (await raw.time()) as [string | number, string | number];
    return (Number(s) - 1_800_000_000) * 1e6 + Number(us);
  };
  const run = (keys: string[], deadline: number): Promise<unknown> =>
    raw.eval(DECIDE_SCRIPT, keys.length, ...keys, 'r', '', '1', String(deadline), '1', '1', String(deadline), 'l', '1', '60000', '1');

  it('answers with the stored reply when the first run took effect, and writes nothing more', async () => {
    const keys = ['late:{u}:log', 'late:{u}:log:call:a'];
    const first = (await run(keys, (await serverUs()) + 1e6)) as unknown[];
    // wait 0 (allowed), remaining 0, the reset (a window, in ticks), shift 0; then the server time.
    expect(first.slice(0, 4)).toEqual([0, 0, 60_000 * 1024, 0]);
    // Re-sent after the deadline (and after the limit would have refused another request).
    const again = (await run(keys, (await serverUs()) - 1)) as unknown[];
    expect(again.slice(0, 4)).toEqual(first.slice(0, 4));
    expect(again).toHaveLength(first.length);
    expect(await raw.zcard('late:{u}:log')).toBe(1);
  });

  it('stores no reply when the first run recorded nothing (a re-run decides afresh)', async () => {
    const keys = ['full:{u}:log', 'full:{u}:log:call:a'];
    await run(['full:{u}:log', 'full:{u}:log:call:0'], (await serverUs()) + 1e6); // takes the one unit
    const refused = (await run(keys, (await serverUs()) + 1e6)) as unknown[];
    expect(Number(refused[0])).toBeGreaterThan(0); // refused: a wait
    expect(await raw.exists('full:{u}:log:call:a')).toBe(0);
    expect(await raw.exists('full:{u}:log:call:0')).toBe(1);
  });

  it('writes nothing when the first run never took effect (no token) and the deadline has passed', async () => {
    const keys = ['late2:{u}:log', 'late2:{u}:log:call:a'];
    const late = (await run(keys, (await serverUs()) - 1)) as unknown[];
    expect(late).toHaveLength(2);
    expect(late[0]).toBe(-1);
    expect(await raw.exists('late2:{u}:log', 'late2:{u}:log:call:a')).toBe(0);
  });
});
