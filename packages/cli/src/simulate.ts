/**
 * The decisions of a replay: every policy (a threshold per window, with its strategy) decides
 * the same requests in time order, each client's state kept in a dense array indexed by client
 * number, the strategy's own `consume` deciding at each request's log time; and, when asked, the
 * policies together as one all-or-nothing group, as a `RateLimitGroup` of them decides.
 *
 * The strategies are driven directly, not through a `RateLimiter`: a limiter holds the same
 * state per key in a `Map<string, State>` and decides with the same `consume`, so the decisions
 * are the same (test/simulate.test.ts checks them against `RateLimiter` and
 * `RateLimitGroup`), without a key lookup, an options check and a mutex per decision. States of
 * clients whose window is clear are dropped now and then (the strategy's `sweep`), which changes
 * no decision: a swept key decides as a fresh one (the `RateLimitStrategy` contract).
 *
 * Besides the counts per client, each policy counts its refusals per calendar minute (UTC) as it
 * goes (requests come in time order) for the peak refused per minute, and, when a timeline is
 * asked for, its allowed and refused requests per time bucket.
 *
 * @module
 */

import type { ProgressReporter } from './progress.js';
import type { Quota, RateLimitStrategy } from 'ratewarden';

/** A limit applied to every client: `quota.threshold` requests per `quota.windowMs` with `strategy`. */
export interface SimulatedPolicy {
  /** The validated quota (see `createQuota`). */
  readonly quota: Quota;
  /** The algorithm. One instance may serve several policies (strategies hold no configuration). */
  readonly strategy: RateLimitStrategy<unknown>;
}

/** The requests of a replay, as a `RequestCollector` keeps them: request `i` of `count`. */
export interface ReplayRequests {
  /** Request times in **milliseconds**; the first `count` are read. */
  readonly times: Float64Array;
  /** Client numbers, indexes in `clientNames`; the first `count` are read. */
  readonly clientOf: Uint32Array;
  /** How many requests there are. */
  readonly count: number;
  /** The client of each client number. */
  readonly clientNames: readonly string[];
}

/** Time buckets to count allowed and refused requests in, for the report's timeline. */
export interface TimelineBuckets {
  /** The start of bucket 0, in **milliseconds** since the epoch; no request is earlier. */
  readonly startMs: number;
  /** The width of a bucket, in **milliseconds**: a positive integer. */
  readonly bucketMs: number;
  /** How many buckets: every request falls in one. */
  readonly buckets: number;
}

/** What one policy (or the group) did to the requests. */
export interface PolicyCounts {
  /** Refused requests of each client, by client number. */
  readonly rejectedOf: Uint32Array;
  /** Refused requests in all. */
  readonly rejected: number;
  /** Clients with at least one refused request. */
  readonly clientsLimited: number;
  /** The most refusals in one calendar minute (UTC); 0 when nothing was refused. */
  readonly peakRefusedPerMinute: number;
  /** The start of that minute, in **milliseconds** since the epoch; `NaN` when nothing was refused. */
  readonly peakMinuteMs: number;
  /** Allowed requests per bucket, when a timeline was asked for. */
  readonly allowedPerBucket?: Uint32Array | undefined;
  /** Refused requests per bucket, when a timeline was asked for. */
  readonly refusedPerBucket?: Uint32Array | undefined;
}

/** The outcome of {@link simulate}. */
export interface Simulation {
  /** Requests of each client, by client number. */
  readonly requestsOf: Uint32Array;
  /** One entry per policy, in the order given. */
  readonly policies: readonly PolicyCounts[];
  /** The policies as one all-or-nothing group, when asked for. */
  readonly group?: PolicyCounts | undefined;
}

/** Options of {@link simulate}. */
export interface SimulateOptions {
  /** Also decide the policies together, all or nothing (as a `RateLimitGroup`). Default `false`. */
  readonly group?: boolean | undefined;
  /** Count allowed and refused requests per bucket. Default: not counted. */
  readonly timeline?: TimelineBuckets | undefined;
  /** Receives progress every 65,536 decisions of each pass. */
  readonly progress?: ProgressReporter | undefined;
}

/** The requests in time order: request `k` is the `k`-th to decide. */
interface SortedRequests {
  readonly times: Float64Array;
  readonly clientOf: Uint32Array;
  readonly count: number;
  /** How many clients (client numbers are below it). */
  readonly clients: number;
}

const MINUTE_MS = 60_000;
/** Sweep a policy's states once this many clients hold one (then at twice what remains). */
const FIRST_SWEEP = 1 << 16;

/**
 * Decides the requests in `order` (indexes into `requests`, in time order, ties in file order)
 * with every policy, each request at its own time: one pass over the requests per policy, and
 * one more for the group when `options.group` is set.
 */
export function simulate(
  requests: ReplayRequests,
  order: Uint32Array,
  policies: readonly SimulatedPolicy[],
  options: SimulateOptions = {},
): Simulation {
  const { count, clientOf, times } = requests;
  const clients = requests.clientNames.length;
  const requestsOf = new Uint32Array(clients);
  for (let k = 0; k < count; k++) requestsOf[clientOf[k] as number]!++;
  // The requests in time order, once: every pass then reads both arrays front to back.
  const sorted: SortedRequests = { times: new Float64Array(count), clientOf: new Uint32Array(count), count, clients };
  for (let k = 0; k < count; k++) {
    const i = order[k] as number;
    sorted.times[k] = times[i] as number;
    sorted.clientOf[k] = clientOf[i] as number;
  }
  const passes = policies.length + (options.group === true ? 1 : 0);
  const progress = options.progress;
  const results: PolicyCounts[] = [];
  for (const [p, policy] of policies.entries()) {
    const report = progress === undefined ? undefined : (done: number) => progress.replaying(p * count + done, passes * count);
    results.push(decideOne(sorted, policy, options.timeline, report));
  }
  let group: PolicyCounts | undefined;
  if (options.group === true) {
    const report = progress === undefined ? undefined : (done: number) => progress.replaying(policies.length * count + done, passes * count);
    group = decideGroup(sorted, policies, options.timeline, report);
  }
  return { requestsOf, policies: results, group };
}

/** Counts refusals per client, per minute and per bucket, as a pass of decisions goes. */
class Tally {
  readonly rejectedOf: Uint32Array;
  rejected = 0;
  clientsLimited = 0;
  peakRefusedPerMinute = 0;
  peakMinuteMs = Number.NaN;
  #minute = -1;
  #inMinute = 0;
  readonly allowedPerBucket: Uint32Array | undefined;
  readonly refusedPerBucket: Uint32Array | undefined;
  readonly #startMs: number;
  readonly #bucketMs: number;

  constructor(clients: number, timeline: TimelineBuckets | undefined) {
    this.rejectedOf = new Uint32Array(clients);
    if (timeline === undefined) {
      this.#startMs = 0;
      this.#bucketMs = 1;
    } else {
      this.allowedPerBucket = new Uint32Array(timeline.buckets);
      this.refusedPerBucket = new Uint32Array(timeline.buckets);
      this.#startMs = timeline.startMs;
      this.#bucketMs = timeline.bucketMs;
    }
  }

  allowed(time: number): void {
    if (this.allowedPerBucket !== undefined) this.allowedPerBucket[Math.floor((time - this.#startMs) / this.#bucketMs)]!++;
  }

  refused(client: number, time: number): void {
    if (this.rejectedOf[client]!++ === 0) this.clientsLimited++;
    this.rejected++;
    // Times come in order: one counter for the current minute is enough.
    const minute = Math.floor(time / MINUTE_MS);
    if (minute !== this.#minute) {
      this.#minute = minute;
      this.#inMinute = 0;
    }
    if (++this.#inMinute > this.peakRefusedPerMinute) {
      this.peakRefusedPerMinute = this.#inMinute;
      this.peakMinuteMs = minute * MINUTE_MS;
    }
    if (this.refusedPerBucket !== undefined) this.refusedPerBucket[Math.floor((time - this.#startMs) / this.#bucketMs)]!++;
  }

  counts(): PolicyCounts {
    return {
      rejectedOf: this.rejectedOf,
      rejected: this.rejected,
      clientsLimited: this.clientsLimited,
      peakRefusedPerMinute: this.peakRefusedPerMinute,
      peakMinuteMs: this.peakMinuteMs,
      allowedPerBucket: this.allowedPerBucket,
      refusedPerBucket: this.refusedPerBucket,
    };
  }
}

/** The per-client states of one policy, dropped by the strategy's sweep when clear. */
class States {
  readonly of: unknown[];
  live = 0;
  #nextSweep = FIRST_SWEEP;
  readonly #policy: SimulatedPolicy;

  constructor(clients: number, policy: SimulatedPolicy) {
    this.of = new Array<unknown>(clients).fill(undefined);
    this.#policy = policy;
  }

  /** Drops the states that are clear at `now`, once many clients hold one. */
  maybeSweep(now: number): void {
    if (this.live < this.#nextSweep) return;
    const { strategy, quota } = this.#policy;
    const of = this.of;
    for (let c = 0; c < of.length; c++) {
      const state = of[c];
      if (state !== undefined && strategy.sweep(state, now, quota)) {
        of[c] = undefined;
        this.live--;
      }
    }
    this.#nextSweep = Math.max(FIRST_SWEEP, this.live * 2);
  }
}

function decideOne(
  requests: SortedRequests,
  policy: SimulatedPolicy,
  timeline: TimelineBuckets | undefined,
  report: ((done: number) => void) | undefined,
): PolicyCounts {
  const { count, times, clientOf, clients } = requests;
  const { strategy, quota } = policy;
  const tally = new Tally(clients, timeline);
  const states = new States(clients, policy);
  const of = states.of;
  const timed = timeline !== undefined;
  for (let k = 0; k < count; k++) {
    const client = clientOf[k] as number;
    const now = times[k] as number;
    let state = of[client];
    if (state === undefined) {
      state = strategy.createState(quota);
      of[client] = state;
      states.live++;
    }
    if (strategy.consume(state, now, 1, quota).allowed) {
      if (timed) tally.allowed(now);
    } else {
      tally.refused(client, now);
    }
    if ((k & 0xffff) === 0xffff) {
      report?.(k + 1);
      states.maybeSweep(now);
    }
  }
  return tally.counts();
}

/**
 * The policies as one group: a request is allowed when every policy would allow it, and then
 * recorded by each; otherwise refused and recorded by none (`RateLimitGroup`'s all or nothing).
 */
function decideGroup(
  requests: SortedRequests,
  policies: readonly SimulatedPolicy[],
  timeline: TimelineBuckets | undefined,
  report: ((done: number) => void) | undefined,
): PolicyCounts {
  const { count, times, clientOf, clients } = requests;
  const tally = new Tally(clients, timeline);
  const all = policies.map((policy) => new States(clients, policy));
  const n = policies.length;
  for (let k = 0; k < count; k++) {
    const client = clientOf[k] as number;
    const now = times[k] as number;
    let allowed = true;
    for (let p = 0; p < n && allowed; p++) {
      const { strategy, quota } = policies[p] as SimulatedPolicy;
      allowed = strategy.peek((all[p] as States).of[client], now, 1, quota).allowed;
    }
    if (allowed) {
      for (let p = 0; p < n; p++) {
        const { strategy, quota } = policies[p] as SimulatedPolicy;
        const states = all[p] as States;
        let state = states.of[client];
        if (state === undefined) {
          state = strategy.createState(quota);
          states.of[client] = state;
          states.live++;
        }
        strategy.consume(state, now, 1, quota);
      }
      if (timeline !== undefined) tally.allowed(now);
    } else {
      tally.refused(client, now);
    }
    if ((k & 0xffff) === 0xffff) {
      report?.(k + 1);
      for (const states of all) states.maybeSweep(now);
    }
  }
  return tally.counts();
}
