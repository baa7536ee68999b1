// The fault suites' clients (test/integration/redis/faults.test.ts, and the tests of issue 12
// that provoke faults while batches are in flight): clients that fail commands at once while
// disconnected and reconnect, and clients with the default offline queue.
import { Redis } from 'ioredis';
import { createClient } from 'redis';

/** A client that fails commands at once while disconnected (no offline queue), and reconnects. */
export interface FaultClient {
  readonly client: object;
  /** Resolves when the client is connected and ready again. */
  ready(): Promise<void>;
  command(...args: string[]): Promise<unknown>;
  close(): Promise<void>;
}

export function ioredisClient(port: number): FaultClient {
  const client = new Redis({ port, host: '127.0.0.1', enableOfflineQueue: false, retryStrategy: () => 20 });
  client.on('error', () => {
    // Connection errors are expected here; commands report them.
  });
  return {
    client,
    ready: () => (client.status === 'ready' ? Promise.resolve() : new Promise((resolve) => client.once('ready', () => resolve()))),
    command: (...args) => client.call(args[0] as string, ...args.slice(1)),
    close: async () => client.disconnect(),
  };
}

export function nodeRedisClient(port: number): FaultClient {
  const client = createClient({
    socket: { port, host: '127.0.0.1', reconnectStrategy: () => 20 },
    disableOfflineQueue: true,
  });
  client.on('error', () => {
    // As above.
  });
  const connecting = client.connect();
  return {
    client,
    ready: async () => {
      await connecting;
      if (!client.isReady) await new Promise<void>((resolve) => client.once('ready', () => resolve()));
    },
    command: (...args) => client.sendCommand(args),
    close: async () => client.destroy(),
  };
}

/**
 * A client with the clients' default offline queue: commands sent before the connection is
 * ready wait for it (against a server that never answers, forever).
 */
export function queueingClient(kind: 'ioredis' | 'node-redis', port: number): { client: object; close: () => Promise<void> } {
  if (kind === 'ioredis') {
    const client = new Redis({ port, host: '127.0.0.1' });
    client.on('error', () => {});
    return { client, close: async () => client.disconnect() };
  }
  const client = createClient({ socket: { port, host: '127.0.0.1', reconnectStrategy: false } });
  client.on('error', () => {});
  // Never resolves against a silent server; rejects when the test closes it.
  client.connect().catch(() => {});
  return {
    client,
    close: async () => {
      client.destroy();
    },
  };
}

export const FAULT_CLIENTS = [
  ['ioredis', ioredisClient],
  ['node-redis', nodeRedisClient],
] as const;
