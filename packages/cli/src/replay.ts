/**
 * The replay of an access log, `ratewarden replay`'s work: `loadRequests` (`load-requests.ts`)
 * reads the log once, keys its requests and orders them by time; {@link replay} then decides
 * them with every policy, and with the policies together as one all-or-nothing
 * group (`simulate.ts`), and sums the outcome up in a {@link ReplaySummary} (the reports are
 * `report.ts`'s and `html-report.ts`'s), to answer "what would these limits have done to my
 * traffic?". Also the options of a replay and their defaults, {@link REPLAY_DEFAULTS}.
 *
 * Memory is about 16 bytes per request (a `Float64Array` of times, a `Uint32Array` of client
 * numbers, the `Uint32Array` sort order), plus one string per distinct client and the policies'
 * states; no line is kept.
 *
 * @module
 */

import { createQuota } from 'ratewarden';
import type { Curve } from './report-data.js';
import { curveFor, groupByClient } from './suggest.js';
import { MAX_MALFORMED_EXAMPLES, loadRequests, type LoadOptions, type LoadedRequests } from './load-requests.js';
import { formatWindow, policyName, type Policy } from './policies.js';
import { silentProgress } from './progress.js';
import type { MalformedLine } from './request-collector.js';
import { simulate, type PolicyCounts, type SimulatedPolicy, type TimelineBuckets } from './simulate.js';
import { createStrategy, strategyEntry, type StrategyName } from './strategies.js';

/** Defaults of the replay options. */
export const REPLAY_DEFAULTS = {
  threshold: 60,
  windowSeconds: 60,
  strategy: 'sliding-window-log' satisfies StrategyName,
  top: 10,
  maxMalformedExamples: MAX_MALFORMED_EXAMPLES,
} as const;

/** Options of {@link replay}. */
export interface ReplayOptions extends LoadOptions {
  /**
   * The policies to replay, each with its quota (built by `createQuota` with its strategy's
   * bounds, as the command line's options build it) and strategy (`--limit`, any number of
   * them, at least one). Default: one policy of {@link threshold} per {@link windowSeconds}
   * with {@link strategy}.
   */
  readonly policies?: readonly Policy[] | undefined;
  /** The one policy's threshold when `policies` is not given: a positive safe integer. Default 60. */
  readonly threshold?: number | undefined;
  /** The one policy's window in **seconds** when `policies` is not given: a whole number of milliseconds from 0.001 to 10^9 (see `createQuota`). Default 60. */
  readonly windowSeconds?: number | undefined;
  /**
   * The one policy's algorithm when `policies` is not given, by name: one of `STRATEGY_NAMES`.
   * Default `"sliding-window-log"`, the exact sliding-window log. Also the strategy that policy
   * names leave out (`60/1m` rather than `60/1m:gcra`).
   */
  readonly strategy?: string | undefined;
  /**
   * Also decide the policies together as one all-or-nothing group (a `RateLimitGroup`), as they
   * would run in production. Default: when there are two policies or more.
   */
  readonly group?: boolean | undefined;
  /** Count allowed and refused requests over time, for the HTML report. Default `false`. */
  readonly timeline?: boolean | undefined;
  /**
   * Also compute, for each window and strategy of the policies, the refused share against the
   * threshold (`suggest`'s curve, with the policies' own thresholds), for the HTML report.
   * Default `false`.
   */
  readonly curves?: boolean | undefined;
  /** How many of the most-refused clients to list, per policy. Default 10. */
  readonly top?: number | undefined;
  /**
   * The clock timing the replay, in **milliseconds** (only used for `seconds` and
   * `linesPerSecond`). Default `performance.now()`.
   */
  readonly timer?: (() => number) | undefined;
}

/** A client that had requests rejected. */
export interface LimitedClient {
  /** The client's key (its address, user or field value). */
  readonly client: string;
  /** Its rejected requests. */
  readonly rejected: number;
  /** All its requests. */
  readonly requests: number;
}

/** What one policy (or the group of them) did. */
export interface PolicySummary {
  /** Its name in the report: `60/1m`, `10/1s:gcra`, or `all` for the group. */
  readonly name: string;
  /** Requests allowed per window and client (the group: `NaN`). */
  readonly threshold: number;
  /** The window, in **seconds** (the group: `NaN`). */
  readonly windowSeconds: number;
  /** The strategy's name (the group: `"group"`). */
  readonly strategy: string;
  /** Requests allowed. */
  readonly allowed: number;
  /** Requests refused. */
  readonly rejected: number;
  /** Clients with at least one refused request. */
  readonly clientsLimited: number;
  /** The most refusals in one calendar minute (UTC); 0 when none. */
  readonly peakRefusedPerMinute: number;
  /** The start of that minute in **milliseconds** since the epoch; `NaN` when nothing was refused. */
  readonly peakMinuteMs: number;
  /** The most-refused clients, most refused first, ties by key (code-unit order); the first is the worst. */
  readonly topLimited: readonly LimitedClient[];
  /** Allowed requests per timeline bucket, with `timeline`. */
  readonly allowedPerBucket?: Uint32Array | undefined;
  /** Refused requests per timeline bucket, with `timeline`. */
  readonly refusedPerBucket?: Uint32Array | undefined;
}

/** The outcome of {@link replay}. The first policy's outcome is also at the top level. */
export interface ReplaySummary {
  /** The first policy's threshold. */
  readonly threshold: number;
  /** The first policy's window, in **seconds**. */
  readonly windowSeconds: number;
  /** The first policy's strategy: one of `STRATEGY_NAMES`, such as `"sliding-window-log"`. */
  readonly strategy: string;
  /** Lines read: requests plus malformed lines (empty lines at the end are not counted). */
  readonly lines: number;
  /** Valid lines, each one request. */
  readonly requests: number;
  /** Requests the first policy allowed. */
  readonly allowed: number;
  /** Requests the first policy rejected. */
  readonly rejected: number;
  /** Distinct clients (keys). */
  readonly clients: number;
  /** Clients the first policy limited (at least one rejected request). */
  readonly clientsLimited: number;
  /** Malformed lines, empty lines before the last request included. */
  readonly malformed: number;
  /** The first policy's most-rejected clients. */
  readonly topLimited: readonly LimitedClient[];
  /** Every policy, in the order given. */
  readonly policies: readonly PolicySummary[];
  /** The policies as one all-or-nothing group, when decided (see {@link ReplayOptions.group}). */
  readonly group?: PolicySummary | undefined;
  /** The curves, with `curves`: one per distinct window and strategy of the policies. */
  readonly curves?: readonly Curve[] | undefined;
  /** The timeline's buckets, with `timeline` (the counts are in each {@link PolicySummary}). */
  readonly timeline?: { readonly startMs: number; readonly bucketSeconds: number; readonly buckets: number } | undefined;
  /** The format the lines were read in, such as `"clf"`. */
  readonly format: string;
  /** What a request is keyed by, such as `"client address"`. */
  readonly keyLabel: string;
  /** What a request's time is, such as `"[timestamp]"`. */
  readonly timeLabel: string;
  /** The earliest request time, ms since the epoch; `NaN` when there is none. */
  readonly firstMs: number;
  /** The latest request time, ms since the epoch; `NaN` when there is none. */
  readonly lastMs: number;
  /** The first malformed lines, in file order. */
  readonly malformedExamples: readonly MalformedLine[];
  /** Time taken by the whole replay (reading included), in **seconds**. */
  readonly seconds: number;
  /** `lines / seconds`; 0 when `seconds` is 0. */
  readonly linesPerSecond: number;
}

/** A policy ready to simulate: the policy, a fresh strategy instance, its name in the report. */
interface CheckedPolicy extends SimulatedPolicy {
  readonly policy: Policy;
  readonly name: string;
}

/**
 * The policies of `options`, each with a new instance of its strategy: `policies` as given (their
 * quotas already built), or else one policy whose quota is built here, once, by the library's
 * quota builder from `threshold`, `windowSeconds` and `strategy`.
 *
 * @throws a `RangeError` / `TypeError` naming `strategy` for an unknown strategy, or from
 *   `createQuota` for an invalid threshold (including one above the strategy's `maxThreshold`:
 *   1,048,576 for the sliding-window log) or window; a `RangeError` naming `policies` when it
 *   is empty.
 */
export function checkPolicies(options: Pick<ReplayOptions, 'policies' | 'threshold' | 'windowSeconds' | 'strategy'>): CheckedPolicy[] {
  const fallback = strategyEntry(options.strategy ?? REPLAY_DEFAULTS.strategy).name;
  const policies = options.policies ?? [
    {
      quota: createQuota(
        { threshold: options.threshold ?? REPLAY_DEFAULTS.threshold, windowSeconds: options.windowSeconds ?? REPLAY_DEFAULTS.windowSeconds },
        createStrategy(fallback),
      ),
      strategy: fallback,
    },
  ];
  if (policies.length === 0) throw new RangeError('Expected `policies` to be at least one policy, got none');
  return policies.map((policy) => ({ policy, quota: policy.quota, strategy: createStrategy(policy.strategy), name: policyName(policy, fallback) }));
}

/** Timeline buckets no narrower than this, in seconds: one minute. */
const BUCKET_CHOICES = [60, 300, 900, 3600, 3 * 3600, 6 * 3600, 86_400, 7 * 86_400, 28 * 86_400, 365 * 86_400];
/** At most this many buckets in a timeline (a chart stays readable, the counts small). */
const MAX_BUCKETS = 1500;

/**
 * The buckets of a timeline from `firstMs` to `lastMs`: the narrowest of one minute, 5 and 15
 * minutes, 1, 3 and 6 hours, a day, a week, 28 days and 365 days that needs at most 1,500
 * buckets, aligned on the UTC epoch.
 */
export function timelineBuckets(firstMs: number, lastMs: number): TimelineBuckets {
  if (!(firstMs <= lastMs)) return { startMs: 0, bucketMs: 60_000, buckets: 1 };
  let bucketSeconds = BUCKET_CHOICES[BUCKET_CHOICES.length - 1] as number;
  for (const choice of BUCKET_CHOICES) {
    const ms = choice * 1000;
    if (Math.floor(lastMs / ms) - Math.floor(firstMs / ms) + 1 <= MAX_BUCKETS) {
      bucketSeconds = choice;
      break;
    }
  }
  const bucketMs = bucketSeconds * 1000;
  const startMs = Math.floor(firstMs / bucketMs) * bucketMs;
  return { startMs, bucketMs, buckets: Math.floor((lastMs - startMs) / bucketMs) + 1 };
}

/**
 * Replays an access log through every policy (default: one, the exact sliding-window log at 60
 * per 60 s) and, with two policies or more, through all of them as one all-or-nothing group:
 * each valid line is one request by its key at its time; requests are decided in time order
 * (ties in file order), at their log times. The log is read once, whatever the number of
 * policies.
 *
 * @returns the {@link ReplaySummary}.
 * @throws {ReplayInputError} when the input cannot be read (missing file, permission denied,
 *   a directory, corrupt gzip data).
 * @throws a `RangeError` / `TypeError` (see {@link checkPolicies}) for an invalid policy, before
 *   anything is read.
 */
export async function replay(options: ReplayOptions): Promise<ReplaySummary> {
  const top = options.top ?? REPLAY_DEFAULTS.top;
  const progress = options.progress ?? silentProgress;
  const timer = options.timer ?? (() => performance.now());
  // Validate the policies before reading anything.
  const policies = checkPolicies(options);

  const started = timer();
  const requests = await loadRequests({ ...options, progress });
  const timeline = options.timeline === true ? timelineBuckets(requests.firstMs, requests.lastMs) : undefined;
  const outcome = simulate(requests, requests.order, policies, {
    group: options.group ?? policies.length > 1,
    timeline,
    progress,
  });
  const names = requests.clientNames;
  const summarize = (name: string, policy: Policy | undefined, counts: PolicyCounts): PolicySummary => ({
    name,
    threshold: policy?.quota.threshold ?? Number.NaN,
    windowSeconds: policy?.quota.windowSeconds ?? Number.NaN,
    strategy: policy?.strategy ?? 'group',
    allowed: requests.count - counts.rejected,
    rejected: counts.rejected,
    clientsLimited: counts.clientsLimited,
    peakRefusedPerMinute: counts.peakRefusedPerMinute,
    peakMinuteMs: counts.peakMinuteMs,
    topLimited: limitedClients(counts.rejectedOf, names, top).map((c) => ({
      client: names[c] as string,
      rejected: counts.rejectedOf[c] as number,
      requests: outcome.requestsOf[c] as number,
    })),
    allowedPerBucket: counts.allowedPerBucket,
    refusedPerBucket: counts.refusedPerBucket,
  });
  const summaries = policies.map((checked, p) => summarize(checked.name, checked.policy, outcome.policies[p] as PolicyCounts));
  const group = outcome.group === undefined ? undefined : summarize('all', undefined, outcome.group);
  const curves = options.curves === true ? policyCurves(requests, policies.map((p) => p.policy)) : undefined;
  const seconds = (timer() - started) / 1000;
  progress.done();

  const first = summaries[0] as PolicySummary;
  const { lines } = requests;
  return {
    threshold: first.threshold,
    windowSeconds: first.windowSeconds,
    strategy: first.strategy,
    lines,
    requests: requests.count,
    allowed: first.allowed,
    rejected: first.rejected,
    clients: names.length,
    clientsLimited: first.clientsLimited,
    malformed: requests.malformed,
    topLimited: first.topLimited,
    policies: summaries,
    group,
    curves,
    timeline: timeline === undefined ? undefined : { startMs: timeline.startMs, bucketSeconds: timeline.bucketMs / 1000, buckets: timeline.buckets },
    format: requests.format,
    keyLabel: requests.keyLabel,
    timeLabel: requests.timeLabel,
    firstMs: requests.firstMs,
    lastMs: requests.lastMs,
    malformedExamples: requests.malformedExamples,
    seconds,
    linesPerSecond: seconds > 0 ? lines / seconds : 0,
  };
}

/**
 * The numbers of the `top` clients with the most refused requests (at least one), most refused
 * first, ties by key (code-unit order). O(clients) when `top` is small.
 */
export function limitedClients(rejectedOf: Uint32Array, names: readonly string[], top: number): number[] {
  const limited: number[] = [];
  for (let c = 0; c < names.length; c++) if (rejectedOf[c]! > 0) limited.push(c);
  limited.sort((a, b) => {
    const byRejected = (rejectedOf[b] as number) - (rejectedOf[a] as number);
    if (byRejected !== 0) return byRejected;
    const nameA = names[a] as string;
    const nameB = names[b] as string;
    return nameA < nameB ? -1 : nameA > nameB ? 1 : 0;
  });
  return limited.slice(0, top);
}

/** One refused-share curve per distinct window and strategy of `policies`, with their thresholds marked. */
function policyCurves(requests: LoadedRequests, policies: readonly Policy[]): Curve[] {
  const runs = groupByClient(requests.times, requests.clientOf, requests.order, requests.count, requests.clientNames.length);
  const byCurve = new Map<string, Policy[]>();
  for (const policy of policies) {
    const id = `${policy.quota.windowSeconds} ${policy.strategy}`;
    byCurve.set(id, [...(byCurve.get(id) ?? []), policy]);
  }
  return [...byCurve.values()].map((same) => {
    const { quota, strategy } = same[0] as Policy;
    const { windowSeconds } = quota;
    return {
      label: `per ${formatWindow(windowSeconds)}, ${strategy}`,
      windowSeconds,
      strategy,
      points: curveFor(runs, windowSeconds, strategy, same.map((s) => s.quota.threshold)),
      marked: same.map((s) => s.quota.threshold),
    };
  });
}
