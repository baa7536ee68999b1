/**
 * ratewarden: exact, fast, in-process rate limiting.
 *
 * Every public export is listed here by name.
 *
 * @module ratewarden
 */
export { RateLimiter } from './rate-limiter.js';
export type { AnyLimiter, LimitOptions, RateLimiterOptions, RequestOptions, User } from './rate-limiter.js';
export { RateLimitGroup } from './rate-limit-group.js';
export type { GroupMember, GroupResult } from './rate-limit-group.js';
export type { BatchRequest, Limit, RateLimitResult, RateLimitStrategy, StrategyBatch } from './strategy.js';
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
export { RateWardenWaitError } from './wait.js';
export type { WaitOptions } from './wait.js';
export type {
  DecisionListener,
  ListenerErrorListener,
  RateLimiterEvents,
  RateLimiterStats,
  SweepInfo,
  SweepListener,
} from './events.js';
