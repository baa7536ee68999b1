// An HTTP server on 127.0.0.1 that speaks Upstash's REST protocol in front of a real
// redis-server, as Upstash's open-source compatible server (serverless-redis-http, "SRH") does,
// so that tests drive the real `@upstash/redis` client end to end: its request encoding, its
// auto-pipelining, its base64 response decoding, its JSON deserialisation, its retries. Written
// from Upstash's documentation (REST API, pipelining and transactions), from what the client
// sends and expects (node_modules/@upstash/redis) and from SRH's behaviour (its statuses: 400
// for a Redis error, 401, 500 when Redis is unreachable); no code of either is copied. It runs
// the commands with ioredis's raw `callBuffer` (bulk strings as bytes, so that base64 is exact),
// and can misbehave on demand:
// hold requests (before or after running them), answer slowly, lose a reply after running its
// commands, go down (refuse connections) and come back.
//
// What of the protocol it covers:
// - `POST /` with a JSON array body, the command and its arguments (strings; numbers and booleans
//   as their JSON text, as Upstash reads them): `200 {"result": …}`; a Redis error
//   `400 {"error": "<Redis's message>"}`.
// - `POST /pipeline` with an array of such arrays: `200 [{"result": …} | {"error": …}, …]`, the
//   commands run in order on one connection, not atomically (other clients' commands may come
//   between them).
// - `POST /multi-exec`: the same body, run in `MULTI` … `EXEC` (atomically): `200` with one
//   `{"result"}` or `{"error"}` (a command that failed when run) per command; a transaction
//   Redis refused to queue (`EXECABORT`: an unknown command, wrong arity) `400 {"error"}`.
// - `Authorization: Bearer <token>`: a missing or other token is `401 {"error"}`.
// - `Upstash-Encoding: base64`: every string of a result (bulk and status replies, at any depth
//   of arrays) base64-encoded (UTF-8 bytes as Redis holds them); numbers and null as they are;
//   errors never encoded. Without it, strings as UTF-8 text.
// - Results: Redis integers as JSON numbers, nil as null, arrays as arrays.
// - `upstash-sync-token` (read-your-writes): echoed back when the request carries one; one
//   redis-server has no replica to wait for, so the token needs no meaning.
// - Malformed bodies (not JSON, not an array of strings and numbers, an empty command) `400
//   {"error"}`; another method `405`, another path `404`, each `{"error"}`; Redis unreachable
//   behind it `500 {"error"}`.
// What it does not cover: the path-style API (`GET /set/foo/bar`, `?_token=`), SRH's check of
// `Content-Type: application/json` (any body is read as JSON), the request body
// as a last argument of a path command, pub/sub and `/monitor` (server-sent events), read-only
// tokens, Upstash's own limits and their errors (request and payload sizes, rate limits),
// JSON/search/vector commands beyond what the redis-server runs, RESP3, telemetry headers
// (ignored), TLS, and integers beyond 2^53 (ioredis reads them as JavaScript numbers).
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { Redis as Upstash, type RedisConfigNodejs } from '@upstash/redis';
import { Redis as Ioredis, ReplyError as IoredisReplyError } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { RedisServer, type TestClient } from './redis-server.js';

/** Redis's error replies, as ioredis makes them (its typings declare the class `any`). */
const ReplyError = IoredisReplyError as new (...args: never[]) => Error;

/** A request the front accepted (authorised, well formed), in order of arrival. */
export interface ReceivedRequest {
  readonly path: '/' | '/pipeline' | '/multi-exec';
  /** Its commands (one for `/`), each as the list of strings sent to Redis. */
  readonly commands: readonly (readonly string[])[];
}

/** When a paused front holds a request: before its commands run, or after (their reply held). */
export type HoldPoint = 'before-running' | 'after-running';

/** A held request: released by `resume()`, dropped unanswered (not run, if not yet) by `down()`. */
interface Held {
  readonly release: (go: boolean) => void;
}

type Body = readonly (readonly (string | number | boolean)[])[];

/** A refusal: its HTTP status, and its message (the body's `error`). */
class Refusal extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** A count, and promises that it reaches a value. */
class Gauge {
  value = 0;
  #waiters: { count: number; resolve: () => void }[] = [];

  add(step: number): void {
    this.value += step;
    this.#waiters = this.#waiters.filter((w) => {
      if (this.value < w.count) return true;
      w.resolve();
      return false;
    });
  }

  /** Resolves once the count is `count` or more (at once if it is). */
  when(count: number): Promise<void> {
    if (this.value >= count) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ count, resolve }));
  }
}

/** One result as Upstash sends it: strings base64-encoded when asked, recursively in arrays. */
function encodeResult(value: unknown, base64: boolean): unknown {
  if (Buffer.isBuffer(value)) return base64 ? value.toString('base64') : value.toString('utf8');
  if (typeof value === 'string') return base64 ? Buffer.from(value, 'utf8').toString('base64') : value;
  if (Array.isArray(value)) return value.map((v) => encodeResult(v, base64));
  // A Redis error nested in a reply (a script's error table): its message, like a string.
  if (value instanceof Error) return encodeResult(value.message, base64);
  return value ?? null;
}

/** A command of the body, validated: a non-empty array of strings, numbers and booleans. */
function commandOf(value: unknown): string[] {
  if (!Array.isArray(value) || value.length === 0) throw new Refusal(400, 'ERR expected a non-empty JSON array of strings and numbers as the command');
  return value.map((v: unknown) => {
    if (typeof v === 'string') return v;
    if (typeof v === 'number' || typeof v === 'boolean') return JSON.stringify(v);
    throw new Refusal(400, `ERR a command argument must be a string or a number, got ${JSON.stringify(v)}`);
  });
}

/** The Upstash REST front; see the file's description. */
export class UpstashFront {
  /** The token clients must present. */
  readonly token: string;
  /** Every accepted request, in order of arrival (held ones included). */
  readonly received: ReceivedRequest[] = [];
  /** HTTP requests that reached it, refused ones (401, 400, …) included. */
  attempts = 0;
  readonly #settled = new Gauge();
  readonly #redis: Ioredis;
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  #port = 0;
  #hold: HoldPoint | undefined;
  readonly #held: Held[] = [];
  readonly #holding = new Gauge();
  #slowMs = 0;
  readonly #delaying = new Gauge();
  #dropNext: (() => void) | undefined;

  private constructor(redisPort: number, token: string) {
    this.token = token;
    // No offline queue and no retry: with redis-server down, a request fails at once (500).
    this.#redis = new Ioredis({ port: redisPort, host: '127.0.0.1', enableOfflineQueue: false, maxRetriesPerRequest: 0, lazyConnect: true });
    this.#redis.on('error', () => {
      // Surfaces through the requests (500); ioredis reconnects on its own.
    });
    this.#server = createServer((req, res) => {
      void this.#handle(req, res);
    });
    this.#server.on('connection', (socket: Socket) => {
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
    });
  }

  /** Starts a front on a free port of 127.0.0.1 in front of the redis-server on `redisPort`. */
  static async start(redisPort: number, token = `token-${crypto.randomUUID()}`): Promise<UpstashFront> {
    const front = new UpstashFront(redisPort, token);
    await front.#redis.connect();
    await front.#listen(0);
    return front;
  }

  /** The REST URL (`http://127.0.0.1:<port>`), to pass as the client's `url`. */
  get url(): string {
    return `http://127.0.0.1:${this.#port}`;
  }

  /** How many requests are held now. */
  get held(): number {
    return this.#held.length;
  }

  /** Requests done with: answered, refused, their reply dropped, or dropped by `down()`. */
  get settled(): number {
    return this.#settled.value;
  }

  /**
   * Holds every request from now on at `point` until {@link resume}: `before-running`, as a
   * server that does not answer (its commands run only when released, as after `CLIENT PAUSE`);
   * `after-running`, their commands run at once and their replies held (a slow way back).
   */
  pause(point: HoldPoint = 'before-running'): void {
    this.#hold = point;
  }

  /** Resolves once `count` requests are held (at once if they are already). */
  whenHeld(count: number): Promise<void> {
    return this.#holding.when(count);
  }

  /** Resolves once `count` requests (from the start) are done with (see {@link settled}). */
  whenSettled(count: number): Promise<void> {
    return this.#settled.when(count);
  }

  /** Stops holding, and releases the held requests (in order of arrival). */
  resume(): void {
    this.#hold = undefined;
    this.#release(true);
  }

  /** Delays every answer by `ms` milliseconds (with `setTimeout`: fake timers drive it); `0` ends it. */
  slow(ms: number): void {
    this.#slowMs = ms;
  }

  /** Resolves once `count` answers wait out the delay of {@link slow} (their timers set). */
  whenDelaying(count: number): Promise<void> {
    return this.#delaying.when(count);
  }

  /**
   * The next request's commands run; then its connection is destroyed without an answer (the
   * reply lost on its way back: the client sees a network error). Resolves once that is done.
   */
  dropNextReply(): Promise<void> {
    return new Promise((resolve) => {
      this.#dropNext = resolve;
    });
  }

  /**
   * Down: stops listening and destroys every connection (new ones are refused); held requests
   * are dropped unanswered, those not run yet never run.
   */
  async down(): Promise<void> {
    this.#release(false);
    this.#hold = undefined;
    const closed = once(this.#server, 'close');
    this.#server.close();
    for (const socket of this.#sockets) socket.destroy();
    await closed;
  }

  /** Up again, on the same port. */
  async up(): Promise<void> {
    await this.#listen(this.#port);
  }

  /** Stops the front (held requests dropped) and its Redis connection. */
  async close(): Promise<void> {
    if (this.#server.listening) await this.down();
    this.#redis.disconnect();
  }

  async #listen(port: number): Promise<void> {
    this.#server.listen(port, '127.0.0.1');
    await once(this.#server, 'listening');
    const address = this.#server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    this.#port = address.port;
  }

  /** Waits at a hold point; whether to go on (`false`: the front went down meanwhile). */
  #wait(): Promise<boolean> {
    return new Promise((resolve) => {
      this.#held.push({ release: resolve });
      this.#holding.add(1);
    });
  }

  /** Releases every held request: to go on (`true`) or to be dropped. */
  #release(go: boolean): void {
    const held = this.#held.splice(0);
    this.#holding.add(-held.length);
    for (const h of held) h.release(go);
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.attempts++;
    try {
      await this.#answer(req, res);
    } finally {
      this.#settled.add(1);
    }
  }

  async #answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    res.on('error', () => {
      // The connection went away (down(), a lost reply): nothing to answer.
    });
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    const sync = req.headers['upstash-sync-token'];
    if (typeof sync === 'string') headers['upstash-sync-token'] = sync;
    const send = (status: number, body: unknown): void => {
      res.writeHead(status, headers);
      res.end(JSON.stringify(body));
    };
    try {
      const path = req.url;
      if (path !== '/' && path !== '/pipeline' && path !== '/multi-exec') throw new Refusal(404, `ERR no such endpoint: ${String(path)}`);
      if (req.method !== 'POST') throw new Refusal(405, `ERR method ${String(req.method)} not allowed: POST a JSON body`);
      if (req.headers.authorization !== `Bearer ${this.token}`) throw new Refusal(401, 'Unauthorized');
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        throw new Refusal(400, 'ERR the body is not JSON');
      }
      let commands: string[][];
      if (path === '/') commands = [commandOf(body)];
      else if (!Array.isArray(body) || body.length === 0) throw new Refusal(400, 'ERR expected a non-empty JSON array of commands');
      else commands = (body as Body).map(commandOf);
      this.received.push({ path, commands });
      const base64 = req.headers['upstash-encoding'] === 'base64';
      const drop = this.#dropNext;
      this.#dropNext = undefined;

      if (this.#hold === 'before-running' && !(await this.#wait())) return;
      const answer = await this.#run(path, commands, base64);
      if (this.#hold === 'after-running' && !(await this.#wait())) return;
      if (drop !== undefined) {
        req.socket.destroy();
        drop();
        return;
      }
      if (this.#slowMs > 0) {
        const delayed = new Promise((resolve) => setTimeout(resolve, this.#slowMs));
        this.#delaying.add(1);
        await delayed;
        this.#delaying.add(-1);
      }
      send(answer.status, answer.body);
    } catch (error) {
      if (error instanceof Refusal) send(error.status, { error: error.message });
      else send(500, { error: `ERR the front could not reach Redis: ${(error as Error).message}` });
    }
  }

  /** Runs the commands of one request; its status and body. */
  async #run(path: ReceivedRequest['path'], commands: readonly string[][], base64: boolean): Promise<{ status: number; body: unknown }> {
    const redis = this.#redis;
    if (path === '/') {
      const [name, ...args] = commands[0] as string[];
      try {
        return { status: 200, body: { result: encodeResult(await redis.callBuffer(name as string, ...args), base64) } };
      } catch (error) {
        if (error instanceof ReplyError) return { status: 400, body: { error: error.message } };
        throw error;
      }
    }
    const batch = path === '/pipeline' ? redis.pipeline() : redis.multi();
    for (const [name, ...args] of commands) batch.callBuffer(name as string, ...args);
    let replies: [Error | null, unknown][] | null;
    try {
      replies = await batch.exec();
    } catch (error) {
      // EXECABORT: Redis refused to queue a command of the transaction; nothing ran.
      if (error instanceof ReplyError) return { status: 400, body: { error: error.message } };
      throw error;
    }
    if (replies === null) throw new Error('the transaction was discarded');
    const results = replies.map(([error, result]) => {
      if (error instanceof ReplyError) return { error: error.message };
      if (error !== null) throw error as Error;
      return { result: encodeResult(result, base64) };
    });
    return { status: 200, body: results };
  }
}

/**
 * `@upstash/redis`'s Node client (its defaults: auto-pipelining, base64 responses, automatic
 * deserialisation, 5 retries) through a front of its own in front of the redis-server at `url`,
 * as a {@link TestClient}: `command` goes to the redis-server directly (ioredis), to look at what
 * the strategies wrote; `close` stops the front. `config`: more options of the client.
 */
export async function connectUpstash(url: string, config: Partial<RedisConfigNodejs> = {}): Promise<TestClient & { readonly front: UpstashFront; readonly redis: Upstash }> {
  const port = Number(new URL(url).port);
  const front = await UpstashFront.start(port);
  const redis = new Upstash({ url: front.url, token: front.token, ...config });
  const raw = new Ioredis({ port, host: '127.0.0.1', maxRetriesPerRequest: 1 });
  raw.on('error', () => {
    // Connection errors surface through `command`.
  });
  return {
    name: 'upstash',
    client: redis,
    front,
    redis,
    command: (...args) => raw.call(args[0] as string, ...args.slice(1)),
    close: async () => {
      raw.disconnect();
      await front.close();
    },
  };
}

/** `@upstash/redis` through a front, as an entry of a `describe.each` over clients (with `CLIENTS`). */
export const UPSTASH_CLIENT = ['upstash', (url: string) => connectUpstash(url)] as const;

/** What {@link useUpstashFront} starts for a test file; read its members inside tests and hooks. */
export interface UpstashSetup {
  /** The redis-server behind the front. */
  readonly server: RedisServer;
  /** The front of Upstash's REST protocol before `server`. */
  readonly front: UpstashFront;
  /**
   * An ioredis client of `server` itself (with an `error` listener, so strategies handed it do
   * not warn), to look at or prepare what the strategies wrote, or as the reference client.
   */
  readonly redis: Ioredis;
  /** A new `@upstash/redis` client of `front`, with `config` over the client's defaults. */
  readonly upstash: (config?: Partial<RedisConfigNodejs>) => Upstash;
}

/**
 * Registers the hooks that start a redis-server, a front before it and an ioredis client of the
 * redis-server for a test file (`beforeAll`), and stop them (`afterAll`); call once at the file's
 * top level. Its members throw when read before `beforeAll` ran.
 */
export function useUpstashFront(): UpstashSetup {
  let started: { server: RedisServer; front: UpstashFront; redis: Ioredis } | undefined;
  const get = (): NonNullable<typeof started> => {
    if (started === undefined) throw new Error('useUpstashFront: read inside a test or a hook, once beforeAll ran');
    return started;
  };
  let server: RedisServer | undefined;
  let front: UpstashFront | undefined;
  let redis: Ioredis | undefined;
  beforeAll(async () => {
    server = await RedisServer.start();
    front = await UpstashFront.start(server.port);
    redis = new Ioredis({ port: server.port, host: '127.0.0.1' });
    redis.on('error', () => {
      // Connection errors surface through the commands sent.
    });
    started = { server, front, redis };
  });
  afterAll(async () => {
    redis?.disconnect();
    await front?.close();
    await server?.stop();
  });
  return {
    get server() {
      return get().server;
    },
    get front() {
      return get().front;
    },
    get redis() {
      return get().redis;
    },
    upstash: (config = {}) => new Upstash({ url: get().front.url, token: get().front.token, ...config }),
  };
}
