/**
 * A small adapter over the two maintained Node.js Redis clients, `redis` (node-redis) and
 * `ioredis`: all ratewarden needs of a client is to run a script by its SHA-1 and, when the server
 * does not know it, by its source.
 *
 * @module
 */
import { typeError } from '../errors.js';

/**
 * What the Redis strategies need of a client: running a Lua script. Pass one of your own to
 * support another client; {@link toRedisAdapter} builds one for node-redis and ioredis.
 *
 * Each method sends one command and resolves with its reply, or rejects with the client's error
 * (a `NOSCRIPT` error from {@link evalSha} must carry `NOSCRIPT` in its `message`).
 */
export interface RedisAdapter {
  /** Marks an object as an adapter (node-redis clients have methods of the same names). */
  readonly ratewardenAdapter: true;
  /**
   * `true` for a Redis Cluster client: a group's limits whose keys are in different slots are
   * then checked and recorded by one script call per slot, since no script can span slots.
   * @default false
   */
  readonly cluster?: boolean;
  /**
   * `true` when the client may send a command again after a reconnect although the server may
   * already have run it (the reply was lost with the connection): ioredis does by default
   * (`autoResendUnfulfilledCommands`). Each decision that records then also writes a short-lived
   * token key (the call's reply, in the same hash slot), so that a re-sent decision is recorded
   * at most once and answered with the first run's reply. `false` (node-redis, ioredis with
   * `autoResendUnfulfilledCommands: false`) saves that write: a client that never re-sends
   * needs no token.
   * @default false
   */
  readonly resends?: boolean;
  /** Runs `EVALSHA sha numkeys ...keys ...args`. */
  evalSha(sha: string, keys: readonly string[], args: readonly string[]): Promise<unknown>;
  /** Runs `EVAL script numkeys ...keys ...args` (which also caches the script on the server). */
  eval(script: string, keys: readonly string[], args: readonly string[]): Promise<unknown>;
}

/** The part of a node-redis (v4 and later) client or cluster the adapter calls. */
interface NodeRedisLike {
  evalSha(sha: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
}

/** The part of an ioredis client or cluster the adapter calls. */
interface IoredisLike {
  evalsha(sha: string, numkeys: number, ...args: string[]): Promise<unknown>;
  eval(script: string, numkeys: number, ...args: string[]): Promise<unknown>;
}

/**
 * Whether an ioredis client may re-send a command after a reconnect: unless its
 * `autoResendUnfulfilledCommands` option (default `true`) is `false`; a Cluster always counts as
 * re-sending (it retries commands on other connections as the cluster changes).
 */
function ioredisResends(c: Record<string, unknown>): boolean {
  if (c.isCluster === true) return true;
  const options = c.options as { autoResendUnfulfilledCommands?: unknown } | null | undefined;
  return options?.autoResendUnfulfilledCommands !== false;
}

/** Adapters built so far, by client: one per client, so that strategies on it can batch. */
const adapters = new WeakMap<object, RedisAdapter>();

/**
 * The {@link RedisAdapter} of `client`: a node-redis client or cluster (`createClient()`,
 * `createCluster()`, v4 and later: it has `evalSha`), an ioredis client or cluster (`new Redis()`,
 * `new Cluster()`: it has `evalsha`), or a {@link RedisAdapter} of your own (recognised by its
 * `ratewardenAdapter: true` property, and returned as it is). The same client always gets the
 * same adapter. An ioredis adapter {@link RedisAdapter.resends | re-sends} unless the client was
 * created with `autoResendUnfulfilledCommands: false` (a Cluster always does); a node-redis one
 * never does.
 *
 * @throws {RateWardenTypeError} when `client` is none of these.
 */
export function toRedisAdapter(client: unknown): RedisAdapter {
  if (client === null || typeof client !== 'object') {
    throw typeError('client', 'a node-redis or ioredis client, or a RedisAdapter', client);
  }
  const known = adapters.get(client);
  if (known !== undefined) return known;
  const c = client as Record<string, unknown>;
  let adapter: RedisAdapter;
  if (c.ratewardenAdapter === true && typeof c.evalSha === 'function' && typeof c.eval === 'function') {
    adapter = client as RedisAdapter;
  } else if (typeof c.evalsha === 'function' && typeof c.eval === 'function') {
    const io = client as unknown as IoredisLike;
    adapter = {
      ratewardenAdapter: true,
      cluster: c.isCluster === true,
      resends: ioredisResends(c),
      evalSha: (sha, keys, args) => io.evalsha(sha, keys.length, ...keys, ...args),
      eval: (script, keys, args) => io.eval(script, keys.length, ...keys, ...args),
    };
  } else if (typeof c.evalSha === 'function' && typeof c.eval === 'function') {
    const node = client as unknown as NodeRedisLike;
    adapter = {
      ratewardenAdapter: true,
      // A node-redis cluster (createCluster) has `masters`; a client does not.
      cluster: 'masters' in c,
      // node-redis rejects the commands in flight when a connection drops; it never re-sends them.
      resends: false,
      evalSha: (sha, keys, args) => node.evalSha(sha, { keys: keys as string[], arguments: args as string[] }),
      eval: (script, keys, args) => node.eval(script, { keys: keys as string[], arguments: args as string[] }),
    };
  } else {
    throw typeError('client', 'a node-redis or ioredis client (with `evalSha` or `evalsha`), or a RedisAdapter', client);
  }
  adapters.set(client, adapter);
  return adapter;
}

/** Whether `error` is Redis's `NOSCRIPT` reply (the server does not have the script cached). */
export function isNoScript(error: unknown): boolean {
  const message = typeof error === 'string' ? error : (error as { message?: unknown } | null)?.message;
  return typeof message === 'string' && message.includes('NOSCRIPT');
}
