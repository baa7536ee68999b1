// Key flooding: `npm run bench:flood`. Ten million distinct keys, each making one request, one
// every 10 µs (100,000 new keys per second), against limiters of 60 per minute: without a bound
// every key would stay tracked for its minute; with maxKeys the heap stays within the bound's
// budget. Reports the live heap (V8 heap plus array buffers, after a full GC) sampled every
// 1,000,000 keys, and the decision rate (those GCs included).
import os from 'node:os';
import { GCRA, RateLimiter } from '../dist/index.js';

const FLOOD = Number(process.env.FLOOD ?? 10_000_000);
const MAX_KEYS = 100_000;
console.log(`${os.cpus()[0]?.model ?? 'cpu'}, ${os.cpus().length} cores, node ${process.version}`);

function heap() {
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

function flood(name, make) {
  globalThis.gc?.();
  const base = heap();
  let now = 0;
  const strategy = make();
  const limiter = new RateLimiter({
    threshold: 60,
    windowSeconds: 60,
    maxKeys: MAX_KEYS,
    clock: () => now,
    ...(strategy ? { strategy } : {}),
  });
  let peak = 0;
  let rejected = 0;
  const started = performance.now();
  for (let i = 0; i < FLOOD; i++) {
    now = i / 100; // 10 µs apart
    if (!limiter.allowRequestSync(`flood-${i}`).allowed) rejected++;
    if (i % 1_000_000 === 0) {
      globalThis.gc?.(); // live memory, not garbage awaiting collection
      const used = heap() - base;
      if (used > peak) peak = used;
    }
  }
  const seconds = (performance.now() - started) / 1000;
  console.log(
    `${name}: ${FLOOD.toLocaleString('en-US')} distinct keys, maxKeys ${MAX_KEYS.toLocaleString('en-US')}: ` +
      `tracked at the end ${limiter.size.toLocaleString('en-US')}, rejected ${rejected.toLocaleString('en-US')} ` +
      `(new keys while all ${MAX_KEYS.toLocaleString('en-US')} tracked were live), peak heap growth ` +
      `${(peak / 2 ** 20).toFixed(1)} MiB (${Math.round(peak / MAX_KEYS)} B per tracked key, key strings included), ` +
      `${(FLOOD / seconds / 1e6).toFixed(2)} M decisions/s`,
  );
}

flood('sliding-window log', () => undefined);
flood('GCRA', () => new GCRA());
