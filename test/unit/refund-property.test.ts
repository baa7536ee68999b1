// Property tests of refunds and penalties (issue 22): random decide / refund / penalty / sweep /
// reset sequences on every built-in strategy, against the fold of the recorded units
// (test/support/reference-models.ts, RefundModel). A refund the strategy makes must leave the
// key exactly as the fold without those units (log, fixed window, counter: whenever the window
// still counts them; token bucket and GCRA: when nothing was recorded after them); a refund it
// declines must be one of its documented no-ops; penalties are exact.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FixedWindow, GCRA, RateLimiter, SlidingWindowCounter, SlidingWindowLog, TokenBucket, type SyncReservation } from '../../src/index.js';
import type { StrategyName } from '../support/reference-models.js';
import { RefundModel } from '../support/reference-models.js';

const strategies: Record<StrategyName, () => unknown> = {
  'sliding-window-log': () => new SlidingWindowLog(),
  'fixed-window': () => new FixedWindow(),
  'sliding-window-counter': () => new SlidingWindowCounter(),
  'token-bucket': () => new TokenBucket(),
  gcra: () => new GCRA(),
};

const op = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('decide' as const), cost: fc.integer({ min: 1, max: 4 }) }) },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('refund' as const),
      pick: fc.nat(),
      // undefined: all that is left; otherwise a share of it.
      share: fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: undefined }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('penalty' as const), points: fc.integer({ min: 1, max: 12 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('sweep' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('reset' as const) }) },
);
const step = fc.record({
  // 0 (the same millisecond) often; window boundaries often (multiples of 25 ms).
  advance: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 16 }).map((n) => n * 25), fc.integer({ min: 0, max: 900 })),
  op,
});
const config = fc.record({
  threshold: fc.integer({ min: 1, max: 12 }),
  windowMs: fc.oneof(fc.constantFrom(100, 200), fc.integer({ min: 1, max: 400 })),
});

describe.each(Object.keys(strategies) as StrategyName[])('%s: refunds and penalties vs the reference model (fast-check)', (name) => {
  it('decisions, refunds and penalties agree with the fold of the recorded units', () => {
    fc.assert(
      fc.property(config, fc.array(step, { maxLength: 120 }), ({ threshold, windowMs }, steps) => {
        let now = 0;
        const limiter = new RateLimiter({ threshold, windowSeconds: windowMs / 1000, clock: () => now, strategy: strategies[name]() as SlidingWindowLog });
        const model = new RefundModel(name, threshold, windowMs);
        const held: { r: SyncReservation; id: number; left: number }[] = [];
        let tracked = false;
        for (const s of steps) {
          now += s.advance;
          const o = s.op;
          if (o.kind === 'decide') {
            const r = limiter.reserveSync('k', { cost: o.cost });
            const m = model.decide(now, o.cost);
            expect({ allowed: r.allowed, remaining: r.remaining }).toEqual({ allowed: m.allowed, remaining: m.remaining });
            held.push({ r, id: m.id, left: r.allowed ? o.cost : 0 });
            tracked ||= r.allowed;
          } else if (o.kind === 'refund') {
            const h = held.length === 0 ? undefined : held[o.pick % held.length];
            if (h === undefined) continue;
            const units = o.share === undefined || h.left === 0 ? undefined : Math.max(1, Math.ceil(o.share * h.left));
            const got = h.r.refund(units);
            const expected = h.left === 0 ? false : model.refund(h.id, units ?? h.left, now);
            expect(got).toBe(expected);
            if (got) h.left -= units ?? h.left;
          } else if (o.kind === 'penalty') {
            if (o.points > threshold) {
              expect(() => limiter.penaltySync('k', o.points)).toThrow(RangeError);
              continue;
            }
            const r = limiter.penaltySync('k', o.points);
            model.penalty(now, o.points);
            tracked = true;
            expect({ allowed: r.allowed, remaining: r.remaining }).toEqual(model.peek(now, 1));
          } else if (o.kind === 'sweep') {
            const clear: boolean = tracked && model.clear(now);
            expect(limiter.cleanUp()).toBe(clear ? 1 : 0);
            if (clear) model.forget();
            tracked &&= !clear;
          } else {
            limiter.reset('k');
            model.forget();
            tracked = false;
          }
          const peeked = limiter.peekSync('k');
          expect({ allowed: peeked.allowed, remaining: peeked.remaining }).toEqual(model.peek(now, 1));
        }
      }),
      { numRuns: 400 },
    );
  });

  it('never lets more through than the same sequence without the refunded units', () => {
    // Two limiters see the same requests; the second never sees the units the first refunded
    // (its requests carry only what the first kept). The first may allow a request the
    // second refuses only if... never: it is at most as permissive at every step.
    fc.assert(
      fc.property(
        config,
        fc.array(fc.record({ advance: fc.integer({ min: 0, max: 300 }), cost: fc.integer({ min: 1, max: 3 }), refund: fc.boolean() }), { maxLength: 80 }),
        ({ threshold, windowMs }, steps) => {
          let now = 0;
          const make = () => new RateLimiter({ threshold, windowSeconds: windowMs / 1000, clock: () => now, strategy: strategies[name]() as SlidingWindowLog });
          const refunding = make();
          const never = make();
          for (const s of steps) {
            now += s.advance;
            const a = refunding.reserveSync('k', { cost: s.cost });
            // Refunded at once (the common decide-then-refund): exact for every strategy.
            const refunded = s.refund && a.allowed ? a.refund() : false;
            if (a.allowed && s.refund) expect(refunded).toBe(true);
            if (!refunded) {
              const b = never.allowRequestSync('k', { cost: s.cost });
              expect(b.allowed).toBe(a.allowed);
            }
            expect(refunding.peekSync('k').remaining).toBe(never.peekSync('k').remaining);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
