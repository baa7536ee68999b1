// The login brute-force attack of issue 22, against the peers' login protections and (once its
// API exists) ratewarden's: `npm run bench:login` (see README.md beside this file).
//
// For every contestant, store (memory, redis) and mode (parallel, sequential): a fresh Express
// server on 127.0.0.1 (port 0) with a fresh limiter (Redis: FLUSHALL first) and one route, POST
// /login, whose password check takes --check-ms (50 ms, a setTimeout), always fails and counts
// itself. The attacker, in this process, sends --attempts (200) wrong passwords for the same
// username from the same IP: all at once (parallel: every request written before any answer,
// one connection each), or one at a time (sequential: each awaited). Then one more attempt
// ("then": the status and Retry-After a user would see right after the attack). Reported: how
// many password checks the attack let run (the probe's is not counted), against the limit.
//
// Options: --attempts=N (200), --check-ms=N (50), --limit=N (5), --reps=N (1: how many times
// each row runs, each time on a fresh server and limiter; the table shows the most checks any
// repetition let run and lists them all), --only=ID[,ID] (contestant ids), --store=memory|redis, --mode=parallel|sequential, --peers=DIR (a directory with a
// node_modules holding peers this repository does not install, e.g. express-rate-limit; also
// LOGIN_ATTACK_PEERS), --json (one JSON document on stdout instead of the table).
//
// Redis: Debian's redis-server, started on a free loopback port with persistence off and
// stopped at the end; the redis rows are skipped with a note when it is not on the PATH.
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { findExecutable, startRedisServer } from '../redis-server.mjs';
import { peerContestants } from './peers.mjs';
import { ratewardenContestant } from './ratewarden.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '../..');

// ---------------------------------------------------------------------------------------------
// options

const args = Object.fromEntries(
  process.argv.slice(2).map((arg) => {
    const match = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
    if (match === null) usage(`unknown argument ${arg}`);
    return [match[1], match[2] ?? true];
  }),
);
const known = new Set(['attempts', 'check-ms', 'limit', 'reps', 'only', 'store', 'mode', 'peers', 'json']);
for (const key of Object.keys(args)) if (!known.has(key)) usage(`unknown option --${key}`);

function usage(message) {
  console.error(`${message}\nusage: node bench/login-attack/run.mjs [--attempts=200] [--check-ms=50] [--limit=5] [--reps=1] [--only=ID,...] [--store=memory|redis] [--mode=parallel|sequential] [--peers=DIR] [--json]`);
  process.exit(2);
}

function positiveInt(name, fallback) {
  const value = args[name] ?? String(fallback);
  if (!/^[1-9][0-9]*$/.test(value)) usage(`--${name} must be a positive integer`);
  return Number(value);
}

const ATTEMPTS = positiveInt('attempts', 200);
const CHECK_MS = positiveInt('check-ms', 50);
const LIMIT = positiveInt('limit', 5);
const REPS = positiveInt('reps', 1);
const JSON_OUT = args.json === true;
const PEERS_DIR = args.peers ?? process.env.LOGIN_ATTACK_PEERS;
const ONLY = args.only === undefined ? undefined : new Set(String(args.only).split(','));
const STORES = args.store === undefined ? ['memory', 'redis'] : [args.store];
const MODES = args.mode === undefined ? ['parallel', 'sequential'] : [args.mode];
for (const s of STORES) if (s !== 'memory' && s !== 'redis') usage('--store must be memory or redis');
for (const m of MODES) if (m !== 'parallel' && m !== 'sequential') usage('--mode must be parallel or sequential');

const log = (...parts) => (JSON_OUT ? console.error(...parts) : console.log(...parts));

// ---------------------------------------------------------------------------------------------
// peers: from this repository's node_modules, else from --peers

const requireFromRepo = createRequire(path.join(REPO, 'package.json'));
const requireFromPeers = PEERS_DIR === undefined ? undefined : createRequire(path.join(path.resolve(PEERS_DIR), 'package.json'));

/** Where `name` resolves: `{ file, version }`, or undefined when neither place has it. */
function locate(name) {
  for (const req of [requireFromRepo, requireFromPeers]) {
    if (req === undefined) continue;
    let file;
    try {
      file = req.resolve(name);
    } catch {
      continue;
    }
    // The package.json beside the entry point (walk up to the package's own folder).
    let dir = path.dirname(file);
    while (!dir.endsWith(path.join('node_modules', name)) && dir !== path.dirname(dir)) dir = path.dirname(dir);
    const { version } = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
    return { file, dir, version };
  }
  return undefined;
}

const loaded = new Map();
const peers = {
  async load(name) {
    const where = locate(name);
    if (where === undefined) throw new Error(`${name} not installed`);
    if (!loaded.has(name)) loaded.set(name, await import(pathToFileURL(where.file).href));
    return loaded.get(name);
  },
};

const express = (await peers.load('express')).default;
const { Redis } = await peers.load('ioredis');

// ---------------------------------------------------------------------------------------------
// redis-server

// ---------------------------------------------------------------------------------------------
// one run: a server, an attack, a probe

/** A fresh Express server for `contestant` on 127.0.0.1, counting its password checks. */
async function startLoginServer(contestant, store, redis) {
  const counter = { checks: 0 };
  const checkPassword = async () => {
    counter.checks += 1;
    await new Promise((resolve) => setTimeout(resolve, CHECK_MS));
    return { isLoggedIn: false, exists: true };
  };
  const { handlers } = await contestant.build({ store, redis, limit: LIMIT, peers, checkPassword });
  const app = express();
  app.set('env', 'production'); // no stack traces in 500 bodies
  app.post('/login', express.json(), ...handlers);
  const errors = [];
  // Express knows an error handler by its four parameters, so `_next` stays though unused.
  // eslint-disable-next-line no-unused-vars
  app.use((error, _req, res, _next) => {
    errors.push(error);
    res.status(500).end('error');
  });
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { port: server.address().port, counter, errors, close: () => new Promise((resolve) => server.close(resolve)) };
}

/** Runs the attacker process (attacker.mjs): `attempts` wrong passwords; resolves to its answers. */
async function attack(port, mode, attempts = ATTEMPTS, first = 0) {
  const child = spawn(process.execPath, [path.join(HERE, 'attacker.mjs'), String(port), String(attempts), mode, String(first)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (chunk) => (out += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk) => (err += chunk));
  const [code] = await once(child, 'exit');
  if (code !== 0) throw new Error(`attacker exited with ${code}:\n${err}`);
  return JSON.parse(out);
}

function statusSummary(answers) {
  const counts = new Map();
  for (const { status } of answers) counts.set(status, (counts.get(status) ?? 0) + 1);
  return [...counts].sort((a, b) => a[0] - b[0]).map(([status, n]) => `${status}×${n}`).join(' ');
}

const warnings = [];
process.on('warning', (warning) => warnings.push(warning));

async function runOne(contestant, store, mode, redisPort) {
  let redis;
  if (store === 'redis') {
    // The wiki's client options: no offline queue (so wait until it is ready).
    redis = new Redis({ host: '127.0.0.1', port: redisPort, enableOfflineQueue: false });
    await once(redis, 'ready');
    await redis.flushall();
  }
  const warningsBefore = warnings.length;
  const server = await startLoginServer(contestant, store, redis);
  try {
    const started = performance.now();
    const answers = await attack(server.port, mode);
    const seconds = (performance.now() - started) / 1000;
    const checks = server.counter.checks;
    const [probe] = await attack(server.port, 'sequential', 1, ATTEMPTS);
    const notes = [statusSummary(answers)];
    notes.push(`then ${probe.status}${probe.retryAfter === undefined ? '' : ` Retry-After ${probe.retryAfter}`}`);
    const counted = new Map();
    for (const w of warnings.slice(warningsBefore)) {
      const text = `${w.name}: ${w.message.replace(/\s+/g, ' ')}`;
      counted.set(text, (counted.get(text) ?? 0) + 1);
    }
    const newWarnings = [...counted].map(([text, n]) => `${text} (×${n})`);
    notes.push(...newWarnings);
    if (server.errors.length > 0) notes.push(`${server.errors.length} errors, first: ${server.errors[0].message}`);
    return { checks, expected: LIMIT, seconds: Number(seconds.toFixed(2)), statuses: statusSummary(answers), then: probe, warnings: newWarnings, notes };
  } finally {
    await server.close();
    if (redis !== undefined) redis.disconnect();
  }
}

// ---------------------------------------------------------------------------------------------
// main

const contestants = [...peerContestants, ratewardenContestant].filter((c) => ONLY === undefined || ONLY.has(c.id));
if (contestants.length === 0) usage(`--only matches no contestant (ids: ${[...peerContestants, ratewardenContestant].map((c) => c.id).join(', ')})`);

const redisBinary = STORES.includes('redis') ? findExecutable('redis-server') : undefined;
let redisServer;
let redisVersion;
if (redisBinary !== undefined) {
  redisVersion = /v=(\S+)/.exec(spawnSync(redisBinary, ['--version'], { encoding: 'utf8' }).stdout)?.[1];
  redisServer = await startRedisServer(redisBinary);
}
const stopAll = async () => {
  if (redisServer !== undefined) await redisServer.stop();
};
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => stopAll().then(() => process.exit(130)));

// node_modules may be a symlink (a worktree's): compare real paths.
const REPO_MODULES = realpathSync(path.join(REPO, 'node_modules'));
const versions = {};
for (const name of ['express', 'ioredis', 'rate-limiter-flexible', 'express-rate-limit']) {
  const where = locate(name);
  versions[name] = where === undefined ? null : `${where.version}${where.dir.startsWith(REPO_MODULES) ? '' : ` (from ${where.dir})`}`;
}

const rows = [];
try {
  log(`Login attack: ${ATTEMPTS} wrong attempts (same username, same IP), password check ${CHECK_MS} ms, limit ${LIMIT}, ${REPS} rep(s) per row`);
  log(`Node ${process.version}; ${Object.entries(versions).map(([n, v]) => `${n} ${v ?? 'not installed'}`).join('; ')}; redis-server ${redisVersion ?? 'not found'}`);
  for (const contestant of contestants) {
    const missing = contestant.packages.filter((name) => locate(name) === undefined);
    const skip =
      missing.length > 0
        ? `${missing.join(', ')} not installed here: install it outside the repository (see README.md) and pass --peers=DIR`
        : await contestant.skipReason?.();
    for (const store of STORES.filter((s) => contestant.stores.includes(s))) {
      for (const mode of MODES) {
        const row = { contestant: contestant.id, title: contestant.title, mode, store };
        if (skip !== undefined) row.skipped = skip;
        else if (store === 'redis' && redisServer === undefined) row.skipped = 'redis-server not found on the PATH';
        if (row.skipped !== undefined) {
          rows.push(row);
          continue;
        }
        log(`  ${contestant.id} ${store} ${mode}...`);
        const reps = [];
        for (let r = 0; r < REPS; r++) reps.push(await runOne(contestant, store, mode, redisServer?.port));
        // The worst repetition (most checks) stands for the row; every repetition's count is kept.
        const worst = reps.reduce((a, b) => (b.checks > a.checks ? b : a));
        Object.assign(row, worst, { checksPerRep: reps.map((r) => r.checks) });
        if (REPS > 1) row.notes = [`per rep: ${row.checksPerRep.join('/')}`, ...worst.notes];
        rows.push(row);
      }
    }
  }
} finally {
  await stopAll();
}

if (JSON_OUT) {
  const meta = { attempts: ATTEMPTS, checkMs: CHECK_MS, limit: LIMIT, reps: REPS, node: process.version, redisServer: redisVersion ?? null, versions };
  console.log(JSON.stringify({ ...meta, rows }, null, 2));
} else {
  const header = ['contestant', 'mode', 'store', 'password checks', 'expected', 'notes'];
  const lines = rows.map((r) => [
    r.contestant,
    r.mode,
    r.store,
    r.skipped === undefined ? String(r.checks) : '—',
    String(LIMIT),
    r.skipped === undefined ? r.notes.join('; ') : `skipped: ${r.skipped}`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.slice().map((l) => (i === 5 ? 0 : l[i].length))));
  const fmt = (cells) => cells.map((c, i) => (i === 5 ? c : c.padEnd(widths[i]))).join(' | ');
  console.log('');
  console.log(fmt(header));
  console.log(widths.map((w, i) => '-'.repeat(i === 5 ? 5 : w)).join('-|-'));
  for (const l of lines) console.log(fmt(l));
}
// Timers a limiter keeps (unref'd or not) must not hold the process open.
process.exit(0);
