// The sweep at scale: `npm run bench:sweep`.
// 1. A full cleanUp() over 1,000,000 keys (all clear, then none clear): how long the event loop
//    is blocked by one synchronous sweep.
// 2. The automatic incremental sweep over 1,000,000 keys while decisions go on: the event loop's
//    delay (perf_hooks.monitorEventLoopDelay, 1 ms resolution), p50/p99/max.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import os from 'node:os';
import { RateLimiter } from '../dist/index.js';

const KEYS = 1_000_000;
const keys = Array.from({ length: KEYS }, (_, i) => `198.18.${(i >> 8) & 255}.${i & 255}-${i}`);
console.log(`${os.cpus()[0]?.model ?? 'cpu'}, ${os.cpus().length} cores, node ${process.version}`);

{
  let now = 0;
  const limiter = new RateLimiter({ threshold: 10, windowSeconds: 60, clock: () => now });
  for (const key of keys) limiter.allowRequestSync(key);
  now = 30_000;
  let t = performance.now();
  const none = limiter.cleanUp();
  const liveMs = performance.now() - t;
  now = 120_000;
  t = performance.now();
  const all = limiter.cleanUp();
  const clearMs = performance.now() - t;
  console.log(`cleanUp() over ${KEYS.toLocaleString('en-US')} live keys: dropped ${none}, ${liveMs.toFixed(0)} ms`);
  console.log(`cleanUp() over ${KEYS.toLocaleString('en-US')} clear keys: dropped ${all.toLocaleString('en-US')}, ${clearMs.toFixed(0)} ms`);
}

{
  // Real clock: keys get a 2 s window, then the automatic sweep (every 3 s) drops them in slices
  // while a stream of decisions on other keys goes on.
  const limiter = new RateLimiter({ threshold: 10, windowSeconds: 2, sweepIntervalSeconds: 3 });
  for (const key of keys) limiter.allowRequestSync(key);
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  const started = performance.now();
  let decisions = 0;
  await new Promise((resolve) => {
    const work = () => {
      // About 1 ms of decisions per turn, then yield.
      const until = performance.now() + 1;
      while (performance.now() < until) {
        limiter.allowRequestSync(`live-${decisions % 1000}`);
        decisions++;
      }
      if (limiter.size > 1_000 && performance.now() - started < 30_000) setImmediate(work);
      else resolve();
    };
    work();
  });
  histogram.disable();
  const ms = (ns) => (ns / 1e6).toFixed(2);
  console.log(
    `automatic sweep of ${KEYS.toLocaleString('en-US')} keys with decisions going on: ` +
      `${((performance.now() - started) / 1000).toFixed(1)} s, swept ${limiter.sweptKeys.toLocaleString('en-US')}, ` +
      `${decisions.toLocaleString('en-US')} decisions; event-loop delay p50 ${ms(histogram.percentile(50))} ms, ` +
      `p99 ${ms(histogram.percentile(99))} ms, max ${ms(histogram.max)} ms`,
  );
  limiter.close();
}
