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
// can refill in that time. In the all-allowed cells there is nothing to refill: every
// contender, GCRA and upstash included, must allow every decision.
//
// Workloads, threshold 100 per 60 s (each named, for --only):
//   - All allowed ("allowed-1", "allowed-16", "allowed-128"): most real traffic is under its
//     limit, and there no cache can answer (a block cache, rlf's in-memory block and upstash's
//     ephemeral cache only remember refusals): every decision goes to Redis and is allowed.
//     The standard schedule's callers and keys (below), each key stopped at its threshold: 100
//     decisions per key, made round-robin over the keys of its caller, all allowed; 1, 16 and 128
//     callers on keys of their own, 25, 4 and 1 keys per caller (2,500, 6,400 and 12,800
//     decisions a cell: half a standard cell's count; as none of them is answered from memory,
//     an all-allowed cell takes about half to two thirds of a standard cell's time, and a run
//     grows by well under double: measured 1.2× at --reps=1, an estimated 1.4× at 5).
//   - Standard schedule ("standard-1", "standard-16", "standard-128"; figures under "1", "16"
//     and "128"): every key gets exactly 200 decisions, made round-robin over the keys of its
//     caller, so its first 100 decisions are allowed (the write path) and its last 100 rejected
//     (the read path: a log computes when a slot frees). 1, 16 and 128 callers, each an async
//     loop that awaits its decision before it starts the next, each on keys of its own (the
//     limiter serialises decisions per key, so concurrent callers on one key would measure the
//     queue): 25 keys per caller at 1 caller, 4 at 16, 1 at 128 (5,000, 12,800 and 25,600
//     decisions a cell). A fixed count of decisions per cell, not a fixed duration, so every
//     contender sees the same sequence of keys.
//   - Hot-key flood ("hot"): 128 callers, 100 calls each (12,800 decisions); nine calls in ten
//     go to one key ("hot", 11,520 decisions, 100 of them allowed, so it is refused almost all
//     the time) and one in ten to a key of the caller's own, a different key each time (1,280
//     keys, one decision each, all allowed). Callers' cold calls are staggered (caller c's call i
//     is cold when i mod 10 = c mod 10).
//
// Procedure: each contender is first checked to make the expected decisions (threshold 3 on a
// fresh key: allowed, allowed, allowed, rejected; then threshold 100: 100 allowed, then
// rejected), then warmed up with one untimed round-trip batch (below) and one untimed hot-key
// flood. Every cell uses a fresh limiter (local block caches, in-memory blocks and key tables
// start empty, and no cell sees another's), which first makes one untimed decision on a key of
// its own (ratewarden's handshake, script loading), then the server is emptied (FLUSHALL; the
// script cache stays) and the cell is timed. A repetition runs every contender on every
// workload, workload after workload, contenders in an order rotated from one repetition to the
// next; REPS repetitions (default 5). Reported, in one table per kind of workload (all allowed,
// standard schedule, hot-key flood): the median decisions per second over the repetitions, and
// medians of ratios taken within each repetition on the same workload: ÷ rlf, ÷ rlf+block (> 1:
// the contender decides more per second) and, with --baseline, after ÷ before for the same
// algorithm, client and defaults (one table, every workload).
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
// constant below: the issue's table, ratewarden's defaults against rlf's, on the all-allowed
// workloads, the standard schedule at 1 caller and the hot-key flood). The issue asks for medians
// of at least 5 interleaved repetitions: with fewer (--reps), the targets table says its verdicts
// are only indicative.
//
// Options: --reps=N (default 5), --dist=DIR (the build under test, default ../dist from this
// file), --baseline=DIR (a second build, rows labelled "before"), --json=PATH (default
// bench/results.json, "-" for none: the figures go into its "redis" property, the rest of the
// file is kept), --only=TEXT[,TEXT…] (a quick check: only the workloads whose name contains one
// of the texts, or is it: a text that is a whole workload name selects that one alone; e.g.
// --only=allowed for the three all-allowed ones, --only=standard-1,hot for two; the round trips
// and Redis time are not measured, targets on workloads left out are not judged, and nothing is
// written to the JSON file unless --json=PATH is given).
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import Redis from 'ioredis';
import { createClient } from 'redis';
import rateLimiterFlexible from 'rate-limiter-flexible';
import upstashRatelimit from '@upstash/ratelimit';
import { findExecutable, startRedisServer } from './redis-server.mjs';

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
/** --only: substrings of workload names (a quick check); undefined: every workload. */
const ONLY = args.only === undefined ? undefined : args.only.split(',').filter((t) => t !== '');
const JSON_PATH = args.json ?? (ONLY === undefined ? path.join(BENCH_DIR, 'results.json') : '-');
const DIST = path.resolve(args.dist ?? path.join(BENCH_DIR, '..', 'dist'));
const BASELINE = args.baseline === undefined ? undefined : path.resolve(args.baseline);

const THRESHOLD = 100;
const WINDOW_SECONDS = 60;
const WINDOW_MS = WINDOW_SECONDS * 1000;
/** Decisions per key in a standard cell: THRESHOLD allowed, then THRESHOLD rejected. */
const PER_KEY = 2 * THRESHOLD;
/**
 * Concurrent callers, and keys per caller: a standard cell makes callers × keys × PER_KEY
 * decisions, an all-allowed cell callers × keys × THRESHOLD.
 */
const LEVELS = [
  { callers: 1, keysPerCaller: 25 },
  { callers: 16, keysPerCaller: 4 },
  { callers: 128, keysPerCaller: 1 },
];
/** The hot-key flood: callers, calls per caller, and one call in `coldEvery` on a cold key. */
const HOT = { callers: 128, callsPerCaller: 100, coldEvery: 10 };
/**
 * The workloads: `name` (for --only), `key` (their figures go under it; the standard schedule's
 * keep the names they had before the all-allowed ones existed: "1", "16", "128"), `group` (one
 * table each), `kind` (how a cell runs), and for a standard-kind cell its callers and keys
 * (`level`), decisions per key (`perKey`) and key names' prefix.
 */
const ALL_WORKLOADS = [
  ...LEVELS.map((l) => ({ key: `allowed-${l.callers}`, name: `allowed-${l.callers}`, group: 'allowed', kind: 'standard', level: l, perKey: THRESHOLD, prefix: 'ok' })),
  ...LEVELS.map((l) => ({ key: String(l.callers), name: `standard-${l.callers}`, group: 'standard', kind: 'standard', level: l, perKey: PER_KEY, prefix: 'user' })),
  { key: 'hot', name: 'hot', group: 'hot', kind: 'hot' },
];
/** The workloads of this run (--only: a text that is a workload's name selects it alone, any other the names containing it). */
const onlyMatches = (t, w) => (ALL_WORKLOADS.some((x) => x.name === t) ? w.name === t : w.name.includes(t));
const WORKLOADS = ALL_WORKLOADS.filter((w) => ONLY === undefined || ONLY.some((t) => onlyMatches(t, w)));
/** The round-trip batch (and the standard warm-up): 16 callers, one key each. */
const BATCH = { callers: 16, keysPerCaller: 1 };
/** Passes of each server-time measurement (median). */
const SERVER_TIME_PASSES = 3;

if (!(Number.isInteger(REPS) && REPS >= 1)) {
  console.error(`--reps: expected a positive integer, got ${args.reps}`);
  process.exit(2);
}
if (WORKLOADS.length === 0) {
  console.error(`--only: no workload's name contains ${ONLY.map((t) => JSON.stringify(t)).join(' or ')}; the workloads: ${ALL_WORKLOADS.map((w) => w.name).join(', ')}`);
  process.exit(2);
}
for (const [name, dir] of [['dist', DIST], ['baseline', BASELINE]]) {
  if (dir !== undefined && !(existsSync(path.join(dir, 'index.js')) && existsSync(path.join(dir, 'redis.js')))) {
    console.error(`--${name}: expected a directory holding index.js and redis.js (a ratewarden dist/), got ${dir}`);
    process.exit(2);
  }
}

// ---------------------------------------------------------------------------------------------
// redis-server (started by ./redis-server.mjs)

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
function defineContenders(builds, io, nodeRedis, notes, ioNoResend) {
  const contenders = [];
  for (const build of builds) {
    const algorithms = [
      { algorithm: 'log', Strategy: build.RedisSlidingWindowLog, name: 'RedisSlidingWindowLog', client: 'ioredis', instance: io, exact: true, variants: VARIANTS },
      { algorithm: 'log', Strategy: build.RedisSlidingWindowLog, name: 'RedisSlidingWindowLog', client: 'node-redis', instance: nodeRedis, exact: true, variants: [VARIANTS[0], VARIANTS[2]] },
      { algorithm: 'gcra', Strategy: build.RedisGCRA, name: 'RedisGCRA', client: 'ioredis', instance: io, exact: false, variants: VARIANTS },
    ];
    // The build under test only: the same defaults on an ioredis client that does not re-send
    // (no call token), for both algorithms.
    if (build.label !== 'before') {
      algorithms.push(
        { algorithm: 'log', Strategy: build.RedisSlidingWindowLog, name: 'RedisSlidingWindowLog', client: 'ioredis, no re-send', instance: ioNoResend, exact: true, variants: [VARIANTS[0]] },
        { algorithm: 'gcra', Strategy: build.RedisGCRA, name: 'RedisGCRA', client: 'ioredis, no re-send', instance: ioNoResend, exact: false, variants: [VARIANTS[0]] },
      );
    }
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
function keysFor({ callers, keysPerCaller }, prefix = 'user') {
  return Array.from({ length: callers }, (_, i) => Array.from({ length: keysPerCaller }, (_, j) => `${prefix}-${i}-${j}`));
}

/** The hot-key flood's calls, per caller. Built before timing. */
function hotSchedule() {
  return Array.from({ length: HOT.callers }, (_, c) =>
    Array.from({ length: HOT.callsPerCaller }, (_, i) => (i % HOT.coldEvery === c % HOT.coldEvery ? `cold-${c}-${i}` : 'hot')),
  );
}

/**
 * A standard-kind cell: every caller makes `perKey` passes over its keys, awaiting each decision.
 * `perKey` ≤ THRESHOLD (an all-allowed cell): every decision must be allowed, GCRA's and
 * upstash's included (nothing to refill).
 */
async function runStandard(decide, keys, perKey = PER_KEY) {
  let allowed = 0;
  const caller = async (own) => {
    let a = 0;
    for (let pass = 0; pass < perKey; pass++) {
      for (let j = 0; j < own.length; j++) if (await decide(own[j])) a++;
    }
    allowed += a;
  };
  const started = performance.now();
  await Promise.all(keys.map(caller));
  const ms = performance.now() - started;
  const keyCount = keys.length * keys[0].length;
  const decisions = keyCount * perKey;
  const allAllowed = perKey <= THRESHOLD;
  return { decisions, allowed, ms, perSecond: (decisions / ms) * 1000, expected: keyCount * Math.min(perKey, THRESHOLD), refillingKeys: allAllowed ? 0 : keyCount, allAllowed };
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

/**
 * The allowed decisions a cell of workload `name` must make: all of them (an all-allowed cell),
 * exactly the expected count, or within the refill bound (top comment).
 */
function checkAllowed(contender, cell, name) {
  const { allowed, expected, decisions } = cell;
  const what = `${contender.id}, ${name}`;
  if (cell.coldDecisions !== undefined) {
    check(cell.coldAllowed === cell.coldDecisions, `${what}: expected all ${cell.coldDecisions} cold decisions allowed, got ${cell.coldAllowed}`);
  }
  if (cell.allAllowed) {
    check(allowed === decisions, `${what}: expected every decision allowed (${decisions}), got ${allowed}`);
  } else if (contender.exact) {
    check(allowed === expected, `${what}: expected ${expected} allowed of ${decisions}, got ${allowed}`);
  } else {
    const most = expected + cell.refillingKeys * (Math.ceil((THRESHOLD * cell.ms) / WINDOW_MS) + 1);
    check(allowed >= expected && allowed <= most, `${what}: expected ${expected} to ${most} allowed of ${decisions} (${cell.ms.toFixed(0)} ms), got ${allowed}`);
  }
}

/** Runs one cell of `workload` on `instance` (no setup, no check). */
function runWorkload(instance, workload, inputs) {
  return workload.kind === 'hot' ? runHot(instance.decide, inputs.hot) : runStandard(instance.decide, inputs[workload.key], workload.perKey);
}

/** One timed (or warm-up) cell of `workload` on a fresh limiter of `contender`, on an empty server. */
async function runCell(contender, workload, control, inputs) {
  const instance = contender.make(THRESHOLD);
  try {
    await instance.decide(`warm-${contender.id}`);
    await control.flushall();
    const cell = await runWorkload(instance, workload, inputs);
    checkAllowed(contender, cell, workload.name);
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
    checkAllowed(contender, cell, 'round-trip batch');
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
      const cell = await runWorkload(instance, workload, inputs);
      const stats = parseCommandStats(await control.call('INFO', 'commandstats'));
      checkAllowed(contender, cell, `${workload.name}, Redis time`);
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
      passes.push({ decisions: cell.decisions, scriptUsec: scriptUsec / cell.decisions, allUsec: allUsec / cell.decisions, scriptCalls: scriptCalls / cell.decisions });
    } finally {
      instance.close();
    }
  }
  return {
    decisions: passes[0].decisions,
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
 * The issue's targets: ratewarden's defaults against rlf's (plain, or with inMemoryBlockOnConsumed
 * = points: rlf+block), medians of at least 5 interleaved repetitions. Each names the workloads it
 * needs (`needs`: not judged when --only left one out), picks its subject rows of the build under
 * test (`pick(r)`) and judges each (`judge(r, ctx)`; ctx has the rlf row and every row).
 *
 * | 1 caller, every decision allowed: RedisGCRA, the log, node-redis | ≥ 1.0× rlf |
 * | 1 caller, 100 allowed then 100 refused per key (the standard schedule) | ≥ 1.0× rlf+block |
 * | 16 / 128 callers, every decision allowed | ≥ 1.2× / ≥ 1.5× rlf (the log too) |
 * | hot-key flood | ≥ 1.5× rlf+block (all three ratewarden rows) |
 *
 * "The three ratewarden rows": the defaults of RedisGCRA (ioredis), RedisSlidingWindowLog
 * (ioredis) and RedisSlidingWindowLog (node-redis). "The log too", at 16 / 128 callers: RedisGCRA
 * and RedisSlidingWindowLog, through ioredis (the node-redis row is named only at 1 caller).
 */
const is = (r, algorithm, variant, client = 'ioredis') => r.algorithm === algorithm && r.variant === variant && r.client === client;
const DEFAULTS = 'defaults';
const THREE = (r) => is(r, 'gcra', DEFAULTS) || is(r, 'log', DEFAULTS) || is(r, 'log', DEFAULTS, 'node-redis');
const GCRA_AND_LOG = (r) => is(r, 'gcra', DEFAULTS) || is(r, 'log', DEFAULTS);
const TARGETS = [
  { what: '1 caller, every decision allowed, vs rlf (defaults)', target: '≥ 1.00×', needs: ['allowed-1'], pick: THREE, judge: (r) => ratioTarget(r.vsRlf['allowed-1'], 1) },
  {
    what: '1 caller, standard schedule (100 allowed then 100 refused per key), vs rlf+block (defaults)',
    target: '≥ 1.00×',
    needs: ['1'],
    pick: THREE,
    judge: (r) => ratioTarget(r.vsRlfBlock['1'], 1),
  },
  { what: '16 callers, every decision allowed, vs rlf (defaults)', target: '≥ 1.20×', needs: ['allowed-16'], pick: GCRA_AND_LOG, judge: (r) => ratioTarget(r.vsRlf['allowed-16'], 1.2) },
  { what: '128 callers, every decision allowed, vs rlf (defaults)', target: '≥ 1.50×', needs: ['allowed-128'], pick: GCRA_AND_LOG, judge: (r) => ratioTarget(r.vsRlf['allowed-128'], 1.5) },
  { what: 'hot-key flood vs rlf+block (defaults)', target: '≥ 1.50×', needs: ['hot'], pick: THREE, judge: (r) => ratioTarget(r.vsRlfBlock.hot, 1.5) },
];
/** The fewest repetitions the targets are judged on (the issue: medians of ≥ 5 interleaved rounds). */
const TARGET_REPS = 5;
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
  // An ioredis client that never re-sends a command after a reconnect: ratewarden then sends no
  // call token (README, "Re-sent decisions count once"), which shows that token's cost.
  const ioNoResend = new Redis({ host: '127.0.0.1', port: server.port, lazyConnect: true, autoResendUnfulfilledCommands: false });
  await ioNoResend.connect();
  closers.push(() => ioNoResend.disconnect());
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
    `${REPS} repetition${REPS === 1 ? '' : 's'}, median`;
  console.log(`\n${header}`);

  const notes = [];
  const contenders = defineContenders(builds, io, nodeRedis, notes, ioNoResend);
  for (const note of notes) console.error(`redis: note: ${note}`);
  const inputs = { batch: keysFor(BATCH), hot: hotSchedule(), ...Object.fromEntries(ALL_WORKLOADS.filter((w) => w.kind === 'standard').map((w) => [w.key, keysFor(w.level, w.prefix)])) };
  const batchWorkload = { key: 'batch', name: 'round-trip batch', kind: 'standard', perKey: PER_KEY };
  const hotWorkload = ALL_WORKLOADS.find((w) => w.kind === 'hot');
  if (ONLY !== undefined) console.error(`redis: --only: ${WORKLOADS.map((w) => w.name).join(', ')}; round trips and Redis time not measured`);

  for (const c of contenders) {
    await control.flushall();
    await verify(c);
    await runCell(c, batchWorkload, control, inputs); // warm-up
    await runCell(c, hotWorkload, control, inputs); // warm-up
  }
  console.error(`redis: ${contenders.length} contenders verified and warmed up (${elapsed()})`);

  /** Round trips and Redis time: measured on a full run, not with --only. */
  const measured = ONLY === undefined;
  const roundTrips = new Map();
  const serverTime = new Map();
  if (measured) {
    for (const c of contenders) {
      roundTrips.set(c.id, await measureRoundTrips(c, control, server.port, inputs));
      serverTime.set(c.id, { batch: await measureServerTime(c, batchWorkload, control, inputs), hot: await measureServerTime(c, hotWorkload, control, inputs) });
    }
    console.error(`redis: round trips and Redis time measured (${elapsed()})`);
  }

  /** samples[id][workload] = decisions per second, one per repetition. */
  const samples = Object.fromEntries(contenders.map((c) => [c.id, Object.fromEntries(WORKLOADS.map((w) => [w.key, []]))]));
  /** Allowed and decisions per group of standard-kind workloads ("allowed", "standard"), hot key allowed per hot-key flood. */
  const tallies = Object.fromEntries(contenders.map((c) => [c.id, { allowed: { allowed: 0, decisions: 0 }, standard: { allowed: 0, decisions: 0 }, hotAllowed: [] }]));
  for (let rep = 0; rep < REPS; rep++) {
    for (const w of WORKLOADS) {
      const order = contenders.map((_, i) => contenders[(i + rep) % contenders.length]);
      for (const c of order) {
        const cell = await runCell(c, w, control, inputs);
        samples[c.id][w.key].push(cell.perSecond);
        if (w.kind === 'hot') {
          tallies[c.id].hotAllowed.push(cell.hotAllowed);
        } else {
          tallies[c.id][w.group].allowed += cell.allowed;
          tallies[c.id][w.group].decisions += cell.decisions;
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
    allowedShare: Object.fromEntries(['allowed', 'standard'].filter((g) => tallies[c.id][g].decisions > 0).map((g) => [g, tallies[c.id][g].allowed / tallies[c.id][g].decisions])),
    hotAllowed: tallies[c.id].hotAllowed.length > 0 ? median(tallies[c.id].hotAllowed) : undefined,
    roundTrips: roundTrips.get(c.id),
    serverTime: serverTime.get(c.id),
  }));
  const rlfRow = rows.find((r) => r.id === 'rlf');

  const who = (r) => `| ${r.build || '—'} | ${r.name} | ${r.client} | ${r.variant} |`;
  const callersText = (n) => `${n} caller${n === 1 ? '' : 's'}`;
  const out = [];
  /** One table of decisions per second and ratios for the workloads of `group` in this run. */
  const levelTable = (group, title, expectedShare) => {
    const ws = WORKLOADS.filter((w) => w.group === group);
    if (ws.length === 0) return;
    const keys = ws.map((w) => w.key);
    const callers = ws.map((w) => w.level.callers).join(' / ');
    if (out.length > 0) out.push('');
    out.push(
      title,
      '',
      `| build | contender | client | configuration | ${ws.map((w) => callersText(w.level.callers)).join(' | ')} | ÷ rlf (${callers}) | ÷ rlf+block (${callers}) | allowed (expected ${expectedShare}) |`,
      `| --- | --- | --- | --- | ${ws.map(() => '---:').join(' | ')} | ---: | ---: | ---: |`,
    );
    for (const r of rows) {
      out.push(`${who(r)} ${keys.map((k) => fmtRate(r.perSecond[k])).join(' | ')} | ${fmtRatios(r.vsRlf, keys)} | ${fmtRatios(r.vsRlfBlock, keys)} | ${(r.allowedShare[group] * 100).toFixed(1)} % |`);
    }
  };
  levelTable(
    'allowed',
    `### R. Redis, every decision allowed: decisions per second, threshold ${THRESHOLD} per ${WINDOW_SECONDS} s, ${THRESHOLD} decisions per key (all allowed: no cache can answer), callers on keys of their own; ratio > 1: faster than the peer`,
    '100 %',
  );
  levelTable(
    'standard',
    `### R. Redis, standard schedule: decisions per second, threshold ${THRESHOLD} per ${WINDOW_SECONDS} s, ${PER_KEY} decisions per key (${THRESHOLD} allowed, then ${THRESHOLD} rejected), callers on keys of their own; ratio > 1: faster than the peer`,
    `${((THRESHOLD / PER_KEY) * 100).toFixed(0)} %`,
  );
  const coldCount = inputs.hot.flat().filter((k) => k !== 'hot').length;
  if (WORKLOADS.includes(hotWorkload)) {
    if (out.length > 0) out.push('');
    out.push(
      `### R. Redis, hot-key flood: ${HOT.callers} callers × ${HOT.callsPerCaller} calls, ${(HOT.callers * HOT.callsPerCaller - coldCount).toLocaleString('en-US')} on one key (${THRESHOLD} allowed) and ${coldCount.toLocaleString('en-US')} on as many other keys (all allowed); threshold ${THRESHOLD} per ${WINDOW_SECONDS} s`,
      '',
      '| build | contender | client | configuration | decisions/s | ÷ rlf | ÷ rlf+block | hot key allowed |',
      '| --- | --- | --- | --- | ---: | ---: | ---: | ---: |',
    );
    for (const r of rows) out.push(`${who(r)} ${fmtRate(r.perSecond.hot)} | ${fmtRatio(r.vsRlf?.hot)} | ${fmtRatio(r.vsRlfBlock?.hot)} | ${r.hotAllowed} |`);
  }

  const paired = rows.filter((r) => r.vsBefore !== undefined);
  if (paired.length > 0) {
    const label = (w) => (w.kind === 'hot' ? 'hot-key flood' : `${w.group === 'allowed' ? 'all allowed' : 'standard'}, ${callersText(w.level.callers)}`);
    out.push(
      '',
      `### R. Redis, after ÷ before (the same algorithm and client; before: its defaults); median of the within-repetition ratios`,
      '',
      `| contender | client | configuration (after) | ${WORKLOADS.map(label).join(' | ')} |${measured ? ' Redis µs / decision, batch (before → after) |' : ''}`,
      `| --- | --- | --- | ${WORKLOADS.map(() => '---:').join(' | ')} |${measured ? ' ---: |' : ''}`,
    );
    for (const r of paired) {
      const b = rows.find((x) => x.id === r.before.id);
      const usec = measured ? ` ${fmtUsec(b.serverTime.batch.scriptUsecPerDecision)} → ${fmtUsec(r.serverTime.batch.scriptUsecPerDecision)} |` : '';
      out.push(`| ${r.name} | ${r.client} | ${r.variant} | ${WORKLOADS.map((w) => fmtRatio(r.vsBefore[w.key])).join(' | ')} |${usec}`);
    }
  }

  if (measured) {
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
  }

  const judged = [];
  const mainBuild = builds[0].label;
  const ran = new Set(WORKLOADS.map((w) => w.key));
  const indicative = REPS < TARGET_REPS;
  for (const t of TARGETS.filter((x) => x.needs.every((k) => ran.has(k)))) {
    const subjects = rows.filter((r) => r.library === 'ratewarden' && r.build === mainBuild && t.pick(r));
    for (const r of subjects) judged.push({ target: t.what, goal: t.target, contender: `${r.name} (${r.client}, ${r.variant})`, ...t.judge(r, { rlf: rlfRow, all: rows }), repetitions: REPS });
  }
  out.push(
    '',
    `### R. Redis: targets (ratewarden${mainBuild ? ` ${mainBuild}` : ''}; rlf = rate-limiter-flexible RateLimiterRedis, rlf+block = the same with inMemoryBlockOnConsumed = points)`,
    '',
    '| target | contender | measured | goal | |',
    '| --- | --- | --- | --- | --- |',
  );
  for (const j of judged) out.push(`| ${j.target} | ${j.contender} | ${j.measured} | ${j.goal} | ${j.met ? 'met' : '**not met**'}${indicative ? ' (indicative)' : ''} |`);
  out.push(
    '',
    "Targets: the issue's table (the TARGETS constant in bench/redis.mjs): ratewarden's defaults against rlf's (plain, or rlf+block), medians of the within-repetition ratios, judged on the build under test's rows it names.",
    ...(indicative ? [`Only ${REPS} repetition${REPS === 1 ? '' : 's'}: the targets ask for medians of at least ${TARGET_REPS} interleaved repetitions, so these verdicts are indicative only.`] : []),
    ...(judged.length < TARGETS.length && WORKLOADS.length < ALL_WORKLOADS.length ? [`--only: targets on workloads not run are not judged.`] : []),
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
        allAllowedLevels: LEVELS.map((l) => ({ ...l, decisionsPerKey: THRESHOLD, decisionsPerCell: l.callers * l.keysPerCaller * THRESHOLD })),
        workloads: WORKLOADS.map((w) => ({ name: w.name, key: w.key, group: w.group })),
        ...(ONLY === undefined ? {} : { only: ONLY }),
        hotKeyFlood: { ...HOT, decisions: HOT.callers * HOT.callsPerCaller, coldDecisions: coldCount },
        repetitions: REPS,
        roundTripBatch: { ...BATCH, decisions: BATCH.callers * BATCH.keysPerCaller * PER_KEY },
        serverTimePasses: SERVER_TIME_PASSES,
        statistic:
          'decisions/s: median over repetitions of one fixed-count cell each, on a fresh limiter; ratios: median of the within-repetition ratios on the same workload (÷ rlf, ÷ rlf+block, after ÷ before); Redis µs: median over passes of commandstats usec ÷ decisions; allowedShare: per group of workloads ("allowed": all allowed, "standard": the standard schedule)',
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
