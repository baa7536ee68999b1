// Heap bytes per key of the sliding-window log: `npm run bench:memory`.
// Runs the built package (dist/) with --expose-gc; counts heapUsed plus ArrayBuffer backing
// stores (typed arrays larger than 64 bytes live outside the V8 heap).
import { RateLimiter } from '../dist/index.js';

if (typeof globalThis.gc !== 'function') {
  console.error('run with node --expose-gc (npm run bench:memory does)');
  process.exit(2);
}

function used() {
  globalThis.gc();
  globalThis.gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

const KEYS = 100_000;
const keys = Array.from({ length: KEYS }, (_, i) => `198.18.${(i >> 8) & 255}.${i & 255}-${i}`);

function measure(perKey, threshold) {
  let now = 0;
  const limiter = new RateLimiter({ threshold, windowSeconds: 60, clock: () => now });
  const before = used();
  for (const key of keys) {
    for (let i = 0; i < perKey; i++) {
      now += 0.001;
      limiter.allowRequestSync(key);
    }
  }
  const after = used();
  if (limiter.size !== KEYS) throw new Error('unexpected size');
  return (after - before) / KEYS;
}

console.log(`node ${process.version}, ${KEYS.toLocaleString('en-US')} keys (key strings allocated beforehand, not counted)`);
console.log('timestamps per key | threshold | bytes per key | bytes per timestamp beyond the first');
for (const [perKey, threshold] of [[1, 300], [10, 300], [60, 60], [300, 300]]) {
  const bytes = measure(perKey, threshold);
  const one = perKey === 1 ? '' : ((bytes - measure(1, threshold)) / (perKey - 1)).toFixed(1);
  console.log(`${String(perKey).padStart(18)} | ${String(threshold).padStart(9)} | ${bytes.toFixed(0).padStart(13)} | ${one}`);
}
