/**
 * `ratewarden suggest`'s work: the smallest threshold that meets a goal on a real log (at most
 * this share of clients limited, at most this share of requests refused), for each window and
 * strategy asked, read from the curve of refused share against threshold, computed in a few
 * passes over the log's requests rather than by replaying every threshold.
 *
 * How ({@link suggestThreshold}):
 * 1. Clients are independent (each has its own state), so the requests are grouped by client,
 *    each client's in time order (one stable counting sort), and every pass below decides client
 *    by client.
 * 2. One pass finds each client's busiest window: the most requests it sent in any window
 *    `(t - window, t]`, its **peak**. What a strategy does at a threshold of at least a client's
 *    peak is a fact of its entry in the strategy registry (`strategies.ts`), never of its name:
 *    a `peakExact` strategy (the sliding-window log, the fixed window) refuses nothing of such a
 *    client, so it is skipped at such thresholds; a `clientsLimitedFromPeaks` one (the log)
 *    limits exactly the clients whose peak is above the threshold, so the share of clients
 *    limited at every threshold is read from the peaks.
 * 3. A pass decides up to 16 thresholds at once: first a geometric grid from 1 to the largest
 *    peak (at which a `peakExact` strategy refuses nothing; the others are checked there, and
 *    the grid extended by doubling while they still miss the goal), then up to 16 evenly
 *    spaced thresholds inside the bracket where the goal flips, until the bracket is one wide.
 *    A few passes: about `log_17(largest peak)`.
 *
 * The answer assumes that a larger threshold refuses no more than a smaller one (each entry's
 * `monotone` says whether that is proven, as for the sliding-window log, the fixed window, the
 * token bucket and GCRA, whose allowed requests grow with the threshold, or assumed, as for the
 * sliding-window counter): it is the smallest threshold of the bracket that meets the goal,
 * whose predecessor does not.
 *
 * @module
 */

import { createQuota, type Quota, type RateLimitStrategy } from 'ratewarden';
import type { CurvePoint } from './report-data.js';
import { strategyEntry, type StrategyName } from './strategies.js';

/** A goal: at most `share` (0 to 1) of the clients limited, or of the requests refused. */
export interface SuggestGoal {
  /** Which share: clients with at least one refused request, or refused requests. */
  readonly kind: 'clients-limited' | 'refused';
  /** Its largest value, from 0 to 1 (`0.01` for 1%). */
  readonly share: number;
}

/** The requests grouped by client, each client's in time order: {@link groupByClient}. */
export interface ClientRuns {
  /** Request times in **milliseconds**, client by client, each client's in time order. */
  readonly times: Float64Array;
  /** Client `c`'s requests are `times[starts[c], starts[c + 1])`. */
  readonly starts: Uint32Array;
  /** How many clients. */
  readonly clients: number;
  /** How many requests. */
  readonly count: number;
}

/**
 * The requests grouped by client, each client's in time order (ties in file order): a stable
 * counting sort of `order` by client number; O(count + clients).
 *
 * @param times - request times in **milliseconds**, by request index.
 * @param clientOf - client numbers, by request index.
 * @param order - the request indexes in time order.
 */
export function groupByClient(times: Float64Array, clientOf: Uint32Array, order: Uint32Array, count: number, clients: number): ClientRuns {
  const starts = new Uint32Array(clients + 1);
  for (let k = 0; k < count; k++) starts[(clientOf[k] as number) + 1]!++;
  for (let c = 0; c < clients; c++) starts[c + 1]! += starts[c] as number;
  const next = starts.slice(0, clients);
  const grouped = new Float64Array(count);
  for (let k = 0; k < count; k++) {
    const i = order[k] as number;
    grouped[next[clientOf[i] as number]!++] = times[i] as number;
  }
  return { times: grouped, starts, clients, count };
}

/**
 * Each client's peak: the most requests it sent in any window `(t - windowMs, t]` (a request at
 * exactly `t - windowMs` is out, as the sliding-window log evicts it). O(count): two pointers.
 */
export function clientPeaks(runs: ClientRuns, windowMs: number): Uint32Array {
  const { times, starts, clients } = runs;
  const peaks = new Uint32Array(clients);
  for (let c = 0; c < clients; c++) {
    const end = starts[c + 1] as number;
    let from = starts[c] as number;
    let peak = 0;
    for (let k = starts[c] as number; k < end; k++) {
      const t = times[k] as number;
      while ((times[from] as number) <= t - windowMs) from++;
      if (k - from + 1 > peak) peak = k - from + 1;
    }
    peaks[c] = peak;
  }
  return peaks;
}

/** What thresholds did, decided together by {@link decideThresholds}. */
export interface ThresholdCounts {
  /** Refused requests at each threshold, in the order given. */
  readonly refused: Float64Array;
  /** Clients with a refused request at each threshold. */
  readonly clientsLimited: Float64Array;
}

/**
 * Decides every client's requests at each of `thresholds` (one window, one strategy), client by
 * client, each from a fresh state: one pass over the requests. A client whose `peaks` entry is at
 * most a threshold is skipped at it when `skipByPeak` holds (it refuses nothing there: the
 * strategy's registry entry is `peakExact`).
 */
export function decideThresholds(
  runs: ClientRuns,
  strategy: RateLimitStrategy<unknown>,
  quotas: readonly Quota[],
  peaks: Uint32Array,
  skipByPeak: boolean,
): ThresholdCounts {
  const { times, starts, clients } = runs;
  const n = quotas.length;
  const refused = new Float64Array(n);
  const clientsLimited = new Float64Array(n);
  for (let c = 0; c < clients; c++) {
    const from = starts[c] as number;
    const end = starts[c + 1] as number;
    const peak = peaks[c] as number;
    for (let q = 0; q < n; q++) {
      const quota = quotas[q] as Quota;
      if (skipByPeak && peak <= quota.threshold) continue;
      const state = strategy.createState(quota);
      let r = 0;
      for (let k = from; k < end; k++) if (!strategy.consume(state, times[k] as number, 1, quota).allowed) r++;
      if (r > 0) {
        refused[q]! += r;
        clientsLimited[q]!++;
      }
    }
  }
  return { refused, clientsLimited };
}

/** The answer of {@link suggestThreshold} for one window and strategy. */
export interface SuggestAnswer {
  /** The window, in **seconds**. */
  readonly windowSeconds: number;
  /** The strategy's name. */
  readonly strategy: StrategyName;
  /**
   * The smallest threshold that meets every goal on this log; `undefined` when none up to the
   * strategy's largest threshold does.
   */
  readonly threshold: number | undefined;
  /** Refused requests at {@link threshold} (0 when there is none). */
  readonly refused: number;
  /** Clients limited at {@link threshold}. */
  readonly clientsLimited: number;
  /** The largest client peak: the most requests one client sent in one window. */
  readonly maxPeak: number;
  /** Every threshold decided, by increasing threshold: the curve the answer was read from. */
  readonly curve: readonly CurvePoint[];
  /** Passes over the requests: the peaks' pass and the deciding passes. */
  readonly passes: number;
}

/** Thresholds decided together in one pass. */
const PER_PASS = 16;

/**
 * The smallest threshold of `strategy` per `windowSeconds` that meets every goal on the
 * requests of `runs` (see the module documentation for how, and what is assumed).
 *
 * @param runs - the requests grouped by client ({@link groupByClient}).
 * @throws a `RangeError` / `TypeError` from `createQuota` for an invalid window, and naming
 *   `goals` when there is none or a share is not from 0 to 1.
 */
export function suggestThreshold(
  runs: ClientRuns,
  windowSeconds: number,
  strategyName: StrategyName,
  goals: readonly SuggestGoal[],
): SuggestAnswer {
  if (goals.length === 0) throw new RangeError('Expected `goals` to hold at least one goal, got none');
  for (const goal of goals) {
    if (!(goal.share >= 0 && goal.share <= 1)) throw new RangeError(`Expected a goal's share to be from 0 to 1, got ${goal.share}`);
  }
  const entry = strategyEntry(strategyName);
  const strategy = entry.create();
  // Checks the window (and gives it in ms) with the library's quota builder.
  const windowMs = createQuota({ threshold: 1, windowSeconds }, strategy).windowMs;
  const maxThreshold = largestThreshold(strategy, windowMs);
  const peaks = clientPeaks(runs, windowMs);
  let maxPeak = 0;
  for (let c = 0; c < runs.clients; c++) if ((peaks[c] as number) > maxPeak) maxPeak = peaks[c] as number;
  const skipByPeak = entry.peakExact;
  const requests = runs.count;
  const clients = runs.clients;

  const points = new Map<number, { refused: number; clientsLimited: number }>();
  let passes = 1;
  const decide = (thresholds: number[]): void => {
    const fresh = [...new Set(thresholds)].filter((t) => t >= 1 && t <= maxThreshold && !points.has(t)).sort((a, b) => a - b);
    if (fresh.length === 0) return;
    const quotas = fresh.map((threshold) => createQuota({ threshold, windowSeconds }, strategy));
    const counts = decideThresholds(runs, strategy, quotas, peaks, skipByPeak);
    fresh.forEach((t, q) => points.set(t, { refused: counts.refused[q] as number, clientsLimited: counts.clientsLimited[q] as number }));
    passes++;
  };
  const meets = (t: number): boolean => {
    const point = points.get(t);
    if (point === undefined) return false;
    return goals.every((goal) =>
      goal.kind === 'refused' ? point.refused <= allowedCount(goal.share, requests) : point.clientsLimited <= allowedCount(goal.share, clients),
    );
  };

  // The first pass: a geometric grid from 1 to the largest peak, plus, when the clients limited
  // are read from the peaks, the exact answer to a clients-limited goal (and its predecessor).
  const top = Math.max(1, Math.min(maxPeak, maxThreshold));
  const first = geometricGrid(top, PER_PASS);
  if (entry.clientsLimitedFromPeaks) {
    const fromPeaks = peakAnswer(peaks, goals, clients);
    if (fromPeaks !== undefined) first.push(fromPeaks, fromPeaks - 1);
  }
  decide(first);
  // Strategies that may still miss the goal at the largest peak (not `peakExact`, which refuse
  // nothing there): double until one meets it.
  let high = top;
  while (!entry.peakExact && !meets(high) && high < maxThreshold) {
    const more: number[] = [];
    for (let t = high; more.length < PER_PASS / 2 && t < maxThreshold; ) {
      t = Math.min(t * 2, maxThreshold);
      more.push(t);
    }
    decide(more);
    high = more.find(meets) ?? (more.at(-1) as number);
  }
  // Refine the bracket where the goal flips until it is one wide (no answer without requests).
  let answer: number | undefined;
  for (; requests > 0; ) {
    const sorted = [...points.keys()].sort((a, b) => a - b);
    const b = sorted.find(meets);
    if (b === undefined) break;
    const a = sorted.filter((t) => t < b).at(-1) ?? 0;
    if (b - a <= 1) {
      answer = b;
      break;
    }
    decide(evenGrid(a, b, PER_PASS));
  }

  const curve = [...points.entries()]
    .sort(([a], [b]) => a - b)
    .map(([threshold, p]) => ({
      threshold,
      refusedShare: requests > 0 ? p.refused / requests : 0,
      clientsLimitedShare: clients > 0 ? p.clientsLimited / clients : 0,
    }));
  const at = answer === undefined ? undefined : points.get(answer);
  return {
    windowSeconds,
    strategy: strategyName,
    threshold: answer,
    refused: at?.refused ?? 0,
    clientsLimited: at?.clientsLimited ?? 0,
    maxPeak,
    curve,
    passes,
  };
}

/**
 * For a `clientsLimitedFromPeaks` strategy (the sliding-window log) and goals on clients limited
 * only: the smallest threshold at which
 * at most the goal's share of clients have a peak above it (exact: such a client is limited,
 * any other is not). `undefined` when a goal is on refused requests.
 */
function peakAnswer(peaks: Uint32Array, goals: readonly SuggestGoal[], clients: number): number | undefined {
  if (goals.some((goal) => goal.kind !== 'clients-limited')) return undefined;
  const allowedLimited = allowedCount(Math.min(...goals.map((goal) => goal.share)), clients);
  const sorted = Array.from(peaks).sort((a, b) => b - a);
  // Limited at threshold t: the clients whose peak is above t. With `allowedLimited` of them at
  // most, t must be at least the peak of the next one.
  return Math.max(1, sorted[allowedLimited] ?? 0);
}

/**
 * The most of `total` (clients, requests) a goal of `share` lets through: `share × total`,
 * rounded down, where a product that misses a whole number by floating-point error only counts
 * as that number (29% of 100 is 29, though `0.29 * 100` is 28.999999999999996).
 */
export function allowedCount(share: number, total: number): number {
  const exact = share * total;
  const near = Math.round(exact);
  // A few units in the last place of the product: floating-point error, no more. (A tolerance of
  // 1e-9 × near took 90.67% of 343,194, 311,173.9998, for 311,174.)
  return Math.abs(exact - near) <= 4 * Number.EPSILON * Math.max(1, near) ? near : Math.floor(exact);
}

/** The largest threshold `strategy` takes for a window of `windowMs` (its `maxThreshold`, its `maxThresholdTimesWindowMs`). */
function largestThreshold(strategy: RateLimitStrategy<unknown>, windowMs: number): number {
  return Math.min(
    strategy.maxThreshold ?? Number.MAX_SAFE_INTEGER,
    strategy.maxThresholdTimesWindowMs === undefined ? Number.MAX_SAFE_INTEGER : Math.floor(strategy.maxThresholdTimesWindowMs / windowMs),
  );
}

/** About `n` integers from 1 to `top`, geometrically spaced, both ends included. */
export function geometricGrid(top: number, n: number): number[] {
  const grid = new Set<number>([1, top]);
  for (let i = 1; i < n - 1; i++) grid.add(Math.round(top ** (i / (n - 1))));
  return [...grid].sort((a, b) => a - b);
}

/** Up to `n` integers strictly between `a` and `b`, evenly spaced. */
export function evenGrid(a: number, b: number, n: number): number[] {
  const inside = b - a - 1;
  if (inside <= n) return Array.from({ length: inside }, (_, i) => a + 1 + i);
  return Array.from({ length: n }, (_, i) => a + Math.round(((i + 1) * (b - a)) / (n + 1)));
}

/** The busiest hour of a log (calendar hours, UTC). */
export interface BusiestHour {
  /** Its start, in **milliseconds** since the epoch (UTC). */
  readonly startMs: number;
  /** Its requests. */
  readonly requests: number;
  /** Its distinct clients. */
  readonly clients: number;
}

/**
 * The calendar hour (UTC) with the most requests, the earliest of equals, and its distinct
 * clients; `undefined` when there is no request. One pass over the requests in time order.
 */
export function busiestHour(times: Float64Array, clientOf: Uint32Array, order: Uint32Array, count: number, clients: number): BusiestHour | undefined {
  if (count === 0) return undefined;
  const HOUR = 3_600_000;
  const seenIn = new Float64Array(clients).fill(-1);
  let best: BusiestHour | undefined;
  let hour = Number.NaN;
  let inHour = 0;
  let distinct = 0;
  const close = (): void => {
    if (best === undefined || inHour > best.requests) best = { startMs: hour * HOUR, requests: inHour, clients: distinct };
  };
  for (let k = 0; k < count; k++) {
    const i = order[k] as number;
    const h = Math.floor((times[i] as number) / HOUR);
    if (h !== hour) {
      if (inHour > 0) close();
      hour = h;
      inHour = 0;
      distinct = 0;
    }
    inHour++;
    const c = clientOf[i] as number;
    if (seenIn[c] !== h) {
      seenIn[c] = h;
      distinct++;
    }
  }
  close();
  return best;
}

/**
 * The refused-share curve of `strategyName` per `windowSeconds` on the requests of `runs`, at a
 * geometric grid of 16 thresholds from 1 to the largest client peak plus `thresholds` (a
 * replayed policy's own): one pass for the peaks, one for the thresholds.
 */
export function curveFor(runs: ClientRuns, windowSeconds: number, strategyName: StrategyName, thresholds: readonly number[]): CurvePoint[] {
  const entry = strategyEntry(strategyName);
  const strategy = entry.create();
  const windowMs = createQuota({ threshold: 1, windowSeconds }, strategy).windowMs;
  const peaks = clientPeaks(runs, windowMs);
  let maxPeak = 1;
  for (let c = 0; c < runs.clients; c++) if ((peaks[c] as number) > maxPeak) maxPeak = peaks[c] as number;
  // The grid stops at the strategy's largest threshold for this window (a policy's own threshold
  // is within it: its quota was built).
  const top = Math.min(maxPeak, largestThreshold(strategy, windowMs));
  const all = [...new Set([...geometricGrid(top, PER_PASS), ...thresholds])].sort((a, b) => a - b);
  const quotas = all.map((threshold) => createQuota({ threshold, windowSeconds }, strategy));
  const counts = decideThresholds(runs, strategy, quotas, peaks, entry.peakExact);
  return all.map((threshold, q) => ({
    threshold,
    refusedShare: runs.count > 0 ? (counts.refused[q] as number) / runs.count : 0,
    clientsLimitedShare: runs.clients > 0 ? (counts.clientsLimited[q] as number) / runs.clients : 0,
  }));
}
