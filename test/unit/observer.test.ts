// Observing a limiter: stats() counters and on('decision' | 'sweep' | 'error') listeners.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RateLimitGroup, RateLimiter, SlidingWindowLog } from '../../src/index.js';
import type { RateLimitResult, SweepInfo } from '../../src/index.js';
import { AwaitingStore } from '../support/stores.js';

afterEach(() => {
  vi.restoreAllMocks();
  vi.useRealTimers();
});

function limiter(threshold: number, windowSeconds: number, clock: () => number): RateLimiter {
  return new RateLimiter({ threshold, windowSeconds, clock });
}

const EMPTY = { allowed: 0, rejected: 0, shadowRejected: 0, keys: 0, sweeps: 0, sweptKeys: 0, evictedKeys: 0, waiting: 0, blocked: 0 };

describe('stats()', () => {
  it('starts at zero and returns a fresh snapshot per call', () => {
    const l = limiter(1, 1, () => 0);
    const first = l.stats();
    expect(first).toEqual(EMPTY);
    l.allowRequestSync('a');
    expect(first).toEqual(EMPTY);
    expect(l.stats()).not.toBe(l.stats());
  });

  it('counts allowed and rejected decisions per limiter, by every way of deciding', async () => {
    let now = 0;
    const a = limiter(2, 1, () => now);
    const b = limiter(2, 1, () => now);
    a.allowRequestSync('x'); // the fast path, new key
    a.allowRequestSync('x'); // the fast path, tracked key
    a.allowRequestSync('x'); // rejected
    a.allowRequestSync({ id: 'y' }); // the general path
    a.allowRequestSync('y', { cost: 2 }); // rejected
    await a.allowRequest('z');
    a.peekSync('z');
    await a.peek('z');
    expect(a.stats()).toMatchObject({ allowed: 4, rejected: 2, keys: 3 });
    expect(b.stats()).toEqual(EMPTY);
    // A bad input is no decision.
    expect(() => a.allowRequestSync('')).toThrow(RangeError);
    await expect(a.allowRequest('x', { cost: 0 })).rejects.toThrow(RangeError);
    expect(a.stats()).toMatchObject({ allowed: 4, rejected: 2 });
    now = 1_000;
    b.allowRequestSync('x');
    expect(b.stats()).toMatchObject({ allowed: 1, rejected: 0, keys: 1 });
  });

  it('counts the decisions of a store once they settle', async () => {
    const remote = new AwaitingStore(new SlidingWindowLog());
    const l = new RateLimiter<unknown>({ threshold: 1, windowSeconds: 1, strategy: remote, clock: () => 0 });
    const decisions = l.allowRequest('a');
    expect(l.stats()).toMatchObject({ allowed: 0, rejected: 0 });
    const all = await Promise.all([decisions, l.allowRequest('a'), l.allowRequest('b')]);
    expect(all.map((d) => d.allowed)).toEqual([true, false, true]);
    // The store keeps the keys: the limiter tracks none.
    expect(l.stats()).toMatchObject({ allowed: 2, rejected: 1, keys: 0 });
    expect(remote.states.size).toBe(2);
  });

  it('counts each attempt of waitForSlot, and the callers waiting now', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const l = limiter(1, 1, () => Date.now());
    l.allowRequestSync('a');
    const wait = l.waitForSlot('a');
    await Promise.resolve();
    expect(l.stats()).toMatchObject({ allowed: 1, rejected: 1, waiting: 1 });
    await vi.advanceTimersByTimeAsync(1_000);
    await wait;
    expect(l.stats()).toMatchObject({ allowed: 2, rejected: 1, waiting: 0 });
  });

  it('reports the keys tracked now, the sweeps of cleanUp() and the keys they dropped', () => {
    let now = 0;
    const l = limiter(1, 10, () => now);
    for (const key of ['a', 'b', 'c']) l.allowRequestSync(key);
    now = 5_000;
    l.allowRequestSync('d');
    expect(l.stats()).toMatchObject({ keys: 4, sweeps: 0, sweptKeys: 0 });
    now = 12_000;
    expect(l.cleanUp()).toBe(3);
    expect(l.stats()).toMatchObject({ keys: 1, sweeps: 1, sweptKeys: 3 });
    expect(l.cleanUp()).toBe(0);
    expect(l.stats()).toMatchObject({ keys: 1, sweeps: 2, sweptKeys: 3 });
    expect(l.reset('d')).toBe(true);
    expect(l.stats()).toMatchObject({ keys: 0, sweeps: 2, sweptKeys: 3 });
    // One meaning: the getter counts what stats() counts, cleanUp() and the automatic sweep.
    expect(l.sweptKeys).toBe(3);
  });

  it('counts the passes of the automatic sweep (over several slices) and the keys it dropped', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
    const l = new RateLimiter({ threshold: 1, windowSeconds: 1, sweepIntervalSeconds: 5, clock: () => Date.now() });
    const sweeps: SweepInfo[] = [];
    l.on('sweep', (info) => sweeps.push(info));
    for (let i = 0; i < 3_000; i++) l.allowRequestSync(`k${i}`);
    // The interval fires at 5 s; 3,000 keys take three slices of at most 1,024, a timer apart.
    await vi.advanceTimersByTimeAsync(5_010);
    expect(sweeps).toEqual([{ dropped: 3_000, automatic: true, keys: 0 }]);
    expect(l.stats()).toMatchObject({ keys: 0, sweeps: 1, sweptKeys: 3_000 });
    expect(l.sweptKeys).toBe(3_000);
    l.allowRequestSync('live');
    await vi.advanceTimersByTimeAsync(5_000);
    expect(sweeps[1]).toEqual({ dropped: 1, automatic: true, keys: 0 });
    l.allowRequestSync('fresh');
    expect(l.cleanUp()).toBe(0);
    expect(sweeps[2]).toEqual({ dropped: 0, automatic: false, keys: 1 });
    expect(l.stats()).toMatchObject({ keys: 1, sweeps: 3, sweptKeys: 3_001 });
    l.close();
  });

  it('counts the keys forgotten under maxKeys, and the rejections of new keys when none can be', () => {
    let now = 0;
    const l = new RateLimiter({ threshold: 1, windowSeconds: 1, maxKeys: 2, clock: () => now });
    l.allowRequestSync('a');
    l.allowRequestSync('b');
    expect(l.allowRequestSync('c').allowed).toBe(false);
    expect(l.stats()).toMatchObject({ allowed: 2, rejected: 1, keys: 2, evictedKeys: 0 });
    now = 1_000;
    expect(l.allowRequestSync('c').allowed).toBe(true);
    expect(l.stats()).toMatchObject({ allowed: 3, rejected: 1, keys: 2, evictedKeys: 1 });
  });

  it('counts a RateLimitGroup\'s decisions in its members: all when allowed, the limits that rejected when not; peeks not', async () => {
    const perSecond = limiter(2, 1, () => 0);
    const perMinute = limiter(5, 60, () => 0);
    const group = new RateLimitGroup([perSecond, perMinute]);
    const seen: string[] = [];
    perMinute.on('decision', (key, result) => seen.push(`${key} ${result.allowed}`));
    group.allowRequestSync('a');
    await group.allowRequest('a');
    expect(group.allowRequestSync('a').allowed).toBe(false); // the per-second limit rejects
    group.peekSync('a');
    expect(perSecond.stats()).toMatchObject({ allowed: 2, rejected: 1, keys: 1 });
    // The per-minute limit allowed the third request but recorded nothing: not counted.
    expect(perMinute.stats()).toMatchObject({ allowed: 2, rejected: 0, keys: 1 });
    expect(seen).toEqual(['a true', 'a true']);
  });
});

describe("on('decision')", () => {
  it('calls the listener with the key, the very result the caller gets, and the cost, then can be removed', async () => {
    const l = limiter(2, 1, () => 0);
    const seen: [string, RateLimitResult, number][] = [];
    const stop = l.on('decision', (key, result, cost) => seen.push([key, result, cost]));
    const first = l.allowRequestSync('a');
    const second = l.allowRequestSync({ id: 'a' }, { cost: 2 });
    const third = await l.allowRequest('b');
    l.peekSync('a');
    expect(seen).toEqual([
      ['a', first, 1],
      ['a', second, 2],
      ['b', third, 1],
    ]);
    expect(seen[0]?.[1]).toBe(first);
    stop();
    stop();
    l.allowRequestSync('a');
    expect(seen).toHaveLength(3);
  });

  it('is removed by off(), called once when added twice, and not at all for events it does not listen to', () => {
    const l = limiter(1, 1, () => 0);
    const calls: string[] = [];
    const listener = (key: string): void => {
      calls.push(key);
    };
    l.on('decision', listener);
    l.on('decision', listener);
    l.allowRequestSync('a');
    expect(calls).toEqual(['a']);
    expect(l.off('decision', listener)).toBe(true);
    expect(l.off('decision', listener)).toBe(false);
    l.allowRequestSync('b');
    expect(calls).toEqual(['a']);
  });

  it('keeps the delivery of an event unchanged by listeners added or removed during it', () => {
    const l = limiter(10, 1, () => 0);
    const calls: string[] = [];
    const late = (): void => {
      calls.push('late');
    };
    const stopSecond = l.on('decision', () => {
      calls.push('second');
    });
    l.on('decision', () => {
      calls.push('first');
      stopSecond();
      l.on('decision', late);
    });
    // Registration order: 'second' before 'first'.
    l.allowRequestSync('a');
    expect(calls).toEqual(['second', 'first']);
    l.allowRequestSync('a');
    expect(calls).toEqual(['second', 'first', 'first', 'late']);
  });

  it('never lets a throwing listener change the decision: the error goes to the error listeners', () => {
    const l = limiter(1, 1, () => 0);
    const boom = new Error('listener bug');
    const errors: unknown[] = [];
    const after: boolean[] = [];
    l.on('decision', () => {
      throw boom;
    });
    l.on('decision', (_key, result) => after.push(result.allowed));
    l.on('error', (error) => errors.push(error));
    const result = l.allowRequestSync('a');
    expect(result.allowed).toBe(true);
    // Recorded all the same, and the listener after the throwing one was called.
    expect(l.peekSync('a').remaining).toBe(0);
    expect(after).toEqual([true]);
    expect(errors).toEqual([boom]);
    expect(l.stats()).toMatchObject({ allowed: 1 });
  });

  it('reports the error of a listener as uncaught, in a microtask, when no error listener is registered', async () => {
    const queued: (() => void)[] = [];
    vi.spyOn(globalThis, 'queueMicrotask').mockImplementation((callback) => {
      queued.push(callback);
    });
    const l = limiter(1, 1, () => 0);
    const boom = new Error('listener bug');
    l.on('decision', () => {
      throw boom;
    });
    expect(l.allowRequestSync('a').allowed).toBe(true);
    await expect(l.allowRequest('a')).resolves.toMatchObject({ allowed: false });
    expect(queued).toHaveLength(2);
    expect(queued[0]).toThrow(boom);
    // So is what an error listener throws.
    const failure = new Error('error listener bug');
    l.on('error', () => {
      throw failure;
    });
    l.allowRequestSync('b');
    expect(queued).toHaveLength(3);
    expect(queued[2]).toThrow(failure);
  });

  it('reports the error of a sweep listener the same way, and the sweep still counts', () => {
    const l = limiter(1, 1, () => 5_000);
    const errors: unknown[] = [];
    l.on('sweep', () => {
      throw new Error('sweep listener bug');
    });
    l.on('error', (error) => errors.push(error));
    expect(l.cleanUp()).toBe(0);
    expect(errors).toEqual([new Error('sweep listener bug')]);
    expect(l.stats().sweeps).toBe(1);
  });

  it('checks its arguments', () => {
    const l = limiter(1, 1, () => 0);
    expect(() => l.on('decision', 5 as never)).toThrow(TypeError);
    expect(() => l.on('decisions' as 'decision', () => {})).toThrow(RangeError);
    expect(() => l.on('decisions' as 'decision', () => {})).toThrow(/`event` to be 'decision', 'sweep' or 'error'/);
    expect(() => l.off(7 as unknown as 'decision', () => {})).toThrow(TypeError);
  });
});

describe("off('sweep') and off('error') remove exactly the listener given", () => {
  it("off('sweep'): the listener is no longer called; true once, then false; the others stay", () => {
    const l = limiter(1, 1, () => 5_000);
    const seen: string[] = [];
    const first = (info: SweepInfo): void => {
      seen.push(`first ${info.dropped}`);
    };
    const second = (info: SweepInfo): void => {
      seen.push(`second ${info.keys}`);
    };
    const never = (): void => {
      seen.push('never');
    };
    expect(l.off('sweep', first)).toBe(false);
    l.on('sweep', first);
    l.on('sweep', second);
    l.cleanUp();
    expect(seen).toEqual(['first 0', 'second 0']);
    // A listener not registered, or registered for another event, is not removed.
    expect(l.off('sweep', never)).toBe(false);
    l.on('decision', never);
    expect(l.off('sweep', never)).toBe(false);
    expect(l.off('decision', never)).toBe(true);
    expect(l.off('sweep', first)).toBe(true);
    expect(l.off('sweep', first)).toBe(false);
    l.cleanUp();
    expect(seen).toEqual(['first 0', 'second 0', 'second 0']);
    expect(l.off('sweep', second)).toBe(true);
    l.cleanUp();
    expect(seen).toHaveLength(3);
    // The function returned by on() does the same.
    const stop = l.on('sweep', first);
    stop();
    l.cleanUp();
    expect(seen).toHaveLength(3);
  });

  it("off('error'): a removed error listener gets no more errors; with none left they are reported as uncaught", () => {
    const queued: (() => void)[] = [];
    vi.spyOn(globalThis, 'queueMicrotask').mockImplementation((callback) => {
      queued.push(callback);
    });
    const l = limiter(100, 1, () => 0);
    const boom = new Error('listener bug');
    l.on('decision', () => {
      throw boom;
    });
    const first: unknown[] = [];
    const second: unknown[] = [];
    const one = (error: unknown): void => {
      first.push(error);
    };
    const two = (error: unknown): void => {
      second.push(error);
    };
    expect(l.off('error', one)).toBe(false);
    l.on('error', one);
    l.on('error', two);
    l.allowRequestSync('a');
    expect([first.length, second.length, queued.length]).toEqual([1, 1, 0]);
    expect(l.off('error', one)).toBe(true);
    expect(l.off('error', one)).toBe(false);
    l.allowRequestSync('a');
    expect([first.length, second.length, queued.length]).toEqual([1, 2, 0]);
    expect(l.off('error', two)).toBe(true);
    l.allowRequestSync('a');
    expect([first.length, second.length, queued.length]).toEqual([1, 2, 1]);
    expect(queued[0]).toThrow(boom);
    // The decisions were made all the same.
    expect(l.stats()).toMatchObject({ allowed: 3, rejected: 0 });
  });

  it('a listener added for one event is called only for that event', () => {
    const l = limiter(1, 1, () => 5_000);
    const calls: string[] = [];
    const listener = (): void => {
      calls.push('called');
    };
    l.on('error', listener);
    l.on('sweep', () => {
      calls.push('sweep');
    });
    l.allowRequestSync('a');
    l.cleanUp();
    expect(calls).toEqual(['sweep']);
    expect(l.off('decision', listener)).toBe(false);
    expect(l.off('sweep', listener)).toBe(false);
    expect(l.off('error', listener)).toBe(true);
  });

  it('off() checks its arguments as on() does', () => {
    const l = limiter(1, 1, () => 0);
    expect(() => l.on('sweep', 'f' as never)).toThrow(TypeError);
    expect(() => l.on('sweep', 'f' as never)).toThrow('Expected `listener` to be a function, got `"f"` (string)');
    expect(() => l.off('sweep', 5 as never)).toThrow(TypeError);
    expect(() => l.off('sweep', 5 as never)).toThrow('Expected `listener` to be a function, got `5` (number)');
    expect(() => l.off('errors' as 'error', () => {})).toThrow(RangeError);
    expect(() => l.off('errors' as 'error', () => {})).toThrow(
      'Expected `event` to be \'decision\', \'sweep\' or \'error\', got `"errors"` (string)',
    );
    expect(() => l.on(5 as unknown as 'error', () => {})).toThrow(TypeError);
    expect(() => l.on(5 as unknown as 'error', () => {})).toThrow(
      'Expected `event` to be \'decision\', \'sweep\' or \'error\', got `5` (number)',
    );
  });
});
