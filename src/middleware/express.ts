/**
 * `ratewarden/express`: rate-limiting middleware for Express (4 and 5).
 *
 * Express is an optional peer dependency, used for its types only: this module never imports
 * it at run time.
 *
 * @example
 * ```ts
 * import express from 'express';
 * import { RateLimiter } from 'ratewarden';
 * import { expressRateLimit } from 'ratewarden/express';
 *
 * const app = express();
 * // Only behind a reverse proxy you run, at 10.0.0.5: then req.ip is the client's address.
 * // app.set('trust proxy', '10.0.0.5');
 * app.use(expressRateLimit({ limiter: new RateLimiter({ threshold: 100, windowSeconds: 60 }) }));
 * ```
 *
 * @module ratewarden/express
 */
import type { Request, RequestHandler, Response } from 'express';
import { knownOptions, optionalFunction, typeError } from '../errors.js';
import type { RateLimitResult } from '../result.js';
import { FAILED, SHARED_OPTIONS, checkOptions, decide, settle, type ClientAddressKeyOptions, type RateLimitMiddlewareOptions } from './common.js';
import { sendRejection, type RejectionResponse } from './rejection.js';
import { onResponseEnd } from './response-end.js';
import { trustsEveryHop, warnPermissiveTrustProxy } from './trust-proxy.js';

export { HeaderNames, PROBLEM_CONTENT_TYPE } from './common.js';
export { ipKey } from '../ip-key.js';
export type { IpKeyOptions } from '../ip-key.js';
export type { ClientAddressKeyOptions, PolicyFunction, RateLimitMiddlewareOptions } from './common.js';

/** Options of {@link expressRateLimit}: the shared options, plus `onRejected` and `ipv6Subnet`. */
export interface ExpressRateLimitOptions extends RateLimitMiddlewareOptions<Request, Response>, ClientAddressKeyOptions {
  /**
   * Builds the response to a rejected request. Called with the status already set to 429, or
   * 503 when a store failure refused the request (`result.degraded === 'fail-closed'`: see
   * `rateLimitProblem`), and the rate-limit headers (with `Retry-After`) already set on `res`;
   * the route handler is not called. Return (or resolve to):
   *
   * - a string: sent as `text/plain; charset=utf-8`;
   * - another value (an object, an array, a number…): sent as JSON (`application/json`);
   * - `undefined` or `null`: an empty response (429 or 503);
   * - `res` itself, or anything once `res` has been sent (`res.status(503).json(…)`): you
   *   responded yourself.
   *
   * A `Content-Type` set on `res` by the hook is kept. If it throws or rejects, the error goes
   * to `next(error)`.
   * @default an RFC 9457 problem (`rateLimitProblem`) as `application/problem+json`
   */
  readonly onRejected?: (req: Request, result: RateLimitResult, res: Response) => unknown;
}

/** The keys of {@link ExpressRateLimitOptions}: any other is rejected. */
const OPTIONS = knownOptions('expressRateLimit options', {
  ...SHARED_OPTIONS,
  onRejected: true,
  ipv6Subnet: true,
} satisfies Record<keyof ExpressRateLimitOptions, true>);

/**
 * Creates an Express middleware that decides each request with `options.limiter`.
 *
 * - **Skipped** (`skip` returned `true`): calls `next()`, no headers.
 * - **Allowed**: sets `RateLimit-Policy` and `RateLimit` (and the legacy `X-RateLimit-*` with
 *   `legacyHeaders`) on `res`, then calls `next()`; the route's response carries them.
 * - **Rejected**: answers 429 with the headers and `Retry-After` (whole seconds, at least 1;
 *   absent when the cost exceeds the limit) and, by default, an RFC 9457 problem body
 *   (`application/problem+json`). The route handler never runs. A request refused only because
 *   a limit's store could not be reached (`degraded: 'fail-closed'`, such as Redis down under
 *   `onFailure: 'fail-closed'`) is answered **503** instead, with the problem "Rate limit store
 *   unavailable" and `Retry-After`: the client did not exceed the limit.
 * - **Error** (`key`, `skip` or `cost` throws, the limiter rejects — a store error): `onError`
 *   may allow the request; otherwise the error goes to **`next(error)`**, to your
 *   error-handling middleware (Express answers 500 by default).
 * - **Counting only failures** (`skipSuccessfulRequests`) **or only successes**
 *   (`skipFailedRequests`): the allowed request is recorded up front (`reserve`) and given back
 *   when `res` is over: on `'finish'`, if `requestWasSuccessful(req, res)` (by default
 *   `res.statusCode < 400`) says it is of the kind skipped; on `'close'` without `'finish'` (the
 *   client disconnected), as a failed one. An error answered by your error handler is judged
 *   by that response's status.
 *
 * The key defaults to `ipKey(req.ip, { ipv6Subnet })`: the IPv4 address, or the client's IPv6
 * /64 network (`ipv6Subnet`), so that one host cannot take a fresh limit per address. Behind a reverse proxy or load balancer, `req.ip` is the
 * proxy's address (one limit for everyone) unless Express's `trust proxy` setting names the
 * proxies you run (their addresses, `app.set('trust proxy', '10.0.0.5')`); never trust
 * `X-Forwarded-For` from arbitrary clients, who can rotate it to escape the limit: set nothing
 * when no proxy is in front, and never `true`.
 *
 * @param options - {@link ExpressRateLimitOptions}; `limiter` is required.
 * @returns a `RequestHandler` for `app.use(…)` or a route.
 * @throws {RateWardenTypeError} (a `TypeError`) when `options` is not an object or has a key
 *   that is not one of its options (code `ERR_RATEWARDEN_UNKNOWN_OPTION`, naming the key and,
 *   when one is close, the option meant), `limiter` is
 *   not a RateLimiter or RateLimitGroup, a function option (`key`, `skip`, `cost`,
 *   `onRejected`, `onError`, `requestWasSuccessful`) is not a function, a header or skip
 *   option is not a boolean, `policy` is not a policy or array of them, `policy` is missing for
 *   a group, `ipv6Subnet` is neither a number nor `false`, `ipv6Subnet` is given with a `key`,
 *   `requestWasSuccessful` is given without a skip option, or a skip option is set for a
 *   limiter without `reserve`.
 * @throws {RateWardenRangeError} (a `RangeError`) when a policy's window is not a positive
 *   finite number of seconds, its name is not printable ASCII, a group gets a different
 *   number of policies than it has limits, `ipv6Subnet` is not an integer from 1 to 128, or
 *   both `skipSuccessfulRequests` and `skipFailedRequests` are `true`.
 */
export function expressRateLimit(options: ExpressRateLimitOptions): RequestHandler {
  const config = checkOptions<Request>(options, OPTIONS, clientAddress);
  const onRejected = optionalFunction('onRejected', options.onRejected);
  // The default key is the client address: check once, on the first request (the app's
  // settings are not known before), that `trust proxy` does not trust every hop.
  let checkProxy = options.key === undefined;

  /** Resolves to whether to call `next()`. */
  const handle = async (req: Request, res: Response): Promise<boolean> => {
    if (checkProxy) {
      checkProxy = false;
      if (trustsEveryHop((req.app as { get?: (name: string) => unknown } | undefined)?.get?.('trust proxy fn'))) {
        warnPermissiveTrustProxy("Express's `trust proxy` setting", '`req.ip`');
      }
    }
    const decision = await decide(config, req);
    if (decision === undefined) return true;
    const { result, headers } = decision;
    if (!res.headersSent) for (const name in headers) res.setHeader(name, headers[name] as string);
    if (decision.reservation !== undefined) {
      // skipSuccessfulRequests / skipFailedRequests: judge the response once it is over.
      onResponseEnd(res, (finished) => void settle(config, req, decision, finished ? { res, status: res.statusCode } : FAILED));
    }
    if (!decision.refuse) return true;
    await sendRejection(rejectionResponse(res), result, onRejected && (() => onRejected(req, result, res)));
    return false;
  };

  return (req, res, next) => {
    handle(req, res).then(
      (proceed) => {
        if (proceed) next();
      },
      (error: unknown) => {
        next(error);
      },
    );
  };
}

/** The default key: the client address Express derived (mind `trust proxy`). */
function clientAddress(req: Request): string {
  const ip = req.ip;
  if (typeof ip !== 'string' || ip.length === 0) {
    throw typeError('req.ip', 'a client address (the default `key`; the connection may be closed)', ip);
  }
  return ip;
}

/**
 * `res` for the rejection path. The user responded themself when `onRejected` returned `res`,
 * or once `res` has been sent (`res.headersSent`).
 */
function rejectionResponse(res: Response): RejectionResponse<Response> {
  return {
    status(code) {
      res.status(code);
    },
    hasHeader: (name) => res.hasHeader(name),
    setHeader(name, value) {
      res.setHeader(name, value);
    },
    responded: (returned) => (returned === res || res.headersSent ? res : undefined),
    send: (body) => res.end(body),
  };
}
