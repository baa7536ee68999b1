/**
 * Tiers: the quota of each decision, chosen per user by the `limitFor` option and validated once
 * per object it returns.
 *
 * @module
 */
import { checkKnownKeys, checkObject } from './errors.js';
import { buildQuota, QUOTA_OPTIONS, type Quota, type QuotaBounds, type QuotaNames, type QuotaOptions } from './quota.js';
import type { User } from './request.js';

/** The `limitFor` option of `RateLimiter`: a user's quota, or `undefined` for the default. */
export type LimitFor = (user: User | string, key: string) => QuotaOptions | undefined;

const TIER_NAMES: QuotaNames = {
  threshold: 'limitFor().threshold',
  windowSeconds: 'limitFor().windowSeconds',
  tier: 'limitFor().tier',
  blockSeconds: 'limitFor().blockSeconds',
  extendBlock: 'limitFor().extendBlock',
};

/**
 * @internal Resolves `limitFor` to validated quotas, cached by the identity of the object it
 * returns (so a tier object is validated once and the same object always gives the same quota).
 */
export class Tiers {
  readonly #limitFor: LimitFor;
  readonly #fallback: Quota;
  readonly #bounds: QuotaBounds;
  readonly #quotas = new WeakMap<object, Quota>();
  /**
   * Called with each quota built from an object `limitFor` returned, before it is cached: the
   * decider's check of what the tier needs (a store that blocks, for `blockSeconds`). What it
   * throws fails the decision, and the object is checked again at its next use.
   */
  onQuota: ((quota: Quota) => void) | undefined;

  /**
   * @param limitFor - the user's function.
   * @param fallback - the quota when it returns `undefined`.
   * @param bounds - the strategy's bounds, checked for every tier.
   */
  constructor(limitFor: LimitFor, fallback: Quota, bounds: QuotaBounds) {
    this.#limitFor = limitFor;
    this.#fallback = fallback;
    this.#bounds = bounds;
  }

  /**
   * The quota for `user`.
   * @throws what `limitFor` throws; a `TypeError` naming `limitFor()` when it returns neither an
   *   object nor `undefined`, or an object with a key that is not a {@link QuotaOptions} field
   *   (code `ERR_RATEWARDEN_UNKNOWN_OPTION`); a `TypeError` / `RangeError` naming `limitFor().threshold`,
   *   `limitFor().windowSeconds`, `limitFor().tier`, `limitFor().blockSeconds` or
   *   `limitFor().extendBlock` when the returned quota is invalid; what {@link onQuota} throws.
   */
  quotaFor(user: User | string, key: string): Quota {
    const chosen: unknown = this.#limitFor(user, key);
    if (chosen === undefined) return this.#fallback;
    checkObject('limitFor()', chosen, 'a QuotaOptions object or undefined');
    let quota = this.#quotas.get(chosen);
    if (quota === undefined) {
      checkKnownKeys(chosen, QUOTA_OPTIONS, 'the quota returned by limitFor()');
      quota = buildQuota(chosen as QuotaOptions, this.#bounds, TIER_NAMES);
      this.onQuota?.(quota);
      this.#quotas.set(chosen, quota);
    }
    return quota;
  }
}
