/**
 * `ratewarden/hono`: rate-limiting middleware for Hono (4), on every runtime Hono runs on:
 * Node.js (`@hono/node-server`), Bun, Deno, Cloudflare Workers and other Fetch runtimes. No
 * `node:` imports and no dependencies.
 *
 * Hono is an optional peer dependency, used for its types only: this module never imports it
 * at run time (nor `hono/bun`, `@hono/node-server` or any adapter: the client address is read
 * from what the runtime hands Hono as `c.env`).
 *
 * @example
 * ```ts
 * import { Hono } from 'hono';
 * import { RateLimiter } from 'ratewarden';
 * import { honoRateLimit, type RateLimitVariables } from 'ratewarden/hono';
 *
 * const app = new Hono<{ Variables: RateLimitVariables }>();
 * app.use('/api/*', honoRateLimit({ limiter: new RateLimiter({ threshold: 100, windowSeconds: 60 }) }));
 * app.get('/api/hello', (c) => c.json({ remaining: c.get('rateLimit')?.remaining }));
 * ```
 *
 * @module ratewarden/hono
 */
import type { Context, MiddlewareHandler, Next } from 'hono';
import { isObject, knownOptions, optionalFunction, optionalLabel, typeError } from '../errors.js';
import type { User } from '../request.js';
import type { RateLimitResult } from '../result.js';
import {
  FAILED,
  SHARED_OPTIONS,
  checkOptions,
  decide,
  settle,
  type ClientAddressKeyOptions,
  type MiddlewareConfig,
  type Outcome,
  type RateLimitMiddlewareOptions,
} from './common.js';
import { sendRejection, type RejectionResponse } from './rejection.js';

export { HeaderNames, PROBLEM_CONTENT_TYPE } from './common.js';
export { ipKey } from '../ip-key.js';
export type { IpKeyOptions } from '../ip-key.js';
export type { ClientAddressKeyOptions, PolicyFunction, RateLimitMiddlewareOptions } from './common.js';

/** The name of the context variable that holds the decision, unless `variable` says otherwise. */
const DEFAULT_VARIABLE = 'rateLimit';

/**
 * The context variable {@link honoRateLimit} sets (under its default name), for a typed
 * `c.get('rateLimit')`: `new Hono<{ Variables: RateLimitVariables }>()`, or intersected with
 * your own variables (`{ Variables: RateLimitVariables & { user: User } }`). With another
 * `variable` name, declare `{ [name]: RateLimitResult | undefined }` yourself.
 *
 * The value is the limiter's decision for the request (a `GroupResult` for a
 * `RateLimitGroup`): set when the request was decided, allowed, refused or let through in
 * shadow. It is **not set** (`c.get` returns `undefined`) on requests the middleware did not
 * decide: skipped (`skip`), let through by `onError`, or outside the paths it is used on; so
 * its type includes `undefined`: read it with `c.get('rateLimit')?.remaining`, or check it
 * (`const decision = c.get('rateLimit'); if (decision !== undefined) …`).
 */
export interface RateLimitVariables {
  /**
   * The decision (`allowed`, `remaining`, `retryAfter` and `resetAfter` in seconds, `limit`),
   * or `undefined` on a request the middleware did not decide (skipped, let through by
   * `onError`, or on a path it is not used on).
   */
  rateLimit: RateLimitResult | undefined;
}

/**
 * Options of {@link honoRateLimit}: the shared options (their functions receive Hono's
 * `Context` `c`), plus `ipv6Subnet`, `onRejected` and `variable`.
 */
export interface HonoRateLimitOptions extends RateLimitMiddlewareOptions<Context, Context>, ClientAddressKeyOptions {
  /**
   * Extracts the key the limit applies to (a user id, an API key, a client IP) from the
   * context: a non-empty string or a `User` (`{ id }`), or a promise of one. The limiter
   * validates it: anything else takes the error path (see `onError`).
   *
   * @default `ipKey` of the client address (the IPv4 address, or the IPv6 network of its first
   *   `ipv6Subnet` bits), where the runtime gives Hono one that clients cannot forge:
   *
   *   - Node.js with `@hono/node-server`: the socket's `remoteAddress` (`c.env.incoming`);
   *   - Bun (`Bun.serve`, or `export default app`): `server.requestIP(c.req.raw)`, `c.env`
   *     being Bun's server;
   *   - Deno (`Deno.serve(app.fetch)`): `c.env.remoteAddr.hostname`;
   *   - Cloudflare Workers (`navigator.userAgent` is `"Cloudflare-Workers"`): the
   *     `CF-Connecting-IP` header, which Cloudflare's edge sets. That header is trustworthy
   *     **only behind Cloudflare's edge**: self-hosted workerd and `wrangler dev` report the
   *     same `navigator.userAgent` but pass a `CF-Connecting-IP` sent by the client through
   *     unchanged (any client can pick its own key): pass `key` there.
   *
   *   Elsewhere (another runtime or adapter, `app.request()` in tests, a Unix socket) there is
   *   none, and each request takes the error path with a `RateWardenTypeError` naming `key`:
   *   pass `key` there. Behind a reverse proxy or load balancer, the address is the proxy's (one
   *   limit for everyone): derive the key from the entry your own proxy adds to
   *   `X-Forwarded-For` (the right-most one it appended, never the left-most, which any client
   *   writes), through `ipKey`, or from an authenticated identity.
   */
  readonly key?: (c: Context) => User | string | PromiseLike<User | string>;
  /**
   * Whether a response counts as successful, for `skipSuccessfulRequests` and
   * `skipFailedRequests` (given without either, it is a `TypeError`): called once per allowed
   * request, after the rest of the chain (`await next()`), with the context twice (`(c, c)`,
   * the request's and the response's side, so `(c) => c.res.status < 400` fits): `c.res` is the
   * response, and `c.error` the error a handler threw (Hono's `app.onError` answered it). Only
   * `true` (or a promise of it) is a success.
   *
   * A request whose `c.req.raw.signal` aborted (the client went away, on runtimes that abort
   * it) before the chain returned, or whose chain threw (`app.onError` itself threw), is failed
   * without calling it. If it throws or rejects, the response counts as failed and the error
   * goes to `onError`.
   * @default no handler error and a status below 400: `c.error === undefined && c.res.status < 400`
   */
  readonly requestWasSuccessful?: (c: Context, res: Context) => boolean | PromiseLike<boolean>;
  /**
   * Builds the response to a refused request; the rest of the chain (the route handler) is not
   * called. `c.get(variable)` already holds the decision. Return (or resolve to):
   *
   * - a `Response` (`c.json(…, 503)`, `c.text(…)`, `new Response(…)`): sent with its own status;
   *   the rate-limit headers (with `Retry-After`) are added where it does not set them already;
   * - a string: a 429 with `text/plain; charset=utf-8`;
   * - another value (an object, an array, a number…): a 429 with JSON (`application/json`);
   * - `undefined` or `null`: an empty 429.
   *
   * Where this says 429, a request refused only because a limit's store could not be reached
   * (`result.degraded === 'fail-closed'`: see `rateLimitProblem`) gets a 503 instead.
   *
   * Headers set earlier in the chain (`c.header()` of a middleware before this one) are kept.
   * If it throws or rejects, the error goes to Hono's `app.onError`.
   * @default an RFC 9457 problem (`rateLimitProblem`) as `application/problem+json`, status 429
   *   (503, "Rate limit store unavailable", for a store failure)
   */
  readonly onRejected?: (c: Context, result: RateLimitResult) => unknown;
  /**
   * The name of the context variable that receives the decision (`c.set(variable, result)`):
   * read it with `c.get(variable)` or `c.var[variable]` in later middleware and handlers (see
   * {@link RateLimitVariables}). A non-empty string; give each `honoRateLimit` of one chain its
   * own name to read every decision.
   * @default "rateLimit"
   */
  readonly variable?: string;
}

/** The keys of {@link HonoRateLimitOptions}: any other is rejected. */
const OPTIONS = knownOptions('honoRateLimit options', {
  ...SHARED_OPTIONS,
  onRejected: true,
  ipv6Subnet: true,
  variable: true,
} satisfies Record<keyof HonoRateLimitOptions, true>);

/**
 * Creates a Hono middleware that decides each request with `options.limiter`:
 * `app.use('/api/*', honoRateLimit({ limiter }))` for a group of paths, `app.use(…)` for every
 * route, or `app.get('/login', honoRateLimit({ … }), handler)` for one.
 *
 * - **Skipped** (`skip` returned `true`): calls `next()`; no headers, no context variable.
 * - **Already decided** by this same middleware (one instance mounted on overlapping paths,
 *   `app.use('*', m)` and `app.use('/api/*', m)`): calls `next()`; a request counts once per
 *   middleware instance. (Two instances on one limiter are two decisions, as intended for two
 *   limits.)
 * - **Allowed**: sets the context variable (`c.get('rateLimit')`, see `variable`), calls
 *   `next()`, then adds `RateLimit-Policy` and `RateLimit` (and the legacy `X-RateLimit-*`
 *   with `legacyHeaders`) to `c.res` where the handler did not set them itself (a response
 *   with immutable headers, as `fetch()` returns, is copied; one that cannot be copied is
 *   left as it is).
 * - **Refused**: sets the context variable and answers 429 (see `onRejected`) with the headers
 *   and `Retry-After` (whole seconds, at least 1; absent when the cost exceeds the limit); the
 *   rest of the chain is not called. A request refused only because a limit's store could not
 *   be reached (`result.degraded === 'fail-closed'`, under `onFailure: 'fail-closed'`) is
 *   answered **503** instead, with the problem "Rate limit store unavailable".
 * - **Shadow** (`mode: 'shadow'`): every request is decided, recorded and set in the context
 *   variable, none is refused (see `mode`).
 * - **Error** (`key`, `skip` or `cost` throws, the limiter rejects — a store error — or there is
 *   no client address for the default key): `onError` may allow the request (no headers, no
 *   variable); otherwise **the middleware throws the error**, and Hono's `app.onError` answers
 *   (Hono's default: a 500).
 * - **Counting only failures** (`skipSuccessfulRequests`) **or only successes**
 *   (`skipFailedRequests`): the allowed request is recorded up front (`reserve`); once
 *   `next()` returns, `requestWasSuccessful(c, c)` (by default no `c.error` and
 *   `c.res.status < 400`) judges the response, and a request of the kind skipped is given back
 *   before the middleware returns (edge runtimes may drop work left after the response). A
 *   handler that throws is failed: `app.onError` answers it and sets `c.error`.
 *
 * @param options - {@link HonoRateLimitOptions}; `limiter` is required.
 * @returns a Hono `MiddlewareHandler`, for `app.use(…)` or a route, typed with
 *   `{ Variables: RateLimitVariables }` so that the handlers after it read `c.get('rateLimit')`
 *   typed (`RateLimitResult | undefined`) without declaring it on the app. With another
 *   `variable` name, `c.get('rateLimit')` stays `undefined` (as its type allows): declare the
 *   name you chose on the app.
 * @throws {RateWardenTypeError} (a `TypeError`) when `options` is not an object or has a key
 *   that is not one of its options (code `ERR_RATEWARDEN_UNKNOWN_OPTION`, naming the key and,
 *   when one is close, the option meant), `limiter` is not a RateLimiter or RateLimitGroup, a
 *   function option (`key`, `skip`, `cost`, `onRejected`, `onError`, `requestWasSuccessful`)
 *   is not a function, a header or skip option is not a boolean, `policy` is not a policy or
 *   array of them, `ipv6Subnet` is neither a number nor `false`, `ipv6Subnet` is given with a
 *   `key`, `variable` is not a string, `requestWasSuccessful` is given without a skip option,
 *   or a skip option is set for a limiter without `reserve`.
 * @throws {RateWardenRangeError} (a `RangeError`) when a policy's window is not a positive
 *   finite number of seconds, its name is not printable ASCII, a group gets a different number
 *   of policies than it has limits, `ipv6Subnet` is not an integer from 1 to 128, `variable` is
 *   the empty string, or both `skipSuccessfulRequests` and `skipFailedRequests` are `true`.
 */
export function honoRateLimit(options: HonoRateLimitOptions): MiddlewareHandler<{ Variables: RateLimitVariables }> {
  const config = checkOptions<Context>(options, OPTIONS, clientAddress);
  const onRejected = optionalFunction('onRejected', options.onRejected);
  const variable = optionalLabel('variable', options.variable) ?? DEFAULT_VARIABLE;

  // Requests this middleware decided: mounted on overlapping paths (`app.use('*', m)` and
  // `app.use('/api/*', m)`), it runs twice for one request and must count it once.
  const decided = new WeakSet<Request>();
  return async (c: Context, next: Next) => {
    const raw = c.req.raw;
    if (decided.has(raw)) {
      await next();
      return;
    }
    decided.add(raw);
    const decision = await decide(config, c);
    if (decision === undefined) {
      await next();
      return;
    }
    const { result, headers } = decision;
    c.set(variable, result);
    if (decision.refuse) {
      const response = await sendRejection(rejectionResponse(c, headers), result, onRejected && (() => onRejected(c, result)));
      c.res = response;
      addMissingHeaders(c, headers);
      return c.res;
    }
    if (decision.reservation !== undefined) {
      // skipSuccessfulRequests / skipFailedRequests: settle before returning (edge runtimes may
      // drop work left after the response).
      try {
        await next();
      } catch (error) {
        await settle(config, c, decision, FAILED);
        throw error;
      }
      await settle(config, c, decision, outcomeOf(config, c));
    } else {
      await next();
    }
    addMissingHeaders(c, headers);
  };
}

/**
 * How the request went, for `settle`: failed when the client went away (`signal` aborted) or,
 * with the default predicate, when a handler threw (`c.error`); else `c` itself, for
 * `requestWasSuccessful(c, c)` or the default's status.
 */
function outcomeOf(config: MiddlewareConfig<Context>, c: Context): Outcome<Context> {
  if (c.req.raw.signal.aborted) return FAILED;
  if (c.error !== undefined && config.counting?.successful === undefined) return FAILED;
  return { res: c, status: c.res.status };
}

/** The status codes Hono's `Context` accepts. */
type StatusCode = Parameters<Context['status']>[0];

/**
 * The rejection path's response: built with `c.newResponse` (so headers set earlier in the
 * chain with `c.header()` are kept) from the rate-limit `headers`. The user responded themself
 * when `onRejected` returned a `Response`.
 */
function rejectionResponse(c: Context, headers: Record<string, string>): RejectionResponse<Response> {
  const init = { status: 200 as StatusCode, headers: new Headers(headers) };
  return {
    status(code) {
      init.status = code as StatusCode;
    },
    // A header `onRejected` set with `c.header()` (a `Content-Type`) is the response's too.
    hasHeader: (name) => init.headers.has(name) || c.res.headers.has(name),
    setHeader(name, value) {
      init.headers.set(name, value);
    },
    responded: (returned) => (returned instanceof Response ? returned : undefined),
    send: (body) => c.newResponse(body ?? null, init),
  };
}

/**
 * Adds `headers` to `c.res` where it does not set them already: in place, or, when its headers
 * are immutable (a response of `fetch()`), through `c.header()`, which copies the response. A
 * response that cannot be copied (a `101` upgrade, a body already read) is left as it is.
 */
function addMissingHeaders(c: Context, headers: Record<string, string>): void {
  const missing = Object.keys(headers).filter((name) => !c.res.headers.has(name));
  if (missing.length === 0) return;
  try {
    for (const name of missing) c.res.headers.set(name, headers[name] as string);
    return;
  } catch {
    // Immutable headers: copy the response (below).
  }
  try {
    for (const name of missing) c.header(name, headers[name]);
  } catch {
    // Cannot be copied: sent without the headers.
  }
}

/**
 * The default key's client address: read from what the runtime handed Hono as `c.env` (or,
 * on Cloudflare Workers, the header Cloudflare's edge sets; self-hosted workerd and `wrangler
 * dev` look the same from here but pass a client's own header through, hence the docs' advice
 * to pass `key` there), never from a header a client writes elsewhere.
 * @throws {RateWardenTypeError} naming `key` where the runtime gives no address; naming the
 *   source where a known runtime gave none for this request.
 */
function clientAddress(c: Context): string {
  const runtime = globalThis as { Bun?: unknown; Deno?: unknown; navigator?: { userAgent?: unknown } };
  if (runtime.navigator?.userAgent === 'Cloudflare-Workers') {
    return address(
      'CF-Connecting-IP',
      c.req.header('cf-connecting-ip'),
      "the client address Cloudflare's edge sets (the default `key` on Cloudflare Workers; trustworthy only behind Cloudflare's edge: on self-hosted workerd or `wrangler dev` a client may send its own, so pass `key` there)",
    );
  }
  const env: unknown = c.env;
  if (isObject(env)) {
    // @hono/node-server: `c.env` is `{ incoming, outgoing }` (or holds them as `server`, as
    // its getConnInfo reads).
    const bindings = 'incoming' in env ? env : 'server' in env && isObject(env.server) && 'incoming' in env.server ? env.server : undefined;
    if (bindings !== undefined) {
      const socket = (bindings.incoming as { socket?: { remoteAddress?: unknown } } | undefined)?.socket;
      return address('c.env.incoming.socket.remoteAddress', socket?.remoteAddress, ADDRESS);
    }
    // Bun: `c.env` is the server (or holds it as `server`, as hono/bun's getBunServer reads).
    if (runtime.Bun !== undefined) {
      const server = 'server' in env ? env.server : env;
      if (isObject(server) && 'requestIP' in server && typeof server.requestIP === 'function') {
        const info = (server.requestIP as (request: Request) => { address?: unknown } | null)(c.req.raw);
        return address('server.requestIP(c.req.raw)', info?.address, ADDRESS);
      }
    }
    // Deno.serve: `c.env` is the handler's info.
    if (runtime.Deno !== undefined && 'remoteAddr' in env && isObject(env.remoteAddr)) {
      return address('c.env.remoteAddr.hostname', (env.remoteAddr as { hostname?: unknown }).hostname, ADDRESS);
    }
  }
  throw typeError(
    'key',
    'a function (pass `key`: no trustworthy client address on this runtime; the default key reads it from @hono/node-server, Bun.serve, Deno.serve or Cloudflare Workers only)',
    undefined,
  );
}

/** What a known runtime's address should be. */
const ADDRESS = 'a client IP address (the default `key`; there is none for a closed connection or a Unix socket: pass `key` there)';

/**
 * `value`, when it is a non-empty string.
 * @throws {RateWardenTypeError} naming `source`, which should be `expected`, otherwise.
 */
function address(source: string, value: unknown, expected: string): string {
  if (typeof value !== 'string' || value.length === 0) throw typeError(source, expected, value);
  return value;
}
