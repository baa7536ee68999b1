// Drives one of bench/run.mjs's workloads through ratewarden alone, for a CPU profile:
//
//   npx tsup --silent
//   node --cpu-prof --cpu-prof-dir=/tmp/rw-prof bench/profile.mjs --workload=B --strategy=sliding-window-log --api=sync
//   node bench/cpuprofile-top.mjs /tmp/rw-prof
//
// Options: --workload=A|B|C|D (default B), --strategy=NAME (default sliding-window-log),
// --api=sync|async (default sync; D is always async), --threshold=N (C only, default 1000),
// --decisions=N (default 20,000,000; D: 2,000,000).
import { FixedWindow, GCRA, RateLimiter, SlidingWindowCounter, SlidingWindowLog, TokenBucket } from '../dist/index.js';

const args = Object.fromEntries(
  process.argv.slice(2).map((arg) => {
    const [name, value = 'true'] = arg.replace(/^--/, '').split('=');
    return [name, value];
  }),
);
const workload = (args.workload ?? 'B').toUpperCase();
const strategyName = args.strategy ?? 'sliding-window-log';
const api = workload === 'D' ? 'async' : (args.api ?? 'sync');
const decisions = Number(args.decisions ?? (workload === 'D' ? 2e6 : 2e7));
const strategies = {
  'sliding-window-log': SlidingWindowLog,
  'sliding-window-counter': SlidingWindowCounter,
  'fixed-window': FixedWindow,
  'token-bucket': TokenBucket,
  gcra: GCRA,
};
const Strategy = strategies[strategyName];
if (Strategy === undefined) throw new Error(`unknown strategy ${strategyName}: one of ${Object.keys(strategies).join(', ')}`);

let limiter;
let keys;
let resetEvery = Infinity;
if (workload === 'A' || workload === 'D') {
  limiter = new RateLimiter({ threshold: 300, windowSeconds: 60, strategy: new Strategy() });
  keys = Array.from({ length: 1000 }, () => 'hot-key-203.0.113.7');
} else if (workload === 'B') {
  limiter = new RateLimiter({ threshold: 300, windowSeconds: 60, strategy: new Strategy() });
  keys = Array.from({ length: 10_000 }, (_, i) => `user-${i.toString(36)}-${(i * 2654435761) % 1e9}`);
  resetEvery = 20; // passes, as bench/run.mjs (a sub-round): no key reaches the threshold
} else if (workload === 'C') {
  const threshold = Number(args.threshold ?? 1000);
  let ticks = 0;
  limiter = new RateLimiter({ threshold, windowSeconds: 60, strategy: new Strategy(), clock: () => (++ticks * 60_000) / threshold });
  for (let i = 0; i < threshold; i++) limiter.allowRequestSync('steady-key');
  keys = Array.from({ length: 1000 }, () => 'steady-key');
} else {
  throw new Error(`unknown workload ${workload}`);
}

const passes = Math.ceil(decisions / keys.length);
let allowed = 0;
const started = performance.now();
for (let pass = 0; pass < passes; pass++) {
  if (pass % resetEvery === 0) for (const key of keys) limiter.reset(key);
  if (workload === 'D') {
    const results = await Promise.all(keys.map((key) => limiter.allowRequest(key)));
    for (const r of results) if (r.allowed) allowed++;
  } else if (api === 'async') {
    for (let i = 0; i < keys.length; i++) if ((await limiter.allowRequest(keys[i])).allowed) allowed++;
  } else {
    for (let i = 0; i < keys.length; i++) if (limiter.allowRequestSync(keys[i]).allowed) allowed++;
  }
}
const total = passes * keys.length;
console.log(
  `${workload} ${strategyName} ${api}: ${total.toLocaleString('en-US')} decisions, ` +
    `${(((performance.now() - started) * 1e6) / total).toFixed(1)} ns each (the resets included), ` +
    `${((100 * allowed) / total).toFixed(2)} % allowed`,
);
