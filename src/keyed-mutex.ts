/**
 * A per-key asynchronous mutex.
 *
 * @module
 */

/** The lock of one key: the promise the next arrival waits for, and how many hold or wait. */
interface Entry {
  tail: Promise<void>;
  pending: number;
}

/**
 * A mutex per string key: {@link runExclusive} runs callbacks for the same key one at a time, in
 * arrival order (FIFO), while callbacks for different keys never wait for each other.
 *
 * Built on promises alone: no timers, `setImmediate`, `process.nextTick` or `queueMicrotask`, so
 * it cannot stall under fake timers that fake all of those. A key's entry exists only while a
 * callback holds or waits for its lock: a million distinct keys, once settled, leave the map
 * empty ({@link size} is 0).
 *
 * @example
 * ```ts
 * const mutex = new KeyedMutex();
 * await mutex.runExclusive('alice', async () => {
 *   const n = await store.get('alice');
 *   await store.set('alice', n + 1); // no other 'alice' callback runs in between
 * });
 * ```
 */
export class KeyedMutex {
  readonly #entries = new Map<string, Entry>();

  /** Number of keys with a callback holding or waiting for their lock now. */
  get size(): number {
    return this.#entries.size;
  }

  /** Whether a callback holds (or waits for) the lock of `key` now. */
  isLocked(key: string): boolean {
    return this.#entries.has(key);
  }

  /**
   * Runs `fn` once every earlier callback for `key` has settled, and settles as `fn` does.
   * The lock is released whether `fn` returns, throws synchronously or rejects; the error then
   * reaches the caller (as a rejection, never a synchronous throw).
   *
   * @param key - the key to lock.
   * @param fn - the critical section; may be synchronous or return a promise.
   * @returns what `fn` returns or resolves to.
   */
  async runExclusive<T>(key: string, fn: () => T | PromiseLike<T>): Promise<T> {
    let release!: () => void;
    const mine = new Promise<void>((resolve) => {
      release = resolve;
    });
    let entry = this.#entries.get(key);
    let previous: Promise<void> | undefined;
    if (entry === undefined) {
      entry = { tail: mine, pending: 1 };
      this.#entries.set(key, entry);
    } else {
      previous = entry.tail;
      entry.tail = mine;
      entry.pending++;
    }
    try {
      if (previous !== undefined) await previous;
      return await fn();
    } finally {
      release();
      if (--entry.pending === 0) this.#entries.delete(key);
    }
  }
}
