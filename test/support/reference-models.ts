// Reference models of the five strategies, against which `ratewarden replay --strategy` is checked.
//
// Each reference below is a plain, unoptimised implementation of its algorithm written from the
// algorithm's definition (not from the strategy's code), fed with requests parsed here by a
// regular expression and Date.UTC (not by the package's parser), sorted stably by time (ties in
// file order). Times are whole seconds, windows whole milliseconds, and every reference keeps
// its quantities scaled to integers, so all comparisons are exact.
import { expect } from 'vitest';

/** The five built-in strategies by their `name` (the replay command's `--strategy` values). */
export type StrategyName = 'sliding-window-log' | 'sliding-window-counter' | 'fixed-window' | 'token-bucket' | 'gcra';

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

/**
 * One key of a strategy with refunds and penalties, written from the definitions: the key's
 * state is a fold over the units **recorded** on it (decisions and penalties, in time order),
 * so a refund that the strategy makes exactly is the same fold with those units removed — the
 * key "as if they had never been recorded". Times are whole milliseconds on the limiter's
 * monotonic clock; every quantity is an integer (rates in 1/window of a unit), so comparisons are
 * exact. Each method also says which refunds the strategy documents as no-ops (`expectRefund`).
 */
export class RefundModel {
  /** The units recorded, oldest first; a refund lowers `units` (0: as if never recorded). */
  readonly #events: { id: number; t: number; units: number; penalty: boolean }[] = [];
  /** Per decision id: what the strategy's ticket would say (see `expectRefund`). */
  readonly #tickets = new Map<number, { dead: boolean; start: number; count: number; cuts: number; anchor: number; index: number; anchored: boolean; stateIndex: number; current: number; previous: number }>();
  #nextId = 0;
  /** Penalties of the log that dropped live entries (the log keeps its newest `threshold`). */
  #cuts = 0;

  constructor(
    readonly name: StrategyName,
    readonly threshold: number,
    readonly windowMs: number,
  ) {}

  /** The fold of the fixed window and the counter's grid over the recorded units. */
  #windows(): { start: number; count: number; anchor: number; index: number; current: number; previous: number } {
    const W = this.windowMs;
    let start = 0;
    let count = 0;
    let anchor = 0;
    let index = 0;
    let current = 0;
    let previous = 0;
    for (const e of this.#events) {
      if (e.units === 0) continue;
      if (count === 0 || e.t - start >= W) {
        start = e.t;
        count = 0;
      }
      count += e.units;
      if (current === 0 && previous === 0) {
        anchor = e.t;
        index = 0;
      } else {
        const into = e.t - anchor - index * W;
        if (into >= 2 * W) {
          current = previous = 0;
          anchor = e.t;
          index = 0;
        } else if (into >= W) {
          previous = current;
          current = 0;
          index++;
        }
      }
      current += e.units;
    }
    return { start, count, anchor, index, current, previous };
  }

  /** The bucket's level at `t`, in 1/window of a token (GCRA is the same contract: level = full − debt). */
  #level(t: number): number {
    const full = this.threshold * this.windowMs;
    let level = full;
    let last: number | undefined;
    for (const e of this.#events) {
      if (e.units === 0) continue;
      if (last !== undefined) level = Math.min(full, level + (e.t - last) * this.threshold);
      last = e.t;
      level -= e.units * this.windowMs;
      if (e.penalty && level < -full) level = -full;
    }
    return last === undefined ? full : Math.min(full, level + (t - last) * this.threshold);
  }

  /** Whole units that fit at `t` (may be negative after penalties). */
  free(t: number): number {
    const T = this.threshold;
    const W = this.windowMs;
    switch (this.name) {
      case 'sliding-window-log':
        return T - this.#events.filter((e) => t - e.t < W).reduce((sum, e) => sum + e.units, 0);
      case 'fixed-window': {
        const { start, count } = this.#windows();
        return count === 0 || t - start >= W ? T : T - count;
      }
      case 'sliding-window-counter': {
        const { anchor, index } = this.#windows();
        let { current, previous } = this.#windows();
        if (current === 0 && previous === 0) return T;
        let into = t - anchor - index * W;
        if (into >= 2 * W) return T;
        if (into >= W) {
          previous = current;
          current = 0;
          into -= W;
        }
        return Math.floor((T * W - previous * (W - into) - current * W) / W);
      }
      case 'token-bucket':
      case 'gcra':
        return Math.floor(this.#level(t) / W);
    }
  }

  /** `allowed` and `remaining` of a request of `cost` at `t`, recorded when allowed; its id. */
  decide(t: number, cost: number): { allowed: boolean; remaining: number; id: number } {
    const free = this.free(t);
    const id = this.#nextId++;
    if (cost > free) return { allowed: false, remaining: Math.max(0, free), id };
    this.#events.push({ id, t, units: cost, penalty: false });
    const w = this.#windows();
    this.#tickets.set(id, {
      dead: false,
      start: w.start,
      count: w.count,
      cuts: this.#cuts,
      anchor: w.anchor,
      index: w.index,
      anchored: w.index === 0 && t === w.anchor,
      stateIndex: w.index,
      current: w.current,
      previous: w.previous,
    });
    return { allowed: true, remaining: free - cost, id };
  }

  /** What a peek of `cost` at `t` reports as `allowed` and `remaining`. */
  peek(t: number, cost: number): { allowed: boolean; remaining: number } {
    const free = this.free(t);
    return { allowed: cost <= free, remaining: Math.max(0, free) };
  }

  /** Records `points` at `t` without asking. */
  penalty(t: number, points: number): void {
    if (this.name === 'sliding-window-log' && Math.min(this.threshold, this.threshold - this.free(t)) + points > this.threshold) this.#cuts++;
    this.#events.push({ id: -1, t, units: points, penalty: true });
  }

  /** Whether the key is clear at `t` (a sweep forgets it: its decisions' tickets die). */
  clear(t: number): boolean {
    const W = this.windowMs;
    switch (this.name) {
      case 'fixed-window': {
        const { start, count } = this.#windows();
        return count === 0 || t - start >= W;
      }
      case 'sliding-window-counter': {
        const { anchor, index, current, previous } = this.#windows();
        return (current === 0 && previous === 0) || t - anchor - index * W >= (current === 0 ? 1 : 2) * W;
      }
      case 'sliding-window-log':
        return this.free(t) === this.threshold;
      case 'token-bucket':
      case 'gcra':
        return this.#level(t) === this.threshold * W;
    }
  }

  /** The key forgotten (`reset`, or a sweep of a clear key): every ticket dies. */
  forget(): void {
    this.#events.length = 0;
    for (const ticket of this.#tickets.values()) ticket.dead = true;
  }

  /**
   * Whether the strategy gives back `units` of decision `id` at `t` (its documented rules); when
   * it does, removes them: the fold is then the key without them.
   */
  refund(id: number, units: number, t: number): boolean {
    const expected = this.expectRefund(id, units, t);
    if (expected) {
      const event = this.#events.find((e) => e.id === id)!;
      event.units -= units;
      const ticket = this.#tickets.get(id)!;
      const w = this.#windows();
      ticket.count = w.count;
      ticket.stateIndex = w.index;
      ticket.current = w.current;
      ticket.previous = w.previous;
    }
    return expected;
  }

  /** The documented outcome of a refund of `units` of decision `id` at `t` (nothing changed). */
  expectRefund(id: number, units: number, t: number): boolean {
    const ticket = this.#tickets.get(id);
    const event = this.#events.find((e) => e.id === id);
    if (ticket === undefined || ticket.dead || event === undefined || event.units < units) return false;
    const W = this.windowMs;
    const w = this.#windows();
    switch (this.name) {
      case 'sliding-window-log':
        return t - event.t < W && this.#cuts === ticket.cuts;
      case 'fixed-window':
        return w.start === ticket.start && t - w.start < W && (event.t !== ticket.start || w.count === ticket.count);
      case 'sliding-window-counter': {
        if (w.anchor !== ticket.anchor) return false;
        const into = t - w.anchor - w.index * W;
        const unchanged = w.index === ticket.stateIndex && w.current === ticket.current && w.previous === ticket.previous;
        if (w.index === ticket.index) return into < 2 * W && !(ticket.anchored && !unchanged);
        if (w.index === ticket.index + 1) {
          if (into >= W) return false;
          if (ticket.anchored && !(ticket.stateIndex === ticket.index && w.previous === ticket.current && w.current === 0)) return false;
          return !(w.previous === units && w.current > 0);
        }
        return false;
      }
      case 'token-bucket':
      case 'gcra': {
        // Exact only when nothing else is recorded after it (or only at its own instant, and
        // given back since: the state is then the very one it left).
        const later = this.#events.slice(this.#events.indexOf(event) + 1);
        return later.every((e) => e.units === 0 && e.t === event.t);
      }
    }
  }
}
