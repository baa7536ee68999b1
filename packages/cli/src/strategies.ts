/**
 * The registry of the strategies a replay can use ({@link STRATEGIES}): one entry per strategy,
 * and everything the CLI knows about a strategy is read from its entry — its name (`--strategy`,
 * `--limit …:NAME`), a new instance of it ({@link createStrategy}), its line in `--help`, and the
 * facts `suggest` relies on to decide fewer thresholds ({@link StrategyEntry.peakExact},
 * {@link StrategyEntry.clientsLimitedFromPeaks}, {@link StrategyEntry.monotone}). A new strategy is
 * its class (the library's, or a module of its own) plus one entry here; nothing else compares
 * strategy names.
 *
 * @module
 */

import { rangeError, typeError } from './errors.js';
import { FixedWindow, GCRA, SlidingWindowCounter, SlidingWindowLog, TokenBucket, type RateLimitStrategy } from 'ratewarden';

/** What the CLI knows of one strategy: one entry of {@link STRATEGIES}. */
export interface StrategyEntry<Name extends string = string> {
  /** Its name on the command line (`--strategy NAME`, `--limit 60/1m:NAME`): the instance's `name`. */
  readonly name: Name;
  /** A new instance, with fresh state (each policy gets its own). */
  create(): RateLimitStrategy<unknown> & { readonly name: Name };
  /** A few words on it for `ratewarden replay --help` (at most 50 characters: one help line). */
  readonly help: string;
  /**
   * Refuses nothing of a client whose **peak** — the most requests it sent in any window
   * `(t - window, t]` — is at most the threshold (the sliding-window log: a full window needs
   * more than the threshold in one window; the fixed window: its windows lie within sliding
   * ones). `suggest` then skips such clients at such thresholds, and its first grid, up to the
   * largest peak, always reaches a threshold that refuses nothing (no doubling beyond it).
   */
  readonly peakExact: boolean;
  /**
   * Limits a client at a threshold **exactly when** its peak is above it (the sliding-window log:
   * its first request past the peak finds the window full), so the share of clients limited at
   * every threshold is read from the peaks, and `suggest` adds that exact answer to its first
   * pass. Implies {@link peakExact}.
   */
  readonly clientsLimitedFromPeaks: boolean;
  /**
   * Whether a larger threshold refuses no more requests than a smaller one, on any log:
   * `proven` (its allowed requests grow with the threshold) or `assumed` (`suggest`'s bracket
   * search relies on it all the same).
   */
  readonly monotone: 'proven' | 'assumed';
}

/** An entry, its name kept as a literal type. */
function entry<const Name extends string>(value: StrategyEntry<Name>): StrategyEntry<Name> {
  return value;
}

/**
 * The strategies, the default first (the order of `--help` and of the usage errors' lists).
 */
export const STRATEGIES = [
  entry({
    name: 'sliding-window-log',
    create: () => new SlidingWindowLog(),
    help: `exact: at most N in any window; N up to ${new SlidingWindowLog().maxThreshold}`,
    peakExact: true,
    clientsLimitedFromPeaks: true,
    monotone: 'proven',
  }),
  entry({
    name: 'sliding-window-counter',
    create: () => new SlidingWindowCounter(),
    help: 'this window + the last one, weighted; an estimate',
    peakExact: false,
    clientsLimitedFromPeaks: false,
    monotone: 'assumed',
  }),
  entry({
    name: 'fixed-window',
    create: () => new FixedWindow(),
    help: 'a counter reset every window; 2N at a boundary',
    peakExact: true,
    clientsLimitedFromPeaks: false,
    monotone: 'proven',
  }),
  entry({
    name: 'token-bucket',
    create: () => new TokenBucket(),
    help: 'N tokens, refilled at N per window; bursts of N',
    peakExact: false,
    clientsLimitedFromPeaks: false,
    monotone: 'proven',
  }),
  entry({
    name: 'gcra',
    create: () => new GCRA(),
    help: 'one timestamp per client; decides as token-bucket',
    peakExact: false,
    clientsLimitedFromPeaks: false,
    monotone: 'proven',
  }),
] as const;

/** One of the strategies' names. */
export type StrategyName = (typeof STRATEGIES)[number]['name'];

/** The names of the strategies, the default first. */
export const STRATEGY_NAMES: readonly StrategyName[] = STRATEGIES.map((s) => s.name);

/** Whether `name` is one of {@link STRATEGY_NAMES} (an own name, not `toString` and the like). */
export function isStrategyName(name: unknown): name is StrategyName {
  return typeof name === 'string' && (STRATEGY_NAMES as readonly string[]).includes(name);
}

/**
 * The registry's entry of the strategy called `name`.
 *
 * @throws {RateWardenTypeError} (a `TypeError`) naming `strategy` when `name` is not a string.
 * @throws {RateWardenRangeError} (a `RangeError`) naming `strategy` when it is not one of
 *   {@link STRATEGY_NAMES}.
 */
export function strategyEntry(name: unknown): StrategyEntry<StrategyName> {
  if (typeof name !== 'string') throw typeError('strategy', `one of ${STRATEGY_NAMES.join(', ')}`, name);
  const found = STRATEGIES.find((s) => s.name === name);
  if (found === undefined) throw rangeError('strategy', `one of ${STRATEGY_NAMES.join(', ')}`, name);
  return found;
}

/**
 * A new instance of the strategy called `name`.
 *
 * @throws {RateWardenTypeError} (a `TypeError`) naming `strategy` when `name` is not a string.
 * @throws {RateWardenRangeError} (a `RangeError`) naming `strategy` when it is not one of
 *   {@link STRATEGY_NAMES}.
 */
export function createStrategy(name: unknown): RateLimitStrategy<unknown> {
  return strategyEntry(name).create();
}
