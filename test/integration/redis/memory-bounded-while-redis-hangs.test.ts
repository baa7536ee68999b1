// Fault class: memory is bounded for as long as Redis hangs. Black box: `RateLimiter` with
// `RedisSlidingWindowLog` and `RedisGCRA` (alternating, on one client), `timeoutSeconds: 0.05`,
// `onFailure: 'local'`, both clients, in two situations:
// - from the first call: a TCP server on 127.0.0.1 that accepts connections, reads everything
//   and never answers — not even the handshake that the first call on a client sends;
// - after Redis answered: a real redis-server behind a proxy that, once one decision of each
//   strategy has been answered (script loaded, the server's clock known), reads everything and
//   forwards and answers nothing (Redis hangs, its connection open).
// The clients really write their commands to the socket (ioredis: no ready check, no
// client-info handshake, RESP2; node-redis: RESP2, no client-info or maintenance handshake).
// 100,000 decisions in 50 waves of 2,000, each wave awaited (every decision settles by the
// local fallback after the timeout), on 100 users (the local fallback's own table stays small).
// Then:
// - the live heap (after forced full GCs) may not grow by HEAP_GROWTH_BOUND or more between the
//   end of wave 10 and the end of wave 50: it must not grow with the number of decisions;
// - the script calls outstanding — written to the hung connection, which answers none, so every
//   one is still held by the client — may not exceed OUTSTANDING_BOUND; for ioredis the same
//   bound holds for its own queues (`commandQueue` + `offlineQueue`). node-redis's queue is a
//   private field: the heap bound covers it.
//
// Measured on the original code (2 cores, Node 20.20, ioredis 6.0.0, node-redis 6.3.1), growth
// from wave 10 to wave 50 (80,000 decisions):
//                          heap growth             script calls outstanding at the end
//   ioredis, first call    68.4 MB (896 B/decision)    1 (the handshake; every later batch waits
//   node-redis, first call 69.7 MB (913 B/decision)    1  on it, holding its decisions forever)
//   ioredis, after answer  77.7 MB (1019 B/decision)   3,125 (ioredis commandQueue: 3,125)
//   node-redis, after ans. 80.9 MB (1060 B/decision)   3,125
// (every full batch of 32 is sent at once, whatever is in flight: 100,000 / 32 calls, none
// answered, each holding its batch's decisions and arguments.)
import v8 from 'node:v8';
import vm from 'node:vm';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { RateLimiter } from '../../../src/index.js';
import { RedisGCRA, RedisSlidingWindowLog } from '../../../src/redis/index.js';
import { failOnUnhandledRejections } from '../../support/unhandled.js';
import { RedisServer, blackHole, forwardingProxy } from '../../support/redis-server.js';

failOnUnhandledRejections();

const WAVES = 50;
const PER_WAVE = 2_000;
const USERS = 100;
/** The wave after which the heap is first measured (warmed up: JIT, pools, the local table). */
const BASELINE_WAVE = 10;
/** Heap growth allowed from the end of wave 10 to the end of the last wave, bytes. */
const HEAP_GROWTH_BOUND = 5 * 1024 * 1024;
/** Commands allowed outstanding on the hung connection at the end. */
const OUTSTANDING_BOUND = 500;

/** A forced full GC (the worker was not started with --expose-gc). */
const gc: () => void = (() => {
  v8.setFlagsFromString('--expose-gc');
  return vm.runInNewContext('gc') as () => void;
})();

/** Live heap bytes (heap plus ArrayBuffer backing stores), after two full GCs. */
function liveBytes(): number {
  gc();
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

const MB = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

/** Counts the script calls (`EVALSHA`/`EVAL` requests: RESP arrays of bulk strings) in client streams. */
function scriptCallCounter(): { connection: () => (chunk: Buffer) => void; calls: () => number } {
  let calls = 0;
  return {
    calls: () => calls,
    connection: () => {
      let pending: Buffer = Buffer.alloc(0);
      return (chunk) => {
        pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
        let at = 0;
        // Complete requests only: `*N\r\n` then N × `$len\r\n<bytes>\r\n`.
        for (;;) {
          const start = at;
          if (pending[at] !== 0x2a) break;
          const eol = pending.indexOf('\r\n', at);
          if (eol < 0) break;
          const n = Number(pending.toString('latin1', at + 1, eol));
          at = eol + 2;
          let command = '';
          let complete = true;
          for (let i = 0; i < n; i++) {
            const lenEnd = pending.indexOf('\r\n', at);
            if (pending[at] !== 0x24 || lenEnd < 0) {
              complete = false;
              break;
            }
            const len = Number(pending.toString('latin1', at + 1, lenEnd));
            if (lenEnd + 2 + len + 2 > pending.length) {
              complete = false;
              break;
            }
            if (i === 0) command = pending.toString('latin1', lenEnd + 2, lenEnd + 2 + len).toUpperCase();
            at = lenEnd + 2 + len + 2;
          }
          if (!complete) {
            at = start;
            break;
          }
          if (command === 'EVALSHA' || command === 'EVAL') calls++;
        }
        pending = pending.subarray(at);
      };
    },
  };
}

/**
 * A TCP server on 127.0.0.1 that accepts connections, reads everything and never answers,
 * counting the script calls it received.
 */
async function silentServer(): Promise<{ port: number; scriptCalls: () => number; close: () => Promise<void> }> {
  const counter = scriptCallCounter();
  const hole = await blackHole(() => counter.connection());
  return { port: hole.port, scriptCalls: counter.calls, close: hole.close };
}

interface HungClient {
  readonly name: string;
  readonly client: object;
  /** Commands the client itself still holds (queued or awaiting a reply), when reachable. */
  readonly queued: (() => number) | undefined;
  close(): Promise<void>;
}

/** ioredis, connected to the silent server and writing to it: "ready" without any reply. */
async function hungIoredis(port: number): Promise<HungClient> {
  const client = new Redis({
    port,
    host: '127.0.0.1',
    lazyConnect: false,
    enableReadyCheck: false,
    disableClientInfo: true,
    protocol: 2,
    maxRetriesPerRequest: null,
  });
  client.on('error', () => {});
  if (client.status !== 'ready') await once(client, 'ready');
  const internals = client as unknown as { commandQueue: { length: number }; offlineQueue: { length: number } };
  return {
    name: 'ioredis',
    client,
    queued: () => internals.commandQueue.length + internals.offlineQueue.length,
    close: async () => client.disconnect(),
  };
}

/** node-redis, connected to the silent server and writing to it (no handshake command to wait for). */
async function hungNodeRedis(port: number): Promise<HungClient> {
  const client = createClient({
    socket: { port, host: '127.0.0.1', reconnectStrategy: false },
    RESP: 2,
    disableClientInfo: true,
    maintNotifications: 'disabled',
  });
  client.on('error', () => {});
  await client.connect();
  // Its command queue is a private field: the heap bound and the server's count cover it.
  return { name: 'node-redis', client, queued: undefined, close: async () => client.destroy() };
}

const CLIENTS = [
  ['ioredis', hungIoredis],
  ['node-redis', hungNodeRedis],
] as const;

/**
 * A TCP proxy on 127.0.0.1 in front of a real redis-server that forwards both ways until
 * `hang()`; from then on it reads everything the client sends, forwards nothing and answers
 * nothing (Redis hangs, its connection open), counting the script calls it swallowed.
 */
async function hangingProxy(targetPort: number): Promise<{ port: number; hang: () => void; scriptCalls: () => number; close: () => Promise<void> }> {
  let hung = false;
  const counter = scriptCallCounter();
  const proxy = await forwardingProxy(targetPort, () => {
    const count = counter.connection();
    return {
      fromClient: (chunk, _client, upstream) => {
        if (hung) count(chunk);
        else upstream.write(chunk);
      },
      fromServer: (chunk, client) => {
        if (!hung) client.write(chunk);
      },
    };
  });
  return {
    port: proxy.port,
    hang: () => {
      hung = true;
    },
    scriptCalls: counter.calls,
    close: proxy.close,
  };
}

/** Limiters of both strategies on one client, and their decisions alternating as one function. */
function bothStrategies(client: object, prefix: string): { limiters: RateLimiter[]; decide: (user: string) => Promise<{ degraded?: string }> } {
  const options = { client, timeoutSeconds: 0.05, onFailure: 'local' as const };
  // Threshold and window: the local fallback's own state (100 users) stays small and bounded.
  const log = new RateLimiter({ threshold: 10_000, windowSeconds: 1, strategy: new RedisSlidingWindowLog({ ...options, prefix: `${prefix}log:` }) });
  const gcra = new RateLimiter({ threshold: 10_000, windowSeconds: 1, strategy: new RedisGCRA({ ...options, prefix: `${prefix}gcra:` }) });
  let i = 0;
  return { limiters: [log, gcra], decide: (user) => ((i++ & 1) === 0 ? log : gcra).allowRequest(user) };
}

interface Measured {
  readonly summary: string;
  readonly growth: number;
  readonly outstanding: number;
  readonly queued: number | undefined;
  readonly other: number;
}

/**
 * 100,000 decisions in waves on a hung connection, each wave awaited; the heap after wave 10
 * and at the end, and the script calls written to the hung server since `calls0`.
 */
async function flood(label: string, c: HungClient, decide: (user: string) => Promise<{ degraded?: string }>, calls: () => number): Promise<Measured> {
  const calls0 = calls();
  const users = Array.from({ length: USERS }, (_, i) => `user-${i}`);
  let other = 0;
  const count = (r: { degraded?: string }): void => {
    if (r.degraded !== 'local') other++;
  };
  let baseline = 0;
  let baselineOutstanding = 0;
  let baselineQueued = 0;
  const t0 = performance.now();
  for (let wave = 1; wave <= WAVES; wave++) {
    const pending: Promise<void>[] = new Array(PER_WAVE);
    for (let i = 0; i < PER_WAVE; i++) pending[i] = decide(users[i % USERS] as string).then(count);
    await Promise.all(pending);
    if (wave === BASELINE_WAVE) {
      baseline = liveBytes();
      baselineOutstanding = calls() - calls0;
      baselineQueued = c.queued?.() ?? 0;
    }
  }
  const seconds = (performance.now() - t0) / 1000;
  // Let the last writes reach the server.
  await new Promise((resolve) => setTimeout(resolve, 100));
  const end = liveBytes();
  const growth = end - baseline;
  const outstanding = calls() - calls0;
  const queued = c.queued?.();
  const summary =
    `${c.name}, ${label}: ${WAVES * PER_WAVE} decisions (both strategies) in ${WAVES} waves of ${PER_WAVE} (${seconds.toFixed(1)} s); ` +
    `heap ${MB(baseline)} after wave ${BASELINE_WAVE}, ${MB(end)} after wave ${WAVES}: GREW ${MB(growth)} ` +
    `(${(growth / ((WAVES - BASELINE_WAVE) * PER_WAVE)).toFixed(0)} bytes per decision; bound ${MB(HEAP_GROWTH_BOUND)}); ` +
    `script calls written to the hung connection, never answered: ${baselineOutstanding} after wave ${BASELINE_WAVE}, ${outstanding} at the end (bound ${OUTSTANDING_BOUND})` +
    (queued === undefined ? '' : `; commands held in the client's queues: ${baselineQueued} after wave ${BASELINE_WAVE}, ${queued} at the end`);
  console.log(summary);
  return { summary, growth, outstanding, queued, other };
}

function expectBounded(m: Measured): void {
  // Every decision was settled by the local fallback: the server answered none.
  expect(m.other, m.summary).toBe(0);
  // Soft: each bound that is exceeded is reported.
  expect.soft(m.growth, `the heap grew while Redis hung — ${m.summary}`).toBeLessThan(HEAP_GROWTH_BOUND);
  expect.soft(m.outstanding, `commands piled up on the hung connection — ${m.summary}`).toBeLessThanOrEqual(OUTSTANDING_BOUND);
  if (m.queued !== undefined) expect.soft(m.queued, `commands piled up in the client — ${m.summary}`).toBeLessThanOrEqual(OUTSTANDING_BOUND);
}

describe.each(CLIENTS)('with %s', (name, connectTo) => {
  describe('memory is bounded for as long as Redis hangs', () => {
    it(
      'from the first call (a server that accepts the connection and never answers, the handshake included), timeoutSeconds 0.05, onFailure local: 100,000 decisions grow neither the heap nor the commands outstanding',
      async () => {
        const hole = await silentServer();
        const c = await connectTo(hole.port);
        try {
          expectBounded(await flood('never answered', c, bothStrategies(c.client, `first-${name}:`).decide, hole.scriptCalls));
        } finally {
          await c.close();
          await hole.close();
        }
      },
      60_000,
    );

    it(
      'after Redis answered (the connection then hangs: read, never answered), timeoutSeconds 0.05, onFailure local: 100,000 decisions grow neither the heap nor the commands outstanding',
      async () => {
        const server = await RedisServer.start();
        const proxy = await hangingProxy(server.port);
        const c = await connectTo(proxy.port);
        try {
          const { limiters, decide } = bothStrategies(c.client, `later-${name}:`);
          // One decision of each strategy answered by Redis: the script is loaded, the server's
          // clock known. (Retried: on a loaded machine the first may miss the 50 ms timeout.)
          for (const limiter of limiters) {
            let answered = false;
            for (let attempt = 0; attempt < 200 && !answered; attempt++) answered = (await limiter.allowRequest('warm')).degraded === undefined;
            expect(answered, 'Redis never answered a warm-up decision within 50 ms').toBe(true);
          }
          proxy.hang();
          expectBounded(await flood('hung after answering', c, decide, proxy.scriptCalls));
        } finally {
          await c.close();
          await proxy.close();
          await server.stop();
        }
      },
      60_000,
    );
  });
});
