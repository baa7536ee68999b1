// A real redis-server for the tests: started on a free loopback port with persistence off,
// stopped at the end. No mocks of Redis. `.ci/run` installs Debian's redis-server when missing.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { once } from 'node:events';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import type { RedisAdapter } from '../../src/redis/client.js';

const BINARY = 'redis-server';

/** Whether redis-server is installed; the Redis tests fail with this message when it is not. */
export function requireRedisServer(): void {
  const probe = spawnSync(BINARY, ['--version'], { encoding: 'utf8' });
  if (probe.error !== undefined || probe.status !== 0) {
    throw new Error('redis-server not found: install it (apt-get install -y redis-server); .ci/run does');
  }
}

/** A free TCP port on 127.0.0.1 (listen on port 0, read it, close). */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  await once(server, 'close');
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** One redis-server process on 127.0.0.1. */
export class RedisServer {
  readonly port: number;
  #process: ChildProcess | undefined;

  private constructor(port: number, extra: readonly string[]) {
    this.port = port;
    this.#extra = extra;
  }

  readonly #extra: readonly string[];

  /**
   * Starts a server on a free port (or on `port`), resolving once it accepts connections.
   * `extra`: more command-line options (Cluster mode).
   */
  static async start(port?: number, extra: readonly string[] = []): Promise<RedisServer> {
    requireRedisServer();
    const server = new RedisServer(port ?? (await freePort()), extra);
    await server.restart();
    return server;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** (Re)starts the process on the same port: an empty server, with no scripts cached. */
  async restart(): Promise<void> {
    const child = spawn(
      BINARY,
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...this.#extra],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    this.#process = child;
    let output = '';
    await new Promise<void>((resolve, reject) => {
      const onData = (chunk: Buffer): void => {
        output += chunk.toString();
        if (output.includes('Ready to accept connections')) {
          child.stdout?.off('data', onData);
          resolve();
        }
      };
      child.stdout?.on('data', onData);
      child.once('exit', (code) => reject(new Error(`redis-server exited (${code}) before it was ready:\n${output}`)));
      child.once('error', reject);
    });
    // Keep draining its output so that it never blocks on a full pipe.
    child.stdout?.resume();
    child.stderr?.resume();
  }

  /** Kills the process at once (SIGKILL: no shutdown, clients see the connection drop). */
  async kill(): Promise<void> {
    const child = this.#process;
    this.#process = undefined;
    if (child?.exitCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;
  }

  /** Stops the process (SIGTERM) and waits for it to exit. */
  async stop(): Promise<void> {
    const child = this.#process;
    this.#process = undefined;
    if (child?.exitCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    await exited;
  }
}

/**
 * The two maintained clients, connected to `server`, behind one small interface for tests (and
 * `@upstash/redis` through an HTTP front: `connectUpstash` in ./upstash-front.ts).
 */
export interface TestClient {
  readonly name: 'ioredis' | 'node-redis' | 'upstash';
  /** The client object itself, to pass as `client`. */
  readonly client: object;
  /** Sends any command and returns its reply. */
  command(...args: string[]): Promise<unknown>;
  close(): Promise<void>;
}

export async function connectIoredis(url: string): Promise<TestClient> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  client.on('error', () => {
    // Connection errors surface through commands (as for node-redis below).
  });
  await client.connect();
  return {
    name: 'ioredis',
    client,
    command: (...args) => client.call(args[0] as string, ...args.slice(1)),
    close: async () => {
      client.disconnect();
    },
  };
}

export async function connectNodeRedis(url: string): Promise<TestClient> {
  const client = createClient({ url });
  client.on('error', () => {
    // Connection errors surface through commands; the fault tests provoke them on purpose.
  });
  await client.connect();
  return {
    name: 'node-redis',
    client,
    command: (...args) => client.sendCommand(args),
    close: async () => {
      client.destroy();
    },
  };
}

export const CLIENTS = [
  ['ioredis', connectIoredis],
  ['node-redis', connectNodeRedis],
] as const;

/**
 * A TCP server on 127.0.0.1 that accepts connections and never answers: a Redis that hangs.
 */
export async function blackHole(onConnection?: () => (chunk: Buffer) => void): Promise<{ port: number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    // Read everything, and answer nothing (`onConnection` may look at what it reads).
    socket.on('data', onConnection?.() ?? (() => {}));
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    port: address.port,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      server.close();
      await once(server, 'close');
    },
  };
}

/** An adapter that counts the script calls it forwards (a real client underneath). */
export function countingAdapter(inner: RedisAdapter): RedisAdapter & { calls: { evalSha: number; eval: number } } {
  const calls = { evalSha: 0, eval: 0 };
  return {
    ratewardenAdapter: true,
    cluster: inner.cluster === true,
    resends: inner.resends === true,
    calls,
    evalSha: (sha, keys, args) => {
      calls.evalSha++;
      return inner.evalSha(sha, keys, args);
    },
    eval: (script, keys, args) => {
      calls.eval++;
      return inner.eval(script, keys, args);
    },
  };
}

/**
 * A Redis Cluster of three masters on free loopback ports (no replicas, persistence off),
 * created with `redis-cli --cluster create`; resolves once every node reports `cluster_state:ok`.
 */
export async function startCluster(): Promise<{ ports: number[]; stop: () => Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'ratewarden-cluster-'));
  const ports = [await freePort(), await freePort(), await freePort()];
  const nodes = await Promise.all(
    ports.map((port) =>
      RedisServer.start(port, ['--cluster-enabled', 'yes', '--cluster-config-file', join(dir, `nodes-${port}.conf`), '--dir', dir]),
    ),
  );
  const stop = async (): Promise<void> => {
    await Promise.all(nodes.map((node) => node.stop()));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const created = spawnSync(
      'redis-cli',
      ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes'],
      { encoding: 'utf8' },
    );
    if (created.status !== 0) throw new Error(`redis-cli --cluster create failed:\n${created.stdout}${created.stderr}`);
    // Each check is a round trip to every node; the nodes agree within moments of the create.
    for (const port of ports) {
      const client = new Redis({ port, host: '127.0.0.1' });
      try {
        while (!String(await client.call('CLUSTER', 'INFO')).includes('cluster_state:ok')) {
          // ask again
        }
      } finally {
        client.disconnect();
      }
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { ports, stop };
}

/**
 * A TCP proxy on 127.0.0.1 in front of a redis-server that can lose a reply: once armed by
 * `dropNextReply()`, the next bytes the server sends are thrown away and both sides of that
 * connection are closed, as when a connection drops after the server ran a command but before
 * its reply arrived. The client reconnects through the proxy. `dropNextReply(skip)` lets `skip`
 * replies (chunks the server sends) through first; it resolves when a reply has been dropped.
 */
export async function lossyProxy(targetPort: number): Promise<{
  port: number;
  dropNextReply(skip?: number): Promise<void>;
  close(): Promise<void>;
}> {
  let armed: (() => void) | undefined;
  let skipping = 0;
  const proxy = await forwardingProxy(targetPort, () => ({
    fromServer: (chunk, client, upstream) => {
      const dropped = armed;
      if (dropped === undefined || skipping > 0) {
        if (dropped !== undefined) skipping--;
        client.write(chunk);
        return;
      }
      armed = undefined;
      client.destroy();
      upstream.destroy();
      dropped();
    },
  }));
  return {
    port: proxy.port,
    dropNextReply: (skip = 0) =>
      new Promise<void>((resolve) => {
        skipping = skip;
        armed = resolve;
      }),
    close: proxy.close,
  };
}

/**
 * A TCP proxy on 127.0.0.1 in front of `targetPort`: each client connection gets one upstream
 * connection; bytes go both ways as they come unless `route()` (called once per connection)
 * says otherwise for a direction (`fromClient`, `fromServer`). Closing either side closes the
 * other; `close()` ends every connection and the server.
 */
export async function forwardingProxy(
  targetPort: number,
  route: () => {
    fromClient?: (chunk: Buffer, client: Socket, upstream: Socket) => void;
    fromServer?: (chunk: Buffer, client: Socket, upstream: Socket) => void;
  },
): Promise<{ port: number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const track = (socket: Socket): void => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
  };
  const server: Server = createServer((client) => {
    const upstream = connect({ port: targetPort, host: '127.0.0.1' });
    track(client);
    track(upstream);
    const { fromClient, fromServer } = route();
    client.on('data', (chunk: Buffer) => (fromClient === undefined ? upstream.write(chunk) : fromClient(chunk, client, upstream)));
    upstream.on('data', (chunk: Buffer) => (fromServer === undefined ? client.write(chunk) : fromServer(chunk, client, upstream)));
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    port: address.port,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      server.close();
      await once(server, 'close');
    },
  };
}
