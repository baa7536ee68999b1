// Speed and memory of ratewarden against baselines and peers: `npm run bench`.
//
// Runs the built package (dist/) under tinybench, with --expose-gc. In one run, on the same
// workloads, it measures ns per decision of
//   - baselines written here (bench/baselines.mjs): the floor (a Map get + set and one clock read
//     per decision), the async floor (the floor as an awaited Promise.resolve) and the seed port
//     (a naive sliding-window log: an array per key, shift() to evict); each floor twice, reading
//     the clock as a bare `performance.now()` and as `globalThis.performance.now()`, the read
//     ratewarden's default clock must make (looked up at each call); ratewarden's rows are taken
//     against the latter (its "× floor" cell says so), with the ratio to the former in the targets;
//   - peers: rate-limiter-flexible's RateLimiterMemory (consume) and limiter's TokenBucket
//     (tryRemoveTokens, one bucket per key);
//   - ratewarden: allowRequestSync and allowRequest with each of its five strategies;
// on workloads A (one hot key, almost all rejected), B (10,000 keys round-robin, all allowed),
// C (one key whose full log evicts one entry and records one per call, under an injected clock),
// D (1,000 concurrent allowRequest calls on one key), and E (heap bytes per key).
//
// Every contender is checked to make the expected decisions before it is timed (on the very
// instance that is then timed), and the timed runs count their allowed decisions too. Each task
// runs a batch of decisions per tinybench iteration (A, C, D for a time; B for a fixed number of
// passes over its keys). A sub-round's figure is the median (p50) of the batch latencies divided
// by the batch size. The reported ns per decision is the median over all sub-rounds of all
// rounds, and each ratio the median of the ratios taken within one sub-round (the two contenders
// run side by side, so that a slower or faster spell of the machine mostly cancels out).
//
// Process layout: every round runs one child process per group (below), one after the other;
// each child verifies its contenders, then times them: its whole task list SUB_ROUNDS times over. ratewarden's strategies run in separate
// groups, each with its own floor, so that every strategy is measured as an application using
// it would run it: with the limiter's call sites specialised to that one strategy (five
// strategies through one RateLimiter class in one process make those call sites megamorphic).
// The memory cases run in a fresh child process each.
//
// R (last): ratewarden's Redis strategies against rate-limiter-flexible's RateLimiterRedis on a
// redis-server of its own, run as a child process (bench/redis.mjs, also `npm run bench:redis`;
// see its top comment). Skipped, with a note, when redis-server is not installed.
//
// Options: --rounds=N (default 3), --subrounds=N (default 3), --time=MS (tinybench time per task
// and round, split over the sub-rounds; default 300), --only=A,B,C,D,E,R (sections to run),
// --json=PATH (default bench/results.json, "-" for none; the Redis figures go into its "redis"
// property, which a run without R keeps).
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import os from 'node:os';
import { Bench } from 'tinybench';
import rateLimiterFlexible from 'rate-limiter-flexible';
import { TokenBucket as LimiterTokenBucket } from 'limiter';
import {
  FixedWindow,
  GCRA,
  RateLimiter,
  SlidingWindowCounter,
  SlidingWindowLog,
  TokenBucket,
} from '../dist/index.js';
import { makeAsyncFloor, makeAsyncGlobalFloor, makeFloor, makeGlobalFloor, makeSeedPort } from './baselines.mjs';

const { RateLimiterMemory, RateLimiterRes } = rateLimiterFlexible;
const execFileAsync = promisify(execFile);

if (typeof globalThis.gc !== 'function') {
  console.error('run with node --expose-gc (npm run bench does)');
  process.exit(2);
}

// ---------------------------------------------------------------------------------------------
// Options

const args = Object.fromEntries(
  process.argv.slice(2).map((arg) => {
    const [name, value = 'true'] = arg.replace(/^--/, '').split('=');
    return [name, value];
  }),
);
const ROUNDS = Number(args.rounds ?? 3);
/** Sub-rounds per round: each child process runs its task list this many times, interleaved. */
const SUB_ROUNDS = Number(args.subrounds ?? 3);
const TIME_MS = Number(args.time ?? 300);
const WARMUP_MS = Math.max(50, Math.round(TIME_MS / 4));
const ONLY = new Set((args.only ?? 'A,B,C,D,E,R').split(',').map((s) => s.trim().toUpperCase()));
const JSON_PATH = args.json ?? fileURLToPath(new URL('./results.json', import.meta.url));

// ---------------------------------------------------------------------------------------------
// Workload parameters

const THRESHOLD = 300;
const WINDOW_SECONDS = 60;
const WINDOW_MS = WINDOW_SECONDS * 1000;
/** A: calls on the hot key per tinybench iteration. */
const A_BATCH = 1000;
/** B: keys, visited round-robin; one iteration is one pass over all of them. */
const B_KEYS = 10_000;
/**
 * B: passes timed per sub-round, from a reset (200,000 decisions per contender and sub-round), the
 * same number for every contender, so that all are timed on the same sequence of per-key states.
 * Every contender's state is reset (untimed) before each phase and at the latest every B_EPOCH
 * passes, so that no key reaches the threshold: with a real clock, 10,000 keys at 300 per 60 s
 * allow only 50,000 decisions a second, far fewer than a benchmark makes.
 */
const B_PASSES = 20;
const B_EPOCH = 250;
/** C: thresholds of the single key's log, and calls per iteration. */
const C_THRESHOLDS = [1_000, 10_000, 100_000];
const C_BATCH = 1000;
/** D: concurrent allowRequest calls on one key per iteration. */
const D_BATCH = 1000;
/** E: keys held at once. */
const E_KEYS = 100_000;

const hotKeys = Array.from({ length: A_BATCH }, () => 'hot-key-203.0.113.7');
const manyKeys = Array.from({ length: B_KEYS }, (_, i) => `user-${i.toString(36)}-${(i * 2654435761) % 1e9}`);

// ---------------------------------------------------------------------------------------------
// Contenders

const STRATEGIES = [
  ['sliding-window-log', () => new SlidingWindowLog()],
  ['sliding-window-counter', () => new SlidingWindowCounter()],
  ['fixed-window', () => new FixedWindow()],
  ['token-bucket', () => new TokenBucket()],
  ['gcra', () => new GCRA()],
];

function newRateWarden(makeStrategy, threshold = THRESHOLD, clock) {
  return new RateLimiter({ threshold, windowSeconds: WINDOW_SECONDS, strategy: makeStrategy(), clock });
}

/**
 * limiter's TokenBucket holds one key; a per-key limiter keeps them in a Map. A new bucket starts
 * empty (`content = 0`, filling at 300 per minute); it is filled at creation, as ratewarden's token
 * bucket starts full, so that it allows a burst of 300 like every other contender.
 */
function newLimiterBuckets() {
  return new Map();
}
function newLimiterBucket() {
  const bucket = new LimiterTokenBucket({ bucketSize: THRESHOLD, tokensPerInterval: THRESHOLD, interval: WINDOW_MS });
  bucket.content = THRESHOLD;
  return bucket;
}

function newFlexible() {
  return new RateLimiterMemory({ points: THRESHOLD, duration: WINDOW_SECONDS });
}
/** Resets of each kind of contender: every key in `keys` is forgotten (the baselines forget all). */
const resetBaseline = (decide) => decide.reset();
/** RateLimiterMemory's delete() also clears the expiry timer it keeps per key. */
async function resetFlexible(limiter, keys) {
  for (const key of new Set(keys)) await limiter.delete(key);
}
const resetRateWarden = (limiter, keys) => {
  for (const key of new Set(keys)) limiter.reset(key);
};
const resetLimiterBuckets = (buckets) => buckets.clear();
function isFlexibleDenial(error) {
  return error instanceof RateLimiterRes;
}

// The loops below are written out one per kind of contender: V8 shares type feedback between
// closures created from the same function literal, so one generic loop would make every call
// site polymorphic and slow all contenders down alike. Each adds to `tally` what it decided.

const syncLoops = {
  floor: (decide, keys, tally) => () => {
    let allowed = 0;
    for (let i = 0; i < keys.length; i++) if (decide(keys[i])) allowed++;
    tally.allowed += allowed;
    tally.total += keys.length;
  },
  floorGlobal: (decide, keys, tally) => () => {
    let allowed = 0;
    for (let i = 0; i < keys.length; i++) if (decide(keys[i])) allowed++;
    tally.allowed += allowed;
    tally.total += keys.length;
  },
  seed: (decide, keys, tally) => () => {
    let allowed = 0;
    for (let i = 0; i < keys.length; i++) if (decide(keys[i])) allowed++;
    tally.allowed += allowed;
    tally.total += keys.length;
  },
  ratewarden: (limiter, keys, tally) => () => {
    let allowed = 0;
    for (let i = 0; i < keys.length; i++) if (limiter.allowRequestSync(keys[i]).allowed) allowed++;
    tally.allowed += allowed;
    tally.total += keys.length;
  },
  limiter: (buckets, keys, tally) => () => {
    let allowed = 0;
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      let bucket = buckets.get(key);
      if (bucket === undefined) {
        bucket = newLimiterBucket();
        buckets.set(key, bucket);
      }
      if (bucket.tryRemoveTokens(1)) allowed++;
    }
    tally.allowed += allowed;
    tally.total += keys.length;
  },
};

const asyncLoops = {
  asyncFloor: (decide, keys, tally) => async () => {
    let allowed = 0;
    for (let i = 0; i < keys.length; i++) if (await decide(keys[i])) allowed++;
    tally.allowed += allowed;
    tally.total += keys.length;
  },
  asyncFloorGlobal: (decide, keys, tally) => async () => {
    let allowed = 0;
    for (let i = 0; i < keys.length; i++) if (await decide(keys[i])) allowed++;
    tally.allowed += allowed;
    tally.total += keys.length;
  },
  ratewarden: (limiter, keys, tally) => async () => {
    let allowed = 0;
    for (let i = 0; i < keys.length; i++) if ((await limiter.allowRequest(keys[i])).allowed) allowed++;
    tally.allowed += allowed;
    tally.total += keys.length;
  },
  flexible: (limiter, keys, tally) => async () => {
    let allowed = 0;
    for (let i = 0; i < keys.length; i++) {
      try {
        await limiter.consume(keys[i]);
        allowed++;
      } catch (error) {
        if (!isFlexibleDenial(error)) throw error;
      }
    }
    tally.allowed += allowed;
    tally.total += keys.length;
  },
};

const ALLOWED = () => true;
const DENIED = (error) => {
  if (!isFlexibleDenial(error)) throw error;
  return false;
};

const concurrentLoops = {
  asyncFloor: (decide, key, tally) => async () => {
    const pending = new Array(D_BATCH);
    for (let i = 0; i < D_BATCH; i++) pending[i] = decide(key);
    const results = await Promise.all(pending);
    let allowed = 0;
    for (let i = 0; i < D_BATCH; i++) if (results[i]) allowed++;
    tally.allowed += allowed;
    tally.total += D_BATCH;
  },
  ratewarden: (limiter, key, tally) => async () => {
    const pending = new Array(D_BATCH);
    for (let i = 0; i < D_BATCH; i++) pending[i] = limiter.allowRequest(key);
    const results = await Promise.all(pending);
    let allowed = 0;
    for (let i = 0; i < D_BATCH; i++) if (results[i].allowed) allowed++;
    tally.allowed += allowed;
    tally.total += D_BATCH;
  },
  flexible: (limiter, key, tally) => async () => {
    const pending = new Array(D_BATCH);
    for (let i = 0; i < D_BATCH; i++) pending[i] = limiter.consume(key).then(ALLOWED, DENIED);
    const results = await Promise.all(pending);
    let allowed = 0;
    for (let i = 0; i < D_BATCH; i++) if (results[i]) allowed++;
    tally.allowed += allowed;
    tally.total += D_BATCH;
  },
};

/** An injected clock for C: advances by `windowMs / threshold` per reading (computed, not summed). */
function makeStepClock(windowMs, threshold) {
  let ticks = 0;
  return () => (++ticks * windowMs) / threshold;
}

const stepLoops = {
  floor: (decide, keys, tally) => () => {
    let allowed = 0;
    for (let i = 0; i < keys.length; i++) if (decide(keys[i])) allowed++;
    tally.allowed += allowed;
    tally.total += keys.length;
  },
  seed: (decide, keys, tally) => () => {
    let allowed = 0;
    for (let i = 0; i < keys.length; i++) if (decide(keys[i])) allowed++;
    tally.allowed += allowed;
    tally.total += keys.length;
  },
  ratewarden: (limiter, keys, tally) => () => {
    let allowed = 0;
    for (let i = 0; i < keys.length; i++) if (limiter.allowRequestSync(keys[i]).allowed) allowed++;
    tally.allowed += allowed;
    tally.total += keys.length;
  },
};

/** The groups: each runs in a child process of its own (see the top of this file). */
const MAIN = 'main';
const GROUPS = [MAIN, ...STRATEGIES.slice(1).map(([strategy]) => strategy)];

/**
 * The contenders of A and B in `group`: in the main group the baselines, the peers and
 * ratewarden's default strategy, the sliding-window log; in each other group the floors and
 * that strategy. `create()` makes one, `reset(instance, keys)` forgets keys, and
 * `loop(instance, keys, tally)` makes its batch; `ref` names the row its ratio is taken against
 * (the floor, or the async floor for promise APIs; for ratewarden, the floor reading
 * `globalThis.performance.now()` as its default clock must), `alt` a second floor whose ratio the
 * targets report too.
 */
function decisionContenders(group) {
  const main = group === MAIN;
  const strategies = STRATEGIES.filter(([strategy]) => (main ? strategy === 'sliding-window-log' : strategy === group));
  const list = [
    { name: 'floor (Map get+set + performance.now)', kind: 'sync', role: 'floor', ref: 'floor', create: () => makeFloor(THRESHOLD), reset: resetBaseline, loop: syncLoops.floor },
    { name: 'floor (Map get+set + globalThis.performance.now)', kind: 'sync', role: 'floorGlobal', ref: 'floor', create: () => makeGlobalFloor(THRESHOLD), reset: resetBaseline, loop: syncLoops.floorGlobal },
  ];
  if (main) list.push({ name: 'seed port (array + shift)', kind: 'sync', role: 'baseline', ref: 'floor', create: () => makeSeedPort(THRESHOLD, WINDOW_MS), reset: resetBaseline, loop: syncLoops.seed });
  for (const [strategy, make] of strategies) {
    list.push({ name: `ratewarden allowRequestSync · ${strategy}`, kind: 'sync', role: 'ratewarden', strategy, api: 'sync', ref: 'floorGlobal', alt: 'floor', create: () => newRateWarden(make), reset: resetRateWarden, loop: syncLoops.ratewarden });
  }
  if (main) list.push({ name: 'limiter TokenBucket.tryRemoveTokens', kind: 'sync', role: 'peer', ref: 'floor', create: newLimiterBuckets, reset: resetLimiterBuckets, loop: syncLoops.limiter });
  list.push({ name: 'async floor (awaited Promise.resolve)', kind: 'async', role: 'asyncFloor', ref: 'asyncFloor', create: () => makeAsyncFloor(THRESHOLD), reset: resetBaseline, loop: asyncLoops.asyncFloor });
  list.push({ name: 'async floor (awaited Promise.resolve, globalThis.performance.now)', kind: 'async', role: 'asyncFloorGlobal', ref: 'asyncFloor', create: () => makeAsyncGlobalFloor(THRESHOLD), reset: resetBaseline, loop: asyncLoops.asyncFloorGlobal });
  for (const [strategy, make] of strategies) {
    list.push({ name: `ratewarden allowRequest · ${strategy}`, kind: 'async', role: 'ratewarden', strategy, api: 'async', ref: 'asyncFloorGlobal', alt: 'asyncFloor', create: () => newRateWarden(make), reset: resetRateWarden, loop: asyncLoops.ratewarden });
  }
  if (main) list.push({ name: 'rate-limiter-flexible RateLimiterMemory.consume', kind: 'async', role: 'flexible', ref: 'asyncFloor', create: newFlexible, reset: resetFlexible, loop: asyncLoops.flexible });
  return list;
}

function concurrentContenders() {
  return [
    { name: 'async floor (Promise.all)', kind: 'async', role: 'asyncFloor', ref: 'asyncFloor', create: () => makeAsyncFloor(THRESHOLD), reset: resetBaseline, loop: concurrentLoops.asyncFloor },
    { name: 'ratewarden allowRequest · sliding-window-log', kind: 'async', role: 'ratewarden', strategy: 'sliding-window-log', api: 'async', ref: 'asyncFloor', create: () => newRateWarden(() => new SlidingWindowLog()), reset: resetRateWarden, loop: concurrentLoops.ratewarden },
    { name: 'rate-limiter-flexible consume (rejections caught)', kind: 'async', role: 'flexible', ref: 'asyncFloor', create: newFlexible, reset: resetFlexible, loop: concurrentLoops.flexible },
  ];
}

function stepContenders(threshold) {
  return [
    { name: 'floor (injected clock)', role: 'floor', create: (clock) => makeFloor(threshold, clock), prefill: (d, key) => d(key), loop: stepLoops.floor },
    { name: 'seed port (array + shift)', role: 'seed', create: (clock) => makeSeedPort(threshold, WINDOW_MS, clock), prefill: (d, key) => d(key), loop: stepLoops.seed },
    { name: 'ratewarden allowRequestSync · sliding-window-log', role: 'ratewarden', create: (clock) => newRateWarden(() => new SlidingWindowLog(), threshold, clock), prefill: (l, key) => l.allowRequestSync(key).allowed, loop: stepLoops.ratewarden },
  ];
}

// ---------------------------------------------------------------------------------------------
// Checks

function check(condition, message) {
  if (!condition) {
    console.error(`bench: check failed: ${message}`);
    process.exit(1);
  }
}

/** One decision of a contender of A/B/D, as a promise of whether it was allowed. */
async function decideOnce(contender, instance, key) {
  if (contender.loop === syncLoops.floor || contender.loop === syncLoops.floorGlobal || contender.loop === syncLoops.seed) return instance(key);
  if (contender.loop === syncLoops.limiter) {
    let bucket = instance.get(key);
    if (bucket === undefined) instance.set(key, (bucket = newLimiterBucket()));
    return bucket.tryRemoveTokens(1);
  }
  if (contender.role === 'asyncFloor' || contender.role === 'asyncFloorGlobal') return instance(key);
  if (contender.role === 'flexible') return instance.consume(key).then(ALLOWED, DENIED);
  const result = contender.kind === 'sync' ? instance.allowRequestSync(key) : await instance.allowRequest(key);
  check(result.limit === THRESHOLD, `${contender.name}: limit ${result.limit}`);
  if (!result.allowed) check(result.retryAfter > 0 && result.remaining === 0, `${contender.name}: denial with retryAfter ${result.retryAfter}, remaining ${result.remaining}`);
  return result.allowed;
}

/**
 * A, on the instance the task times: from a reset, exactly the first 300 calls on the hot key
 * are allowed, the 301st is denied and (almost) all after it; so is the task's own batch.
 */
async function verifyA(task) {
  const { contender, instance } = task;
  const key = hotKeys[0];
  await contender.reset(instance, [key]);
  for (let i = 0; i < THRESHOLD; i++) check(await decideOnce(contender, instance, key), `A: ${contender.name} denied call ${i + 1}`);
  check(!(await decideOnce(contender, instance, key)), `A: ${contender.name} allowed call ${THRESHOLD + 1}`);
  let allowed = 0;
  for (let i = 0; i < 2000; i++) if (await decideOnce(contender, instance, key)) allowed++;
  check(allowed <= 2, `A: ${contender.name} allowed ${allowed} of 2,000 calls after the first 301`);
  const before = { ...task.tally };
  await task.fn();
  const batchAllowed = task.tally.allowed - before.allowed;
  check(task.tally.total - before.total === A_BATCH && batchAllowed <= 2, `A: ${contender.name} batch allowed ${batchAllowed} of ${A_BATCH}`);
  await contender.reset(instance, [key]);
}

/** B, on the instance the task times: from a reset, three passes over the 10,000 keys, all allowed. */
async function verifyB(task) {
  await task.hooks.beforeAll();
  const passes = 3;
  for (let i = 0; i < passes; i++) {
    await task.hooks.beforeEach();
    await task.fn();
  }
  const { allowed, total } = task.tally;
  check(total === passes * B_KEYS, `B: ${task.contender.name} made ${total} decisions`);
  check(allowed / total >= 0.999, `B: ${task.contender.name} allowed only ${allowed} of ${total} (${((100 * allowed) / total).toFixed(3)} %): the workload is wrong`);
  await task.hooks.beforeAll();
}

/** C, on the instance the task times: its log is full, and each call evicts one entry and records one. */
function verifyC(task, threshold) {
  const before = { ...task.tally };
  for (let i = 0; i < 3; i++) task.fn();
  const allowed = task.tally.allowed - before.allowed;
  const total = task.tally.total - before.total;
  const { contender, instance } = task;
  check(total === 3 * C_BATCH, `C: ${contender.name} @ ${threshold} made ${total} decisions`);
  // The floor is a bare counter, not a log: past the pre-fill it denies; only its cost counts.
  if (contender.role !== 'floor') check(allowed / total >= 0.99, `C: ${contender.name} @ ${threshold} allowed ${allowed} of ${total}`);
  // Full, give or take the odd entry whose eviction a floating-point rounding put off by one call.
  if (contender.role === 'seed') {
    const length = instance.logs.get(task.key).length;
    check(length >= threshold - 2, `C: seed port log not full (${length} of ${threshold})`);
  }
  if (contender.role === 'ratewarden') {
    const { remaining } = instance.peekSync(task.key);
    check(remaining <= 2, `C: ratewarden log not full (remaining ${remaining})`);
  }
}

/** D, on the instance the task times: from a reset, 1,000 concurrent calls allow exactly 300; the next 1,000 none. */
async function verifyD(task) {
  await task.hooks.beforeAll();
  await task.fn();
  check(task.tally.allowed === THRESHOLD && task.tally.total === D_BATCH, `D: ${task.contender.name} allowed ${task.tally.allowed} of ${task.tally.total} (expected ${THRESHOLD})`);
  await task.fn();
  check(task.tally.allowed === THRESHOLD && task.tally.total === 2 * D_BATCH, `D: ${task.contender.name} allowed ${task.tally.allowed - THRESHOLD} of the second ${D_BATCH}`);
  await task.hooks.beforeAll();
}

// ---------------------------------------------------------------------------------------------
// Tasks
//
// Each task makes its contender once and keeps it for the whole process (verification, warmup
// and run), as an application keeps its limiter; between phases it resets the keys it uses.
// (Making a new limiter per phase instead let V8 deoptimise code specialised to the old one
// when gc() freed it, "weak objects", in the middle of the next measurement: up to 4× slower.)

/**
 * A task of A, B or D: the state of `resetKeys` is reset before each phase (warmup, run) and,
 * in B, every `epoch` passes, so that no key reaches the threshold (untimed, in hooks).
 */
function decisionTask(contender, keysOrKey, resetKeys, epoch) {
  const tally = { allowed: 0, total: 0 };
  const instance = contender.create();
  const run = contender.loop(instance, keysOrKey, tally);
  let passes = 0;
  const reset = async () => {
    await contender.reset(instance, resetKeys);
    passes = 0;
  };
  const hooks = {
    async: contender.kind === 'async',
    beforeAll: async () => {
      await reset();
      tally.allowed = 0;
      tally.total = 0;
    },
    beforeEach: epoch === undefined ? undefined : async () => {
      if (passes++ >= epoch) await reset();
    },
  };
  const fn = contender.kind === 'async' ? async () => { await run(); } : () => { run(); };
  return { fn, hooks, tally, contender, instance };
}

/** A task of C: the contender under its step clock, its log filled once; it stays full. */
function stepTask(contender, threshold) {
  const tally = { allowed: 0, total: 0 };
  const key = 'steady-key';
  const keys = Array.from({ length: C_BATCH }, () => key);
  const instance = contender.create(makeStepClock(WINDOW_MS, threshold));
  for (let i = 0; i < threshold; i++) check(contender.prefill(instance, key), `C: ${contender.name} denied pre-fill call ${i + 1} of ${threshold}`);
  const run = contender.loop(instance, keys, tally);
  const hooks = {
    async: false,
    beforeAll: () => {
      tally.allowed = 0;
      tally.total = 0;
    },
  };
  return { fn: () => { run(); }, hooks, tally, contender, instance, key };
}

// ---------------------------------------------------------------------------------------------
// Running (in a child process: one group, one round)

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/**
 * A tinybench Bench for one sub-round: TIME_MS / SUB_ROUNDS per task (at least `iterations`
 * batches), warmed up in the first sub-round only. With `fixed`, every task runs exactly
 * `iterations` batches (and as many again in warmup), whatever its speed, so that all
 * contenders go through the same states.
 */
function newBench(iterations, fixed, warmup) {
  return new Bench({
    time: fixed ? 0 : TIME_MS / SUB_ROUNDS,
    warmup,
    warmupTime: fixed ? 0 : WARMUP_MS,
    iterations,
    warmupIterations: fixed ? iterations : Math.min(iterations, 8),
    throws: true,
    // Collect the garbage of the previous task before each phase, so it is not paid by the next.
    setup: () => globalThis.gc(),
  });
}

/** Runs `entries` ({ name, task, batch, ...row }) in one Bench; returns what each measured. */
async function runBench(entries, iterations, fixed, warmup) {
  const bench = newBench(iterations, fixed, warmup);
  for (const entry of entries) bench.add(entry.name, entry.task.fn, entry.task.hooks);
  await bench.run();
  const out = new Map();
  for (const entry of entries) {
    const result = bench.getTask(entry.name).result;
    check(result.state === 'completed', `${entry.name}: ${result.state} ${result.error?.stack ?? ''}`);
    out.set(entry.name, {
      ns: (result.latency.p50 * 1e6) / entry.batch,
      samples: result.latency.samplesCount,
      latencyMs: { min: result.latency.min, p50: result.latency.p50, p75: result.latency.p75, p99: result.latency.p99, max: result.latency.max },
      allowed: entry.task.tally.allowed,
      total: entry.task.tally.total,
    });
  }
  return out;
}

const rowOf = (workload, group, sub, e, m) => ({
  workload, group, sub, name: e.name, kind: e.kind, role: e.role, ref: e.ref, alt: e.alt, strategy: e.strategy, api: e.api,
  ns: m.ns, samples: m.samples, allowed: m.allowed, total: m.total, latencyMs: m.latencyMs,
});

/** The tasks of one group, made once: verified and timed on the same instances. */
function makeTasks(group) {
  const tasks = { A: [], B: [], C: [], D: [] };
  const entry = (contender, task, batch, name = contender.name) => ({ ...contender, name, task, batch });
  if (ONLY.has('A')) tasks.A = decisionContenders(group).map((c) => entry(c, decisionTask(c, hotKeys, [hotKeys[0]]), A_BATCH));
  if (ONLY.has('B')) tasks.B = decisionContenders(group).map((c) => entry(c, decisionTask(c, manyKeys, manyKeys, B_EPOCH), B_KEYS));
  if (group === MAIN && ONLY.has('C')) {
    tasks.C = C_THRESHOLDS.flatMap((threshold) => stepContenders(threshold).map((c) => ({ ...entry(c, stepTask(c, threshold), C_BATCH, `${c.name} @ ${threshold}`), threshold })));
  }
  if (group === MAIN && ONLY.has('D')) tasks.D = concurrentContenders().map((c) => entry(c, decisionTask(c, hotKeys[0], [hotKeys[0]]), D_BATCH));
  return tasks;
}

/** Before any timing: every task of the group decides as expected. */
async function verifyTasks(tasks) {
  for (const e of tasks.A) await verifyA(e.task);
  for (const e of tasks.B) await verifyB(e.task);
  for (const e of tasks.C) verifyC(e.task, e.threshold);
  for (const e of tasks.D) await verifyD(e.task);
}

/** Times the tasks of one workload; checks what they decided while timed. */
async function timeWorkload(workload, group, entries) {
  if (entries.length === 0) return [];
  // B runs a fixed number of passes from a reset, so that every contender is timed on the same
  // sequence of per-key states (its log grows pass by pass); the others run for a time.
  const iterations = { A: 32, B: B_PASSES, C: 5, D: 32 }[workload];
  const rows = [];
  const thresholds = workload === 'C' ? C_THRESHOLDS : [undefined];
  for (let sub = 0; sub < SUB_ROUNDS; sub++) for (const threshold of thresholds) {
    const batch = entries.filter((e) => e.threshold === threshold);
    const out = await runBench(batch, iterations, workload === 'B', sub === 0);
    for (const e of batch) {
      const m = out.get(e.name);
      if (workload === 'A' || workload === 'D') {
        check(m.allowed <= THRESHOLD + 5 && m.allowed / m.total < 0.01, `${workload}: ${e.name} allowed ${m.allowed} of ${m.total} while timed`);
      } else if (workload === 'B') {
        check(m.allowed / m.total >= 0.999, `B: ${e.name} allowed only ${m.allowed} of ${m.total} while timed: the workload is wrong`);
      } else if (e.role !== 'floor') {
        check(m.allowed / m.total >= 0.99, `C: ${e.name} allowed only ${m.allowed} of ${m.total} while timed (expected one eviction and one record per call)`);
      }
      const row = rowOf(workload, group, sub, e, m);
      if (workload === 'C') {
        row.name = e.name.replace(/ @ \d+$/, '');
        row.threshold = threshold;
      }
      rows.push(row);
    }
  }
  return rows;
}

/** In a child process: verifies, then times one round of `group`; prints the rows as JSON. */
async function groupChild(group) {
  const tasks = makeTasks(group);
  await verifyTasks(tasks);
  const rows = [];
  for (const workload of ['A', 'B', 'C', 'D']) rows.push(...(await timeWorkload(workload, group, tasks[workload])));
  console.log(JSON.stringify(rows));
}

// ---------------------------------------------------------------------------------------------
// E: memory

function heapBytes() {
  globalThis.gc();
  globalThis.gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

const memoryKeys = Array.from({ length: E_KEYS }, (_, i) => `198.18.${(i >> 8) & 255}.${i & 255}-${i}`);

/** What is being measured, held here so that no engine can free it before the measurement. */
let measured;

/** Bytes per key once `fill(instance, key)` has run for every key. */
async function bytesPerKey(create, fill) {
  const before = heapBytes();
  measured = create();
  for (const key of memoryKeys) await fill(measured, key);
  const after = heapBytes();
  measured = undefined;
  return Math.round((after - before) / E_KEYS);
}

/**
 * The memory cases, each measured in a child process of its own (a fresh heap: nothing measured
 * before can linger in it).
 */
const ratewardenFill = (perKey) => (limiter, key) => {
  for (let i = 0; i < perKey; i++) check(limiter.allowRequestSync(key).allowed, 'E: unexpected denial');
};
/** ratewarden under an injected clock advancing 1 µs per reading: every request fits the window. */
const clocked = (make) => () => {
  let now = 0;
  return newRateWarden(make, THRESHOLD, () => (now += 0.001));
};
const MEMORY_CASES = [
  { name: 'ratewarden · sliding-window-log', requestsPerKey: 300, role: 'ratewarden', strategy: 'sliding-window-log',
    create: clocked(() => new SlidingWindowLog()), fill: ratewardenFill(300) },
  { name: 'seed port (array + shift)', requestsPerKey: 300, role: 'baseline',
    create: () => { let now = 0; return makeSeedPort(THRESHOLD, WINDOW_MS, () => (now += 0.001)); },
    fill: (seed, key) => { for (let i = 0; i < 300; i++) check(seed(key), 'E: seed port denial'); } },
  { name: 'ratewarden · sliding-window-log', requestsPerKey: 100, role: 'ratewarden', strategy: 'sliding-window-log',
    create: clocked(() => new SlidingWindowLog()), fill: ratewardenFill(100) },
  ...STRATEGIES.slice(1).map(([strategy, make]) => ({ name: `ratewarden · ${strategy}`, requestsPerKey: 100, role: 'ratewarden', strategy,
    create: clocked(make), fill: ratewardenFill(100) })),
  { name: 'limiter TokenBucket (one per key, in a Map)', requestsPerKey: 100, role: 'peer', create: newLimiterBuckets,
    fill: (buckets, key) => {
      const bucket = newLimiterBucket();
      buckets.set(key, bucket);
      for (let i = 0; i < 100; i++) check(bucket.tryRemoveTokens(1), 'E: limiter denial');
    } },
  { name: 'rate-limiter-flexible RateLimiterMemory', requestsPerKey: 100, role: 'flexible', create: newFlexible,
    fill: (limiter, key) => {
      const pending = [];
      for (let i = 0; i < 100; i++) pending.push(limiter.consume(key));
      return Promise.all(pending);
    } },
];

/** In a child process: measures one case and prints its bytes per key. */
async function memoryChild(index) {
  const c = MEMORY_CASES[index];
  // The process ends here: RateLimiterMemory's expiry timers are unref()'d.
  console.log(JSON.stringify({ bytes: await bytesPerKey(c.create, c.fill) }));
}

/** Runs the memory cases, two child processes at a time (heap sizes do not depend on timing). */
async function measureMemory() {
  const self = fileURLToPath(import.meta.url);
  const rows = new Array(MEMORY_CASES.length);
  // The slowest case (rate-limiter-flexible: 10 million promises) first.
  const order = MEMORY_CASES.map((_, index) => index).sort((a, b) => (MEMORY_CASES[b].role === 'flexible') - (MEMORY_CASES[a].role === 'flexible'));
  let next = 0;
  const worker = async () => {
    while (next < order.length) {
      const index = order[next++];
      const { stdout } = await execFileAsync(process.execPath, ['--expose-gc', self, `--memory-case=${index}`], { encoding: 'utf8' });
      const { name, requestsPerKey, role, strategy } = MEMORY_CASES[index];
      rows[index] = { name, requestsPerKey, role, strategy, bytes: JSON.parse(stdout.trim().split('\n').pop()).bytes };
    }
  };
  await Promise.all([worker(), worker()]);
  return rows;
}

// ---------------------------------------------------------------------------------------------
// Report (in the parent process)

const fmtNs = (ns) => (ns >= 1000 ? Math.round(ns).toLocaleString('en-US') : ns >= 100 ? ns.toFixed(0) : ns.toFixed(1));
const fmtX = (x) => (x >= 100 ? `${x.toFixed(0)}×` : x >= 10 ? `${x.toFixed(1)}×` : `${x.toFixed(2)}×`);
/** Half the range over the sub-rounds, relative to the median. */
const spreadOf = (values) => (values.length < 2 ? 0 : (Math.max(...values) - Math.min(...values)) / (2 * median(values)));
const fmtSpread = (values) => (values.length < 2 ? '—' : `±${(100 * spreadOf(values)).toFixed(0)} %`);
const pct = (a, t) => `${((100 * a) / t).toFixed(a === t || a === 0 ? 0 : 2)} %`;
const round2 = (x) => Math.round(x * 100) / 100;
const round3 = (x) => Math.round(x * 1000) / 1000;

/**
 * Aggregates the measurements of one workload over the rounds. Each row's ratio to its floor is
 * taken per round against the floor of the same group and round; its speedup over
 * rate-limiter-flexible (or over the seed port, in C) against that contender in the same round.
 */
function aggregate(measurements, workload) {
  const rows = measurements.filter((m) => m.workload === workload);
  const keyOfRow = (m) => `${m.group}|${m.threshold ?? ''}|${m.name}`;
  const byKey = new Map();
  for (const m of rows) {
    let entry = byKey.get(keyOfRow(m));
    if (entry === undefined) byKey.set(keyOfRow(m), (entry = { ...m, perRound: [] }));
    entry.perRound.push(m);
  }
  // Pairs are taken in the same round and sub-round: run side by side, in one process for the
  // floors (the contender that is compared with rate-limiter-flexible may run in another group).
  const find = (m0, pred) => rows.find((m) => m.round === m0.round && m.sub === m0.sub && pred(m));
  const out = [];
  for (const entry of byKey.values()) {
    const nsRounds = entry.perRound.map((m) => m.ns);
    const xFloorRounds = [];
    const xAltRounds = [];
    const speedupRounds = [];
    for (const m of entry.perRound) {
      const refRole = workload === 'C' ? 'floor' : m.ref;
      const ref = find(m, (r) => r.group === m.group && r.role === refRole && r.threshold === m.threshold);
      if (ref) xFloorRounds.push(m.ns / ref.ns);
      const alt = m.alt === undefined ? undefined : find(m, (r) => r.group === m.group && r.role === m.alt);
      if (alt) xAltRounds.push(m.ns / alt.ns);
      const peerRole = workload === 'C' ? 'seed' : 'flexible';
      const peer = find(m, (r) => r.group === MAIN && r.role === peerRole && r.threshold === m.threshold);
      if (peer) speedupRounds.push(peer.ns / m.ns);
    }
    out.push({
      workload, group: entry.group, name: entry.name, role: entry.role, kind: entry.kind, ref: entry.ref, alt: entry.alt, strategy: entry.strategy, api: entry.api, threshold: entry.threshold,
      ns: median(nsRounds), nsRounds,
      xFloor: xFloorRounds.length ? median(xFloorRounds) : undefined, xFloorRounds,
      xAlt: xAltRounds.length ? median(xAltRounds) : undefined, xAltRounds,
      speedup: speedupRounds.length ? median(speedupRounds) : undefined, speedupRounds,
      allowed: entry.perRound.reduce((a, m) => a + m.allowed, 0), total: entry.perRound.reduce((a, m) => a + m.total, 0),
    });
  }
  return out;
}

/** The rows shown: the main group's, with each other group's ratewarden rows after the main group's of the same API. */
function ordered(rows) {
  const main = rows.filter((r) => r.group === MAIN);
  const others = rows.filter((r) => r.group !== MAIN && r.role === 'ratewarden');
  const out = [];
  for (const r of main) {
    out.push(r);
    if (r.role === 'ratewarden') out.push(...others.filter((o) => o.api === r.api));
  }
  return out;
}

function toJsonRow(r) {
  return {
    name: r.name, group: r.group, role: r.role, api: r.api ?? null, strategy: r.strategy ?? null, threshold: r.threshold ?? null,
    nsPerDecision: round2(r.ns), nsPerDecisionPerSubRound: r.nsRounds.map(round2),
    ratioToFloor: r.xFloor === undefined ? null : round3(r.xFloor), ratioToFloorPerSubRound: r.xFloorRounds.map(round3),
    floor: r.workload === 'C' ? 'floor' : FLOOR_NAMES[r.ref],
    ...(r.alt === undefined ? {} : { ratioToOtherFloor: round3(r.xAlt), otherFloor: FLOOR_NAMES[r.alt] }),
    [r.workload === 'C' ? 'speedupVsSeedPort' : 'speedupVsRateLimiterFlexible']: r.speedup === undefined ? null : round3(r.speedup),
    speedupPerSubRound: r.speedupRounds.map(round3),
    allowed: r.allowed, decisions: r.total,
  };
}

/** What each floor role is called in the tables and the JSON. */
const FLOOR_NAMES = {
  floor: 'floor',
  floorGlobal: 'globalThis floor',
  asyncFloor: 'async floor',
  asyncFloorGlobal: 'async globalThis floor',
};

function decisionTable(title, rows) {
  const lines = [`### ${title}`, '', '| contender | ns/decision | × floor | × faster than rate-limiter-flexible | spread of ns over sub-rounds | allowed while timed |', '| --- | ---: | ---: | ---: | ---: | ---: |'];
  for (const r of rows) {
    const floorCell = r.xFloor === undefined ? '—' : `${fmtX(r.xFloor)}${r.ref === 'floor' ? '' : ` (${FLOOR_NAMES[r.ref]})`}`;
    const speedCell = r.role === 'flexible' || r.speedup === undefined ? '—' : fmtX(r.speedup);
    lines.push(`| ${r.name} | ${fmtNs(r.ns)} | ${floorCell} | ${speedCell} | ${fmtSpread(r.nsRounds)} | ${pct(r.allowed, r.total)} |`);
  }
  return lines.join('\n');
}

function stepTable(rows) {
  const lines = ['### C. Steady eviction: one key, full log, one eviction + one record per call (injected clock, window ÷ threshold per call)', '',
    '| threshold | contender | ns/decision | × floor | × faster than seed port | spread of ns over sub-rounds | allowed while timed |', '| ---: | --- | ---: | ---: | ---: | ---: | ---: |'];
  for (const threshold of C_THRESHOLDS) {
    for (const r of rows.filter((x) => x.threshold === threshold)) {
      lines.push(`| ${threshold.toLocaleString('en-US')} | ${r.name} | ${fmtNs(r.ns)} | ${fmtX(r.xFloor)} | ${r.role === 'seed' ? '—' : fmtX(r.speedup)} | ${fmtSpread(r.nsRounds)} | ${r.role === 'floor' ? 'n/a (a counter)' : pct(r.allowed, r.total)} |`);
    }
  }
  return lines.join('\n');
}

function memoryTable(rows) {
  const lines = [`### E. Heap bytes per key (${E_KEYS.toLocaleString('en-US')} keys; heapUsed + arrayBuffers after gc, each case in a fresh process)`, '', '| contender | requests per key | bytes/key |', '| --- | ---: | ---: |'];
  for (const r of rows) lines.push(`| ${r.name} | ${r.requestsPerKey} | ${r.bytes.toLocaleString('en-US')} |`);
  return lines.join('\n');
}

function targets(agg, memoryRows) {
  const list = [];
  const add = (what, wanted, value, met, shown) => list.push({ what, wanted, value: round3(value), met, shown });
  const rw = (w, strategy, api) => agg[w]?.find((r) => r.role === 'ratewarden' && r.strategy === strategy && r.api === api);
  for (const w of ['A', 'B']) {
    // ratewarden's ratios are against the floors reading `globalThis.performance.now()`, as its
    // default clock must; the ratio to the floor reading a bare `performance.now()` follows, for
    // reference (no target).
    const s = rw(w, 'sliding-window-log', 'sync');
    if (s) {
      add(`${w}: allowRequestSync (log) vs floor (globalThis.performance.now)`, '≤ 1.3×', s.xFloor, s.xFloor <= 1.3, fmtX(s.xFloor));
      add(`${w}: allowRequestSync (log) vs floor (performance.now), for reference`, '—', s.xAlt, null, fmtX(s.xAlt));
      add(`${w}: allowRequestSync (log) vs rate-limiter-flexible`, w === 'A' ? '≥ 12× faster' : '≥ 5× faster', s.speedup, s.speedup >= (w === 'A' ? 12 : 5), fmtX(s.speedup));
    }
    const a = rw(w, 'sliding-window-log', 'async');
    if (a) {
      add(`${w}: allowRequest (log) vs async floor (globalThis.performance.now)`, '≤ 1.5×', a.xFloor, a.xFloor <= 1.5, fmtX(a.xFloor));
      add(`${w}: allowRequest (log) vs async floor (performance.now), for reference`, '—', a.xAlt, null, fmtX(a.xAlt));
      add(`${w}: allowRequest (log) vs rate-limiter-flexible`, w === 'A' ? '≥ 5× faster' : '≥ 3× faster', a.speedup, a.speedup >= (w === 'A' ? 5 : 3), fmtX(a.speedup));
    }
    for (const strategy of ['gcra', 'token-bucket']) {
      const r = rw(w, strategy, 'sync');
      if (r) add(`${w}: allowRequestSync (${strategy}) vs floor (globalThis.performance.now)`, '≤ 1.2×', r.xFloor, r.xFloor <= 1.2, fmtX(r.xFloor));
    }
  }
  if (agg.C) {
    for (const threshold of C_THRESHOLDS) {
      const r = agg.C.find((x) => x.threshold === threshold && x.role === 'ratewarden');
      add(`C @ ${threshold.toLocaleString('en-US')}: log vs floor (injected clock)`, '≤ 1.5×', r.xFloor, r.xFloor <= 1.5, fmtX(r.xFloor));
    }
  }
  const d = agg.D?.find((r) => r.role === 'ratewarden');
  if (d) add('D: allowRequest ×1,000 concurrent vs rate-limiter-flexible', '≥ 3× faster', d.speedup, d.speedup >= 3, fmtX(d.speedup));
  if (memoryRows) {
    const log = memoryRows.find((r) => r.strategy === 'sliding-window-log' && r.requestsPerKey === 300);
    add('E: log, 300 timestamps per key', '≤ 2,600 B/key', log.bytes, log.bytes <= 2600, `${log.bytes.toLocaleString('en-US')} B`);
    for (const r of memoryRows.filter((x) => x.role === 'ratewarden' && x.strategy !== 'sliding-window-log')) {
      add(`E: ${r.strategy}, 100 requests per key`, '≤ 120 B/key', r.bytes, r.bytes <= 120, `${r.bytes.toLocaleString('en-US')} B`);
    }
  }
  const lines = ['### Targets', '', '| target | wanted | measured | met |', '| --- | --- | ---: | :---: |'];
  for (const t of list) lines.push(`| ${t.what} | ${t.wanted} | ${t.shown} | ${t.met === null ? '—' : t.met ? 'yes' : '**no**'} |`);
  return { text: lines.join('\n'), rows: list.map(({ shown, ...t }) => t) };
}

// ---------------------------------------------------------------------------------------------
// Main

const SELF = fileURLToPath(import.meta.url);
const childArgs = [`--time=${TIME_MS}`, `--subrounds=${SUB_ROUNDS}`, `--only=${[...ONLY].join(',')}`];

if (args['memory-case'] !== undefined) {
  await memoryChild(Number(args['memory-case']));
  process.exit(0);
}
if (args.group !== undefined) {
  await groupChild(args.group);
  process.exit(0);
}

/** Section R: bench/redis.mjs in a child process, printing straight to this one's output. */
function runRedisSection() {
  const script = fileURLToPath(new URL('./redis.mjs', import.meta.url));
  execFileSync(process.execPath, [script, `--json=${JSON_PATH}`], { stdio: 'inherit' });
}
if (!['A', 'B', 'C', 'D', 'E'].some((w) => ONLY.has(w))) {
  if (ONLY.has('R')) runRedisSection();
  process.exit(0);
}

const versionOf = (dir) => JSON.parse(readFileSync(new URL(`${dir}/package.json`, import.meta.url), 'utf8')).version;
const versions = {
  ratewarden: versionOf('..'),
  tinybench: versionOf('../node_modules/tinybench'),
  'rate-limiter-flexible': versionOf('../node_modules/rate-limiter-flexible'),
  limiter: versionOf('../node_modules/limiter'),
};
const cpus = os.cpus();
const machine = {
  cpu: cpus[0]?.model ?? 'unknown',
  cores: cpus.length,
  node: process.version,
  v8: process.versions.v8,
  os: `${os.type()} ${os.release()} ${os.arch()}`,
  memoryGiB: Math.round(os.totalmem() / 2 ** 30),
};
const config = {
  rounds: ROUNDS, subRoundsPerRound: SUB_ROUNDS, tinybenchTimeMsPerTaskAndRound: TIME_MS, tinybenchWarmupMs: WARMUP_MS, threshold: THRESHOLD, windowSeconds: WINDOW_SECONDS,
  decisionsPerBatch: { A: A_BATCH, B: B_KEYS, C: C_BATCH, D: D_BATCH }, bKeys: B_KEYS, bPassesPerSubRound: B_PASSES, bResetAtLatestEveryPasses: B_EPOCH, cThresholds: C_THRESHOLDS, eKeys: E_KEYS,
  groups: GROUPS,
  statistic: 'ns/decision: median over all sub-rounds of (tinybench latency p50 of a batch ÷ decisions per batch); ratios: median of the ratios within each sub-round',
};

const header = `ratewarden ${versions.ratewarden} benchmark — ${machine.cpu}, ${machine.cores} cores, Node ${machine.node} (V8 ${machine.v8}), ${machine.os}; ` +
  `tinybench ${versions.tinybench}, rate-limiter-flexible ${versions['rate-limiter-flexible']}, limiter ${versions.limiter}; ` +
  `${ROUNDS} rounds × ${SUB_ROUNDS} sub-rounds, ${TIME_MS} ms per task and round; ns/decision = median over sub-rounds of the median batch latency ÷ batch size; ratios = median of the ratios within each sub-round`;
console.log(header);
const started = performance.now();
const elapsed = () => `${((performance.now() - started) / 1000).toFixed(1)} s`;

const measurements = [];
if (['A', 'B', 'C', 'D'].some((w) => ONLY.has(w))) {
  for (let round = 1; round <= ROUNDS; round++) {
    for (const group of GROUPS) {
      if (group !== MAIN && !ONLY.has('A') && !ONLY.has('B')) continue;
      const out = execFileSync(process.execPath, ['--expose-gc', SELF, `--group=${group}`, ...childArgs], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 64 << 20 });
      for (const row of JSON.parse(out.trim().split('\n').pop())) measurements.push({ ...row, round });
    }
    console.error(`round ${round} of ${ROUNDS} done (${elapsed()})`);
  }
}

const titles = {
  A: `A. One hot key, ${THRESHOLD} per ${WINDOW_SECONDS} s, almost all rejected (${A_BATCH.toLocaleString('en-US')} calls per batch)`,
  B: `B. ${B_KEYS.toLocaleString('en-US')} keys round-robin, ${THRESHOLD} per ${WINDOW_SECONDS} s, all allowed (a batch is one pass over the keys; ${B_PASSES} passes from a reset per sub-round)`,
  D: `D. ${D_BATCH.toLocaleString('en-US')} concurrent allowRequest calls on one key, awaited with Promise.all`,
};
const agg = {};
for (const w of ['A', 'B', 'C', 'D']) if (measurements.some((m) => m.workload === w)) agg[w] = aggregate(measurements, w);

let memoryRows;
if (ONLY.has('E')) {
  memoryRows = await measureMemory();
  console.error(`memory done (${elapsed()})`);
}
const targetReport = targets(agg, memoryRows);

for (const w of ['A', 'B', 'C', 'D']) {
  if (!agg[w]) continue;
  console.log(`\n${w === 'C' ? stepTable(agg.C) : decisionTable(titles[w], ordered(agg[w]))}`);
}
if (memoryRows) console.log(`\n${memoryTable(memoryRows)}`);
console.log(`\n${targetReport.text}`);
const floorsByGroup = {};
for (const w of ['A', 'B']) {
  if (!agg[w]) continue;
  floorsByGroup[w] = Object.fromEntries(GROUPS.map((g) => [g, Object.fromEntries(agg[w].filter((r) => r.group === g && r.role in FLOOR_NAMES).map((r) => [r.role, round2(r.ns)]))]));
}
console.error(`\ntotal ${elapsed()}`);

if (JSON_PATH !== '-') {
  const json = {
    header,
    machine,
    versions,
    config,
    workloads: Object.fromEntries(Object.entries(agg).map(([w, rows]) => [w, {
      title: w === 'C' ? 'C. Steady eviction: one key, full log, one eviction + one record per call (injected clock)' : titles[w],
      rows: (w === 'C' ? rows : ordered(rows)).map(toJsonRow),
    }])),
    floorsByGroup,
    memory: memoryRows ?? null,
    targets: targetReport.rows,
  };
  // Keep the Redis section's figures (bench/redis.mjs writes them; section R, if run, replaces them next).
  try {
    const previous = JSON.parse(readFileSync(JSON_PATH, 'utf8'));
    if (previous.redis !== undefined) json.redis = previous.redis;
  } catch {
    // no previous file, or not JSON: nothing to keep
  }
  writeFileSync(JSON_PATH, `${JSON.stringify(json, null, 2)}\n`);
  console.error(`wrote ${JSON_PATH}`);
}
if (ONLY.has('R')) runRedisSection();
