// Exact reference models of the five strategies, in BigInt arithmetic on the grid of 2^-10 ms
// (src/time.ts documents the grid). Written from each algorithm's definition, with no
// floating point after a reading is put on the grid: whatever the size of a reading, the models
// cannot round. They answer, for one key, how many units fit at a time and when a request of a
// given cost first fits; `record` records an allowed request.
import type { StrategyName } from './reference-models.js';

/** Grid points per millisecond. */
export const TICKS = 1024n;

/** A reading (ms, any finite double) on the grid, in ticks: nearest, ties upwards. */
export function tickOf(ms: number): bigint {
  return BigInt(Math.round(ms * 1024));
}

/** One key of a strategy, exactly. Times are ticks; the key's time never runs backwards. */
export interface ExactKey {
  /** Whole units that fit at `t` (no recording); may be negative after a quota shrink. */
  free(t: bigint): bigint;
  /** Records `cost` units at `t` (the caller checked that they fit). */
  record(t: bigint, cost: bigint): void;
  /** The first tick at or after `t` at which `cost` units fit (`cost <= threshold`). */
  firstFit(t: bigint, cost: bigint): bigint;
}

function searchFirstFit(key: Pick<ExactKey, 'free'>, t: bigint, cost: bigint, horizon: bigint): bigint {
  if (key.free(t) >= cost) return t;
  let lo = t; // does not fit
  let hi = t + horizon; // fits
  if (key.free(hi) < cost) throw new Error('model: the request does not fit within the horizon');
  while (hi - lo > 1n) {
    const mid = (lo + hi) / 2n;
    if (key.free(mid) >= cost) hi = mid;
    else lo = mid;
  }
  return hi;
}

/** The exact model of one key of `name`, for `threshold` units per `windowMs`. */
export function exactKey(name: StrategyName, threshold: number, windowMs: number): ExactKey {
  const T = BigInt(threshold);
  const W = BigInt(windowMs) * TICKS; // the window in ticks
  let latest: bigint | undefined;
  const at = (t: bigint) => (latest !== undefined && t < latest ? latest : t);
  let key: Pick<ExactKey, 'free' | 'record'>;
  switch (name) {
    case 'sliding-window-log': {
      // Run-length log of allowed units: [time, count]; a unit at u is live at t when t - u < W.
      const log: [bigint, bigint][] = [];
      const live = (t: bigint) => log.filter(([u]) => t - u < W).reduce((sum, [, c]) => sum + c, 0n);
      key = {
        free: (t) => T - live(at(t)),
        record(t, c) {
          log.push([at(t), c]);
        },
      };
      break;
    }
    case 'fixed-window': {
      // A window opens at an allowed request when none is open (none yet, or W passed).
      let start: bigint | undefined;
      let count = 0n;
      const open = (t: bigint) => start !== undefined && t - start < W;
      key = {
        free: (t) => (open(at(t)) ? T - count : T),
        record(t, c) {
          const now = at(t);
          if (!open(now)) {
            start = now;
            count = 0n;
          }
          count += c;
        },
      };
      break;
    }
    case 'sliding-window-counter': {
      // Windows of W from an anchor set by the first allowed request (and again when the window
      // before the current one and the current one are empty); estimate =
      // previous × (W − elapsed) / W + current, compared multiplied out by W.
      const events: [bigint, bigint][] = [];
      let anchor = 0n;
      const sums = (t: bigint) => {
        const k = (t - anchor) / W; // t >= anchor
        let current = 0n;
        let previous = 0n;
        for (const [u, c] of events) {
          const j = (u - anchor) / W;
          if (j === k) current += c;
          if (j === k - 1n) previous += c;
        }
        return { current, previous, elapsed: t - anchor - k * W };
      };
      const free = (t: bigint) => {
        if (events.length === 0) return T;
        const { current, previous, elapsed } = sums(t);
        const scaled = T * W - previous * (W - elapsed) - current * W;
        // floor division for a possibly negative numerator
        return scaled >= 0n ? scaled / W : -((-scaled + W - 1n) / W);
      };
      key = {
        free: (t) => free(at(t)),
        record(t, c) {
          const now = at(t);
          const { current, previous } = events.length > 0 ? sums(now) : { current: 0n, previous: 0n };
          if (current === 0n && previous === 0n) {
            events.length = 0;
            anchor = now;
          }
          events.push([now, c]);
        },
      };
      break;
    }
    case 'token-bucket':
    case 'gcra': {
      // A bucket of T tokens, full at first, refilled at T per W; tokens counted in 1/W of a
      // token (per tick, T of those). GCRA is the same traffic contract.
      let units = T * W;
      let last: bigint | undefined;
      const level = (t: bigint) => {
        if (last === undefined) return T * W;
        const refilled = units + (t - last) * T;
        return refilled < T * W ? refilled : T * W;
      };
      key = {
        free: (t) => level(at(t)) / W,
        record(t, c) {
          const now = at(t);
          units = level(now) - c * W;
          last = now;
        },
      };
      break;
    }
  }
  const horizon = (name === 'sliding-window-counter' ? 2n : 1n) * W;
  return {
    free: (t) => key.free(t),
    record(t, c) {
      key.record(t, c);
      latest = at(t);
    },
    firstFit: (t, c) => searchFirstFit(key, at(t), c, horizon),
  };
}
