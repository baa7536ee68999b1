// Blocks against a reference model (fast-check), on every strategy: a tiny model of blocks — a
// map of deadlines, restarted under `extendBlock`, replaced by `block`, dropped by `reset` —
// layered on the reference model of each strategy (test/support/reference-models.ts). Random
// sequences of decisions, peeks, manual blocks, resets and sweeps, on an injected clock that
// lands on block ends often, at small and epoch-scale readings. Checked at every step: the same
// decision as the model (so blocks hold for exactly their duration: refused 1 ms before the end,
// decided by the strategy at the end); a blocked refusal has `remaining: 0`; `retryAfter` is
// exactly the first whole millisecond at which the model would allow (when the block is over
// and the strategy allows); `resetAfter` covers the block; `stats().blocked` counts the model's
// blocks in force.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { StrategyName } from '../support/reference-models.js';
import { FixedWindow, GCRA, RateLimitGroup, RateLimiter, SlidingWindowCounter, SlidingWindowLog, TokenBucket, type RateLimitResult, type RateLimitStrategy } from '../../src/index.js';
import { refModel, type RefModel } from '../support/reference-models.js';

const STRATEGIES: readonly [StrategyName, () => RateLimitStrategy<unknown>][] = [
  ['sliding-window-log', () => new SlidingWindowLog()],
  ['sliding-window-counter', () => new SlidingWindowCounter()],
  ['fixed-window', () => new FixedWindow()],
  ['token-bucket', () => new TokenBucket()],
  ['gcra', () => new GCRA()],
];

const KEYS = ['a', 'b'] as const;

/** Blocks layered on a strategy's reference model, for every key; times in whole ms. */
class BlockModel {
  readonly #ref: RefModel<unknown>;
  readonly #states = new Map<string, unknown>();
  readonly #until = new Map<string, number>();

  constructor(
    ref: RefModel<unknown>,
    readonly threshold: number,
    readonly blockMs: number,
    readonly extend: boolean,
  ) {
    this.#ref = ref;
  }

  /** The deadline of `key`'s block in force at `t`, or `undefined`. */
  blockedUntil(key: string, t: number): number | undefined {
    const until = this.#until.get(key);
    return until !== undefined && t < until ? until : undefined;
  }

  /** Whether a request of cost 1 would be allowed at `t` (nothing changes). */
  wouldAllow(key: string, t: number): boolean {
    if (this.blockedUntil(key, t) !== undefined) return false;
    const state = this.#states.get(key);
    // The reference models change their state as they decide: ask a copy.
    return this.#ref.allow(state === undefined ? this.#ref.fresh(t) : structuredClone(state), t);
  }

  /** Decides a request of `cost` at `t` (cost 1, or above the threshold). */
  decide(key: string, t: number, cost: number): boolean {
    const blocked = this.blockedUntil(key, t);
    if (blocked !== undefined) {
      if (this.extend && this.blockMs > 0 && cost <= this.threshold) this.#until.set(key, Math.max(blocked, t + this.blockMs));
      return false;
    }
    if (cost > this.threshold) return false;
    let state = this.#states.get(key);
    if (state === undefined) {
      state = this.#ref.fresh(t);
      this.#states.set(key, state);
    }
    if (this.#ref.allow(state, t)) return true;
    if (this.blockMs > 0) this.#until.set(key, t + this.blockMs);
    return false;
  }

  block(key: string, t: number, ms: number): void {
    this.#until.set(key, t + ms);
  }

  reset(key: string): void {
    this.#states.delete(key);
    this.#until.delete(key);
  }

  blockedKeys(t: number): number {
    return KEYS.filter((key) => this.blockedUntil(key, t) !== undefined).length;
  }
}

type Op =
  | { readonly kind: 'decide'; readonly key: string; readonly oversized: boolean }
  | { readonly kind: 'peek'; readonly key: string }
  | { readonly kind: 'block'; readonly key: string; readonly ms: number }
  | { readonly kind: 'reset'; readonly key: string }
  | { readonly kind: 'cleanUp' };

const key = fc.constantFrom(...KEYS);
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 8, arbitrary: fc.record({ kind: fc.constant('decide' as const), key, oversized: fc.oneof({ weight: 5, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('peek' as const), key }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('block' as const), key, ms: fc.constantFrom(1, 50, 300, 1_000, 2_500) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('reset' as const), key }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cleanUp' as const) }) },
);

const config = fc.record({
  threshold: fc.integer({ min: 1, max: 4 }),
  windowMs: fc.constantFrom(100, 250, 1_000, 1_500),
  blockMs: fc.constantFrom(0, 1, 50, 100, 300, 1_000, 2_500),
  extend: fc.boolean(),
  // Small readings, and epoch-scale ones (with a fraction of a millisecond).
  offset: fc.constantFrom(0, 1_000, 1_700_000_000_000, 1_700_000_000_000.25),
});

/** An advance of the clock, in ms, before a step: often 0, 1 or a block's or window's length. */
const advance = fc.oneof(
  fc.constant(0),
  fc.constant(1),
  fc.constantFrom(49, 50, 99, 100, 249, 250, 299, 300, 999, 1_000, 1_499, 1_500, 2_499, 2_500),
  fc.integer({ min: 0, max: 3_000 }),
);

/**
 * `retryAfter` of a refusal at `t` is exact: the model allows at the first whole millisecond at
 * or after `t + retryAfter` s, and not 1 ms before it (the clock and the windows are whole ms, so
 * the first moment of the exact wait lies in that millisecond).
 */
function expectExactWait(model: BlockModel, k: string, t: number, r: RateLimitResult): void {
  const first = t + Math.ceil(r.retryAfter * 1000 - 1e-6);
  expect(model.wouldAllow(k, first)).toBe(true);
  expect(model.wouldAllow(k, first - 1)).toBe(false);
}

describe.each(STRATEGIES)('blocks on %s against the reference model (fast-check)', (name, strategy) => {
  it('decides as the model: blocks hold for exactly their duration; retryAfter, remaining, resetAfter and stats().blocked agree', () => {
    fc.assert(
      fc.property(config, fc.array(fc.tuple(advance, op), { maxLength: 120 }), ({ threshold, windowMs, blockMs, extend, offset }, steps) => {
        let t = 0;
        const limiter = new RateLimiter({
          threshold,
          windowSeconds: windowMs / 1000,
          blockSeconds: blockMs / 1000,
          extendBlock: extend,
          strategy: strategy(),
          clock: () => offset + t,
        });
        const model = new BlockModel(refModel(name, threshold, windowMs), threshold, blockMs, extend);
        for (const [ms, o] of steps) {
          t += ms;
          switch (o.kind) {
            case 'decide': {
              const cost = o.oversized ? threshold + 1 : 1;
              const actual = limiter.allowRequestSync(o.key, { cost });
              expect(actual.allowed).toBe(model.decide(o.key, t, cost));
              const until = model.blockedUntil(o.key, t);
              if (actual.allowed) break;
              if (until !== undefined) {
                expect(actual.remaining).toBe(0);
                expect(actual.resetAfter).toBeGreaterThanOrEqual((until - t) / 1000);
                expect(actual.retryAfter).toBeGreaterThanOrEqual((until - t) / 1000);
              }
              if (cost > threshold) expect(actual.retryAfter).toBe(Infinity);
              else expectExactWait(model, o.key, t, actual);
              break;
            }
            case 'peek': {
              const actual = limiter.peekSync(o.key);
              expect(actual.allowed).toBe(model.wouldAllow(o.key, t));
              if (!actual.allowed) expectExactWait(model, o.key, t, actual);
              if (model.blockedUntil(o.key, t) !== undefined) expect(actual.remaining).toBe(0);
              break;
            }
            case 'block':
              limiter.blockSync(o.key, o.ms / 1000);
              model.block(o.key, t, o.ms);
              break;
            case 'reset':
              limiter.reset(o.key);
              model.reset(o.key);
              break;
            case 'cleanUp':
              limiter.cleanUp();
              break;
          }
          expect(limiter.stats().blocked).toBe(model.blockedKeys(t));
        }
      }),
      { numRuns: 150 },
    );
  });
});

describe.each(STRATEGIES)('blocks in a group of two %s limits against the models (fast-check)', (name, strategy) => {
  it('the group allows only when no member is blocked and every strategy allows; each member that refuses blocks its own key; the others are not charged', () => {
    const member = fc.record({ threshold: fc.integer({ min: 1, max: 3 }), windowMs: fc.constantFrom(100, 1_000), blockMs: fc.constantFrom(0, 50, 300, 1_000), extend: fc.boolean() });
    const step = fc.tuple(
      advance,
      fc.oneof(
        { weight: 6, arbitrary: fc.record({ kind: fc.constant('decide' as const), key }) },
        { weight: 1, arbitrary: fc.record({ kind: fc.constant('block' as const), key, member: fc.constantFrom(0, 1), ms: fc.constantFrom(50, 1_000) }) },
      ),
    );
    fc.assert(
      fc.property(fc.tuple(member, member), fc.array(step, { maxLength: 80 }), (configs, steps) => {
        let t = 0;
        const limiters = configs.map(
          (c) => new RateLimiter({ threshold: c.threshold, windowSeconds: c.windowMs / 1000, blockSeconds: c.blockMs / 1000, extendBlock: c.extend, strategy: strategy(), clock: () => t }),
        );
        const models = configs.map((c) => new BlockModel(refModel(name, c.threshold, c.windowMs) as RefModel<unknown>, c.threshold, c.blockMs, c.extend));
        const group = new RateLimitGroup(limiters);
        for (const [ms, o] of steps) {
          t += ms;
          if (o.kind === 'block') {
            limiters[o.member]!.blockSync(o.key, o.ms / 1000);
            models[o.member]!.block(o.key, t, o.ms);
            continue;
          }
          const each = models.map((m) => m.wouldAllow(o.key, t));
          const actual = group.allowRequestSync(o.key);
          expect(actual.results.map((r) => r.allowed)).toEqual(each);
          expect(actual.allowed).toBe(each.every(Boolean));
          // Allowed: every member records. Refused: each member that refused decides (and blocks);
          // the members that allowed record nothing.
          models.forEach((m, i) => {
            if (actual.allowed || !each[i]) m.decide(o.key, t, 1);
          });
          if (!actual.allowed) {
            // The group's wait covers every blocked member's block.
            for (const m of models) {
              const until = m.blockedUntil(o.key, t);
              if (until !== undefined) expect(actual.retryAfter).toBeGreaterThanOrEqual((until - t) / 1000);
            }
          }
          limiters.forEach((l, i) => {
            expect(l.stats().blocked).toBe(models[i]!.blockedKeys(t));
          });
        }
      }),
      { numRuns: 100 },
    );
  });
});
