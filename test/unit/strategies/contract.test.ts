// The contract suite (test/support/strategy-contract.ts) over both contracts: each in-memory
// strategy, and each behind a store (the same algorithm, its state in the store, decisions
// awaited and serialised by the limiter's per-key mutex).
import { FixedWindow } from '../../../src/strategies/fixed-window.js';
import { GCRA } from '../../../src/strategies/gcra.js';
import { SlidingWindowCounter } from '../../../src/strategies/sliding-window-counter.js';
import { SlidingWindowLog } from '../../../src/strategies/sliding-window-log.js';
import { TokenBucket } from '../../../src/strategies/token-bucket.js';
import type { RateLimitStrategy } from '../../../src/index.js';
import { AwaitingStore } from '../../support/stores.js';
import { describeStrategy, type Documented } from '../../support/strategy-contract.js';

const strategies: readonly [string, () => RateLimitStrategy<unknown>, Documented][] = [
  ['sliding-window-log', () => new SlidingWindowLog(), { maxPerWindow: 1, maxWait: 1 }],
  ['sliding-window-counter', () => new SlidingWindowCounter(), { maxPerWindow: 2, maxWait: 2 }],
  ['fixed-window', () => new FixedWindow(), { maxPerWindow: 2, maxWait: 1 }],
  ['token-bucket', () => new TokenBucket(), { maxPerWindow: 2, maxWait: 1 }],
  ['gcra', () => new GCRA(), { maxPerWindow: 2, maxWait: 1 }],
];

for (const [name, factory, documented] of strategies) {
  describeStrategy(name, factory, documented);
  describeStrategy(`awaiting-${name}`, () => new AwaitingStore(factory()), documented, { runs: 60 });
}
