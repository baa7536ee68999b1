// A RefundingStore test double over an in-memory Map, with an `await` inside every operation
// (between reading and writing), so that only the limiter's per-key lock keeps it exact: a
// counter per key, for the limiter's store path of reserve / refund / penalty (issue 22).
import type { BatchRequest, Quota, RateLimitResult, RefundingStore, StoreBatch, StoreReservation } from '../../src/index.js';

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** One counter per key, never expiring (enough for the limiter's plumbing); not atomic. */
export class MapRefundingStore implements RefundingStore {
  readonly name = 'map-refunding-store';
  readonly blocks = true as const;
  readonly counts = new Map<string, number>();
  /** The highest count any key reached, and whether one went below 0. */
  highest = 0;
  negative = false;
  readonly batch: StoreBatch & { readonly stores: MapRefundingStore[] };

  constructor(batch?: StoreBatch & { readonly stores: MapRefundingStore[] }) {
    this.batch = batch ?? { stores: [], decideAll: () => Promise.reject(new Error('no batch')) };
  }

  #result(n: number, allowed: boolean, quota: Quota): RateLimitResult {
    return { allowed, remaining: Math.max(0, quota.threshold - n), retryAfter: allowed ? 0 : quota.windowSeconds, limit: quota.threshold, resetAfter: 0 };
  }

  #set(key: string, n: number): void {
    this.counts.set(key, n);
    if (n > this.highest) this.highest = n;
    if (n < 0) this.negative = true;
  }

  async consume(key: string, nowMs: number, cost: number, quota: Quota): Promise<RateLimitResult> {
    return (await this.reserve(key, nowMs, cost, quota)).result;
  }

  async peek(key: string, _nowMs: number, cost: number, quota: Quota): Promise<RateLimitResult> {
    await tick();
    const n = this.counts.get(key) ?? 0;
    return this.#result(n, n + cost <= quota.threshold, quota);
  }

  async reserve(key: string, _nowMs: number, cost: number, quota: Quota): Promise<StoreReservation> {
    const n = this.counts.get(key) ?? 0;
    await tick();
    if (n + cost > quota.threshold) return { result: this.#result(n, false, quota), ticket: undefined };
    this.#set(key, n + cost);
    return { result: this.#result(n + cost, true, quota), ticket: { cost } };
  }

  async refund(key: string, ticket: unknown, units: number): Promise<boolean> {
    const n = this.counts.get(key) ?? 0;
    await tick();
    if ((ticket as { cost: number }).cost < units) return false;
    this.#set(key, n - units);
    return true;
  }

  async penalty(key: string, nowMs: number, points: number, quota: Quota): Promise<RateLimitResult> {
    const n = this.counts.get(key) ?? 0;
    await tick();
    this.#set(key, n + points);
    return this.peek(key, nowMs, 1, quota);
  }

  async block(): Promise<void> {
    await tick();
  }

  async delete(key: string): Promise<boolean> {
    await tick();
    return this.counts.delete(key);
  }

  storeKey(key: string): string {
    return `${this.name}:${this.batch.stores.indexOf(this)}:${key}`;
  }
}

/** A batch over several {@link MapRefundingStore}s: all checked, then all recorded, in one step (no await in between). */
export function mapBatch(withReserveAll: boolean): StoreBatch & { readonly stores: MapRefundingStore[] } {
  const stores: MapRefundingStore[] = [];
  const decide = async (requests: readonly BatchRequest[], record: boolean): Promise<StoreReservation[]> => {
    await tick();
    const counts = requests.map((r) => (r.store as unknown as MapRefundingStore).counts.get(r.key) ?? 0);
    const allowed = record && requests.every((r, i) => (counts[i] as number) + r.cost <= r.quota.threshold);
    return requests.map((r, i) => {
      const before = counts[i] as number;
      const n = before + (allowed ? r.cost : 0);
      if (allowed) (r.store as unknown as MapRefundingStore).counts.set(r.key, n);
      const fits = allowed || before + r.cost <= r.quota.threshold;
      const result = { allowed: fits, remaining: Math.max(0, r.quota.threshold - n), retryAfter: 0, limit: r.quota.threshold, resetAfter: 0 };
      return { result, ticket: allowed ? { cost: r.cost } : undefined };
    });
  };
  return {
    stores,
    decideAll: async (requests, record) => (await decide(requests, record)).map((r) => r.result),
    ...(withReserveAll ? { reserveAll: (requests: readonly BatchRequest[]) => decide(requests, true) } : {}),
  };
}
