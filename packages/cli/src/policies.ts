/**
 * The policies of a replay, as the command line writes them: `--limit 60/60s`, `--limit
 * 1000/1h:gcra` ({@link parseLimit}), durations such as `60s`, `1m`, `1.5h` ({@link parseDuration})
 * and how a policy is named in the report ({@link policyName}, {@link formatWindow}).
 *
 * @module
 */

import type { Quota } from 'ratewarden';
import { STRATEGY_NAMES, isStrategyName, type StrategyName } from './strategies.js';

/**
 * A policy: `quota.threshold` requests per `quota.windowSeconds` per client, decided by
 * `strategy`. Its quota is built once, by the library's `createQuota` with the strategy's
 * bounds (by the command line's options, or by `checkPolicies` for `replay()`'s own options),
 * and used as it is by the replay.
 */
export interface Policy {
  /** The limit, checked against the strategy's bounds. */
  readonly quota: Quota;
  /** The algorithm's name, one of `STRATEGY_NAMES`. */
  readonly strategy: StrategyName;
}

/** Seconds per duration unit. */
const UNITS: Readonly<Record<string, number>> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86_400 };

/** What `--limit` expects, as the usage errors say it. */
export const LIMIT_EXPECTED = 'N/DURATION or N/DURATION:STRATEGY, such as 60/60s, 1000/1h or 10/1s:gcra';

/** What a duration is, as the usage errors say it. */
export const DURATION_EXPECTED = 'a duration such as 500ms, 60s, 60 (seconds), 15m, 1h or 1d';

/**
 * A duration as written on the command line, in **seconds**: a decimal number followed by a unit
 * `ms`, `s`, `m`, `h` or `d` (`60s`, `1.5h`, `500ms`), a bare number of seconds (`60`), or a unit
 * alone for one of it (`s`, `h`: as in `10/s`). The value is not range-checked here (the quota
 * is).
 *
 * @returns the seconds, or `undefined` when `text` is not a duration.
 */
export function parseDuration(text: string): number | undefined {
  const match = /^((?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)?(ms|s|m|h|d)?$/.exec(text);
  if (match === null || (match[1] === undefined && match[2] === undefined)) return undefined;
  const value = match[1] === undefined ? 1 : Number(match[1]);
  const unit = UNITS[match[2] ?? 's'] as number;
  // Whole milliseconds stay exact: 1.5h is 5400 s, 0.017s is 0.017 s.
  return unit < 1 ? value / 1000 : value * unit;
}

/** The parts of a `--limit` value, before the quota checks them. */
export interface LimitParts {
  /** The threshold as written, a number when it is one. */
  readonly threshold: number | string;
  /** The window in seconds. */
  readonly windowSeconds: number;
  /** The strategy, when the value names one. */
  readonly strategy: StrategyName | undefined;
}

/**
 * Splits a `--limit` value, `N/DURATION` with an optional `:STRATEGY` (`60/60s`,
 * `1000/1h:token-bucket`, `10/s`).
 *
 * @returns the parts, or a reason why `text` is not a limit.
 */
export function parseLimit(text: string): LimitParts | string {
  const colon = text.indexOf(':');
  const rate = colon === -1 ? text : text.slice(0, colon);
  const strategy = colon === -1 ? undefined : text.slice(colon + 1);
  if (strategy !== undefined && !isStrategyName(strategy)) {
    return `its strategy \`${strategy}\` is not one of ${STRATEGY_NAMES.join(', ')}`;
  }
  const slash = rate.indexOf('/');
  if (slash === -1) return 'it has no /DURATION';
  const thresholdText = rate.slice(0, slash);
  const windowSeconds = parseDuration(rate.slice(slash + 1));
  if (windowSeconds === undefined) return `its window \`${rate.slice(slash + 1)}\` is not ${DURATION_EXPECTED}`;
  const threshold = /^[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?$/.test(thresholdText) ? Number(thresholdText) : thresholdText;
  return { threshold, windowSeconds, strategy };
}

/**
 * A window as the report writes it: the largest unit that divides it (`1h`, `90s`, `1.5s`,
 * `250ms`), so that `--limit` reads it back to the same window.
 */
export function formatWindow(windowSeconds: number): string {
  const ms = Math.round(windowSeconds * 1000);
  if (ms % 86_400_000 === 0) return `${ms / 86_400_000}d`;
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0 || ms > 1000) return `${ms / 1000}s`;
  return `${ms}ms`;
}

/** A policy's name in the report: `60/1m`, or `60/1m:gcra` when its strategy is not `defaultStrategy`. */
export function policyName(policy: Policy, defaultStrategy: StrategyName): string {
  const rate = `${policy.quota.threshold}/${formatWindow(policy.quota.windowSeconds)}`;
  return policy.strategy === defaultStrategy ? rate : `${rate}:${policy.strategy}`;
}
