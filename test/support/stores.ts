// Stores for tests of the store contract (RateLimitStore): state in a Map of the store's own,
// reached through awaits, as a store in another process would be.
import type { Quota, RateLimitResult, RateLimitStore, RateLimitStrategy } from '../../src/index.js';

/** Lets other promise jobs run, as a round trip to a store would. */
export async function roundTrip(turns = 3): Promise<void> {
  for (let i = 0; i < turns; i++) await Promise.resolve();
}

/**
 * A fixed-count store whose check and record are separated by awaits — read → await → decide →
 * write — like a store without atomic operations. Not atomic on its own: the limiter's per-key
 * mutex is what keeps it exact.
 */
export class AwaitingCounter implements RateLimitStore {
  readonly name = 'awaiting-counter';
  /** The count of each key, as the store holds it. */
  readonly counts = new Map<string, number>();
  /** When set, consume waits for this promise between read and write, for the key `blocked`. */
  gate: Promise<void> | undefined;
  /** When set, consume throws (after the read, before any write) for this key. */
  failFor: string | undefined;
  /**
   * When set, called at the start of each consume, before its awaits: a test makes other calls
   * there, while the caller (a group recording) awaits the store.
   */
  beforeConsume: ((key: string) => void) | undefined;

  async consume(key: string, _now: number, cost: number, quota: Quota): Promise<RateLimitResult> {
    this.beforeConsume?.(key);
    const seen = this.counts.get(key) ?? 0;
    await roundTrip();
    if (this.gate !== undefined && key === 'blocked') await this.gate;
    if (this.failFor === key) throw new Error(`store unavailable for ${key}`);
    if (seen + cost > quota.threshold) {
      return { allowed: false, remaining: quota.threshold - seen, retryAfter: 1, limit: quota.threshold, resetAfter: 1 };
    }
    this.counts.set(key, seen + cost);
    return { allowed: true, remaining: quota.threshold - seen - cost, retryAfter: 0, limit: quota.threshold, resetAfter: 1 };
  }

  async peek(key: string, _now: number, cost: number, quota: Quota): Promise<RateLimitResult> {
    await roundTrip(2);
    const seen = this.counts.get(key) ?? 0;
    const allowed = seen + cost <= quota.threshold;
    return { allowed, remaining: quota.threshold - seen, retryAfter: allowed ? 0 : 1, limit: quota.threshold, resetAfter: 0 };
  }
}

/**
 * An in-memory strategy behind a store: the same algorithm and the same decisions, with the
 * per-key state in the store's own Map and an await before each decision. `atomic: true` makes
 * the limiter call it without its per-key lock.
 */
export class AwaitingStore<State> implements RateLimitStore {
  readonly name: string;
  readonly atomic: boolean;
  readonly maxThreshold: number;
  /** The state of each key, as the store holds it. */
  readonly states = new Map<string, State>();
  readonly #strategy: RateLimitStrategy<State>;
  /** When set, called at the start of each consume, before its awaits (as {@link AwaitingCounter}'s). */
  beforeConsume: ((key: string) => void) | undefined;

  constructor(strategy: RateLimitStrategy<State>, options: { atomic?: boolean; name?: string } = {}) {
    this.#strategy = strategy;
    this.name = options.name ?? `awaiting-${strategy.name}`;
    this.atomic = options.atomic ?? false;
    this.maxThreshold = strategy.maxThreshold ?? Number.MAX_SAFE_INTEGER;
  }

  async consume(key: string, now: number, cost: number, quota: Quota): Promise<RateLimitResult> {
    this.beforeConsume?.(key);
    await roundTrip();
    const state = this.states.get(key) ?? this.#strategy.createState(quota);
    const result = this.#strategy.consume(state, now, cost, quota);
    if (result.allowed) this.states.set(key, state);
    return result;
  }

  async peek(key: string, now: number, cost: number, quota: Quota): Promise<RateLimitResult> {
    await roundTrip(2);
    return this.#strategy.peek(this.states.get(key), now, cost, quota);
  }
}

/** A store that is down: every decision rejects with an `Error('store down')`. */
export const storeDown: RateLimitStore = {
  name: 'down',
  consume: () => Promise.reject(new Error('store down')),
  peek: () => Promise.reject(new Error('store down')),
};
