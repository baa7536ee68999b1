/**
 * One `abort` listener per `AbortSignal`, however many waiters share it: {@link watchAbort}.
 * Many `waitForSlot` calls given one signal (a request's, a shutdown signal) would otherwise add
 * one listener each, and Node.js warns (`MaxListenersExceededWarning`) from the 11th on.
 *
 * @module
 */

/** The callbacks of one signal and the one listener that calls them. */
interface Watch {
  readonly callbacks: Set<{ readonly call: () => void }>;
  readonly listener: () => void;
}

/** The watched signals. Weak: a signal nobody waits on is not held here. */
const watches = new WeakMap<AbortSignal, Watch>();

/**
 * @internal Calls `callback` once when `signal` aborts, through the one listener this module
 * keeps on `signal` for every callback: at most one listener per signal, added with the first
 * callback and removed with the last (by the returned function, or when the signal aborts).
 * The callbacks of an abort are called in the order they were added; one that throws does not
 * stop the others (the first error is rethrown after them, as the signal's listener's).
 *
 * The caller checks `signal.aborted` first: a signal that has already aborted never calls back.
 *
 * @returns a function that removes the callback (idempotent; after the abort, a no-op).
 * @throws whatever `signal.addEventListener` throws, adding nothing (a signal-like object may).
 */
export function watchAbort(signal: AbortSignal, callback: () => void): () => void {
  let watch = watches.get(signal);
  if (watch === undefined) {
    const callbacks = new Set<{ readonly call: () => void }>();
    const listener = (): void => {
      if (watches.get(signal)?.listener === listener) watches.delete(signal);
      // Added with `once`; removed again for a signal-like object that ignores it.
      signal.removeEventListener('abort', listener);
      const entries = [...callbacks];
      callbacks.clear();
      let failed = false;
      let first: unknown;
      for (const entry of entries) {
        try {
          entry.call();
        } catch (error) {
          if (!failed) first = error;
          failed = true;
        }
      }
      if (failed) throw first;
    };
    signal.addEventListener('abort', listener, { once: true });
    watch = { callbacks, listener };
    watches.set(signal, watch);
  }
  const mine = watch;
  const entry = { call: callback };
  mine.callbacks.add(entry);
  return () => {
    if (!mine.callbacks.delete(entry) || mine.callbacks.size > 0) return;
    if (watches.get(signal) === mine) watches.delete(signal);
    signal.removeEventListener('abort', mine.listener);
  };
}
