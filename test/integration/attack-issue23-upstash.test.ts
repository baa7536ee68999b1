// Attack on issue 23's Upstash adapter (src/redis/client.ts `toRedisAdapter`, `isUpstashClient`,
// `withoutCommand`, `upstashAdapter`) with the real @upstash/redis client: objects that only look
// like a client, and HTTP fronts that misbehave the ways real proxies and gateways do (an HTML
// error page, a 500 without Upstash's `error`, garbage or truncated JSON, a 401, a body that never
// ends). In front of the test front of Upstash's REST protocol (test/support/upstash-front.ts,
// itself in front of a real redis-server) sits a small HTTP server of this file on 127.0.0.1 that
// passes requests through, or answers in one of those ways without passing them on (so that
// Redis shows whether anything was recorded). Every decision must go through its failure policy
// with an error that says what happened, record nothing when the request never reached Redis,
// and never outlast timeoutSeconds (fake timers move the decision queue's timer; the HTTP I/O is
// real).
import { once } from 'node:events';
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis as Upstash, type RedisConfigNodejs } from '@upstash/redis';
import { Redis as Ioredis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { RateLimiter, type RateLimitResult } from '../../src/index.js';
import { RateWardenRedisTimeoutError, RedisGCRA, toRedisAdapter, type RedisFailurePolicy } from '../../src/redis/index.js';
import { DECIDE_SHA } from '../../src/redis/script.js';
import { RedisServer } from '../support/redis-server.js';
import { failOnUnhandledRejections } from '../support/unhandled.js';
import { UpstashFront } from '../support/upstash-front.js';

failOnUnhandledRejections();
afterEach(() => {
  vi.useRealTimers();
});

/** How the gateway answers: pass the request through, or one of the misbehaviours (nothing passed on). */
type Mode = 'pass' | 'html-502' | 'json-500-no-error' | 'json-400-null-error' | 'garbage-200' | 'truncated-200' | 'empty-object-200' | 'text-503' | 'unauthorized-401' | 'never-ending-200';

const ANSWERS: Record<Exclude<Mode, 'pass' | 'never-ending-200'>, { status: number; type: string; body: string }> = {
  'html-502': { status: 502, type: 'text/html', body: `<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center>${'<!-- padding -->'.repeat(100)}</body></html>` },
  'json-500-no-error': { status: 500, type: 'application/json', body: '{"message":"internal server error"}' },
  'json-400-null-error': { status: 400, type: 'application/json', body: '{"error":null}' },
  'garbage-200': { status: 200, type: 'application/octet-stream', body: '\u0000\u0001\u0002 not json' },
  'truncated-200': { status: 200, type: 'application/json', body: '{"result":[0,1,0,' },
  'empty-object-200': { status: 200, type: 'application/json', body: '{}' },
  'text-503': { status: 503, type: 'text/plain', body: 'Service Unavailable' },
  'unauthorized-401': { status: 401, type: 'application/json', body: '{"error":"Unauthorized"}' },
};

let redis: RedisServer;
let front: UpstashFront;
let raw: Ioredis;
let gateway: Server;
let gatewayUrl: string;
let mode: Mode = 'pass';
/** Requests the gateway answered itself (not passed on). */
let intercepted = 0;
const hanging = new Set<ServerResponse>();

/** Passes `req` through to the front, as it came. */
function pass(req: IncomingMessage, body: Buffer, res: ServerResponse): void {
  const target = new URL(front.url);
  const forwarded = httpRequest(
    { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, host: target.host } },
    (upstream) => {
      res.writeHead(upstream.statusCode ?? 502, upstream.headers);
      upstream.pipe(res);
    },
  );
  forwarded.on('error', () => res.destroy());
  forwarded.end(body);
}

beforeAll(async () => {
  redis = await RedisServer.start();
  front = await UpstashFront.start(redis.port);
  raw = new Ioredis({ port: redis.port, host: '127.0.0.1' });
  gateway = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (mode === 'pass') {
        pass(req, Buffer.concat(chunks), res);
        return;
      }
      intercepted++;
      if (mode === 'never-ending-200') {
        // Headers and the start of a body, then nothing more (a stalled proxy).
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"result":');
        hanging.add(res);
        return;
      }
      const answer = ANSWERS[mode];
      res.writeHead(answer.status, { 'content-type': answer.type });
      res.end(answer.body);
    });
  });
  gateway.listen(0, '127.0.0.1');
  await once(gateway, 'listening');
  gatewayUrl = `http://127.0.0.1:${(gateway.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const res of hanging) res.destroy();
  gateway?.closeAllConnections();
  gateway?.close();
  raw?.disconnect();
  await front?.close();
  await redis?.stop();
});

let prefixes = 0;
/** A client of the gateway (the front's token), `config` over the client's defaults. */
const viaGateway = (config: Partial<RedisConfigNodejs> = {}): Upstash => new Upstash({ url: gatewayUrl, token: front.token, ...config });

function limiterOn(client: object, onFailure: RedisFailurePolicy, errors: unknown[], timeoutSeconds = 1): { limiter: RateLimiter; prefix: string } {
  const prefix = `atk23-up-${++prefixes}:`;
  const strategy = new RedisGCRA({ client, prefix, onFailure, timeoutSeconds, onError: (error) => errors.push(error) });
  return { limiter: new RateLimiter({ threshold: 3, windowSeconds: 60, strategy }), prefix };
}

describe('objects that look like an Upstash client', () => {
  // Failed before the fix that came with this test (low). A Pipeline or a transaction of @upstash/redis (`redis.pipeline()`,
  // `redis.multi()`: easy to pass by mistake, and what a helper that "batches" may hand over) has
  // `evalsha`, `eval` and `evalshaRo` as the client does, so `isUpstashClient`
  // (src/redis/client.ts:216) takes it for one — but its methods queue the command and return the
  // pipeline, not a promise of the reply. The strategy is built without complaint, and every
  // decision then fails at run time with an internal `TypeError: up.evalsha(...).catch is not a
  // function`. toRedisAdapter documents a TypeError naming `client` for anything that is not one
  // of the clients: at construction, where the mistake is made.
  it.each([
    ['a Pipeline', () => new Upstash({ url: gatewayUrl, token: 't' }).pipeline()],
    ['a transaction (multi)', () => new Upstash({ url: gatewayUrl, token: 't' }).multi()],
  ])('%s is refused as `client` at construction', (_name, make) => {
    expect(() => new RedisGCRA({ client: make(), prefix: 'pipe:' })).toThrow(TypeError);
    expect(() => toRedisAdapter(make())).toThrow(/`client`/);
  });

  it('held up: ioredis, node-redis and the Upstash entries are told apart (each adapter is the right kind)', async () => {
    const { createClient } = await import('redis');
    const { Redis: CloudflareUpstash } = await import('@upstash/redis/cloudflare');
    const io = new Ioredis({ lazyConnect: true });
    try {
      // ioredis and node-redis adapters report a connection state; Upstash's has none (HTTP).
      expect('connected' in toRedisAdapter(io)).toBe(true);
      expect('connected' in toRedisAdapter(createClient())).toBe(true);
      expect('connected' in toRedisAdapter(viaGateway())).toBe(false);
      expect('connected' in toRedisAdapter(new CloudflareUpstash({ url: gatewayUrl, token: 't' }))).toBe(false);
      expect(toRedisAdapter(viaGateway({ retry: { retries: 0 } })).resends).toBe(false);
      expect(toRedisAdapter(viaGateway({ retry: false })).resends).toBe(true);
    } finally {
      io.disconnect();
    }
  });
});

describe('a gateway that misbehaves, in front of a client that has already talked to Redis', () => {
  const MODES = Object.keys(ANSWERS) as (keyof typeof ANSWERS)[];

  it.each(MODES.flatMap((m) => [true, false].map((auto) => [m, auto] as const)))(
    '%s (auto-pipelining %s): every policy decides at once, the error is short and carries no command, Redis records nothing',
    async (which, enableAutoPipelining) => {
      const client = viaGateway({ enableAutoPipelining });
      const errors: unknown[] = [];
      const throwing = limiterOn(client, 'throw', errors);
      const closed = limiterOn(client, 'fail-closed', errors);
      // The user key carries NOSCRIPT: no error may be taken for a NOSCRIPT reply because of it.
      const user = 'NOSCRIPT-user';
      mode = 'pass';
      expect((await throwing.limiter.allowRequest('warm')).allowed).toBe(true); // the handshake, through
      mode = which;
      const before = intercepted;
      try {
        const thrown = await throwing.limiter.allowRequest(user).then(
          () => undefined,
          (error: unknown) => error as Error,
        );
        expect(thrown).toBeInstanceOf(Error);
        expect(thrown?.message.length).toBeLessThan(400);
        expect(thrown?.message).not.toContain(DECIDE_SHA);
        expect(thrown?.message).not.toContain(user);
        const refused = await closed.limiter.allowRequest(user);
        expect(refused).toMatchObject({ allowed: false, degraded: 'fail-closed' });
        // One request per decision: no EVAL fallback (nothing here is a NOSCRIPT reply).
        expect(intercepted - before).toBe(2);
      } finally {
        mode = 'pass';
      }
      expect(await raw.exists(`${throwing.prefix}{${user}}:gcra`, `${closed.prefix}{${user}}:gcra`)).toBe(0);
      // Back to normal: Redis decides, as if nothing had happened.
      expect(await closed.limiter.allowRequest(user)).toEqual(expect.objectContaining({ allowed: true, remaining: 2 }));
      expect(errors.length).toBeGreaterThanOrEqual(2);
    },
  );

  // Failed before the fix that came with this test (low). A gateway's 500 whose JSON has no `error` (or `"error": null`) reaches
  // ratewarden as @upstash/redis's `UpstashError("undefined, command was: …")`; `withoutCommand`
  // (src/redis/client.ts:241-247) strips the command and leaves the message "undefined" (or
  // "null"): the one error logged for an outage of the store says nothing — not the status, not
  // that the HTTP request failed. The error an operator sees should say something.
  it.each(['json-500-no-error', 'json-400-null-error'] as const)('%s: the error says more than "undefined" / "null"', async (which) => {
    const errors: unknown[] = [];
    const { limiter } = limiterOn(viaGateway({ enableAutoPipelining: false }), 'throw', errors);
    mode = 'pass';
    await limiter.allowRequest('warm');
    mode = which;
    let thrown: Error | undefined;
    try {
      thrown = await limiter.allowRequest('u').then(
        () => undefined,
        (error: unknown) => error as Error,
      );
    } finally {
      mode = 'pass';
    }
    expect(thrown).toBeInstanceOf(Error);
    expect(['undefined', 'null', '']).not.toContain(thrown?.message.trim());
  });

  it('held up: a body that never ends fails by policy at timeoutSeconds (fake time), unsent decisions too; nothing recorded', async () => {
    const errors: unknown[] = [];
    const client = viaGateway({ enableAutoPipelining: false, retry: { retries: 0 } });
    const throwing = limiterOn(client, 'throw', errors, 5);
    const closed = limiterOn(client, 'fail-closed', errors, 5);
    mode = 'pass';
    await throwing.limiter.allowRequest('warm');
    mode = 'never-ending-200';
    const before = intercepted;
    try {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      const decisions: Promise<RateLimitResult | Error>[] = [
        throwing.limiter.allowRequest('a').catch((e: unknown) => e as Error),
        closed.limiter.allowRequest('a'),
        throwing.limiter.allowRequest('b').catch((e: unknown) => e as Error),
      ];
      // Every request reached the gateway, which sent headers and half a body.
      while (intercepted - before < 2) await new Promise((resolve) => setImmediate(resolve));
      await vi.advanceTimersByTimeAsync(5_000);
      const [a, c, b] = await Promise.all(decisions);
      expect(a).toEqual(new RateWardenRedisTimeoutError(5));
      expect(c).toMatchObject({ allowed: false, degraded: 'fail-closed' });
      expect(b).toEqual(new RateWardenRedisTimeoutError(5));
    } finally {
      vi.useRealTimers();
      mode = 'pass';
      for (const res of hanging) res.destroy();
      hanging.clear();
    }
    expect(await raw.exists(`${throwing.prefix}{a}:gcra`, `${throwing.prefix}{b}:gcra`, `${closed.prefix}{a}:gcra`)).toBe(0);
  });

  it('held up: the very first call (the handshake) meeting each misbehaviour fails by policy too, and the next call shakes hands again', async () => {
    for (const which of MODES) {
      const errors: unknown[] = [];
      const { limiter } = limiterOn(new Upstash({ url: gatewayUrl, token: front.token, retry: { retries: 0 } }), 'fail-closed', errors);
      mode = which;
      try {
        expect(await limiter.allowRequest('first')).toMatchObject({ allowed: false, degraded: 'fail-closed' });
      } finally {
        mode = 'pass';
      }
      expect(await limiter.allowRequest('first')).toMatchObject({ allowed: true, remaining: 2 });
      expect(errors).toHaveLength(1);
    }
  });
});
