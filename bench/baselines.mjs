// Baselines for bench/run.mjs, written here so that every figure has a reference point measured
// in the same process on the same workload.

/** The default clock of the baselines: `performance.now()` looked up at each call, as ratewarden's. */
export const performanceNow = () => performance.now();

/**
 * The floor: per decision one clock read plus one `Map<string, number>` get and one set (a bare
 * counter per key, allowed while under `threshold`). No limiter that keeps per-key state in a Map
 * and reads a clock can be cheaper. Returns a boolean: it builds no result object.
 *
 * @param {number} threshold
 * @param {() => number} [clock] - `performance.now()` unless a workload injects its own clock.
 */
export function makeFloor(threshold, clock) {
  const counts = new Map();
  let decide;
  if (clock === undefined) {
    // Written out (not `clock = performanceNow`) so that the default floor reads the global
    // `performance.now()` directly, with no extra call.
    decide = function floor(key) {
      const now = performance.now();
      const n = counts.get(key);
      const count = n === undefined ? 0 : n;
      counts.set(key, count + 1);
      floorSink = now;
      return count < threshold;
    };
  } else {
    decide = function floorInjected(key) {
      const now = clock();
      const n = counts.get(key);
      const count = n === undefined ? 0 : n;
      counts.set(key, count + 1);
      floorSink = now;
      return count < threshold;
    };
  }
  /** Forgets every key. */
  decide.reset = () => counts.clear();
  return decide;
}

/**
 * The floor reading the clock as ratewarden's default clock must: `globalThis.performance.now()`,
 * looked up on the global object at every decision (never captured), so that fake timers
 * installed later take effect. The targets of `allowRequestSync` are taken against this one; the
 * floor above writes the same read as a bare `performance.now()` (on Node 20 both go through the
 * global object's `performance` getter).
 *
 * @param {number} threshold
 */
export function makeGlobalFloor(threshold) {
  const counts = new Map();
  const decide = function floorGlobal(key) {
    const now = globalThis.performance.now();
    const n = counts.get(key);
    const count = n === undefined ? 0 : n;
    counts.set(key, count + 1);
    floorSink = now;
    return count < threshold;
  };
  /** Forgets every key. */
  decide.reset = () => counts.clear();
  return decide;
}

/** Keeps the clock readings of the floors observable, so that no engine can drop them. */
export let floorSink = 0;

/**
 * The async floor: the floor's decision returned as `Promise.resolve(...)`, for the caller to
 * await (what any promise-returning in-memory limiter costs at least).
 *
 * @param {number} threshold
 */
export function makeAsyncFloor(threshold) {
  const floor = makeFloor(threshold);
  const asyncFloor = function asyncFloor(key) {
    return Promise.resolve(floor(key));
  };
  asyncFloor.reset = floor.reset;
  return asyncFloor;
}

/**
 * The async floor over {@link makeGlobalFloor} (`globalThis.performance.now()`): the reference of
 * the `allowRequest` targets. A function of its own, so that its call site's type feedback is not
 * shared with the other async floor's.
 *
 * @param {number} threshold
 */
export function makeAsyncGlobalFloor(threshold) {
  const floor = makeGlobalFloor(threshold);
  const asyncFloor = function asyncFloorGlobal(key) {
    return Promise.resolve(floor(key));
  };
  asyncFloor.reset = floor.reset;
  return asyncFloor;
}

/**
 * The seed port: the naive sliding-window log in plain JavaScript. Per key an array of the
 * timestamps of the allowed requests; each decision evicts with `shift()` while the oldest is
 * out of the window, then allows (and `push`es now) when fewer than `threshold` remain.
 *
 * @param {number} threshold
 * @param {number} windowMs
 * @param {() => number} [clock]
 */
export function makeSeedPort(threshold, windowMs, clock = performanceNow) {
  const logs = new Map();
  const seed = function seedPort(key) {
    const now = clock();
    let log = logs.get(key);
    if (log === undefined) {
      log = [];
      logs.set(key, log);
    }
    while (log.length > 0 && log[0] <= now - windowMs) log.shift();
    if (log.length < threshold) {
      log.push(now);
      return true;
    }
    return false;
  };
  seed.logs = logs;
  /** Forgets every key. */
  seed.reset = () => logs.clear();
  return seed;
}
