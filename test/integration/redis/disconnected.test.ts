// What happens when Redis goes down, with the clients as the README creates them (their default
// reconnection and offline queue, an `error` listener attached), against a real redis-server killed
// with SIGKILL and restarted on the same port:
// - while the client reconnects, every decision fails at once through the failure policy, with a
//   RateWardenRedisUnavailableError, neither queued in the client nor sent. The strategies time out
//   after an hour (timeoutSeconds: 3600): a decision that waited for the client would time the test
//   out (no wall clock is read, nothing sleeps);
// - once Redis is back, Redis decides again;
// - a new client (lazyConnect, or still connecting) is not failed fast;
// - node-redis without an `error` listener crashes the process when Redis is killed (a child
//   process), after the warning; with one, the process keeps answering, by its policy.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { describe, expect, it } from 'vitest';
import { useCleanups } from '../../support/cleanups.js';
import { RateLimitGroup, RateLimiter, rateLimitProblem, type RateLimitResult } from '../../../src/index.js';
import {
  RateWardenRedisUnavailableError,
  RedisGCRA,
  RedisSlidingWindowLog,
  toRedisAdapter,
  type RedisAdapter,
  type RedisFailurePolicy,
} from '../../../src/redis/index.js';
import { RedisServer } from '../../support/redis-server.js';
import { failOnUnhandledRejections } from '../../support/unhandled.js';

failOnUnhandledRejections();

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const POLICIES: readonly RedisFailurePolicy[] = ['throw', 'fail-closed', 'fail-open', 'local'];
/** An hour: far beyond the test's own timeout, so only failing fast lets a decision settle. */
const HOUR = 3600;

/** A client made as the README makes it, with an `error` listener; events to wait on. */
interface Client {
  readonly client: object;
  /** Resolves at the client's next `event` (`'reconnecting'`, `'ready'`), whatever errors it emits meanwhile. */
  next(event: 'reconnecting' | 'ready'): Promise<void>;
  close(): void;
}

const CLIENTS = [
  [
    'ioredis',
    async (url: string): Promise<Client> => {
      const client = new Redis(url);
      client.on('error', () => {});
      await once(client, 'ready');
      return { client, next: (event) => new Promise((resolve) => client.once(event, () => resolve())), close: () => client.disconnect() };
    },
  ],
  [
    'node-redis',
    async (url: string): Promise<Client> => {
      const client = createClient({ url });
      client.on('error', () => {});
      await client.connect();
      return { client, next: (event) => new Promise((resolve) => client.once(event, () => resolve())), close: () => client.destroy() };
    },
  ],
] as const;

/** What each test started, stopped after it; a redis-server of the test's own. */
const { cleanups, server } = useCleanups();

/** Kills `s` and resolves once `c` is reconnecting. */
async function kill(s: RedisServer, c: Client): Promise<void> {
  const reconnecting = c.next('reconnecting');
  await s.kill();
  await reconnecting;
}

/** Restarts `s` and resolves once `c` is ready again. */
async function restart(s: RedisServer, c: Client): Promise<void> {
  const ready = c.next('ready');
  await s.restart();
  await ready;
}

/** The adapter of `client`, counting the script calls it sends. */
function counting(client: object): RedisAdapter & { sent: number } {
  const inner = toRedisAdapter(client);
  const adapter = {
    ratewardenAdapter: true as const,
    resends: inner.resends === true,
    sent: 0,
    connected: () => inner.connected?.() !== false,
    evalSha: (sha: string, keys: readonly string[], args: readonly string[]) => {
      adapter.sent++;
      return inner.evalSha(sha, keys, args);
    },
    eval: (script: string, keys: readonly string[], args: readonly string[]) => {
      adapter.sent++;
      return inner.eval(script, keys, args);
    },
  };
  return adapter;
}

describe.each(CLIENTS)('%s, as the README creates it (default reconnection and offline queue)', (name, connect) => {
  it('while it reconnects, each policy decides at once (RateWardenRedisUnavailableError); once Redis is back, Redis decides', async () => {
    const s = await server();
    const c = await connect(s.url);
    cleanups.push(() => c.close());
    const errors: unknown[] = [];
    const limiters = new Map(
      POLICIES.map((onFailure) => [
        onFailure,
        new RateLimiter({
          threshold: 3,
          windowSeconds: 60,
          strategy: new RedisSlidingWindowLog({ client: c.client, prefix: `down-${onFailure}:`, onFailure, timeoutSeconds: HOUR, onError: (error) => errors.push(error) }),
        }),
      ]),
    );
    const limiter = (policy: RedisFailurePolicy): RateLimiter => limiters.get(policy) as RateLimiter;
    for (const policy of POLICIES) expect(await limiter(policy).allowRequest('alice')).toEqual({ allowed: true, remaining: 2, retryAfter: 0, limit: 3, resetAfter: 60 });

    await kill(s, c);
    expect(toRedisAdapter(c.client).connected?.()).toBe(false);
    const thrown = await limiter('throw').allowRequest('alice').catch((error: unknown) => error);
    expect(thrown).toBeInstanceOf(RateWardenRedisUnavailableError);
    expect(thrown).toMatchObject({ code: 'ERR_RATEWARDEN_REDIS_UNAVAILABLE', name: 'Error' });
    expect(await limiter('fail-closed').allowRequest('alice')).toEqual({ allowed: false, remaining: 0, retryAfter: 1, limit: 3, resetAfter: 1, degraded: 'fail-closed' });
    expect(await limiter('fail-open').allowRequest('alice')).toEqual({ allowed: true, remaining: 2, retryAfter: 0, limit: 3, resetAfter: 0, degraded: 'fail-open' });
    expect(await limiter('local').allowRequest('alice')).toMatchObject({ allowed: true, remaining: 2, degraded: 'local' });
    // A peek fails fast too.
    expect(await limiter('fail-closed').peek('alice')).toMatchObject({ allowed: false, degraded: 'fail-closed' });
    // onError saw each failure, as the unavailable error.
    await Promise.resolve();
    expect(errors).toHaveLength(5);
    expect(errors.every((e) => e instanceof RateWardenRedisUnavailableError)).toBe(true);

    await restart(s, c);
    expect(toRedisAdapter(c.client).connected?.()).toBe(true);
    // An empty server (no persistence): alice starts afresh, decided by Redis again.
    for (const policy of POLICIES) expect(await limiter(policy).allowRequest('alice')).toEqual({ allowed: true, remaining: 2, retryAfter: 0, limit: 3, resetAfter: 60 });
  }, 20_000);

  it('while it reconnects, nothing is sent or queued in the client, a group (fail-closed) is refused at once with a 503 problem, and both strategies fail fast', async () => {
    const s = await server();
    const c = await connect(s.url);
    cleanups.push(() => c.close());
    const adapter = counting(c.client);
    const log = new RateLimiter({ threshold: 3, windowSeconds: 60, strategy: new RedisSlidingWindowLog({ client: adapter, prefix: 'q-log:', onFailure: 'fail-closed', timeoutSeconds: HOUR }) });
    const gcra = new RateLimiter({ threshold: 10, windowSeconds: 1, strategy: new RedisGCRA({ client: adapter, prefix: 'q-gcra:', onFailure: 'fail-closed', timeoutSeconds: HOUR }) });
    const group = new RateLimitGroup([
      { limiter: log, name: 'minute' },
      { limiter: gcra, name: 'second' },
    ]);
    expect((await group.allowRequest('alice')).allowed).toBe(true);
    const before = adapter.sent;
    expect(before).toBeGreaterThan(0);

    await kill(s, c);
    // Many at once (they would batch): every one settles now, by the policy.
    const results = await Promise.all([
      ...Array.from({ length: 20 }, (_, i) => log.allowRequest(`u${i}`)),
      ...Array.from({ length: 20 }, (_, i) => gcra.allowRequest(`u${i}`)),
    ]);
    expect(results.every((r) => !r.allowed && r.degraded === 'fail-closed')).toBe(true);
    const refused = await group.allowRequest('alice');
    expect(refused.allowed).toBe(false);
    expect((refused as unknown as { results: RateLimitResult[] }).results.map((r) => r.degraded)).toEqual(['fail-closed', 'fail-closed']);
    // Refused because the store could not be reached, not because alice exceeded a limit.
    expect(rateLimitProblem(refused)).toMatchObject({ status: 503, title: 'Rate limit store unavailable', retryAfter: 1 });
    expect(adapter.sent).toBe(before);
    // ioredis's queue of commands waiting for a connection (private in its types) stayed empty.
    if (name === 'ioredis') expect((c.client as unknown as { offlineQueue: { length: number } }).offlineQueue.length).toBe(0);

    await restart(s, c);
    expect(await group.allowRequest('alice')).toMatchObject({ allowed: true });
    expect(adapter.sent).toBeGreaterThan(before);
  }, 20_000);
});

it('ioredis: a reconnection attempt under way (status "connecting" again) fails fast too', async () => {
  const s = await server();
  const client = new Redis(s.url);
  client.on('error', () => {});
  cleanups.push(() => client.disconnect());
  await once(client, 'ready');
  const limiter = new RateLimiter({ threshold: 2, windowSeconds: 60, strategy: new RedisGCRA({ client, prefix: 'retrying:', onFailure: 'fail-closed', timeoutSeconds: HOUR }) });
  expect(await limiter.allowRequest('alice')).toMatchObject({ allowed: true });
  // The first attempt to reconnect: its status event comes before the attempt can fail (no I/O
  // between), so the decision is made while ioredis is "connecting" again.
  const attempt = new Promise<{ status: string; decision: Promise<RateLimitResult> }>((resolve) => {
    client.once('connecting', () => resolve({ status: client.status, decision: limiter.allowRequest('alice') }));
  });
  await s.kill();
  const { status, decision } = await attempt;
  expect(status).toBe('connecting');
  expect(await decision).toMatchObject({ allowed: false, degraded: 'fail-closed' });
}, 20_000);

describe('a new client is not failed fast', () => {
  it('ioredis with lazyConnect (status "wait"): the first decision connects it and Redis decides', async () => {
    const s = await server();
    const client = new Redis(s.url, { lazyConnect: true });
    client.on('error', () => {});
    cleanups.push(() => client.disconnect());
    expect(client.status).toBe('wait');
    expect(toRedisAdapter(client).connected?.()).toBe(true);
    const limiter = new RateLimiter({ threshold: 2, windowSeconds: 60, strategy: new RedisGCRA({ client, prefix: 'lazy:', onFailure: 'fail-closed', timeoutSeconds: HOUR }) });
    expect(await limiter.allowRequest('alice')).toEqual({ allowed: true, remaining: 1, retryAfter: 0, limit: 2, resetAfter: 30 });
  });

  it('ioredis still connecting (status "connecting"): the decision waits for the connection and Redis decides', async () => {
    const s = await server();
    const client = new Redis(s.url);
    client.on('error', () => {});
    cleanups.push(() => client.disconnect());
    expect(client.status).toBe('connecting');
    const limiter = new RateLimiter({ threshold: 2, windowSeconds: 60, strategy: new RedisGCRA({ client, prefix: 'connecting:', onFailure: 'fail-closed', timeoutSeconds: HOUR }) });
    expect(await limiter.allowRequest('alice')).toEqual({ allowed: true, remaining: 1, retryAfter: 0, limit: 2, resetAfter: 30 });
  });

  it('node-redis whose first connect() is under way: the decision waits for it and Redis decides', async () => {
    const s = await server();
    const client = createClient({ url: s.url });
    client.on('error', () => {});
    const connecting = client.connect();
    cleanups.push(async () => {
      await connecting;
      client.destroy();
    });
    expect(client.isOpen && !client.isReady).toBe(true);
    expect(toRedisAdapter(client).connected?.()).toBe(true);
    const limiter = new RateLimiter({ threshold: 2, windowSeconds: 60, strategy: new RedisGCRA({ client, prefix: 'connecting:', onFailure: 'fail-closed', timeoutSeconds: HOUR }) });
    expect(await limiter.allowRequest('alice')).toEqual({ allowed: true, remaining: 1, retryAfter: 0, limit: 2, resetAfter: 30 });
  });
});

it('node-redis closed and opened again is connecting, not reconnecting: its decisions wait for the connection', async () => {
  const s = await server();
  const client = createClient({ url: s.url });
  client.on('error', () => {});
  await client.connect();
  const limiter = new RateLimiter({ threshold: 2, windowSeconds: 60, strategy: new RedisGCRA({ client, prefix: 'reopened:', onFailure: 'fail-closed', timeoutSeconds: HOUR }) });
  expect(await limiter.allowRequest('alice')).toMatchObject({ allowed: true, remaining: 1 });
  client.destroy();
  expect(toRedisAdapter(client).connected?.()).toBe(true); // closed: node-redis rejects at once itself
  const reopening = client.connect();
  cleanups.push(async () => {
    await reopening;
    client.destroy();
  });
  expect(client.isOpen && !client.isReady).toBe(true);
  // Decided by Redis (no `degraded`): alice's second request of two.
  const second = await limiter.allowRequest('alice');
  expect(second).toMatchObject({ allowed: true, remaining: 0 });
  expect(second.degraded).toBeUndefined();
});

describe('node-redis and its error listener, in a process of its own, when Redis is killed', () => {
  /** Starts test/fixtures/no-error-listener.mjs; resolves once it decided against Redis. */
  async function child(url: string, mode: 'listener' | 'none') {
    const proc = spawn(process.execPath, [join(root, 'test', 'fixtures', 'no-error-listener.mjs'), url, mode], {
      cwd: root,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    cleanups.push(() => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill();
    });
    let stderr = '';
    proc.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const exited = once(proc, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    const lines = createInterface({ input: proc.stdout });
    const iterator = lines[Symbol.asyncIterator]();
    const line = async (): Promise<unknown> => {
      const next = await iterator.next();
      if (next.done === true) throw new Error(`the child ended its output; stderr:\n${stderr}`);
      return JSON.parse(next.value) as unknown;
    };
    expect(await line()).toMatchObject({ allowed: true, remaining: 4 });
    return { proc, line, exited, stderr: () => stderr };
  }

  it('without one: warned at start, the process crashes on the first connection error, before any policy acts', async () => {
    const s = await server();
    const c = await child(s.url, 'none');
    expect(c.stderr()).toContain('[ERR_RATEWARDEN_NO_ERROR_LISTENER] RateWardenWarning:');
    expect(c.stderr()).toContain("the node-redis client given to RedisGCRA has no 'error' listener");
    await s.kill();
    const [code] = await c.exited;
    expect(code).not.toBe(0);
    // The client's error, thrown as an unhandled 'error' event.
    expect(c.stderr()).toMatch(/Emitted 'error' event|Unhandled 'error' event|Socket closed unexpectedly|ECONNREFUSED|ECONNRESET/);
  }, 20_000);

  it('with one: no warning, and while reconnecting the process answers at once by its policy (fail-closed)', async () => {
    const s = await server();
    const c = await child(s.url, 'listener');
    const reconnecting = c.line();
    await s.kill();
    expect(await reconnecting).toBe('reconnecting');
    c.proc.stdin.write('decide\n');
    // An hour's timeout: only failing fast answers before the test's own timeout.
    expect(await c.line()).toEqual({ allowed: false, remaining: 0, retryAfter: 1, limit: 5, resetAfter: 1, degraded: 'fail-closed' });
    c.proc.stdin.end();
    const [code] = await c.exited;
    expect(code).toBe(0);
    expect(c.stderr()).not.toContain('ERR_RATEWARDEN_NO_ERROR_LISTENER');
  }, 20_000);
});
