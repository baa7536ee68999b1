// Reference models of the five strategies, against which `ratewarden replay --strategy` is checked.
//
// Each reference below is a plain, unoptimised implementation of its algorithm written from the
// algorithm's definition (not from the strategy's code), fed with requests parsed here by a
// regular expression and Date.UTC (not by the package's parser), sorted stably by time (ties in
// file order). Times are whole seconds, windows whole milliseconds, and every reference keeps
// its quantities scaled to integers, so all comparisons are exact.
import { expect } from 'vitest';
import type { StrategyName } from '../../src/cli/strategies.js';

/** One request of a log: its client and its time in ms (UTC). */
export interface RefRequest {
  readonly client: string;
  readonly timeMs: number;
}

const REF_MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const REF_LINE = /^(\S+) \S+ \S+ \[(\d\d)\/([A-Z][a-z]{2})\/(\d{4}):(\d\d):(\d\d):(\d\d) ([+-])(\d\d)(\d\d)\]/;

/** The requests of a log, in time order (ties in file order); lines that do not match are skipped. */
export function refRequests(text: string): RefRequest[] {
  const requests: RefRequest[] = [];
  for (const line of text.split('\n')) {
    const m = REF_LINE.exec(line);
    if (m === null) continue;
    const [, client, day, month, year, hour, minute, second, sign, zoneH, zoneM] = m as unknown as string[];
    const zoneMinutes = (sign === '-' ? -1 : 1) * (Number(zoneH) * 60 + Number(zoneM));
    const utc = Date.UTC(Number(year), REF_MONTHS.indexOf(month!), Number(day), Number(hour), Number(minute), Number(second));
    requests.push({ client: client!, timeMs: utc - zoneMinutes * 60_000 });
  }
  // Array.prototype.sort is stable: ties keep file order.
  return requests.sort((a, b) => a.timeMs - b.timeMs);
}

/** A per-client reference decision: `allow(state, t)` says whether the request at `t` passes. */
export interface RefModel<S> {
  fresh(t: number): S;
  allow(state: S, t: number): boolean;
}

/** The rejected requests, per client and in all, of `requests` replayed through `model`. */
export function refReplay<S>(requests: readonly RefRequest[], model: RefModel<S>): { rejected: number; clientsLimited: number } {
  const states = new Map<string, S>();
  const rejectedBy = new Map<string, number>();
  for (const { client, timeMs } of requests) {
    let state = states.get(client);
    if (state === undefined) {
      state = model.fresh(timeMs);
      states.set(client, state);
    }
    if (!model.allow(state, timeMs)) rejectedBy.set(client, (rejectedBy.get(client) ?? 0) + 1);
  }
  return { rejected: [...rejectedBy.values()].reduce((a, b) => a + b, 0), clientsLimited: rejectedBy.size };
}

/** The reference model of each strategy, for `threshold` requests per `windowMs`. */
export function refModel(name: StrategyName, threshold: number, windowMs: number): RefModel<never> {
  expect(Number.isInteger(windowMs)).toBe(true);
  const models: Record<StrategyName, RefModel<unknown>> = {
    // The allowed times of the client; allowed when fewer than `threshold` are in (t - window, t].
    'sliding-window-log': {
      fresh: (): number[] => [],
      allow(log: unknown, t) {
        const times = log as number[];
        const live = times.filter((x) => x > t - windowMs).length;
        if (live >= threshold) return false;
        times.push(t);
        return true;
      },
    },
    // One window from the client's first request; the first request at or after its end opens
    // the next one, starting at that request.
    'fixed-window': {
      fresh: (t) => ({ start: t, count: 0 }),
      allow(state: unknown, t) {
        const w = state as { start: number; count: number };
        if (t >= w.start + windowMs) {
          w.start = t;
          w.count = 0;
        }
        if (w.count >= threshold) return false;
        w.count++;
        return true;
      },
    },
    // Cloudflare's estimate on a grid of windows anchored at the client's first request:
    // count(previous window) × (window - elapsed) / window + count(this window) + 1 <= threshold
    // (multiplied out by the window). A client whose last allowed request is two or more windows
    // back (so that the window before this one is empty) starts a new grid at this request.
    'sliding-window-counter': {
      fresh: (t) => ({ anchor: t, counts: new Map<number, number>(), last: 0 }),
      allow(state: unknown, t) {
        const g = state as { anchor: number; counts: Map<number, number>; last: number };
        let index = Math.floor((t - g.anchor) / windowMs);
        if (index - g.last >= 2) {
          g.anchor = t;
          g.counts.clear();
          g.last = 0;
          index = 0;
        }
        const elapsed = t - (g.anchor + index * windowMs);
        const previous = g.counts.get(index - 1) ?? 0;
        const current = g.counts.get(index) ?? 0;
        if (previous * (windowMs - elapsed) + (current + 1) * windowMs > threshold * windowMs) return false;
        g.counts.set(index, current + 1);
        g.last = index;
        return true;
      },
    },
    // A bucket of `threshold` tokens, full at first, refilled at `threshold` per window;
    // a request takes one token. Tokens are counted in 1/windowMs of a token.
    'token-bucket': {
      fresh: (t) => ({ units: threshold * windowMs, at: t }),
      allow(state: unknown, t) {
        const b = state as { units: number; at: number };
        b.units = Math.min(threshold * windowMs, b.units + (t - b.at) * threshold);
        b.at = t;
        if (b.units < windowMs) return false;
        b.units -= windowMs;
        return true;
      },
    },
    // The virtual-scheduling GCRA with emission interval T = window / threshold and tolerance
    // tau = window - T (the same traffic contract as the bucket above): a request at t conforms
    // when TAT <= t + tau, and then TAT = max(TAT, t) + T. Times are multiplied by `threshold`.
    gcra: {
      fresh: () => ({ tat: -Infinity }),
      allow(state: unknown, t) {
        const g = state as { tat: number };
        const now = t * threshold;
        const interval = windowMs;
        const tau = threshold * windowMs - interval;
        const tat = Math.max(g.tat, now);
        if (tat > now + tau) return false;
        g.tat = tat + interval;
        return true;
      },
    },
  };
  return models[name] as RefModel<never>;
}

/** The rejected counts observed on the built-in sample (regression values, checked by the references). */
export const SAMPLE_REJECTED: Readonly<Record<StrategyName, { '60/60': number; '5/10': number }>> = {
  'sliding-window-log': { '60/60': 87, '5/10': 757 },
  'sliding-window-counter': { '60/60': 87, '5/10': 926 },
  'fixed-window': { '60/60': 87, '5/10': 672 },
  'token-bucket': { '60/60': 0, '5/10': 413 },
  gcra: { '60/60': 0, '5/10': 413 },
};
