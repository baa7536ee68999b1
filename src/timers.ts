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

/** The Node scheduling functions, where the runtime has them (Node, Deno, Bun). */
interface NodeScheduling {
  readonly process?: { readonly nextTick?: (f: () => void) => void };
  readonly setImmediate?: (f: () => void) => unknown;
}

/**
 * Runs `f` once the promise callbacks already due have run (so that callers that issue their
 * next call from them are served with it): `process.nextTick` in Node, Deno and Bun; elsewhere
 * (Cloudflare Workers without `nodejs_compat`, browsers) a task of its own, `setTimeout(f, 0)`,
 * a little later. Looked up at each call, so that fake timers installed later reach it.
 */
export function afterCallbacks(f: () => void): void {
  const process = (globalThis as NodeScheduling).process;
  if (typeof process?.nextTick === 'function') process.nextTick(f);
  else setTimeout(f, 0);
}

/**
 * Runs `f` after the input already received has been read (Node's check phase, after the poll):
 * `setImmediate` in Node, Deno and Bun; elsewhere `setTimeout(f, 0)`, a task queued after the
 * ones already due. Looked up at each call, like {@link afterCallbacks}.
 */
export function afterInput(f: () => void): void {
  const scope = globalThis as NodeScheduling;
  if (typeof scope.setImmediate === 'function') scope.setImmediate(f);
  else setTimeout(f, 0);
}
