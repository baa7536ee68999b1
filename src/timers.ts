/**
 * @internal What every timer in ratewarden shares: the longest delay, and `unref()`.
 *
 * @module
 */

/** The longest timer delay: 2^31 − 1 ms and more overflow to 1 ms in Node and browsers. */
export const MAX_TIMER_MS = 2 ** 31 - 2;

/** `unref()`s a Node timer, so that it does not keep the process alive; a no-op elsewhere. */
export function unref(timer: unknown): void {
  const t = timer as { unref?: () => void };
  if (typeof t.unref === 'function') t.unref();
}
