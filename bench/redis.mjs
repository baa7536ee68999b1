// Redis-backed rate limiting, ratewarden against its peers: `npm run bench:redis`, and the last
// section (R) of `npm run bench`. `npm run bench:redis -- --baseline=DIR` also measures a second
// ratewarden build (an older dist/) side by side, in the same run, against the same server.
//
// Starts its own redis-server (Debian's) on a free loopback port, with persistence off, and stops
// it at the end (also on error). Prints "Redis section skipped: redis-server not found" and exits
// 0 when redis-server is not on the PATH.
//
// Contenders, in the same run, against the same server, over loopback TCP:
//   - ratewarden's RedisSlidingWindowLog through an ioredis client and through a node-redis
//     client, and RedisGCRA through the ioredis client, each in up to three configurations:
//     "defaults" (micro-batching on, batchSize 32; exact local block cache on, blockCacheSize
//     10,000), "batching on, cache off" ({ blockCacheSize: 0 }) and "batching off, cache off"
//     ({ batchSize: 1, blockCacheSize: 0 }; node-redis: defaults and this one). A build that
//     rejects an option (builds from before issue 12 reject unknown option keys with a
//     TypeError) gets no row for that configuration: the run prints a note instead. So the
//     bench runs against builds from before and after the options exist;
//   - with --baseline=DIR, the same contenders from DIR/index.js and DIR/redis.js, labelled
//     "before" (the build under test is then labelled "after");
//   - rate-limiter-flexible's RateLimiterRedis (consume) through the same ioredis client, plain
//     ("rlf") and with inMemoryBlockOnConsumed = points ("rlf+block": a key that has used its
//     points is refused from process memory, without Redis, until its window ends);
//   - @upstash/ratelimit's Ratelimit.slidingWindow through the same ioredis client, with its
//     defaults (ephemeralCache on: an identifier refused once is refused from process memory
//     until its fixed window ends; timeout 5 s; analytics off). Its client is normally
//     @upstash/redis (HTTP REST), but all a single-region limiter's limit() calls on it are
//     evalsha(sha, keys, args) and, on a NOSCRIPT error, eval(script, keys, args) (dist/
//     index.mjs, safeEval); the bench passes an object with those two methods, adapted to
//     ioredis (keys.length, ...keys, ...args). One change to its script: upstash's scripts
//     begin with "#!lua flags=allow-key-locking", which stock Redis (7.0.15 here) refuses
//     ("ERR Unexpected flag in script shebang: allow-key-locking"); the adapter drops that one
//     line, runs the rest unchanged, and maps upstash's SHA-1 to the stripped script's.
// They are not the same algorithm. RateLimiterRedis is a fixed-window counter (one script that
// runs SET NX + INCRBY + PTTL on a string); RedisSlidingWindowLog an exact sliding-window log (a
// sorted set of one member per allowed request); RedisGCRA a GCRA on one string; upstash's
// sliding window a sliding-window counter: two fixed windows aligned on multiples of the window
// of Date.now(), the previous one's count weighted by the share of it still inside the sliding
// window (GET, GET, INCRBY, PEXPIRE): an approximation, not exact.
//
// Checks (every contender, every cell): the log, rlf and rlf+block must make exactly the
// expected decisions (all of a key's decisions fall within 60 s of its first). GCRA refills one
// request every 0.6 s while a cell runs, and upstash's counter lets a key through again when a
// cell crosses one of its fixed-window boundaries (the previous window's count is weighted down
// as the new one goes by); for those two a cell must allow at least the expected count and at
// most, per key, ceil(threshold × cell duration / window) + 1 more: the most either algorithm
// can refill in that time.
//
// Workloads, threshold 100 per 60 s:
//   - Standard schedule: every key gets exactly 200 decisions, made round-robin over the keys of
//     its caller, so its first 100 decisions are allowed (the write path) and its last 100
//     rejected (the read path: a log computes when a slot frees). 1, 16 and 128 callers, each an
//     async loop that awaits its decision before it starts the next, each on keys of its own
//     (the limiter serialises decisions per key, so concurrent callers on one key would measure
//     the queue): 25 keys per caller at 1 caller, 4 at 16, 1 at 128 (5,000, 12,800 and 25,600
//     decisions a cell). A fixed count of decisions per cell, not a fixed duration, so every
//     contender sees the same sequence of keys.
//   - Hot-key flood: 128 callers, 100 calls each (12,800 decisions); nine calls in ten go to one
//     key ("hot", 11,520 decisions, 100 of them allowed, so it is refused almost all the time)
//     and one in ten to a key of the caller's own, a different key each time (1,280 keys, one
//     decision each, all allowed). Callers' cold calls are staggered (caller c's call i is cold
//     when i mod 10 = c mod 10).
//
// Procedure: each contender is first checked to make the expected decisions (threshold 3 on a
// fresh key: allowed, allowed, allowed, rejected; then threshold 100: 100 allowed, then
// rejected), then warmed up with one untimed cell of each workload. Every cell uses a fresh
// limiter (local block caches, in-memory blocks and key tables start empty, and no cell sees
// another's), which first makes one untimed decision on a key of its own (ratewarden's
// handshake, script loading), then the server is emptied (FLUSHALL; the script cache stays) and
// the cell is timed. A repetition runs every contender on every workload, contenders in an order
// rotated from one repetition to the next; REPS repetitions (default 5). Reported: the median
// decisions per second over the repetitions, and medians of ratios taken within each repetition
// on the same workload: ÷ rlf, ÷ rlf+block (> 1: the contender decides more per second) and,
// with --baseline, after ÷ before for the same algorithm, client and defaults.
//
// Round trips: one more untimed batch per contender (16 callers, one key each, 3,200 decisions,
// the standard schedule), between CONFIG RESETSTAT and INFO commandstats. Redis 7's commandstats
// count the commands a script runs (redis.call) as well as those clients send, so the batch also
// runs under MONITOR, which tags every command with its source (a client's address, or "lua").
// Reported: round trips per decision = commands sent by the contender's client ÷ decisions, and
// commands run per decision = all commandstats calls except INFO and CONFIG ÷ decisions, each
// with its per-command breakdown; the two sources are cross-checked.
//
// Redis time per decision: the same batch, and one hot-key flood, each run 3 more times without
// MONITOR (MONITOR's feed runs inside a script's time: every command a script runs is copied to
// the monitor), between CONFIG RESETSTAT and INFO commandstats; median over the 3 of the usec
// of EVALSHA + EVAL (a script's time includes the commands it runs) ÷ decisions, and of all
// commandstats usec ÷ decisions (every command's time; a script's inner commands are counted
// again there, on top of the script's own time). Decisions a contender refuses from memory cost
// no Redis time and count in the denominator.
//
// Targets: printed as a table, met or not met, with the figures they are judged on (the TARGETS
// constant below).
//
// Options: --reps=N (default 5), --dist=DIR (the build under test, default ../dist from this
// file), --baseline=DIR (a second build, rows labelled "before"), --json=PATH (default
// bench/results.json, "-" for none: the figures go into its "redis" property, the rest of the
// file is kept).
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { accessSync, constants, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import Redis from 'ioredis';
import { createClient } from 'redis';
import rateLimiterFlexible from 'rate-limiter-flexible';
import upstashRatelimit from '@upstash/ratelimit';

const { RateLimiterRedis, RateLimiterRes } = rateLimiterFlexible;
const { Ratelimit } = upstashRatelimit;

// ---------------------------------------------------------------------------------------------
// Options and parameters

const args = Object.fromEntries(
  process.argv.slice(2).map((arg) => {
    const [name, value = 'true'] = arg.replace(/^--/, '').split('=');
    return [name, value];
  }),
);
const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const REPS = Number(args.reps ?? 5);
const JSON_PATH = args.json ?? path.join(BENCH_DIR, 'results.json');
const DIST = path.resolve(args.dist ?? path.join(BENCH_DIR, '..', 'dist'));
const BASELINE = args.baseline === undefined ? undefined : path.resolve(args.baseline);

const THRESHOLD = 100;
const WINDOW_SECONDS = 60;
const WINDOW_MS = WINDOW_SECONDS * 1000;
/** Decisions per key in a standard cell: THRESHOLD allowed, then THRESHOLD rejected. */
const PER_KEY = 2 * THRESHOLD;
/** Concurrent callers, and keys per caller (a cell makes callers × keys × PER_KEY decisions). */
const LEVELS = [
  { callers: 1, keysPerCaller: 25 },
  { callers: 16, keysPerCaller: 4 },
  { callers: 128, keysPerCaller: 1 },
];
/** The hot-key flood: callers, calls per caller, and one call in `coldEvery` on a cold key. */
const HOT = { callers: 128, callsPerCaller: 100, coldEvery: 10 };
/** The workloads, by the key their figures go under. */
const WORKLOADS = [...LEVELS.map((l) => ({ key: String(l.callers), kind: 'standard', level: l })), { key: 'hot', kind: 'hot' }];
/** The round-trip batch (and the standard warm-up): 16 callers, one key each. */
const BATCH = { callers: 16, keysPerCaller: 1 };
/** Passes of each server-time measurement (median). */
const SERVER_TIME_PASSES = 3;
const READY_TIMEOUT_MS = 10_000;

if (!(Number.isInteger(REPS) && REPS >= 1)) {
  console.error(`--reps: expected a positive integer, got ${args.reps}`);
  process.exit(2);
}
for (const [name, dir] of [['dist', DIST], ['baseline', BASELINE]]) {
  if (dir !== undefined && !(existsSync(path.join(dir, 'index.js')) && existsSync(path.join(dir, 'redis.js')))) {
    console.error(`--${name}: expected a directory holding index.js and redis.js (a ratewarden dist/), got ${dir}`);
    process.exit(2);
  }
}

// ---------------------------------------------------------------------------------------------
// redis-server

/** The path of `name` on the PATH, or undefined. */
function findExecutable(name) {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir === '') continue;
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** A free TCP port on 127.0.0.1: listen on port 0, read the port, close. */
async function freePort() {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address();
  server.close();
  await once(server, 'close');
  return port;
}

/** Starts redis-server on a free loopback port; resolves once it accepts connections. */
async function startRedisServer(binary) {
  const port = await freePort();
  const child = spawn(binary, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code)));
  let output = '';
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    }
  };
  try {
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`redis-server was not ready within ${READY_TIMEOUT_MS} ms:\n${output}`)), READY_TIMEOUT_MS);
      const onData = (chunk) => {
        output += chunk;
        if (output.includes('Ready to accept connections')) {
          clearTimeout(timer);
          child.stdout.off('data', onData);
          resolve();
        }
      };
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', onData);
      child.stderr.on('data', (chunk) => {
        output += chunk;
      });
      child.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      exited.then((status) => {
        clearTimeout(timer);
        reject(new Error(`redis-server exited (${status}) before it was ready:\n${output}`));
      });
    });
  } catch (error) {
    await stop();
    throw error;
  }
  // Keep draining its output so that it never blocks on a full pipe.
  child.stdout.resume();
  child.stderr.resume();
  return { port, child, stop };
}

/**
 * A raw MONITOR connection: collects the commands the server runs, each with its source (a
 * client's "ip:port", or "lua" for a command a script runs).
 */
async function openMonitor(port) {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  socket.setEncoding('utf8');
  const lines = [];
  let rest = '';
  let wake;
  socket.on('data', (chunk) => {
    const parts = (rest + chunk).split('\r\n');
    rest = parts.pop();
    for (const line of parts) lines.push(line);
    wake?.();
  });
  /** Resolves once a line satisfying `test` has arrived; returns the lines before it. */
  const until = (test) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('MONITOR: expected line not seen within 10 s')), 10_000);
      let scanned = 0;
      const check = () => {
        for (; scanned < lines.length; scanned++) {
          if (test(lines[scanned])) {
            clearTimeout(timer);
            wake = undefined;
            resolve(lines.splice(0, scanned + 1).slice(0, -1));
            return;
          }
        }
      };
      wake = check;
      check();
    });
  socket.write('MONITOR\r\n');
  await until((line) => line === '+OK');
  return {
    until,
    close: () => {
      socket.destroy();
    },
  };
}

const MONITOR_LINE = /^\+\d+\.\d+ \[\d+ (\S+)\] "((?:[^"\\]|\\.)*)"/;

// ---------------------------------------------------------------------------------------------
// Builds and contenders

/** A ratewarden build: its RateLimiter and Redis strategies, loaded from `dir`. */
async function loadBuild(dir, label) {
  const core = await import(pathToFileURL(path.join(dir, 'index.js')).href);
  const redis = await import(pathToFileURL(path.join(dir, 'redis.js')).href);
  let version = 'unknown';
  try {
    version = JSON.parse(readFileSync(path.join(dir, '..', 'package.json'), 'utf8')).version;
  } catch {
    // a dist/ copied out of its package
  }
  return { label, dir, version, RateLimiter: core.RateLimiter, RedisSlidingWindowLog: redis.RedisSlidingWindowLog, RedisGCRA: redis.RedisGCRA };
}

/** ratewarden configurations: the options given to the strategy, besides client and prefix. */
const VARIANTS = [
  { tag: 'defaults', options: {} },
  { tag: 'batching on, cache off', options: { blockCacheSize: 0 } },
  { tag: 'batching off, cache off', options: { batchSize: 1, blockCacheSize: 0 } },
];

/** A decider over a ratewarden limiter (fresh per call of `make`). */
function ratewardenMaker(build, Strategy, client, prefix, options) {
  return (threshold) => {
    const strategy = new Strategy({ client, prefix, ...options });
    const limiter = new build.RateLimiter({ threshold, windowSeconds: WINDOW_SECONDS, strategy });
    return { decide: (key) => limiter.allowRequest(key).then((r) => r.allowed), close: () => limiter.close() };
  };
}

/** RateLimiterRedis resolves an allowed consume and rejects a denied one with a RateLimiterRes. */
function flexibleMaker(io, block) {
  return (threshold) => {
    const limiter = new RateLimiterRedis({
      storeClient: io,
      points: threshold,
      duration: WINDOW_SECONDS,
      keyPrefix: block ? 'rlflx-block' : 'rlflx',
      ...(block ? { inMemoryBlockOnConsumed: threshold } : {}),
    });
    const decide = (key) =>
      limiter.consume(key).then(
        () => true,
        (error) => {
          if (error instanceof RateLimiterRes) return false;
          throw error;
        },
      );
    return { decide, close: () => {} };
  };
}

/**
 * The part of @upstash/redis a single-region Ratelimit uses for limit(), over ioredis: evalsha
 * and eval with (keys, args) arrays. Scripts lose their first line when it is a "#!lua" shebang
 * (stock Redis refuses upstash's allow-key-locking flag); upstash's SHA-1 of a script (of the
 * text as shipped) is mapped to the SHA-1 of the text Redis was given.
 */
function upstashClientOverIoredis(io) {
  const sha1 = (text) => createHash('sha1').update(text).digest('hex');
  const loaded = new Map();
  return {
    evalsha: (sha, keys, argv) => io.evalsha(loaded.get(sha) ?? sha, keys.length, ...keys, ...argv),
    eval: async (script, keys, argv) => {
      const body = script.replace(/^#!lua[^\n]*\n/, '');
      const reply = await io.eval(body, keys.length, ...keys, ...argv);
      loaded.set(sha1(script), sha1(body));
      return reply;
    },
  };
}

function upstashMaker(client) {
  return (threshold) => {
    const limiter = new Ratelimit({ redis: client, limiter: Ratelimit.slidingWindow(threshold, `${WINDOW_SECONDS} s`), prefix: 'upstash' });
    return { decide: (key) => limiter.limit(key).then((r) => r.success), close: () => {} };
  };
}

/**
 * Every contender of the run. `exact`: must make exactly the expected decisions; otherwise it
 * may refill (see the top comment). Contenders whose construction throws a TypeError (an option
 * the build does not know) are left out, with a note.
 */
function defineContenders(builds, io, nodeRedis, notes) {
  const contenders = [];
  for (const build of builds) {
    const algorithms = [
      { algorithm: 'log', Strategy: build.RedisSlidingWindowLog, name: 'RedisSlidingWindowLog', client: 'ioredis', instance: io, exact: true, variants: VARIANTS },
      { algorithm: 'log', Strategy: build.RedisSlidingWindowLog, name: 'RedisSlidingWindowLog', client: 'node-redis', instance: nodeRedis, exact: true, variants: [VARIANTS[0], VARIANTS[2]] },
      { algorithm: 'gcra', Strategy: build.RedisGCRA, name: 'RedisGCRA', client: 'ioredis', instance: io, exact: false, variants: VARIANTS },
    ];
    for (const a of algorithms) {
      for (const v of a.variants) {
        const id = `${build.label || 'ratewarden'}-${a.algorithm}-${a.client}-${v.tag.replace(/[^a-z]+/g, '-')}`;
        const make = ratewardenMaker(build, a.Strategy, a.instance, `rw-${a.algorithm}:`, v.options);
        try {
          make(3).close();
        } catch (error) {
          if (!(error instanceof TypeError)) throw error;
          notes.push(`${build.label || 'this build'}: ${a.name} (${a.client}, ${v.tag}: ${JSON.stringify(v.options)}) left out: ${error.message}`);
          continue;
        }
        contenders.push({ id, build: build.label, library: 'ratewarden', name: `ratewarden ${a.name}`, algorithm: a.algorithm, client: a.client, variant: v.tag, options: v.options, exact: a.exact, make });
      }
    }
  }
  contenders.push(
    { id: 'rlf', build: '', library: 'rate-limiter-flexible', name: 'rate-limiter-flexible RateLimiterRedis', algorithm: 'fixed-window', client: 'ioredis', variant: 'rlf', options: {}, exact: true, make: flexibleMaker(io, false) },
    {
      id: 'rlf-block',
      build: '',
      library: 'rate-limiter-flexible',
      name: 'rate-limiter-flexible RateLimiterRedis',
      algorithm: 'fixed-window',
      client: 'ioredis',
      variant: 'rlf+block: inMemoryBlockOnConsumed = points',
      options: { inMemoryBlockOnConsumed: THRESHOLD },
      exact: true,
      make: flexibleMaker(io, true),
    },
    {
      id: 'upstash',
      build: '',
      library: '@upstash/ratelimit',
      name: '@upstash/ratelimit slidingWindow',
      algorithm: 'sliding-window-counter',
      client: 'ioredis',
      variant: 'defaults (ephemeralCache on)',
      options: {},
      exact: false,
      make: upstashMaker(upstashClientOverIoredis(io)),
    },
  );
  return contenders;
}

// ---------------------------------------------------------------------------------------------
// Verification and cells

function check(condition, message) {
  if (!condition) throw new Error(`verification failed: ${message}`);
}

async function decideMany(decide, key, count) {
  const out = [];
  for (let i = 0; i < count; i++) out.push(await decide(key));
  return out;
}

/**
 * Upstash's windows are aligned on multiples of the window of Date.now(): waits out the last
 * 2 s before a boundary, so that the verification's few decisions do not straddle one.
 */
async function awayFromWindowEdge() {
  const toEdge = WINDOW_MS - (Date.now() % WINDOW_MS);
  if (toEdge < 2_000) await new Promise((resolve) => setTimeout(resolve, toEdge + 50));
}

/** Threshold 3 on a fresh key, then threshold 100 on another. */
async function verify(contender) {
  await awayFromWindowEdge();
  const small = contender.make(3);
  const big = contender.make(THRESHOLD);
  try {
    const s = await decideMany(small.decide, 'verify-3', 4);
    check(s.join() === 'true,true,true,false', `${contender.id}, threshold 3: expected allowed ×3 then rejected, got ${s.join(', ')}`);
    const b = await decideMany(big.decide, 'verify-100', THRESHOLD + 1);
    const allowed = b.filter(Boolean).length;
    check(allowed === THRESHOLD && b[THRESHOLD] === false, `${contender.id}, threshold ${THRESHOLD}: expected ${THRESHOLD} allowed then rejected, got ${allowed} allowed`);
  } finally {
    small.close();
    big.close();
  }
}

/** Keys of every caller: caller i's keys are its own. Built before timing. */
function keysFor({ callers, keysPerCaller }) {
  return Array.from({ length: callers }, (_, i) => Array.from({ length: keysPerCaller }, (_, j) => `user-${i}-${j}`));
}

/** The hot-key flood's calls, per caller. Built before timing. */
function hotSchedule() {
  return Array.from({ length: HOT.callers }, (_, c) =>
    Array.from({ length: HOT.callsPerCaller }, (_, i) => (i % HOT.coldEvery === c % HOT.coldEvery ? `cold-${c}-${i}` : 'hot')),
  );
}

/** A standard cell: every caller makes PER_KEY passes over its keys, awaiting each decision. */
async function runStandard(decide, keys) {
  let allowed = 0;
  const caller = async (own) => {
    let a = 0;
    for (let pass = 0; pass < PER_KEY; pass++) {
      for (let j = 0; j < own.length; j++) if (await decide(own[j])) a++;
    }
    allowed += a;
  };
  const started = performance.now();
  await Promise.all(keys.map(caller));
  const ms = performance.now() - started;
  const keyCount = keys.length * keys[0].length;
  const decisions = keyCount * PER_KEY;
  return { decisions, allowed, ms, perSecond: (decisions / ms) * 1000, expected: keyCount * THRESHOLD, refillingKeys: keyCount };
}

/** A hot-key cell: every caller makes its scheduled calls, awaiting each decision. */
async function runHot(decide, schedule) {
  let hotAllowed = 0;
  let coldAllowed = 0;
  const caller = async (calls) => {
    for (const key of calls) {
      if (await decide(key)) {
        if (key === 'hot') hotAllowed++;
        else coldAllowed++;
      }
    }
  };
  const started = performance.now();
  await Promise.all(schedule.map(caller));
  const ms = performance.now() - started;
  const decisions = HOT.callers * HOT.callsPerCaller;
  const coldDecisions = schedule.flat().filter((k) => k !== 'hot').length;
  return {
    decisions,
    allowed: hotAllowed + coldAllowed,
    hotAllowed,
    coldAllowed,
    coldDecisions,
    ms,
    perSecond: (decisions / ms) * 1000,
    expected: THRESHOLD + coldDecisions,
    refillingKeys: 1,
  };
}

/** The allowed decisions a cell must make: exactly, or within the refill bound (top comment). */
function checkAllowed(contender, cell) {
  const { allowed, expected, decisions } = cell;
  if (cell.coldDecisions !== undefined) {
    check(cell.coldAllowed === cell.coldDecisions, `${contender.id}, hot-key flood: expected all ${cell.coldDecisions} cold decisions allowed, got ${cell.coldAllowed}`);
  }
  if (contender.exact) {
    check(allowed === expected, `${contender.id}: expected ${expected} allowed of ${decisions}, got ${allowed}`);
  } else {
    const most = expected + cell.refillingKeys * (Math.ceil((THRESHOLD * cell.ms) / WINDOW_MS) + 1);
    check(allowed >= expected && allowed <= most, `${contender.id}: expected ${expected} to ${most} allowed of ${decisions} (${cell.ms.toFixed(0)} ms), got ${allowed}`);
  }
}

/** One timed (or warm-up) cell of `workload` on a fresh limiter of `contender`, on an empty server. */
async function runCell(contender, workload, control, inputs) {
  const instance = contender.make(THRESHOLD);
  try {
    await instance.decide(`warm-${contender.id}`);
    await control.flushall();
    const cell = workload.kind === 'hot' ? await runHot(instance.decide, inputs.hot) : await runStandard(instance.decide, inputs[workload.key]);
    checkAllowed(contender, cell);
    return cell;
  } finally {
    instance.close();
  }
}

/** commandstats by command (lower case, "config|resetstat" style names): calls and usec. */
function parseCommandStats(info) {
  const stats = {};
  for (const line of info.split(/\r?\n/)) {
    const m = /^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/.exec(line);
    if (m) stats[m[1]] = { calls: Number(m[2]), usec: Number(m[3]) };
  }
  return stats;
}
const isControl = (name) => name === 'info' || name === 'config' || name.startsWith('config|');

/** Round trips and commands per decision of one contender (the batch under MONITOR). */
async function measureRoundTrips(contender, control, port, inputs) {
  const instance = contender.make(THRESHOLD);
  await instance.decide(`warm-${contender.id}`);
  await control.flushall();
  const monitor = await openMonitor(port);
  try {
    await control.call('CONFIG', 'RESETSTAT');
    const cell = await runStandard(instance.decide, inputs.batch);
    checkAllowed(contender, cell);
    const info = await control.call('INFO', 'commandstats');
    const token = `ratewarden-bench-end-${process.pid}-${contender.id}`;
    await control.call('ECHO', token);
    const lines = await monitor.until((line) => line.includes(token));

    const all = {};
    for (const [name, { calls }] of Object.entries(parseCommandStats(info))) if (!isControl(name)) all[name] = calls;
    const controlSource = `${control.stream.localAddress}:${control.stream.localPort}`;
    const sent = {};
    const monitored = {};
    for (const line of lines) {
      const m = MONITOR_LINE.exec(line);
      if (!m) throw new Error(`MONITOR: unexpected line ${JSON.stringify(line.slice(0, 200))}`);
      const [, source, rawName] = m;
      if (source === controlSource) continue;
      const name = rawName.toLowerCase();
      monitored[name] = (monitored[name] ?? 0) + 1;
      if (source !== 'lua') sent[name] = (sent[name] ?? 0) + 1;
    }
    const total = (o) => Object.values(o).reduce((a, b) => a + b, 0);
    const perDecision = (o) =>
      Object.fromEntries(Object.entries(o).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([k, v]) => [k, v / cell.decisions]));
    const agree = Object.keys({ ...all, ...monitored }).every((k) => all[k] === monitored[k]);
    return {
      decisions: cell.decisions,
      roundTripsPerDecision: total(sent) / cell.decisions,
      roundTrips: perDecision(sent),
      commandsPerDecision: total(all) / cell.decisions,
      commands: perDecision(all),
      commandstatsMatchMonitor: agree,
      ...(agree ? {} : { commandstatsCalls: all, monitorCalls: monitored }),
    };
  } finally {
    monitor.close();
    instance.close();
  }
}

/** Redis time per decision of one contender on one workload: median of SERVER_TIME_PASSES passes. */
async function measureServerTime(contender, workload, control, inputs) {
  const passes = [];
  for (let pass = 0; pass < SERVER_TIME_PASSES; pass++) {
    const instance = contender.make(THRESHOLD);
    try {
      await instance.decide(`warm-${contender.id}`);
      await control.flushall();
      await control.call('CONFIG', 'RESETSTAT');
      const cell = workload.kind === 'hot' ? await runHot(instance.decide, inputs.hot) : await runStandard(instance.decide, inputs[workload.key]);
      const stats = parseCommandStats(await control.call('INFO', 'commandstats'));
      checkAllowed(contender, cell);
      let scriptUsec = 0;
      let scriptCalls = 0;
      let allUsec = 0;
      for (const [name, { calls, usec }] of Object.entries(stats)) {
        if (isControl(name)) continue;
        allUsec += usec;
        if (name === 'evalsha' || name === 'eval') {
          scriptUsec += usec;
          scriptCalls += calls;
        }
      }
      passes.push({ scriptUsec: scriptUsec / cell.decisions, allUsec: allUsec / cell.decisions, scriptCalls: scriptCalls / cell.decisions });
    } finally {
      instance.close();
    }
  }
  return {
    decisions: workload.kind === 'hot' ? HOT.callers * HOT.callsPerCaller : BATCH.callers * BATCH.keysPerCaller * PER_KEY,
    scriptUsecPerDecision: median(passes.map((p) => p.scriptUsec)),
    allUsecPerDecision: median(passes.map((p) => p.allUsec)),
    scriptCallsPerDecision: median(passes.map((p) => p.scriptCalls)),
    passes,
  };
}

// ---------------------------------------------------------------------------------------------
// Statistics, targets and output

function median(values) {
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}
const fmtRate = (x) => Math.round(x).toLocaleString('en-US');
const fmtRatio = (x) => (x === undefined ? '—' : `${x.toFixed(2)}×`);
const fmtRatios = (o, keys) => (o === undefined ? '—' : keys.map((k) => (o[k] === undefined ? '—' : o[k].toFixed(2))).join(' / '));
const fmtBreakdown = (o) => Object.entries(o).map(([k, v]) => `${k}=${v.toFixed(2)}`).join(' ');
const fmtUsec = (x) => x.toFixed(2);

/**
 * Targets, judged on the build under test's ratewarden contenders with their defaults, through
 * ioredis (log and GCRA), except the round-trip target, judged on all of them. Each: what is
 * measured, how it is judged, and on which rows.
 */
/**
 * Issue 12's targets. Each picks its subject rows of the build under test (`pick(r)`) and judges
 * each (`judge(r, ctx)`; ctx has the rlf row and every row, to compare clients).
 *   - speed at 1 / 16 / 128 callers, batching off: { batchSize: 1, blockCacheSize: 0 }, so that the
 *     standard schedule's refusals all reach Redis (the script and wrapper alone);
 *   - with micro-batching: { blockCacheSize: 0 } (batching on, the cache off);
 *   - the hot-key flood: the defaults (the cache on);
 *   - Redis time per decision: batching off, cache off (per script, one decision each);
 *   - the node-redis row: the log, batching off, cache off, against the ioredis row.
 */
const is = (r, algorithm, variant, client = 'ioredis') => r.algorithm === algorithm && r.variant === variant && r.client === client;
const OFF = 'batching off, cache off';
const BATCHING = 'batching on, cache off';
const TARGETS = [
  { what: 'RedisGCRA vs rlf, 1 caller, batching off', target: '≥ 0.95×', pick: (r) => is(r, 'gcra', OFF), judge: (r) => ratioTarget(r.vsRlf['1'], 0.95) },
  { what: 'RedisSlidingWindowLog vs rlf, 1 caller, batching off', target: '≥ 0.90×', pick: (r) => is(r, 'log', OFF), judge: (r) => ratioTarget(r.vsRlf['1'], 0.9) },
  { what: 'vs rlf, 16 callers, batching off', target: '≥ 1.00×', pick: (r) => is(r, 'gcra', OFF) || is(r, 'log', OFF), judge: (r) => ratioTarget(r.vsRlf['16'], 1) },
  { what: 'vs rlf, 128 callers, batching off', target: '≥ 1.00×', pick: (r) => is(r, 'gcra', OFF) || is(r, 'log', OFF), judge: (r) => ratioTarget(r.vsRlf['128'], 1) },
  { what: 'RedisGCRA vs rlf, 16 callers, micro-batching', target: '≥ 1.80×', pick: (r) => is(r, 'gcra', BATCHING), judge: (r) => ratioTarget(r.vsRlf['16'], 1.8) },
  { what: 'RedisGCRA vs rlf, 128 callers, micro-batching', target: '≥ 3.00×', pick: (r) => is(r, 'gcra', BATCHING), judge: (r) => ratioTarget(r.vsRlf['128'], 3) },
  { what: 'RedisSlidingWindowLog vs rlf, 16 callers, micro-batching', target: '≥ 1.30×', pick: (r) => is(r, 'log', BATCHING), judge: (r) => ratioTarget(r.vsRlf['16'], 1.3) },
  { what: 'RedisSlidingWindowLog vs rlf, 128 callers, micro-batching', target: '≥ 1.60×', pick: (r) => is(r, 'log', BATCHING), judge: (r) => ratioTarget(r.vsRlf['128'], 1.6) },
  { what: 'hot-key flood vs rlf (defaults)', target: '≥ 5.00×', pick: (r) => is(r, 'gcra', 'defaults') || is(r, 'log', 'defaults'), judge: (r) => ratioTarget(r.vsRlf.hot, 5) },
  { what: 'hot-key flood vs rlf with inMemoryBlockOnConsumed (defaults)', target: '≥ 1.50×', pick: (r) => is(r, 'gcra', 'defaults') || is(r, 'log', 'defaults'), judge: (r) => ratioTarget(r.vsRlfBlock.hot, 1.5) },
  ...[
    ['gcra', 5],
    ['log', 8.5],
  ].map(([algorithm, most]) => ({
    what: `Redis time per decision, ${algorithm === 'gcra' ? 'RedisGCRA' : 'RedisSlidingWindowLog'} (script µs, batching off)`,
    target: `≤ ${most} µs`,
    pick: (r) => is(r, algorithm, OFF),
    judge: (r, { rlf }) => {
      const us = r.serverTime.batch.scriptUsecPerDecision;
      return { measured: `${fmtUsec(us)} µs (rlf ${fmtUsec(rlf.serverTime.batch.scriptUsecPerDecision)} µs)`, met: us <= most };
    },
  })),
  {
    what: 'node-redis row vs the ioredis row (log, batching off), at 1 / 16 / 128 callers',
    target: '≥ 0.80× at each',
    pick: (r) => is(r, 'log', OFF, 'node-redis'),
    judge: (r, { all }) => {
      const io = all.find((x) => x.build === r.build && is(x, 'log', OFF));
      const xs = ['1', '16', '128'].map((k) => r.perSecond[k] / io.perSecond[k]);
      return { measured: xs.map((x) => fmtRatio(x)).join(' / '), met: xs.every((x) => x >= 0.8) };
    },
  },
  {
    what: 'round trips per decision (commands its client sends, all EVALSHA)',
    target: '≤ 1.00, EVALSHA only',
    pick: () => true,
    judge: (r) => {
      const t = r.roundTrips;
      const only = Object.keys(t.roundTrips).every((k) => k === 'evalsha');
      return { measured: `${t.roundTripsPerDecision.toFixed(2)} (${fmtBreakdown(t.roundTrips)})`, met: only && t.roundTripsPerDecision <= 1 };
    },
  },
];
function ratioTarget(x, at) {
  return { measured: fmtRatio(x), met: x !== undefined && x >= at };
}

function versionOf(dir) {
  return JSON.parse(readFileSync(path.join(BENCH_DIR, dir, 'package.json'), 'utf8')).version;
}

/** Writes `section` as the "redis" property of the JSON file, keeping everything else in it. */
function writeJson(file, section) {
  let json = {};
  if (existsSync(file)) json = JSON.parse(readFileSync(file, 'utf8'));
  json.redis = section;
  writeFileSync(file, `${JSON.stringify(json, null, 2)}\n`);
  console.error(`wrote the "redis" property of ${file}`);
}

// ---------------------------------------------------------------------------------------------
// Main

const binary = findExecutable('redis-server');
if (binary === undefined) {
  console.log('Redis section skipped: redis-server not found');
  process.exit(0);
}

const builds = [await loadBuild(DIST, BASELINE === undefined ? '' : 'after')];
if (BASELINE !== undefined) builds.push(await loadBuild(BASELINE, 'before'));

const started = performance.now();
const elapsed = () => `${((performance.now() - started) / 1000).toFixed(1)} s`;
const server = await startRedisServer(binary);
const onSignal = (signal) => {
  server.child.kill('SIGTERM');
  process.exit(signal === 'SIGINT' ? 130 : 143);
};
process.once('SIGINT', onSignal);
process.once('SIGTERM', onSignal);

const closers = [];
try {
  const url = `redis://127.0.0.1:${server.port}`;
  const control = new Redis({ host: '127.0.0.1', port: server.port, lazyConnect: true });
  await control.connect();
  closers.push(() => control.disconnect());
  const io = new Redis({ host: '127.0.0.1', port: server.port, lazyConnect: true });
  await io.connect();
  closers.push(() => io.disconnect());
  const nodeRedisErrors = [];
  const nodeRedis = createClient({ url });
  nodeRedis.on('error', (error) => nodeRedisErrors.push(error));
  await nodeRedis.connect();
  closers.push(() => nodeRedis.quit());

  const serverInfo = await control.call('INFO', 'server');
  const redisVersion = /redis_version:(\S+)/.exec(serverInfo)?.[1] ?? 'unknown';
  const cpus = os.cpus();
  const machine = { cpu: cpus[0]?.model ?? 'unknown', cores: cpus.length, node: process.version, redisServer: redisVersion, os: `${os.type()} ${os.release()} ${os.arch()}` };
  const versions = {
    ratewarden: Object.fromEntries(builds.map((b) => [b.label || 'build', { dir: b.dir, version: b.version }])),
    'rate-limiter-flexible': versionOf('../node_modules/rate-limiter-flexible'),
    '@upstash/ratelimit': versionOf('../node_modules/@upstash/ratelimit'),
    ioredis: versionOf('../node_modules/ioredis'),
    redis: versionOf('../node_modules/redis'),
  };
  const buildText = builds.map((b) => `${b.label ? `${b.label}: ` : ''}ratewarden ${b.version} (${b.dir})`).join(', ');
  const header =
    `Redis: ${buildText} vs rate-limiter-flexible ${versions['rate-limiter-flexible']} and @upstash/ratelimit ${versions['@upstash/ratelimit']} — ` +
    `${machine.cpu}, ${machine.cores} cores, Node ${machine.node}, redis-server ${redisVersion} on loopback (ioredis ${versions.ioredis}, node-redis ${versions.redis}); ` +
    `${REPS} repetitions, median`;
  console.log(`\n${header}`);

  const notes = [];
  const contenders = defineContenders(builds, io, nodeRedis, notes);
  for (const note of notes) console.error(`redis: note: ${note}`);
  const inputs = { batch: keysFor(BATCH), hot: hotSchedule(), ...Object.fromEntries(LEVELS.map((l) => [String(l.callers), keysFor(l)])) };
  const batchWorkload = { key: 'batch', kind: 'standard' };
  const hotWorkload = WORKLOADS.find((w) => w.kind === 'hot');

  for (const c of contenders) {
    await control.flushall();
    await verify(c);
    await runCell(c, batchWorkload, control, inputs); // warm-up
    await runCell(c, hotWorkload, control, inputs); // warm-up
  }
  console.error(`redis: ${contenders.length} contenders verified and warmed up (${elapsed()})`);

  const roundTrips = new Map();
  const serverTime = new Map();
  for (const c of contenders) {
    roundTrips.set(c.id, await measureRoundTrips(c, control, server.port, inputs));
    serverTime.set(c.id, { batch: await measureServerTime(c, batchWorkload, control, inputs), hot: await measureServerTime(c, hotWorkload, control, inputs) });
  }
  console.error(`redis: round trips and Redis time measured (${elapsed()})`);

  /** samples[id][workload] = decisions per second, one per repetition. */
  const samples = Object.fromEntries(contenders.map((c) => [c.id, Object.fromEntries(WORKLOADS.map((w) => [w.key, []]))]));
  const tallies = Object.fromEntries(contenders.map((c) => [c.id, { allowed: 0, decisions: 0, hotAllowed: [] }]));
  for (let rep = 0; rep < REPS; rep++) {
    for (const w of WORKLOADS) {
      const order = contenders.map((_, i) => contenders[(i + rep) % contenders.length]);
      for (const c of order) {
        const cell = await runCell(c, w, control, inputs);
        samples[c.id][w.key].push(cell.perSecond);
        if (w.kind === 'hot') {
          tallies[c.id].hotAllowed.push(cell.hotAllowed);
        } else {
          tallies[c.id].allowed += cell.allowed;
          tallies[c.id].decisions += cell.decisions;
        }
      }
    }
    console.error(`redis: repetition ${rep + 1} of ${REPS} done (${elapsed()})`);
  }
  await control.flushall();
  if (nodeRedisErrors.length > 0) throw nodeRedisErrors[0];

  const rlf = contenders.find((c) => c.id === 'rlf');
  const rlfBlock = contenders.find((c) => c.id === 'rlf-block');
  /** The before build's defaults of the same algorithm and client, if any. */
  const beforeOf = (c) =>
    c.build === 'after' ? contenders.find((b) => b.build === 'before' && b.algorithm === c.algorithm && b.client === c.client && b.variant === 'defaults') : undefined;
  const ratios = (c, ref) =>
    ref === undefined || ref === c
      ? undefined
      : Object.fromEntries(WORKLOADS.map((w) => [w.key, median(samples[c.id][w.key].map((x, i) => x / samples[ref.id][w.key][i]))]));
  const rows = contenders.map((c) => ({
    ...c,
    perSecond: Object.fromEntries(WORKLOADS.map((w) => [w.key, median(samples[c.id][w.key])])),
    vsRlf: ratios(c, rlf),
    vsRlfBlock: ratios(c, rlfBlock),
    before: beforeOf(c),
    vsBefore: ratios(c, beforeOf(c)),
    allowedShare: tallies[c.id].allowed / tallies[c.id].decisions,
    hotAllowed: median(tallies[c.id].hotAllowed),
    roundTrips: roundTrips.get(c.id),
    serverTime: serverTime.get(c.id),
  }));
  const rlfRow = rows.find((r) => r.id === 'rlf');

  const levelKeys = LEVELS.map((l) => String(l.callers));
  const who = (r) => `| ${r.build || '—'} | ${r.name} | ${r.client} | ${r.variant} |`;
  const out = [
    `### R. Redis, standard schedule: decisions per second, threshold ${THRESHOLD} per ${WINDOW_SECONDS} s, ${PER_KEY} decisions per key (${THRESHOLD} allowed, then ${THRESHOLD} rejected), callers on keys of their own; ratio > 1: faster than the peer`,
    '',
    `| build | contender | client | configuration | ${LEVELS.map((l) => `${l.callers} caller${l.callers === 1 ? '' : 's'}`).join(' | ')} | ÷ rlf (${levelKeys.join(' / ')}) | ÷ rlf+block (${levelKeys.join(' / ')}) | allowed |`,
    `| --- | --- | --- | --- | ${LEVELS.map(() => '---:').join(' | ')} | ---: | ---: | ---: |`,
  ];
  for (const r of rows) {
    out.push(`${who(r)} ${levelKeys.map((k) => fmtRate(r.perSecond[k])).join(' | ')} | ${fmtRatios(r.vsRlf, levelKeys)} | ${fmtRatios(r.vsRlfBlock, levelKeys)} | ${(r.allowedShare * 100).toFixed(1)} % |`);
  }
  const coldCount = inputs.hot.flat().filter((k) => k !== 'hot').length;
  out.push(
    '',
    `### R. Redis, hot-key flood: ${HOT.callers} callers × ${HOT.callsPerCaller} calls, ${(HOT.callers * HOT.callsPerCaller - coldCount).toLocaleString('en-US')} on one key (${THRESHOLD} allowed) and ${coldCount.toLocaleString('en-US')} on as many other keys (all allowed); threshold ${THRESHOLD} per ${WINDOW_SECONDS} s`,
    '',
    '| build | contender | client | configuration | decisions/s | ÷ rlf | ÷ rlf+block | hot key allowed |',
    '| --- | --- | --- | --- | ---: | ---: | ---: | ---: |',
  );
  for (const r of rows) out.push(`${who(r)} ${fmtRate(r.perSecond.hot)} | ${fmtRatio(r.vsRlf?.hot)} | ${fmtRatio(r.vsRlfBlock?.hot)} | ${r.hotAllowed} |`);

  const paired = rows.filter((r) => r.vsBefore !== undefined);
  if (paired.length > 0) {
    out.push(
      '',
      `### R. Redis, after ÷ before (the same algorithm and client; before: its defaults); median of the within-repetition ratios`,
      '',
      `| contender | client | configuration (after) | ${levelKeys.map((k) => `${k} caller${k === '1' ? '' : 's'}`).join(' | ')} | hot-key flood | Redis µs / decision, batch (before → after) |`,
      `| --- | --- | --- | ${levelKeys.map(() => '---:').join(' | ')} | ---: | ---: |`,
    );
    for (const r of paired) {
      const b = rows.find((x) => x.id === r.before.id);
      out.push(
        `| ${r.name} | ${r.client} | ${r.variant} | ${levelKeys.map((k) => fmtRatio(r.vsBefore[k])).join(' | ')} | ${fmtRatio(r.vsBefore.hot)} | ${fmtUsec(b.serverTime.batch.scriptUsecPerDecision)} → ${fmtUsec(r.serverTime.batch.scriptUsecPerDecision)} |`,
      );
    }
  }

  out.push(
    '',
    `### R. Redis: round trips and commands per decision (${BATCH.callers} callers, ${(BATCH.callers * BATCH.keysPerCaller * PER_KEY).toLocaleString('en-US')} decisions, standard schedule; CONFIG RESETSTAT … INFO commandstats, sources from MONITOR)`,
    '',
    '| build | contender | client | configuration | round trips / decision | sent by the client | commands run / decision (commandstats, incl. inside scripts) | breakdown |',
    '| --- | --- | --- | --- | ---: | --- | ---: | --- |',
  );
  for (const r of rows) {
    const t = r.roundTrips;
    out.push(`${who(r)} ${t.roundTripsPerDecision.toFixed(2)} | ${fmtBreakdown(t.roundTrips)} | ${t.commandsPerDecision.toFixed(2)} | ${fmtBreakdown(t.commands)} |`);
  }
  for (const r of rows.filter((x) => !x.roundTrips.commandstatsMatchMonitor)) {
    out.push('', `warning: ${r.id}: INFO commandstats and MONITOR disagree: ${JSON.stringify(r.roundTrips.commandstatsCalls)} vs ${JSON.stringify(r.roundTrips.monitorCalls)}`);
  }

  out.push(
    '',
    `### R. Redis time per decision (INFO commandstats usec ÷ decisions, without MONITOR, median of ${SERVER_TIME_PASSES} passes): the round-trip batch, and one hot-key flood`,
    '',
    "| build | contender | client | configuration | script µs (EVALSHA + EVAL), batch | ÷ rlf's | all commands µs (a script's inner commands counted again), batch | script calls / decision, batch | script µs, hot-key flood | ÷ rlf's | script calls / decision, hot-key flood |",
    '| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  );
  for (const r of rows) {
    const { batch, hot } = r.serverTime;
    const rb = rlfRow.serverTime.batch.scriptUsecPerDecision;
    const rh = rlfRow.serverTime.hot.scriptUsecPerDecision;
    out.push(
      `${who(r)} ${fmtUsec(batch.scriptUsecPerDecision)} | ${r === rlfRow ? '—' : fmtRatio(batch.scriptUsecPerDecision / rb)} | ${fmtUsec(batch.allUsecPerDecision)} | ${batch.scriptCallsPerDecision.toFixed(2)} | ` +
        `${fmtUsec(hot.scriptUsecPerDecision)} | ${r === rlfRow ? '—' : fmtRatio(hot.scriptUsecPerDecision / rh)} | ${hot.scriptCallsPerDecision.toFixed(2)} |`,
    );
  }

  const judged = [];
  const mainBuild = builds[0].label;
  for (const t of TARGETS) {
    const subjects = rows.filter((r) => r.library === 'ratewarden' && r.build === mainBuild && t.pick(r));
    for (const r of subjects) judged.push({ target: t.what, goal: t.target, contender: `${r.name} (${r.client}, ${r.variant})`, ...t.judge(r, { rlf: rlfRow, all: rows }) });
  }
  out.push(
    '',
    `### R. Redis: targets (ratewarden${mainBuild ? ` ${mainBuild}` : ''}; rlf = rate-limiter-flexible RateLimiterRedis, rlf+block = the same with inMemoryBlockOnConsumed = points)`,
    '',
    '| target | contender | measured | goal | |',
    '| --- | --- | --- | --- | --- |',
  );
  for (const j of judged) out.push(`| ${j.target} | ${j.contender} | ${j.measured} | ${j.goal} | ${j.met ? 'met' : '**not met**'} |`);
  out.push(
    '',
    "Targets: issue 12's table (the TARGETS constant in bench/redis.mjs), each judged on the configuration it names, of the build under test; the round-trip target on every ratewarden row of it.",
    'Configurations: "defaults" = no option given (batchSize 32 and blockCacheSize 10,000 in a build that has them; in a build from before them, its only behaviour); "batching on, cache off" = { blockCacheSize: 0 }; "batching off, cache off" = { batchSize: 1, blockCacheSize: 0 }.',
  );
  if (notes.length > 0) out.push('', ...notes.map((n) => `note: ${n}`));
  console.log(`\n${out.join('\n')}`);
  console.error(`redis: total ${elapsed()}`);

  if (JSON_PATH !== '-') {
    writeJson(JSON_PATH, {
      header,
      machine,
      versions,
      config: {
        threshold: THRESHOLD,
        windowSeconds: WINDOW_SECONDS,
        decisionsPerKey: PER_KEY,
        levels: LEVELS.map((l) => ({ ...l, decisionsPerCell: l.callers * l.keysPerCaller * PER_KEY })),
        hotKeyFlood: { ...HOT, decisions: HOT.callers * HOT.callsPerCaller, coldDecisions: coldCount },
        repetitions: REPS,
        roundTripBatch: { ...BATCH, decisions: BATCH.callers * BATCH.keysPerCaller * PER_KEY },
        serverTimePasses: SERVER_TIME_PASSES,
        statistic:
          'decisions/s: median over repetitions of one fixed-count cell each, on a fresh limiter; ratios: median of the within-repetition ratios on the same workload (÷ rlf, ÷ rlf+block, after ÷ before); Redis µs: median over passes of commandstats usec ÷ decisions',
      },
      notes,
      rows: rows.map((r) => ({
        id: r.id,
        build: r.build,
        name: r.name,
        library: r.library,
        algorithm: r.algorithm,
        client: r.client,
        configuration: r.variant,
        options: r.options,
        decisionsPerSecond: r.perSecond,
        ratioToRateLimiterFlexible: r.vsRlf,
        ratioToRateLimiterFlexibleInMemoryBlock: r.vsRlfBlock,
        ratioToBefore: r.vsBefore,
        samples: samples[r.id],
        allowedShare: r.allowedShare,
        hotKeyAllowed: r.hotAllowed,
        ...r.roundTrips,
        redisTime: r.serverTime,
      })),
      targets: judged,
    });
  }
} catch (error) {
  console.error(error);
  process.exitCode = 1;
} finally {
  for (const close of closers.reverse()) {
    try {
      await close();
    } catch {
      // closing anyway
    }
  }
  await server.stop();
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
}
