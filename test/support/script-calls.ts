// Issue 12's tests of micro-batching and the block cache: an adapter over a real client that
// records every script call it forwards (which keys, how many decisions, their hash slots), an
// in-memory model of the Redis strategies fed by key, and the cluster clients of both libraries.
import keySlot from 'cluster-key-slot';
import { Cluster } from 'ioredis';
import { createCluster } from 'redis';
import type { Quota } from '../../src/quota.js';
import type { RateLimitResult } from '../../src/result.js';
import type { RateLimitStrategy } from '../../src/strategy.js';
import { toRedisAdapter, type RedisAdapter } from '../../src/redis/client.js';
import { readCall } from '../../src/redis/protocol.js';

/** One script call as sent: `EVALSHA` or `EVAL`, its keys and arguments. */
export interface ScriptCall {
  readonly command: 'evalSha' | 'eval';
  readonly keys: readonly string[];
  readonly args: readonly string[];
  /**
   * Decisions carried: its units (a single decision, or a group's), read back by the protocol's
   * own reader (`readCall` in src/redis/protocol.ts); 0 for the handshake (`t`).
   */
  readonly decisions: number;
  /** Sliding-window-log units it may record: the costs of the `l` entries of its recording units. */
  readonly logUnits: number;
  /** The distinct hash slots of its keys (the call token's included). */
  readonly slots: ReadonlySet<number>;
}

/** A recording adapter: the real client's adapter underneath, every call kept in `calls`. */
export interface RecordingAdapter extends RedisAdapter {
  readonly calls: ScriptCall[];
  /** Decisions carried by the `EVALSHA` calls so far (an `EVAL` after `NOSCRIPT` repeats one). */
  sentDecisions(): number;
  /** `EVALSHA` calls that carried decisions (not the handshake). */
  decidingCalls(): ScriptCall[];
}

function describeCall(command: 'evalSha' | 'eval', keys: readonly string[], args: readonly string[]): ScriptCall {
  const call = readCall(args);
  const units = call?.units ?? [];
  let logUnits = 0;
  for (const unit of units) if (unit.record) for (const e of unit.entries) if (e.id === 'l') logUnits += e.cost;
  return { command, keys: [...keys], args: [...args], decisions: units.length, logUnits, slots: new Set(keys.map((k) => keySlot(k))) };
}

/** Wraps `client` (a node-redis or ioredis client or cluster) in a {@link RecordingAdapter}. */
export function recordingAdapter(client: object): RecordingAdapter {
  const inner = toRedisAdapter(client);
  const calls: ScriptCall[] = [];
  return {
    ratewardenAdapter: true,
    cluster: inner.cluster === true,
    resends: inner.resends === true,
    calls,
    sentDecisions: () => calls.filter((c) => c.command === 'evalSha').reduce((n, c) => n + c.decisions, 0),
    decidingCalls: () => calls.filter((c) => c.command === 'evalSha' && c.decisions > 0),
    evalSha: (sha, keys, args) => {
      calls.push(describeCall('evalSha', keys, args));
      return inner.evalSha(sha, keys, args);
    },
    eval: (script, keys, args) => {
      calls.push(describeCall('eval', keys, args));
      return inner.eval(script, keys, args);
    },
  };
}

/** The in-memory strategy behind a Redis one, keyed as a store is: the model of the contract. */
export class MemoryModel {
  readonly #strategy: RateLimitStrategy<unknown>;
  readonly #states = new Map<string, unknown>();

  constructor(strategy: RateLimitStrategy<unknown>) {
    this.#strategy = strategy;
  }

  consume(key: string, nowMs: number, cost: number, quota: Quota): RateLimitResult {
    let state = this.#states.get(key);
    if (state === undefined) {
      state = this.#strategy.createState(quota);
      this.#states.set(key, state);
    }
    return this.#strategy.consume(state, nowMs, cost, quota);
  }

  peek(key: string, nowMs: number, cost: number, quota: Quota): RateLimitResult {
    return this.#strategy.peek(this.#states.get(key), nowMs, cost, quota);
  }

  /** Forgets `key` (as a `DEL` of its Redis key). */
  delete(key: string): void {
    this.#states.delete(key);
  }
}

/** A connected cluster client of one library. */
export interface ClusterClient {
  readonly client: object;
  close(): Promise<void>;
}

/** The cluster clients of both libraries, connected to the nodes on `ports`. */
export const CLUSTER_CLIENTS: readonly [string, (ports: readonly number[]) => Promise<ClusterClient>][] = [
  [
    'ioredis Cluster',
    async (ports) => {
      const client = new Cluster(ports.map((port) => ({ host: '127.0.0.1', port })));
      client.on('error', () => {});
      await new Promise<void>((resolve) => client.once('ready', () => resolve()));
      return { client, close: async () => client.disconnect() };
    },
  ],
  [
    'node-redis createCluster',
    async (ports) => {
      const client = createCluster({ rootNodes: ports.map((port) => ({ url: `redis://127.0.0.1:${port}` })) });
      client.on('error', () => {});
      await client.connect();
      return { client, close: async () => client.destroy() };
    },
  ],
];

/** Ids whose hash slots differ pairwise (the slot is the CRC16 of the id, the keys' hash tag). */
export function idsInDistinctSlots(count: number, stem = 'user'): string[] {
  const ids: string[] = [];
  const seen = new Set<number>();
  for (let i = 0; ids.length < count; i++) {
    const id = `${stem}${i}`;
    const slot = keySlot(id);
    if (seen.has(slot)) continue;
    seen.add(slot);
    ids.push(id);
  }
  return ids;
}
