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
 * What it keeps and how it answers is each algorithm's rule (`RedisAlgorithm.block`): GCRA keeps
 * the debt and answers with the in-memory `GCRA` itself; the log keeps the refused cost's wait.
 * The answer's fields are the ones Redis would give if nothing else had been recorded for the
 * key since (exactly, under `time: "limiter"`, as the in-memory strategies); with other processes
 * recording meanwhile, Redis would report a longer `retryAfter` and `resetAfter`. When load is
 * removed another way, it can refuse what Redis would allow, for at most the `retryAfter` of the
 * refusal it cached: the key deleted or reset elsewhere (another process's `RateLimiter`, a
 * `DEL`), evicted by Redis, or decided by another process under a different limit (a shorter
 * window frees load sooner: GCRA converts the debt, the log drops older entries). It never admits
 * what Redis would refuse. `RateLimiter.reset(user)` in this process drops the entry.
 *
 * **Blocks and refunds (issue 22).** A refusal by a block (`blockSeconds`, a manual `block`) is
 * kept until the block ends and answers the refused cost only: while a key is blocked nothing is
 * recorded on it, so Redis's answer only counts down. A quota whose refused attempts extend
 * blocks (`extendBlock`) is never answered here (each attempt must reach Redis to restart the
 * block). A refund, penalty, block or delete through this process drops the key's entry. The
 * bound above is unchanged, and covers these too: another process's refund, `delete`, or manual
 * `block` that replaces a longer one removes load this process does not see, so it may refuse
 * what Redis would allow for at most the `retryAfter` of the refusal it cached, which for a
 * block is up to the block's remaining time.
 *
 * @module
 */
import type { Quota } from '../quota.js';
import type { RateLimitResult } from '../result.js';
import { outcome } from '../result.js';
import { TICKS_PER_MS, onGrid, retryAfterSeconds } from '../time.js';
import type { BlockMemo, RedisAlgorithm } from './algorithm.js';

/** One cached refusal: the common fields, and what the algorithm's rule kept. */
interface Block {
  readonly threshold: number;
  readonly windowMs: number;
  /** The quota's `blockMs` (0 when it blocks nothing): a quota that blocks differently decides differently. */
  readonly blockMs: number;
  /** The refusal's time in the cache's clock, ms on the grid of 2^-10 ms. */
  readonly atMs: number;
  /** The refused request's wait from then, ticks: the block holds until it ends. */
  readonly waitTicks: number;
  readonly memo: BlockMemo | BlockedMemo;
}

/**
 * What is kept of a refusal by a **block** (Redis's `blockSeconds` or a manual `block`): until the
 * block ends nothing is recorded on the key (every process is refused), so the wait and
 * `resetAfter` of the same cost only count down; answered for the refused cost only (the wait
 * past the block's end is the algorithm's, for that cost).
 */
interface BlockedMemo {
  readonly blocked: true;
  readonly cost: number;
  /** The refusal's wait, ticks from its time (the block's end, and what the algorithm needs then). */
  readonly waitTicks: number;
  /** `resetAfter` at the refusal's time, ms. */
  readonly resetMs: number;
}

/**
 * @internal The block cache of one Redis strategy: at most `capacity` keys, oldest inserted
 * evicted first (no scans: every operation is O(1)); an entry expired when looked up is dropped.
 *
 * Its clock: under `time: "redis"` this process's `performance.now()` (a refusal is dated at the
 * decision's submission, rounded down to the grid, which is no later than the script ran on the
 * server, so the block ends no later than Redis's); under `time: "limiter"` the limiter's reading
 * on the grid, as the script decides.
 */
export class BlockCache {
  readonly #algorithm: RedisAlgorithm;
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
   * @param algorithm - the algorithm whose refusals it keeps.
   * @param capacity - the most keys held, a positive integer.
   * @param limiterTime - whether decisions are timed by the limiter's clock (`time: "limiter"`).
   */
  constructor(algorithm: RedisAlgorithm, capacity: number, limiterTime: boolean) {
    this.#algorithm = algorithm;
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
    const reading = this.#limiterTime ? nowMs : perfMs;
    // Ticks since the refusal's time: exact, a difference of readings on the grid.
    const elapsed = (onGrid(reading) - block.atMs) * TICKS_PER_MS;
    if (elapsed >= block.waitTicks) {
      this.#blocks.delete(key);
      return undefined;
    }
    // A reading behind the refusal's time (a clock that stepped back, another limiter's clock):
    // the state may be older than the refusal's time, so only Redis can tell. A quota whose
    // refused attempts extend a block must reach Redis (each one restarts the block there).
    if (
      block.threshold !== quota.threshold ||
      block.windowMs !== quota.windowMs ||
      block.blockMs !== (quota.blockMs ?? 0) ||
      quota.extendBlock === true ||
      cost > quota.threshold ||
      elapsed < 0
    ) {
      return undefined;
    }
    const memo = block.memo;
    if ('blocked' in memo) {
      if (cost !== memo.cost) return undefined;
      const waitMs = (memo.waitTicks - elapsed) / TICKS_PER_MS;
      const retryAfter = this.#limiterTime
        ? retryAfterSeconds(reading, onGrid(reading), waitMs, quota.windowSeconds)
        : retryAfterSeconds(0, 0, waitMs, quota.windowSeconds);
      const resetMs = memo.resetMs - elapsed / TICKS_PER_MS;
      return outcome(false, 0, retryAfter, quota.threshold, resetMs > 0 ? resetMs : 0);
    }
    return this.#algorithm.block.answer(memo, block.atMs, reading, cost, quota, this.#limiterTime);
  }

  /**
   * Caches a refusal Redis made: of `cost` units on `key` under `quota`, decided `shiftTicks`
   * after `baseMs` (the cache's clock, ms: the limiter's reading, or the decision's submission),
   * waiting `waitTicks` (positive), with the reply's `left` and `state`. A refusal the cache could
   * not answer exactly from is not kept (the algorithm's rule says), nor one while another
   * decision of this process on the key is in flight.
   */
  remember(key: string, baseMs: number, shiftTicks: number, cost: number, quota: Quota, waitTicks: number, left: number, state: number): void {
    // Another decision of this process on the key is still in flight (the refusal's own is
    // counted until it settles): what it records would make this refusal stale.
    if ((this.#inFlight.get(key) ?? 0) > 1) return;
    // On the grid: the limiter's reading as the script took it; the submission rounded down.
    const base = this.#limiterTime ? onGrid(baseMs) : Math.floor(baseMs * TICKS_PER_MS) / TICKS_PER_MS;
    let atMs: number;
    let memo: BlockMemo | BlockedMemo | undefined;
    let holdTicks = waitTicks;
    if (shiftTicks < 0) {
      // Refused by a block of -1 - shiftTicks ticks more: kept until the block ends.
      atMs = base;
      holdTicks = Math.min(waitTicks, -1 - shiftTicks);
      memo = { blocked: true, cost, waitTicks, resetMs: this.#algorithm.resetMs(state, quota) };
    } else {
      atMs = base + shiftTicks / TICKS_PER_MS;
      memo = this.#algorithm.block.remember(atMs, cost, quota, waitTicks, left, state);
    }
    if (memo === undefined) return;
    const blocks = this.#blocks;
    if (blocks.has(key)) blocks.delete(key);
    else if (blocks.size >= this.#capacity) {
      // The oldest inserted: Map iterates in insertion order.
      const oldest = blocks.keys().next();
      if (oldest.done !== true) blocks.delete(oldest.value);
    }
    blocks.set(key, { threshold: quota.threshold, windowMs: quota.windowMs, blockMs: quota.blockMs ?? 0, atMs, waitTicks: holdTicks, memo });
  }
}
