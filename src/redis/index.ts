/**
 * `ratewarden/redis`: rate limits shared by every process on one Redis, through the same
 * {@link ratewarden!RateLimiter} — stores that decide in one Lua script per decision, on the
 * Redis server's clock.
 *
 * Works with `redis` (node-redis, v4 and later) and `ioredis`, and over HTTPS with Upstash's
 * `@upstash/redis` (1.34.7 and later, for Workers, Vercel's edge and Deno Deploy), all optional
 * peer dependencies: install the one you use. Imports no Node module.
 *
 * @module ratewarden/redis
 */
export { RedisSlidingWindowLog } from './redis-sliding-window-log.js';
export { RedisGCRA } from './redis-gcra.js';
export { RedisStrategy } from './redis-strategy.js';
export type { RedisFailurePolicy, RedisStrategyOptions } from './redis-strategy.js';
export { RateWardenRedisCommandError, RateWardenRedisReplyError, RateWardenRedisTimeoutError, RateWardenRedisUnavailableError } from '../errors.js';
export { toRedisAdapter } from './client.js';
export type { RedisAdapter } from './client.js';
export { DECIDE_SCRIPT } from './script.js';
