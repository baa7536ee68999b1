/**
 * A per-key asynchronous mutex.
 *
 * @module
 */

/**
 * Callbacks of {@link KeyedMutex.runShared} that run together: they start once `ready` settles
 * (the holders before them are done), and `release` settles the key's tail once the last ends.
 */
interface SharedRun {
  /** What the run waits for; `undefined` when nothing held the key as it opened. */
  readonly ready: Promise<void> | undefined;
  /** Callbacks in the run, holding or waiting. */
  count: number;
  readonly release: () => void;
}

/** The lock of one key: the promise the next arrival waits for, and how many hold or wait. */
interface Entry {
  tail: Promise<void>;
  pending: number;
  /** The shared run at the tail that later shared callbacks join; closed by an exclusive one. */
  shared: SharedRun | undefined;
}

/**
 * A mutex per string key: {@link runExclusive} runs callbacks for the same key one at a time, in
 * arrival order (FIFO), while callbacks for different keys never wait for each other.
 * {@link runShared} callbacks of one key run together, but never alongside an exclusive one
 * (a readers–writer lock, in arrival order: a shared callback arriving after an exclusive one
 * waits for it, and an exclusive one waits for the shared callbacks before it).
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
      entry = { tail: mine, pending: 1, shared: undefined };
      this.#entries.set(key, entry);
    } else {
      previous = entry.tail;
      entry.tail = mine;
      entry.pending++;
      // Shared callbacks arriving from now on wait for this one.
      entry.shared = undefined;
    }
    try {
      if (previous !== undefined) await previous;
      return await fn();
    } finally {
      release();
      if (--entry.pending === 0) this.#entries.delete(key);
    }
  }

  /**
   * Whether a callback for `key` is running or waiting (exclusive or shared): a caller that
   * decides without the mutex can then wait its turn instead. Costs no lookup while no key is
   * held (the common case of an in-memory limiter, asked at every `allowRequest`).
   *
   * @param key - the key.
   */
  isHeld(key: string): boolean {
    const entries = this.#entries;
    return entries.size !== 0 && entries.has(key);
  }

  /**
   * Runs `fn` alongside the other shared callbacks of `key`, once every earlier
   * {@link runExclusive} callback for `key` has settled; a later exclusive callback waits until
   * `fn` has settled. With nothing exclusive before it, `fn` is called at once (synchronously).
   * Settles as `fn` does; the hold is released whether `fn` returns, throws or rejects.
   *
   * For operations that are atomic by themselves (one script in a store) but must not
   * interleave with an exclusive check-then-write of the same key.
   *
   * @param key - the key to hold.
   * @param fn - the callback; may be synchronous or return a promise.
   * @returns what `fn` returns or resolves to.
   */
  async runShared<T>(key: string, fn: () => T | PromiseLike<T>): Promise<T> {
    let entry = this.#entries.get(key);
    if (entry === undefined) {
      entry = { tail: Promise.resolve(), pending: 0, shared: undefined };
      this.#entries.set(key, entry);
    }
    let run = entry.shared;
    if (run === undefined) {
      let release!: () => void;
      const done = new Promise<void>((resolve) => {
        release = resolve;
      });
      run = { ready: entry.pending === 0 ? undefined : entry.tail, count: 0, release };
      entry.tail = done;
      entry.shared = run;
    }
    run.count++;
    entry.pending++;
    try {
      if (run.ready !== undefined) await run.ready;
      return await fn();
    } finally {
      if (--run.count === 0) {
        // The run is over: a later shared callback opens a new one.
        if (entry.shared === run) entry.shared = undefined;
        run.release();
      }
      if (--entry.pending === 0) this.#entries.delete(key);
    }
  }
}
