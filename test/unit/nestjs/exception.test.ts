// RateLimitExceededException: the guard's refusal as an HttpException. A client over its limit is a
// 429; a request refused only because a limit's store could not be reached (degraded:
// 'fail-closed') is a 503 with the "Rate limit store unavailable" problem. No Nest application:
// the guard's HTTP path is tested in test/integration/middleware/.
import { HttpException, HttpStatus } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { rateLimitProblem, type RateLimitResult } from '../../../src/index.js';
import { RateLimitExceededException } from '../../../src/nestjs/index.js';

describe('RateLimitExceededException', () => {
  it('is a 429 whose response is the RFC 9457 problem, for a client over its limit', () => {
    const result: RateLimitResult = { allowed: false, remaining: 0, retryAfter: 30, limit: 2, resetAfter: 30 };
    const exception = new RateLimitExceededException(result);
    expect(exception).toBeInstanceOf(HttpException);
    expect(exception.getStatus()).toBe(HttpStatus.TOO_MANY_REQUESTS);
    expect(exception.getResponse()).toEqual(rateLimitProblem(result));
    expect(exception.message).toBe('Rate limit of 2 exceeded; retry in 30 s.');
  });

  it('is a 503 "Rate limit store unavailable" when the store failed closed, with the result', () => {
    const result: RateLimitResult = { allowed: false, remaining: 0, retryAfter: 1, limit: 5, resetAfter: 1, degraded: 'fail-closed' };
    const exception = new RateLimitExceededException(result);
    expect(exception.getStatus()).toBe(HttpStatus.SERVICE_UNAVAILABLE);
    expect(exception.getResponse()).toEqual({
      type: 'about:blank',
      title: 'Rate limit store unavailable',
      status: 503,
      detail: "This request was refused because the rate limit's store could not be reached, not because the client exceeded the limit; retry in 1 s.",
      retryAfter: 1,
    });
    expect(exception.message).toContain("the rate limit's store could not be reached");
    expect(exception.result).toBe(result);
  });
});
