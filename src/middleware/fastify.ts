/**
 * `ratewarden/fastify`: a rate-limiting `onRequest` hook for Fastify (4 and 5).
 *
 * Fastify is an optional peer dependency, used for its types only: this module never imports
 * it at run time.
 *
 * @example
 * ```ts
 * import Fastify from 'fastify';
 * import { RateLimiter } from 'ratewarden';
 * import { fastifyRateLimit } from 'ratewarden/fastify';
 *
 * // Only behind a reverse proxy you run, at 10.0.0.5: then request.ip is the client's address.
 * const app = Fastify(); // Fastify({ trustProxy: '10.0.0.5' })
 * app.addHook('onRequest', fastifyRateLimit({ limiter: new RateLimiter({ threshold: 100, windowSeconds: 60 }) }));
 * ```
 *
 * @module ratewarden/fastify
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RateLimitResult } from '../result.js';
import { knownOptions, optionalFunction } from '../errors.js';
import { FAILED, SHARED_OPTIONS, checkOptions, decide, settle, type ClientAddressKeyOptions, type RateLimitMiddlewareOptions } from './common.js';
import { sendRejection, type RejectionResponse } from './rejection.js';
import { onResponseEnd } from './response-end.js';
import { fastifyTrustsEveryHop, warnPermissiveTrustProxy } from './trust-proxy.js';

export { HeaderNames, PROBLEM_CONTENT_TYPE } from './common.js';
export { ipKey } from '../ip-key.js';
export type { IpKeyOptions } from '../ip-key.js';
export type { ClientAddressKeyOptions, PolicyFunction, RateLimitMiddlewareOptions } from './common.js';

/** Options of {@link fastifyRateLimit}: the shared options, plus `onRejected` and `ipv6Subnet`. */
export interface FastifyRateLimitOptions extends RateLimitMiddlewareOptions<FastifyRequest, FastifyReply>, ClientAddressKeyOptions {
  /**
   * Builds the response to a rejected request. Called with the status already set to 429, or
   * 503 when a store failure refused the request (`result.degraded === 'fail-closed'`: see
   * `rateLimitProblem`), and the rate-limit headers (with `Retry-After`) already set on `reply`;
   * the route handler is not called. Return (or resolve to):
   *
   * - a string: sent as `text/plain; charset=utf-8`;
   * - another value (an object, an array, a number…): sent as JSON (`application/json`;
   *   Fastify appends `; charset=utf-8`, as to every JSON type);
   * - `undefined` or `null`: an empty response (429 or 503);
   * - `reply` itself (`return reply.code(503).send(…)`): you responded yourself. Return it:
   *   with asynchronous `onSend` hooks, `reply.sent` is not yet true when the hook returns.
   *
   * A `Content-Type` set on `reply` by the hook is kept. If it throws or rejects, the hook
   * throws that error (Fastify's error handler answers).
   * @default an RFC 9457 problem (`rateLimitProblem`) as `application/problem+json` (with
   *   Fastify's `; charset=utf-8`)
   */
  readonly onRejected?: (request: FastifyRequest, result: RateLimitResult, reply: FastifyReply) => unknown;
}

/** The keys of {@link FastifyRateLimitOptions}: any other is rejected. */
const OPTIONS = knownOptions('fastifyRateLimit options', {
  ...SHARED_OPTIONS,
  onRejected: true,
  ipv6Subnet: true,
} satisfies Record<keyof FastifyRateLimitOptions, true>);

/**
 * The hook {@link fastifyRateLimit} returns: an async Fastify `onRequest` (or `preHandler`)
 * hook. When it answers the request itself (a 429) it returns `reply` (a thenable: the promise
 * settles once the response is sent), as Fastify requires of async hooks that reply early.
 */
export type FastifyRateLimitHook = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;

/**
 * Creates an async Fastify hook that decides each request with `options.limiter`. Register it
 * for every route with `app.addHook('onRequest', hook)` (in a plugin, for that plugin's
 * routes), or for one route with its `onRequest: hook` option. In `onRequest` the body is not
 * parsed yet: when `key`, `skip` or `cost` need it, register the hook as `preHandler` instead.
 *
 * - **Skipped** (`skip` returned `true`): goes on, no headers.
 * - **Allowed**: sets `RateLimit-Policy` and `RateLimit` (and the legacy `X-RateLimit-*` with
 *   `legacyHeaders`) on `reply`, then goes on; the route's response carries them.
 * - **Rejected**: answers 429 with the headers and `Retry-After` (whole seconds, at least 1;
 *   absent when the cost exceeds the limit) and, by default, an RFC 9457 problem body
 *   (`application/problem+json; charset=utf-8`); the hook resolves to `reply`, so the route
 *   handler never runs. A request refused only because a limit's store could not be reached
 *   (`degraded: 'fail-closed'`, such as Redis down under `onFailure: 'fail-closed'`) is
 *   answered **503** instead, with the problem "Rate limit store unavailable" and
 *   `Retry-After`: the client did not exceed the limit.
 * - **Error** (`key`, `skip` or `cost` throws, the limiter rejects — a store error): `onError`
 *   may allow the request; otherwise **the hook rejects with the error** and Fastify's error
 *   handler answers (`setErrorHandler`; a 500 by default).
 * - **Counting only failures** (`skipSuccessfulRequests`) **or only successes**
 *   (`skipFailedRequests`): the allowed request is recorded up front (`reserve`) and given back
 *   when the response is over: once sent (`reply.raw`'s `'finish'`, when Fastify runs
 *   `onResponse`), if `requestWasSuccessful(request, reply)` (by default
 *   `reply.statusCode < 400`) says it is of the kind skipped; when closed without finishing
 *   (the client disconnected: `onRequestAbort`), as a failed one. An error answered by the
 *   error handler is judged by that response's status.
 *
 * The key defaults to `ipKey(request.ip, { ipv6Subnet })`: the IPv4 address, or the client's
 * IPv6 /64 network (`ipv6Subnet`), so that one host cannot take a fresh limit per address. Behind a reverse proxy or load balancer, `request.ip` is
 * the proxy's address (one limit for everyone) unless Fastify's `trustProxy` option names the
 * proxies you run (their addresses or subnets, such as `trustProxy: '10.0.0.5'`); never trust
 * `X-Forwarded-For` from arbitrary clients, who can rotate it to escape the limit: set nothing
 * when no proxy is in front, and never `true`.
 *
 * @param options - {@link FastifyRateLimitOptions}; `limiter` is required.
 * @returns a {@link FastifyRateLimitHook}.
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
export function fastifyRateLimit(options: FastifyRateLimitOptions): FastifyRateLimitHook {
  const config = checkOptions<FastifyRequest>(options, OPTIONS, (request) => request.ip);
  const onRejected = optionalFunction('onRejected', options.onRejected);
  // The default key is the client address: check once, on the first request, that `trustProxy`
  // does not trust every hop.
  let checkProxy = options.key === undefined;

  return async (request, reply) => {
    if (checkProxy) {
      checkProxy = false;
      if (fastifyTrustsEveryHop(request)) warnPermissiveTrustProxy("Fastify's `trustProxy` option", '`request.ip`');
    }
    const decision = await decide(config, request);
    if (decision === undefined) return undefined;
    const { result, headers } = decision;
    reply.headers(headers);
    if (decision.reservation !== undefined) {
      // skipSuccessfulRequests / skipFailedRequests: judge the response once it is over (the
      // raw response's 'finish' is what runs Fastify's onResponse hooks; 'close' without it,
      // what runs onRequestAbort).
      onResponseEnd(reply.raw, (finished) =>
        void settle(config, request, decision, finished ? { res: reply, status: reply.statusCode } : FAILED),
      );
    }
    if (!decision.refuse) return undefined;
    return sendRejection(rejectionResponse(reply), result, onRejected && (() => onRejected(request, result, reply)));
  };
}

/**
 * `reply` for the rejection path. The user responded themself when `onRejected` returned
 * `reply`, or once `reply.sent`. Both ways end with `reply`: resolving to it (a thenable, which
 * settles once the reply is sent) tells Fastify the request is answered, even before
 * `reply.sent` turns true (asynchronous onSend hooks). Fastify appends `; charset=utf-8` to JSON
 * types, as for all its JSON responses.
 */
function rejectionResponse(reply: FastifyReply): RejectionResponse<FastifyReply> {
  return {
    status(code) {
      reply.code(code);
    },
    hasHeader: (name) => reply.hasHeader(name),
    setHeader(name, value) {
      reply.header(name, value);
    },
    responded: (returned) => (returned === reply || reply.sent ? reply : undefined),
    send: (body) => reply.send(body),
  };
}
