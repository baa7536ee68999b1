/**
 * ratewarden: exact, fast, in-process rate limiting.
 *
 * Every public export is listed here by name.
 *
 * @module ratewarden
 */
export { RateLimiter } from './rate-limiter.js';
export type { AnyLimiter, RateLimiterOptions } from './rate-limiter.js';
export type { RequestOptions, User, WaitOptions } from './request.js';
export { createQuota } from './quota.js';
export type { Quota, QuotaBounds, QuotaNames, QuotaOptions } from './quota.js';
export type { LimitFor } from './tiers.js';
export { RateLimitGroup } from './rate-limit-group.js';
export type { GroupMember, GroupReservation, GroupResult, SyncGroupReservation } from './rate-limit-group.js';
export type { RateLimitResult } from './result.js';
export type { Reservation, SyncReservation } from './reservation.js';
export type { RateLimitStrategy } from './strategy.js';
export type { BatchRequest, BatchingStore, CachingStore, RateLimitStore, RefundingStore, StoreBatch, StoreReservation } from './store.js';
export { SlidingWindowLog, SlidingWindowLogState } from './strategies/sliding-window-log.js';
export type { SlidingWindowLogTicket } from './strategies/sliding-window-log.js';
export { SlidingWindowCounter, SlidingWindowCounterState } from './strategies/sliding-window-counter.js';
export type { SlidingWindowCounterTicket } from './strategies/sliding-window-counter.js';
export { FixedWindow, FixedWindowState } from './strategies/fixed-window.js';
export type { FixedWindowTicket } from './strategies/fixed-window.js';
export { TokenBucket, TokenBucketState } from './strategies/token-bucket.js';
export type { TokenBucketTicket } from './strategies/token-bucket.js';
export { GCRA, GCRAState } from './strategies/gcra.js';
export type { GCRATicket } from './strategies/gcra.js';
export { KeyedMutex } from './keyed-mutex.js';
export { performanceClock } from './clock.js';
export type { Clock } from './clock.js';
export { ErrorCode, RateWardenRangeError, RateWardenTypeError, RateWardenWaitError } from './errors.js';
export { rateLimitHeaders, rateLimitProblem } from './http-headers.js';
export { ipKey } from './ip-key.js';
export type { IpKeyOptions } from './ip-key.js';
export type { RateLimitHeadersOptions, RateLimitPolicy, RateLimitProblem, RateLimitProblemOptions } from './http-headers.js';
export type {
  DecisionInfo,
  DecisionListener,
  ListenerErrorListener,
  RateLimiterEvents,
  RateLimiterStats,
  SweepInfo,
  SweepListener,
} from './observer.js';
