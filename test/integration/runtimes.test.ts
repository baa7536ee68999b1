// The built package (dist/) under Bun, Deno and workerd, compared with Node.js. The runtimes are
// the binaries of the pinned devDependencies `bun`, `deno` and `workerd` (node_modules/.bin/).
//
// 1. The scenario (test/runtimes/scenario.mjs: the core with the five strategies, a group, costs,
//    reservations and refunds, blocks, the header and problem helpers, errors, `ratewarden/fetch`
//    and `ratewarden/hono`, all on injected clocks) runs under Node.js (the reference), Bun, Deno
//    (no permission), and workerd (test/runtimes/worker.mjs, served by `workerd serve` from a
//    generated capnp config with Node.js compatibility turned off); each transcript must equal
//    Node's.
// 2. A real HTTP server per runtime on 127.0.0.1 (@hono/node-server under Node.js, Bun.serve,
//    Deno.serve, the workerd socket) runs `ratewarden/fetch` keyed by the client address the
//    platform reports, and a Hono app with `ratewarden/hono`'s default key
//    (test/runtimes/http-app.mjs); three requests on three connections share one limit of two.
// 3. The same servers run `ratewarden/redis` over `@upstash/redis` (test/runtimes/store-app.mjs)
//    against one redis-server (test/support/redis-server.ts) behind two of the test's fronts of
//    Upstash's REST API (test/support/upstash-front.ts), given to each as environment variables
//    (workerd: text bindings): requests through the four servers share one count in Redis, with
//    RedisSlidingWindowLog and RedisGCRA, one at a time and concurrently; with a front stopped,
//    fail-closed answers 503 and fail-open allows.
//
// dist/index.js, fetch.js, hono.js and redis.js must be built, and `hono`, `@upstash/redis` and
// redis-server installed. Everything starts in parallel in beforeAll (the servers once the store
// is up); each child is killed after the tests, or after CHILD_TIMEOUT_MS.
//
// Why one file of about 630 lines: the three parts share one expensive setup (three runtimes'
// children, a generated workerd config, a redis-server and two fronts, started once and in
// parallel), which split files would each start again; vitest runs files in separate workers,
// so they could not share it. The scripts the runtimes run are in test/runtimes/.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Redis as Ioredis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisServer } from '../support/redis-server.js';
import { UpstashFront } from '../support/upstash-front.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const RUN = join(ROOT, 'test', 'runtimes', 'run.mjs');
const DIST = join(ROOT, 'dist');
const PINNED = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> }).devDependencies;
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

/**
 * workerd's compatibility date (the newest this workerd knows, 1.20261117.1) and flags. From
 * 2026-08-04 on, `nodejs_compat` (and its v2) are on by default; both are turned off, so that the
 * Worker has no `process`, no `Buffer` and no `node:` modules, as on a Worker without the flag.
 */
const COMPATIBILITY_DATE = '2026-11-17';
const COMPATIBILITY_FLAGS = ['no_nodejs_compat', 'no_nodejs_compat_v2'];

/**
 * What the Worker's fetches may reach: `local` (127.0.0.0/8, ::1, Unix sockets), where the test's
 * Upstash fronts listen. workerd's default outbound (the "internet" service) allows `public`
 * addresses only, and refuses 127.0.0.1.
 */
const OUTBOUND_ALLOW = ['local'];
/** The capnp service of that network, the Worker's `globalOutbound`. */
const OUTBOUND_SERVICE = `(name = "loopback", network = (allow = ${JSON.stringify(OUTBOUND_ALLOW)}))`;

/** Longest life of a child process, in milliseconds. */
const CHILD_TIMEOUT_MS = 30_000;
/** Each test waits for children started in beforeAll (about a second; longer on a loaded machine). */
const TEST_TIMEOUT = { timeout: CHILD_TIMEOUT_MS + 5_000 };

/** Deno: no update check (it would reach for the network), no colours in error messages. */
const CHILD_ENV = { ...process.env, DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' };

interface Transcript {
  readonly runtime: { readonly name: string; readonly version?: string; readonly userAgent?: string };
  readonly environment: { readonly process: string; readonly buffer: string };
  readonly transcript: Record<string, unknown>;
}

interface HttpReply {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
  /** The client side's port: each request has a connection of its own. */
  readonly localPort: number | undefined;
}

const children = new Set<ChildProcess>();
const tempDirs: string[] = [];

function bin(name: string): string {
  const path = join(ROOT, 'node_modules', '.bin', name);
  if (!existsSync(path)) {
    throw new Error(`${path} is missing: \`npm ci\` installs ${name} ${PINNED[name] ?? ''} (a pinned devDependency, its binary in a registry package)`);
  }
  return path;
}

/** Spawns a child (with `env` over CHILD_ENV) that is killed after CHILD_TIMEOUT_MS and after the tests. */
function start(command: string, args: readonly string[], { extraFd = false, env = {} }: { extraFd?: boolean; env?: object } = {}): ChildProcess {
  const child = spawn(command, args, { cwd: ROOT, env: { ...CHILD_ENV, ...env }, stdio: ['ignore', 'pipe', 'pipe', ...(extraFd ? ['pipe' as const] : [])] });
  children.add(child);
  const timer = setTimeout(() => {
    process.emitWarning(`runtimes test: killing \`${command} ${args.join(' ')}\` after ${CHILD_TIMEOUT_MS} ms`);
    child.kill('SIGKILL');
  }, CHILD_TIMEOUT_MS);
  child.on('exit', () => {
    clearTimeout(timer);
    children.delete(child);
  });
  return child;
}

/** What a child printed, as text, collected as it comes. */
function collect(stream: NodeJS.ReadableStream | null): { text: string } {
  const out = { text: '' };
  stream?.setEncoding('utf8');
  stream?.on('data', (chunk: string) => (out.text += chunk));
  return out;
}

/** Runs `command` to its end and parses the one JSON document it prints. */
async function runScenario(label: string, command: string, args: readonly string[]): Promise<Transcript> {
  const child = start(command, args);
  const stdout = collect(child.stdout);
  const stderr = collect(child.stderr);
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((done, fail) => {
    child.on('error', fail);
    child.on('close', (c, s) => done([c, s]));
  });
  const shown = [command, ...args].map((a) => (a.startsWith(ROOT) ? relative(ROOT, a) : a)).join(' ');
  if (code !== 0) {
    throw new Error(`${label}: \`${shown}\` exited with ${code ?? signal}\nstderr:\n${stderr.text.slice(-3000)}\nstdout:\n${stdout.text.slice(-1000)}`);
  }
  try {
    return JSON.parse(stdout.text) as Transcript;
  } catch {
    throw new Error(`${label}: \`${shown}\` printed no JSON:\n${stdout.text.slice(0, 2000)}\nstderr:\n${stderr.text.slice(-2000)}`);
  }
}

/** Starts a server (given the store's environment) that prints `{"port": N}` once listening; resolves to that port. */
async function startServer(label: string, command: string, args: readonly string[], store: StoreEnv): Promise<number> {
  const child = start(command, args, { env: store });
  const stderr = collect(child.stderr);
  let stdout = '';
  return new Promise<number>((done, fail) => {
    child.on('error', fail);
    child.on('exit', (code, signal) => fail(new Error(`${label}: the server exited with ${code ?? signal} before listening\nstdout:\n${stdout}\nstderr:\n${stderr.text.slice(-3000)}`)));
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      if (!stdout.includes('\n')) return;
      try {
        done((JSON.parse(stdout.slice(0, stdout.indexOf('\n'))) as { port: number }).port);
      } catch {
        fail(new Error(`${label}: the server's first line is not {"port": N}:\n${stdout}\nstderr:\n${stderr.text.slice(-3000)}`));
      }
    });
  });
}

/**
 * The packages the Worker's modules import by name, each with the file workerd is given for it:
 * the one the package's `exports` (or `main`) selects for a Worker. workerd resolves a bare name
 * as a path next to its importer (`hono`, imported by test/runtimes/hono-part.mjs, is the module
 * test/runtimes/hono), so each importing directory gets a module of that name: a re-export of
 * the package's ES module, or the package's CommonJS file itself.
 */
const PACKAGES: Readonly<Record<string, { readonly file: string; readonly commonJs?: true }>> = {
  // exports["."].import
  hono: { file: 'node_modules/hono/dist/index.js' },
  // exports["./cloudflare"].import
  '@upstash/redis/cloudflare': { file: 'node_modules/@upstash/redis/cloudflare.mjs' },
  // exports["."].workerd: @upstash/redis's chunk imports it (Web Crypto's `subtle`)
  uncrypto: { file: 'node_modules/uncrypto/dist/crypto.web.mjs' },
  // main, CommonJS (no `exports`): dist/redis.js imports its default export (module.exports)
  'cluster-key-slot': { file: 'node_modules/cluster-key-slot/lib/index.js', commonJs: true },
};

/** The static imports of a module (esbuild's output and ours): relative ones, and package names. */
function importsOf(file: string): { relative: string[]; other: string[] } {
  const source = readFileSync(file, 'utf8');
  // Static imports and re-exports at the start of a line (not in comments) only: no module
  // embedded here imports anything dynamically.
  const specifiers = [...source.matchAll(/^(?:import|export)\s*(?:[\w*${}\s,]+from\s*)?["']([^"']+)["']/gm)].map((m) => m[1] as string);
  return { relative: specifiers.filter((s) => s.startsWith('./') || s.startsWith('../')), other: specifiers.filter((s) => !s.startsWith('./') && !s.startsWith('../')) };
}

/** A module of the Worker: its name (a path from the repository's root) and its capnp body. */
type WorkerModule = readonly [name: string, body: string];

/**
 * The modules `entries` need, transitively: every file they import by relative path, embedded
 * under its path from the root, and a module per package name and importing directory (see
 * {@link PACKAGES}). A package not in PACKAGES is an error: a Worker without Node.js
 * compatibility could not load it, or the table lacks it.
 */
function moduleClosure(entries: readonly string[], embed: (file: string) => string): WorkerModule[] {
  const seen = new Set<string>();
  const modules: WorkerModule[] = [];
  const named = new Set<string>();
  const queue = [...entries];
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    if (seen.has(file)) continue;
    seen.add(file);
    modules.push([relative(ROOT, file), `esModule = ${embed(file)}`]);
    const { relative: rel, other } = importsOf(file);
    queue.push(...rel.map((s) => resolve(dirname(file), s)));
    for (const specifier of other) {
      const pkg = PACKAGES[specifier];
      if (pkg === undefined) throw new Error(`${relative(ROOT, file)} imports ${specifier}: not a package of PACKAGES (the Worker has no Node.js compatibility)`);
      const target = join(ROOT, pkg.file);
      if (!existsSync(target)) throw new Error(`${pkg.file} is missing: \`npm ci\` installs ${specifier}`);
      const name = join(dirname(relative(ROOT, file)), specifier);
      if (named.has(name)) continue;
      named.add(name);
      if (pkg.commonJs === true) {
        modules.push([name, `commonJsModule = ${embed(target)}`]);
        continue;
      }
      const from = JSON.stringify(relative(dirname(join(ROOT, name)), target));
      const reexport = /\bas default\b|^export default\b/m.test(readFileSync(target, 'utf8')) ? `export * from ${from}; export { default } from ${from};` : `export * from ${from};`;
      modules.push([name, `esModule = ${JSON.stringify(reexport)}`]);
      queue.push(target);
    }
  }
  return modules;
}

/** The URLs and the token of the test's Upstash fronts (see {@link startStore}). */
interface StoreEnv {
  readonly UPSTASH_REDIS_REST_URL: string;
  readonly UPSTASH_REDIS_REST_TOKEN: string;
  readonly STOPPABLE_REDIS_REST_URL: string;
}

/**
 * Writes a capnp config serving test/runtimes/worker.mjs on 127.0.0.1 (port 0: workerd reports the
 * one it bound on its control descriptor), and returns its path. Modules are named by their path
 * from the repository's root, so that relative imports resolve as on disk. The store's URLs and
 * token are text bindings; the Worker's fetches go out through a network service that allows
 * local addresses only (workerd's default, the "internet" service, allows public ones only, and
 * the fronts listen on 127.0.0.1).
 */
function workerdConfig(dir: string, store: StoreEnv): string {
  const embed = (file: string): string => `embed ${JSON.stringify(relative(dir, file))}`;
  // worker.mjs first: the main module.
  const modules = moduleClosure([join(ROOT, 'test', 'runtimes', 'worker.mjs')], embed);
  const bindings = Object.entries(store).map(([name, value]) => `(name = ${JSON.stringify(name)}, text = ${JSON.stringify(value)})`);
  const config = `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [(name = "main", worker = .worker), ${OUTBOUND_SERVICE}],
  sockets = [(
    name = "http", address = "127.0.0.1:0", service = "main",
    http = (injectRequestHeaders = [(name = "CF-Connecting-IP", value = "127.0.0.1")])
  )],
);
const worker :Workerd.Worker = (
  modules = [
${modules.map(([name, body]) => `    (name = ${JSON.stringify(name)}, ${body})`).join(',\n')}
  ],
  compatibilityDate = ${JSON.stringify(COMPATIBILITY_DATE)},
  compatibilityFlags = ${JSON.stringify(COMPATIBILITY_FLAGS)},
  bindings = [${bindings.join(', ')}],
  globalOutbound = "loopback",
);
`;
  const path = join(dir, 'config.capnp');
  writeFileSync(path, config);
  return path;
}

/** Starts workerd on a generated config; resolves to the port its socket listens on. */
async function startWorkerd(store: StoreEnv): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'ratewarden-workerd-'));
  tempDirs.push(dir);
  const config = workerdConfig(dir, store);
  const child = start(bin('workerd'), ['serve', config, 'config', '--control-fd=3'], { extraFd: true });
  const stderr = collect(child.stderr);
  const control = child.stdio[3] as NodeJS.ReadableStream;
  let messages = '';
  return new Promise<number>((done, fail) => {
    child.on('error', fail);
    child.on('exit', (code, signal) => fail(new Error(`workerd exited with ${code ?? signal} before listening (config: ${config})\n${stderr.text.slice(-3000)}`)));
    control.setEncoding('utf8');
    control.on('data', (chunk: string) => {
      messages += chunk;
      for (const line of messages.split('\n').slice(0, -1)) {
        try {
          const message = JSON.parse(line) as { event?: string; socket?: string; port?: number };
          if (message.event === 'listen' && message.socket === 'http' && message.port !== undefined) done(message.port);
        } catch {
          fail(new Error(`workerd's control message is not JSON: ${line}`));
        }
      }
    });
  });
}

/** A GET on a connection of its own (no keep-alive agent), from 127.0.0.1. */
function get(port: number, path: string, headers: Record<string, string> = {}): Promise<HttpReply> {
  return new Promise((done, fail) => {
    const req = request({ host: '127.0.0.1', port, path, headers, agent: false, timeout: 10_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => done({ status: res.statusCode ?? 0, headers: res.headers, body, localPort: req.socket?.localPort }));
    });
    req.on('timeout', () => req.destroy(new Error(`GET 127.0.0.1:${port}${path} timed out`)));
    req.on('error', fail);
    req.end();
  });
}

/** Where two transcripts first differ, for the failure message. */
function firstDifference(expected: unknown, actual: unknown, path = 'transcript'): string | undefined {
  if (Object.is(expected, actual)) return undefined;
  if (typeof expected !== 'object' || typeof actual !== 'object' || expected === null || actual === null || Array.isArray(expected) !== Array.isArray(actual)) {
    return `${path}: Node ${JSON.stringify(expected)}, here ${JSON.stringify(actual)}`;
  }
  const a = expected as Record<string, unknown>;
  const b = actual as Record<string, unknown>;
  for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
    const found = firstDifference(a[key], b[key], Array.isArray(a) ? `${path}[${key}]` : `${path}.${key}`);
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * Three requests to `path`, each on a new connection: the first two share the limit of two, the
 * third is refused. The second sends `forged` header fields, which must change nothing.
 */
async function expectSharedLimit(port: number, path: string, forged: Record<string, string>): Promise<HttpReply[]> {
  const replies: HttpReply[] = [];
  for (const headers of [{}, forged, {}]) replies.push(await get(port, path, headers));
  const shown = JSON.stringify(replies.map(({ status, headers, body }) => ({ status, ratelimit: headers.ratelimit, body })));
  expect(replies.map((r) => r.status), shown).toEqual([200, 200, 429]);
  expect(new Set(replies.map((r) => r.localPort)).size, 'each request on a connection of its own').toBe(3);
  expect(replies.map((r) => /r=(\d+)/.exec(String(r.headers.ratelimit))?.[1]), shown).toEqual(['1', '0', '0']);
  expect(replies[2]?.headers['retry-after'], shown).toMatch(/^\d+$/);
  expect(JSON.parse(replies[2]?.body ?? '') as unknown, shown).toMatchObject({ status: 429, title: 'Too Many Requests' });
  return replies;
}

/** The limit of the shared routes `/store/log` and `/store/gcra` per hour (store-app.mjs's SHARED_THRESHOLD). */
const SHARED_THRESHOLD = 3;

/** The limit of `/store/burst` per hour, and how many requests the test sends each server at once. */
const BURST_THRESHOLD = 100;
const BURST_PER_RUNTIME = 8;

/** What `@upstash/redis`'s Node.js entry reads from the environment when a client is made (Deno: NotCapable without permission). */
const UPSTASH_READS = ['UPSTASH_DISABLE_TELEMETRY', 'UPSTASH_CONSOLE', 'VERCEL', 'AWS_REGION'];
/** The environment variables the Deno server may read: the store's (see {@link StoreEnv}), and those. */
const STORE_ENV_NAMES = ['UPSTASH_REDIS_REST_URL', 'UPSTASH_REDIS_REST_TOKEN', 'STOPPABLE_REDIS_REST_URL', ...UPSTASH_READS];

/** The shared store: one redis-server, and two fronts of Upstash's REST API before it (one token). */
interface Store {
  readonly server: RedisServer;
  /** The front that stays up (the `/store/log`, `/store/gcra` and `/store/burst` routes). */
  readonly front: UpstashFront;
  /** The front the failure-policy test stops (`/store/fail-closed`, `/store/fail-open`). */
  readonly stoppable: UpstashFront;
  /** A direct connection to the redis-server, to read what the servers wrote. */
  readonly redis: Ioredis;
  readonly env: StoreEnv;
}

async function startStore(): Promise<Store> {
  const server = await RedisServer.start();
  const token = `token-${randomUUID()}`;
  const [front, stoppable] = await Promise.all([UpstashFront.start(server.port, token), UpstashFront.start(server.port, token)]);
  const redis = new Ioredis({ port: server.port, host: '127.0.0.1', lazyConnect: true });
  redis.on('error', () => {
    // Surfaces through the commands the test sends.
  });
  return { server, front, stoppable, redis, env: { UPSTASH_REDIS_REST_URL: front.url, UPSTASH_REDIS_REST_TOKEN: token, STOPPABLE_REDIS_REST_URL: stoppable.url } };
}

let node: Promise<Transcript>;
let bun: Promise<Transcript>;
let deno: Promise<Transcript>;
let store: Promise<Store>;
let nodePort: Promise<number>;
let bunPort: Promise<number>;
let denoPort: Promise<number>;
let workerdPort: Promise<number>;

beforeAll(() => {
  for (const entry of ['index.js', 'fetch.js', 'hono.js', 'redis.js']) {
    if (!existsSync(join(DIST, entry))) throw new Error(`dist/${entry} is missing: build first (\`npm test\` runs the build; or \`npx tsup\`)`);
  }
  node = runScenario('Node.js', process.execPath, [RUN, 'scenario']);
  bun = runScenario('Bun', bin('bun'), [RUN, 'scenario']);
  // No permission at all: the scenario reads, writes and opens nothing.
  deno = runScenario('Deno', bin('deno'), ['run', '--no-prompt', RUN, 'scenario']);
  // The servers start once the store is up: they are given its URLs.
  store = startStore();
  nodePort = store.then(({ env }) => startServer('Node.js (@hono/node-server)', process.execPath, [RUN, 'serve'], env));
  bunPort = store.then(({ env }) => startServer('Bun.serve', bin('bun'), [RUN, 'serve'], env));
  // Only the network, only 127.0.0.1; only the environment variables the store's client reads.
  denoPort = store.then(({ env }) =>
    startServer('Deno.serve', bin('deno'), ['run', '--no-prompt', '--allow-net=127.0.0.1', `--allow-env=${STORE_ENV_NAMES.join(',')}`, RUN, 'serve'], env),
  );
  workerdPort = store.then(({ env }) => startWorkerd(env));
  // Each test awaits its own; none may go unhandled meanwhile.
  for (const promise of [node, bun, deno, store, nodePort, bunPort, denoPort, workerdPort] as Promise<unknown>[]) promise.catch(() => {});
});

afterAll(async () => {
  // The servers start once the store is up, which may be after the tests (a run of the README
  // check alone): wait until every child has been spawned, so that none outlives the test.
  await Promise.allSettled([node, bun, deno, nodePort, bunPort, denoPort, workerdPort]);
  for (const child of children) child.kill('SIGKILL');
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  const started = await store.catch(() => undefined);
  started?.redis.disconnect();
  await started?.front.close();
  await started?.stoppable.close();
  await started?.server.stop();
});

describe('the built package under other runtimes, compared with Node.js', TEST_TIMEOUT, () => {
  it('Node.js writes the reference transcript', async () => {
    const { runtime, transcript } = await node;
    expect(runtime).toEqual({ name: 'node', version: process.versions.node });
    expect(transcript.entries).toEqual(['ratewarden', 'ratewarden/fetch', 'ratewarden/hono']);
    expect(Object.keys(transcript.strategies as object)).toEqual(['sliding-window-log', 'sliding-window-counter', 'fixed-window', 'token-bucket', 'gcra']);
    // A few decisions, so that an empty or broken transcript cannot pass by being equal everywhere.
    const log = (transcript.strategies as Record<string, { steps: { result: { allowed: boolean; retryAfter: number | string } }[] }>)['sliding-window-log'];
    expect(log?.steps.slice(0, 5).map((s) => [s.result.allowed, s.result.retryAfter])).toEqual([[true, 0], [true, 0], [false, 10], [false, 10], [false, 'Infinity']]);
    const fetched = transcript.fetch as Record<string, { status: number; headers: [string, string][] }[]>;
    expect(fetched.default?.map((r) => r.status)).toEqual([200, 200, 429, 200]);
    expect(fetched.default?.[2]?.headers).toEqual([
      ['content-type', 'application/problem+json'],
      ['ratelimit', '"default";r=0;t=60'],
      ['ratelimit-policy', '"default";q=2;w=60'],
      ['retry-after', '60'],
    ]);
    expect(fetched['skipSuccessfulRequests with a group']?.map((r) => r.status)).toEqual([200, 401, 200, 401, 429]);
  });

  it(`Bun ${PINNED.bun} decides as Node.js`, async () => {
    const [reference, other] = await Promise.all([node, bun]);
    expect(other.runtime).toEqual({ name: 'bun', version: PINNED.bun });
    expect(other.transcript, firstDifference(reference.transcript, other.transcript)).toEqual(reference.transcript);
  });

  it(`Deno ${PINNED.deno} decides as Node.js, with no permission`, async () => {
    const [reference, other] = await Promise.all([node, deno]);
    expect(other.runtime).toEqual({ name: 'deno', version: PINNED.deno });
    expect(other.transcript, firstDifference(reference.transcript, other.transcript)).toEqual(reference.transcript);
  });

  it(`workerd ${PINNED.workerd} decides as Node.js, without Node.js compatibility`, async () => {
    const [reference, port] = await Promise.all([node, workerdPort]);
    const reply = await get(port, '/scenario');
    expect(reply.status, reply.body.slice(0, 3000)).toBe(200);
    const other = JSON.parse(reply.body) as Transcript;
    expect(other.runtime).toEqual({ name: 'workerd', userAgent: 'Cloudflare-Workers' });
    // No Node.js APIs: the flags took effect.
    expect(other.environment).toEqual({ process: 'undefined', buffer: 'undefined' });
    expect(other.transcript, firstDifference(reference.transcript, other.transcript)).toEqual(reference.transcript);
    const installed = JSON.parse(readFileSync(join(ROOT, 'node_modules', 'workerd', 'package.json'), 'utf8')) as { version: string };
    expect(installed.version).toBe(PINNED.workerd);
  });
});

describe('a real HTTP server per runtime on 127.0.0.1: requests from one address share one limit', TEST_TIMEOUT, () => {
  /** A client's own X-Forwarded-For: not a source of the key. */
  const FORGED_XFF = { 'X-Forwarded-For': '203.0.113.9' };

  it('Node.js with @hono/node-server, keyed by the socket\'s remoteAddress', async () => {
    const replies = await expectSharedLimit(await nodePort, '/fetch/hello', FORGED_XFF);
    expect(JSON.parse(replies[1]?.body ?? '')).toEqual({ address: '127.0.0.1', key: '127.0.0.1' });
    await expectSharedLimit(await nodePort, '/hono/hello', FORGED_XFF);
  });

  it('Bun.serve, keyed by server.requestIP(request)', async () => {
    const replies = await expectSharedLimit(await bunPort, '/fetch/hello', FORGED_XFF);
    expect(JSON.parse(replies[1]?.body ?? '')).toEqual({ address: '127.0.0.1', key: '127.0.0.1' });
    await expectSharedLimit(await bunPort, '/hono/hello', FORGED_XFF);
  });

  it('Deno.serve, keyed by ServeHandlerInfo.remoteAddr', async () => {
    const replies = await expectSharedLimit(await denoPort, '/fetch/hello', FORGED_XFF);
    expect(JSON.parse(replies[1]?.body ?? '')).toEqual({ address: '127.0.0.1', key: '127.0.0.1' });
    await expectSharedLimit(await denoPort, '/hono/hello', FORGED_XFF);
  });

  it('workerd, keyed by CF-Connecting-IP (set by the socket, not by the client)', async () => {
    const forged = { 'CF-Connecting-IP': '203.0.113.9' };
    const replies = await expectSharedLimit(await workerdPort, '/fetch/hello', forged);
    expect(JSON.parse(replies[1]?.body ?? '')).toEqual({ address: '127.0.0.1', key: '127.0.0.1' });
    await expectSharedLimit(await workerdPort, '/hono/hello', forged);
  });
});

/** The four servers' ports, by runtime. */
async function serverPorts(): Promise<Record<'node' | 'bun' | 'deno' | 'workerd', number>> {
  const [n, b, d, w] = await Promise.all([nodePort, bunPort, denoPort, workerdPort]);
  return { node: n, bun: b, deno: d, workerd: w };
}

/** One request to `path` of each runtime's server in `order`, one after the other: their replies, labelled. */
async function inTurn(ports: Record<string, number>, order: readonly string[], path: string): Promise<{ runtime: string; reply: HttpReply }[]> {
  const out = [];
  for (const runtime of order) out.push({ runtime, reply: await get(ports[runtime] as number, path) });
  return out;
}

/** Replies as `runtime status r=<remaining> retry-after=<yes or ->`, for comparisons. */
function summary(replies: readonly { runtime: string; reply: HttpReply }[]): string[] {
  return replies.map(({ runtime, reply }) => {
    const remaining = /r=(\d+)/.exec(String(reply.headers.ratelimit))?.[1];
    return `${runtime} ${reply.status} r=${remaining} retry-after=${reply.headers['retry-after'] === undefined ? '-' : 'yes'}`;
  });
}

describe('ratewarden/redis over @upstash/redis: one count in one Redis for the servers of every runtime', TEST_TIMEOUT, () => {
  it(`RedisSlidingWindowLog (withRateLimit): ${SHARED_THRESHOLD} per hour per address, Node.js + Bun + workerd allowed, then Deno refused, then everyone`, async () => {
    const ports = await serverPorts();
    const { redis } = await store;
    const replies = await inTurn(ports, ['node', 'bun', 'workerd', 'deno', 'node', 'bun', 'workerd'], '/store/log');
    const shown = JSON.stringify(replies.map(({ runtime, reply }) => ({ runtime, status: reply.status, ratelimit: reply.headers.ratelimit, body: reply.body.slice(0, 300) })));
    expect(summary(replies), shown).toEqual([
      'node 200 r=2 retry-after=-',
      'bun 200 r=1 retry-after=-',
      'workerd 200 r=0 retry-after=-',
      'deno 429 r=0 retry-after=yes',
      'node 429 r=0 retry-after=yes',
      'bun 429 r=0 retry-after=yes',
      'workerd 429 r=0 retry-after=yes',
    ]);
    // The oldest of the three entries leaves the hour's window in about an hour.
    for (const { reply } of replies.slice(3)) {
      expect(Number(reply.headers['retry-after'])).toBeGreaterThan(3500);
      expect(Number(reply.headers['retry-after'])).toBeLessThanOrEqual(3600);
      expect(JSON.parse(reply.body)).toMatchObject({ status: 429, title: 'Too Many Requests' });
    }
    // One count, in Redis: the three allowed requests, under the one key every runtime used.
    expect(await redis.zcard('runtimes:log:{127.0.0.1}:log')).toBe(SHARED_THRESHOLD);
  });

  it('RedisGCRA (honoRateLimit, default key): workerd + Deno + Node.js allowed, then Bun refused, then everyone', async () => {
    const ports = await serverPorts();
    const replies = await inTurn(ports, ['workerd', 'deno', 'node', 'bun', 'workerd', 'deno', 'node'], '/store/gcra');
    const shown = JSON.stringify(replies.map(({ runtime, reply }) => ({ runtime, status: reply.status, ratelimit: reply.headers.ratelimit, body: reply.body.slice(0, 300) })));
    expect(summary(replies), shown).toEqual([
      'workerd 200 r=2 retry-after=-',
      'deno 200 r=1 retry-after=-',
      'node 200 r=0 retry-after=-',
      'bun 429 r=0 retry-after=yes',
      'workerd 429 r=0 retry-after=yes',
      'deno 429 r=0 retry-after=yes',
      'node 429 r=0 retry-after=yes',
    ]);
    // GCRA: one request's worth (an hour / 3) comes back after 1200 s.
    for (const { reply } of replies.slice(3)) {
      expect(Number(reply.headers['retry-after'])).toBeGreaterThan(1100);
      expect(Number(reply.headers['retry-after'])).toBeLessThanOrEqual(1200);
    }
  });

  it(`concurrent requests: ${BURST_PER_RUNTIME} at once to each server (workerd's in one isolate), all allowed, each counted once`, async () => {
    const ports = await serverPorts();
    const { redis } = await store;
    const replies = await Promise.all(
      Object.entries(ports).flatMap(([runtime, port]) => Array.from({ length: BURST_PER_RUNTIME }, async () => ({ runtime, reply: await get(port, '/store/burst') }))),
    );
    const total = replies.length;
    const failed = replies.filter(({ reply }) => reply.status !== 200).map(({ runtime, reply }) => `${runtime} ${reply.status} ${reply.body.slice(0, 200)}`);
    expect(failed).toEqual([]);
    // One count: the remaining values are 99, 98, … each once, whichever runtime decided.
    const remaining = replies.map(({ reply }) => Number(/r=(\d+)/.exec(String(reply.headers.ratelimit))?.[1])).sort((a, b) => b - a);
    expect(remaining).toEqual(Array.from({ length: total }, (_, i) => BURST_THRESHOLD - 1 - i));
    expect(await redis.zcard('runtimes:burst:{127.0.0.1}:log')).toBe(total);
  });

  it('the front down: fail-closed answers 503 (the store-failure problem), fail-open allows, each at its timeout; the front back: the Worker decides by Redis again', async () => {
    const ports = await serverPorts();
    const { stoppable } = await store;
    const runtimes = Object.keys(ports);
    await stoppable.down();
    const down = await Promise.all(
      runtimes.map(async (runtime) => {
        const port = ports[runtime as keyof typeof ports];
        const [closed, open] = await Promise.all([get(port, '/store/fail-closed'), get(port, '/store/fail-open')]);
        return { runtime, closed, open };
      }),
    );
    for (const { runtime, closed, open } of down) {
      expect([runtime, closed.status], closed.body.slice(0, 500)).toEqual([runtime, 503]);
      expect(JSON.parse(closed.body), runtime).toMatchObject({ status: 503, title: 'Rate limit store unavailable' });
      expect(closed.headers['retry-after'], runtime).toMatch(/^\d+$/);
      expect([runtime, open.status, open.body]).toEqual([runtime, 200, expect.stringMatching(/^\{"remaining":\d+,"degraded":"fail-open"\}$/)]);
    }
    // What failed first, as each server's strategies saw it: their own timeout, not the end of
    // the client's five retries (about 4.3 s), which a connection refused at once goes through.
    for (const runtime of runtimes) {
      const errors = JSON.parse((await get(ports[runtime as keyof typeof ports], '/store/errors')).body) as { route: string; code?: string }[];
      const first = ['fail-closed', 'fail-open'].map((route) => `${route} ${String(errors.find((e) => e.route === route)?.code)}`);
      expect([runtime, first]).toEqual([runtime, ['fail-closed ERR_RATEWARDEN_REDIS_TIMEOUT', 'fail-open ERR_RATEWARDEN_REDIS_TIMEOUT']]);
    }
    // Back up: the Worker, whose clients and limiters are made per request, decides by Redis at
    // its next request. (The processes' next decision may still fail: it waits for the handshake
    // their client is still re-sending, on the client's backoff of up to 2.7 s between tries.)
    await stoppable.up();
    const back = await get(ports.workerd, '/store/fail-closed');
    expect([back.status, back.body]).toEqual([200, JSON.stringify({ remaining: 99, degraded: null })]);
  });
});

describe('the README says what is tested where', () => {
  it('names the pinned versions, the workerd settings, the entries run in each server and the shared-store checks', () => {
    const section = /\n### Runtimes\n([\s\S]*?)\n## /.exec(README)?.[1] ?? '';
    expect(section, 'README: the Runtimes section').not.toBe('');
    for (const [runtime, name] of [['Bun', 'bun'], ['Deno', 'deno'], ['workerd (the runtime of Cloudflare Workers)', 'workerd']] as const) {
      expect(section).toContain(`| ${runtime} | ${PINNED[name]}`);
    }
    expect(section).toContain(`compatibility date ${COMPATIBILITY_DATE} with ${COMPATIBILITY_FLAGS.map((f) => `\`${f}\``).join(' and ')}`);
    expect(section, 'README: ratewarden/hono is run').toContain('`ratewarden/hono` runs in each of them too');
    // ratewarden/redis: run in every server, with the numbers and the settings of this test.
    expect(section, 'README: ratewarden/redis is run').toContain(`\`ratewarden/redis\` runs in each server too, over \`@upstash/redis\` ${PINNED['@upstash/redis']}`);
    expect(section).not.toContain('Not run outside Node.js yet');
    expect(section).toContain(`${SHARED_THRESHOLD} per hour per client address`);
    expect(section).toContain(`${BURST_PER_RUNTIME} at once to each of the four servers`);
    expect(section).toContain(`\`remaining\` ${BURST_THRESHOLD - 1} down to ${BURST_THRESHOLD - 4 * BURST_PER_RUNTIME}`);
    expect(section.replace(/\s+/g, ' '), 'README: the network setting of the capnp config').toContain(OUTBOUND_SERVICE);
    expect(section).toContain('`globalOutbound = "loopback"`');
    for (const name of UPSTASH_READS) expect(section, `README: Deno's --allow-env names ${name}`).toContain(`\`${name}\``);
  });
});
