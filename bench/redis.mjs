// Redis-backed rate limiting, ratewarden against rate-limiter-flexible: `npm run bench:redis`, and the
// last section (R) of `npm run bench`.
//
// Starts its own redis-server (Debian's) on a free loopback port, with persistence off, and stops
// it at the end (also on error). Prints "Redis section skipped: redis-server not found" and exits
// 0 when redis-server is not on the PATH.
//
// Contenders, in the same run, against the same server, over loopback TCP:
//   - ratewarden's RedisSlidingWindowLog through an ioredis client, and through a node-redis client;
//   - ratewarden's RedisGCRA through the ioredis client;
//   - rate-limiter-flexible's RateLimiterRedis (consume) through the same ioredis client.
// They are not the same algorithm: RateLimiterRedis is a fixed-window counter (one script that
// runs SET NX + INCRBY + PTTL on a string), RedisSlidingWindowLog an exact sliding-window log (a
// sorted set of one member per allowed request) and RedisGCRA a GCRA on one string. Each is what
// its library offers for "N requests per window per key" on Redis; all decide in one script call.
//
// Workload: threshold 100 per 60 s; every key gets exactly 200 decisions, made round-robin over
// the keys of its caller, so its first 100 decisions are allowed (the write path: the log records
// a member) and its last 100 rejected (the read path: the log computes when a slot frees). The
// 10,000-keys-cycling workload of the in-memory section does not fit here: in the second or so a
// cell lasts, each of 10,000 keys would see a handful of decisions, all allowed, and a fixed-
// window counter and a sorted set would never be compared on rejections. With a fixed count of
// decisions per cell (not a fixed duration) every contender sees exactly the same sequence of
// keys, and the sliding-window log and the fixed window must make exactly the same decisions (all
// of a key's decisions fall within 60 s of its first), which is checked after every timed cell;
// GCRA allows a few more (it refills one request every 0.6 s while the cell runs).
//
// Concurrency: 1, 16 and 128 callers, each an async loop that awaits its decision before it
// starts the next, each on keys of its own. The limiter serialises decisions per key with an
// async mutex (and a sorted set per key would serialise them on Redis anyway), so concurrent
// callers on one key would measure the queue, not throughput: the callers use distinct keys.
// Keys per caller: 25 at 1 caller, 4 at 16, 1 at 128 (5,000, 12,800 and 25,600 decisions a cell).
//
// Procedure: each contender is first checked to make the expected decisions (threshold 3 on a
// fresh key: allowed, allowed, allowed, rejected; then the timed instance, threshold 100: 100
// allowed, then rejected), then warmed up with one untimed cell. Every cell starts from an empty
// server (FLUSHALL; the script cache stays). A repetition runs every contender at every
// concurrency, contenders in an order rotated from one repetition to the next; REPS repetitions.
// Reported: the median decisions per second over the repetitions, and the median of the ratios
// (ratewarden ÷ rate-limiter-flexible, > 1: ratewarden decides more per second) taken within
// each repetition at the same concurrency.
//
// Round trips: one more untimed batch per contender (16 callers, one key each, 3,200 decisions),
// between CONFIG RESETSTAT and INFO commandstats. Redis 7's commandstats count the commands a
// script runs (redis.call) as well as those clients send, so the batch also runs under MONITOR,
// which tags every command with its source (a client's address, or "lua"). Reported: round trips
// per decision = commands sent by the contender's client ÷ decisions (target for ratewarden:
// 1.00, one EVALSHA), and commands run per decision = all commandstats calls except INFO and
// CONFIG ÷ decisions, each with its per-command breakdown; the two sources are cross-checked.
//
// Options: --reps=N (default 3), --json=PATH (default bench/results.json, "-" for none: the
// figures go into its "redis" property, the rest of the file is kept).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { accessSync, constants, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Redis from 'ioredis';
import { createClient } from 'redis';
import rateLimiterFlexible from 'rate-limiter-flexible';
import { RateLimiter } from '../dist/index.js';
import { RedisGCRA, RedisSlidingWindowLog } from '../dist/redis.js';

const { RateLimiterRedis, RateLimiterRes } = rateLimiterFlexible;

// ---------------------------------------------------------------------------------------------
// Options and parameters

const args = Object.fromEntries(
  process.argv.slice(2).map((arg) => {
    const [name, value = 'true'] = arg.replace(/^--/, '').split('=');
    return [name, value];
  }),
);
const REPS = Number(args.reps ?? 3);
const JSON_PATH = args.json ?? fileURLToPath(new URL('./results.json', import.meta.url));

const THRESHOLD = 100;
const WINDOW_SECONDS = 60;
/** Decisions per key in a cell: THRESHOLD allowed, then THRESHOLD rejected. */
const PER_KEY = 2 * THRESHOLD;
/** Concurrent callers, and keys per caller (a cell makes callers × keys × PER_KEY decisions). */
const LEVELS = [
  { callers: 1, keysPerCaller: 25 },
  { callers: 16, keysPerCaller: 4 },
  { callers: 128, keysPerCaller: 1 },
];
/** The round-trip batch (and the warm-up): 16 callers, one key each. */
const BATCH = { callers: 16, keysPerCaller: 1 };
const READY_TIMEOUT_MS = 10_000;

if (!(Number.isInteger(REPS) && REPS >= 1)) {
  console.error(`--reps: expected a positive integer, got ${args.reps}`);
  process.exit(2);
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
// Contenders

function ratewardenDecider(limiter) {
  return (key) => limiter.allowRequest(key).then((r) => r.allowed);
}

/** RateLimiterRedis resolves an allowed consume and rejects a denied one with a RateLimiterRes. */
function flexibleDecider(limiter) {
  return (key) =>
    limiter.consume(key).then(
      () => true,
      (error) => {
        if (error instanceof RateLimiterRes) return false;
        throw error;
      },
    );
}

function defineContenders(io, nodeRedis) {
  const rw = (Strategy, client, prefix) => (threshold) =>
    ratewardenDecider(new RateLimiter({ threshold, windowSeconds: WINDOW_SECONDS, strategy: new Strategy({ client, prefix }) }));
  return [
    { id: 'ratewarden-log-ioredis', name: 'ratewarden RedisSlidingWindowLog', library: 'ratewarden', client: 'ioredis', exact: true, make: rw(RedisSlidingWindowLog, io, 'rw-log:') },
    { id: 'ratewarden-log-node-redis', name: 'ratewarden RedisSlidingWindowLog', library: 'ratewarden', client: 'node-redis', exact: true, make: rw(RedisSlidingWindowLog, nodeRedis, 'rw-log:') },
    { id: 'ratewarden-gcra-ioredis', name: 'ratewarden RedisGCRA', library: 'ratewarden', client: 'ioredis', exact: false, make: rw(RedisGCRA, io, 'rw-gcra:') },
    {
      id: 'flexible-ioredis',
      name: 'rate-limiter-flexible RateLimiterRedis',
      library: 'rate-limiter-flexible',
      client: 'ioredis',
      exact: true,
      make: (threshold) => flexibleDecider(new RateLimiterRedis({ storeClient: io, points: threshold, duration: WINDOW_SECONDS, keyPrefix: 'rlflx' })),
    },
  ];
}

// ---------------------------------------------------------------------------------------------
// Verification, cells, round trips

function check(condition, message) {
  if (!condition) throw new Error(`verification failed: ${message}`);
}

async function decideMany(decide, key, count) {
  const out = [];
  for (let i = 0; i < count; i++) out.push(await decide(key));
  return out;
}

/** Threshold 3 on a fresh key, then the timed instance (threshold 100) on another. */
async function verify(contender, decide) {
  const small = await decideMany(contender.make(3), 'verify-3', 4);
  check(small.join() === 'true,true,true,false', `${contender.id}, threshold 3: expected allowed ×3 then rejected, got ${small.join(', ')}`);
  const timed = await decideMany(decide, 'verify-100', THRESHOLD + 1);
  const allowed = timed.filter(Boolean).length;
  check(allowed === THRESHOLD && timed[THRESHOLD] === false, `${contender.id}, threshold ${THRESHOLD}: expected ${THRESHOLD} allowed then rejected, got ${allowed} allowed`);
}

/** Keys of every caller: caller i's keys are its own. Built before timing. */
function keysFor({ callers, keysPerCaller }) {
  return Array.from({ length: callers }, (_, i) => Array.from({ length: keysPerCaller }, (_, j) => `user-${i}-${j}`));
}

/** One cell: every caller makes PER_KEY passes over its keys, awaiting each decision. */
async function runCell(decide, keys) {
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
  const decisions = keys.length * keys[0].length * PER_KEY;
  return { decisions, allowed, ms, perSecond: (decisions / ms) * 1000 };
}

/** The allowed decisions a cell must make (exactly, for the log and the fixed window). */
function checkAllowed(contender, cell, keyCount) {
  const expected = keyCount * THRESHOLD;
  if (contender.exact) {
    check(cell.allowed === expected, `${contender.id}: expected ${expected} allowed of ${cell.decisions}, got ${cell.allowed}`);
  } else {
    check(cell.allowed >= expected && cell.allowed < cell.decisions, `${contender.id}: expected at least ${expected} allowed of ${cell.decisions}, got ${cell.allowed}`);
  }
}

/** commandstats calls by command (lower case, "config|resetstat" style names). */
function parseCommandStats(info) {
  const calls = {};
  for (const line of info.split(/\r?\n/)) {
    const m = /^cmdstat_([^:]+):calls=(\d+)/.exec(line);
    if (m) calls[m[1]] = Number(m[2]);
  }
  return calls;
}

/** Round trips and commands per decision of one contender, on an empty server. */
async function measureRoundTrips(contender, decide, control, port) {
  await control.flushall();
  const monitor = await openMonitor(port);
  try {
    await control.call('CONFIG', 'RESETSTAT');
    const keys = keysFor(BATCH);
    const cell = await runCell(decide, keys);
    checkAllowed(contender, cell, keys.length * BATCH.keysPerCaller);
    const info = await control.call('INFO', 'commandstats');
    const token = `ratewarden-bench-end-${process.pid}-${contender.id}`;
    await control.call('ECHO', token);
    const lines = await monitor.until((line) => line.includes(token));

    const stats = parseCommandStats(info);
    const all = {};
    for (const [name, calls] of Object.entries(stats)) {
      if (name === 'info' || name === 'config' || name.startsWith('config|')) continue;
      all[name] = calls;
    }
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
  }
}

// ---------------------------------------------------------------------------------------------
// Statistics and output

function median(values) {
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}
const fmtRate = (x) => Math.round(x).toLocaleString('en-US');
const fmtRatio = (x) => (x === undefined ? '—' : `${x.toFixed(2)}×`);
const fmtBreakdown = (o) => Object.entries(o).map(([k, v]) => `${k}=${v.toFixed(2)}`).join(' ');

function versionOf(dir) {
  return JSON.parse(readFileSync(new URL(`${dir}/package.json`, import.meta.url), 'utf8')).version;
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
    ratewarden: versionOf('..'),
    'rate-limiter-flexible': versionOf('../node_modules/rate-limiter-flexible'),
    ioredis: versionOf('../node_modules/ioredis'),
    redis: versionOf('../node_modules/redis'),
  };
  const header =
    `Redis: ratewarden ${versions.ratewarden} vs rate-limiter-flexible ${versions['rate-limiter-flexible']} — ${machine.cpu}, ${machine.cores} cores, Node ${machine.node}, ` +
    `redis-server ${redisVersion} on loopback (ioredis ${versions.ioredis}, node-redis ${versions.redis}); ${REPS} repetitions, median`;
  console.log(`\n${header}`);

  const contenders = defineContenders(io, nodeRedis);
  const deciders = new Map();
  for (const c of contenders) {
    await control.flushall();
    const decide = c.make(THRESHOLD);
    await verify(c, decide);
    await control.flushall();
    await runCell(decide, keysFor(BATCH)); // warm-up
    deciders.set(c.id, decide);
  }
  console.error(`redis: verified and warmed up (${elapsed()})`);

  const roundTrips = new Map();
  for (const c of contenders) roundTrips.set(c.id, await measureRoundTrips(c, deciders.get(c.id), control, server.port));
  console.error(`redis: round trips measured (${elapsed()})`);

  /** samples[id][callers] = decisions per second, one per repetition. */
  const samples = Object.fromEntries(contenders.map((c) => [c.id, Object.fromEntries(LEVELS.map((l) => [l.callers, []]))]));
  const allowedShare = Object.fromEntries(contenders.map((c) => [c.id, { allowed: 0, decisions: 0 }]));
  for (let rep = 0; rep < REPS; rep++) {
    for (const level of LEVELS) {
      const keys = keysFor(level);
      const order = contenders.map((_, i) => contenders[(i + rep) % contenders.length]);
      for (const c of order) {
        await control.flushall();
        const cell = await runCell(deciders.get(c.id), keys);
        checkAllowed(c, cell, level.callers * level.keysPerCaller);
        samples[c.id][level.callers].push(cell.perSecond);
        allowedShare[c.id].allowed += cell.allowed;
        allowedShare[c.id].decisions += cell.decisions;
      }
    }
    console.error(`redis: repetition ${rep + 1} of ${REPS} done (${elapsed()})`);
  }
  await control.flushall();
  if (nodeRedisErrors.length > 0) throw nodeRedisErrors[0];

  const baseline = contenders.find((c) => c.library === 'rate-limiter-flexible');
  const rows = contenders.map((c) => {
    const perSecond = {};
    const ratio = {};
    for (const { callers } of LEVELS) {
      perSecond[callers] = median(samples[c.id][callers]);
      if (c !== baseline) ratio[callers] = median(samples[c.id][callers].map((x, i) => x / samples[baseline.id][callers][i]));
    }
    const share = allowedShare[c.id].allowed / allowedShare[c.id].decisions;
    return { ...c, perSecond, ratio, allowedShare: share, roundTrips: roundTrips.get(c.id) };
  });

  const levelHeads = LEVELS.map((l) => `${l.callers} caller${l.callers === 1 ? '' : 's'}`);
  const out = [
    `### R. Redis: decisions per second, threshold ${THRESHOLD} per ${WINDOW_SECONDS} s, ${PER_KEY} decisions per key (${THRESHOLD} allowed, then ${THRESHOLD} rejected); ratio = ratewarden ÷ rate-limiter-flexible`,
    '',
    `| contender | client | ${levelHeads.join(' | ')} | ${LEVELS.map((l) => `ratio at ${l.callers}`).join(' | ')} | allowed |`,
    `| --- | --- | ${LEVELS.map(() => '---:').join(' | ')} | ${LEVELS.map(() => '---:').join(' | ')} | ---: |`,
  ];
  for (const r of rows) {
    out.push(
      `| ${r.name} | ${r.client} | ${LEVELS.map((l) => fmtRate(r.perSecond[l.callers])).join(' | ')} | ${LEVELS.map((l) => fmtRatio(r.ratio[l.callers])).join(' | ')} | ${(r.allowedShare * 100).toFixed(1)} % |`,
    );
  }
  out.push(
    '',
    `### R. Redis: round trips and commands per decision (${BATCH.callers} callers, ${(BATCH.callers * BATCH.keysPerCaller * PER_KEY).toLocaleString('en-US')} decisions; CONFIG RESETSTAT … INFO commandstats, sources from MONITOR)`,
    '',
    '| contender | client | round trips / decision | sent by the client | commands run / decision (commandstats, incl. inside scripts) | breakdown |',
    '| --- | --- | ---: | --- | ---: | --- |',
  );
  for (const r of rows) {
    const t = r.roundTrips;
    out.push(`| ${r.name} | ${r.client} | ${t.roundTripsPerDecision.toFixed(2)} | ${fmtBreakdown(t.roundTrips)} | ${t.commandsPerDecision.toFixed(2)} | ${fmtBreakdown(t.commands)} |`);
  }
  const mismatched = rows.filter((r) => !r.roundTrips.commandstatsMatchMonitor);
  for (const r of mismatched) out.push('', `warning: ${r.id}: INFO commandstats and MONITOR disagree: ${JSON.stringify(r.roundTrips.commandstatsCalls)} vs ${JSON.stringify(r.roundTrips.monitorCalls)}`);
  const rw = rows.filter((r) => r.library === 'ratewarden');
  const oneTrip = rw.every((r) => r.roundTrips.roundTripsPerDecision === 1 && Object.keys(r.roundTrips.roundTrips).join() === 'evalsha');
  out.push('', `Target: ratewarden makes one round trip (one EVALSHA) per decision: ${oneTrip ? 'met' : '**not met**'}.`);
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
        repetitions: REPS,
        roundTripBatch: { ...BATCH, decisions: BATCH.callers * BATCH.keysPerCaller * PER_KEY },
        statistic: 'decisions/s: median over repetitions of one fixed-count cell each; ratio: median of the within-repetition ratios ratewarden ÷ rate-limiter-flexible at the same concurrency',
      },
      rows: rows.map((r) => ({
        id: r.id,
        name: r.name,
        library: r.library,
        client: r.client,
        decisionsPerSecond: r.perSecond,
        ratioToRateLimiterFlexible: r.ratio,
        samples: samples[r.id],
        allowedShare: r.allowedShare,
        ...r.roundTrips,
      })),
      roundTripTargetMet: oneTrip,
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
