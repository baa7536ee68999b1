/**
 * A small adapter over the two maintained Node.js Redis clients, `redis` (node-redis) and
 * `ioredis`, and over Upstash's HTTP client, `@upstash/redis` (for runtimes without TCP: Workers,
 * Vercel's edge, Deno Deploy): all ratewarden needs of a client is to run a script by its SHA-1
 * and, when the server does not know it, by its source.
 *
 * @module
 */
import { typeError } from '../errors.js';

/**
 * What the Redis strategies need of a client: running a Lua script. Pass one of your own to
 * support another client; {@link toRedisAdapter} builds one for node-redis, ioredis and
 * `@upstash/redis`.
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
   * at most once and answered with the first run's reply. `@upstash/redis` does too: it sends
   * an HTTP request again after a network error (`retry`, 5 times by default), and the first may
   * have reached the server. `false` (node-redis, ioredis with
   * `autoResendUnfulfilledCommands: false`, `@upstash/redis` with `retry: { retries: 0 }`) saves
   * that write: a client that never re-sends needs no token.
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
  // node-redis emits 'end' when the client is closed (close(), quit(), destroy()), not while it
  // reconnects: a client closed and connected again with no decision in between connects anew.
  if (typeof c.on === 'function') {
    (c.on as (event: string, listener: () => void) => unknown).call(c, 'end', () => {
      seenReady = false;
      closedAtEpoch = epoch();
    });
  }
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
 * `new Cluster()`: it has `evalsha` and `evalsha_ro`), an `@upstash/redis` client (1.34.7 and
 * later, from any of its entries: `@upstash/redis`, `/cloudflare`, `/fastly`; it has `evalsha`
 * taking `(sha, keys[], args[])` and `evalshaRo`), or a {@link RedisAdapter} of your own
 * (recognised by its `ratewardenAdapter: true` property, and returned as it is). The same client
 * always gets the same adapter. An ioredis adapter {@link RedisAdapter.resends | re-sends}
 * unless the client was created with `autoResendUnfulfilledCommands: false` (a Cluster always
 * does); a node-redis one never does; an Upstash one does unless the client was created with
 * `retry: { retries: 0 }`.
 * Each tells whether its client is {@link RedisAdapter.connected | connected} (node-redis clients
 * and ioredis clients and clusters; not node-redis clusters, nor Upstash's HTTP client, which
 * has no connection), so that decisions fail fast while it reconnects.
 *
 * @throws {RateWardenTypeError} when `client` is none of these.
 */
export function toRedisAdapter(client: unknown): RedisAdapter {
  if (client === null || typeof client !== 'object') {
    throw typeError('client', 'a node-redis, ioredis or @upstash/redis client, or a RedisAdapter', client);
  }
  const known = adapters.get(client);
  if (known !== undefined) return known;
  const c = client as Record<string, unknown>;
  let adapter: RedisAdapter;
  if (c.ratewardenAdapter === true && typeof c.evalSha === 'function' && typeof c.eval === 'function') {
    adapter = client as RedisAdapter;
  } else if (isUpstashClient(c)) {
    if (isUpstashPipeline(c)) {
      throw typeError('client', 'an @upstash/redis client, not one of its pipelines or transactions (`pipeline()`, `multi()`)', client);
    }
    // Before ioredis: both have a lowercase `evalsha`, with different arguments.
    adapter = upstashAdapter(client as UpstashLike, c);
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
    throw typeError('client', 'a node-redis, ioredis or @upstash/redis client (with `evalSha` or `evalsha`), or a RedisAdapter', client);
  }
  adapters.set(client, adapter);
  return adapter;
}

/** Whether `error` is Redis's `NOSCRIPT` reply (the server does not have the script cached). */
export function isNoScript(error: unknown): boolean {
  const message = typeof error === 'string' ? error : (error as { message?: unknown } | null)?.message;
  return typeof message === 'string' && message.includes('NOSCRIPT');
}

// ------------------------------------------------------------------------------------------------
// @upstash/redis: Redis over HTTPS (Upstash's REST API), for runtimes that cannot open a TCP
// connection. Recognised apart from ioredis, whose lowercase `evalsha` it shares.
// ------------------------------------------------------------------------------------------------

/** The part of an `@upstash/redis` client the adapter calls (each method: one HTTP request). */
interface UpstashLike {
  evalsha(sha: string, keys: string[], args: string[]): Promise<unknown>;
  eval(script: string, keys: string[], args: string[]): Promise<unknown>;
}

/**
 * Whether `c` is an `@upstash/redis` client (its `Redis`, from any entry, with or without
 * auto-pipelining): like ioredis it has lowercase `evalsha` and `eval`, but taking `(sha, keys[],
 * args[])`, and its read-only variant is `evalshaRo` (since 1.34.7) where ioredis has
 * `evalsha_ro` and node-redis `evalShaRo`.
 */
function isUpstashClient(c: Record<string, unknown>): boolean {
  return typeof c.evalsha === 'function' && typeof c.eval === 'function' && typeof c.evalshaRo === 'function' && typeof c.evalsha_ro !== 'function';
}

/**
 * Whether `c`, recognised as Upstash's, is its client rather than one of its `pipeline()` or
 * `multi()` objects, which have the same commands but queue them (each returns the pipeline, not
 * a promise) until `exec()`: only the client has `pipeline`.
 */
function isUpstashPipeline(c: Record<string, unknown>): boolean {
  return typeof c.pipeline !== 'function';
}

/**
 * Whether an `@upstash/redis` client may send a request again: it retries a request whose
 * `fetch` failed (a network error, after which the server may have run the command), `retries`
 * times (default 5) — and once even with `retry: false`, which 1.39.0 reads as one retry without
 * backoff. Only `retry: { retries: 0 }` never re-sends. Read from the HTTP client the `Redis`
 * object holds (`client.retry.attempts`); a client whose settings cannot be read (a `Requester`
 * of one's own) counts as re-sending, which costs a token write per recording call, never a
 * double count.
 */
function upstashResends(c: Record<string, unknown>): boolean {
  const http = c.client as { retry?: { attempts?: unknown } } | null | undefined;
  return http?.retry?.attempts !== 0;
}

/**
 * The message of an error of `@upstash/redis` without what it appends to a refused request's
 * error, `, command was: <the command as JSON>`: that would put the script (22 kB) and the keys
 * (user ids) into every logged error, and a key holding `NOSCRIPT` would make any error look
 * like a `NOSCRIPT` reply (see {@link isNoScript}). The error object is the client's own, its
 * message shortened; anything else is rethrown as it is.
 */
function withoutCommand(error: unknown): never {
  if (error instanceof Error) {
    const at = error.message.indexOf(', command was: ');
    if (at !== -1) error.message = error.message.slice(0, at);
    // A gateway's error reply with no `error` text (`{}`, `{"error":null}`) reads "undefined".
    if (error.message === 'undefined' || error.message === 'null' || error.message === '') {
      error.message = `the server answered an error without a message (its \`error\` field: ${error.message === '' ? 'empty' : error.message})`;
    }
  }
  throw error;
}

/**
 * The adapter of an `@upstash/redis` client. Each script call is one HTTPS request (`POST /`, or
 * with the client's auto-pipelining, on by default, `POST /pipeline` with the other commands of
 * the same tick). What the client does to replies leaves ratewarden's unchanged: numbers stay
 * numbers (Redis's integers are JSON numbers), its base64 response encoding (the default) is
 * undone before ratewarden sees the reply, and its automatic JSON deserialisation (the default)
 * parses only strings that are JSON, which the script never returns — its replies are integers
 * and, for a unit that failed in Redis, Redis's error message, which begins with an uppercase
 * error code (`WRONGTYPE …`, `ERR …`). Errors: a `NOSCRIPT` reply surfaces as an `UpstashError`
 * whose message holds it (see {@link withoutCommand}); a network error, after the client's own
 * retries, as the `fetch` error. Its requests have no deadline of their own: the decision queue's
 * timeout decides, and a reply that arrives after it (the client still retrying, or a slow
 * network) is read for nothing — the script wrote nothing when it started past the call's
 * deadline, and a re-sent call finds its token. Never a Cluster.
 */
function upstashAdapter(up: UpstashLike, c: Record<string, unknown>): RedisAdapter {
  return {
    ratewardenAdapter: true,
    cluster: false,
    resends: upstashResends(c),
    evalSha: (sha, keys, args) => up.evalsha(sha, keys as string[], args as string[]).catch(withoutCommand),
    eval: (script, keys, args) => up.eval(script, keys as string[], args as string[]).catch(withoutCommand),
  };
}
