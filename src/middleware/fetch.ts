/**
 * `ratewarden/fetch`: rate limiting for Fetch API handlers (`Request` → `Response`): Next.js
 * route handlers, Bun, Deno, Cloudflare Workers and other edge runtimes (a Hono app has its own
 * middleware, `ratewarden/hono`). No `node:` imports and no dependencies.
 *
 * @example
 * ```ts
 * import { RateLimiter } from 'ratewarden';
 * import { withRateLimit } from 'ratewarden/fetch';
 *
 * const limiter = new RateLimiter({ threshold: 100, windowSeconds: 60 });
 * export default {
 *   fetch: withRateLimit(async () => new Response('hello'), {
 *     limiter,
 *     key: (request) => request.headers.get('x-api-key') ?? 'anonymous',
 *   }),
 * };
 * ```
 *
 * @module ratewarden/fetch
 */
import { isObject, knownOptions, optionalFunction, typeError } from '../errors.js';
import type { User } from '../request.js';
import type { RateLimitResult } from '../result.js';
import {
  FAILED,
  SHARED_OPTIONS,
  checkOptions,
  decide,
  settle,
  type Decision,
  type MiddlewareConfig,
  type Outcome,
  type RateLimitMiddlewareOptions,
} from './common.js';
import { sendRejection, type RejectionResponse } from './rejection.js';

export { HeaderNames, PROBLEM_CONTENT_TYPE } from './common.js';
export { ipKey } from '../ip-key.js';
export type { IpKeyOptions } from '../ip-key.js';
export type { PolicyFunction, RateLimitMiddlewareOptions } from './common.js';

/** Options of {@link withRateLimit} and {@link checkRateLimit}: the shared options with `key` required, plus `onRejected`. */
export interface FetchRateLimitOptions extends RateLimitMiddlewareOptions<Request, Response> {
  /**
   * Extracts the key the limit applies to: a non-empty string or a `User`, or a promise of
   * one. **Required**: a Fetch `Request` carries no client address. Use an authenticated
   * identity (a user id, an API key), or the client address as your platform reports it from
   * a source clients cannot forge — Cloudflare's `CF-Connecting-IP`, Deno's
   * `ServeHandlerInfo.remoteAddr`, Bun's `server.requestIP(request)`, or an `X-Forwarded-For`
   * entry appended by a proxy you run (the **rightmost** entry your own proxy added, never the
   * leftmost one, which any client can set to a fresh value per request). Pass an address
   * through `ipKey` (exported here), so that one IPv6 /64 network, and an IPv4 client in its
   * IPv4-mapped form, count as one client.
   */
  readonly key: (request: Request) => User | string | PromiseLike<User | string>;
  /**
   * Builds the response to a rejected request; the handler is not called. Return (or resolve
   * to):
   *
   * - a `Response`: sent with its own status; the rate-limit headers (with `Retry-After`) are
   *   added where it does not set them already;
   * - a string: a 429 with `text/plain; charset=utf-8`;
   * - another value (an object, an array, a number…): a 429 with JSON (`application/json`);
   * - `undefined` or `null`: an empty 429.
   *
   * Where this says 429, a request refused only because a limit's store could not be reached
   * (`result.degraded === 'fail-closed'`: see `rateLimitProblem`) gets a 503 instead.
   *
   * If it throws or rejects, the error propagates (as a rejection of the returned promise).
   * @default an RFC 9457 problem (`rateLimitProblem`) as `application/problem+json`, status 429
   *   (503, "Rate limit store unavailable", for a store failure)
   */
  readonly onRejected?: (request: Request, result: RateLimitResult) => unknown;
}

/** The keys of {@link FetchRateLimitOptions}: any other is rejected. */
const OPTIONS = knownOptions('withRateLimit / checkRateLimit options', {
  ...SHARED_OPTIONS,
  onRejected: true,
} satisfies Record<keyof FetchRateLimitOptions, true>);

/** The outcome of {@link checkRateLimit}. */
export interface RateLimitCheck {
  /**
   * The limiter's decision (a `GroupResult` for a group); `undefined` when the request was
   * skipped (`skip`) or let through by `onError`.
   */
  readonly result: RateLimitResult | undefined;
  /**
   * The header fields to send: `RateLimit-Policy` and `RateLimit` (with `standardHeaders`),
   * `Retry-After` when rejected, `X-RateLimit-*` with `legacyHeaders`. Empty when `result` is
   * `undefined`. A new object: add them to your response.
   */
  readonly headers: Record<string, string>;
  /** The response to send when the request was rejected (see `onRejected`); `undefined` when it may go on. */
  readonly response: Response | undefined;
  /**
   * With `skipSuccessfulRequests` or `skipFailedRequests`: reports how the request went, once
   * your handler is done, so that a request of the kind skipped is given back — the
   * `Response` your handler returned (judged by `requestWasSuccessful`, by default its status
   * below 400), or `undefined` when it failed (threw: counts as failed). Call it once; a
   * request never reported stays counted. Resolves once the refund is done; never rejects (an
   * error goes to `onError`, else to a warning). A no-op (resolving at once) without those
   * options, or when the request was not allowed or was skipped.
   */
  readonly settle: (response: Response | undefined) => Promise<void>;
}

/** A Fetch handler: a `Request` (and whatever the platform passes after it) to a `Response`. */
export type FetchHandler<Args extends unknown[] = []> = (request: Request, ...rest: Args) => Response | PromiseLike<Response>;

interface FetchConfig {
  readonly config: MiddlewareConfig<Request>;
  readonly onRejected: ((request: Request, result: RateLimitResult) => unknown) | undefined;
}

/** Validated options, by the options object (treat options as immutable). */
const configs = new WeakMap<object, FetchConfig>();

/** Validates `options` once per options object. */
function configOf(options: FetchRateLimitOptions): FetchConfig {
  if (isObject(options)) {
    const cached = configs.get(options);
    if (cached !== undefined) return cached;
  }
  const config = checkOptions<Request>(
    options,
    OPTIONS,
    'a Fetch Request carries no client address: derive the key from an identity or a trusted platform address',
  );
  const fetchConfig = { config, onRejected: optionalFunction('onRejected', options.onRejected) };
  configs.set(options, fetchConfig);
  return fetchConfig;
}

/**
 * Decides one request with `options.limiter`, for frameworks and runtimes where wrapping the
 * handler does not fit (a Next.js `middleware.ts`): send `response` when it
 * is set, otherwise go on and add `headers` to your response.
 *
 * Options are validated on the first call with a given options object and cached by its
 * identity: create the options once, not per request.
 *
 * With `skipSuccessfulRequests` or `skipFailedRequests`, report how the request went with the
 * check's `settle(response)` once your handler is done (`settle(undefined)` when it threw):
 * until then the request counts.
 *
 * @param request - the incoming request.
 * @param options - {@link FetchRateLimitOptions}; `limiter` and `key` are required.
 * @returns a promise of the {@link RateLimitCheck}.
 * @throws never synchronously. The promise rejects with a `TypeError` / `RangeError` for
 *   invalid options (as {@link withRateLimit} throws them); and, when deciding fails (`key`,
 *   `skip` or `cost` throws, the limiter rejects — a store error) and `onError` does not
 *   return `"allow"`, with that error.
 */
export async function checkRateLimit(request: Request, options: FetchRateLimitOptions): Promise<RateLimitCheck> {
  return check(configOf(options), request);
}

async function check(fetchConfig: FetchConfig, request: Request): Promise<RateLimitCheck> {
  const { check, decision } = await decideFetch(fetchConfig, request);
  if (decision?.reservation === undefined) return { ...check, settle: settledAlready };
  const { config } = fetchConfig;
  let settled = false;
  return {
    ...check,
    settle: (response) => {
      // Once: a second report must not give the request back twice.
      if (settled) return settledAlready();
      settled = true;
      return settle(config, request, decision, outcomeOf(request, response));
    },
  };
}

/** A `settle` with nothing to do. */
const settledAlready = (): Promise<void> => Promise.resolve();

/**
 * How a request went, for `settle`: failed without a response (the handler threw) or when the
 * client went away before it (`request.signal` aborted, on runtimes that abort it).
 */
function outcomeOf(request: Request, response: Response | undefined): Outcome<Response> {
  return response === undefined || request.signal.aborted ? FAILED : { res: response, status: response.status };
}

/** Decides `request`: what {@link checkRateLimit} reports (less `settle`), and the decision. */
async function decideFetch(
  { config, onRejected }: FetchConfig,
  request: Request,
): Promise<{ check: Omit<RateLimitCheck, 'settle'>; decision: Decision | undefined }> {
  const decision = await decide(config, request);
  if (decision === undefined) return { check: { result: undefined, headers: {}, response: undefined }, decision };
  const { result, headers } = decision;
  if (!decision.refuse) return { check: { result, headers, response: undefined }, decision };
  const response = await sendRejection(rejectionResponse(headers), result, onRejected && (() => onRejected(request, result)));
  return { check: { result, headers, response }, decision };
}

/**
 * A new `Response` for the rejection path, built up from the rate-limit `headers`. The user
 * responded themself when `onRejected` returned a `Response`: that one is used, with `headers`
 * added where it does not set them already.
 */
function rejectionResponse(headers: Record<string, string>): RejectionResponse<Response> {
  const init = { status: 200, headers: new Headers(headers) };
  return {
    status(code) {
      init.status = code;
    },
    hasHeader: (name) => init.headers.has(name),
    setHeader(name, value) {
      init.headers.set(name, value);
    },
    responded: (returned) => (returned instanceof Response ? withHeaders(returned, headers) : undefined),
    send: (body) => new Response(body ?? null, init),
  };
}

/**
 * Wraps a Fetch handler with a rate limit: the returned handler decides each request with
 * `options.limiter` before calling `handler`.
 *
 * - **Skipped** (`skip` returned `true`): calls `handler`, adds no headers.
 * - **Allowed**: calls `handler` and adds `RateLimit-Policy` and `RateLimit` (and the legacy
 *   `X-RateLimit-*` with `legacyHeaders`) to its response, where it does not set them itself
 *   (a response with immutable headers is copied).
 * - **Rejected**: returns the 429 (see `onRejected`) with the headers and `Retry-After` (whole
 *   seconds, at least 1; absent when the cost exceeds the limit); `handler` is not called. A
 *   request refused only because a limit's store could not be reached is answered 503.
 * - **Error** (`key`, `skip` or `cost` throws, the limiter rejects — a store error): `onError`
 *   may allow the request; otherwise **the returned promise rejects with the error** (no 500 is
 *   made up here: the framework or runtime answers it — Next.js's error page,
 *   `Deno.serve`'s `onError`…). Errors of `handler` propagate unchanged.
 * - **Counting only failures** (`skipSuccessfulRequests`) **or only successes**
 *   (`skipFailedRequests`): the allowed request is recorded up front (`reserve`); when `handler`
 *   returns, `requestWasSuccessful(request, response)` (by default `response.status < 400`)
 *   judges its `Response`, and a request of the kind skipped is given back before the wrapped
 *   handler returns. A `handler` that throws or rejects, or a `request.signal` aborted before
 *   it returned (the client went away), is a failed request. (A client leaving while the body
 *   streams is not seen here: the runtime sends the body after the handler returned.)
 *
 * @param handler - the handler to protect; extra arguments (a Worker's `env` and `ctx`, a
 *   Next.js route's `context`) are passed through.
 * @param options - {@link FetchRateLimitOptions}; `limiter` and `key` are required.
 * @returns the wrapped handler, `(request, ...rest) => Promise<Response>`.
 * @throws {RateWardenTypeError} (a `TypeError`) when `handler` is not a function, `options` is
 *   not an object or has a key that is not one of its options (code
 *   `ERR_RATEWARDEN_UNKNOWN_OPTION`, naming the key and, when one is close, the option meant),
 *   `limiter` is not a RateLimiter or RateLimitGroup, **`key` is missing** or not
 *   a function, another function option (`skip`, `cost`, `onRejected`, `onError`,
 *   `requestWasSuccessful`) is not a function, a header or skip option is not a boolean,
 *   `policy` is not a policy or array of them, `policy` is missing for a group,
 *   `requestWasSuccessful` is given without a skip option, or a skip option is set for a
 *   limiter without `reserve`.
 * @throws {RateWardenRangeError} (a `RangeError`) when a policy's window is not a positive
 *   finite number of seconds, its name is not printable ASCII, a group gets a different
 *   number of policies than it has limits, or both `skipSuccessfulRequests` and
 *   `skipFailedRequests` are `true`.
 */
export function withRateLimit<Args extends unknown[]>(
  handler: FetchHandler<Args>,
  options: FetchRateLimitOptions,
): (request: Request, ...rest: Args) => Promise<Response> {
  // Options first: a missing `key` is the likelier mistake, and its message the more useful.
  const fetchConfig = configOf(options);
  if (typeof handler !== 'function') throw typeError('handler', 'a function', handler);
  const { config } = fetchConfig;
  return async (request, ...rest) => {
    const { check, decision } = await decideFetch(fetchConfig, request);
    const { headers, response } = check;
    if (response !== undefined) return response;
    if (decision?.reservation === undefined) return withHeaders(await handler(request, ...rest), headers);
    // skipSuccessfulRequests / skipFailedRequests: settle before returning (edge runtimes may
    // drop work left after the response); a handler that throws is a failed request.
    let returned: Response;
    try {
      returned = await handler(request, ...rest);
    } catch (error) {
      await settle(config, request, decision, FAILED);
      throw error;
    }
    await settle(config, request, decision, outcomeOf(request, returned));
    return withHeaders(returned, headers);
  };
}

/**
 * Adds `headers` to `response` where it does not set them already. Responses with immutable
 * headers (from `fetch()`, `Response.redirect()`) are copied; one that cannot be copied (an
 * error response) is returned unchanged.
 */
function withHeaders(response: Response, headers: Record<string, string>): Response {
  const missing = Object.keys(headers).filter((name) => !response.headers.has(name));
  if (missing.length === 0) return response;
  try {
    for (const name of missing) response.headers.set(name, headers[name] as string);
    return response;
  } catch {
    // Immutable headers: copy the response.
  }
  let copy: Response;
  try {
    const { status, statusText } = response;
    copy = new Response(response.body, { status, statusText, headers: response.headers });
  } catch {
    return response;
  }
  for (const name of missing) copy.headers.set(name, headers[name] as string);
  return copy;
}
