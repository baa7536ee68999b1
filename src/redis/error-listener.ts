/**
 * The start-up check of the Redis strategies for a client without an `error` listener: a
 * node-redis client or cluster emits `error` on every connection error (Redis restarting, a
 * network drop), and an `EventEmitter` with no listener for `error` throws it, so the process
 * crashes before any failure policy can act; ioredis prints each one to stderr instead
 * (`[ioredis] Unhandled error event`). Warns once per client.
 *
 * Free of `node:` imports: the warning goes through `process.emitWarning` when there is a
 * `process`, else `console.warn`.
 *
 * @module
 */
import { ErrorCode } from '../errors.js';

/** Clients already checked: one warning per client, however many strategies share it. */
const checked = new WeakSet<object>();

/**
 * Warns once (a `RateWardenWarning`, code {@link ErrorCode.NoErrorListener}) when `client` is a
 * node-redis or ioredis client or cluster with no `error` listener (`listenerCount('error')`
 * is 0), saying what happens without one. Anything else (a `RedisAdapter` of one's own, a client
 * with no `listenerCount`) is not checked. Never throws.
 * @param client - the `client` option, as given.
 * @param className - the strategy's class, for the message.
 */
export function warnIfNoErrorListener(client: unknown, className: string): void {
  if (client === null || typeof client !== 'object') return;
  const c = client as Record<string, unknown>;
  // node-redis's `withTypeMapping()` / `withCommandOptions()` proxies of one client share its
  // `_self`: one client, one warning.
  const identity = c._self !== null && typeof c._self === 'object' ? c._self : client;
  if (checked.has(identity)) return;
  if (c.ratewardenAdapter === true || typeof c.listenerCount !== 'function') return;
  let count: unknown;
  try {
    count = (c.listenerCount as (event: string) => unknown).call(client, 'error');
  } catch {
    return;
  }
  if (count !== 0) return;
  let kind: string;
  let without: string;
  if (typeof c.evalsha === 'function') {
    kind = c.isCluster === true ? 'ioredis Cluster' : 'ioredis client';
    without =
      'ioredis then prints every connection error to stderr ("[ioredis] Unhandled error event", with a stack trace, ' +
      'once per reconnection attempt while Redis is down); the process keeps running and onFailure decides.';
  } else if (typeof c.evalSha === 'function') {
    kind = 'masters' in c ? 'node-redis cluster' : 'node-redis client';
    without =
      'node-redis emits "error" on every connection error (Redis restarting, a network drop), and Node.js throws ' +
      'an "error" event that has no listener: the process crashes on the first one, before any failure policy (onFailure) can act.';
  } else return;
  // Marked only once warned: a client that had a listener is looked at again by the next
  // strategy (its listener may have been removed since).
  checked.add(identity);
  const message =
    `ratewarden: the ${kind} given to ${className} has no 'error' listener. ${without} ` +
    "Attach one before connecting, such as client.on('error', (error) => logger.warn(error)).";
  const process = (globalThis as { process?: { emitWarning?: (message: string, options: object) => void } }).process;
  if (typeof process?.emitWarning === 'function') process.emitWarning(message, { type: 'RateWardenWarning', code: ErrorCode.NoErrorListener });
  else console.warn(`${message} (${ErrorCode.NoErrorListener})`);
}
