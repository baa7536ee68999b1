// What ships is what is tested: the built ESM and CJS bundles load and decide.
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
// Through a variable, so that type-checking does not need dist/ to be built.
const packageName: string = 'ratewarden';

describe('the built package (dist/)', () => {
  it('loads through the ESM export and decides', async () => {
    const mod = (await import(packageName)) as typeof import('../src/index.js');
    let now = 0;
    const limiter = new mod.RateLimiter({ threshold: 1, windowSeconds: 1, clock: () => now });
    expect(limiter.allowRequestSync('a').allowed).toBe(true);
    expect(limiter.allowRequestSync('a').allowed).toBe(false);
    now = 1_000;
    expect((await limiter.allowRequest('a')).allowed).toBe(true);
    expect(Object.keys(mod).sort()).toEqual(
      [
        'ErrorCode', 'FixedWindow', 'FixedWindowState', 'GCRA', 'GCRAState', 'KeyedMutex', 'RateLimitGroup', 'RateLimiter',
        'RateWardenRangeError', 'RateWardenTypeError', 'SlidingWindowCounter', 'SlidingWindowCounterState',
        'SlidingWindowLog', 'SlidingWindowLogState', 'TokenBucket', 'TokenBucketState', 'performanceClock',
      ],
    );
  });

  it('loads through the CJS export and throws the documented errors', () => {
    const mod = require(packageName) as typeof import('../src/index.js');
    expect(require.resolve(packageName)).toMatch(/dist[\\/]index\.cjs$/);
    expect(() => new mod.RateLimiter({ threshold: 0, windowSeconds: 1 })).toThrow(RangeError);
    const limiter = new mod.RateLimiter({ threshold: 2, windowSeconds: 1, clock: () => 0 });
    expect(limiter.allowRequestSync({ id: 'x' }).remaining).toBe(1);
  });
});
