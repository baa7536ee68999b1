/**
 * The replay of an access log, `ratewarden replay`'s work: {@link replay} reads the log
 * (`input.ts`), orders its requests by time (`order.ts`), decides each one with a
 * `RateLimiter` (`simulate.ts`) and sums the outcome up in a {@link ReplaySummary} (the
 * report is `report.ts`'s), to answer "what would this limit have done to my traffic?". Also the
 * options of a replay and their defaults, {@link REPLAY_DEFAULTS}.
 *
 * Memory is about 16 bytes per request (a `Float64Array` of times, a `Uint32Array` of client
 * numbers, the `Uint32Array` sort order), plus one string per distinct client and the limiter's
 * state; no line is kept.
 *
 * @module
 */

import { readInput, type ReplayInput } from './input.js';
import { sortByTime } from './order.js';
import { silentProgress, type ProgressReporter } from './progress.js';
import { RequestCollector, type MalformedLine } from './request-collector.js';
import { createSimulation, type ClientCounts } from './simulate.js';
import { createStrategy, type StrategyName } from './strategies.js';

/** Defaults of the replay options. */
export const REPLAY_DEFAULTS = {
  threshold: 60,
  windowSeconds: 60,
  strategy: 'sliding-window-log' satisfies StrategyName,
  top: 10,
  maxMalformedExamples: 5,
} as const;

/** Options of {@link replay}. */
export interface ReplayOptions {
  /** A path, or a stream of the log's bytes. */
  readonly input: ReplayInput;
  /**
   * Whether the input is gzip-compressed. Default: detected from its first two bytes (the gzip
   * magic number `1f 8b`), for files and streams alike, whatever the file's name.
   */
  readonly gzip?: boolean | undefined;
  /** Requests allowed per window and client: a positive safe integer. Default 60. */
  readonly threshold?: number | undefined;
  /** The window in **seconds**: a whole number of milliseconds from 0.001 to 10^9 (see `createQuota`). Default 60. */
  readonly windowSeconds?: number | undefined;
  /**
   * The algorithm, by name: one of `STRATEGY_NAMES`. Default `"sliding-window-log"`, the
   * exact sliding-window log.
   */
  readonly strategy?: string | undefined;
  /** How many of the most-rejected clients to list. Default 10. */
  readonly top?: number | undefined;
  /** How many malformed lines to keep as examples. Default 5. */
  readonly maxMalformedExamples?: number | undefined;
  /** Receives progress; default: nothing shown. */
  readonly progress?: ProgressReporter | undefined;
  /**
   * The clock timing the replay, in **milliseconds** (only used for `seconds` and
   * `linesPerSecond`). Default `performance.now()`.
   */
  readonly timer?: (() => number) | undefined;
}

/** A client that had requests rejected. */
export interface LimitedClient {
  /** The client address. */
  readonly client: string;
  /** Its rejected requests. */
  readonly rejected: number;
  /** All its requests. */
  readonly requests: number;
}

/** The outcome of {@link replay}. */
export interface ReplaySummary {
  /** Requests allowed per window and client. */
  readonly threshold: number;
  /** The window, in **seconds**. */
  readonly windowSeconds: number;
  /** The limiter's strategy: one of `STRATEGY_NAMES`, such as `"sliding-window-log"`. */
  readonly strategy: string;
  /** Lines read: requests plus malformed lines (empty lines at the end are not counted). */
  readonly lines: number;
  /** Valid lines, each one request. */
  readonly requests: number;
  /** Requests the limiter allowed. */
  readonly allowed: number;
  /** Requests the limiter rejected. */
  readonly rejected: number;
  /** Distinct clients. */
  readonly clients: number;
  /** Clients with at least one rejected request. */
  readonly clientsLimited: number;
  /** Malformed lines, empty lines before the last request included. */
  readonly malformed: number;
  /** The most-rejected clients, most rejected first, ties by client (code-unit order). */
  readonly topLimited: readonly LimitedClient[];
  /** The first malformed lines, in file order. */
  readonly malformedExamples: readonly MalformedLine[];
  /** Time taken by the whole replay (reading included), in **seconds**. */
  readonly seconds: number;
  /** `lines / seconds`; 0 when `seconds` is 0. */
  readonly linesPerSecond: number;
}

/**
 * Replays an access log through a `RateLimiter` with the strategy named by `strategy`
 * (default: the exact sliding-window log): each valid line is one request by its client (the first field) at its time; requests
 * are decided in time order (ties in file order), the limiter's clock set to each request's time.
 *
 * @returns the {@link ReplaySummary}.
 * @throws {ReplayInputError} when the input cannot be read (missing file, permission denied,
 *   a directory, corrupt gzip data).
 * @throws a `RangeError` / `TypeError` naming `strategy` when it is not one of
 *   `STRATEGY_NAMES`.
 * @throws a `RangeError` / `TypeError` from `RateLimiter` for an invalid `threshold`
 *   (including one above the strategy's `maxThreshold`: 1,048,576 for the sliding-window log) or
 *   `windowSeconds`.
 */
export async function replay(options: ReplayOptions): Promise<ReplaySummary> {
  const threshold = options.threshold ?? REPLAY_DEFAULTS.threshold;
  const windowSeconds = options.windowSeconds ?? REPLAY_DEFAULTS.windowSeconds;
  const top = options.top ?? REPLAY_DEFAULTS.top;
  const progress = options.progress ?? silentProgress;
  const timer = options.timer ?? (() => performance.now());
  const input = options.input;

  // Validate the strategy and the limit before reading anything.
  const strategy = createStrategy(options.strategy ?? REPLAY_DEFAULTS.strategy);
  const simulation = createSimulation({ threshold, windowSeconds, strategy });

  const started = timer();
  const collector = new RequestCollector(
    options.maxMalformedExamples ?? REPLAY_DEFAULTS.maxMalformedExamples,
  );
  await readInput(input, options.gzip, collector, progress);

  const count = collector.count;
  const names = collector.clientNames;
  const order = sortByTime(collector.times, count);
  const counts = simulation.run(collector, order, progress);
  const rejected = counts.rejected;

  const limited = limitedClients(counts, names);
  const topLimited = limited.slice(0, top).map((c) => ({
    client: names[c] as string,
    rejected: counts.rejectedOf[c] as number,
    requests: counts.requestsOf[c] as number,
  }));
  const seconds = (timer() - started) / 1000;
  progress.done();

  const lines = count + collector.malformed;
  return {
    threshold,
    windowSeconds,
    strategy: simulation.strategy,
    lines,
    requests: count,
    allowed: count - rejected,
    rejected,
    clients: names.length,
    clientsLimited: limited.length,
    malformed: collector.malformed,
    topLimited,
    malformedExamples: collector.examples,
    seconds,
    linesPerSecond: seconds > 0 ? lines / seconds : 0,
  };
}

/**
 * The numbers of the clients with at least one rejected request, most rejected first, ties by
 * client (code-unit order).
 */
function limitedClients(counts: ClientCounts, names: readonly string[]): number[] {
  const { rejectedOf } = counts;
  const limited: number[] = [];
  for (let c = 0; c < names.length; c++) if (rejectedOf[c]! > 0) limited.push(c);
  limited.sort((a, b) => {
    const byRejected = (rejectedOf[b] as number) - (rejectedOf[a] as number);
    if (byRejected !== 0) return byRejected;
    const nameA = names[a] as string;
    const nameB = names[b] as string;
    return nameA < nameB ? -1 : nameA > nameB ? 1 : 0;
  });
  return limited;
}
