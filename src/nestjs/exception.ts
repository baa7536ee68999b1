/**
 * The refusal of `ratewarden/nestjs`: an `HttpException` (429, or 503 when a store failure refused
 * the request), so that an application's exception filters see it (`@Catch(HttpException)`, or
 * `@Catch(RateLimitExceededException)`).
 *
 * @module
 */
import { HttpException, HttpStatus } from '@nestjs/common';
import { rateLimitProblem, type RateLimitProblem } from '../http-headers.js';
import type { RateLimitResult } from '../result.js';

/**
 * Thrown by `RateWardenGuard` when a request is refused: Nest's `HttpException` with status
 * 429 (Too Many Requests), or **503 (Service Unavailable)** when the request was refused only
 * because a limit's store could not be reached (a Redis strategy with `onFailure: "fail-closed"`
 * while Redis is down: its result says `degraded: "fail-closed"`), not because the client
 * exceeded a limit. Its response (`getResponse()`) is the RFC 9457 problem body the other
 * ratewarden middlewares send (`rateLimitProblem(result)`: `type`, `title` — "Too Many
 * Requests", or "Rate limit store unavailable" for the 503 —, `status`, `detail`, and
 * `retryAfter` in seconds unless waiting cannot help), which Nest's default exception filter
 * sends as JSON (`application/json`); its `message` is the problem's `detail`. The rate-limit
 * header fields, with `Retry-After`, are set on the response before it is thrown. Tell the two
 * apart with `getStatus()` or `result`.
 *
 * Despite its name, it is also thrown, with status 503, for a store outage, where the client
 * exceeded no limit: a filter that catches it (to log abuse, say) should check
 * `getStatus() === 429` before blaming the client.
 */
export class RateLimitExceededException extends HttpException {
  /** The refused decision (a `GroupResult`, one result per limit of the route). */
  readonly result: RateLimitResult;

  /**
   * @param result - the refused decision (`allowed: false`).
   * @throws {RateWardenRangeError} when `result` is allowed, or a field is out of range (as
   *   `rateLimitProblem`).
   */
  constructor(result: RateLimitResult) {
    const problem: RateLimitProblem = rateLimitProblem(result);
    super(problem, problem.status === 503 ? HttpStatus.SERVICE_UNAVAILABLE : HttpStatus.TOO_MANY_REQUESTS);
    // Logs and `error.message` read the problem's detail ("Rate limit of 2 exceeded; retry in 30 s.").
    this.message = problem.detail;
    this.result = result;
  }
}
