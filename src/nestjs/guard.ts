/**
 * `RateWardenGuard`: decides each HTTP request with the limits of its route, sets the rate-limit
 * header fields on the platform's response, and throws `RateLimitExceededException` (a 429
 * `HttpException`, or a 503 when a store failure refused the request) when refused.
 *
 * @module
 */
import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { HttpAdapterHost, Reflector } from '@nestjs/core';
import { FAILED, decide, settle } from '../middleware/common.js';
import { onResponseEnd, type NodeResponse } from '../middleware/response-end.js';
import { fastifyTrustsEveryHop, trustsEveryHop, warnPermissiveTrustProxy } from '../middleware/trust-proxy.js';
import { LIMITS_METADATA, SKIP_METADATA } from './decorators.js';
import { RateLimitExceededException } from './exception.js';
import type { CompiledOptions } from './options.js';
import { RATEWARDEN_COMPILED } from './tokens.js';

/**
 * The guard that enforces `RateWardenModule`'s limits. Bind it like any Nest guard: for every
 * route with `{ provide: APP_GUARD, useClass: RateWardenGuard }` in a module's providers (or
 * `app.useGlobalGuards(app.get(RateWardenGuard))`), or for one controller or route with
 * `@UseGuards(RateWardenGuard)`. Import `RateWardenModule.forRoot(…)` once (it is global).
 *
 * For each HTTP request:
 *
 * - **Skipped** (`@SkipRateLimit()` on the route or its controller, or the `skip` option
 *   returned `true`): goes on, no headers.
 * - **Allowed**: sets `RateLimit-Policy` and `RateLimit` (and the legacy `X-RateLimit-*` with
 *   `legacyHeaders`) on the response, through the platform's adapter (Express `res`, Fastify
 *   `reply`), and goes on; the route's response carries them. When the response's headers were
 *   already sent (a middleware answered), none is set, and the decision stands.
 * - **Refused**: sets the same fields and `Retry-After` (whole seconds, at least 1; absent when
 *   the cost exceeds a limit), then throws {@link RateLimitExceededException}, a 429
 *   `HttpException` whose body is an RFC 9457 problem — a **503** ("Rate limit store
 *   unavailable") when the request was refused only because a limit's store could not be
 *   reached (`degraded: "fail-closed"`) —; your exception filters see it. The
 *   route handler never runs. With `mode: 'shadow'`, the request goes on instead (counted as a
 *   shadow rejection; no `Retry-After`).
 * - **Error** (`key`, `skip` or `cost` throws, a limiter rejects): `onError` may allow the
 *   request; otherwise the guard throws the error (Nest answers 500 unless a filter says
 *   otherwise).
 * - **Counting only failures or only successes** (`skipSuccessfulRequests`,
 *   `skipFailedRequests`): the allowed request is recorded up front (`reserve` of the route's
 *   group) and given back once the underlying response is over: on its `'finish'`, if
 *   `requestWasSuccessful` (by default the status below 400) says it is of the kind skipped; on
 *   `'close'` without `'finish'` (the client disconnected), as a failed one.
 *
 * The limits of a route are those of its `@RateLimit(...)` (the route's, else its
 * controller's), else the module's `defaultLimits`: decided together, all or nothing.
 *
 * With the default key, the first request checks the platform's proxy setting and warns once
 * (`ERR_RATEWARDEN_PERMISSIVE_TRUST_PROXY`) when it trusts every hop, as the Express and Fastify
 * middlewares do.
 *
 * Requests of other transports (WebSocket gateways, microservices: `context.getType()` other
 * than `'http'`) go on undecided.
 */
@Injectable()
export class RateWardenGuard implements CanActivate {
  readonly #compiled: CompiledOptions;
  readonly #reflector: Reflector;
  readonly #adapterHost: HttpAdapterHost;
  /** Whether the first request is still to check the platform's proxy setting (default key only). */
  #checkProxy: boolean;

  /**
   * @internal Built by Nest's injector (its parameters are internal), not called directly.
   * @param compiled - the module's compiled options.
   * @param reflector - Nest's `Reflector`, to read `@RateLimit` and `@SkipRateLimit`.
   * @param adapterHost - the HTTP adapter, to set headers on either platform's response.
   */
  constructor(
    @Inject(RATEWARDEN_COMPILED) compiled: CompiledOptions,
    @Inject(Reflector) reflector: Reflector,
    @Inject(HttpAdapterHost) adapterHost: HttpAdapterHost,
  ) {
    this.#compiled = compiled;
    this.#reflector = reflector;
    this.#adapterHost = adapterHost;
    this.#checkProxy = compiled.defaultKey;
  }

  /**
   * Decides the request (see the class).
   * @returns `true` when the request may go on.
   * @throws {RateLimitExceededException} when the request is refused: status 429, or 503 when
   *   only a store failure refused it (`degraded: "fail-closed"`).
   * @throws what deciding threw (unless `onError` allowed the request), or what `onError` threw.
   */
  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const targets = [context.getHandler(), context.getClass()];
    if (this.#reflector.getAllAndOverride<boolean | undefined>(SKIP_METADATA, targets) === true) return true;
    const names = this.#reflector.getAllAndOverride<readonly string[] | undefined>(LIMITS_METADATA, targets);
    const config = this.#compiled.configFor(names, () => `@RateLimit() of ${routeName(context)}`);
    if (this.#checkProxy) {
      this.#checkProxy = false;
      warnIfTrustsEveryHop(context.switchToHttp().getRequest<object>());
    }
    const decision = await decide(config, context);
    if (decision === undefined) return true;
    const { result, headers } = decision;
    const adapter = this.#adapterHost.httpAdapter;
    const response: unknown = context.switchToHttp().getResponse();
    // Headers already sent (a middleware or an earlier guard answered): nothing more can be set
    // (Express would throw ERR_HTTP_HEADERS_SENT), as the Express middleware does.
    if (adapter.isHeadersSent(response) !== true) {
      for (const name in headers) adapter.setHeader(response, name, headers[name] as string);
    }
    if (decision.reservation !== undefined) {
      // skipSuccessfulRequests / skipFailedRequests: judge the response once the platform's
      // underlying ServerResponse (Express `res`, Fastify `reply.raw`) is over.
      const raw = ((response as { raw?: unknown }).raw ?? response) as NodeResponse;
      onResponseEnd(raw, (finished) =>
        void settle(config, context, decision, finished ? { res: response, status: raw.statusCode } : FAILED),
      );
    }
    // Refused, unless in shadow (where the request goes on).
    if (decision.refuse) throw new RateLimitExceededException(result);
    return true;
  }
}

/**
 * Warns once (a `RateWardenWarning`, code `ERR_RATEWARDEN_PERMISSIVE_TRUST_PROXY`, as the Express
 * and Fastify middlewares do) when the platform trusts every proxy hop: `req.ip`, the default
 * key, is then whatever each client puts in X-Forwarded-For.
 */
function warnIfTrustsEveryHop(request: object): void {
  const app = (request as { app?: { get?: unknown } }).app;
  if (typeof app?.get === 'function') {
    // Express: its compiled `trust proxy` setting.
    if (trustsEveryHop((app.get as (name: string) => unknown).call(app, 'trust proxy fn'))) {
      warnPermissiveTrustProxy("Express's `trust proxy` setting", '`req.ip`');
    }
  } else if (fastifyTrustsEveryHop(request)) {
    warnPermissiveTrustProxy("Fastify's `trustProxy` option", '`request.ip`');
  }
}

/** @internal `UsersController.create`: how messages name a route. */
export function routeName(context: { getClass(): { name: string }; getHandler(): { name: string } }): string {
  return `${context.getClass().name}.${context.getHandler().name}`;
}
