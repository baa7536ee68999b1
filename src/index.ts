/**
 * ratewarden: exact, fast, in-process rate limiting.
 *
 * Every public export is listed here by name.
 *
 * @packageDocumentation
 */
export { RateLimiter } from './rate-limiter.js';
export type { LimitOptions, RateLimiterOptions, RequestOptions, User } from './rate-limiter.js';
export { RateLimitGroup } from './rate-limit-group.js';
export type { GroupMember, GroupResult } from './rate-limit-group.js';
export type { Limit, RateLimitResult, RateLimitStrategy } from './strategy.js';
export { SlidingWindowLog, SlidingWindowLogState } from './strategies/sliding-window-log.js';
export { SlidingWindowCounter, SlidingWindowCounterState } from './strategies/sliding-window-counter.js';
export { FixedWindow, FixedWindowState } from './strategies/fixed-window.js';
export { TokenBucket, TokenBucketState } from './strategies/token-bucket.js';
export { GCRA, GCRAState } from './strategies/gcra.js';
export { KeyedMutex } from './keyed-mutex.js';
export { performanceClock } from './clock.js';
export type { Clock } from './clock.js';
export { ErrorCode, RateWardenRangeError, RateWardenTypeError } from './errors.js';
export { rateLimitHeaders, rateLimitProblem } from './http-headers.js';
export type { RateLimitHeadersOptions, RateLimitPolicy, RateLimitProblem } from './http-headers.js';
