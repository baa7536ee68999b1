/**
 * `ratewarden suggest` from end to end ({@link suggest}): reads the log once (as the replay
 * does), finds for each window and strategy the smallest threshold meeting the goals
 * (`suggest.ts`), describes the log the answers are read from (its span, its busiest hour), and,
 * for the HTML report, replays the suggested policies.
 *
 * @module
 */

import { createQuota } from 'ratewarden';
import { policyName, type Policy } from './policies.js';
import { silentProgress } from './progress.js';
import { loadRequests, type LoadOptions } from './load-requests.js';
import { REPLAY_DEFAULTS, limitedClients, timelineBuckets, type LimitedClient } from './replay.js';
import { simulate, type PolicyCounts } from './simulate.js';
import { createStrategy, type StrategyName } from './strategies.js';
import { busiestHour, groupByClient, suggestThreshold, type BusiestHour, type SuggestAnswer, type SuggestGoal } from './suggest.js';
import type { MalformedLine } from './request-collector.js';

/** Defaults of `suggest`. */
export const SUGGEST_DEFAULTS = {
  /** At most 1% of clients limited. */
  goal: { kind: 'clients-limited', share: 0.01 } as SuggestGoal,
} as const;

/** Options of {@link suggest}. */
export interface SuggestOptions extends LoadOptions {
  /** The windows, in **seconds** (each a whole number of ms from 0.001 to 10^9). Default `[60]`. */
  readonly windows?: readonly number[] | undefined;
  /** The strategies, by name. Default `["sliding-window-log"]`. */
  readonly strategies?: readonly StrategyName[] | undefined;
  /** The goals every answer must meet (at least one). Default: at most 1% of clients limited. */
  readonly goals?: readonly SuggestGoal[] | undefined;
  /**
   * Also replay each answer as a policy, over time and per client (for the HTML report).
   * Default `false`.
   */
  readonly replayAnswers?: boolean | undefined;
  /** How many of the most-refused clients to list per replayed answer. Default 10. */
  readonly top?: number | undefined;
  /** The clock timing the run, in **milliseconds**. Default `performance.now()`. */
  readonly timer?: (() => number) | undefined;
}

/** A suggested policy replayed (with `replayAnswers`). */
export interface ReplayedAnswer {
  /** The policy's name, such as `33/1m`. */
  readonly name: string;
  /** Its most-refused clients. */
  readonly topLimited: readonly LimitedClient[];
  /** Allowed requests per timeline bucket. */
  readonly allowedPerBucket: Uint32Array;
  /** Refused requests per timeline bucket. */
  readonly refusedPerBucket: Uint32Array;
}

/** The outcome of {@link suggest}. */
export interface SuggestSummary {
  /** Lines read: requests plus malformed lines. */
  readonly lines: number;
  /** Valid lines, each one request. */
  readonly requests: number;
  /** Distinct clients (keys). */
  readonly clients: number;
  /** Malformed lines. */
  readonly malformed: number;
  /** The first malformed lines, in file order. */
  readonly malformedExamples: readonly MalformedLine[];
  /** The format the lines were read in. */
  readonly format: string;
  /** What a request is keyed by. */
  readonly keyLabel: string;
  /** What a request's time is. */
  readonly timeLabel: string;
  /** The earliest request time, ms since the epoch; `NaN` when none. */
  readonly firstMs: number;
  /** The latest request time, ms since the epoch; `NaN` when none. */
  readonly lastMs: number;
  /** The busiest calendar hour (UTC); `undefined` when there is no request. */
  readonly busiestHour: BusiestHour | undefined;
  /** The goals the answers meet. */
  readonly goals: readonly SuggestGoal[];
  /** One answer per window and strategy: windows in the order given, then strategies. */
  readonly answers: readonly SuggestAnswer[];
  /** The answers replayed, with `replayAnswers` (those with a threshold). */
  readonly replayed?: readonly ReplayedAnswer[] | undefined;
  /** The timeline's buckets of {@link replayed}. */
  readonly timeline?: { readonly startMs: number; readonly bucketSeconds: number; readonly buckets: number } | undefined;
  /** Time taken (reading included), in **seconds**. */
  readonly seconds: number;
  /** `lines / seconds`; 0 when `seconds` is 0. */
  readonly linesPerSecond: number;
}

/**
 * Finds, for each window and strategy, the smallest threshold meeting every goal on the log.
 *
 * @throws {ReplayInputError} when the input cannot be read.
 * @throws a `RangeError` / `TypeError` for an invalid window or strategy, or a goal's share not
 *   from 0 to 1, before anything is read.
 */
export async function suggest(options: SuggestOptions): Promise<SuggestSummary> {
  const windows = options.windows ?? [REPLAY_DEFAULTS.windowSeconds];
  const strategies = options.strategies ?? [REPLAY_DEFAULTS.strategy];
  const goals = options.goals ?? [SUGGEST_DEFAULTS.goal];
  const timer = options.timer ?? (() => performance.now());
  const progress = options.progress ?? silentProgress;
  // Check before reading: every window with every strategy, every goal.
  for (const name of strategies) {
    const strategy = createStrategy(name);
    for (const windowSeconds of windows) createQuota({ threshold: 1, windowSeconds }, strategy);
  }
  if (goals.length === 0) throw new RangeError('Expected `goals` to hold at least one goal, got none');
  for (const goal of goals) {
    if (!(goal.share >= 0 && goal.share <= 1)) throw new RangeError(`Expected a goal's share to be from 0 to 1, got ${goal.share}`);
  }

  const started = timer();
  const requests = await loadRequests({ ...options, progress });
  const clients = requests.clientNames.length;
  const runs = groupByClient(requests.times, requests.clientOf, requests.order, requests.count, clients);
  const answers: SuggestAnswer[] = [];
  for (const windowSeconds of windows) {
    for (const strategy of strategies) answers.push(suggestThreshold(runs, windowSeconds, strategy, goals));
  }

  let replayed: ReplayedAnswer[] | undefined;
  let timeline: SuggestSummary['timeline'];
  if (options.replayAnswers === true) {
    // Each answer's quota, built once, and a strategy instance of its own to replay it.
    const specs: Policy[] = answers.flatMap((a) =>
      a.threshold === undefined ? [] : [{ quota: createQuota({ threshold: a.threshold, windowSeconds: a.windowSeconds }, createStrategy(a.strategy)), strategy: a.strategy }],
    );
    const buckets = timelineBuckets(requests.firstMs, requests.lastMs);
    timeline = { startMs: buckets.startMs, bucketSeconds: buckets.bucketMs / 1000, buckets: buckets.buckets };
    const policies = specs.map((spec) => ({ strategy: createStrategy(spec.strategy), quota: spec.quota }));
    const outcome = simulate(requests, requests.order, policies, { timeline: buckets });
    const names = requests.clientNames;
    const top = options.top ?? REPLAY_DEFAULTS.top;
    replayed = specs.map((spec, p) => {
      const counts = outcome.policies[p] as PolicyCounts;
      return {
        name: policyName(spec, REPLAY_DEFAULTS.strategy),
        topLimited: limitedClients(counts.rejectedOf, names, top).map((c) => ({
          client: names[c] as string,
          rejected: counts.rejectedOf[c] as number,
          requests: outcome.requestsOf[c] as number,
        })),
        allowedPerBucket: counts.allowedPerBucket as Uint32Array,
        refusedPerBucket: counts.refusedPerBucket as Uint32Array,
      };
    });
  }
  const seconds = (timer() - started) / 1000;
  progress.done();
  return {
    lines: requests.lines,
    requests: requests.count,
    clients,
    malformed: requests.malformed,
    malformedExamples: requests.malformedExamples,
    format: requests.format,
    keyLabel: requests.keyLabel,
    timeLabel: requests.timeLabel,
    firstMs: requests.firstMs,
    lastMs: requests.lastMs,
    busiestHour: busiestHour(requests.times, requests.clientOf, requests.order, requests.count, clients),
    goals,
    answers,
    replayed,
    timeline,
    seconds,
    linesPerSecond: seconds > 0 ? requests.lines / seconds : 0,
  };
}
