// Heap bytes per key, for every strategy: `npm run bench:memory`.
// Runs the built package (dist/) with --expose-gc; counts heapUsed plus ArrayBuffer backing
// stores. Key strings are allocated before the first measurement and not counted.
import { FixedWindow, GCRA, RateLimiter, SlidingWindowCounter, SlidingWindowLog, TokenBucket } from '../dist/index.js';

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

/** Bytes per key with `perKey` allowed requests (at one instant each, 1 µs apart) per key. */
function measure(makeStrategy, perKey, threshold) {
  let now = 0;
  const limiter = new RateLimiter({ threshold, windowSeconds: 60, strategy: makeStrategy(), clock: () => now });
  const before = used();
  for (const key of keys) {
    for (let i = 0; i < perKey; i++) {
      now += 0.001;
      if (!limiter.allowRequestSync(key).allowed) throw new Error('unexpected rejection');
    }
  }
  const after = used();
  if (limiter.size !== KEYS) throw new Error('unexpected size');
  return Math.round((after - before) / KEYS);
}

const strategies = [
  ['sliding-window-log', () => new SlidingWindowLog()],
  ['sliding-window-counter', () => new SlidingWindowCounter()],
  ['fixed-window', () => new FixedWindow()],
  ['token-bucket', () => new TokenBucket()],
  ['gcra', () => new GCRA()],
];

console.log(`node ${process.version}, ${KEYS.toLocaleString('en-US')} keys, windowSeconds 60`);
console.log('| strategy | 1 request per key | 10 | 60 (threshold 60) | 300 (threshold 300) |');
console.log('| --- | --- | --- | --- | --- |');
for (const [name, make] of strategies) {
  const cells = [measure(make, 1, 300), measure(make, 10, 300), measure(make, 60, 60), measure(make, 300, 300)];
  console.log(`| ${name} | ${cells.map((b) => `${b.toLocaleString('en-US')} B`).join(' | ')} |`);
}
