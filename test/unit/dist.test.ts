// What ships is what is tested: the built ESM and CJS bundles load and decide.
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
// Through a variable, so that type-checking does not need dist/ to be built.
const packageName: string = 'ratewarden';

describe('the built package (dist/)', () => {
  it('loads through the ESM export and decides', async () => {
    const mod = (await import(packageName)) as typeof import('../../src/index.js');
    let now = 0;
    const limiter = new mod.RateLimiter({ threshold: 1, windowSeconds: 1, clock: () => now });
    expect(limiter.allowRequestSync('a').allowed).toBe(true);
    expect(limiter.allowRequestSync('a').allowed).toBe(false);
    now = 1_000;
    expect((await limiter.allowRequest('a')).allowed).toBe(true);
    expect(Object.keys(mod).sort()).toEqual(
      [
        'ErrorCode', 'FixedWindow', 'FixedWindowState', 'GCRA', 'GCRAState', 'KeyedMutex', 'RateLimitGroup', 'RateLimiter',
        'RateWardenRangeError', 'RateWardenTypeError', 'RateWardenWaitError', 'SlidingWindowCounter', 'SlidingWindowCounterState',
        'SlidingWindowLog', 'SlidingWindowLogState', 'TokenBucket', 'TokenBucketState', 'createQuota', 'ipKey', 'performanceClock',
        'rateLimitHeaders', 'rateLimitProblem',
      ],
    );
  });

  it('loads through the CJS export and throws the documented errors', () => {
    const mod = require(packageName) as typeof import('../../src/index.js');
    expect(require.resolve(packageName)).toMatch(/dist[\\/]index\.cjs$/);
    expect(() => new mod.RateLimiter({ threshold: 0, windowSeconds: 1 })).toThrow(RangeError);
    const limiter = new mod.RateLimiter({ threshold: 2, windowSeconds: 1, clock: () => 0 });
    expect(limiter.allowRequestSync({ id: 'x' }).remaining).toBe(1);
  });

  it('ships ratewarden/redis in both formats, sharing the core (one set of classes)', async () => {
    const core = (await import(packageName)) as typeof import('../../src/index.js');
    const redis = (await import(`${packageName}/redis`)) as typeof import('../../src/redis/index.js');
    expect(Object.keys(redis).sort()).toEqual([
      'DECIDE_SCRIPT', 'RateWardenRedisCommandError', 'RateWardenRedisReplyError', 'RateWardenRedisTimeoutError', 'RateWardenRedisUnavailableError', 'RedisGCRA', 'RedisSlidingWindowLog', 'RedisStrategy', 'toRedisAdapter',
    ]);
    // The subpath's errors are the core's classes, not copies.
    expect(() => new redis.RedisGCRA({ client: null, prefix: 'p:' })).toThrow(core.RateWardenTypeError);
    expect(new redis.RateWardenRedisTimeoutError(1).code).toBe(core.ErrorCode.RedisTimeout);
    expect(new redis.RateWardenRedisUnavailableError().code).toBe(core.ErrorCode.RedisUnavailable);
    const cjs = require(`${packageName}/redis`) as typeof import('../../src/redis/index.js');
    expect(require.resolve(`${packageName}/redis`)).toMatch(/dist[\\/]redis\.cjs$/);
    const cjsCore = require(packageName) as typeof import('../../src/index.js');
    expect(() => new cjs.RedisSlidingWindowLog({ client: {}, prefix: 'p:' })).toThrow(cjsCore.RateWardenTypeError);
  });

  it('ships ratewarden/nestjs in both formats, sharing the core; Nest stays outside the core', async () => {
    const core = (await import(packageName)) as typeof import('../../src/index.js');
    const nest = (await import(`${packageName}/nestjs`)) as typeof import('../../src/nestjs/index.js');
    expect(Object.keys(nest).sort()).toEqual([
      'HeaderNames', 'RATEWARDEN_OPTIONS', 'RateLimit', 'RateLimitExceededException', 'RateWardenGuard', 'RateWardenModule', 'SkipRateLimit', 'ipKey',
    ]);
    expect(nest.ipKey).toBe(core.ipKey);
    expect(() => nest.RateLimit()).toThrow(core.RateWardenTypeError);
    const { HttpException } = await import('@nestjs/common');
    const refused = new nest.RateLimitExceededException({ allowed: false, remaining: 0, retryAfter: 2, limit: 1, resetAfter: 2 });
    expect(refused).toBeInstanceOf(HttpException);
    expect(refused.getStatus()).toBe(429);
    const cjs = require(`${packageName}/nestjs`) as typeof import('../../src/nestjs/index.js');
    expect(require.resolve(`${packageName}/nestjs`)).toMatch(/dist[\\/]nestjs\.cjs$/);
    expect(() => cjs.SkipRateLimit('no' as unknown as boolean)).toThrow((require(packageName) as typeof core).RateWardenTypeError);
  });

  it('ships ratewarden/hono in both formats, sharing the core; Hono stays outside the bundle', async () => {
    const core = (await import(packageName)) as typeof import('../../src/index.js');
    const hono = (await import(`${packageName}/hono`)) as typeof import('../../src/middleware/hono.js');
    expect(Object.keys(hono).sort()).toEqual(['HeaderNames', 'PROBLEM_CONTENT_TYPE', 'honoRateLimit', 'ipKey']);
    expect(hono.ipKey).toBe(core.ipKey);
    // The subpath's errors are the core's classes, not copies.
    expect(() => hono.honoRateLimit({ limiter: null as unknown as InstanceType<typeof core.RateLimiter> })).toThrow(core.RateWardenTypeError);
    const cjs = require(`${packageName}/hono`) as typeof import('../../src/middleware/hono.js');
    expect(require.resolve(`${packageName}/hono`)).toMatch(/dist[\\/]hono\.cjs$/);
    expect(() => cjs.honoRateLimit({ limiter: null as unknown as InstanceType<typeof core.RateLimiter> })).toThrow(
      (require(packageName) as typeof core).RateWardenTypeError,
    );
    const { readFileSync } = await import('node:fs');
    for (const file of ['hono.js', 'hono.cjs']) {
      const source = readFileSync(new URL(`../../dist/${file}`, import.meta.url), 'utf8');
      const imported = [...source.matchAll(/(?:\bfrom\s*|\brequire\(\s*|\bimport\(\s*)["']([^"']+)["']/g)].map((m) => m[1]);
      expect(imported.every((specifier) => specifier?.startsWith('./')), `${file} imports ${imported.join(', ')}`).toBe(true);
    }
  });

  it('keeps the core free of Node built-ins (it runs in browsers and edge runtimes)', async () => {
    const { readFileSync, readdirSync } = await import('node:fs');
    const dist = new URL('../../dist/', import.meta.url);
    const core = readdirSync(dist).filter((f) => /^(index|chunk-[\w-]+)\.(js|cjs)$/.test(f));
    expect(core.length).toBeGreaterThanOrEqual(4);
    for (const file of core) {
      const source = readFileSync(new URL(file, dist), 'utf8');
      const imported = [...source.matchAll(/(?:\bfrom\s*|\brequire\(\s*|\bimport\(\s*)["']([^"']+)["']/g)].map((m) => m[1]);
      expect(imported.every((specifier) => specifier?.startsWith('./')), `${file} imports ${imported.join(', ')}`).toBe(true);
    }
  });

  it('keeps ratewarden/redis free of Node built-ins too (it runs in Workers, Deno and Bun): its chunks and cluster-key-slot only', async () => {
    const { readFileSync } = await import('node:fs');
    const dist = new URL('../../dist/', import.meta.url);
    for (const file of ['redis.js', 'redis.cjs']) {
      const source = readFileSync(new URL(file, dist), 'utf8');
      const imported = [...source.matchAll(/(?:\bfrom\s*|\brequire\(\s*|\bimport\(\s*)["']([^"']+)["']/g)].map((m) => m[1]);
      expect(imported.length, file).toBeGreaterThanOrEqual(2);
      expect(imported.every((specifier) => specifier === 'cluster-key-slot' || (specifier ?? '').startsWith('./')), `${file} imports ${imported.join(', ')}`).toBe(true);
    }
  });
});
