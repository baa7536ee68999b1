/**
 * What the framework middleware (`ratewarden/express`, `ratewarden/fastify`, `ratewarden/fetch`,
 * `ratewarden/hono`) share: the options and their validation, the decision (skip, key, cost,
 * limiter, headers), the error policy and the public constants. The 429 response is
 * `rejection.ts`'s.
 *
 * Framework-free and free of `node:` imports, so that `ratewarden/fetch` and `ratewarden/hono`
 * run in workers and edge runtimes. Frameworks are reached through `import type` only.
 *
 * Why one file of about 580 lines (more than half of it TSDoc of the options the five
 * integrations share): one concern, the framework-free decision path — options, their checks,
 * the decision, and its end (`settle`: the refund of a skipped response, issue 22) — which each
 * framework file adapts in a few lines; how a Node response ends is `./response-end.ts`.
 *
 * @module
 */
import { ErrorCode, checkKnownKeys, checkObject, optionalBoolean, optionalFunction, rangeError, typeError, type KnownOptions } from '../errors.js';
import { rateLimitHeaders, type RateLimitPolicy } from '../http-headers.js';
import { checkIpv6Subnet, keyOf } from '../ip-key.js';
import type { RateLimitGroup } from '../rate-limit-group.js';
import type { AnyLimiter } from '../rate-limiter.js';
import type { User } from '../request.js';
import type { RateLimitResult } from '../result.js';

/**
 * The options every middleware shares, with the same names and meaning in each; each
 * framework adds `onRejected` (its own signature) and may default `key`.
 *
 * The functions receive the framework's request (`Req`): an Express `Request`, a
 * `FastifyRequest`, a Fetch `Request` or Hono's `Context`. Each may return a value or a promise
 * of it.
 *
 * **Client IPs behind a proxy.** A key derived from the client address (the default in Express
 * and Fastify) is the address of the TCP peer: behind a load balancer or reverse proxy that is
 * the proxy, so every client would share one limit. Configure the framework to read the
 * forwarded address only from proxies you run — Express's `app.set('trust proxy', …)`, Fastify's
 * `trustProxy` — and never trust `X-Forwarded-For` (or `Forwarded`, `X-Real-IP`) as sent by
 * arbitrary clients: anyone can set it to a fresh value per request and escape the limit.
 * Prefer an authenticated identity (user id, API key) when there is one.
 *
 * Any key that is not an option (of these, or the framework's `onRejected`) is rejected at
 * construction (a `RateWardenTypeError`, code `ERR_RATEWARDEN_UNKNOWN_OPTION`, naming the key and,
 * when one is close, the option meant).
 *
 * @typeParam Req - the framework's request type.
 * @typeParam Res - the framework's response type, as {@link requestWasSuccessful} receives it: an
 *   Express `Response`, a `FastifyReply`, a Fetch `Response` or Hono's `Context` (again).
 */
export interface RateLimitMiddlewareOptions<Req, Res = unknown> {
  /**
   * The limit to enforce: a `RateLimiter`, or a `RateLimitGroup` (several limits, all or
   * nothing). Required.
   */
  readonly limiter: AnyLimiter | RateLimitGroup;
  /**
   * Extracts the key the limit applies to (a user id, an API key, a client IP): a non-empty
   * string or a `User` (`{ id }`), or a promise of one. The limiter validates it: anything else
   * takes the error path (see {@link onError}).
   * @default `ipKey` of the client address, Express `req.ip`, Fastify `request.ip`: the IPv4
   *   address, or the IPv6 network of its first `ipv6Subnet` bits (/64 by default; mind the
   *   proxy caveat above); for `ratewarden/hono`, where the runtime reports the address (see
   *   its `key`); **required** for `ratewarden/fetch`, whose `Request` carries no client address
   *   (`ipKey` is exported there too, for a key built from a platform's address).
   */
  readonly key?: (req: Req) => User | string | PromiseLike<User | string>;
  /**
   * Returns `true` (or a promise of it) to let the request through untouched: no decision, no
   * rate-limit headers. Health checks, internal callers, allow-listed keys.
   * @default never skips
   */
  readonly skip?: (req: Req) => boolean | PromiseLike<boolean>;
  /**
   * How many requests (cost units) this request counts as: a positive safe integer, or a
   * promise of one. A cost above the limit's threshold is rejected without a `Retry-After`
   * (waiting cannot help).
   * @default 1 per request
   */
  readonly cost?: (req: Req) => number | PromiseLike<number>;
  /**
   * The quota policy advertised in `RateLimit-Policy` and `RateLimit` (names, windows in
   * **seconds**). One policy for a `RateLimiter`; an array of one per limit, in member order,
   * for a `RateLimitGroup` (names default to the group's names).
   *
   * For a limiter with tiers (`limitFor`) whose windows differ from the limiter's, pass a
   * function of the request and the decision's result (whose `limit` is the threshold that
   * applied) returning the policy that applied; it is called once per decided request, and
   * what it returns is checked as a fixed policy would be (an error then goes to the framework
   * after the request was decided).
   * @default `{ windowSeconds: limiter.windowSeconds }` (named `"default"`) for a
   *   `RateLimiter`; for a `RateLimitGroup`, each member limiter's window, named by the group.
   */
  readonly policy?: RateLimitPolicy | readonly RateLimitPolicy[] | PolicyFunction<Req>;
  /**
   * `"enforce"` refuses the requests the limit rejects (a 429). `"shadow"` rolls a limit out
   * safely (as Envoy's shadow and Cloudflare's log actions do): every request is decided and
   * recorded as usual (`allowRequest(user, { shadow: true })`), but none is refused: a request
   * the limit rejects proceeds to the route, `onRejected` is never called, the would-be
   * rejection is counted in the limiter's `stats().shadowRejected` (and in `rejected`), and its
   * `decision` listeners get `info.shadow === true`, so that logs and metrics show who would
   * be limited before the limit is enforced. No `Retry-After` is sent in shadow; the
   * `RateLimit` fields only when `standardHeaders` is set to `true` (the legacy `X-RateLimit-*`
   * fields with `legacyHeaders: true`, as when enforcing).
   * @default "enforce"
   */
  readonly mode?: 'enforce' | 'shadow';
  /**
   * Whether to send the IETF `RateLimit-Policy` and `RateLimit` fields, on allowed and rejected
   * responses alike.
   * @default true, or false when `mode` is `"shadow"` (clients are not told of a limit that is
   *   not enforced, unless you ask)
   */
  readonly standardHeaders?: boolean;
  /**
   * Whether to also send the legacy `X-RateLimit-Limit`, `X-RateLimit-Remaining` and
   * `X-RateLimit-Reset` (seconds, not a timestamp).
   * @default false
   */
  readonly legacyHeaders?: boolean;
  /**
   * Called when deciding fails: `key`, `skip` or `cost` throws or rejects, the key or cost is
   * invalid, or the limiter rejects (a store error, a strategy that throws). Return `"allow"`
   * (or a promise of it) to let the request through without rate-limit headers (fail open);
   * return nothing to take the framework's error path:
   *
   * - Express: `next(error)` (your error-handling middleware answers; Express's default is a 500).
   * - Fastify: the hook throws the error (Fastify's error handler answers; a 500 by default).
   * - Fetch: the returned promise rejects with the error (the framework or runtime answers:
   *   a Next.js 500, `Deno.serve`'s `onError`, …).
   * - Hono: the middleware throws the error (Hono's `app.onError` answers; a 500 by default).
   *
   * What `onError` throws takes that error path instead. Not called for errors of the route
   * handler itself, nor of `onRejected`.
   *
   * With {@link skipSuccessfulRequests} or {@link skipFailedRequests}, also called after the
   * response when a refund fails (`reservation.refund()` rejects: a store error; the request
   * then stays counted) or {@link requestWasSuccessful} throws (the response then counts as
   * failed): the response is gone, so what it returns is ignored. Without `onError`, or when it
   * throws, such an error is
   * reported as a process warning (`RateWardenWarning`, code `ERR_RATEWARDEN_REFUND_FAILED`;
   * `console.warn` where there is no `process`): it never crashes the process.
   * @default undefined — every error takes the framework's error path
   */
  // `void` on purpose: a callback that returns nothing (`(req, error) => { log(error); }`) must fit.
  // eslint-disable-next-line @typescript-eslint/no-invalid-void-type
  readonly onError?: (req: Req, error: unknown) => 'allow' | undefined | void | PromiseLike<'allow' | undefined | void>;
  /**
   * Counts only the requests whose response failed: a request whose response turns out
   * successful (see {@link requestWasSuccessful}) is given back to the limit once the response
   * is over, as if it had never been made. For a login or a one-time-code check: at most
   * `threshold` failed attempts per window, successes free.
   *
   * Decide-then-refund: every request is decided and recorded up front (`limiter.reserve`, or
   * `reserve` of a `RateLimitGroup`), so the limit holds under parallel requests (200 wrong
   * passwords sent at once reach the check `threshold` times, not 200); the refund
   * (`reservation.refund()`) follows the response. The rate-limit headers report the state
   * after the decision, before any refund.
   *
   * When is a response failed: see {@link requestWasSuccessful}; a response that is aborted or
   * whose client disconnects before it finished always counts as failed. A refund that fails (a
   * store error) goes to {@link onError} (see there); the request then stays counted.
   *
   * Needs a limiter (or group) with `reserve` (checked at construction) whose strategy can
   * refund: the built-in strategies and the Redis ones can; with a custom strategy or store that
   * cannot, every decision fails with a `TypeError` naming it, which takes the error path (see
   * {@link onError}).
   * @default false — every allowed request counts
   */
  readonly skipSuccessfulRequests?: boolean;
  /**
   * Counts only the requests whose response succeeded: a request whose response failed (see
   * {@link requestWasSuccessful}; aborted responses and clients that disconnect before the
   * response finished count as failed) is given back once the response is over, as
   * {@link skipSuccessfulRequests} does for successes. Not both: `true` for both is a
   * `RangeError` (nothing would ever count).
   * @default false — every allowed request counts
   */
  readonly skipFailedRequests?: boolean;
  /**
   * Whether a response counts as successful, for {@link skipSuccessfulRequests} and
   * {@link skipFailedRequests} (given without either, it is a `TypeError`): called once per
   * allowed request, with the framework's own request and response — Express `(req, res)`,
   * Fastify `(request, reply)`, Fetch `(request, response)` with the handler's `Response` —
   * when the response is over. Only `true` (or a promise of it) is a success.
   *
   * The one rule for errors and aborts (express-rate-limit's):
   *
   * - Express, Fastify (and the NestJS guard): once the response **finished** (Node's `'finish'`
   *   of the underlying `ServerResponse`), this function decides. An error the framework's error
   *   handler answered (`next(err)`, a thrown handler: a 500 by default) is a response like any
   *   other, failed by the default's status. A response **closed without finishing** (the client
   *   disconnected, the connection was destroyed or errored) is failed, without calling it.
   * - Fetch (`withRateLimit`): the handler's `Response` decides, when the handler returns it. A
   *   handler that **throws** or rejects is failed; so is a request whose `signal` aborted (the
   *   client went away, on runtimes that abort it) before the handler returned. The refund is
   *   done before the wrapped handler returns (edge runtimes may drop work left after it).
   *
   * If it throws or rejects, the response counts as failed and the error goes to
   * {@link onError}.
   * @default the status is below 400 (Express `res.statusCode`, Fastify `reply.statusCode`,
   *   Fetch `response.status`)
   */
  readonly requestWasSuccessful?: (req: Req, res: Res) => boolean | PromiseLike<boolean>;
}

/**
 * The option of the middleware whose default key is the client address (`ratewarden/express`,
 * `ratewarden/fastify`, `ratewarden/hono`): how that default key groups IPv6 addresses (see
 * `ipKey`).
 */
export interface ClientAddressKeyOptions {
  /**
   * The default key's IPv6 prefix length: every address of one `/ipv6Subnet` network shares
   * one limit (one home line or server holds a whole /64 and can pick a fresh address per
   * request). An integer from 1 to 128; `128` or `false` limits each IPv6 address on its own.
   * IPv4-mapped addresses (`::ffff:198.51.100.7`) always count as the IPv4 address. The same
   * name and meaning as express-rate-limit 8's option, with the /64 of RFC 6177 as default (it
   * defaults to /56).
   *
   * Applies to the default key only: giving it with your own `key` throws; there, call
   * `ipKey(address, { ipv6Subnet })` yourself.
   * @default 64
   */
  readonly ipv6Subnet?: number | false;
}

/**
 * The names of the rate-limit header fields the middleware may send, in their usual
 * capitalisation. For cross-origin browser clients, list them in CORS
 * `Access-Control-Expose-Headers` (`Object.values(HeaderNames)`), or scripts cannot read them.
 */
export const HeaderNames = {
  /** `RateLimit-Policy`: the quota policies (IETF draft). */
  policy: 'RateLimit-Policy',
  /** `RateLimit`: the remaining quota and reset time of each policy (IETF draft). */
  rateLimit: 'RateLimit',
  /** `Retry-After`: whole seconds to wait, on rejected responses only. */
  retryAfter: 'Retry-After',
  /** `X-RateLimit-Limit` (legacy). */
  legacyLimit: 'X-RateLimit-Limit',
  /** `X-RateLimit-Remaining` (legacy). */
  legacyRemaining: 'X-RateLimit-Remaining',
  /** `X-RateLimit-Reset` (legacy): seconds until the window is clear. */
  legacyReset: 'X-RateLimit-Reset',
} as const;

/**
 * The policy of one decided request, for limits whose window varies per request (tiers):
 * called with the request and the decision's result.
 */
export type PolicyFunction<Req> = (req: Req, result: RateLimitResult) => RateLimitPolicy | readonly RateLimitPolicy[];

/** `Content-Type` of the default 429 body (RFC 9457). */
export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** @internal What {@link decide} needs of a reservation: to give it back. */
export interface Refundable {
  refund(): Promise<boolean>;
}

/** @internal The request options the middleware passes to the limiter. */
type DecideOptions = { cost?: number; shadow?: boolean } | undefined;

/**
 * @internal What the middleware calls on its limiter or group: `allowRequest`, and `reserve`
 * when it counts only some responses ({@link Counting}).
 */
export interface MiddlewareLimiter {
  allowRequest(user: User | string, options?: DecideOptions): Promise<RateLimitResult>;
  reserve?(user: User | string, options?: DecideOptions): Promise<RateLimitResult & Refundable>;
}

/**
 * @internal Which responses give their request back (`skipSuccessfulRequests`,
 * `skipFailedRequests`) and what makes one successful (`requestWasSuccessful`, `undefined`: the
 * status is below 400). `Res` is the framework's response as the predicate receives it.
 */
export interface Counting<Req, Res = unknown> {
  readonly refundSuccessful: boolean;
  readonly refundFailed: boolean;
  readonly successful: ((req: Req, res: Res) => boolean | PromiseLike<boolean>) | undefined;
}

/** @internal Validated options, ready for {@link decide}. */
export interface MiddlewareConfig<Req> {
  readonly limiter: MiddlewareLimiter;
  readonly key: (req: Req) => User | string | PromiseLike<User | string>;
  readonly skip: ((req: Req) => boolean | PromiseLike<boolean>) | undefined;
  readonly cost: ((req: Req) => number | PromiseLike<number>) | undefined;
  readonly policy: RateLimitPolicy | readonly RateLimitPolicy[] | PolicyFunction<Req>;
  readonly standard: boolean;
  readonly legacy: boolean;
  readonly onError: RateLimitMiddlewareOptions<Req>['onError'];
  /** `mode: 'shadow'`: decide with `{ shadow: true }`, never refuse. */
  readonly shadow: boolean;
  /**
   * Set with `skipSuccessfulRequests` or `skipFailedRequests`: decide with `reserve` and
   * {@link settle} each allowed request once its response is over. `undefined`: `allowRequest`,
   * nothing to settle.
   */
  readonly counting: Counting<Req> | undefined;
}

/**
 * @internal The keys of {@link RateLimitMiddlewareOptions}, which each framework's list of
 * known options spreads (checked against the interface).
 */
export const SHARED_OPTIONS = {
  limiter: true,
  key: true,
  skip: true,
  cost: true,
  policy: true,
  mode: true,
  standardHeaders: true,
  legacyHeaders: true,
  onError: true,
  skipSuccessfulRequests: true,
  skipFailedRequests: true,
  requestWasSuccessful: true,
} as const satisfies Record<keyof RateLimitMiddlewareOptions<unknown>, true>;

/**
 * @internal Validates the shared options. `known` are the keys of the framework's options (the
 * shared ones, `onRejected`, and `ipv6Subnet` where the framework has a client address);
 * `clientAddress` reads the framework's client address (the default key is then `ipKey` of it,
 * under the `ipv6Subnet` option), or is a string explaining why `key` is required.
 * @throws {RateWardenTypeError} for an unknown key (code `ERR_RATEWARDEN_UNKNOWN_OPTION`), an
 *   option of the wrong type, a missing `limiter`, a missing required `key` or `policy`, or
 *   `ipv6Subnet` given with a `key`.
 * @throws {RateWardenRangeError} for a policy with a bad window or name, the wrong number of
 *   policies, or an `ipv6Subnet` out of range.
 */
export function checkOptions<Req>(
  options: RateLimitMiddlewareOptions<Req, never> & ClientAddressKeyOptions,
  known: KnownOptions,
  clientAddress: ((req: Req) => string) | string,
): MiddlewareConfig<Req> {
  checkObject('options', options, 'an object with a `limiter`');
  checkKnownKeys(options, known);
  const limiter = options.limiter as unknown;
  if (
    limiter === null ||
    typeof limiter !== 'object' ||
    typeof (limiter as { allowRequest?: unknown }).allowRequest !== 'function'
  ) {
    throw typeError('limiter', 'a RateLimiter or a RateLimitGroup', limiter);
  }
  let key = options.key;
  if (key === undefined) {
    if (typeof clientAddress === 'string') throw typeError('key', `a function (${clientAddress})`, key);
    const prefix = checkIpv6Subnet('ipv6Subnet', options.ipv6Subnet);
    key = (req) => keyOf(clientAddress(req), prefix);
  } else if (typeof key !== 'function') {
    throw typeError('key', 'a function', key);
  } else if (typeof clientAddress !== 'string' && options.ipv6Subnet !== undefined) {
    throw typeError(
      'ipv6Subnet',
      'undefined when `key` is given (it shapes the default key only; call `ipKey(address, { ipv6Subnet })` in your `key`)',
      options.ipv6Subnet,
    );
  }
  const skip = optionalFunction('skip', options.skip);
  const cost = optionalFunction('cost', options.cost);
  const onError = optionalFunction('onError', options.onError);
  const mode: unknown = options.mode;
  if (mode !== undefined && mode !== 'enforce' && mode !== 'shadow') {
    if (typeof mode !== 'string') throw typeError('mode', "'enforce', 'shadow' or undefined", mode);
    throw rangeError('mode', "'enforce', 'shadow' or undefined", mode);
  }
  const shadow = mode === 'shadow';
  const standard = optionalBoolean('standardHeaders', options.standardHeaders, !shadow);
  const legacy = optionalBoolean('legacyHeaders', options.legacyHeaders, false);
  const counting = checkCounting<Req>(options, limiter);

  // A group has `names`; a limiter a `windowSeconds`.
  const names = (limiter as { names?: unknown }).names;
  const group = Array.isArray(names) ? (names as readonly string[]) : undefined;
  const windowSeconds = (limiter as { windowSeconds?: unknown }).windowSeconds;
  if (group === undefined && typeof windowSeconds !== 'number') {
    throw typeError('limiter', 'a RateLimiter or a RateLimitGroup', limiter);
  }
  let policy = options.policy;
  if (policy === undefined) {
    policy =
      group !== undefined
        ? (limiter as RateLimitGroup).limiters.map((member) => ({ windowSeconds: member.windowSeconds }))
        : { windowSeconds: windowSeconds as number };
  }
  // rateLimitHeaders validates policies (types, windows, names, count) with the library's
  // messages: run it once now on a neutral result of the same shape, so that a bad policy
  // throws at construction rather than on the first request. (A function's policies are
  // checked when it returns them.)
  if (typeof policy !== 'function') rateLimitHeaders(sampleResult(group), { policy });
  return {
    limiter: limiter as MiddlewareConfig<Req>['limiter'],
    key,
    skip,
    cost,
    policy,
    standard,
    legacy,
    onError,
    shadow,
    counting,
  };
}

/**
 * The counting options: `undefined` when neither `skipSuccessfulRequests` nor
 * `skipFailedRequests` is `true` (every allowed request counts; `allowRequest` decides).
 * @throws {RateWardenTypeError} when a skip option is not a boolean, `requestWasSuccessful` is
 *   not a function or is given without a skip option, or the limiter has no `reserve`.
 * @throws {RateWardenRangeError} when both skip options are `true`.
 */
function checkCounting<Req>(options: RateLimitMiddlewareOptions<Req, never>, limiter: object): Counting<Req> | undefined {
  const refundSuccessful = optionalBoolean('skipSuccessfulRequests', options.skipSuccessfulRequests, false);
  const refundFailed = optionalBoolean('skipFailedRequests', options.skipFailedRequests, false);
  const successful = optionalFunction('requestWasSuccessful', options.requestWasSuccessful) as Counting<Req>['successful'];
  if (refundSuccessful && refundFailed) {
    throw rangeError(
      'skipFailedRequests',
      'false when `skipSuccessfulRequests` is true (every response would be given back: nothing would ever count)',
      refundFailed,
    );
  }
  if (!refundSuccessful && !refundFailed) {
    if (successful !== undefined) {
      throw typeError(
        'requestWasSuccessful',
        'undefined unless `skipSuccessfulRequests` or `skipFailedRequests` is true (it only decides which requests are given back)',
        successful,
      );
    }
    return undefined;
  }
  if (typeof (limiter as { reserve?: unknown }).reserve !== 'function') {
    throw typeError(
      refundSuccessful ? 'skipSuccessfulRequests' : 'skipFailedRequests',
      'false with a limiter that cannot `reserve` (counting only some responses gives requests back)',
      true,
    );
  }
  return { refundSuccessful, refundFailed, successful };
}


/** A result of the shape the limiter returns: a group result when `names` is given. */
function sampleResult(names: readonly string[] | undefined): RateLimitResult {
  const one: RateLimitResult = { allowed: true, remaining: 1, retryAfter: 0, limit: 1, resetAfter: 0 };
  if (names === undefined) return one;
  return { ...one, results: names.map(() => one), names, binding: 0 } as RateLimitResult;
}

/**
 * @internal A decision: the result, the header fields to send with the response, and whether
 * to refuse the request (rejected, and not in shadow).
 */
export interface Decision {
  readonly result: RateLimitResult;
  readonly headers: Record<string, string>;
  readonly refuse: boolean;
  /**
   * The allowed request's reservation, to {@link settle} once the response is over: set only
   * when the config counts some responses only (`counting`) and the request was allowed.
   */
  readonly reservation: Refundable | undefined;
}

/** The options of a shadow decision of cost 1. */
const SHADOW = { shadow: true } as const;

/**
 * @internal Decides one request: `undefined` to let it through untouched (skipped, or
 * `onError` returned `"allow"`).
 * @throws what deciding threw, unless `onError` allowed the request; what `onError` throws.
 */
export async function decide<Req>(config: MiddlewareConfig<Req>, req: Req): Promise<Decision | undefined> {
  let result: RateLimitResult;
  let reservation: Refundable | undefined;
  try {
    // Only a real `true` skips (a JavaScript hook returning a truthy non-boolean does not).
    const skipped: unknown = config.skip === undefined ? false : await config.skip(req);
    if (skipped === true) return undefined;
    const user = await config.key(req);
    const cost = config.cost === undefined ? undefined : await config.cost(req);
    const options = config.shadow ? (cost === undefined ? SHADOW : { cost, shadow: true }) : cost === undefined ? undefined : { cost };
    if (config.counting === undefined) {
      result = await config.limiter.allowRequest(user, options);
    } else {
      // checkOptions made sure `reserve` is there.
      const reserved = await (config.limiter.reserve as NonNullable<MiddlewareLimiter['reserve']>)(user, options);
      result = reserved;
      // A refused decision recorded nothing: nothing to give back.
      if (reserved.allowed) reservation = reserved;
    }
  } catch (error) {
    if (config.onError !== undefined && (await config.onError(req, error)) === 'allow') return undefined;
    throw error;
  }
  const policy = typeof config.policy === 'function' ? config.policy(req, result) : config.policy;
  const headers = rateLimitHeaders(result, { policy, standard: config.standard, legacy: config.legacy });
  // In shadow, the request goes on: no wait to announce.
  if (config.shadow) delete headers['Retry-After'];
  return { result, headers, refuse: !result.allowed && !config.shadow, reservation };
}

/**
 * @internal What the response of an allowed request turned out to be, for {@link settle}: it
 * finished (`res` for `requestWasSuccessful`, `status` for the default), or {@link FAILED}.
 */
export type Outcome<Res> = { readonly res: Res; readonly status: number } | typeof FAILED;

/**
 * @internal The outcome of a response that did not finish: aborted, its client disconnected,
 * its handler threw (Fetch). Counts as failed without asking `requestWasSuccessful`.
 */
export const FAILED = 'failed';

/** The `code` of the warning of an error after the response, when `onError` cannot take it. */
export const REFUND_FAILED = ErrorCode.RefundFailed;

/**
 * @internal Settles an allowed request once its response is over: decides whether it was
 * successful (the `requestWasSuccessful` option, the status below 400 by default, or
 * {@link FAILED}) and gives it back (`reservation.refund()`) when the config skips such
 * requests. Nothing to do without a reservation.
 *
 * With the default predicate (or a failed outcome) the refund is called synchronously, before
 * the first `await`: it is under way when the event that settled the request is over.
 *
 * @returns a promise that resolves once the refund is done; it never rejects: an error of the
 *   predicate or the refund goes to {@link reportAfterResponse}.
 */
export async function settle<Req, Res>(
  config: MiddlewareConfig<Req>,
  req: Req,
  decision: Decision,
  outcome: Outcome<Res>,
): Promise<void> {
  const { counting } = config;
  const { reservation } = decision;
  if (counting === undefined || reservation === undefined) return;
  let successful: boolean;
  if (outcome === FAILED) {
    successful = false;
  } else if (counting.successful === undefined) {
    successful = outcome.status < 400;
  } else {
    try {
      // Only a real `true` is a success (as only a real `true` skips).
      const verdict: unknown = await counting.successful(req, outcome.res);
      successful = verdict === true;
    } catch (error) {
      await reportAfterResponse(config, req, error);
      successful = false;
    }
  }
  if (successful ? !counting.refundSuccessful : !counting.refundFailed) return;
  try {
    await reservation.refund();
  } catch (error) {
    await reportAfterResponse(config, req, error);
  }
}

/**
 * An error after the response (a refund that rejected, a `requestWasSuccessful` that threw):
 * to `onError` (what it returns is ignored: the response is gone), else, or when `onError`
 * throws too, a `RateWardenWarning` ({@link REFUND_FAILED}). Never throws or rejects.
 */
async function reportAfterResponse<Req>(config: MiddlewareConfig<Req>, req: Req, error: unknown): Promise<void> {
  if (config.onError !== undefined) {
    try {
      await config.onError(req, error);
      return;
    } catch (failure) {
      error = failure;
    }
  }
  const message = `ratewarden: an error after the response, deciding whether to give the request back (skipSuccessfulRequests / skipFailedRequests), and no onError to take it: ${
    error instanceof Error ? error.message : String(error)
  }`;
  const process = (globalThis as { process?: { emitWarning?: (message: string, options: object) => void } }).process;
  if (typeof process?.emitWarning === 'function') process.emitWarning(message, { type: 'RateWardenWarning', code: REFUND_FAILED });
  else console.warn(`${message} (${REFUND_FAILED})`);
}
