// Blocking for a while (issue 22, section 2), in memory: `blockSeconds` and `extendBlock` on the
// limiter and its tiers, `block`/`blockSync`, `reset`/`delete` lifting a block, `stats().blocked`,
// sweeps, waiting and shadow decisions; and what a limiter on a store asks of the store. Every
// test runs on an injected clock (or fake timers); the property tests against the reference
// models are in blocks-property.test.ts.
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  ErrorCode,
  FixedWindow,
  GCRA,
  RateLimitGroup,
  RateLimiter,
  RateWardenRangeError,
  RateWardenTypeError,
  RateWardenWaitError,
  SlidingWindowLog,
  TokenBucket,
  createQuota,
  type Quota,
  type RateLimitResult,
  type RateLimitStore,
} from '../../src/index.js';
import type { RefundingStore, StoreReservation } from '../../src/store.js';
import { deciderOf } from '../../src/decider.js';
import { AwaitingStore } from '../support/stores.js';

afterEach(() => {
  vi.useRealTimers();
});

/** A limiter on an injected clock, `clock.now` ms. */
function limiter(options: Partial<ConstructorParameters<typeof RateLimiter>[0]> = {}): { l: RateLimiter; clock: { now: number } } {
  const clock = { now: 0 };
  const l = new RateLimiter({ threshold: 2, windowSeconds: 10, blockSeconds: 60, clock: () => clock.now, ...options });
  return { l, clock };
}

/** The blocks the limiter keeps, expired ones included (its internal door, for the sweeps). */
function blocksKept(l: RateLimiter): number {
  return deciderOf(l)?.blocks?.size ?? -1;
}

const refused = (retryAfter: number, resetAfter: number, limit = 2): RateLimitResult => ({ allowed: false, remaining: 0, retryAfter, limit, resetAfter });

describe('blockSeconds: a refusal blocks the key for exactly blockSeconds', () => {
  it('refuses, reporting the block, until its end; 1 ms before the end is refused, the end is decided by the strategy', () => {
    const { l, clock } = limiter();
    expect(l.allowRequestSync('a').allowed).toBe(true);
    expect(l.allowRequestSync('a').allowed).toBe(true);
    // The refusal starts the block: its retryAfter is the block's 60 s, not the window's 10 s.
    expect(l.allowRequestSync('a')).toEqual(refused(60, 60));
    expect(l.stats()).toMatchObject({ allowed: 2, rejected: 1, blocked: 1 });
    // Long after the window has cleared, still refused, with the block's remaining time.
    clock.now = 30_000;
    expect(l.allowRequestSync('a')).toEqual(refused(30, 30));
    expect(l.peekSync('a')).toEqual(refused(30, 30));
    clock.now = 59_999;
    expect(l.allowRequestSync('a')).toEqual(refused(0.001, 0.001));
    clock.now = 60_000;
    expect(l.allowRequestSync('a')).toEqual({ allowed: true, remaining: 1, retryAfter: 0, limit: 2, resetAfter: 10 });
    expect(l.stats()).toMatchObject({ allowed: 3, rejected: 3, blocked: 0 });
  });

  it('records nothing while blocked: at the end the key is as the refusal left it', () => {
    // A window longer than the block: the two requests at 0 still count at the block's end.
    const { l, clock } = limiter({ windowSeconds: 100 });
    l.allowRequestSync('a');
    l.allowRequestSync('a');
    // The wait is the block plus what the strategy still asks at its end: 60 + 40 s.
    expect(l.allowRequestSync('a')).toEqual(refused(100, 100));
    for (let t = 1_000; t < 60_000; t += 7_000) {
      clock.now = t;
      expect(l.allowRequestSync('a')).toEqual(refused((100_000 - t) / 1000, (100_000 - t) / 1000));
    }
    clock.now = 60_000;
    // Not blocked any more; the strategy refuses (the window is full until 100 s): a new block
    // starts, until 120 s, when the strategy allows.
    expect(l.allowRequestSync('a')).toEqual(refused(60, 60));
    clock.now = 119_999;
    expect(l.allowRequestSync('a').allowed).toBe(false);
    clock.now = 120_000;
    expect(l.allowRequestSync('a').allowed).toBe(true);
  });

  it('a block shorter than the window: retryAfter is the strategy’s wait, and a refusal after the block blocks again', () => {
    const { l, clock } = limiter({ blockSeconds: 1 });
    l.allowRequestSync('a');
    l.allowRequestSync('a');
    // Blocked 1 s; at its end the log still refuses for 9 s more.
    expect(l.allowRequestSync('a')).toEqual(refused(10, 10));
    clock.now = 999;
    expect(l.allowRequestSync('a')).toEqual(refused(9.001, 9.001));
    clock.now = 1_000;
    // The strategy refuses: a block from 1 s to 2 s; then 8 s more of window.
    expect(l.allowRequestSync('a')).toEqual(refused(9, 9));
    clock.now = 10_000;
    expect(l.allowRequestSync('a').allowed).toBe(true);
  });

  it('a request whose cost exceeds the threshold never blocks (retryAfter Infinity), nor extends a block', () => {
    const { l, clock } = limiter({ extendBlock: true });
    expect(l.allowRequestSync('a', { cost: 3 })).toEqual({ allowed: false, remaining: 2, retryAfter: Infinity, limit: 2, resetAfter: 0 });
    expect(l.stats().blocked).toBe(0);
    expect(l.allowRequestSync('a', { cost: 2 }).allowed).toBe(true);
    // A cost within the threshold that does not fit now blocks.
    expect(l.allowRequestSync('a', { cost: 1 })).toEqual(refused(60, 60));
    clock.now = 10_000;
    // Blocked: Infinity for the oversized cost, which does not restart the block.
    expect(l.allowRequestSync('a', { cost: 3 })).toEqual(refused(Infinity, 50));
    expect(l.peekSync('a')).toEqual(refused(50, 50));
  });

  it('a refusal for want of room under maxKeys blocks nothing (a flood of new keys cannot fill the blocks)', () => {
    const { l } = limiter({ maxKeys: 1 });
    l.allowRequestSync('a');
    const r = l.allowRequestSync('b');
    expect(r.allowed).toBe(false);
    expect(r.retryAfter).toBe(10);
    expect(l.stats().blocked).toBe(0);
    expect(blocksKept(l)).toBe(0);
  });

  it('blockSeconds: 0 (the default) blocks nothing', () => {
    const { l } = limiter({ blockSeconds: 0 });
    l.allowRequestSync('a');
    l.allowRequestSync('a');
    expect(l.allowRequestSync('a')).toEqual({ allowed: false, remaining: 0, retryAfter: 10, limit: 2, resetAfter: 10 });
    expect(l.stats().blocked).toBe(0);
    expect(new RateLimiter({ threshold: 1, windowSeconds: 1 }).stats().blocked).toBe(0);
  });

  it('validates blockSeconds and extendBlock, naming them', () => {
    const make = (options: object) => () => new RateLimiter({ threshold: 1, windowSeconds: 1, ...options });
    expect(make({ blockSeconds: -1 })).toThrow(RateWardenRangeError);
    expect(make({ blockSeconds: 0.0005 })).toThrow(/^Expected `blockSeconds` to be 0 or a whole number of milliseconds/);
    expect(make({ blockSeconds: 1.0005 })).toThrow(RateWardenRangeError);
    expect(make({ blockSeconds: 1e9 + 1 })).toThrow(RateWardenRangeError);
    expect(make({ blockSeconds: Number.NaN })).toThrow(RateWardenRangeError);
    expect(make({ blockSeconds: '60' })).toThrow(RateWardenTypeError);
    expect(make({ extendBlock: 'yes' })).toThrow(/^Expected `extendBlock` to be a boolean or undefined/);
    expect(make({ blockSeconds: 1e9, extendBlock: true })).not.toThrow();
    expect(make({ blockSeconds: 0.001 })).not.toThrow();
  });
});

describe('createQuota carries the block in milliseconds', () => {
  it('blockMs and extendBlock, with their defaults, and the names of the fields in messages', () => {
    expect(createQuota({ threshold: 1, windowSeconds: 1, blockSeconds: 1.5, extendBlock: true })).toMatchObject({ blockMs: 1_500, extendBlock: true });
    expect(createQuota({ threshold: 1, windowSeconds: 1, blockSeconds: 0.017 }).blockMs).toBe(17);
    expect(createQuota({ threshold: 1, windowSeconds: 1 })).toMatchObject({ blockMs: 0, extendBlock: false });
    const names = { threshold: 't', windowSeconds: 'w', blockSeconds: '--block', extendBlock: '--extend' };
    expect(() => createQuota({ threshold: 1, windowSeconds: 1, blockSeconds: 0.0001 }, undefined, names)).toThrow(/^Expected `--block` to be 0 or/);
    expect(() => createQuota({ threshold: 1, windowSeconds: 1, extendBlock: null as unknown as boolean }, undefined, names)).toThrow(/^Expected `--extend` to be a boolean/);
  });
});

describe('extendBlock', () => {
  it('on: each refused attempt restarts the block (never shortening it); a peek does not', () => {
    const { l, clock } = limiter({ extendBlock: true });
    l.allowRequestSync('a');
    l.allowRequestSync('a');
    l.allowRequestSync('a'); // blocked until 60 s
    clock.now = 30_000;
    expect(l.allowRequestSync('a')).toEqual(refused(60, 60)); // until 90 s
    clock.now = 60_000;
    expect(l.peekSync('a')).toEqual(refused(30, 30)); // a peek is no attempt
    clock.now = 89_999;
    expect(l.peekSync('a').allowed).toBe(false);
    clock.now = 90_000;
    expect(l.allowRequestSync('a').allowed).toBe(true);
  });

  it('off (the default): attempts during the block leave its end where it was', () => {
    const { l, clock } = limiter();
    l.allowRequestSync('a');
    l.allowRequestSync('a');
    l.allowRequestSync('a');
    clock.now = 30_000;
    expect(l.allowRequestSync('a')).toEqual(refused(30, 30));
    clock.now = 59_999;
    expect(l.allowRequestSync('a').allowed).toBe(false);
    clock.now = 60_000;
    expect(l.allowRequestSync('a').allowed).toBe(true);
  });

  it('on, with a longer manual block: an attempt does not shorten it', () => {
    const { l, clock } = limiter({ extendBlock: true });
    l.blockSync('a', 1_000);
    clock.now = 10_000;
    expect(l.allowRequestSync('a')).toEqual(refused(990, 990));
  });
});

describe('tiers with different blocks', () => {
  it('each decision blocks under the quota that applied to it', () => {
    const free = { threshold: 1, windowSeconds: 1, blockSeconds: 30, tier: 'free' };
    const pro = { threshold: 1, windowSeconds: 1, blockSeconds: 5, extendBlock: true, tier: 'pro' };
    const none = { threshold: 1, windowSeconds: 1 };
    const clock = { now: 0 };
    const plans: Record<string, object> = { f: free, p: pro, n: none };
    // The default quota blocks nothing: only tiers do.
    const l = new RateLimiter({ threshold: 1, windowSeconds: 1, clock: () => clock.now, limitFor: (_u, key) => plans[key] as typeof free });
    for (const key of ['f', 'p', 'n']) expect(l.allowRequestSync(key).allowed).toBe(true);
    expect(l.allowRequestSync('f')).toEqual(refused(30, 30, 1));
    expect(l.allowRequestSync('p')).toEqual(refused(5, 5, 1));
    expect(l.allowRequestSync('n')).toEqual(refused(1, 1, 1));
    expect(l.stats().blocked).toBe(2);
    clock.now = 4_000;
    expect(l.allowRequestSync('p')).toEqual(refused(5, 5, 1)); // pro extends
    expect(l.allowRequestSync('f')).toEqual(refused(26, 26, 1)); // free does not
    expect(l.allowRequestSync('n').allowed).toBe(true);
    clock.now = 9_000;
    expect(l.allowRequestSync('p').allowed).toBe(true);
    clock.now = 30_000;
    expect(l.allowRequestSync('f').allowed).toBe(true);
  });

  it('validates a tier’s blockSeconds and extendBlock, naming them under limitFor()', () => {
    const bad = new RateLimiter({ threshold: 1, windowSeconds: 1, limitFor: () => ({ threshold: 1, windowSeconds: 1, blockSeconds: -1 }) });
    expect(() => bad.allowRequestSync('a')).toThrow(/^Expected `limitFor\(\)\.blockSeconds` to be 0 or a whole number/);
    const worse = new RateLimiter({ threshold: 1, windowSeconds: 1, limitFor: () => ({ threshold: 1, windowSeconds: 1, extendBlock: 1 as unknown as boolean }) });
    expect(() => worse.allowRequestSync('a')).toThrow(/^Expected `limitFor\(\)\.extendBlock` to be a boolean/);
  });
});

describe('block(user, seconds) and blockSync', () => {
  it('blocks a key never seen, replaces any block (longer or shorter), and reports it', async () => {
    const { l, clock } = limiter({ blockSeconds: 0 });
    await expect(l.block('a', 100)).resolves.toBeUndefined();
    expect(l.allowRequestSync('a')).toEqual(refused(100, 100));
    l.blockSync({ id: 'a' }, 5);
    expect(l.allowRequestSync('a')).toEqual(refused(5, 5));
    l.blockSync('a', 0.001);
    expect(l.peekSync('a')).toEqual(refused(0.001, 0.001));
    clock.now = 1;
    expect(l.allowRequestSync('a').allowed).toBe(true);
    // A manual block of a key whose window is full: the wait goes on past the block.
    l.allowRequestSync('a');
    l.blockSync('a', 2);
    expect(l.allowRequestSync('a')).toEqual(refused(10, 10));
    expect(l.stats().blocked).toBe(1);
  });

  it('rejects bad input without blocking; blockSync throws', async () => {
    const { l } = limiter();
    for (const [seconds, type] of [
      [0, RateWardenRangeError],
      [-1, RateWardenRangeError],
      [0.0001, RateWardenRangeError],
      [2e9, RateWardenRangeError],
      [Infinity, RateWardenRangeError],
      ['1', RateWardenTypeError],
    ] as const) {
      await expect(l.block('a', seconds as number)).rejects.toThrow(type);
      expect(() => l.blockSync('a', seconds as number)).toThrow(type);
    }
    await expect(l.block('a', 0)).rejects.toThrow(/^Expected `seconds` to be a whole number of milliseconds, in seconds, from 0\.001 to 1000000000, got `0`/);
    await expect(l.block('', 1)).rejects.toThrow(RateWardenRangeError);
    expect(() => l.blockSync(42 as unknown as string, 1)).toThrow(RateWardenTypeError);
    expect(l.stats().blocked).toBe(0);
    expect(l.allowRequestSync('a').allowed).toBe(true);
  });
});

describe('reset and delete lift a block', () => {
  it('reset lifts the block and forgets the state; it reports a block as something there', () => {
    const { l } = limiter();
    l.allowRequestSync('a');
    l.allowRequestSync('a');
    l.allowRequestSync('a');
    expect(l.reset('a')).toBe(true);
    expect(l.allowRequestSync('a')).toMatchObject({ allowed: true, remaining: 1 });
    l.blockSync('b', 10);
    expect(l.reset('b')).toBe(true);
    expect(l.reset('b')).toBe(false);
    expect(l.stats().blocked).toBe(0);
  });

  it('delete resolves whether anything was there', async () => {
    const { l, clock } = limiter();
    l.allowRequestSync('a');
    l.allowRequestSync('a');
    l.allowRequestSync('a');
    await expect(l.delete('a')).resolves.toBe(true);
    await expect(l.delete('a')).resolves.toBe(false);
    expect(l.allowRequestSync('a').remaining).toBe(1);
    l.blockSync('b', 1);
    clock.now = 1_000;
    // Expired: nothing was there.
    await expect(l.delete('b')).resolves.toBe(false);
    await expect(l.delete('')).rejects.toThrow(RateWardenRangeError);
  });
});

describe('expired blocks are dropped: on access, by cleanUp() and by the automatic sweep', () => {
  it('on access and by cleanUp()', () => {
    const { l, clock } = limiter({ blockSeconds: 1 });
    l.blockSync('a', 1);
    l.blockSync('b', 1);
    l.blockSync('c', 2);
    expect(blocksKept(l)).toBe(3);
    clock.now = 1_000;
    l.allowRequestSync('a');
    expect(blocksKept(l)).toBe(2);
    l.cleanUp();
    expect(blocksKept(l)).toBe(1);
    clock.now = 2_000;
    expect(l.stats().blocked).toBe(0);
    expect(blocksKept(l)).toBe(0);
  });

  it('by the automatic sweep (fake timers)', () => {
    vi.useFakeTimers();
    const clock = { now: 0 };
    const l = new RateLimiter({ threshold: 1, windowSeconds: 1, clock: () => clock.now, sweepIntervalSeconds: 5 });
    for (let i = 0; i < 100; i++) l.blockSync(`k${i}`, 3);
    clock.now = 4_000;
    expect(blocksKept(l)).toBe(100);
    vi.advanceTimersByTime(5_000);
    expect(blocksKept(l)).toBe(0);
    l.close();
  });

  it('once every block is gone, decisions go back to the path without blocks', () => {
    const { l, clock } = limiter({ blockSeconds: 0 });
    const decider = deciderOf(l)!;
    expect(decider.blocking).toBe(false);
    l.blockSync('a', 1);
    expect(decider.blocking).toBe(true);
    clock.now = 1_000;
    l.cleanUp();
    l.allowRequestSync('b');
    expect(decider.blocking).toBe(false);
    // A quota that blocks keeps the decisions on the blocking path.
    expect(deciderOf(limiter().l)!.blocking).toBe(true);
  });
});

describe('every strategy blocks, and waits at the block’s end for what the strategy still asks', () => {
  it.each([
    ['sliding-window-log', new SlidingWindowLog()],
    ['fixed-window', new FixedWindow()],
    ['token-bucket', new TokenBucket()],
    ['gcra', new GCRA()],
  ] as const)('%s', (_name, strategy) => {
    const { l, clock } = limiter({ strategy, threshold: 2, windowSeconds: 10, blockSeconds: 3 });
    l.allowRequestSync('a');
    l.allowRequestSync('a');
    const first = l.allowRequestSync('a');
    expect(first.allowed).toBe(false);
    // At least the block; and waiting retryAfter is enough (the strategy allows then).
    expect(first.retryAfter).toBeGreaterThanOrEqual(3);
    clock.now = first.retryAfter * 1000;
    expect(l.allowRequestSync('a').allowed).toBe(true);
  });
});

describe('listeners, shadow decisions and waiting', () => {
  it('a blocked decision is counted and published like any other; shadow decisions start and report blocks', () => {
    const { l } = limiter();
    const seen: [string, RateLimitResult, boolean][] = [];
    l.on('decision', (key, result, _cost, info) => seen.push([key, result, info.shadow]));
    l.allowRequestSync('a', { shadow: true });
    l.allowRequestSync('a', { shadow: true });
    const shadowed = l.allowRequestSync('a', { shadow: true });
    expect(shadowed).toEqual(refused(60, 60));
    expect(l.allowRequestSync('a', { shadow: true })).toEqual(refused(60, 60));
    expect(l.stats()).toMatchObject({ allowed: 2, rejected: 2, shadowRejected: 2, blocked: 1 });
    expect(seen.map(([, r, shadow]) => [r.allowed, r.retryAfter, shadow])).toEqual([
      [true, 0, true],
      [true, 0, true],
      [false, 60, true],
      [false, 60, true],
    ]);
  });

  it('waitForSlot waits for the block’s end, not the window’s', async () => {
    vi.useFakeTimers();
    const l = new RateLimiter({ threshold: 1, windowSeconds: 1, blockSeconds: 10, clock: () => Date.now() });
    l.allowRequestSync('a');
    expect(l.allowRequestSync('a').retryAfter).toBe(10);
    let result: RateLimitResult | undefined;
    void l.waitForSlot('a').then((r) => (result = r));
    await vi.advanceTimersByTimeAsync(9_999);
    expect(result).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(result).toMatchObject({ allowed: true });
    // A bound shorter than the block is refused at once, telling the block's wait.
    l.allowRequestSync('a'); // refused: blocked again for 10 s
    const error = await l.waitForSlot('a', { maxWaitSeconds: 5 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateWardenWaitError);
    expect((error as RateWardenWaitError).retryAfter).toBe(10);
    // reset lifts the block and wakes the waiter at once.
    let woken: RateLimitResult | undefined;
    void l.waitForSlot('a').then((r) => (woken = r));
    await vi.advanceTimersByTimeAsync(0);
    expect(woken).toBeUndefined();
    l.reset('a');
    await vi.advanceTimersByTimeAsync(0);
    expect(woken).toMatchObject({ allowed: true });
  });

  it('a waiter on a key blocked with extendBlock is served at the end of the block its attempts restarted', async () => {
    vi.useFakeTimers();
    const l = new RateLimiter({ threshold: 1, windowSeconds: 1, blockSeconds: 10, extendBlock: true, clock: () => Date.now() });
    l.allowRequestSync('a');
    l.allowRequestSync('a');
    const start = Date.now();
    const served = l.waitForSlot('a').then(() => Date.now() - start);
    // Its first attempt (now) restarts the block: served at 10 s from now, not earlier.
    await vi.advanceTimersByTimeAsync(20_000);
    await expect(served).resolves.toBe(10_000);
  });
});

/** A store that blocks, recording what the limiter asks of it. */
class BlockingStore implements RefundingStore {
  readonly name = 'blocking-store';
  readonly blocks = true;
  readonly calls: unknown[][] = [];
  readonly forgotten: string[] = [];
  deleted = true;
  consume(key: string, nowMs: number, cost: number, quota: Quota): Promise<RateLimitResult> {
    this.calls.push(['consume', key, nowMs, cost, quota.blockMs, quota.extendBlock]);
    return Promise.resolve({ allowed: true, remaining: 0, retryAfter: 0, limit: quota.threshold, resetAfter: 1 });
  }
  peek(_key: string, _nowMs: number, _cost: number, quota: Quota): Promise<RateLimitResult> {
    return Promise.resolve({ allowed: true, remaining: 1, retryAfter: 0, limit: quota.threshold, resetAfter: 0 });
  }
  reserve(): Promise<StoreReservation> {
    return Promise.reject(new Error('not used'));
  }
  refund(): Promise<boolean> {
    return Promise.resolve(false);
  }
  penalty(): Promise<RateLimitResult> {
    return Promise.reject(new Error('not used'));
  }
  block(key: string, nowMs: number, blockMs: number, quota: Quota): Promise<void> {
    this.calls.push(['block', key, nowMs, blockMs, quota.threshold]);
    return Promise.resolve();
  }
  delete(key: string): Promise<boolean> {
    this.calls.push(['delete', key]);
    return Promise.resolve(this.deleted);
  }
  forget(key: string): void {
    this.forgotten.push(key);
  }
}

describe('with a store, blocks are the store’s', () => {
  it('a store that does not block is refused blockSeconds at construction, naming it', () => {
    const store = new AwaitingStore(new SlidingWindowLog());
    const make = () => new RateLimiter({ threshold: 1, windowSeconds: 1, blockSeconds: 60, strategy: store });
    expect(make).toThrow(RateWardenTypeError);
    expect(make).toThrow(/^Expected `blockSeconds` to be 0 with the store `awaiting-sliding-window-log`, which does not block keys/);
    expect(() => new RateLimiter({ threshold: 1, windowSeconds: 1, blockSeconds: 0, strategy: store })).not.toThrow();
    // A store with the methods but without `blocks: true` does not block either.
    const almost = Object.assign(new BlockingStore(), { blocks: false }) as unknown as RateLimitStore;
    expect(() => new RateLimiter({ threshold: 1, windowSeconds: 1, blockSeconds: 60, strategy: almost })).toThrow(/`blockSeconds`/);
  });

  it('a tier with blockSeconds on such a store fails its decisions, naming limitFor().blockSeconds, recording nothing', async () => {
    const store = new AwaitingStore(new SlidingWindowLog());
    const tier = { threshold: 1, windowSeconds: 1, blockSeconds: 5 };
    const l = new RateLimiter({ threshold: 1, windowSeconds: 1, strategy: store, limitFor: (_u, key) => (key === 't' ? tier : undefined) });
    await expect(l.allowRequest('t')).rejects.toThrow(/^Expected `limitFor\(\)\.blockSeconds` to be 0 with the store/);
    await expect(l.allowRequest('t')).rejects.toThrow(RateWardenTypeError);
    expect(store.states.size).toBe(0);
    await expect(l.allowRequest('u')).resolves.toMatchObject({ allowed: true });
  });

  it('a store that blocks gets the quota’s blockMs and extendBlock with each decision; block() and delete() go to it', async () => {
    const store = new BlockingStore();
    const clock = { now: 1_234 };
    const l = new RateLimiter({ threshold: 3, windowSeconds: 1, blockSeconds: 7, extendBlock: true, strategy: store, clock: () => clock.now });
    await l.allowRequest('a');
    await l.block({ id: 'a' }, 2.5);
    await expect(l.delete('a')).resolves.toBe(true);
    store.deleted = false;
    await expect(l.delete('b')).resolves.toBe(false);
    expect(store.calls).toEqual([
      ['consume', 'a', 1_234, 1, 7_000, true],
      ['block', 'a', 1_234, 2_500, 3],
      ['delete', 'a'],
      ['delete', 'b'],
    ]);
    // delete also drops what the store keeps in this process.
    expect(store.forgotten).toEqual(['a', 'b']);
    expect(() => l.blockSync('a', 1)).toThrow(expect.objectContaining({ code: ErrorCode.NotSynchronous }) as Error);
    expect(() => l.blockSync('a', 1)).toThrow(/use `block` instead/);
    await expect(l.block('a', 0)).rejects.toThrow(RateWardenRangeError);
    expect(l.stats().blocked).toBe(0);
  });

  it('block() and delete() on a store without them reject with a TypeError naming the store', async () => {
    const store = new AwaitingStore(new SlidingWindowLog(), { name: 'plain-store' });
    const l = new RateLimiter({ threshold: 1, windowSeconds: 1, strategy: store });
    await l.allowRequest('a');
    await expect(l.delete('a')).rejects.toThrow(RateWardenTypeError);
    await expect(l.delete('a')).rejects.toThrow(/store that can delete keys .*`plain-store`/);
    await expect(l.block('a', 1)).rejects.toThrow(/store that can block keys .*`plain-store`/);
    expect(store.states.size).toBe(1);
  });

  it('a failing store.delete leaves what this process keeps', async () => {
    const store = new BlockingStore();
    store.delete = () => Promise.reject(new Error('down'));
    const l = new RateLimiter({ threshold: 1, windowSeconds: 1, strategy: store });
    await expect(l.delete('a')).rejects.toThrow('down');
    expect(store.forgotten).toEqual([]);
  });
});

describe('groups respect and start blocks', () => {
  function pair(): { user: RateLimiter; ip: RateLimiter; clock: { now: number } } {
    const clock = { now: 0 };
    const user = new RateLimiter({ threshold: 2, windowSeconds: 10, blockSeconds: 60, clock: () => clock.now, name: 'user' });
    const ip = new RateLimiter({ threshold: 100, windowSeconds: 10, blockSeconds: 600, clock: () => clock.now, name: 'ip' });
    return { user, ip, clock };
  }

  it('a member that refuses starts its own key’s block; while blocked it refuses the group and the others are not charged', () => {
    const { user, ip, clock } = pair();
    const group = new RateLimitGroup([user, ip]);
    expect(group.allowRequestSync('u').allowed).toBe(true);
    expect(group.allowRequestSync('u').allowed).toBe(true);
    const third = group.allowRequestSync('u');
    expect(third).toMatchObject({ allowed: false, retryAfter: 60, binding: 0 });
    expect(third.results[0]).toEqual(refused(60, 60));
    // The member that allowed is neither charged nor blocked.
    expect(ip.peekSync('u').remaining).toBe(98);
    expect(ip.stats()).toMatchObject({ rejected: 0, blocked: 0 });
    expect(user.stats()).toMatchObject({ rejected: 1, blocked: 1 });
    clock.now = 30_000;
    for (let i = 0; i < 5; i++) expect(group.allowRequestSync('u')).toMatchObject({ allowed: false, retryAfter: 30 });
    expect(group.peekSync('u')).toMatchObject({ allowed: false, retryAfter: 30 });
    expect(ip.peekSync('u').remaining).toBe(100);
    expect(ip.stats().allowed).toBe(2);
    // The block is the limiter's: its own decisions see it too.
    expect(user.allowRequestSync('u')).toEqual(refused(30, 30));
    clock.now = 60_000;
    expect(group.allowRequestSync('u').allowed).toBe(true);
  });

  it('a blocked member refuses the group although every strategy would allow', async () => {
    const { user, ip } = pair();
    const group = new RateLimitGroup([
      { limiter: user, name: 'user' },
      { limiter: ip, key: () => '10.0.0.1', name: 'ip' },
    ]);
    await ip.block('10.0.0.1', 900);
    const r = await group.allowRequest('u');
    expect(r).toMatchObject({ allowed: false, retryAfter: 900, binding: 1, remaining: 0 });
    expect(r.results[0]).toMatchObject({ allowed: true });
    expect(user.peekSync('u').remaining).toBe(2);
    expect(user.stats()).toMatchObject({ allowed: 0, rejected: 0, blocked: 0 });
    expect(ip.stats()).toMatchObject({ rejected: 1, blocked: 1 });
  });

  it('with a store member, the in-memory blocks hold and the store is not charged', async () => {
    const { user } = pair();
    const store = new AwaitingStore(new SlidingWindowLog());
    const stored = new RateLimiter({ threshold: 10, windowSeconds: 10, strategy: store });
    const group = new RateLimitGroup([user, stored]);
    user.blockSync('u', 5);
    await expect(group.allowRequest('u')).resolves.toMatchObject({ allowed: false, retryAfter: 5, binding: 0 });
    expect(store.states.size).toBe(0);
    user.reset('u');
    await group.allowRequest('u');
    await group.allowRequest('u');
    // The in-memory member refuses: its block starts, the store records nothing more.
    await expect(group.allowRequest('u')).resolves.toMatchObject({ allowed: false, retryAfter: 60 });
    expect(user.stats().blocked).toBe(1);
    expect(await stored.peek('u')).toMatchObject({ remaining: 8 });
  });
});
