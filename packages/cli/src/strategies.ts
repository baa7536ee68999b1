/**
 * The strategies a replay can use, by name: {@link STRATEGY_NAMES}, the check of a name
 * ({@link isStrategyName}) and a new instance of the strategy a name stands for
 * ({@link createStrategy}).
 *
 * @module
 */

import { rangeError, typeError } from './errors.js';
import { FixedWindow, GCRA, SlidingWindowCounter, SlidingWindowLog, TokenBucket, type RateLimitStrategy } from 'ratewarden';

/** The names of the strategies a replay can use, the default first. */
export const STRATEGY_NAMES = [
  'sliding-window-log',
  'sliding-window-counter',
  'fixed-window',
  'token-bucket',
  'gcra',
] as const;

/** One of {@link STRATEGY_NAMES}. */
export type StrategyName = (typeof STRATEGY_NAMES)[number];

/**
 * The strategy class of each name. The type checks that each class's `name` is its key.
 */
const STRATEGY_CLASSES: {
  readonly [K in StrategyName]: new () => RateLimitStrategy<unknown> & { readonly name: K };
} = {
  'sliding-window-log': SlidingWindowLog,
  'sliding-window-counter': SlidingWindowCounter,
  'fixed-window': FixedWindow,
  'token-bucket': TokenBucket,
  gcra: GCRA,
};

/** Whether `name` is one of {@link STRATEGY_NAMES} (an own name, not `toString` and the like). */
export function isStrategyName(name: unknown): name is StrategyName {
  return typeof name === 'string' && (STRATEGY_NAMES as readonly string[]).includes(name);
}

/**
 * A new instance of the strategy called `name`.
 *
 * @throws {RateWardenTypeError} (a `TypeError`) naming `strategy` when `name` is not a string.
 * @throws {RateWardenRangeError} (a `RangeError`) naming `strategy` when it is not one of
 *   {@link STRATEGY_NAMES}.
 */
export function createStrategy(name: unknown): RateLimitStrategy<unknown> {
  if (typeof name !== 'string') throw typeError('strategy', `one of ${STRATEGY_NAMES.join(', ')}`, name);
  if (!isStrategyName(name)) throw rangeError('strategy', `one of ${STRATEGY_NAMES.join(', ')}`, name);
  return new STRATEGY_CLASSES[name]();
}
