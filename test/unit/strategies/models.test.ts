// Each strategy against a tiny reference model written as plainly as possible, on random
// schedules (fast-check). `retryAfter` is checked independently of any formula: by searching the
// model for the first millisecond at which the same request fits.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RateLimiter, type RateLimitStrategy } from '../../../src/index.js';
import { FixedWindow } from '../../../src/strategies/fixed-window.js';
import { GCRA } from '../../../src/strategies/gcra.js';
import { SlidingWindowCounter } from '../../../src/strategies/sliding-window-counter.js';
import { SlidingWindowLog } from '../../../src/strategies/sliding-window-log.js';
import { TokenBucket } from '../../../src/strategies/token-bucket.js';
import { LogModel } from '../../support/log-model.js';

/** A model answers, for one key: how many units fit at `t`, and records an allowed request. */
interface KeyModel {
  /** Whole units that would fit at time t (no recording). */
  free(t: number): number;
  record(t: number, cost: number): void;
}
type ModelFactory = (threshold: number, windowMs: number) => KeyModel;

/** Sliding-window log: the shared reference model (test/support/log-model.ts), for one key. */
const logModel: ModelFactory = (T, W) => {
  const model = new LogModel(T, W);
  return {
    free: (t) => model.free('k', t),
    record: (t, c) => {
      model.record('k', t, c);
    },
  };
};

/** Fixed window: a window opens at an allowed request when none is open, and lasts W. */
const fixedModel: ModelFactory = (T, W) => {
  let opened = -Infinity;
  let count = 0;
  const open = (t: number) => t < opened + W;
  return {
    free: (t) => (open(t) ? T - count : T),
    record: (t, c) => {
      if (!open(t)) {
        opened = t;
        count = 0;
      }
      count += c;
    },
  };
};

/**
 * Sliding-window counter, from the list of allowed requests: windows of length W from an anchor
 * set by the first request (and again after two empty windows); estimate =
 * previous × (W − elapsed) / W + current, compared exactly (scaled by W).
 */
const counterModel: ModelFactory = (T, W) => {
  const events: { t: number; c: number }[] = [];
  let anchor = 0;
  const sums = (t: number) => {
    const k = Math.floor((t - anchor) / W);
    let current = 0;
    let previous = 0;
    for (const e of events) {
      const j = Math.floor((e.t - anchor) / W);
      if (j === k) current += e.c;
      if (j === k - 1) previous += e.c;
    }
    return { current, previous, elapsed: t - (anchor + k * W) };
  };
  return {
    free: (t) => {
      if (events.length === 0) return T;
      const { current, previous, elapsed } = sums(t);
      const freeScaled = T * W - previous * (W - elapsed) - current * W;
      return Math.max(0, Math.floor(freeScaled / W));
    },
    record: (t, c) => {
      const { current, previous } = events.length ? sums(t) : { current: 0, previous: 0 };
      if (current === 0 && previous === 0) {
        events.length = 0;
        anchor = t;
      }
      events.push({ t, c });
    },
  };
};

/** Token bucket: T tokens, T per W refill, as exact rationals (numerator over W). */
const bucketModel: ModelFactory = (T, W) => {
  let tokensTimesW = T * W;
  let last = -Infinity;
  const at = (t: number) => Math.min(T * W, tokensTimesW + (Math.max(t, last) - last) * T);
  return {
    free: (t) => Math.floor(at(t) / W),
    record: (t, c) => {
      tokensTimesW = at(t) - c * W;
      last = Math.max(t, last);
    },
  };
};

function compare(name: string, factory: () => RateLimitStrategy<unknown>, model: ModelFactory, maxWaitWindows: number) {
  it(`${name} matches its model: decisions, remaining, and retryAfter found by search`, () => {
    fc.assert(
      fc.property(
        fc.record({ threshold: fc.integer({ min: 1, max: 8 }), windowMs: fc.oneof(fc.constantFrom(100, 300, 1_000), fc.integer({ min: 1, max: 1_500 })) }),
        fc.array(
          fc.record({
            advance: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 20 }).map((n) => n * 50), fc.integer({ min: 0, max: 2_000 })),
            key: fc.constantFrom('a', 'b'),
            cost: fc.oneof(fc.constant(1), fc.integer({ min: 1, max: 9 })),
            sweep: fc.boolean(),
          }),
          { maxLength: 120 },
        ),
        ({ threshold, windowMs }, steps) => {
          let now = 0;
          const limiter = new RateLimiter({ threshold, windowSeconds: windowMs / 1000, strategy: factory(), clock: () => now });
          const models = new Map<string, KeyModel>();
          for (const s of steps) {
            now += s.advance;
            if (s.sweep) limiter.cleanUp();
            let m = models.get(s.key);
            if (!m) models.set(s.key, (m = model(threshold, windowMs)));
            const free = m.free(now);
            const r = limiter.allowRequestSync(s.key, { cost: s.cost });
            expect(r.allowed).toBe(s.cost <= free);
            if (r.allowed) {
              m.record(now, s.cost);
              expect(r.remaining).toBe(free - s.cost);
              continue;
            }
            expect(r.remaining).toBe(Math.max(0, free));
            if (s.cost > threshold) {
              expect(r.retryAfter).toBe(Infinity);
              continue;
            }
            // The first whole millisecond at which the model lets the request through.
            let lo = now;
            let hi = now + maxWaitWindows * windowMs + 1;
            expect(m.free(hi)).toBeGreaterThanOrEqual(s.cost);
            while (hi - lo > 1) {
              const mid = Math.floor((lo + hi) / 2);
              if (m.free(mid) >= s.cost) hi = mid;
              else lo = mid;
            }
            expect(Math.ceil(r.retryAfter * 1000 - 1e-6)).toBe(hi - now);
          }
        },
      ),
      { numRuns: 150 },
    );
  });
}

describe('strategies vs reference models (fast-check)', () => {
  compare('sliding-window-log', () => new SlidingWindowLog(), logModel, 1);
  compare('fixed-window', () => new FixedWindow(), fixedModel, 1);
  compare('sliding-window-counter', () => new SlidingWindowCounter(), counterModel, 2);
  compare('token-bucket', () => new TokenBucket(), bucketModel, 1);
  compare('gcra', () => new GCRA(), bucketModel, 1);

  it('GCRA and the token bucket give identical results on monotonic schedules', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 50 }),
        fc.integer({ min: 1, max: 5_000 }),
        fc.array(fc.record({ advance: fc.integer({ min: 0, max: 700 }), cost: fc.integer({ min: 1, max: 60 }) }), { maxLength: 150 }),
        (threshold, windowMs, steps) => {
          let now = 0;
          const options = { threshold, windowSeconds: windowMs / 1000, clock: () => now };
          const gcra = new RateLimiter({ ...options, strategy: new GCRA() });
          const bucket = new RateLimiter({ ...options, strategy: new TokenBucket() });
          for (const s of steps) {
            now += s.advance;
            const a = gcra.allowRequestSync('k', { cost: s.cost });
            const b = bucket.allowRequestSync('k', { cost: s.cost });
            expect(a.allowed).toBe(b.allowed);
            expect(a.remaining).toBe(b.remaining);
            expect(a.retryAfter).toBeCloseTo(b.retryAfter, 9);
            expect(a.resetAfter).toBeCloseTo(b.resetAfter, 9);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
