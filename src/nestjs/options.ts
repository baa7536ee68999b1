/**
 * The options of `RateWardenModule` and their validation: named limits, and the shared
 * middleware options of `src/middleware/common.ts` (checked there, by `checkOptions`, so that
 * they mean what they mean in `ratewarden/express` and `ratewarden/fastify`), each function
 * given the request and Nest's `ExecutionContext`.
 *
 * Compiled once, when the module's providers are built; each route's set of limits then gets
 * its own `MiddlewareConfig` (a `RateLimitGroup` of those limits and their policies), built on
 * first use and kept.
 *
 * @module
 */
import type { ExecutionContext } from '@nestjs/common';
import { deciderOf } from '../decider.js';
import { checkKnownKeys, checkObject, isObject, knownOptions, typeError } from '../errors.js';
import type { RateLimitPolicy } from '../http-headers.js';
import {
  SHARED_OPTIONS,
  checkOptions,
  type ClientAddressKeyOptions,
  type MiddlewareConfig,
  type RateLimitMiddlewareOptions,
} from '../middleware/common.js';
import { RateLimitGroup, type GroupMember } from '../rate-limit-group.js';
import type { AnyLimiter } from '../rate-limiter.js';
import type { User } from '../request.js';
import type { RateLimitResult } from '../result.js';

/**
 * One named limit given with a key of its own: the limiter, and how the request's key maps to
 * this limit's key (as a `RateLimitGroup` member's `key`): `() => 'global'` for one limit shared
 * by every client, `(user) => tenantOf(user)` for a limit per tenant.
 */
export interface RateWardenLimit {
  /** The limiter enforcing this limit. */
  readonly limiter: AnyLimiter;
  /**
   * Maps the request's key (what the `key` option returned) to this limit's key.
   * @default the request's key as it is
   */
  readonly key?: (user: User | string) => User | string;
}

/**
 * Options of `RateWardenModule.forRoot` (and what `forRootAsync`'s `useFactory` returns).
 *
 * The functions receive the platform's request (`Req`: an Express `Request` under
 * `@nestjs/platform-express`, a `FastifyRequest` under `@nestjs/platform-fastify`; annotate it)
 * and the guard's `ExecutionContext` (for `context.getHandler()`, `context.getClass()` and
 * metadata of your own). Each may return a value or a promise of it.
 *
 * Any key that is not an option is rejected (a `RateWardenTypeError`, code
 * `ERR_RATEWARDEN_UNKNOWN_OPTION`, naming the key and, when one is close, the option meant).
 *
 * @typeParam Req - the platform's request type.
 * @typeParam Res - the platform's response type, as `requestWasSuccessful` receives it: an
 *   Express `Response` under `@nestjs/platform-express`, a `FastifyReply` under
 *   `@nestjs/platform-fastify`.
 */
export interface RateWardenModuleOptions<Req = unknown, Res = unknown> extends ClientAddressKeyOptions {
  /**
   * The limits, by name: a `RateLimiter`, or a {@link RateWardenLimit} for a limit on another
   * key. At least one. A route decides the limits that apply to it (see {@link defaultLimits}
   * and `@RateLimit(...names)`) as one `RateLimitGroup`, all or nothing: refused by one, the
   * request is recorded by none. The names are the policy names of the `RateLimit` and
   * `RateLimit-Policy` header fields: printable ASCII.
   *
   * A limiter keeps one budget per key wherever it applies: two routes under the same named
   * limit share a client's budget (unlike `@nestjs/throttler`, which counts per route). For a
   * budget per route, register a limiter per route, or put the route in the key.
   */
  readonly limits: Readonly<Record<string, AnyLimiter | RateWardenLimit>>;
  /**
   * The names of the limits that apply to a route without `@RateLimit(...)` (on it or on its
   * controller), in the order the headers list them.
   * @default every name of {@link limits}, in their order
   */
  readonly defaultLimits?: readonly string[];
  /**
   * Extracts the key the limits apply to (a user id, an API key, a client IP): a non-empty
   * string or a `User` (`{ id }`), or a promise of one.
   * @default `ipKey(req.ip, { ipv6Subnet })`: the IPv4 address, or the IPv6 network of its first
   *   `ipv6Subnet` bits (/64 by default). Behind a proxy, `req.ip` is the proxy's address unless
   *   the platform trusts it (Express's `trust proxy` setting, Fastify's `trustProxy` option):
   *   trust only proxies you run.
   */
  readonly key?: (req: Req, context: ExecutionContext) => User | string | PromiseLike<User | string>;
  /**
   * Returns `true` (or a promise of it) to let the request through untouched: no decision, no
   * rate-limit headers. For a whole route or controller, use `@SkipRateLimit()`.
   * @default never skips
   */
  readonly skip?: (req: Req, context: ExecutionContext) => boolean | PromiseLike<boolean>;
  /**
   * How many requests (cost units) this request counts as, in every limit that applies: a
   * positive safe integer, or a promise of one.
   * @default 1 per request
   */
  readonly cost?: (req: Req, context: ExecutionContext) => number | PromiseLike<number>;
  /**
   * The policies advertised in `RateLimit-Policy` and `RateLimit`, for limiters with tiers
   * (`limitFor`) whose windows differ from the limiter's: called once per decided request with
   * the decision's result (a `GroupResult`, one result per limit of the route), it returns one
   * policy per limit, in that order (names default to the limits' names).
   * @default each limit's name and its limiter's `windowSeconds`
   */
  readonly policy?: (
    req: Req,
    result: RateLimitResult,
    context: ExecutionContext,
  ) => RateLimitPolicy | readonly RateLimitPolicy[];
  /**
   * `"enforce"` refuses the requests a route's limits reject (a 429 `RateLimitExceededException`;
   * 503 when a store failure refused the request).
   * `"shadow"` rolls limits out safely: every request is decided and recorded as usual
   * (`allowRequest(user, { shadow: true })` on the route's group), but none is refused: the
   * route handler runs, the would-be rejection is counted in each rejecting limiter's
   * `stats().shadowRejected` (and in `rejected`) and reaches its `decision` listeners with
   * `info.shadow === true`. No `Retry-After` is sent in shadow; the `RateLimit` fields only when
   * `standardHeaders` (or `legacyHeaders`) is set to `true`. The same option as the other
   * middlewares'.
   * @default "enforce"
   */
  readonly mode?: 'enforce' | 'shadow';
  /**
   * Whether to send the IETF `RateLimit-Policy` and `RateLimit` fields, on allowed and refused
   * requests alike.
   * @default true, or false when `mode` is `"shadow"`
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
   * invalid, or a limiter rejects (a store error). Return `"allow"` (or a promise of it) to let
   * the request through without rate-limit headers (fail open); return nothing to let the guard
   * throw the error, which Nest's exception filters then handle (a 500 by default). What
   * `onError` throws is thrown instead.
   * @default undefined — every error is thrown from the guard
   */
  readonly onError?: (
    req: Req,
    error: unknown,
    context: ExecutionContext,
  ) => 'allow' | undefined | void | PromiseLike<'allow' | undefined | void>; // eslint-disable-line @typescript-eslint/no-invalid-void-type -- a callback that returns nothing must fit
  /**
   * Counts only the requests whose response failed, in every limit of the route: a request
   * whose response turns out successful (see {@link requestWasSuccessful}) is given back once
   * the response is over. Decide-then-refund, as in the other middlewares: the guard decides
   * with the route group's `reserve` (so the limit holds under parallel requests; the headers
   * report the state after the decision) and, once the platform's underlying response (Express
   * `res`, Fastify `reply.raw`) is over, calls `refund()` when the response is of the kind
   * skipped. A refund that fails goes to `onError` (its return value ignored; a
   * `RateWardenWarning`, code `ERR_RATEWARDEN_REFUND_FAILED`, without it) and the request stays
   * counted.
   * @default false — every allowed request counts
   */
  readonly skipSuccessfulRequests?: boolean;
  /**
   * Counts only the requests whose response succeeded: a failed one (see
   * {@link requestWasSuccessful}) is given back once the response is over. Not with
   * `skipSuccessfulRequests` (a `RangeError`).
   * @default false — every allowed request counts
   */
  readonly skipFailedRequests?: boolean;
  /**
   * Whether a response counts as successful, for `skipSuccessfulRequests` and
   * `skipFailedRequests` (a `TypeError` without either): called once the response **finished**
   * (the underlying `ServerResponse`'s `'finish'`) with the platform's request and response
   * (Express `req` and `res`, Fastify `request` and `reply`) and the guard's `ExecutionContext`.
   * Only `true` (or a promise of it) is a success. A handler that throws is answered by Nest's
   * exception filters: that response (a 500 by default) is judged like any other. A response
   * **closed without finishing** (the client disconnected) is failed, without calling it. If
   * it throws or rejects, the response counts as failed and the error goes to `onError`.
   * @default the status sent is below 400
   */
  readonly requestWasSuccessful?: (req: Req, res: Res, context: ExecutionContext) => boolean | PromiseLike<boolean>;
}

/** The keys of {@link RateWardenModuleOptions}: any other is rejected. */
const OPTIONS = knownOptions('RateWardenModule options', {
  limits: true,
  defaultLimits: true,
  ...withoutLimiter(SHARED_OPTIONS),
  ipv6Subnet: true,
} satisfies Record<keyof RateWardenModuleOptions, true>);

/** The shared options as `checkOptions` knows them, under the name this module's messages use. */
const SHARED = knownOptions('RateWardenModule options', { ...SHARED_OPTIONS, ipv6Subnet: true });

/** The keys of {@link RateWardenLimit}: any other is rejected. */
const LIMIT_OPTIONS = knownOptions('a RateWardenModule limit', {
  limiter: true,
  key: true,
} satisfies Record<keyof RateWardenLimit, true>);

/** `SHARED_OPTIONS` less `limiter` (the module takes named `limits`). */
function withoutLimiter<T extends { limiter: true }>(keys: T): Omit<T, 'limiter'> {
  const { limiter: _limiter, ...rest } = keys;
  return rest;
}

/** The platform's request of an HTTP execution context. */
function requestOf(context: ExecutionContext): unknown {
  return context.switchToHttp().getRequest<unknown>();
}

/** The default key's client address: `req.ip`, as Express and Fastify both name it. */
function clientAddress(context: ExecutionContext): string {
  const ip = (requestOf(context) as { ip?: unknown } | undefined)?.ip;
  if (typeof ip !== 'string' || ip.length === 0) {
    throw typeError('req.ip', 'a client address (the default `key`; the connection may be closed)', ip);
  }
  return ip;
}

/**
 * @internal The compiled options: the limits by name and each route's decision config, built on
 * first use and kept (the guard asks with the names `@RateLimit` gave, or `undefined`).
 */
export class CompiledOptions {
  /** The limits, by name, as group members. */
  readonly #members: ReadonlyMap<string, GroupMember>;
  /** The names of a route without `@RateLimit`. */
  readonly defaultNames: readonly string[];
  /** The shared options, validated by `checkOptions`, as functions of the execution context. */
  readonly #base: MiddlewareConfig<ExecutionContext>;
  /** The user's policy function, as a function of the context, if any. */
  readonly #policy: MiddlewareConfig<ExecutionContext>['policy'] | undefined;
  /**
   * Whether the key is the default (the client address): the guard then checks, on its first
   * request, that the platform does not trust every proxy hop.
   */
  readonly defaultKey: boolean;
  /** The config of each set of names met so far, by the names joined with NUL. */
  readonly #routes = new Map<string, MiddlewareConfig<ExecutionContext>>();

  /** @internal Use {@link compileOptions}. */
  constructor(
    members: ReadonlyMap<string, GroupMember>,
    defaultNames: readonly string[],
    base: MiddlewareConfig<ExecutionContext>,
    policy: MiddlewareConfig<ExecutionContext>['policy'] | undefined,
    defaultKey: boolean,
  ) {
    this.defaultKey = defaultKey;
    this.#members = members;
    this.defaultNames = defaultNames;
    this.#base = base;
    this.#policy = policy;
  }

  /**
   * Checks that every name of a list is a limit of `limits`.
   * @param label - how the message names the list (`` `@RateLimit(…)` of UsersController.create ``).
   * @throws {RateWardenTypeError} naming the list and the first unknown name.
   */
  checkNames(names: readonly string[], label: string): void {
    for (const name of names) {
      if (!this.#members.has(name)) {
        throw typeError(
          label,
          `names of \`limits\` (${[...this.#members.keys()].map((n) => JSON.stringify(n)).join(', ')})`,
          name,
        );
      }
    }
  }

  /**
   * The decision config of a route whose limits are `names` (`undefined`: the default limits).
   * @throws {RateWardenTypeError} when a name is not one of `limits`.
   */
  configFor(names: readonly string[] | undefined, label: () => string): MiddlewareConfig<ExecutionContext> {
    const list = names ?? this.defaultNames;
    const id = list.join('\0');
    let config = this.#routes.get(id);
    if (config === undefined) {
      this.checkNames(list, label());
      const members = list.map((name) => ({ ...(this.#members.get(name) as GroupMember), name }));
      const limiter = new RateLimitGroup(members);
      const policy = this.#policy ?? members.map((m) => ({ name: m.name, windowSeconds: m.limiter.windowSeconds }));
      config = { ...this.#base, limiter, policy };
      this.#routes.set(id, config);
    }
    return config;
  }
}

/**
 * @internal Validates the module's options once, at module initialisation.
 * @throws {RateWardenTypeError} (a `TypeError`) when `options` is not an object or has a key
 *   that is not one of its options (code `ERR_RATEWARDEN_UNKNOWN_OPTION`), `limits` is not an
 *   object of limiters or {@link RateWardenLimit}s, has no limit, or a limit has an unknown key;
 *   `defaultLimits` is not an array of names of `limits` (or lists one twice, or none); a
 *   function option is not a function; a header option is not a boolean; `mode` is not a string;
 *   `ipv6Subnet` is neither
 *   a number nor `false`, or is given with a `key`.
 * @throws {RateWardenRangeError} (a `RangeError`) when a limit's name is not printable ASCII,
 *   `mode` is a string other than `"enforce"` and `"shadow"`, or `ipv6Subnet` is not an integer
 *   from 1 to 128.
 */
export function compileOptions(options: RateWardenModuleOptions<unknown>): CompiledOptions {
  checkObject('options', options, 'an object with `limits`');
  checkKnownKeys(options, OPTIONS);
  const { limits, defaultLimits, policy, key, skip, cost, onError, requestWasSuccessful, ...rest } = options;
  if (!isObject(limits) || Array.isArray(limits)) {
    throw typeError('limits', 'an object of named limits ({ name: RateLimiter, … })', limits);
  }
  const members = new Map<string, GroupMember>();
  for (const name of Object.keys(limits)) {
    members.set(name, checkLimit(name, (limits as Record<string, unknown>)[name]));
  }
  if (members.size === 0) throw typeError('limits', 'an object with at least one named limit', limits);
  const defaultNames = defaultLimits === undefined ? [...members.keys()] : checkNameList('defaultLimits', defaultLimits);
  if (policy !== undefined && typeof policy !== 'function') {
    throw typeError('policy', "a function of (req, result, context) returning each limit's policy, or undefined", policy);
  }
  // Every limit in one group: the group checks each limiter and member, checkOptions the
  // shared options and the names (as policy names, printable ASCII), with the library's messages.
  const everything = new RateLimitGroup([...members.values()]);
  const base = checkOptions<ExecutionContext>(
    { ...rest, limiter: everything, key, skip, cost, onError, requestWasSuccessful } as RateLimitMiddlewareOptions<ExecutionContext> & ClientAddressKeyOptions,
    SHARED,
    clientAddress,
  );
  const compiled = new CompiledOptions(
    members,
    defaultNames,
    {
      ...base,
      // Checked as functions by checkOptions; called with the request and the context.
      key: key === undefined ? base.key : (context) => key(requestOf(context), context),
      skip: skip && ((context) => skip(requestOf(context), context)),
      cost: cost && ((context) => cost(requestOf(context), context)),
      onError: onError && ((context, error) => onError(requestOf(context), error, context)),
      counting: base.counting && {
        ...base.counting,
        successful: requestWasSuccessful && ((context, res) => requestWasSuccessful(requestOf(context), res, context)),
      },
    },
    policy && ((context: ExecutionContext, result: RateLimitResult) => policy(requestOf(context), result, context)),
    key === undefined,
  );
  compiled.checkNames(defaultNames, 'defaultLimits');
  return compiled;
}

/**
 * One entry of `limits`: a limiter, or a {@link RateWardenLimit}, as a group member.
 * @throws {RateWardenTypeError} naming `limits["name"]`.
 */
function checkLimit(name: string, entry: unknown): GroupMember {
  const where = `limits[${JSON.stringify(name)}]`;
  if (deciderOf(entry) !== undefined) return { limiter: entry as AnyLimiter, name };
  if (!isObject(entry) || deciderOf((entry as { limiter?: unknown }).limiter) === undefined) {
    throw typeError(where, 'a RateLimiter or { limiter: RateLimiter, key? }', entry);
  }
  checkKnownKeys(entry, LIMIT_OPTIONS, where);
  const { limiter, key } = entry as RateWardenLimit;
  if (key !== undefined && typeof key !== 'function') throw typeError(`${where}.key`, 'a function or undefined', key);
  return key === undefined ? { limiter, name } : { limiter, key, name };
}

/**
 * @internal Checks a list of limit names (of `@RateLimit` or `defaultLimits`): a non-empty
 * array of distinct strings; a copy.
 * @throws {RateWardenTypeError} naming `what`.
 */
export function checkNameList(what: string, names: unknown): readonly string[] {
  if (!Array.isArray(names) || names.length === 0) throw typeError(what, 'a non-empty array of limit names', names);
  const seen = new Set<string>();
  for (const [i, name] of (names as unknown[]).entries()) {
    if (typeof name !== 'string') throw typeError(`${what}[${i}]`, 'a limit name (a string)', name);
    if (seen.has(name)) throw typeError(`${what}[${i}]`, 'a name not listed before', name);
    seen.add(name);
  }
  return [...seen];
}
