/**
 * The rejection path the framework middleware (`ratewarden/express`, `ratewarden/fastify`,
 * `ratewarden/fetch`, `ratewarden/hono`) share: the status (429, or 503 when a store failure
 * refused the request), the user's `onRejected` or the default RFC 9457 problem body, the
 * encoding of what `onRejected` returned, the `Content-Type` (only where none is set) and the
 * send. Each framework reaches its own response through a {@link RejectionResponse}.
 *
 * Framework-free and free of `node:` imports, so that `ratewarden/fetch` and `ratewarden/hono`
 * run in workers and edge runtimes.
 *
 * @module
 */
import { rateLimitProblem, refusedByStoreFailure } from '../http-headers.js';
import type { RateLimitResult } from '../result.js';
import { PROBLEM_CONTENT_TYPE } from './common.js';

/**
 * @internal What the rejection path needs of one framework's response: each member a line or
 * two in the framework's file. `Out` is what the middleware ends with once the request is
 * answered: Express's `res`, Fastify's `reply`, a Fetch (or Hono's) `Response`.
 */
export interface RejectionResponse<Out> {
  /** Sets the status code (429 or 503). Called first, before `onRejected`, which sees it. */
  status(code: number): void;
  /** Whether a header field is already set, by name in any case (`Content-Type`). */
  hasHeader(name: string): boolean;
  /** Sets a header field (`Content-Type`), by name in any case. */
  setHeader(name: string, value: string): void;
  /**
   * Whether the user responded themself, judged from what `onRejected` returned (after it
   * settled) and the response's state: what to end with if so, `undefined` if not (then the
   * returned value is encoded and sent as the body).
   */
  responded(returned: unknown): Out | undefined;
  /** Sends the response with `body` (no body when `undefined`); returns what to end with. */
  send(body: string | undefined): Out;
}

/**
 * @internal Answers a rejected request through `response`:
 *
 * 1. sets the status: **429** (Too Many Requests) when the client exceeded a limit; **503**
 *    (Service Unavailable) when the request was refused only because a limit's store could not
 *    be reached (a `degraded: "fail-closed"` result, or a group's whose refusing limits all
 *    failed closed; see `rateLimitProblem`), so that clients and monitoring tell an outage of
 *    the store from a client over its limit (`Retry-After` is set by the headers either way);
 * 2. without `onRejected`, takes the default body: an RFC 9457 problem
 *    (`rateLimitProblem(result)`: "Too Many Requests", or "Rate limit store unavailable" for a
 *    503) as `application/problem+json`;
 * 3. otherwise awaits `onRejected()`; when `response.responded(returned)` says the user
 *    responded themself, ends with what it returned and sends nothing; else encodes `returned`
 *    (see {@link encodeBody});
 * 4. sets that body's `Content-Type` unless one is set already (by `onRejected`, or earlier);
 * 5. sends the body (none for `undefined` or `null`).
 *
 * @param response - the framework's response, adapted.
 * @param result - the rejected decision (`allowed: false`).
 * @param onRejected - the user's hook, bound to the request (and response); `undefined` for the
 *   default body.
 * @returns a promise of what `response.responded` or `response.send` returned; a thenable one
 *   (Fastify's `reply`) is followed, so the promise settles once the reply is sent.
 * @throws nothing synchronously; the promise rejects with what `onRejected` throws or rejects
 *   with, with nothing sent.
 */
export async function sendRejection<Out>(
  response: RejectionResponse<Out>,
  result: RateLimitResult,
  onRejected: (() => unknown) | undefined,
): Promise<Awaited<Out>> {
  response.status(refusedByStoreFailure(result) ? 503 : 429);
  let encoded: EncodedBody;
  if (onRejected === undefined) {
    encoded = problemBody(result);
  } else {
    const returned = await onRejected();
    const own = response.responded(returned);
    // An async function follows a thenable it returns (Fastify's reply settles once sent, to
    // `undefined`): what the promise resolves to is `Awaited<Out>`.
    if (own !== undefined) return own as Awaited<Out>;
    encoded = encodeBody(returned);
  }
  if (encoded.contentType !== undefined && !response.hasHeader('Content-Type')) {
    response.setHeader('Content-Type', encoded.contentType);
  }
  return response.send(encoded.body) as Awaited<Out>;
}

/** @internal A body ready to send: its text and `Content-Type`, or no body. */
export interface EncodedBody {
  readonly body: string | undefined;
  readonly contentType: string | undefined;
}

/** @internal The default body of a refusal (429 or 503): an RFC 9457 problem, as `application/problem+json`. */
export function problemBody(result: RateLimitResult): EncodedBody {
  return { body: JSON.stringify(rateLimitProblem(result)), contentType: PROBLEM_CONTENT_TYPE };
}

/**
 * @internal Encodes what `onRejected` returned: `undefined` or `null` → no body; a string →
 * `text/plain; charset=utf-8`; anything else → JSON (`application/json`), but no body for what
 * JSON cannot encode (a symbol, a function).
 * @throws what `JSON.stringify` throws (a `TypeError` for a cycle or a `BigInt`).
 */
export function encodeBody(value: unknown): EncodedBody {
  if (value === undefined || value === null) return { body: undefined, contentType: undefined };
  if (typeof value === 'string') return { body: value, contentType: 'text/plain; charset=utf-8' };
  // JSON has no encoding of a symbol or a function (JSON.stringify returns undefined): no body.
  const json = JSON.stringify(value) as string | undefined;
  if (json === undefined) return { body: undefined, contentType: undefined };
  return { body: json, contentType: 'application/json' };
}
