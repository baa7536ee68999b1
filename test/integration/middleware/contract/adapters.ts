// The adapters of the HTTP contract (contract.test.ts): how each framework integration of
// ratewarden is served on a real HTTP server on 127.0.0.1 with the same options, the same four
// routes and the same handlers, so that one suite checks them all. A descriptor says how to start
// and stop its framework's server, maps the contract's framework-free options onto the
// framework's own (the functions read the framework's own request through a `RequestView`), and
// declares what the framework itself answers where frameworks differ (the 429's Content-Type,
// its error path) and what it cannot do (`lacks`, with the reason).
//
// The contract's options are those every integration shares (src/middleware/common.ts), plus
// `onRejected`. What is specific to one framework (Express's `trust proxy`, Fastify's hooks,
// Fetch's immutable responses and `checkRateLimit`, Nest's decorators, module and exception
// filters) stays in that framework's own test file.
//
// Why one file of about 580 lines: the descriptors must stay alike (same routes, same handlers,
// same option mapping), and side by side a difference between two frameworks shows; each one is a
// section of 40 to 110 lines, with the shared routes, options and types above them.
import 'reflect-metadata';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Controller, Get, HttpException, Module, type INestApplication, type NestApplicationOptions } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import express, { type Request as ExpressRequest } from 'express';
import { serve } from '@hono/node-server';
import { Hono, type Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { RateLimitGroup, RateLimiter, type RateLimitPolicy, type RateLimitResult, type User } from '../../../../src/index.js';
import { expressRateLimit, type ExpressRateLimitOptions } from '../../../../src/middleware/express.js';
import { fastifyRateLimit, type FastifyRateLimitOptions } from '../../../../src/middleware/fastify.js';
import { withRateLimit, type FetchRateLimitOptions } from '../../../../src/middleware/fetch.js';
import { honoRateLimit, type HonoRateLimitOptions } from '../../../../src/middleware/hono.js';
import { RateLimit, RateWardenGuard, RateWardenModule, SkipRateLimit, type RateWardenModuleOptions } from '../../../../src/nestjs/index.js';
import { close, listen, serveFetch } from '../../../support/http-server.js';

// ---------------------------------------------------------------------------------------------
// The routes every server has, and what their handlers do.

/**
 * The four routes of every contract server, each at `/<name>`:
 *
 * - `limited`: behind the rate limit; its handler answers 200.
 * - `failing`: behind the rate limit; its handler answers {@link FAILING_STATUS} (a wrong
 *   password, say): a response the framework sends, judged failed by the default
 *   `requestWasSuccessful`.
 * - `throwing`: behind the rate limit; its handler throws {@link THROWN_MESSAGE}: the framework's
 *   error path answers (see {@link Adapter.errorPath}).
 * - `unlimited`: not behind the rate limit (no middleware, or `@SkipRateLimit()` for Nest); its
 *   handler answers 200.
 *
 * Every handler that answers sends the JSON body `{ "route": "<name>" }`.
 */
export type RouteName = 'limited' | 'failing' | 'throwing' | 'unlimited';

/** Every route, in the order the servers register them. */
export const ROUTES: readonly RouteName[] = ['limited', 'failing', 'throwing', 'unlimited'];

/** The status the `failing` route's handler answers: 401. */
export const FAILING_STATUS = 401;

/** The message of the error the `throwing` route's handler throws. */
export const THROWN_MESSAGE = 'the handler failed';

/** Route handler runs, by route: what each server counts. */
class Handled {
  readonly #runs = new Map<RouteName, number>();

  /** How many times the handler of `route` ran since the server started. */
  of(route: RouteName): number {
    return this.#runs.get(route) ?? 0;
  }

  /**
   * One run of `route`'s handler, whatever the framework: counts it, then returns the status to
   * answer with (the body is `{ route }`).
   * @throws {Error} {@link THROWN_MESSAGE} for the `throwing` route.
   */
  run(route: RouteName): number {
    this.#runs.set(route, this.of(route) + 1);
    if (route === 'throwing') throw new Error(THROWN_MESSAGE);
    return route === 'failing' ? FAILING_STATUS : 200;
  }
}

// ---------------------------------------------------------------------------------------------
// The contract's options, framework-free.

/**
 * A request as the contract's functions (`key`, `skip`, `cost`, `policy`, `onError`,
 * `onRejected`) read it. Each adapter builds it from the framework's own request object with the
 * framework's own API (Express `req.get`, Fastify `request.headers`, Fetch `request.headers.get`),
 * so a middleware that passed anything else to the functions would fail the contract.
 */
export interface RequestView {
  /** A request header field by its lower-case name; `undefined` when the request has none. */
  header(name: string): string | undefined;
}

/**
 * One limit of a group: a `RateLimitGroup` member (for Express, Fastify and Fetch), or a named
 * limit of `RateWardenModule`'s `limits` (for Nest, which builds the route's group itself).
 */
export interface ContractMember {
  /** The limit's name: the group member's `name`, or its key in Nest's `limits`. */
  readonly name: string;
  readonly limiter: RateLimiter;
  /** Maps the request's key to this limit's key (`() => 'all'`: one limit for everyone). */
  readonly key?: (user: User | string) => User | string;
}

/**
 * What an `onRejected` of the contract returns to respond itself, in the framework's own way
 * (Express `res.status(…).type('text/plain').send(…)`, Fastify `reply.code(…)…`, a Fetch
 * `Response`): a plain-text response of `status` with the body `text`.
 */
export class OwnResponse {
  /**
   * @param status - the status of the response (not 429: the contract checks it is kept).
   * @param text - its plain-text body.
   */
  constructor(
    readonly status: number,
    readonly text: string,
  ) {}
}

/**
 * The options of one contract server, the same for every framework: the shared middleware
 * options (src/middleware/common.ts) with functions of a {@link RequestView}, and `onRejected`.
 */
export interface ContractOptions {
  /** One limiter, or the members of a group (see {@link ContractMember}). */
  readonly limiter: RateLimiter | readonly ContractMember[];
  /** Required: Fetch (and Hono off the known runtimes) has no default key. */
  readonly key: (req: RequestView) => User | string | PromiseLike<User | string>;
  readonly skip?: (req: RequestView) => boolean | PromiseLike<boolean>;
  readonly cost?: (req: RequestView) => number | PromiseLike<number>;
  /** A fixed policy (an array for a group), or a function of the request and the result. */
  readonly policy?:
    | RateLimitPolicy
    | readonly RateLimitPolicy[]
    | ((req: RequestView, result: RateLimitResult) => RateLimitPolicy | readonly RateLimitPolicy[]);
  readonly mode?: 'enforce' | 'shadow';
  readonly standardHeaders?: boolean;
  readonly legacyHeaders?: boolean;
  readonly onError?: (req: RequestView, error: unknown) => 'allow' | undefined;
  readonly skipSuccessfulRequests?: boolean;
  readonly skipFailedRequests?: boolean;
  /**
   * Builds the answer to a refused request: a value the middleware encodes (a string, an object),
   * or an {@link OwnResponse} the adapter answers in the framework's own way. Only for adapters
   * that do not lack `onRejected`.
   */
  readonly onRejected?: (req: RequestView, result: RateLimitResult) => unknown;
  /**
   * Keys and values passed to the framework's options as they are, unchecked by TypeScript: an
   * unknown option, a `mode` of the wrong type, for the construction checks.
   */
  readonly unchecked?: Readonly<Record<string, unknown>>;
}

// ---------------------------------------------------------------------------------------------
// The descriptor.

/** A contract server, started by {@link Adapter.start}. */
export interface Served {
  /** `http://127.0.0.1:<port>`: each route is at `${origin}/${route}`. */
  readonly origin: string;
  /** How many times the handler of `route` ran since the server started. */
  handled(route: RouteName): number;
  /** Stops the server (and closes its connections). */
  stop(): Promise<void>;
}

/** What an adapter may lack, each with the reason the contract skips its cases. */
export interface Lacks {
  /**
   * No per-middleware `onRejected`: the refusal is answered some other way (Nest: a
   * `RateLimitExceededException` for the application's exception filters).
   */
  readonly onRejected?: string;
}

/** What a framework's own error path answers: see {@link Adapter.errorPath}. */
export type ErrorPath =
  | { readonly status: number; readonly showsMessage: true }
  | { readonly status: number; readonly showsMessage: false; readonly body: string };

/** One framework integration, as the contract serves it. */
export interface Adapter {
  /** The name the suite's blocks carry ("Express", "NestJS (fastify platform)", …). */
  readonly name: string;
  /**
   * Builds the framework's rate limit from `options` and serves the four {@link ROUTES} on
   * port 0 of 127.0.0.1.
   * @throws (rejects with) what the integration throws for bad options, with nothing left
   *   listening: for Nest, when the application starts.
   */
  start(options: ContractOptions): Promise<Served>;
  /** How the integration's messages name its options (`Unknown option … in <optionsName>`). */
  readonly optionsName: string;
  /** The `Content-Type` the default 429 (the RFC 9457 problem) arrives with. */
  readonly problemContentType: string;
  /** The `Content-Type` an object returned by `onRejected` arrives with (JSON). */
  readonly jsonContentType: string;
  /**
   * What the framework's own error path answers (no error handler of the application's) when
   * deciding fails or a handler throws: its status, and a body that shows the error's message
   * (Express's development page, Fastify's JSON) or, where the message is hidden, the body it
   * always sends (Nest's).
   */
  readonly errorPath: ErrorPath;
  /** What the integration cannot do, and why. */
  readonly lacks: Lacks;
}

// ---------------------------------------------------------------------------------------------
// Shared by the descriptors.

/** The limiter of `options`: the limiter, or a `RateLimitGroup` of the members. */
function limiterOf(options: ContractOptions): RateLimiter | RateLimitGroup {
  const { limiter } = options;
  return limiter instanceof RateLimiter ? limiter : new RateLimitGroup(limiter);
}

/**
 * The shared options of `options` as functions of the framework's request `Req`, read through
 * `view` (all but `limiter`, `policy` and `onRejected`, which differ between the integrations).
 */
function sharedFunctions<Req>(options: ContractOptions, view: (req: Req) => RequestView) {
  const { key, skip, cost, onError, mode, standardHeaders, legacyHeaders, skipSuccessfulRequests, skipFailedRequests } = options;
  return {
    key: (req: Req) => key(view(req)),
    ...(skip && { skip: (req: Req) => skip(view(req)) }),
    ...(cost && { cost: (req: Req) => cost(view(req)) }),
    ...(onError && { onError: (req: Req, error: unknown) => onError(view(req), error) }),
    ...(mode && { mode }),
    ...(standardHeaders !== undefined && { standardHeaders }),
    ...(legacyHeaders !== undefined && { legacyHeaders }),
    ...(skipSuccessfulRequests !== undefined && { skipSuccessfulRequests }),
    ...(skipFailedRequests !== undefined && { skipFailedRequests }),
  };
}

/** `options.policy` as the middlewares take it: fixed, or a function of their request. */
function policyOf<Req>(options: ContractOptions, view: (req: Req) => RequestView) {
  const { policy } = options;
  if (policy === undefined) return {};
  if (typeof policy !== 'function') return { policy };
  return { policy: (req: Req, result: RateLimitResult) => policy(view(req), result) };
}

/**
 * The options of `options` that Express, Fastify and Fetch take alike: the limiter, the shared
 * functions of their request `Req` (read through `view`), the flags and the policy.
 */
function middlewareOptions<Req>(options: ContractOptions, view: (req: Req) => RequestView) {
  return { limiter: limiterOf(options), ...sharedFunctions(options, view), ...policyOf(options, view) };
}

/**
 * `options.onRejected` as a middleware takes it, `(req, result, ...rest)`: what the contract's
 * returns, or, for an {@link OwnResponse}, what `own` answers with it in the framework's way,
 * from the request and the framework's further arguments (`rest`: Express's `res`, Fastify's
 * `reply`; none for Fetch, nor for Hono, whose context `c` is the request).
 */
function rejectedOf<Req, Rest extends unknown[]>(
  options: ContractOptions,
  view: (req: Req) => RequestView,
  own: (answer: OwnResponse, req: Req, ...rest: Rest) => unknown,
) {
  const { onRejected } = options;
  if (onRejected === undefined) return {};
  return {
    onRejected: (req: Req, result: RateLimitResult, ...rest: Rest): unknown => {
      const answer = onRejected(view(req), result);
      return answer instanceof OwnResponse ? own(answer, req, ...rest) : answer;
    },
  };
}

/** `typed` with `unchecked`'s keys and values added, as TypeScript would not let them be. */
function withUnchecked<T extends object>(typed: T, options: ContractOptions): T {
  return { ...typed, ...options.unchecked };
}

// ---------------------------------------------------------------------------------------------
// Express

/** `ratewarden/express`: `expressRateLimit` before each limited route's handler. */
export const expressAdapter: Adapter = {
  name: 'Express',
  optionsName: 'expressRateLimit options',
  problemContentType: 'application/problem+json',
  jsonContentType: 'application/json',
  // Express's final handler: a 500 with the error's stack (outside production).
  errorPath: { status: 500, showsMessage: true },
  lacks: {},
  async start(options) {
    const view = (req: ExpressRequest): RequestView => ({ header: (name) => req.get(name) });
    const limit = expressRateLimit(
      withUnchecked<ExpressRateLimitOptions>(
        {
          ...middlewareOptions(options, view),
          ...rejectedOf(options, view, (answer, _req, res: express.Response) => res.status(answer.status).type('text/plain').send(answer.text)),
        },
        options,
      ),
    );
    const handled = new Handled();
    const app = express();
    for (const route of ROUTES) {
      const handler = (_req: ExpressRequest, res: express.Response): void => {
        res.status(handled.run(route)).json({ route });
      };
      if (route === 'unlimited') app.get(`/${route}`, handler);
      else app.get(`/${route}`, limit, handler);
    }
    const server = createServer(app);
    const origin = await listen(server);
    return { origin, handled: (route) => handled.of(route), stop: () => close(server) };
  },
};

// ---------------------------------------------------------------------------------------------
// Fastify

/** A Fastify request's view: its `headers` (a repeated field, an array, is left out). */
function fastifyView(request: FastifyRequest): RequestView {
  return {
    header: (name) => {
      const value = request.headers[name];
      return typeof value === 'string' ? value : undefined;
    },
  };
}

/**
 * `ratewarden/fastify`: `fastifyRateLimit` added with `addHook('onRequest', …)` in the plugin of
 * the limited routes. The application also has an asynchronous `onSend` hook, the harder case
 * for a hook that replies early (the reply is not yet sent when the hook returns).
 */
export const fastifyAdapter: Adapter = {
  name: 'Fastify',
  optionsName: 'fastifyRateLimit options',
  // Fastify adds the charset to every JSON type.
  problemContentType: 'application/problem+json; charset=utf-8',
  jsonContentType: 'application/json; charset=utf-8',
  // Fastify's default error handler: a 500 whose JSON body has the error's message.
  errorPath: { status: 500, showsMessage: true },
  lacks: {},
  async start(options) {
    const view = fastifyView;
    const hook = fastifyRateLimit(
      withUnchecked<FastifyRateLimitOptions>(
        {
          ...middlewareOptions(options, view),
          ...rejectedOf(options, view, (answer, _request, reply: FastifyReply) => reply.code(answer.status).type('text/plain').send(answer.text)),
        },
        options,
      ),
    );
    const handled = new Handled();
    // Every connection closed on close, as the Express server's are (not only the idle ones).
    const app = Fastify({ forceCloseConnections: true });
    app.addHook('onSend', async (_request, _reply, payload) => payload);
    const register = (scope: FastifyInstance, route: RouteName): void => {
      scope.get(`/${route}`, async (_request, reply) => reply.code(handled.run(route)).send({ route }));
    };
    void app.register(async (scope) => {
      scope.addHook('onRequest', hook);
      for (const route of ROUTES) if (route !== 'unlimited') register(scope, route);
    });
    register(app, 'unlimited');
    try {
      await app.listen({ port: 0, host: '127.0.0.1' });
    } catch (error) {
      await app.close();
      throw error;
    }
    const origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    return { origin, handled: (route) => handled.of(route), stop: () => app.close() };
  },
};

// ---------------------------------------------------------------------------------------------
// Fetch

/**
 * `ratewarden/fetch`: each limited route's handler wrapped by `withRateLimit`, served by
 * `serveFetch` (test/support/http-server.ts); what the wrapped handler rejects with is the runtime's to answer (a 500
 * here, showing the message).
 */
export const fetchAdapter: Adapter = {
  name: 'Fetch',
  optionsName: 'withRateLimit / checkRateLimit options',
  problemContentType: 'application/problem+json',
  jsonContentType: 'application/json',
  errorPath: { status: 500, showsMessage: true },
  lacks: {},
  async start(options) {
    const view = (request: Request): RequestView => ({ header: (name) => request.headers.get(name) ?? undefined });
    const fetchOptions = withUnchecked<FetchRateLimitOptions>(
      {
        ...middlewareOptions(options, view),
        ...rejectedOf(options, view, (answer) => new Response(answer.text, { status: answer.status, headers: { 'Content-Type': 'text/plain' } })),
      },
      options,
    );
    const handled = new Handled();
    const handlers = new Map<string, (request: Request) => Promise<Response>>();
    for (const route of ROUTES) {
      const handler = async (): Promise<Response> => Response.json({ route }, { status: handled.run(route) });
      handlers.set(`/${route}`, route === 'unlimited' ? handler : withRateLimit(handler, fetchOptions));
    }
    const { origin, stop } = await serveFetch(async (request) => {
      const handler = handlers.get(new URL(request.url).pathname);
      return handler === undefined ? new Response('not found', { status: 404 }) : handler(request);
    });
    return { origin, handled: (route) => handled.of(route), stop };
  },
};

// ---------------------------------------------------------------------------------------------
// NestJS

/** No logs (the error path's errors, start-up lines); every connection closed on close. */
// eslint-disable-next-line @typescript-eslint/no-unsafe-class-instance-assignment -- Nest declares its options as a class (NestApplicationContextOptions) that every caller passes as an object literal (see eslint.config.js)
const quiet: NestApplicationOptions = { logger: false, forceCloseConnections: true };

/**
 * `ratewarden/nestjs` on one HTTP platform: `RateWardenModule.forRoot` with the contract's
 * options, `RateWardenGuard` for every route (`APP_GUARD`).
 *
 * The limits: the limiter as the limit `default` (so the policies are named as the middlewares
 * name them), or the group's members by name, plus a limit `unused` that no route names; the
 * limited routes' controller names the others with `@RateLimit(...)` (so a guard that ignored it,
 * taking the default limits, would advertise `unused` too). `unlimited` is `@SkipRateLimit()`.
 * A fixed `policy` becomes a function (the module's `policy` is one). Nest has no per-guard
 * `onRejected`: the application's exception filters answer the 429 (nestjs.test.ts).
 */
export function nestAdapter(platform: 'express' | 'fastify'): Adapter {
  return {
    name: `NestJS (${platform} platform)`,
    optionsName: 'RateWardenModule options',
    // Nest's default exception filter sends the problem as JSON.
    problemContentType: 'application/json; charset=utf-8',
    jsonContentType: 'application/json; charset=utf-8',
    // Nest's default exception filter hides what went wrong.
    errorPath: { status: 500, showsMessage: false, body: '{"statusCode":500,"message":"Internal server error"}' },
    lacks: {
      onRejected:
        'Nest has no per-guard onRejected: a refusal is a RateLimitExceededException for the exception filters (nestjs.test.ts checks a filter of its own)',
    },
    async start(options) {
      const members: readonly ContractMember[] = options.limiter instanceof RateLimiter ? [{ name: 'default', limiter: options.limiter }] : options.limiter;
      const names = members.map((member) => member.name);
      const limits: RateWardenModuleOptions['limits'] = {
        ...Object.fromEntries(members.map(({ name, limiter, key }) => [name, key === undefined ? limiter : { limiter, key }])),
        unused: new RateLimiter({ threshold: 1, windowSeconds: 1 }),
      };
      const { policy } = options;
      // The platform's request: Express's `Request`, or Fastify's `FastifyRequest`.
      const view =
        platform === 'express'
          ? (req: unknown): RequestView => ({ header: (name) => (req as ExpressRequest).get(name) })
          : (req: unknown): RequestView => fastifyView(req as FastifyRequest);
      const moduleOptions = withUnchecked<RateWardenModuleOptions>(
        {
          limits,
          ...sharedFunctions(options, view),
          ...(policy !== undefined && {
            policy: (req: unknown, result: RateLimitResult) => (typeof policy === 'function' ? policy(view(req), result) : policy),
          }),
        },
        options,
      );
      const handled = new Handled();
      const answer = (route: RouteName): { route: RouteName } => {
        const status = handled.run(route);
        // A failed response the way Nest sends one: an HttpException of that status.
        if (status !== 200) throw new HttpException({ route }, status);
        return { route };
      };

      @RateLimit(...names)
      @Controller()
      class LimitedController {
        @Get('limited')
        limited(): { route: RouteName } {
          return answer('limited');
        }

        @Get('failing')
        failing(): { route: RouteName } {
          return answer('failing');
        }

        @Get('throwing')
        throwing(): { route: RouteName } {
          return answer('throwing');
        }
      }

      @Controller()
      class UnlimitedController {
        @SkipRateLimit()
        @Get('unlimited')
        unlimited(): { route: RouteName } {
          return answer('unlimited');
        }
      }

      @Module({
        imports: [RateWardenModule.forRoot(moduleOptions)],
        controllers: [LimitedController, UnlimitedController],
        providers: [{ provide: APP_GUARD, useClass: RateWardenGuard }],
      })
      class ContractModule {}

      const moduleRef = await Test.createTestingModule({ imports: [ContractModule] }).compile();
      const app: INestApplication = moduleRef.createNestApplication(platform === 'express' ? new ExpressAdapter() : new FastifyAdapter(), quiet);
      try {
        await app.listen(0, '127.0.0.1');
      } catch (error) {
        await app.close();
        throw error;
      }
      const { port } = (app.getHttpServer() as { address(): AddressInfo }).address();
      return { origin: `http://127.0.0.1:${port}`, handled: (route) => handled.of(route), stop: () => app.close() };
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Hono

/**
 * `ratewarden/hono`: `honoRateLimit` before each limited route's handler, in a Hono app served by
 * @hono/node-server; errors go to Hono's default `app.onError` (which logs them).
 */
export const honoAdapter: Adapter = {
  name: 'Hono',
  optionsName: 'honoRateLimit options',
  problemContentType: 'application/problem+json',
  jsonContentType: 'application/json',
  // Hono's default error handler hides what went wrong.
  errorPath: { status: 500, showsMessage: false, body: 'Internal Server Error' },
  lacks: {},
  async start(options) {
    const view = (c: Context): RequestView => ({ header: (name) => c.req.header(name) });
    const limit = honoRateLimit(
      withUnchecked<HonoRateLimitOptions>(
        {
          ...middlewareOptions(options, view),
          ...rejectedOf(options, view, (answer, c: Context) => c.text(answer.text, answer.status as ContentfulStatusCode)),
        },
        options,
      ),
    );
    const handled = new Handled();
    const app = new Hono();
    for (const route of ROUTES) {
      const handler = (c: Context): Response => c.json({ route }, handled.run(route) as ContentfulStatusCode);
      if (route === 'unlimited') app.get(`/${route}`, handler);
      else app.get(`/${route}`, limit, handler);
    }
    const server = await new Promise<Server>((resolve) => {
      const started = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(started as Server));
    });
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return { origin, handled: (route) => handled.of(route), stop: () => close(server) };
  },
};

/** Every adapter the contract runs against. */
export const adapters: readonly Adapter[] = [expressAdapter, fastifyAdapter, fetchAdapter, nestAdapter('express'), nestAdapter('fastify'), honoAdapter];
