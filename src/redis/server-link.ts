/**
 * What every script call on one client and time mode shares: the adapter, the server's clock
 * (its offset to this process's, learnt from the server time each reply carries, or from a
 * handshake before the first call), `EVALSHA` with its `NOSCRIPT` fallback, and the call tokens
 * of clients that re-send. The calls themselves are made by the decision queue
 * (`./decision-queue.ts`), which holds a link; a link knows nothing of queues.
 *
 * @module
 */
import { RateWardenRedisReplyError, RateWardenRedisUnavailableError } from '../errors.js';
import { isNoScript, type RedisAdapter } from './client.js';
import { describeReply, toNumber } from './protocol.js';
import { DECIDE_SCRIPT, DECIDE_SHA } from './script.js';

/**
 * This process's part of every call id (72 random bits, 12 base64url characters), so that ids
 * never collide across processes sharing a Redis; a counter makes the rest. From the global Web
 * Crypto (`crypto.getRandomValues`: Node 20 and later, Workers, Deno, Bun, browsers), so that
 * this entry imports no Node module; drawn at the first call that needs a token, not at import
 * (Cloudflare Workers long refused random values outside a request).
 */
let processNonce: string | undefined;

/** `bytes` in base64url without padding (RFC 4648 §5), with the global `btoa`. */
function base64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}

/** Call tokens made so far in this process (the rest of every call id). */
let calls = 0;

/** Links, by adapter and time mode: strategies on one client share them. */
const links = new WeakMap<RedisAdapter, { redis?: ServerLink; limiter?: ServerLink }>();

/** @internal The link of the strategies on `adapter` with time mode `time`. */
export function linkFor(adapter: RedisAdapter, time: 'redis' | 'limiter'): ServerLink {
  let shared = links.get(adapter);
  if (shared === undefined) {
    shared = {};
    links.set(adapter, shared);
  }
  return (shared[time] ??= new ServerLink(adapter, time));
}

/**
 * @internal The object `registry` keeps for `link`, made by `make` the first time: what is
 * shared by every strategy on one client and time mode (the decision queue, the group batch).
 */
export function perLink<T>(registry: WeakMap<ServerLink, T>, link: ServerLink, make: (link: ServerLink) => T): T {
  let made = registry.get(link);
  if (made === undefined) {
    made = make(link);
    registry.set(link, made);
  }
  return made;
}

/** @internal See the module description. */
export class ServerLink {
  readonly adapter: RedisAdapter;
  readonly time: 'redis' | 'limiter';
  /** Whether the client is a Redis Cluster client (scripts must keep to one hash slot). */
  readonly cluster: boolean;
  /** Whether the client may re-send a call after a reconnect: recording calls then carry a token. */
  readonly resends: boolean;
  /**
   * The server's clock minus this process's (`performance.now()`), in microseconds, learnt from
   * the server time every reply carries (the handshake's first); `undefined` until then. Always
   * an underestimate, by the reply's time in transit, so deadlines derived from it fall early,
   * never late.
   */
  offsetUs: number | undefined;
  /** The handshake in flight, shared by the calls that need it; `undefined` when none is. */
  #handshake: Promise<void> | undefined;

  constructor(adapter: RedisAdapter, time: 'redis' | 'limiter') {
    this.adapter = adapter;
    this.time = time;
    this.cluster = adapter.cluster === true;
    this.resends = adapter.resends === true;
  }

  /** A fresh call token key in `key`'s hash slot (its first `{…}` stays the hash tag). */
  tokenFor(key: string): string {
    processNonce ??= base64url(crypto.getRandomValues(new Uint8Array(9)));
    return `${key}:call:${processNonce}${(calls++).toString(36)}`;
  }

  /** Whether a handshake is in flight. */
  get shaking(): boolean {
    return this.#handshake !== undefined;
  }

  /**
   * The handshake (shared while in flight): the script's `t` mode, which writes nothing, on
   * `keys` so that it reaches their node; learns the offset, or rejects.
   */
  handshake(keys: readonly string[]): Promise<void> {
    this.#handshake ??= this.run(keys, ['t'], () => false)
      .then((reply) => {
        if (!Array.isArray(reply) || reply.length !== 1 || !this.learn(reply[0])) {
          throw new RateWardenRedisReplyError(describeReply(reply));
        }
      })
      .finally(() => {
        this.#handshake = undefined;
      });
    return this.#handshake;
  }

  /** Learns the offset from a reply's server time (microseconds); whether it was a number. */
  learn(serverTime: unknown): boolean {
    const serverUs = toNumber(serverTime);
    if (!Number.isFinite(serverUs)) return false;
    this.offsetUs = serverUs - performance.now() * 1000;
    return true;
  }

  /**
   * Whether the client may be sent a command now: the adapter's `connected()` (absent, or
   * throwing: `true`). `false` only while the client is known to be disconnected.
   */
  connected(): boolean {
    const adapter = this.adapter;
    if (adapter.connected === undefined) return true;
    try {
      // Only `false` says disconnected (an adapter of one's own may return anything).
      const connected: unknown = adapter.connected();
      return connected !== false;
    } catch {
      return true;
    }
  }

  /**
   * `EVALSHA`, then `EVAL` when the server does not have the script (after a flush or restart),
   * unless the caller has given up by then (`gaveUp()`). Rejects at once, sending nothing, with
   * a `RateWardenRedisUnavailableError` while the client is known to be disconnected
   * ({@link connected}).
   */
  run(keys: readonly string[], args: readonly string[], gaveUp: () => boolean): Promise<unknown> {
    if (!this.connected()) return Promise.reject(new RateWardenRedisUnavailableError());
    let sent: Promise<unknown>;
    try {
      sent = this.adapter.evalSha(DECIDE_SHA, keys, args);
    } catch (error) {
      // An adapter of one's own that throws instead of rejecting: a failure all the same.
      return Promise.reject(error);
    }
    return Promise.resolve(sent).catch((error: unknown) => {
      if (!isNoScript(error) || gaveUp()) throw error;
      return this.adapter.eval(DECIDE_SCRIPT, keys, args);
    });
  }
}
