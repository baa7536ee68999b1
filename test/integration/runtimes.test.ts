// The built package (dist/) under Bun, Deno and workerd, compared with Node.js. The runtimes are
// the binaries of the pinned devDependencies `bun`, `deno` and `workerd` (node_modules/.bin/).
//
// 1. The scenario (test/runtimes/scenario.mjs: the core with the five strategies, a group, costs,
//    reservations and refunds, blocks, the header and problem helpers, errors, and
//    `ratewarden/fetch`, all on injected clocks) runs under Node.js (the reference), Bun, Deno
//    (no permission), and workerd (test/runtimes/worker.mjs, served by `workerd serve` from a
//    generated capnp config with Node.js compatibility turned off); each transcript must equal
//    Node's.
// 2. A real HTTP server per runtime on 127.0.0.1 (Bun.serve, Deno.serve, the workerd socket) runs
//    `ratewarden/fetch` keyed by the client address the platform reports, and a Hono app with
//    `ratewarden/hono`'s default key (test/runtimes/http-app.mjs); three requests on three
//    connections share one limit of two.
//
// `ratewarden/hono` is part of both (test/runtimes/hono-part.mjs): dist/hono.js and the `hono`
// package (a pinned devDependency) must be there. `ratewarden/redis` is not run here.
// Everything starts in parallel in beforeAll; each child is killed after the tests, or after
// CHILD_TIMEOUT_MS.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

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

/** Spawns a child that is killed after CHILD_TIMEOUT_MS and after the tests. */
function start(command: string, args: readonly string[], extraFd = false): ChildProcess {
  const child = spawn(command, args, { cwd: ROOT, env: CHILD_ENV, stdio: ['ignore', 'pipe', 'pipe', ...(extraFd ? ['pipe' as const] : [])] });
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

/** Starts a server that prints `{"port": N}` once listening; resolves to that port. */
async function startServer(label: string, command: string, args: readonly string[]): Promise<number> {
  const child = start(command, args);
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
 * The relative ESM imports of a module (esbuild's output and ours), and its other imports, which
 * a Worker without Node.js compatibility could not load.
 */
function importsOf(file: string): { relative: string[]; other: string[] } {
  const source = readFileSync(file, 'utf8');
  // Static imports and re-exports at the start of a line (not in comments) only: no module
  // embedded here imports anything dynamically.
  const specifiers = [...source.matchAll(/^(?:import|export)\s*(?:[\w*${}\s,]+from\s*)?["']([^"']+)["']/gm)].map((m) => m[1] as string);
  return { relative: specifiers.filter((s) => s.startsWith('./') || s.startsWith('../')), other: specifiers.filter((s) => !s.startsWith('./') && !s.startsWith('../')) };
}

/** The module files `entries` import, transitively, by relative path; non-relative imports are errors. */
function moduleClosure(entries: readonly string[], allowed: ReadonlySet<string> = new Set()): string[] {
  const seen = new Set<string>();
  const queue = [...entries];
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    if (seen.has(file)) continue;
    seen.add(file);
    const { relative: rel, other } = importsOf(file);
    const refused = other.filter((s) => !allowed.has(s));
    if (refused.length > 0) {
      throw new Error(`${relative(ROOT, file)} imports ${refused.join(', ')}: not loadable by a Worker without Node.js compatibility`);
    }
    queue.push(...rel.map((s) => resolve(dirname(file), s)));
  }
  return [...seen];
}

/**
 * Writes a capnp config serving test/runtimes/worker.mjs on 127.0.0.1 (port 0: workerd reports the
 * one it bound on its control descriptor), and returns its path. Modules are named by their path
 * from the repository's root, so that relative imports resolve as on disk.
 */
function workerdConfig(dir: string): string {
  const runtimes = join(ROOT, 'test', 'runtimes');
  // worker.mjs first: the main module.
  const entries = [join(runtimes, 'worker.mjs')];
  const embed = (file: string): string => `embed ${JSON.stringify(relative(dir, file))}`;
  const modules = moduleClosure(entries, new Set(['hono'])).map((file) => [relative(ROOT, file), `esModule = ${embed(file)}`]);
  // hono-part.mjs imports 'hono', which workerd looks up as a module named test/runtimes/hono
  // (a bare name resolves next to its importer): that module re-exports hono's ESM entry.
  const hono = join(ROOT, 'node_modules', 'hono', 'dist', 'index.js');
  if (!existsSync(hono)) throw new Error(`the hono package is not installed (node_modules/hono/dist/index.js): \`npm ci\` installs hono ${PINNED.hono ?? ''}`);
  for (const file of moduleClosure([hono])) modules.push([relative(ROOT, file), `esModule = ${embed(file)}`]);
  modules.push(['test/runtimes/hono', `esModule = ${JSON.stringify("export * from '../../node_modules/hono/dist/index.js';")}`]);
  const config = `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [(name = "main", worker = .worker)],
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
);
`;
  const path = join(dir, 'config.capnp');
  writeFileSync(path, config);
  return path;
}

/** Starts workerd on a generated config; resolves to the port its socket listens on. */
async function startWorkerd(): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'ratewarden-workerd-'));
  tempDirs.push(dir);
  const config = workerdConfig(dir);
  const child = start(bin('workerd'), ['serve', config, 'config', '--control-fd=3'], true);
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

let node: Promise<Transcript>;
let bun: Promise<Transcript>;
let deno: Promise<Transcript>;
let workerdPort: Promise<number>;
let bunPort: Promise<number>;
let denoPort: Promise<number>;

beforeAll(() => {
  for (const entry of ['index.js', 'fetch.js', 'hono.js']) {
    if (!existsSync(join(DIST, entry))) throw new Error(`dist/${entry} is missing: build first (\`npm test\` runs the build; or \`npx tsup\`)`);
  }
  node = runScenario('Node.js', process.execPath, [RUN, 'scenario']);
  bun = runScenario('Bun', bin('bun'), [RUN, 'scenario']);
  // No permission at all: the scenario reads, writes and opens nothing.
  deno = runScenario('Deno', bin('deno'), ['run', '--no-prompt', RUN, 'scenario']);
  workerdPort = startWorkerd();
  bunPort = startServer('Bun.serve', bin('bun'), [RUN, 'serve']);
  // Only the network, only 127.0.0.1.
  denoPort = startServer('Deno.serve', bin('deno'), ['run', '--no-prompt', '--allow-net=127.0.0.1', RUN, 'serve']);
  // Each test awaits its own; none may go unhandled meanwhile.
  for (const promise of [node, bun, deno, workerdPort, bunPort, denoPort] as Promise<unknown>[]) promise.catch(() => {});
});

afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
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

describe('the README says what is tested where', () => {
  it('names the pinned versions, the workerd settings and the entries not run', () => {
    const section = /\n### Runtimes\n([\s\S]*?)\n## /.exec(README)?.[1] ?? '';
    expect(section, 'README: the Runtimes section').not.toBe('');
    for (const [runtime, name] of [['Bun', 'bun'], ['Deno', 'deno'], ['workerd (the runtime of Cloudflare Workers)', 'workerd']] as const) {
      expect(section).toContain(`| ${runtime} | ${PINNED[name]}`);
    }
    expect(section).toContain(`compatibility date ${COMPATIBILITY_DATE} with ${COMPATIBILITY_FLAGS.map((f) => `\`${f}\``).join(' and ')}`);
    expect(section, 'README: ratewarden/hono is run').toContain('`ratewarden/hono` runs in each of them too');
  });
});
