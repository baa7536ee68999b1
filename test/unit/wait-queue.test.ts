// waitForSlot: outbound throttling. Fake timers only (the limiter's clock reads the fake time):
// nothing here sleeps.
import { getEventListeners } from 'node:events';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RateLimiter, SlidingWindowLog } from '../../src/index.js';
import type { RateLimitStore, RateLimitStrategy, RateWardenWaitError, SlidingWindowLogState } from '../../src/index.js';
import { delayMs } from '../../src/wait-queue.js';
import { track } from '../support/track.js';

/** Lets pending promise callbacks run, without moving the fake time. */
async function flush(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}

/**
 * The default algorithm behind a store: its state in a Map of the store's own, each decision a
 * promise (a store that is not atomic: decided under the key's lock).
 */
function asyncLog(): RateLimitStore {
  const log = new SlidingWindowLog();
  const states = new Map<string, SlidingWindowLogState>();
  return {
    name: 'async-log',
    consume: async (key, now, cost, quota) => {
      const state = states.get(key) ?? log.createState(quota);
      const result = log.consume(state, now, cost, quota);
      if (result.allowed) states.set(key, state);
      return result;
    },
    peek: async (key, now, cost, quota) => log.peek(states.get(key), now, cost, quota),
  };
}

function limiter(threshold: number, windowSeconds: number, strategy?: RateLimitStrategy<unknown> | RateLimitStore): RateLimiter<unknown> {
  return new RateLimiter<unknown>({
    threshold,
    windowSeconds,
    clock: () => Date.now(),
    ...(strategy === undefined ? {} : { strategy }),
  });
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date', 'performance'] });
});

afterEach(() => {
  vi.useRealTimers();
});

describe('waitForSlot', () => {
  it('a signal whose addEventListener throws: the call rejects and leaves no waiter behind (found by attack)', async () => {
    for (const strategy of [undefined, asyncLog()]) {
      const l = limiter(3, 1, strategy);
      const hostile = { aborted: false, addEventListener: () => { throw new Error('boom'); }, removeEventListener: () => {} };
      await expect(l.waitForSlot('k', { signal: hostile as unknown as AbortSignal })).rejects.toThrow('boom');
      expect(l.stats().waiting).toBe(0);
      // The key's queue is not held by a ghost: the next waiter is served at once.
      const next = track(l.waitForSlot('k'));
      await flush();
      expect(next.value?.allowed).toBe(true);
      expect(vi.getTimerCount()).toBe(0);
    }
  });

  it('resolves at once, with the recorded result, when the request is allowed now', async () => {
    const l = limiter(2, 1);
    const result = await l.waitForSlot('a');
    expect(result).toEqual({ allowed: true, remaining: 1, retryAfter: 0, limit: 2, resetAfter: 1 });
    expect(l.peekSync('a').remaining).toBe(1);
    expect(vi.getTimerCount()).toBe(0);
    expect(l.stats().waiting).toBe(0);
  });

  it('waits exactly retryAfter, then resolves (not a millisecond before)', async () => {
    const l = limiter(2, 1);
    const start = Date.now();
    l.allowRequestSync('a');
    await vi.advanceTimersByTimeAsync(300);
    l.allowRequestSync('a');
    expect(l.peekSync('a').retryAfter).toBe(0.7);
    const wait = track(l.waitForSlot('a'));
    await flush();
    expect(wait.done).toBe(false);
    expect(vi.getTimerCount()).toBe(1);
    expect(l.stats().waiting).toBe(1);
    await vi.advanceTimersByTimeAsync(699);
    expect(wait.done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(wait.done).toBe(true);
    expect(wait.value?.allowed).toBe(true);
    expect(Date.now() - start).toBe(1_000);
    expect(l.peekSync('a').remaining).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    expect(l.stats().waiting).toBe(0);
  });

  it('rejects with the reason when the signal had already aborted, consuming nothing', async () => {
    const l = limiter(1, 1);
    const reason = new Error('gave up');
    await expect(l.waitForSlot('a', { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    expect(l.peekSync('a').remaining).toBe(1);
    expect(l.size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    // The default reason is an AbortError DOMException.
    const controller = new AbortController();
    controller.abort();
    await expect(l.waitForSlot('a', { signal: controller.signal })).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('rejects with the reason when aborted during the wait, removing its timer and listener; the next waiter gets the slot', async () => {
    const l = limiter(1, 1);
    l.allowRequestSync('a');
    const controller = new AbortController();
    const first = track(l.waitForSlot('a', { signal: controller.signal }));
    const second = track(l.waitForSlot('a'));
    await vi.advanceTimersByTimeAsync(400);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    const reason = new Error('timeout');
    controller.abort(reason);
    await flush();
    expect(first).toMatchObject({ done: true, rejected: true, error: reason });
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    expect(second.done).toBe(false);
    expect(l.stats().waiting).toBe(1);
    // The aborted waiter's timer is gone; the second one waits for the same slot, at 1 s.
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(599);
    expect(second.done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(second.value?.allowed).toBe(true);
    // Only the second waiter's request was recorded.
    expect(l.peekSync('a')).toMatchObject({ allowed: false, remaining: 0, retryAfter: 1 });
    expect(vi.getTimerCount()).toBe(0);
  });

  it('lets a waiter queued behind others abort without disturbing them', async () => {
    const l = limiter(1, 1);
    l.allowRequestSync('a');
    const controller = new AbortController();
    const order: string[] = [];
    const first = l.waitForSlot('a').then(() => order.push('first'));
    const middle = track(l.waitForSlot('a', { signal: controller.signal }));
    const last = l.waitForSlot('a').then(() => order.push('last'));
    controller.abort();
    await flush();
    expect(middle.rejected).toBe(true);
    expect(l.stats().waiting).toBe(2);
    await vi.advanceTimersByTimeAsync(2_000);
    await Promise.all([first, last]);
    expect(order).toEqual(['first', 'last']);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('rejects up front, without waiting, when the wait would exceed maxWaitSeconds', async () => {
    const l = limiter(1, 10);
    l.allowRequestSync('a');
    const started = Date.now();
    let caught: unknown;
    try {
      await l.waitForSlot('a', { maxWaitSeconds: 5 });
    } catch (error) {
      caught = error;
    }
    expect(Date.now()).toBe(started);
    expect(caught).toBeInstanceOf(RangeError);
    const error = caught as RateWardenWaitError;
    expect(error.code).toBe('ERR_RATEWARDEN_WAIT_TOO_LONG');
    expect(error.message).toBe(
      'Expected a slot within `maxWaitSeconds` (5 s), but waiting for one would take 10 s: the limit is 1 request per 10 s',
    );
    expect(error).toMatchObject({ retryAfter: 10, maxWaitSeconds: 5, limit: 1, windowSeconds: 10, cost: 1 });
    expect(vi.getTimerCount()).toBe(0);
    expect(l.stats()).toMatchObject({ waiting: 0, allowed: 1, rejected: 1 });
    // A bound the wait fits in exactly is enough.
    const fits = track(l.waitForSlot('a', { maxWaitSeconds: 10 }));
    await vi.advanceTimersByTimeAsync(10_000);
    expect(fits.value?.allowed).toBe(true);
    // maxWaitSeconds: 0 takes a free slot, and only a free one.
    expect((await l.waitForSlot('b', { maxWaitSeconds: 0 })).allowed).toBe(true);
    await expect(l.waitForSlot('b', { maxWaitSeconds: 0 })).rejects.toMatchObject({ code: 'ERR_RATEWARDEN_WAIT_TOO_LONG' });
  });

  it('rejects a waiter queued behind one due later than its bound at once, with the lower bound of its wait', async () => {
    const l = limiter(1, 10);
    l.allowRequestSync('a');
    const head = track(l.waitForSlot('a'));
    await flush();
    await vi.advanceTimersByTimeAsync(2_000);
    await expect(l.waitForSlot('a', { maxWaitSeconds: 5 })).rejects.toMatchObject({
      code: 'ERR_RATEWARDEN_WAIT_TOO_LONG',
      retryAfter: 8,
      message: expect.stringContaining('at least 8 s (behind 1 earlier waiter for the key)'),
    });
    // Queued before the head learnt its wait: rejected as soon as the head sets its timer.
    const m = limiter(1, 10);
    m.allowRequestSync('a');
    const start = Date.now();
    const first = track(m.waitForSlot('a', { maxWaitSeconds: 20 }));
    const impatient = track(m.waitForSlot('a', { maxWaitSeconds: 5 }));
    const second = track(m.waitForSlot('a', { maxWaitSeconds: 15 }));
    await flush();
    expect(first.done).toBe(false);
    expect(impatient.error).toMatchObject({ code: 'ERR_RATEWARDEN_WAIT_TOO_LONG', retryAfter: 10 });
    expect(Date.now()).toBe(start);
    // The first is served at 10 s; the second could be at 20 s at best, more than its 15 s: it
    // learns it when its turn comes, at 10 s, not at its deadline.
    expect(second.done).toBe(false);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(first.value?.allowed).toBe(true);
    expect(second.error).toMatchObject({ code: 'ERR_RATEWARDEN_WAIT_TOO_LONG', retryAfter: 10 });
    expect(Date.now() - start).toBe(10_000);
    expect(head.done).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('rejects at once, recording nothing, when the cost exceeds the threshold (retryAfter Infinity)', async () => {
    const l = limiter(3, 1);
    const error = await l.waitForSlot('a', { cost: 4 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RangeError);
    expect(error).toMatchObject({ code: 'ERR_RATEWARDEN_WAIT_TOO_LONG', retryAfter: Infinity, cost: 4, limit: 3 });
    expect((error as Error).message).toBe(
      'Expected a request the limit can allow, but one of cost 4 never can (the limit is 3 requests per 1 s): waiting would not help',
    );
    expect(l.size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    expect((await l.waitForSlot('a', { cost: 3 })).remaining).toBe(0);
  });

  it('serves the waiters of one key in arrival order (FIFO), one per slot', async () => {
    const l = limiter(1, 1);
    l.allowRequestSync('a');
    const start = Date.now();
    const served: [string, number][] = [];
    const waits = ['first', 'second', 'third'].map((name) =>
      l.waitForSlot('a').then(() => served.push([name, Date.now() - start])),
    );
    await vi.advanceTimersByTimeAsync(3_000);
    await Promise.all(waits);
    expect(served).toEqual([
      ['first', 1_000],
      ['second', 2_000],
      ['third', 3_000],
    ]);
    expect(vi.getTimerCount()).toBe(0);
    expect(l.stats().waiting).toBe(0);
  });

  it('lets no later waiter overtake an earlier one, not even a smaller request that would fit now', async () => {
    const l = limiter(3, 1);
    l.allowRequestSync('a');
    const served: string[] = [];
    const big = l.waitForSlot('a', { cost: 3 }).then(() => served.push('big'));
    const small = l.waitForSlot('a', { cost: 1 }).then(() => served.push('small'));
    await flush();
    expect(served).toEqual([]);
    expect(l.peekSync('a').remaining).toBe(2);
    await vi.advanceTimersByTimeAsync(1_000);
    await big;
    expect(served).toEqual(['big']);
    await vi.advanceTimersByTimeAsync(1_000);
    await small;
    expect(served).toEqual(['big', 'small']);
  });

  it('serves several waiters at once when the slots are there', async () => {
    const l = limiter(3, 1);
    const results = await Promise.all([l.waitForSlot('a'), l.waitForSlot('a'), l.waitForSlot('a')]);
    expect(results.map((r) => r.remaining)).toEqual([2, 1, 0]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('never makes waiters of different keys wait for each other', async () => {
    const l = limiter(1, 60);
    l.allowRequestSync('a');
    const a = track(l.waitForSlot('a'));
    const b = await l.waitForSlot('b');
    expect(b.allowed).toBe(true);
    expect(a.done).toBe(false);
    expect(l.stats().waiting).toBe(1);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(a.value?.allowed).toBe(true);
  });

  it('leaves no timer pending once every waiter has settled, however it settled', async () => {
    const l = limiter(1, 1);
    l.allowRequestSync('a');
    const controller = new AbortController();
    const outcomes = [
      l.waitForSlot('a').catch(() => 'rejected'),
      l.waitForSlot('a', { signal: controller.signal }).catch(() => 'aborted'),
      l.waitForSlot('a', { maxWaitSeconds: 1.5 }).catch(() => 'too long'),
      l.waitForSlot('a', { cost: 2 }).catch(() => 'never'),
      l.waitForSlot('b', { signal: AbortSignal.timeout(100_000) }),
    ];
    await vi.advanceTimersByTimeAsync(500);
    controller.abort();
    await vi.advanceTimersByTimeAsync(5_000);
    const settled = await Promise.all(outcomes);
    expect(settled.slice(1, 4)).toEqual(['aborted', 'too long', 'never']);
    expect(settled[0]).toMatchObject({ allowed: true });
    // AbortSignal.timeout's own timer is the host's, not the limiter's.
    expect(vi.getTimerCount()).toBe(0);
    expect(l.stats().waiting).toBe(0);
  });

  it('wakes a waiter at once when reset() forgets its key', async () => {
    const l = limiter(1, 60);
    l.allowRequestSync('a');
    const wait = track(l.waitForSlot('a'));
    await flush();
    expect(l.reset('a')).toBe(true);
    await flush();
    expect(wait.value?.allowed).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('validates its options, rejecting (never throwing) with errors naming them', async () => {
    const l = limiter(1, 1);
    const cases: [unknown, unknown, ErrorConstructor, RegExp][] = [
      ['', undefined, RangeError, /`user`/],
      ['a', 5, TypeError, /`options`/],
      ['a', { cost: 0 }, RangeError, /`cost`/],
      ['a', { cost: '1' }, TypeError, /`cost`/],
      ['a', { signal: {} }, TypeError, /`signal` to be an AbortSignal/],
      ['a', { maxWaitSeconds: -1 }, RangeError, /`maxWaitSeconds`/],
      ['a', { maxWaitSeconds: Number.NaN }, RangeError, /`maxWaitSeconds`/],
      ['a', { maxWaitSeconds: '5' }, TypeError, /`maxWaitSeconds`/],
    ];
    for (const [user, options, type, message] of cases) {
      let pending: Promise<unknown> | undefined;
      expect(() => {
        pending = l.waitForSlot(user as string, options as undefined).catch((e: unknown) => e);
      }).not.toThrow();
      const error = await pending;
      expect(error).toBeInstanceOf(type);
      expect((error as Error).message).toMatch(message);
    }
    expect(l.size).toBe(0);
    expect((await l.waitForSlot('a', { maxWaitSeconds: Infinity })).allowed).toBe(true);
  });

  it('works with a User object and a tier chosen by limitFor', async () => {
    const pro = { threshold: 2, windowSeconds: 1 };
    const l = new RateLimiter({
      threshold: 1,
      windowSeconds: 1,
      clock: () => Date.now(),
      limitFor: (user) => (typeof user === 'object' && user.name === 'pro' ? pro : undefined),
    });
    const user = { id: 'u1', name: 'pro' };
    expect((await l.waitForSlot(user)).limit).toBe(2);
    expect((await l.waitForSlot(user)).remaining).toBe(0);
    await expect(l.waitForSlot(user, { cost: 3 })).rejects.toMatchObject({ limit: 2, retryAfter: Infinity });
    const third = track(l.waitForSlot(user));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(third.value?.allowed).toBe(true);
  });

  it('keeps the queue consistent when a decision listener aborts the waiter being decided', async () => {
    const l = limiter(1, 1);
    l.allowRequestSync('a');
    const controller = new AbortController();
    const first = track(l.waitForSlot('a', { signal: controller.signal }));
    const second = track(l.waitForSlot('a'));
    // Abort the first waiter from inside the decision made for it (its first retry, at 1 s).
    let decisions = 0;
    l.on('decision', () => {
      decisions++;
      if (decisions === 1) controller.abort(new Error('from a listener'));
    });
    await vi.advanceTimersByTimeAsync(1_000);
    await flush();
    expect(first.error).toEqual(new Error('from a listener'));
    // The first waiter was allowed (and recorded) before the abort; the second waits one more
    // window, decided once per attempt, with one timer.
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(1_000);
    await flush();
    expect(second.value).toMatchObject({ allowed: true });
    expect(decisions).toBe(3);
    expect(vi.getTimerCount()).toBe(0);
  });

  describe('with a store', () => {
    it('waits, serves in order and leaves no timer', async () => {
      const l = limiter(1, 1, asyncLog());
      await l.allowRequest('a');
      const start = Date.now();
      const served: [string, number][] = [];
      const waits = ['first', 'second', 'third'].map((name) =>
        l.waitForSlot('a').then((r) => served.push([`${name} ${r.allowed}`, Date.now() - start])),
      );
      await vi.advanceTimersByTimeAsync(999);
      expect(served).toEqual([]);
      await vi.advanceTimersByTimeAsync(2_001);
      await Promise.all(waits);
      expect(served).toEqual([
        ['first true', 1_000],
        ['second true', 2_000],
        ['third true', 3_000],
      ]);
      expect(vi.getTimerCount()).toBe(0);
      expect(l.stats()).toMatchObject({ waiting: 0, allowed: 4 });
    });

    it('aborts a waiter during its wait, consuming nothing, and rejects beyond maxWaitSeconds up front', async () => {
      const l = limiter(1, 1, asyncLog());
      await l.allowRequest('a');
      const controller = new AbortController();
      const first = track(l.waitForSlot('a', { signal: controller.signal }));
      const second = track(l.waitForSlot('a'));
      await vi.advanceTimersByTimeAsync(500);
      controller.abort(new Error('stop'));
      await flush();
      expect(first.error).toEqual(new Error('stop'));
      await vi.advanceTimersByTimeAsync(500);
      expect(second.value?.allowed).toBe(true);
      await expect(l.waitForSlot('a', { maxWaitSeconds: 0.5 })).rejects.toMatchObject({ retryAfter: 1 });
      expect((await l.peek('a')).remaining).toBe(0);
      expect(vi.getTimerCount()).toBe(0);
    });

    it('consumes nothing for a waiter aborted while its attempt waits for the key\'s lock', async () => {
      const log = asyncLog();
      let release: (() => void) | undefined;
      let calls = 0;
      const gated: RateLimitStore = {
        ...log,
        consume: (...args) => {
          calls++;
          // The first decision holds the key's lock until released.
          if (calls > 1) return log.consume(...args);
          return new Promise<void>((resolve) => {
            release = resolve;
          }).then(() => log.consume(...args));
        },
      };
      const l = limiter(5, 1, gated);
      const holding = l.allowRequest('a');
      await flush();
      const controller = new AbortController();
      const waiter = track(l.waitForSlot('a', { signal: controller.signal }));
      await flush();
      controller.abort(new Error('gone'));
      await flush();
      expect(waiter.error).toEqual(new Error('gone'));
      release?.();
      await holding;
      await flush();
      // Only the first decision ran: the aborted waiter's attempt never decided.
      expect(calls).toBe(1);
      expect((await l.peek('a')).remaining).toBe(4);
      expect(l.stats()).toMatchObject({ allowed: 1, waiting: 0 });
    });

    it('rejects at once a waiter aborted while its attempt is in flight; the attempt completes in the store', async () => {
      const log = asyncLog();
      let release: (() => void) | undefined;
      const slow: RateLimitStore = {
        ...log,
        consume: (...args) =>
          new Promise<void>((resolve) => {
            release = resolve;
          }).then(() => log.consume(...args)),
      };
      const l = limiter(2, 1, slow);
      const controller = new AbortController();
      const first = track(l.waitForSlot('a', { signal: controller.signal }));
      const second = track(l.waitForSlot('a'));
      await flush();
      controller.abort(new Error('late'));
      await flush();
      expect(first.error).toEqual(new Error('late'));
      expect(second.done).toBe(false);
      release?.();
      await flush();
      // The aborted attempt was allowed and recorded (documented); the next waiter tried after it.
      release?.();
      await flush();
      expect(second.value).toMatchObject({ allowed: true, remaining: 0 });
      expect(l.stats()).toMatchObject({ allowed: 2, waiting: 0 });
    });

    it('queues the waiters of an atomic store (no per-key lock) the same way', async () => {
      const atomic: RateLimitStore = { ...asyncLog(), atomic: true };
      const l = limiter(1, 1, atomic);
      const start = Date.now();
      const served: number[] = [];
      const waits = [1, 2, 3].map((n) => l.waitForSlot('a').then(() => served.push(n * 10_000 + Date.now() - start)));
      await vi.advanceTimersByTimeAsync(2_000);
      await Promise.all(waits);
      expect(served).toEqual([10_000, 21_000, 32_000]);
      expect(l.size).toBe(0);
      expect(vi.getTimerCount()).toBe(0);
    });

    it('rejects the waiter whose attempt fails, and lets the next one try', async () => {
      let fail = true;
      const log = asyncLog();
      const flaky: RateLimitStore = {
        ...log,
        consume: async (...args) => {
          if (fail) {
            fail = false;
            throw new Error('store down');
          }
          return log.consume(...args);
        },
      };
      const l = limiter(1, 1, flaky);
      const first = l.waitForSlot('a');
      const second = l.waitForSlot('a');
      await expect(first).rejects.toThrow('store down');
      expect((await second).allowed).toBe(true);
      expect(vi.getTimerCount()).toBe(0);
    });
  });
});

describe('a too-long wait is reported from the call, including the wait behind the waiters ahead', () => {
  // Found by attack: 1 per 0.2 s; a waiter bound to 0.25 s queued behind one bound to 1 s is
  // refused when its turn comes, 0.2 s after its call, and was told the wait "would take 0.2 s",
  // less than its bound: the part still to come, not the wait that exceeds the bound.
  it('a waiter refused after waiting behind another is told its whole wait, and what remains', async () => {
    const l = limiter(1, 0.2);
    l.allowRequestSync('m');
    const a = track(l.waitForSlot('m', { maxWaitSeconds: 1 }));
    const b = track(l.waitForSlot('m', { maxWaitSeconds: 0.25 }));
    await vi.advanceTimersByTimeAsync(200);
    expect(a.value?.allowed).toBe(true);
    const error = b.error as RateWardenWaitError;
    expect(error.message).toBe(
      'Expected a slot within `maxWaitSeconds` (0.25 s), but waiting for one would take 0.4 s from the call ' +
        '(0.2 s waited so far, 0.2 s more): the limit is 1 request per 0.2 s',
    );
    expect(error).toMatchObject({ code: 'ERR_RATEWARDEN_WAIT_TOO_LONG', retryAfter: 0.2, maxWaitSeconds: 0.25 });
  });

  it('a waiter refused while others are still ahead is told the lower bound of its whole wait', async () => {
    const l = limiter(1, 10);
    l.allowRequestSync('a');
    const first = track(l.waitForSlot('a', { maxWaitSeconds: 30 }));
    const second = track(l.waitForSlot('a', { maxWaitSeconds: 25 }));
    const third = track(l.waitForSlot('a', { maxWaitSeconds: 15 }));
    await flush();
    expect(third.done).toBe(false);
    // At 10 s the first is served; the second is due at 20 s, so the third (bound 15 s) is not.
    await vi.advanceTimersByTimeAsync(10_000);
    expect(first.value?.allowed).toBe(true);
    expect(second.done).toBe(false);
    expect((third.error as Error).message).toBe(
      'Expected a slot within `maxWaitSeconds` (15 s), but waiting for one would take at least 20 s from the call ' +
        '(10 s waited so far, at least 10 s more behind 1 earlier waiter for the key): the limit is 1 request per 10 s',
    );
    expect(third.error).toMatchObject({ retryAfter: 10, maxWaitSeconds: 15 });
    await vi.advanceTimersByTimeAsync(10_000);
    expect(second.value?.allowed).toBe(true);
  });

  it('property: every refusal reports a wait longer than the bound, and the time waited as it was', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 1, max: 500 }),
        fc.integer({ min: 0, max: 3 }),
        fc.array(fc.record({ delayMs: fc.integer({ min: 0, max: 300 }), maxWaitMs: fc.integer({ min: 0, max: 1500 }) }), {
          minLength: 1,
          maxLength: 8,
        }),
        async (threshold, windowMs, prefill, waiters) => {
          const l = limiter(threshold, windowMs / 1000);
          for (let i = 0; i < prefill; i++) l.allowRequestSync('k');
          const calls: { at: number; maxWaitSeconds: number; outcome: { error?: unknown; at?: number } }[] = [];
          for (const { delayMs, maxWaitMs } of waiters) {
            await vi.advanceTimersByTimeAsync(delayMs);
            const call = { at: Date.now(), maxWaitSeconds: maxWaitMs / 1000, outcome: {} as { error?: unknown; at?: number } };
            l.waitForSlot('k', { maxWaitSeconds: call.maxWaitSeconds }).then(
              () => {},
              (error: unknown) => {
                call.outcome = { error, at: Date.now() };
              },
            );
            calls.push(call);
          }
          await vi.advanceTimersByTimeAsync((waiters.length + prefill + 2) * windowMs);
          expect(l.stats().waiting).toBe(0);
          for (const { at, maxWaitSeconds, outcome } of calls) {
            if (outcome.error === undefined) continue;
            const error = outcome.error as RateWardenWaitError;
            expect(error.code).toBe('ERR_RATEWARDEN_WAIT_TOO_LONG');
            const match = /would take (?:at least )?([\d.]+) s(?: from the call \(([\d.]+) s waited so far, (?:at least )?([\d.]+) s more)?/.exec(
              error.message,
            );
            expect(match, error.message).not.toBeNull();
            const [, total, waited = '0', more = total] = match as unknown as [string, string, string | undefined, string | undefined];
            // The wait that is reported exceeds the bound.
            expect(Number(total)).toBeGreaterThan(maxWaitSeconds);
            // What was waited is the time since the call; the rest is what retryAfter says.
            expect(Number(waited)).toBeCloseTo(((outcome.at as number) - at) / 1000, 6);
            expect(Number(more)).toBeCloseTo(error.retryAfter, 6);
            expect(Number(total)).toBeCloseTo(Number(waited) + error.retryAfter, 5);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('a waiter that gives up at its own turn lets the waiters behind it try', () => {
  for (const [name, store] of [
    ['in memory', (): RateLimitStore | undefined => undefined],
    ['with a store', asyncLog],
  ] as const) {
    it(name, async () => {
      const l = limiter(1, 1, store());
      await l.allowRequest('a');
      const first = track(l.waitForSlot('a'));
      // Its bound (1.5 s) covers the first waiter's slot (1 s) but not its own (2 s): it learns
      // that at its turn, at 1 s.
      const impatient = track(l.waitForSlot('a', { maxWaitSeconds: 1.5 }));
      const last = track(l.waitForSlot('a'));
      await flush();
      expect(impatient.done).toBe(false);
      await vi.advanceTimersByTimeAsync(1_000);
      expect(first.value).toMatchObject({ allowed: true, remaining: 0 });
      expect(impatient.error).toMatchObject({ code: 'ERR_RATEWARDEN_WAIT_TOO_LONG', retryAfter: 1, maxWaitSeconds: 1.5, cost: 1 });
      expect((impatient.error as Error).message).toBe(
        'Expected a slot within `maxWaitSeconds` (1.5 s), but waiting for one would take 2 s from the call (1 s waited so far, 1 s more): the limit is 1 request per 1 s',
      );
      // The last waiter is not left hanging: it tried at once and waits for its slot, at 2 s.
      expect(last.done).toBe(false);
      expect(l.stats().waiting).toBe(1);
      expect(vi.getTimerCount()).toBe(1);
      await vi.advanceTimersByTimeAsync(999);
      expect(last.done).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      expect(last.value).toMatchObject({ allowed: true, remaining: 0 });
      expect(l.stats()).toMatchObject({ waiting: 0, allowed: 3 });
      expect(vi.getTimerCount()).toBe(0);
    });
  }

  it('a head whose request can no longer fit (its tier shrank) is rejected, and the next waiter tries', async () => {
    let tier = { threshold: 2, windowSeconds: 1 };
    const l = new RateLimiter({ threshold: 2, windowSeconds: 1, clock: () => Date.now(), limitFor: () => tier });
    l.allowRequestSync('a', { cost: 2 });
    const big = track(l.waitForSlot('a', { cost: 2 }));
    const small = track(l.waitForSlot('a'));
    await flush();
    tier = { threshold: 1, windowSeconds: 1 };
    await vi.advanceTimersByTimeAsync(1_000);
    expect(big.error).toBeInstanceOf(RangeError);
    expect(big.error).toMatchObject({ code: 'ERR_RATEWARDEN_WAIT_TOO_LONG', retryAfter: Infinity, cost: 2 });
    expect(small.value).toMatchObject({ allowed: true, remaining: 0, limit: 1 });
    expect(l.stats().waiting).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('a head whose clock fails after its attempt is rejected with the error, and the next waiter tries', async () => {
    let failNext = false;
    const l = new RateLimiter({
      threshold: 1,
      windowSeconds: 1,
      clock: () => {
        if (!failNext) return Date.now();
        failNext = false;
        throw new Error('clock broke');
      },
    });
    l.allowRequestSync('a');
    const first = track(l.waitForSlot('a'));
    const second = track(l.waitForSlot('a'));
    const third = track(l.waitForSlot('a'));
    await flush();
    // The reading after the next rejection fails: the one the rejected waiter takes to set its
    // timer (the decision itself read the clock before).
    let armed = true;
    l.on('decision', (_key, result) => {
      if (armed && !result.allowed) failNext = true;
      if (!result.allowed) armed = false;
    });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(first.value).toMatchObject({ allowed: true });
    // The second waiter's attempt was decided (rejected), then its clock reading failed.
    expect(second.error).toEqual(new Error('clock broke'));
    // The third tried next, and waits for its slot at 2 s.
    expect(l.stats()).toMatchObject({ waiting: 1, allowed: 2, rejected: 3 });
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(third.value).toMatchObject({ allowed: true });
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('a waiter whose retry cannot be decided (the clock fails)', () => {
  it('is rejected with the error, and the next waiter tries at once', async () => {
    let failed = false;
    const l = new RateLimiter({
      threshold: 1,
      windowSeconds: 1,
      clock: () => {
        const now = Date.now();
        if (now - start >= 1_000 && !failed) {
          failed = true;
          throw new Error('clock broke');
        }
        return now;
      },
    });
    const start = Date.now();
    l.allowRequestSync('a');
    const first = track(l.waitForSlot('a'));
    const second = track(l.waitForSlot('a'));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(first.error).toEqual(new Error('clock broke'));
    expect(second.value).toMatchObject({ allowed: true, remaining: 0 });
    expect(l.stats()).toMatchObject({ waiting: 0, allowed: 2, rejected: 1 });
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('the only waiter whose retry cannot be decided', () => {
  it('leaves the key usable: a later waiter is served', async () => {
    let fail = false;
    const l = new RateLimiter({
      threshold: 1,
      windowSeconds: 1,
      clock: () => {
        if (fail) {
          fail = false;
          throw new Error('clock broke');
        }
        return Date.now();
      },
    });
    l.allowRequestSync('a');
    const only = track(l.waitForSlot('a'));
    await flush();
    fail = true;
    await vi.advanceTimersByTimeAsync(1_000);
    expect(only.error).toEqual(new Error('clock broke'));
    const later = track(l.waitForSlot('a'));
    await flush();
    expect(later.value).toMatchObject({ allowed: true, remaining: 0 });
    expect(l.stats().waiting).toBe(0);
  });
});

describe('waiters that will not wait as long as those ahead of them are refused early', () => {
  it('at the call, naming how many wait ahead and the lower bound of the wait', async () => {
    const l = limiter(1, 10);
    l.allowRequestSync('a');
    const first = track(l.waitForSlot('a'));
    const second = track(l.waitForSlot('a'));
    await flush();
    await vi.advanceTimersByTimeAsync(4_000);
    const error = await l.waitForSlot('a', { maxWaitSeconds: 5.5 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RangeError);
    expect(error).toMatchObject({ code: 'ERR_RATEWARDEN_WAIT_TOO_LONG', retryAfter: 6, maxWaitSeconds: 5.5, cost: 1, limit: 1 });
    expect((error as Error).message).toBe(
      'Expected a slot within `maxWaitSeconds` (5.5 s), but waiting for one would take at least 6 s ' +
        '(behind 2 earlier waiters for the key): the limit is 1 request per 10 s',
    );
    // The head is due at exactly 6 s from now: a bound of 6 s is enough to queue.
    const patient = track(l.waitForSlot('a', { maxWaitSeconds: 6 }));
    await flush();
    expect(patient.done).toBe(false);
    expect(l.stats()).toMatchObject({ waiting: 3, rejected: 1, allowed: 1 });
    await vi.advanceTimersByTimeAsync(6_000);
    expect(first.value?.allowed).toBe(true);
    // The second is due at 20 s and the patient one at 30 s at best: more than its bound (10 s
    // after its call at 4 s): refused now, behind the second.
    expect(patient.error).toMatchObject({ code: 'ERR_RATEWARDEN_WAIT_TOO_LONG', retryAfter: 10 });
    expect((patient.error as Error).message).toContain('at least 10 s more behind 1 earlier waiter for the key)');
    await vi.advanceTimersByTimeAsync(10_000);
    expect(second.value?.allowed).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('when the head learns a later slot, each waiter behind it whose bound is shorter, counting those that stay ahead', async () => {
    // The limiter's clock is set by hand; the timers are fake: a request taken between the
    // head's timer and its attempt pushes its slot later.
    let now = 0;
    const l = new RateLimiter({ threshold: 1, windowSeconds: 1, clock: () => now });
    l.allowRequestSync('a');
    const head = track(l.waitForSlot('a'));
    const stays = track(l.waitForSlot('a', { maxWaitSeconds: 3 }));
    const leaves = track(l.waitForSlot('a', { maxWaitSeconds: 1.5 }));
    const last = track(l.waitForSlot('a'));
    await flush();
    expect(leaves.done).toBe(false);
    now = 1_000;
    expect(l.allowRequestSync('a').allowed).toBe(true);
    await vi.advanceTimersByTimeAsync(1_000);
    // The head found no slot: it now waits until 2 s, later than the third waiter's bound.
    expect(head.done).toBe(false);
    expect(stays.done).toBe(false);
    expect(leaves.error).toMatchObject({ code: 'ERR_RATEWARDEN_WAIT_TOO_LONG', retryAfter: 1, maxWaitSeconds: 1.5 });
    expect((leaves.error as Error).message).toBe(
      'Expected a slot within `maxWaitSeconds` (1.5 s), but waiting for one would take at least 2 s from the call ' +
        '(1 s waited so far, at least 1 s more behind 2 earlier waiters for the key): the limit is 1 request per 1 s',
    );
    expect(last.done).toBe(false);
    expect(l.stats().waiting).toBe(3);
  });
});

describe('float noise in maxWaitSeconds is not a longer wait', () => {
  // 0.7 - 0.4 is 0.29999999999999993 and 1.7 - 0.4 is 1.2999999999999998: a bound a hair under
  // the wait it means is enough, at the first attempt, at the call, and behind a head.
  it('at the first attempt and at the call', async () => {
    // A clock of small readings (Date.now() is too coarse for this noise), moved with the timers.
    let now = 0;
    const l = new RateLimiter({ threshold: 1, windowSeconds: 1, clock: () => now });
    l.allowRequestSync('a');
    now = 700;
    const head = track(l.waitForSlot('a', { maxWaitSeconds: 0.7 - 0.4 }));
    const behind = track(l.waitForSlot('a', { maxWaitSeconds: 0.7 - 0.4 }));
    await flush();
    expect(head.done).toBe(false);
    expect(behind.done).toBe(false);
    now = 1_000;
    await vi.advanceTimersByTimeAsync(300);
    expect(head.value?.allowed).toBe(true);
    // The second one could not have its slot before 2 s: refused at its turn.
    expect(behind.error).toMatchObject({ code: 'ERR_RATEWARDEN_WAIT_TOO_LONG', retryAfter: 1 });
  });

  it('behind a head that learns a later slot', async () => {
    let now = 0;
    const l = new RateLimiter({ threshold: 1, windowSeconds: 1, clock: () => now });
    l.allowRequestSync('a');
    const head = track(l.waitForSlot('a'));
    now = 700;
    const behind = track(l.waitForSlot('a', { maxWaitSeconds: 1.7 - 0.4 }));
    now = 1_000;
    l.allowRequestSync('a'); // takes the head's slot: the head now waits until 2 s
    await vi.advanceTimersByTimeAsync(1_000);
    expect(head.done).toBe(false);
    expect(behind.done).toBe(false);
    expect(l.stats().waiting).toBe(2);
  });
});

/**
 * A store deciding as the default algorithm, whose decisions can be held in flight (`hold`) until
 * `release()`, and made to fail (`failNext`).
 */
function heldLog(): { store: RateLimitStore; hold: () => void; release: () => void; calls: () => number; failNext: () => void } {
  const log = asyncLog();
  let held = false;
  let fail = false;
  let pending: (() => void)[] = [];
  let calls = 0;
  const store: RateLimitStore = {
    ...log,
    consume: async (...args) => {
      calls++;
      if (held) await new Promise<void>((resolve) => pending.push(resolve));
      if (fail) {
        fail = false;
        throw new Error('store down');
      }
      return log.consume(...args);
    },
  };
  return {
    store,
    hold: () => {
      held = true;
    },
    release: () => {
      held = false;
      const waiting = pending;
      pending = [];
      for (const resolve of waiting) resolve();
    },
    calls: () => calls,
    failNext: () => {
      fail = true;
    },
  };
}

describe('a request that can never fit is refused before anything is decided', () => {
  it('in memory and with a store: no decision counted, nothing asked of the store', async () => {
    const held = heldLog();
    for (const l of [limiter(3, 1), limiter(3, 1, held.store)]) {
      await expect(l.waitForSlot('a', { cost: 4 })).rejects.toMatchObject({ retryAfter: Infinity, cost: 4 });
      expect(l.stats()).toMatchObject({ allowed: 0, rejected: 0, waiting: 0 });
    }
    expect(held.calls()).toBe(0);
  });
});

describe('aborting a waiter', () => {
  it('the head: the next waiter tries at once (it may ask for less)', async () => {
    const l = limiter(3, 1);
    l.allowRequestSync('a');
    const controller = new AbortController();
    const big = track(l.waitForSlot('a', { cost: 3, signal: controller.signal }));
    const small = track(l.waitForSlot('a'));
    await vi.advanceTimersByTimeAsync(100);
    expect(small.done).toBe(false);
    controller.abort(new Error('no longer needed'));
    await flush();
    expect(big.error).toEqual(new Error('no longer needed'));
    expect(small.value).toMatchObject({ allowed: true, remaining: 1 });
    expect(vi.getTimerCount()).toBe(0);
    expect(l.stats()).toMatchObject({ allowed: 2, rejected: 1, waiting: 0 });
  });

  it('behind the head: nothing is decided, and the head keeps its timer', async () => {
    const l = limiter(1, 1);
    l.allowRequestSync('a');
    const start = Date.now();
    const controller = new AbortController();
    const head = l.waitForSlot('a').then(() => Date.now() - start);
    const behind = track(l.waitForSlot('a', { signal: controller.signal }));
    await vi.advanceTimersByTimeAsync(300);
    controller.abort();
    await flush();
    expect(behind.rejected).toBe(true);
    expect(l.stats()).toMatchObject({ allowed: 1, rejected: 1, waiting: 1 });
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(700);
    expect(await head).toBe(1_000);
  });

  it('the last one, then another comes: it is queued behind the head and served', async () => {
    const l = limiter(1, 1);
    l.allowRequestSync('a');
    const controller = new AbortController();
    const head = track(l.waitForSlot('a'));
    const last = track(l.waitForSlot('a', { signal: controller.signal }));
    controller.abort();
    await flush();
    expect(last.rejected).toBe(true);
    const next = track(l.waitForSlot('a'));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(head.value?.allowed).toBe(true);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(next.value?.allowed).toBe(true);
    expect(l.stats().waiting).toBe(0);
  });

  it('a signal that cannot be listened to, behind a waiting head: nothing is decided, the head keeps its timer', async () => {
    const l = limiter(1, 1);
    l.allowRequestSync('a');
    const head = track(l.waitForSlot('a'));
    const hostile = { aborted: false, addEventListener: () => { throw new Error('boom'); }, removeEventListener: () => {} };
    await expect(l.waitForSlot('a', { signal: hostile as unknown as AbortSignal })).rejects.toThrow('boom');
    expect(l.stats()).toMatchObject({ allowed: 1, rejected: 1, waiting: 1 });
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(head.value?.allowed).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('the head, from a decision listener, on a refusal: the next waiter tries at once', async () => {
    const l = limiter(2, 1);
    l.allowRequestSync('a');
    const controller = new AbortController();
    const start = Date.now();
    const big = track(l.waitForSlot('a', { cost: 2, signal: controller.signal }));
    const small = l.waitForSlot('a').then((r) => [r.allowed, Date.now() - start]);
    await vi.advanceTimersByTimeAsync(500);
    l.allowRequestSync('a'); // at 1 s the big one still finds one unit used: refused again
    l.on('decision', (_key, result, cost) => {
      if (!result.allowed && cost === 2) controller.abort(new Error('aborted by a listener'));
    });
    await vi.advanceTimersByTimeAsync(500);
    expect(big.error).toEqual(new Error('aborted by a listener'));
    expect(await small).toEqual([true, 1_000]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('leaves no abort listener on a shared signal once its waiters are served or refused', async () => {
    const l = limiter(1, 1);
    const controller = new AbortController();
    const signal = controller.signal;
    expect((await l.waitForSlot('a', { signal })).allowed).toBe(true);
    const waiting = track(l.waitForSlot('a', { signal }));
    await expect(l.waitForSlot('a', { signal, maxWaitSeconds: 0.5 })).rejects.toMatchObject({ code: 'ERR_RATEWARDEN_WAIT_TOO_LONG' });
    expect(getEventListeners(signal, 'abort')).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(waiting.value?.allowed).toBe(true);
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);
  });
});

describe('waiting with a store whose attempts are in flight', () => {
  it('the head aborted in flight, then refused by the store: the next waiter tries at once, not before', async () => {
    const held = heldLog();
    const l = limiter(2, 1, held.store);
    await l.allowRequest('a');
    held.hold();
    const controller = new AbortController();
    const big = track(l.waitForSlot('a', { cost: 2, signal: controller.signal }));
    const small = track(l.waitForSlot('a'));
    await flush();
    controller.abort(new Error('gone'));
    await flush();
    expect(big.error).toEqual(new Error('gone'));
    // The next waiter waits for the attempt in flight to settle.
    expect(held.calls()).toBe(2);
    expect(small.done).toBe(false);
    held.release();
    await flush();
    await flush();
    // The big request was refused (one unit is used); the small one fits now.
    expect(small.value).toMatchObject({ allowed: true, remaining: 0 });
    expect(held.calls()).toBe(3);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('a waiter with a bound arriving while the head is being decided is queued, not refused', async () => {
    const held = heldLog();
    const l = limiter(2, 1, held.store);
    held.hold();
    const head = track(l.waitForSlot('a'));
    await flush();
    const bounded = track(l.waitForSlot('a', { maxWaitSeconds: 5 }));
    await flush();
    expect(bounded.done).toBe(false);
    held.release();
    await flush();
    await flush();
    expect(head.value).toMatchObject({ allowed: true, remaining: 1 });
    expect(bounded.value).toMatchObject({ allowed: true, remaining: 0 });
  });

  it('a failed attempt of the only waiter leaves the key usable by the next waiter', async () => {
    const held = heldLog();
    const l = limiter(1, 1, held.store);
    held.failNext();
    await expect(l.waitForSlot('a')).rejects.toThrow('store down');
    expect(l.stats().waiting).toBe(0);
    const next = track(l.waitForSlot('a'));
    await flush();
    expect(next.value?.allowed).toBe(true);
  });

  it('an aborted waiter whose attempt then fails is counted out once', async () => {
    const held = heldLog();
    const l = limiter(1, 1, held.store);
    held.hold();
    held.failNext();
    const controller = new AbortController();
    const waiter = track(l.waitForSlot('a', { signal: controller.signal }));
    await flush();
    controller.abort(new Error('gone'));
    await flush();
    expect(waiter.error).toEqual(new Error('gone'));
    held.release();
    await flush();
    expect(l.stats().waiting).toBe(0);
    const next = track(l.waitForSlot('a'));
    await flush();
    expect(next.value?.allowed).toBe(true);
    expect(l.stats().waiting).toBe(0);
  });
});

describe('a bound short of the wait by no more than float noise (1e-6 ms) is enough', () => {
  // 0.999999999 s is 999.999999 ms, exactly 1e-6 ms (in floating point) short of 1,000 ms.
  it('at the call, behind a head due at 1 s', async () => {
    let now = 0;
    const l = new RateLimiter({ threshold: 1, windowSeconds: 1, clock: () => now });
    l.allowRequestSync('a');
    const head = track(l.waitForSlot('a'));
    const bounded = track(l.waitForSlot('a', { maxWaitSeconds: 0.999999999 }));
    await flush();
    expect(bounded.done).toBe(false);
    now = 1_000;
    await vi.advanceTimersByTimeAsync(1_000);
    expect(head.value?.allowed).toBe(true);
    expect(bounded.error).toMatchObject({ code: 'ERR_RATEWARDEN_WAIT_TOO_LONG' });
  });

  it('behind a head that learns it is due at 2 s', async () => {
    let now = 0;
    const l = new RateLimiter({ threshold: 1, windowSeconds: 1, clock: () => now });
    l.allowRequestSync('a');
    const head = track(l.waitForSlot('a'));
    const bounded = track(l.waitForSlot('a', { maxWaitSeconds: 1.999999999 }));
    now = 1_000;
    l.allowRequestSync('a');
    await vi.advanceTimersByTimeAsync(1_000);
    expect(head.done).toBe(false);
    expect(bounded.done).toBe(false);
    expect(l.stats().waiting).toBe(2);
  });
});

describe('delayMs: the timer delay of a wait', () => {
  it('is whole milliseconds, rounded up from the microsecond, at least 1 and at most 2^31 - 2', () => {
    expect(delayMs(0)).toBe(1);
    expect(delayMs(0.0000001)).toBe(1);
    expect(delayMs(0.0005)).toBe(1);
    expect(delayMs(0.001)).toBe(1);
    expect(delayMs(0.0010001)).toBe(1); // 1.0001 ms is 1 ms to the microsecond
    expect(delayMs(0.001001)).toBe(2);
    expect(delayMs(0.03)).toBe(30);
    expect(delayMs(0.7)).toBe(700);
    expect(delayMs((2 ** 31 - 2) / 1000)).toBe(2 ** 31 - 2);
    expect(delayMs((2 ** 31 - 1) / 1000)).toBe(2 ** 31 - 2);
    expect(delayMs(1e9)).toBe(2 ** 31 - 2);
  });
});
