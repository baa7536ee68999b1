/**
 * Blocks: the keys of an in-memory limiter that are refused for a while (the quota's
 * `blockSeconds`, or `RateLimiter.block`), kept apart from the strategy's state — a map of
 * deadlines on the limiter's clock. An expired block is dropped when its key is next decided
 * (on access), by `cleanUp()` and by the automatic sweep; nothing depends on a timer.
 *
 * Times are on the strategies' grid of 2^-10 ms (`./time.ts`): a block is kept as its start on
 * the grid and its length in whole milliseconds, and a key is blocked while `now − start <
 * length`, a difference that is exact on the grid. So a block holds for exactly its duration,
 * whatever the size of the clock's readings: refused 2^-10 ms before its end, decided by the
 * strategy at its end.
 *
 * (With a store, blocks are the store's: it applies them inside its decisions.)
 *
 * @module
 */

/** One key's block: from `start` (a reading on the grid, in ms) for `ms` milliseconds. */
interface Block {
  readonly start: number;
  readonly ms: number;
}

/** @internal The blocked keys of one in-memory limiter. */
export class Blocks {
  readonly #blocks = new Map<string, Block>();

  /** Blocks kept now, expired or not (see {@link count}). */
  get size(): number {
    return this.#blocks.size;
  }

  /**
   * Milliseconds left of `key`'s block at `grid` (a reading on the grid), a positive multiple of
   * 2^-10; `0` when the key is not blocked (an expired block is dropped).
   */
  remaining(key: string, grid: number): number {
    const block = this.#blocks.get(key);
    if (block === undefined) return 0;
    const elapsed = grid - block.start;
    if (elapsed < block.ms) return block.ms - elapsed;
    this.#blocks.delete(key);
    return 0;
  }

  /** Blocks `key` from `grid` for `ms` milliseconds, replacing any block it had. */
  set(key: string, grid: number, ms: number): void {
    this.#blocks.set(key, { start: grid, ms });
  }

  /**
   * Restarts `key`'s block at `grid` for `ms` milliseconds, unless its current block ends later
   * (an attempt during a block never shortens it, a longer manual block included).
   */
  extend(key: string, grid: number, ms: number): void {
    const block = this.#blocks.get(key);
    if (block === undefined || block.ms - (grid - block.start) < ms) this.#blocks.set(key, { start: grid, ms });
  }

  /** Lifts `key`'s block; returns whether it had one that had not expired at `grid`. */
  delete(key: string, grid: number): boolean {
    const left = this.remaining(key, grid);
    this.#blocks.delete(key);
    return left > 0;
  }

  /** Drops the blocks expired at `grid`. @returns how many were dropped. */
  sweep(grid: number): number {
    let dropped = 0;
    this.#blocks.forEach((block, key) => {
      if (grid - block.start >= block.ms) {
        this.#blocks.delete(key);
        dropped++;
      }
    });
    return dropped;
  }

  /** The keys blocked at `grid` (the expired blocks are dropped first). */
  count(grid: number): number {
    this.sweep(grid);
    return this.#blocks.size;
  }
}
