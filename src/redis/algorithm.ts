/**
 * The contract of an algorithm on Redis ({@link RedisAlgorithm}): everything the one decision
 * protocol (`./script.ts`, `./protocol.ts`) and the block cache (`./block-cache.ts`) need to know
 * of it, in one object. The script, the argument layout, the reply and its parser are shared by
 * every algorithm; an algorithm brings its Lua fragment, its key suffix, how its reply's state
 * reads, its in-memory counterpart and its block-cache rule. A sixth algorithm on Redis is a
 * new file in `./algorithms/` and one line in `./script.ts`'s list.
 *
 * @module
 */
import type { Quota } from '../quota.js';
import type { RateLimitResult } from '../result.js';
import type { RateLimitStrategy } from '../strategy.js';

/**
 * @internal What the block cache keeps of one refusal, beyond the common fields: built by the
 * algorithm's {@link BlockRule.remember} from the reply, read by its {@link BlockRule.answer}.
 */
export type BlockMemo = object;

/**
 * @internal How the exact local block cache answers for one algorithm: what of a refusal it
 * keeps, and which later requests it can refuse without asking Redis (never one Redis would
 * allow, given that other processes only add load).
 */
export interface BlockRule {
  /**
   * What to keep of a refusal, or `undefined` when the cache could not answer exactly from it.
   * @param atMs - the refusal's time in the cache's clock, ms on the grid (its base plus the
   *   reply's shift).
   * @param cost - the refused cost.
   * @param quota - the quota it was refused under.
   * @param waitTicks - the reply's wait, ticks of 2^-10 ms (positive).
   * @param left - the reply's remaining (the log's refusal: threshold − live, may be below 0).
   * @param state - the reply's state (see {@link RedisAlgorithm.resetMs}).
   */
  remember(atMs: number, cost: number, quota: Quota, waitTicks: number, left: number, state: number): BlockMemo | undefined;
  /**
   * The refusal of a request of `cost` units at `reading` (the cache's clock, ms), from what was
   * kept, or `undefined` when the cache cannot tell (Redis must decide). The cache has checked
   * that the quota is the refusal's own, that `cost` is at most its threshold, and that
   * `onGrid(reading)` is at or after `atMs` and before the refused wait ends.
   * @param limiterTime - whether `reading` is the limiter's (`time: "limiter"`: `retryAfter`
   *   counts from it exactly, as in memory) or `performance.now()` (`time: "redis"`).
   */
  answer(memo: BlockMemo, atMs: number, reading: number, cost: number, quota: Quota, limiterTime: boolean): RateLimitResult | undefined;
}

/**
 * @internal One rate-limiting algorithm on Redis, as the decision protocol sees it.
 *
 * **Its Lua fragment** assigns three functions to the locals named after its `id` (`g_check`,
 * …; the script declares them, and runs the fragment only when the call uses the algorithm):
 * - `<id>_check(key, threshold, window_ms, cost, given)` reads the key (no write) and returns
 *   `wait` (ticks of 2^-10 ms: `0` allowed, positive refused, `-1` never: cost above the
 *   threshold), `left` (remaining before the request), `state` (see {@link resetMs}) and `shift`
 *   (ticks the time decided at is after `given`, when the key's state was ahead), then at most
 *   seven more values of its own, which the other two receive;
 * - `<id>_commit(left, state, shift, …)` records the checked request (every check of its unit
 *   allowed) and returns `left` and `state` after recording;
 * - `<id>_tidy(left, state, shift, …)` does what a recording decision does to the key when its
 *   unit is refused (drop what has expired, convert a changed limit, keep the key alive for a
 *   longer window).
 * Values, not tables: a decision allocates nothing in Lua but its reply. Every write sets the
 * key's expiry, at least `min_px` (the script's shortest expiry, ms); a check never writes, so a
 * unit that fails in Redis writes nothing. Helpers of its own are locals of the fragment.
 */
export interface RedisAlgorithm {
  /** Its name in the script's arguments: one lower-case letter. */
  readonly id: string;
  /** Appended to every key of it, such as `":gcra"`. */
  readonly suffix: string;
  /** Its Lua fragment (see the interface's description). */
  readonly lua: string;
  /**
   * Sorted-set members one unit of cost writes (the log: 1; GCRA: 0), for the bound on what one
   * script call may write.
   */
  readonly membersPerUnit: number;
  /** Whether a refusal may report `left` below 0 (the log, when a lowered limit has more live). */
  readonly leftMayBeNegative: boolean;
  /** `resetAfter`, in ms, from a reply's `state` under `quota`. */
  resetMs(state: number, quota: Quota): number;
  /** The same algorithm in memory, for `onFailure: "local"`. */
  createLocal(): RateLimitStrategy<unknown>;
  /** How the block cache answers for it. */
  readonly block: BlockRule;
}
