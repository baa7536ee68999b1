/**
 * The exact local block cache of a Redis strategy: after Redis refuses a key, this process
 * refuses that key's next requests itself, with no round trip, for as long as the refusal
 * certainly holds.
 *
 * Why it is exact: other processes sharing the key under the same limit can only **add** load
 * (record requests), never remove it, and the state of both algorithms only moves towards
 * refusing when load is added. A
 * request that Redis would refuse given only what this process knows is therefore refused by
 * Redis too. What this process knows is the state the refusing reply described: for GCRA the
 * whole state (its debt), so any request the debt refuses is answered here; for the
 * sliding-window log only the count of live entries and the time the oldest one that matters
 * expires, so only a request of the refused cost is answered here, and only when no entry
 * expires before that time (the refused cost was one more than the remaining count, with no more
 * entries live than the threshold: the case for every refusal of cost 1 unless the threshold
 * was lowered under live entries).
 *
 * The answer's fields are the ones Redis would give if nothing else had been recorded for the
 * key since (exactly, under `time: "limiter"`, as the in-memory strategies); with other processes
 * recording meanwhile, Redis would report a longer `retryAfter` and `resetAfter`. When load is
 * removed another way, it can refuse what Redis would allow, for at most the `retryAfter` of the
 * refusal it cached: the key deleted or reset elsewhere (another process's `RateLimiter`, a
 * `DEL`), evicted by Redis, or decided by another process under a different limit (a shorter
 * window frees load sooner: GCRA converts the debt, the log drops older entries). It never admits
 * what Redis would refuse. `RateLimiter.reset(user)` in this process drops the entry.
 *
 * @module
 */
import type { Quota } from '../quota.js';
import { outcome, type RateLimitResult } from '../result.js';
import { TICKS_PER_MS, onGrid, retryAfterSeconds, ticksToRepay } from '../time.js';
import type { ScriptKind } from './reply.js';

/**
 * One cached refusal. Its time is `baseMs` (the cache's clock, ms) plus `shiftTicks`; waits and
 * elapsed times are counted in ticks of 2^-10 ms from differences of readings only, so that they
 * stay exact at epoch-scale readings (where a reading's double cannot hold a whole tick).
 */
interface Block {
  readonly threshold: number;
  readonly windowMs: number;
  /** The reading the refusal was decided at (on the grid, under `time: "limiter"`), ms. */
  readonly baseMs: number;
  /** How far after `baseMs` the refusal was decided (the key's state was ahead), ticks. */
  readonly shiftTicks: number;
  /** The refused request's wait, from the refusal's time, ticks: the block holds until it ends. */
  readonly waitTicks: number;
  /** The refused cost (the log answers only this cost). */
  readonly cost: number;
  /** The log: remaining as refused. */
  readonly remaining: number;
  /** GCRA: the debt, in ticks × threshold; the log: the reset, in ticks. */
  readonly state: number;
}

/**
 * @internal The block cache of one Redis strategy: at most `capacity` keys, oldest inserted
 * evicted first (no scans: every operation is O(1)); an entry expired when looked up is dropped.
 *
 * Its clock: under `time: "redis"` this process's `performance.now()` (a refusal is dated at the
 * decision's submission, which is no later than the script ran on the server, so the block ends
 * no later than Redis's); under `time: "limiter"` the limiter's reading on the grid, as the script
 * decides.
 */
export class BlockCache {
  readonly #kind: ScriptKind;
  readonly #capacity: number;
  readonly #limiterTime: boolean;
  readonly #blocks = new Map<string, Block>();
  /**
   * Decisions (that record) of this process in flight, by key: while one is, the key's state in
   * Redis may be about to change by this process's own hand, so the cache neither answers for
   * the key nor keeps a refusal that a decision still in flight may make stale.
   */
  readonly #inFlight = new Map<string, number>();

  /**
   * @param kind - the algorithm (`g`: GCRA, `l`: the sliding-window log).
   * @param capacity - the most keys held, a positive integer.
   * @param limiterTime - whether decisions are timed by the limiter's clock (`time: "limiter"`).
   */
  constructor(kind: ScriptKind, capacity: number, limiterTime: boolean) {
    this.#kind = kind;
    this.#capacity = capacity;
    this.#limiterTime = limiterTime;
  }

  /** Keys held now (including expired ones not yet looked up). */
  get size(): number {
    return this.#blocks.size;
  }

  /** A decision that records on `key` was sent: drops its entry (it will be stale), counts it in flight. */
  begin(key: string): void {
    this.#blocks.delete(key);
    this.#inFlight.set(key, (this.#inFlight.get(key) ?? 0) + 1);
  }

  /** That decision settled (answered, failed or timed out). */
  end(key: string): void {
    const n = this.#inFlight.get(key);
    if (n === undefined) return;
    if (n <= 1) this.#inFlight.delete(key);
    else this.#inFlight.set(key, n - 1);
  }

  /** Drops `key`'s entry (for `RateLimiter.reset`). */
  forget(key: string): void {
    this.#blocks.delete(key);
  }

  /**
   * The cached refusal of a request of `cost` units on `key` under `quota` now, or `undefined`
   * when the cache cannot tell (Redis must decide).
   *
   * @param nowMs - the limiter's reading, **milliseconds** (used under `time: "limiter"`).
   * @param perfMs - `performance.now()`, **milliseconds** (used under `time: "redis"`).
   */
  answer(key: string, nowMs: number, perfMs: number, cost: number, quota: Quota): RateLimitResult | undefined {
    const block = this.#blocks.get(key);
    if (block === undefined || this.#inFlight.has(key)) return undefined;
    const reading = this.#limiterTime ? onGrid(nowMs) : perfMs;
    // Ticks since the refusal's time: exact, a difference of readings.
    const elapsed = (reading - block.baseMs) * TICKS_PER_MS - block.shiftTicks;
    if (elapsed >= block.waitTicks) {
      this.#blocks.delete(key);
      return undefined;
    }
    const threshold = quota.threshold;
    // A reading behind the refusal's time (a clock that stepped back, another limiter's clock):
    // the state may be older than the refusal's time, so only Redis can tell.
    if (block.threshold !== threshold || block.windowMs !== quota.windowMs || cost > threshold || elapsed < 0) return undefined;
    let waitMs: number;
    let remaining: number;
    let resetMs: number;
    if (this.#kind === 'l') {
      if (cost !== block.cost) return undefined;
      waitMs = (block.waitTicks - elapsed) / TICKS_PER_MS;
      remaining = block.remaining;
      resetMs = (block.state - elapsed) / TICKS_PER_MS;
    } else {
      const window = quota.windowMs * TICKS_PER_MS;
      const span = threshold * window;
      const wait = ticksToRepay(block.state + cost * window - span, threshold) - elapsed;
      if (!(wait > 0)) return undefined;
      let debt = block.state - elapsed * threshold;
      if (debt < 0) debt = 0;
      waitMs = wait / TICKS_PER_MS;
      remaining = Math.floor((span - debt) / window);
      resetMs = debt / threshold / TICKS_PER_MS;
    }
    const retryAfter = this.#limiterTime
      ? retryAfterSeconds(nowMs, reading, waitMs, quota.windowSeconds)
      : retryAfterSeconds(0, 0, waitMs, quota.windowSeconds);
    return outcome(false, remaining, retryAfter, threshold, resetMs);
  }

  /**
   * Caches a refusal Redis made: of `cost` units on `key` under `quota`, decided `shiftTicks`
   * after `baseMs` (the cache's clock, ms: the reading on the grid, or the decision's submission),
   * waiting `waitTicks` (positive), with `left` (the reply's remaining: for the log's refusal,
   * threshold − live, below 0 when more are live) and the reply's `state` (GCRA: the debt; the
   * log: the reset in ticks). A refusal the cache could not answer exactly is not kept (the
   * log's, when an entry expires before the wait ends), nor one while another decision of this
   * process on the key is in flight.
   */
  remember(key: string, baseMs: number, shiftTicks: number, cost: number, quota: Quota, waitTicks: number, left: number, state: number): void {
    // The log: only when the refused request waits for the oldest live entry (live + cost =
    // threshold + 1, `left` being threshold − live), so that no entry expires during the block (a
    // decision in Redis would drop it, and a later longer window would then not count it).
    if (this.#kind === 'l' && cost !== left + 1) return;
    // Another decision of this process on the key is still in flight (the refusal's own is
    // counted until it settles): what it records would make this refusal stale.
    if ((this.#inFlight.get(key) ?? 0) > 1) return;
    const blocks = this.#blocks;
    if (blocks.has(key)) blocks.delete(key);
    else if (blocks.size >= this.#capacity) {
      // The oldest inserted: Map iterates in insertion order.
      const oldest = blocks.keys().next();
      if (oldest.done !== true) blocks.delete(oldest.value);
    }
    const remaining = left < 0 ? 0 : left;
    blocks.set(key, { threshold: quota.threshold, windowMs: quota.windowMs, baseMs, shiftTicks, waitTicks, cost, remaining, state });
  }
}
