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
  /**
   * Whether the client can send a command now, asked before each decision and each script call
   * (keep it cheap: a property read). `false` means **known to be disconnected**: the decision
   * then fails at once with a `RateWardenRedisUnavailableError` through the strategy's
   * `onFailure`, neither queued nor sent, instead of waiting in the client's offline queue until
   * `timeoutSeconds` passes. Return `true` whenever a command sent now may still be answered in
   * time (connected, or connecting for the first time: a new client's first commands wait for
   * its connection); throwing counts as `true`. Absent: always `true`.
   *
   * {@link toRedisAdapter}'s adapters: node-redis, `false` while the client is open but not ready
   * after it had been ready (reconnecting; before its first connection node-redis rejects
   * commands at once anyway, and a closed client rejects them at once too); ioredis (client or
   * `Cluster`), `false` while its `status` is `"reconnecting"`, `"close"` or `"end"`, or
   * `"connecting"` during a reconnection attempt (after a lost or failed connection, until
   * ready again), and `true` for `"wait"`, `"connect"`, `"ready"` and a new client's first
   * `"connecting"` (so a new or `lazyConnect` client works). A node-redis cluster has none (its
   * nodes reconnect on their own).
   */
  connected?(): boolean;
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

/** ioredis statuses in which a command would wait for a reconnection, or fail: see {@link RedisAdapter.connected}. */
const IOREDIS_DISCONNECTED: ReadonlySet<unknown> = new Set(['reconnecting', 'close', 'end']);

/**
 * {@link RedisAdapter.connected} of an ioredis client or cluster: by its `status`; and
 * `"connecting"` while it retries (its `retryAttempts`, which ioredis counts from each lost or
 * failed connection and resets once ready, is above 0) counts as reconnecting too: an attempt
 * against a server that is down may take up to ioredis's `connectTimeout` (10 s by default).
 * A new client's first `"connecting"` (no attempt failed yet) counts as connected.
 */
function ioredisConnected(c: Record<string, unknown>): boolean {
  const status = c.status;
  if (IOREDIS_DISCONNECTED.has(status)) return false;
  return !(status === 'connecting' && typeof c.retryAttempts === 'number' && c.retryAttempts > 0);
}

/**
 * {@link RedisAdapter.connected} of a node-redis client: `false` while it is open but not ready
 * after it had been ready (reconnecting). "Had been ready" is seen by this function (`isReady`
 * once read `true`) or, in node-redis 5 and later, by its `socketEpoch` (the count of
 * connections that became ready) having grown since the client was last seen closed, so that a
 * client that was closed and is connecting again counts as connecting, not reconnecting.
 */
function nodeRedisConnected(c: Record<string, unknown>): () => boolean {
  let seenReady = false;
  let closedAtEpoch = 0;
  const epoch = (): number => (typeof c.socketEpoch === 'number' ? c.socketEpoch : 0);
  return () => {
    if (c.isReady === true) {
      seenReady = true;
      return true;
    }
    if (c.isOpen !== true) {
      // Closed (or never opened): node-redis rejects commands at once; a later open connects anew.
      seenReady = false;
      closedAtEpoch = epoch();
      return true;
    }
    return !(seenReady || epoch() > closedAtEpoch);
  };
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
 * never does. Each tells whether its client is {@link RedisAdapter.connected | connected}
 * (node-redis clients and ioredis clients and clusters; not node-redis clusters), so that
 * decisions fail fast while it reconnects.
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
      connected: () => ioredisConnected(c),
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
      ...('masters' in c ? {} : { connected: nodeRedisConnected(c) }),
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
