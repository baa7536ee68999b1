// Counting only failures (skipSuccessfulRequests) or only successes (skipFailedRequests, a custom
// requestWasSuccessful) through real servers on 127.0.0.1, one per framework: Express, Fastify,
// Fetch (test/support/http-server.ts's serveFetch: IncomingMessage → Request, Response →
// ServerResponse, aborting `request.signal` when the client goes away, as runtimes do), NestJS
// on both platforms, and Hono (served by @hono/node-server, which aborts `c.req.raw.signal` when
// the client goes away): what the HTTP contract (contract/contract.test.ts) does not check there —
// 200 requests in parallel, a custom requestWasSuccessful with each framework's own request and
// response, a client that disconnects mid-response, a refund that fails. (That a success is given
// back, a failure and a thrown handler count, and the reverse under skipFailedRequests, is the
// contract's.) Real
// requests (global fetch), real in-memory limiters with an injected clock that never moves: no
// wall clock, no sleeps. The handlers wait on a gate the test opens (a promise, not a timer).
//
// Refunds follow the end of the response, after the client may already hold it: the test waits
// for them through `settle`, the shared path's one step after the response, wrapped below to
// record each call (observation only: what it does is unchanged).
//
// Why one file of about 600 lines: one feature, and `describe.each(fixtures)` runs the same cases
// against every framework's server, the fixtures side by side so that they stay alike.
import 'reflect-metadata';
import { EventEmitter, once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Controller, Get, Module, Req, Res, type ExecutionContext, type INestApplication, type NestApplicationOptions } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import express, { type NextFunction, type Request as ExpressRequest, type Response as ExpressResponse } from 'express';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { Hono, type Context } from 'hono';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { RateLimiter } from '../../../src/index.js';
import * as common from '../../../src/middleware/common.js';
import { expressRateLimit } from '../../../src/middleware/express.js';
import { fastifyRateLimit } from '../../../src/middleware/fastify.js';
import { withRateLimit } from '../../../src/middleware/fetch.js';
import { honoRateLimit } from '../../../src/middleware/hono.js';
import { RateWardenGuard, RateWardenModule } from '../../../src/nestjs/index.js';
import { close, listen, serveFetch } from '../../support/http-server.js';
import { captureWarnings } from '../../support/warnings.js';

/** Every call of the shared `settle`, with the user of its request (`x-user`). */
const settles: { readonly user: string | undefined; readonly done: Promise<void> }[] = [];
const settled = new EventEmitter();

vi.mock('../../../src/middleware/common.js', async (importOriginal) => {
  const original = await importOriginal<typeof common>();
  return {
    ...original,
    settle: (...args: Parameters<typeof original.settle>) => {
      const done = original.settle(...args);
      settles.push({ user: userOf(args[1]), done });
      settled.emit('settle');
      return done;
    },
  };
});

/** The `x-user` of a framework's request (Express, Fastify, Fetch), of a Nest or a Hono context. */
function userOf(req: unknown): string | undefined {
  if (req instanceof Request) return req.headers.get('x-user') ?? undefined;
  const raw = (req as { req?: { raw?: unknown } }).req?.raw;
  if (raw instanceof Request) return raw.headers.get('x-user') ?? undefined;
  const context = req as Partial<ExecutionContext>;
  const request = (typeof context.switchToHttp === 'function' ? context.switchToHttp().getRequest<unknown>() : req) as {
    headers: Record<string, string | string[] | undefined>;
  };
  const user = request.headers['x-user'];
  return typeof user === 'string' ? user : undefined;
}

/** Resolves once `user`'s requests were settled `count` times and those settles are done. */
async function settledFor(user: string, count: number): Promise<void> {
  const mine = () => settles.filter((s) => s.user === user);
  while (mine().length < count) await once(settled, 'settle');
  await Promise.all(mine().map((s) => s.done));
  expect(mine()).toHaveLength(count);
}

// ---------------------------------------------------------------------------------------------
// What every server does: three limited routes, each handler told by the request what to do.

/** The limited routes and what each counts. */
type RouteName = 'skipSuccess' | 'skipFailed' | 'predicate';

/**
 * What the handler does: `ok` 200; `fail` 401 (a wrong password); `failed-200` 200 with
 * `x-login: failed` (a login page answering 200 with an error: only a custom
 * `requestWasSuccessful` sees it failed); `partial` sends a 200's head and part of its body,
 * then waits on the gate before finishing (Fetch: waits, then returns a 200).
 */
type Outcome = 'ok' | 'fail' | 'failed-200' | 'partial';

/** The limiters' clock: it never moves (nothing here waits for a window). */
const clock = (): number => 0;
const THRESHOLD: Record<RouteName, number> = { skipSuccess: 5, skipFailed: 2, predicate: 2 };

/** The gate the handlers wait on (`x-wait: 1`, and `partial`), opened by the test. */
let gate: { promise: Promise<void>; open: () => void };
function newGate(): void {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  gate = { promise, open };
}

/** Handler runs, by route and user; `ran` fires on each. */
const runs = new Map<string, number>();
const ran = new EventEmitter();
function run(route: string, user: string): void {
  const id = `${route} ${user}`;
  runs.set(id, (runs.get(id) ?? 0) + 1);
  ran.emit('run');
}
const runsOf = (route: RouteName, user: string): number => runs.get(`${route} ${user}`) ?? 0;

/** The handler's logic, framework-free: what to answer, after waiting on the gate when asked. */
async function answer(route: string, user: string, outcome: Outcome, wait: boolean): Promise<{ status: number; failedLogin: boolean }> {
  run(route, user);
  if (wait) await gate.promise;
  return { status: outcome === 'fail' ? 401 : 200, failedLogin: outcome === 'failed-200' };
}

interface Fixture {
  readonly name: string;
  /**
   * Whether a handler returns its whole response at once (Fetch, Hono): a client then goes away
   * while the handler still works, rather than mid-body.
   */
  readonly wholeResponse?: true;
  start(limiters: Record<RouteName, RateLimiter>): Promise<void>;
  stop(): Promise<void>;
  /** Sends a GET of `user` to `route` asking for `outcome`. */
  request(route: RouteName, user: string, outcome: Outcome, options?: { wait?: boolean; signal?: AbortSignal }): Promise<Response>;
}

/** The request headers that tell the handler what to do. */
const headersOf = (user: string, outcome: Outcome, wait = false): Record<string, string> => ({
  'x-user': user,
  'x-outcome': outcome,
  ...(wait ? { 'x-wait': '1' } : {}),
});

// --- Express ---------------------------------------------------------------------------------

function expressFixture(): Fixture {
  let server: Server;
  let base = '';
  return {
    name: 'Express',
    async start(limiters) {
      const app = express();
      const key = (req: ExpressRequest): string => req.get('x-user') ?? 'anonymous';
      const limited = {
        skipSuccess: expressRateLimit({ limiter: limiters.skipSuccess, key, skipSuccessfulRequests: true }),
        skipFailed: expressRateLimit({ limiter: limiters.skipFailed, key, skipFailedRequests: true }),
        predicate: expressRateLimit({
          limiter: limiters.predicate,
          key,
          skipSuccessfulRequests: true,
          // Express's own req and res.
          requestWasSuccessful: (req, res) => req.get('x-user') !== undefined && res.statusCode < 400 && res.getHeader('x-login') !== 'failed',
        }),
      };
      for (const route of ['skipSuccess', 'skipFailed', 'predicate'] as const) {
        app.get(`/${route}`, limited[route], (req: ExpressRequest, res: ExpressResponse, next: NextFunction) => {
          const outcome = req.get('x-outcome') as Outcome;
          const user = key(req);
          if (outcome === 'partial') {
            run(route, user);
            res.status(200);
            res.write('partial');
            void gate.promise.then(() => res.end('rest'));
            return;
          }
          answer(route, user, outcome, req.get('x-wait') === '1').then(({ status, failedLogin }) => {
            if (failedLogin) res.setHeader('x-login', 'failed');
            res.status(status).json({ status });
          }, next);
        });
      }
      server = createServer(app);
      base = await listen(server);
    },
    stop: () => close(server),
    request: (route, user, outcome, { wait, signal } = {}) =>
      fetch(`${base}/${route}`, { headers: headersOf(user, outcome, wait), ...(signal ? { signal } : {}) }),
  };
}

// --- Fastify ---------------------------------------------------------------------------------

function fastifyFixture(): Fixture {
  let app: FastifyInstance;
  let base = '';
  return {
    name: 'Fastify',
    async start(limiters) {
      // A client that went away mid-response may leave undici a connection with no request on
      // it, which Fastify's default close ('idle') waits for: close every connection.
      app = Fastify({ forceCloseConnections: true });
      const key = (request: FastifyRequest): string => (request.headers['x-user'] as string | undefined) ?? 'anonymous';
      const hooks = {
        skipSuccess: fastifyRateLimit({ limiter: limiters.skipSuccess, key, skipSuccessfulRequests: true }),
        skipFailed: fastifyRateLimit({ limiter: limiters.skipFailed, key, skipFailedRequests: true }),
        predicate: fastifyRateLimit({
          limiter: limiters.predicate,
          key,
          skipSuccessfulRequests: true,
          // Fastify's own request and reply.
          requestWasSuccessful: (request, reply) =>
            request.headers['x-user'] !== undefined && reply.statusCode < 400 && reply.getHeader('x-login') !== 'failed',
        }),
      };
      for (const route of ['skipSuccess', 'skipFailed', 'predicate'] as const) {
        app.get(`/${route}`, { onRequest: hooks[route] }, async (request: FastifyRequest, reply: FastifyReply) => {
          const outcome = request.headers['x-outcome'] as Outcome;
          const user = key(request);
          if (outcome === 'partial') {
            run(route, user);
            reply.hijack();
            reply.raw.writeHead(200, reply.getHeaders() as Record<string, string>);
            reply.raw.write('partial');
            void gate.promise.then(() => reply.raw.end('rest'));
            return reply;
          }
          const { status, failedLogin } = await answer(route, user, outcome, request.headers['x-wait'] === '1');
          if (failedLogin) reply.header('x-login', 'failed');
          return reply.code(status).send({ status });
        });
      }
      base = await app.listen({ port: 0, host: '127.0.0.1' });
    },
    stop: () => app.close(),
    request: (route, user, outcome, { wait, signal } = {}) =>
      fetch(`${base}/${route}`, { headers: headersOf(user, outcome, wait), ...(signal ? { signal } : {}) }),
  };
}

// --- Fetch -----------------------------------------------------------------------------------

function fetchFixture(): Fixture {
  let stop: () => Promise<void>;
  let base = '';
  return {
    name: 'Fetch',
    wholeResponse: true,
    async start(limiters) {
      const key = (request: Request): string => request.headers.get('x-user') ?? 'anonymous';
      const handlerOf = (route: RouteName) => async (request: Request): Promise<Response> => {
        const outcome = request.headers.get('x-outcome') as Outcome;
        const wait = request.headers.get('x-wait') === '1' || outcome === 'partial';
        const { status, failedLogin } = await answer(route, key(request), outcome, wait);
        return Response.json({ status }, { status, headers: failedLogin ? { 'x-login': 'failed' } : {} });
      };
      const routes: Record<RouteName, (request: Request) => Promise<Response>> = {
        skipSuccess: withRateLimit(handlerOf('skipSuccess'), { limiter: limiters.skipSuccess, key, skipSuccessfulRequests: true }),
        skipFailed: withRateLimit(handlerOf('skipFailed'), { limiter: limiters.skipFailed, key, skipFailedRequests: true }),
        predicate: withRateLimit(handlerOf('predicate'), {
          limiter: limiters.predicate,
          key,
          skipSuccessfulRequests: true,
          // The Request and the handler's Response.
          requestWasSuccessful: (request, response) =>
            request.headers.has('x-user') && response.status < 400 && response.headers.get('x-login') !== 'failed',
        }),
      };
      ({ origin: base, stop } = await serveFetch(
        async (request) => {
          const route = routes[new URL(request.url).pathname.slice(1) as RouteName];
          return route === undefined ? new Response('not found', { status: 404 }) : route(request);
        },
        { onClientGone: () => clientsGone.emit('gone') },
      ));
    },
    stop: () => stop(),
    request: (route, user, outcome, { wait, signal } = {}) =>
      fetch(`${base}/${route}`, { headers: headersOf(user, outcome, wait), ...(signal ? { signal } : {}) }),
  };
}

/**
 * Fires `gone` when the Fetch adapter saw a client go away before its response finished, or a
 * Hono handler saw its request's signal abort.
 */
const clientsGone = new EventEmitter();

// --- Hono ------------------------------------------------------------------------------------

function honoFixture(): Fixture {
  let server: Server;
  let base = '';
  return {
    name: 'Hono',
    wholeResponse: true,
    async start(limiters) {
      const key = (c: Context): string => c.req.header('x-user') ?? 'anonymous';
      const limited = {
        skipSuccess: honoRateLimit({ limiter: limiters.skipSuccess, key, skipSuccessfulRequests: true }),
        skipFailed: honoRateLimit({ limiter: limiters.skipFailed, key, skipFailedRequests: true }),
        predicate: honoRateLimit({
          limiter: limiters.predicate,
          key,
          skipSuccessfulRequests: true,
          // Hono's context, once the chain returned (`c.res` is the response).
          requestWasSuccessful: (c) => c.req.header('x-user') !== undefined && c.res.status < 400 && c.res.headers.get('x-login') !== 'failed',
        }),
      };
      const app = new Hono();
      for (const route of ['skipSuccess', 'skipFailed', 'predicate'] as const) {
        app.get(`/${route}`, limited[route], async (c) => {
          const outcome = c.req.header('x-outcome') as Outcome;
          const wait = c.req.header('x-wait') === '1' || outcome === 'partial';
          if (outcome === 'partial') c.req.raw.signal.addEventListener('abort', () => clientsGone.emit('gone'), { once: true });
          const { status, failedLogin } = await answer(route, key(c), outcome, wait);
          if (failedLogin) c.header('x-login', 'failed');
          return c.json({ status }, status === 401 ? 401 : 200);
        });
      }
      server = await new Promise<Server>((resolve) => {
        const started = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(started as Server));
      });
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    },
    stop: () => close(server),
    request: (route, user, outcome, { wait, signal } = {}) =>
      fetch(`${base}/${route}`, { headers: headersOf(user, outcome, wait), ...(signal ? { signal } : {}) }),
  };
}

// --- NestJS (one application per option set: they are the module's) -------------------------

/** The platform's ServerResponse of a Nest response (Express `res`, Fastify `reply.raw`). */
interface NestResponse {
  status(code: number): unknown;
  header(name: string, value: string): unknown;
  readonly raw?: ServerResponse;
  readonly hijack?: () => void;
}

/** No logs; every connection closed on close (as for Fastify above). */
// eslint-disable-next-line @typescript-eslint/no-unsafe-class-instance-assignment -- Nest declares its options as a class (NestApplicationContextOptions) that every caller passes as an object literal (see eslint.config.js)
const quiet: NestApplicationOptions = { logger: false, forceCloseConnections: true };

function nestFixture(platform: 'express' | 'fastify'): Fixture {
  const apps: INestApplication[] = [];
  const bases = new Map<RouteName, string>();
  return {
    name: `NestJS on @nestjs/platform-${platform}`,
    async start(limiters) {
      for (const route of ['skipSuccess', 'skipFailed', 'predicate'] as const) {
        @Controller('login')
        class LoginController {
          @Get()
          async login(@Req() req: IncomingMessage, @Res({ passthrough: true }) res: NestResponse): Promise<{ status: number }> {
            const { status, failedLogin } = await answer(
              route,
              req.headers['x-user'] as string,
              req.headers['x-outcome'] as Outcome,
              req.headers['x-wait'] === '1',
            );
            if (failedLogin) res.header('x-login', 'failed');
            res.status(status);
            return { status };
          }

          @Get('partial')
          partial(@Req() req: IncomingMessage, @Res() res: NestResponse): void {
            run(route, req.headers['x-user'] as string);
            res.hijack?.();
            const raw = res.raw ?? (res as unknown as ServerResponse);
            raw.writeHead(200);
            raw.write('partial');
            void gate.promise.then(() => raw.end('rest'));
          }
        }
        const counting =
          route === 'skipSuccess'
            ? { skipSuccessfulRequests: true }
            : route === 'skipFailed'
              ? { skipFailedRequests: true }
              : {
                  skipSuccessfulRequests: true,
                  // The platform's request and response, and the guard's context.
                  requestWasSuccessful: (req: { headers: Record<string, unknown> }, res: NestResponse, context: ExecutionContext) => {
                    const raw = res.raw ?? (res as unknown as ServerResponse);
                    return (
                      req.headers['x-user'] !== undefined &&
                      context.getClass() === LoginController &&
                      raw.statusCode < 400 &&
                      (platform === 'fastify' ? (res as unknown as FastifyReply).getHeader('x-login') : raw.getHeader('x-login')) !== 'failed'
                    );
                  },
                };
        @Module({
          imports: [
            RateWardenModule.forRoot({
              limits: { login: limiters[route] },
              key: (req: { headers: Record<string, unknown> }) => req.headers['x-user'] as string,
              ...counting,
            }),
          ],
          controllers: [LoginController],
          providers: [{ provide: APP_GUARD, useClass: RateWardenGuard }],
        })
        class AppModule {}
        const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
        const app = moduleRef.createNestApplication(platform === 'express' ? new ExpressAdapter() : new FastifyAdapter(), quiet);
        await app.listen(0, '127.0.0.1');
        apps.push(app);
        bases.set(route, `http://127.0.0.1:${(app.getHttpServer() as { address(): AddressInfo }).address().port}`);
      }
    },
    async stop() {
      for (const app of apps) await app.close();
    },
    request: (route, user, outcome, { wait, signal } = {}) =>
      fetch(`${bases.get(route) ?? ''}/login${outcome === 'partial' ? '/partial' : ''}`, {
        headers: headersOf(user, outcome, wait),
        ...(signal ? { signal } : {}),
      }),
  };
}

// ---------------------------------------------------------------------------------------------

const fixtures: Fixture[] = [expressFixture(), fastifyFixture(), fetchFixture(), nestFixture('express'), nestFixture('fastify'), honoFixture()];

describe.each(fixtures)('$name: counting only failures, or only successes', (fixture) => {
  let limiters: Record<RouteName, RateLimiter>;
  let users = 0;
  /** A user of this test alone: limits never leak between tests. */
  const newUser = (): string => `${fixture.name}-user-${++users}`;
  const remaining = (route: RouteName, user: string): number => limiters[route].peekSync(user).remaining;

  beforeAll(async () => {
    limiters = {
      skipSuccess: new RateLimiter({ threshold: THRESHOLD.skipSuccess, windowSeconds: 60, clock }),
      skipFailed: new RateLimiter({ threshold: THRESHOLD.skipFailed, windowSeconds: 60, clock }),
      predicate: new RateLimiter({ threshold: THRESHOLD.predicate, windowSeconds: 60, clock }),
    };
    await fixture.start(limiters);
  });

  afterAll(async () => {
    await fixture.stop();
  });

  beforeEach(() => {
    newGate();
  });

  it('skipSuccessfulRequests: 200 parallel wrong passwords, each checked after an awaited step, reach the check exactly `threshold` times', async () => {
    const user = newUser();
    const threshold = THRESHOLD.skipSuccess;
    let refused = 0;
    // Open the gate once every request either reached the handler or was refused: all 200 are
    // decided while the allowed ones are still checking.
    const progress = (): void => {
      if (runsOf('skipSuccess', user) + refused === 200) gate.open();
    };
    ran.on('run', progress);
    try {
      const responses = await Promise.all(
        Array.from({ length: 200 }, async () => {
          const response = await fixture.request('skipSuccess', user, 'fail', { wait: true });
          if (response.status === 429) refused++;
          progress();
          await response.arrayBuffer();
          return response.status;
        }),
      );
      expect(runsOf('skipSuccess', user)).toBe(threshold);
      expect(responses.filter((status) => status === 401)).toHaveLength(threshold);
      expect(responses.filter((status) => status === 429)).toHaveLength(200 - threshold);
    } finally {
      ran.off('run', progress);
    }
    await settledFor(user, threshold);
    // Failures count: still refused.
    expect(remaining('skipSuccess', user)).toBe(0);
    expect((await fixture.request('skipSuccess', user, 'ok')).status).toBe(429);
    expect(runsOf('skipSuccess', user)).toBe(threshold);
  });

  it("a custom requestWasSuccessful decides, with the framework's own request and response", async () => {
    const user = newUser();
    // A 200 the predicate calls a failure: counted.
    expect((await fixture.request('predicate', user, 'failed-200')).status).toBe(200);
    await settledFor(user, 1);
    expect(remaining('predicate', user)).toBe(1);
    // A real success: given back.
    expect((await fixture.request('predicate', user, 'ok')).status).toBe(200);
    await settledFor(user, 2);
    expect(remaining('predicate', user)).toBe(1);
    expect((await fixture.request('predicate', user, 'failed-200')).status).toBe(200);
    await settledFor(user, 3);
    expect((await fixture.request('predicate', user, 'ok')).status).toBe(429);
  });

  it('a client that disconnects before the response finished counts as failed (counted under skipSuccessfulRequests, given back under skipFailedRequests)', async () => {
    const user = newUser();
    for (const [route, settles] of [['skipSuccess', 1], ['skipFailed', 2]] as const) {
      newGate();
      const client = new AbortController();
      if (fixture.wholeResponse) {
        // A Fetch or Hono handler returns its whole Response: go away while it is still working.
        const started = runsOf(route, user);
        const pending = fixture.request(route, user, 'partial', { signal: client.signal }).catch(() => undefined);
        while (runsOf(route, user) === started) await once(ran, 'run');
        const serverSaw = once(clientsGone, 'gone');
        client.abort();
        await serverSaw;
        gate.open();
        await pending;
      } else {
        // The head of a 200 and part of its body arrived: go away mid-body.
        const response = await fixture.request(route, user, 'partial', { signal: client.signal });
        expect(response.status).toBe(200);
        client.abort();
      }
      await settledFor(user, settles);
      gate.open();
    }
    // Under skipSuccessfulRequests, the cut-short 200 counts; under skipFailedRequests it was
    // given back.
    expect(remaining('skipSuccess', user)).toBe(4);
    expect(remaining('skipFailed', user)).toBe(2);
  });
});

describe('Express: a refund that fails (the store went down) never crashes the process', () => {
  let server: Server;
  let base = '';
  const errors: unknown[] = [];

  /** A limiter whose reservations' refunds reject, as a store that went down would. */
  function storeDownAfterDeciding(limiter: RateLimiter): RateLimiter {
    return new Proxy(limiter, {
      get(target, property) {
        if (property === 'reserve') {
          return async (...args: Parameters<RateLimiter['reserve']>) => {
            const reservation = await target.reserve(...args);
            return new Proxy(reservation, {
              get: (r, p): unknown => (p === 'refund' ? () => Promise.reject(new Error('store down')) : Reflect.get(r, p, r)),
            });
          };
        }
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
  }

  beforeAll(async () => {
    const app = express();
    const key = (req: ExpressRequest): string => req.get('x-user') ?? 'anonymous';
    app.get(
      '/reported',
      expressRateLimit({
        limiter: storeDownAfterDeciding(new RateLimiter({ threshold: 2, windowSeconds: 60, clock })),
        key,
        skipSuccessfulRequests: true,
        onError: (_req, error) => {
          errors.push(error);
        },
      }),
      (_req, res) => res.json({ ok: true }),
    );
    app.get(
      '/warned',
      expressRateLimit({ limiter: storeDownAfterDeciding(new RateLimiter({ threshold: 2, windowSeconds: 60, clock })), key, skipSuccessfulRequests: true }),
      (_req, res) => res.json({ ok: true }),
    );
    server = createServer(app);
    base = await listen(server);
  });

  afterAll(() => close(server));

  it('goes to onError (after the response: what it returns is ignored); the request stays counted', async () => {
    const user = newUserOf('reported');
    const response = await fetch(`${base}/reported`, { headers: { 'x-user': user } });
    expect(response.status).toBe(200);
    await settledFor(user, 1);
    expect(errors).toEqual([new Error('store down')]);
  });

  it('without onError, is a RateWardenWarning (ERR_RATEWARDEN_REFUND_FAILED)', async () => {
    const { warnings, restore } = captureWarnings(common.REFUND_FAILED);
    try {
      const user = newUserOf('warned');
      expect((await fetch(`${base}/warned`, { headers: { 'x-user': user } })).status).toBe(200);
      await settledFor(user, 1);
      expect(warnings).toEqual([expect.objectContaining({ type: 'RateWardenWarning', message: expect.stringMatching(/store down$/) })]);
    } finally {
      restore();
    }
  });
});

let others = 0;
function newUserOf(what: string): string {
  return `${what}-${++others}`;
}
