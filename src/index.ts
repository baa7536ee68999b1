/**
 * ratewarden: exact, fast, in-process rate limiting.
 *
 * Every public export is listed here by name.
 *
 * @packageDocumentation
 */
export { RateLimiter } from './rate-limiter.js';
export type { RateLimiterOptions, RequestOptions, User } from './rate-limiter.js';
export type { Limit, RateLimitResult, RateLimitStrategy } from './strategy.js';
export { SlidingWindowLog, SlidingWindowLogState } from './strategies/sliding-window-log.js';
export { KeyedMutex } from './keyed-mutex.js';
export { performanceClock } from './clock.js';
export type { Clock } from './clock.js';
export { ErrorCode, RateWardenRangeError, RateWardenTypeError } from './errors.js';
