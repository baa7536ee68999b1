// One `abort` listener per AbortSignal, however many waitForSlot calls share it (issue 11, item
// 10). Fake timers only: the limiters' clocks read the fake time, nothing sleeps.
import { getEventListeners } from 'node:events';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { watchAbort } from '../../src/abort-watch.js';
import { RateLimiter, SlidingWindowLog } from '../../src/index.js';
import type { RateLimitResult, RateLimitStore, SlidingWindowLogState } from '../../src/index.js';
import { track, type Tracked as TrackedOf } from '../support/track.js';

/** A tracked decision. */
type Tracked = TrackedOf<RateLimitResult>;

/** Lets pending promise jobs and `process.nextTick` callbacks (where warnings are emitted) run. */
async function flush(): Promise<void> {
  for (let i = 0; i < 10; i++) {
    await Promise.resolve();
    await new Promise<void>((resolve) => process.nextTick(resolve));
  }
}

function listeners(signal: AbortSignal): number {
  return getEventListeners(signal, 'abort').length;
}

/** The default algorithm behind a store that awaits (decided under the key's lock). */
function asyncLog(failing?: { fail: boolean }): RateLimitStore {
  const log = new SlidingWindowLog();
  const states = new Map<string, SlidingWindowLogState>();
  return {
    name: 'async-log',
    consume: async (key, now, cost, quota) => {
      await Promise.resolve();
      if (failing?.fail === true) throw new Error('store down');
      const state = states.get(key) ?? log.createState(quota);
      const result = log.consume(state, now, cost, quota);
      if (result.allowed) states.set(key, state);
      return result;
    },
    peek: async (key, now, cost, quota) => log.peek(states.get(key), now, cost, quota),
  };
}

const warnings: Error[] = [];
const onWarning = (warning: Error): void => {
  warnings.push(warning);
};

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date', 'performance'] });
  warnings.length = 0;
  process.on('warning', onWarning);
});

afterEach(() => {
  process.off('warning', onWarning);
  vi.useRealTimers();
});

const WAITERS = 50;

/**
 * Each way a waiter settles, set up for 50 waiters on one shared signal: `start` queues them
 * (they must all be waiting when it returns), `finish` makes them all settle, `check` looks at
 * each outcome.
 */
interface SettleCase {
  readonly name: string;
  run(signal: AbortSignal, controller: AbortController): Promise<{ waiters: Tracked[]; finish: () => Promise<void> }>;
  check(waiter: Tracked, index: number): void;
}

const SETTLE_CASES: SettleCase[] = [
  {
    name: 'allowed, one per window (in memory)',
    async run(signal) {
      const l = new RateLimiter({ threshold: 1, windowSeconds: 1, clock: () => Date.now() });
      l.allowRequestSync('k');
      const waiters = Array.from({ length: WAITERS }, () => track(l.waitForSlot('k', { signal })));
      return { waiters, finish: () => vi.advanceTimersByTimeAsync(WAITERS * 1_000).then(() => {}) };
    },
    check: (w) => expect(w.value?.allowed).toBe(true),
  },
  {
    name: 'allowed, through a store that awaits',
    async run(signal) {
      const l = new RateLimiter({ threshold: 1, windowSeconds: 1, clock: () => Date.now(), strategy: asyncLog() });
      await l.allowRequest('k');
      const waiters = Array.from({ length: WAITERS }, () => track(l.waitForSlot('k', { signal })));
      await flush();
      return { waiters, finish: () => vi.advanceTimersByTimeAsync(WAITERS * 1_000).then(() => {}) };
    },
    check: (w) => expect(w.value?.allowed).toBe(true),
  },
  {
    name: 'allowed after reset() wakes them, one key each',
    async run(signal) {
      const l = new RateLimiter({ threshold: 1, windowSeconds: 3600, clock: () => Date.now() });
      const keys = Array.from({ length: WAITERS }, (_, i) => `k${i}`);
      for (const key of keys) l.allowRequestSync(key);
      const waiters = keys.map((key) => track(l.waitForSlot(key, { signal })));
      return {
        waiters,
        finish: async () => {
          for (const key of keys) l.reset(key);
          await flush();
        },
      };
    },
    check: (w) => expect(w.value?.allowed).toBe(true),
  },
  {
    name: 'aborted: the shared signal rejects every one with its reason',
    async run(signal, controller) {
      const l = new RateLimiter({ threshold: 1, windowSeconds: 1, clock: () => Date.now() });
      l.allowRequestSync('k');
      // Half on one key, half spread over others, and a store's waiters too.
      const s = new RateLimiter({ threshold: 1, windowSeconds: 1, clock: () => Date.now(), strategy: asyncLog() });
      await s.allowRequest('k');
      const waiters = Array.from({ length: WAITERS }, (_, i) =>
        track(i % 3 === 0 ? s.waitForSlot('k', { signal }) : l.waitForSlot(i % 2 === 0 ? 'k' : `k${i}`, { signal, cost: 1 })),
      );
      // The spread keys were free: those waiters were allowed at once, before any abort.
      await flush();
      return {
        waiters,
        finish: async () => {
          controller.abort(new Error('shutting down'));
          await flush();
        },
      };
    },
    check: (w, i) => {
      if (i % 3 !== 0 && i % 2 !== 0) expect(w.value?.allowed).toBe(true);
      else expect(w.error).toEqual(new Error('shutting down'));
    },
  },
  {
    name: 'refused: the wait would exceed maxWaitSeconds (at its own attempt, or behind the head)',
    async run(signal) {
      const l = new RateLimiter({ threshold: 1, windowSeconds: 1, clock: () => Date.now() });
      l.allowRequestSync('k');
      const waiters = [track(l.waitForSlot('k', { signal }))];
      for (let i = 1; i < WAITERS; i++) waiters.push(track(l.waitForSlot('k', { signal, maxWaitSeconds: 1.5 })));
      return { waiters, finish: () => vi.advanceTimersByTimeAsync(1_000).then(flush) };
    },
    check: (w, i) => {
      if (i === 0) expect(w.value?.allowed).toBe(true);
      else expect(w.error).toMatchObject({ code: 'ERR_RATEWARDEN_WAIT_TOO_LONG' });
    },
  },
  {
    name: 'refused: a tier change makes the cost impossible (retryAfter Infinity)',
    async run(signal) {
      let threshold = 2;
      const l = new RateLimiter<{ id: string }>({ threshold: 2, windowSeconds: 1, clock: () => Date.now(), limitFor: () => ({ threshold, windowSeconds: 1 }) });
      l.allowRequestSync({ id: 'k' }, { cost: 2 });
      const waiters = Array.from({ length: WAITERS }, () => track(l.waitForSlot({ id: 'k' }, { signal, cost: 2 })));
      return {
        waiters,
        finish: async () => {
          threshold = 1;
          await vi.advanceTimersByTimeAsync(1_000);
          await flush();
        },
      };
    },
    check: (w) => expect(w.error).toMatchObject({ code: 'ERR_RATEWARDEN_WAIT_TOO_LONG', retryAfter: Infinity }),
  },
  {
    name: 'rejected: the clock throws at their attempt',
    async run(signal) {
      let broken = false;
      const l = new RateLimiter({
        threshold: 1,
        windowSeconds: 1,
        clock: () => {
          if (broken) throw new Error('clock broken');
          return Date.now();
        },
      });
      l.allowRequestSync('k');
      const waiters = Array.from({ length: WAITERS }, () => track(l.waitForSlot('k', { signal })));
      return {
        waiters,
        finish: async () => {
          broken = true;
          await vi.advanceTimersByTimeAsync(1_000);
          await flush();
        },
      };
    },
    check: (w) => expect(w.error).toEqual(new Error('clock broken')),
  },
  {
    name: 'rejected: the store fails at their attempt',
    async run(signal) {
      const failing = { fail: false };
      const l = new RateLimiter({ threshold: 1, windowSeconds: 1, clock: () => Date.now(), strategy: asyncLog(failing) });
      await l.allowRequest('k');
      const waiters = Array.from({ length: WAITERS }, () => track(l.waitForSlot('k', { signal })));
      await flush();
      return {
        waiters,
        finish: async () => {
          failing.fail = true;
          await vi.advanceTimersByTimeAsync(1_000);
          await flush();
        },
      };
    },
    check: (w) => expect(w.error).toEqual(new Error('store down')),
  },
];

describe('waiters sharing one AbortSignal add one abort listener to it, removed when the last settles', () => {
  it.each(SETTLE_CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const controller = new AbortController();
    const { signal } = controller;
    const { waiters, finish } = await c.run(signal, controller);
    await flush();
    expect(waiters.some((w) => !w.done)).toBe(true);
    expect(listeners(signal)).toBe(1);
    await finish();
    expect(waiters.every((w) => w.done)).toBe(true);
    waiters.forEach((w, i) => c.check(w, i));
    expect(listeners(signal)).toBe(0);
    expect(warnings.map((w) => w.name)).toEqual([]);
  });

  it('one listener for the waiters of many limiters on one signal; no MaxListenersExceededWarning', async () => {
    const controller = new AbortController();
    const limiters = Array.from({ length: 20 }, () => new RateLimiter({ threshold: 1, windowSeconds: 1, clock: () => Date.now() }));
    const waiters: Tracked[] = [];
    for (const l of limiters) {
      l.allowRequestSync('k');
      for (let i = 0; i < 5; i++) waiters.push(track(l.waitForSlot('k', { signal: controller.signal })));
    }
    await flush();
    expect(listeners(controller.signal)).toBe(1);
    expect(warnings).toEqual([]);
    // Aborting rejects every one of them with the DOMException of abort().
    controller.abort();
    await flush();
    for (const w of waiters) expect(w.error).toMatchObject({ name: 'AbortError' });
    expect(listeners(controller.signal)).toBe(0);
    for (const l of limiters) expect(l.stats().waiting).toBe(0);
  });

  it('aborting the shared signal decides none of its waiters, not even one a freed slot would fit', async () => {
    // Cost 2 at the head, cost 1 behind: when the head leaves, a slot of 1 is free now. Every
    // waiter on the aborted signal is rejected, none decided (the old per-waiter listeners let
    // the head's abort serve the next one before its own listener ran).
    const l = new RateLimiter({ threshold: 2, windowSeconds: 1, clock: () => Date.now() });
    l.allowRequestSync('k');
    const controller = new AbortController();
    const head = track(l.waitForSlot('k', { signal: controller.signal, cost: 2 }));
    const behind = track(l.waitForSlot('k', { signal: controller.signal }));
    const other = track(l.waitForSlot('k'));
    await flush();
    controller.abort(new Error('stop'));
    await flush();
    expect(head.error).toEqual(new Error('stop'));
    expect(behind.error).toEqual(new Error('stop'));
    // The waiter without the signal gets the free unit.
    expect(other.value).toMatchObject({ allowed: true, remaining: 0 });
  });

  it('a head whose signal reads aborted is rejected at its turn, not decided; a throwing getter rejects with its error', async () => {
    // Signal-like objects that never dispatch `abort`: only the check at the head's turn sees it.
    const quiet = (getAborted: () => boolean, reason: unknown): AbortSignal =>
      ({
        get aborted() {
          return getAborted();
        },
        reason,
        addEventListener: () => {},
        removeEventListener: () => {},
      }) as unknown as AbortSignal;
    const l = new RateLimiter({ threshold: 1, windowSeconds: 1, clock: () => Date.now() });
    l.allowRequestSync('k');
    let state: 'ok' | 'aborted' | 'throws' = 'ok';
    const reads = () => {
      if (state === 'throws') throw new Error('getter failed');
      return state === 'aborted';
    };
    const first = track(l.waitForSlot('k', { signal: quiet(reads, new Error('gone')) }));
    const second = track(l.waitForSlot('k', { signal: quiet(() => false, undefined) }));
    const third = track(l.waitForSlot('k'));
    await flush();
    state = 'aborted';
    await vi.advanceTimersByTimeAsync(1_000);
    await flush();
    expect(first.error).toEqual(new Error('gone'));
    // The second waiter's signal has not aborted: it takes the freed slot.
    expect(second.value?.allowed).toBe(true);
    state = 'ok';
    const fourth = track(l.waitForSlot('k', { signal: quiet(reads, undefined) }));
    state = 'throws';
    await vi.advanceTimersByTimeAsync(1_000);
    await flush();
    expect(third.value?.allowed).toBe(true);
    await vi.advanceTimersByTimeAsync(1_000);
    await flush();
    expect(fourth.error).toEqual(new Error('getter failed'));
    expect(l.stats().waiting).toBe(0);
  });

  it('keeps the invariant over random waits, aborts, resets and clock steps (property)', async () => {
    type Op =
      | { kind: 'wait'; key: number; signal: number; cost: number; maxWait: number }
      | { kind: 'abort'; signal: number }
      | { kind: 'renew'; signal: number }
      | { kind: 'tick'; ms: number }
      | { kind: 'reset'; key: number };
    const op: fc.Arbitrary<Op> = fc.oneof(
      { arbitrary: fc.record({
        kind: fc.constant('wait' as const),
        key: fc.integer({ min: 0, max: 2 }),
        signal: fc.integer({ min: -1, max: 2 }),
        cost: fc.integer({ min: 1, max: 2 }),
        maxWait: fc.constantFrom(Infinity, 0, 0.5, 1, 2.5),
      }), weight: 4 },
      fc.record({ kind: fc.constant('abort' as const), signal: fc.integer({ min: 0, max: 2 }) }),
      fc.record({ kind: fc.constant('renew' as const), signal: fc.integer({ min: 0, max: 2 }) }),
      fc.record({ kind: fc.constant('tick' as const), ms: fc.integer({ min: 0, max: 1_500 }) }),
      fc.record({ kind: fc.constant('reset' as const), key: fc.integer({ min: 0, max: 2 }) }),
    );
    // Steps at which several waiters shared a signal: the property must reach that case.
    let shared = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 5, maxLength: 40, size: 'max' }), fc.boolean(), async (ops, store) => {
        const l = new RateLimiter({
          threshold: 2,
          windowSeconds: 1,
          clock: () => Date.now(),
          ...(store ? { strategy: asyncLog() } : {}),
        });
        let controllers = [new AbortController(), new AbortController(), new AbortController()];
        const everyController = [...controllers];
        const waiters: { tracked: Tracked; controller: AbortController | undefined }[] = [];
        const check = (): void => {
          for (const c of everyController) {
            const pending = waiters.filter((w) => w.controller === c && !w.tracked.done).length;
            if (pending > 1) shared++;
            expect(listeners(c.signal)).toBe(pending > 0 ? 1 : 0);
          }
          expect(l.stats().waiting).toBe(waiters.filter((w) => !w.tracked.done).length);
        };
        for (const o of ops) {
          if (o.kind === 'wait') {
            const controller = o.signal < 0 ? undefined : controllers[o.signal];
            const promise = l.waitForSlot(`k${o.key}`, { cost: o.cost, maxWaitSeconds: o.maxWait, ...(controller === undefined ? {} : { signal: controller.signal }) });
            waiters.push({ tracked: track(promise), controller });
          } else if (o.kind === 'abort') {
            controllers[o.signal]?.abort(new Error(`abort ${o.signal}`));
          } else if (o.kind === 'renew') {
            const fresh = new AbortController();
            controllers = controllers.map((c, i) => (i === o.signal ? fresh : c));
            everyController.push(fresh);
          } else if (o.kind === 'tick') {
            await vi.advanceTimersByTimeAsync(o.ms);
          } else {
            l.reset(`k${o.key}`);
          }
          await flush();
          check();
        }
        // Every waiter settles in the end; no listener stays behind.
        await vi.runAllTimersAsync();
        await flush();
        expect(waiters.every((w) => w.tracked.done)).toBe(true);
        for (const c of everyController) expect(listeners(c.signal)).toBe(0);
        for (const w of waiters) {
          if (w.controller?.signal.aborted === true && w.tracked.rejected && !(w.tracked.error instanceof RangeError)) {
            expect(w.tracked.error).toBe(w.controller.signal.reason);
          }
        }
        expect(warnings).toEqual([]);
      }),
      { numRuns: 150 },
    );
    expect(shared).toBeGreaterThan(100);
  });
});

describe('watchAbort', () => {
  it('calls every callback once, in order, through one listener', () => {
    const controller = new AbortController();
    const calls: number[] = [];
    watchAbort(controller.signal, () => calls.push(1));
    watchAbort(controller.signal, () => calls.push(2));
    const remove3 = watchAbort(controller.signal, () => calls.push(3));
    watchAbort(controller.signal, () => calls.push(4));
    remove3();
    remove3();
    expect(listeners(controller.signal)).toBe(1);
    controller.abort();
    expect(calls).toEqual([1, 2, 4]);
    expect(listeners(controller.signal)).toBe(0);
  });

  it('calls the callbacks after one that throws, then rethrows the first error', () => {
    // A signal-like object, so that the listener's error reaches this test (an EventTarget
    // would report it as an uncaught exception).
    let listener: (() => void) | undefined;
    const signal = {
      aborted: false,
      addEventListener: (_type: string, l: () => void) => {
        listener = l;
      },
      removeEventListener: (_type: string, l: () => void) => {
        if (listener === l) listener = undefined;
      },
    } as unknown as AbortSignal;
    const calls: number[] = [];
    watchAbort(signal, () => {
      calls.push(1);
      throw new Error('first');
    });
    watchAbort(signal, () => {
      calls.push(2);
      throw new Error('second');
    });
    watchAbort(signal, () => calls.push(3));
    const dispatch = listener;
    expect(() => dispatch?.()).toThrow('first');
    expect(calls).toEqual([1, 2, 3]);
    expect(listener).toBeUndefined();
  });

  it('removes the listener with the last callback, and adds it again for a new one', () => {
    const { signal } = new AbortController();
    const a = watchAbort(signal, () => {});
    const b = watchAbort(signal, () => {});
    a();
    expect(listeners(signal)).toBe(1);
    b();
    expect(listeners(signal)).toBe(0);
    const c = watchAbort(signal, () => {});
    expect(listeners(signal)).toBe(1);
    c();
    expect(listeners(signal)).toBe(0);
  });

  it('adds nothing when addEventListener throws', () => {
    const hostile = { aborted: false, addEventListener: () => { throw new Error('boom'); }, removeEventListener: () => {} };
    expect(() => watchAbort(hostile as unknown as AbortSignal, () => {})).toThrow('boom');
    expect(() => watchAbort(hostile as unknown as AbortSignal, () => {})).toThrow('boom');
  });
});
