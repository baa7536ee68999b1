// The strategy contract suite, `describeStrategy(name, factory, documented)`: the same invariants,
// run through a RateLimiter against every strategy of both contracts — in-memory strategies
// (RateLimitStrategy, decided through allowRequestSync / peekSync) and stores (RateLimitStore,
// decided through allowRequest / peek, in test/unit/strategies/contract.test.ts over a store of
// this file's and in test/integration/redis/strategy-contract.test.ts over Redis).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  RateLimiter,
  type RateLimitResult,
  type RateLimitStore,
  type RateLimitStrategy,
  type RequestOptions,
} from '../../src/index.js';
import { expectInRange } from './expect-in-range.js';

/** What a strategy documents of itself, which the suite holds it to. */
export interface Documented {
  /** The most units a key can be allowed in any window of length `window`, in thresholds. */
  readonly maxPerWindow: number;
  /** The largest finite `retryAfter` and `resetAfter`, in windows. */
  readonly maxWait: number;
}

/** Options of the suite. */
export interface SuiteOptions {
  /** Runs of the property (default 150). */
  readonly runs?: number;
  /** Each test's timeout in ms (default vitest's). */
  readonly timeout?: number;
  /**
   * The contract, when `factory` cannot be called while tests are registered (a store whose
   * client connects in `beforeAll`); default: told by calling it.
   */
  readonly contract?: 'in-memory' | 'store';
}

type Strategy = RateLimitStrategy<unknown> | RateLimitStore;

/**
 * Registers the contract suite for the strategy `factory` makes, whose `name` must be `name`.
 * Each test builds its own strategy (a store gets a fresh namespace per call of `factory`).
 */
export function describeStrategy(name: string, factory: () => Strategy, documented: Documented, options: SuiteOptions = {}): void {
  const contract = options.contract ?? ('createState' in factory() ? 'in-memory' : 'store');
  const inMemory = contract === 'in-memory';

  function limiterOf(threshold: number, windowSeconds: number, clock: () => number): RateLimiter<unknown> {
    return new RateLimiter<unknown>({ threshold, windowSeconds, strategy: factory(), clock });
  }

  /** A limiter and its decisions: synchronous for an in-memory strategy, awaited for a store. */
  function driven(limiter: RateLimiter<unknown>) {
    return {
      allow: (key: string, o?: RequestOptions): Promise<RateLimitResult> | RateLimitResult =>
        inMemory ? limiter.allowRequestSync(key, o) : limiter.allowRequest(key, o),
      peek: (key: string, o?: RequestOptions): Promise<RateLimitResult> | RateLimitResult =>
        inMemory ? limiter.peekSync(key, o) : limiter.peek(key, o),
    };
  }

  function setup(threshold: number, windowMs: number) {
    const clock = { now: 1_000_000 };
    const limiter = limiterOf(threshold, windowMs / 1000, () => clock.now);
    return { clock, limiter, ...driven(limiter) };
  }

  const checkRange = (r: RateLimitResult, threshold: number, windowMs: number) =>
    expectInRange(r, threshold, (documented.maxWait * windowMs) / 1000);

  describe(`strategy contract (${contract}): ${name}`, { timeout: options.timeout ?? 5_000 }, () => {
    it(`has a name and the ${contract} contract's members`, () => {
      const strategy = factory();
      expect(strategy.name).toBe(name);
      const members = inMemory ? ['createState', 'consume', 'peek', 'sweep'] : ['consume', 'peek'];
      for (const member of members) expect(typeof (strategy as unknown as Record<string, unknown>)[member]).toBe('function');
      expect('createState' in strategy || 'sweep' in strategy).toBe(inMemory);
    });

    it('allows the first request with remaining threshold - 1', async () => {
      const { allow } = setup(5, 10_000);
      const r = await allow('a');
      expect(r.allowed).toBe(true);
      expect(r.remaining).toBe(4);
      expect(r.retryAfter).toBe(0);
      expect(r.limit).toBe(5);
    });

    it('allows exactly threshold at one instant, then rejects with a finite wait', async () => {
      const { allow } = setup(5, 10_000);
      const results: RateLimitResult[] = [];
      for (let i = 0; i < 7; i++) results.push(await allow('a'));
      expect(results.map((r) => r.allowed)).toEqual([true, true, true, true, true, false, false]);
      expect(results.map((r) => r.remaining)).toEqual([4, 3, 2, 1, 0, 0, 0]);
      expect(results[5]!.retryAfter).toBeGreaterThan(0);
      expect(results[5]!.retryAfter).toBeLessThanOrEqual(10 * documented.maxWait);
      expect(results[6]).toEqual(results[5]);
    });

    it('allows a full burst at a fractional clock reading and a fractional window', async () => {
      const clock = { now: 3154.5823824363356 };
      const { allow } = driven(limiterOf(3, 1.017, () => clock.now));
      const first: boolean[] = [];
      for (let i = 0; i < 4; i++) first.push((await allow('a')).allowed);
      expect(first).toEqual([true, true, true, false]);
      const single = driven(limiterOf(1, 1.017, () => 8));
      expect((await single.allow('a')).allowed).toBe(true);
      // Fractional windows of whole milliseconds (others are refused by createQuota).
      for (const windowSeconds of [0.333, 60.001]) {
        const l = driven(limiterOf(7, windowSeconds, () => clock.now));
        const burst: RateLimitResult[] = [];
        for (let i = 0; i < 8; i++) burst.push(await l.allow('b'));
        expect(burst.map((r) => r.allowed)).toEqual([true, true, true, true, true, true, true, false]);
        expect(burst.map((r) => r.remaining)).toEqual([6, 5, 4, 3, 2, 1, 0, 0]);
        expect(Number.isFinite(burst[7]!.retryAfter)).toBe(true);
      }
    });

    it('lets the same request through once retryAfter has passed, not a millisecond before', async () => {
      const { clock, allow, peek } = setup(3, 1_000);
      for (let i = 0; i < 3; i++) await allow('a');
      clock.now += 100;
      const rejected = await allow('a', { cost: 2 });
      expect(rejected.allowed).toBe(false);
      const waitMs = Math.ceil(rejected.retryAfter * 1000 - 1e-6);
      clock.now += waitMs - 1;
      expect((await peek('a', { cost: 2 })).allowed).toBe(false);
      clock.now += 1;
      expect((await allow('a', { cost: 2 })).allowed).toBe(true);
    });

    it('reports a cost above threshold as never possible and records nothing', async () => {
      const { limiter, allow } = setup(3, 1_000);
      const r = await allow('a', { cost: 4 });
      expect(r.allowed).toBe(false);
      expect(r.retryAfter).toBe(Infinity);
      expect(r.remaining).toBe(3);
      expect(limiter.size).toBe(0);
      expect((await allow('a', { cost: 3 })).allowed).toBe(true);
    });

    it('peek decides as the request would, without recording', async () => {
      const { limiter, allow, peek } = setup(2, 1_000);
      expect((await peek('a')).allowed).toBe(true);
      expect(limiter.size).toBe(0);
      await allow('a');
      const peeked = await peek('a');
      expect(peeked.remaining).toBe(1);
      expect((await allow('a')).remaining).toBe(0);
      expect((await peek('a')).allowed).toBe(false);
    });

    if (inMemory) {
      it('reset forgets a key; cleanUp drops it after a long idle, and it then decides as new', () => {
        const { clock, limiter } = setup(2, 1_000);
        limiter.allowRequestSync('a');
        limiter.allowRequestSync('a');
        limiter.allowRequestSync('b');
        expect(limiter.reset('b')).toBe(true);
        expect(limiter.cleanUp()).toBe(0);
        clock.now += 10 * documented.maxWait * 1_000;
        expect(limiter.cleanUp()).toBe(1);
        expect(limiter.size).toBe(0);
        const fresh = setup(2, 1_000).limiter;
        expect(limiter.allowRequestSync('a')).toEqual(fresh.allowRequestSync('a'));
      });
    } else {
      it('keeps nothing in the limiter: size 0, nothing to reset or sweep; the store expires a key after a long idle', async () => {
        const { clock, limiter, allow } = setup(2, 1_000);
        await allow('a');
        await allow('a');
        expect(limiter.size).toBe(0);
        expect(limiter.reset('a')).toBe(false);
        expect(limiter.cleanUp()).toBe(0);
        expect((await allow('a')).allowed).toBe(false);
        clock.now += 10 * documented.maxWait * 1_000;
        const fresh = setup(2, 1_000);
        expect(await allow('a')).toEqual(await fresh.allow('a'));
      });
    }

    it('keeps results in range when the clock steps backwards', async () => {
      const { clock, allow } = setup(3, 5_000);
      for (const t of [50_000, 10_000, 49_000, 0, 80_000, 79_999, 1, 80_001, 2, 80_001, 80_001, 80_001]) {
        clock.now = t;
        checkRange(await allow('a'), 3, 5_000);
        checkRange(await allow('a', { cost: 2 }), 3, 5_000);
      }
    });

    if (inMemory) {
      // (A store has one path, allowRequest: there is nothing to compare it with.)
      it('gives the same decisions through allowRequest and allowRequestSync', async () => {
        const a = setup(4, 1_000);
        const b = setup(4, 1_000);
        for (let i = 0; i < 12; i++) {
          a.clock.now += 130;
          b.clock.now += 130;
          expect(await a.limiter.allowRequest('k', { cost: 1 + (i % 2) })).toEqual(b.limiter.allowRequestSync('k', { cost: 1 + (i % 2) }));
        }
      });
    }

    it('property: results in range; a rejection changes nothing; never more than documented per window', async () => {
      const schedule = fc.array(
        fc.record({
          advance: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 40 }).map((n) => n * 25), fc.integer({ min: 0, max: 2_500 })),
          key: fc.constantFrom('a', 'b'),
          cost: fc.oneof(fc.constant(1), fc.integer({ min: 1, max: 12 })),
          sweep: fc.boolean(),
        }),
        { maxLength: 200 },
      );
      const config = fc.record({
        threshold: fc.integer({ min: 1, max: 10 }),
        windowMs: fc.oneof(fc.constantFrom(100, 250, 1_000), fc.integer({ min: 1, max: 2_000 })),
      });
      await fc.assert(
        fc.asyncProperty(config, schedule, async ({ threshold, windowMs }, steps) => {
          let now = 0;
          const limiter = limiterOf(threshold, windowMs / 1000, () => now);
          const { allow, peek } = driven(limiter);
          const admitted = new Map<string, number[]>([['a', []], ['b', []]]);
          for (const s of steps) {
            now += s.advance;
            if (s.sweep) limiter.cleanUp();
            const peeked = await peek(s.key, { cost: s.cost });
            const r = await allow(s.key, { cost: s.cost });
            checkRange(r, threshold, windowMs);
            expect(r.allowed).toBe(peeked.allowed);
            if (r.allowed) {
              for (let i = 0; i < s.cost; i++) admitted.get(s.key)!.push(now);
            } else {
              expect(r).toEqual(peeked);
              expect(await allow(s.key, { cost: s.cost })).toEqual(r);
            }
          }
          for (const times of admitted.values()) {
            for (const t of times) {
              const inWindow = times.filter((u) => u > t - windowMs && u <= t).length;
              expect(inWindow).toBeLessThanOrEqual(documented.maxPerWindow * threshold);
            }
          }
        }),
        { numRuns: options.runs ?? 150 },
      );
    });
  });
}
