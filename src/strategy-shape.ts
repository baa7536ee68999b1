/**
 * Telling the two strategy contracts apart — an in-memory `RateLimitStrategy` has `createState`
 * and `sweep`, a `RateLimitStore` has neither — and checking a strategy's members, each read
 * once, for the `RateLimiter` constructor.
 *
 * @module
 */
import { checkObject, checkPositiveInteger, typeError } from './errors.js';
import { checkSeconds, type QuotaBounds } from './quota.js';

/** @internal What the constructor reads of a strategy or store, once (a getter is not asked twice). */
export interface StrategyShape extends QuotaBounds {
  /** Whether it is an in-memory strategy (`createState` and `sweep`), not a store. */
  readonly inMemory: boolean;
  /** A store's `atomic` (`false` when absent, and for an in-memory strategy). */
  readonly atomic: boolean;
}

/**
 * @internal Checks that `strategy` has the shape of a `RateLimitStrategy` (`createState`, `consume`,
 * `peek`, `sweep`) or of a `RateLimitStore` (`consume`, `peek`, no `createState` or
 * `sweep`), a `name`, and valid bounds; reads each member once.
 * @throws {RateWardenTypeError} naming the member that is missing or of the wrong type.
 * @throws {RateWardenRangeError} naming `strategy.maxThreshold` or
 *   `strategy.maxThresholdTimesWindowMs` (positive safe integers) or `strategy.maxWindowSeconds`
 *   (a finite number of seconds, at least 0.001) when out of range.
 */
export function checkStrategy(strategy: unknown): StrategyShape {
  checkObject('strategy', strategy, 'an object implementing RateLimitStrategy or RateLimitStore');
  const s = strategy as Record<string, unknown>;
  const inMemory = s.createState !== undefined || s.sweep !== undefined;
  for (const method of inMemory ? (['createState', 'consume', 'peek', 'sweep'] as const) : (['consume', 'peek'] as const)) {
    const member = s[method];
    if (typeof member !== 'function') throw typeError(`strategy.${method}`, 'a function', member);
  }
  const name = s.name;
  if (typeof name !== 'string') throw typeError('strategy.name', 'a string', name);
  const maxThreshold = s.maxThreshold;
  if (maxThreshold !== undefined) checkPositiveInteger('strategy.maxThreshold', maxThreshold);
  const maxWindowSeconds = s.maxWindowSeconds;
  if (maxWindowSeconds !== undefined) checkSeconds('strategy.maxWindowSeconds', maxWindowSeconds);
  const maxProduct = s.maxThresholdTimesWindowMs;
  if (maxProduct !== undefined) checkPositiveInteger('strategy.maxThresholdTimesWindowMs', maxProduct);
  const atomic = inMemory ? undefined : s.atomic;
  if (atomic !== undefined && typeof atomic !== 'boolean') throw typeError('strategy.atomic', 'a boolean or undefined', atomic);
  return {
    inMemory,
    atomic: atomic === true,
    name,
    maxThreshold: maxThreshold as number | undefined,
    maxWindowSeconds: maxWindowSeconds as number | undefined,
    maxThresholdTimesWindowMs: maxProduct as number | undefined,
  };
}
