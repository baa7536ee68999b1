// `sweepIntervalSeconds` where the runtime refuses a timer at construction: Cloudflare Workers
// throw "Disallowed operation called within global scope" for a timer set while a Worker's module
// loads (where a limiter is usually made), and drop timers a request leaves behind. There the
// decisions drive the sweep: each new key tracked runs one slice (1,024 keys) of a pass, and a
// pass starts once the interval has passed. workerd itself runs the limiter in
// test/integration/runtimes.test.ts, but a sweep an hour of real time apart cannot be awaited
// there: here the runtime's refusal is reproduced by a `setInterval` that throws while the
// limiter is made (and only then: a request may set timers), on an injected clock.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RateLimitGroup, RateLimiter } from '../../src/index.js';

/** Makes a limiter as a Worker's global scope would: any `setInterval` there throws. */
function inGlobalScope<T>(make: () => T): T {
  vi.stubGlobal('setInterval', () => {
    throw new Error('Disallowed operation called within global scope. Asynchronous I/O (ex: fetch() or connect()), setting a timeout, and generating random values are not allowed within global scope.');
  });
  try {
    return make();
  } finally {
    vi.unstubAllGlobals();
  }
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('sweepIntervalSeconds where the runtime refuses timers at construction', () => {
  it('constructs, and sweeps on decisions: no timer is ever set', async () => {
    let now = 0;
    const limiter = inGlobalScope(() => new RateLimiter({ threshold: 2, windowSeconds: 10, sweepIntervalSeconds: 60, clock: () => now }));
    const setInterval = vi.spyOn(globalThis, 'setInterval');
    const setTimeout = vi.spyOn(globalThis, 'setTimeout');
    for (let i = 0; i < 10; i++) limiter.allowRequestSync(`sync-${i}`);
    for (let i = 0; i < 10; i++) await limiter.allowRequest(`async-${i}`);
    for (let i = 0; i < 10; i++) expect((await limiter.reserve(`reserved-${i}`)).allowed).toBe(true);
    expect(limiter.size).toBe(30);
    expect(limiter.stats().sweeps).toBe(0);

    // Every key is clear after 10 s, but no pass is due before 60 s after the first key.
    now = 59_000;
    limiter.allowRequestSync('before-due');
    expect(limiter.stats().sweeps).toBe(0);
    expect(limiter.size).toBe(31);

    // Due: the next new key runs a whole pass (31 keys, one slice), dropping the clear ones.
    now = 60_000;
    limiter.allowRequestSync('due');
    expect(limiter.stats()).toMatchObject({ sweeps: 1, sweptKeys: 30, keys: 2 });
    expect(limiter.allowRequestSync('due').remaining).toBe(0);
    // The next pass is due an interval after this one began.
    now = 119_000;
    limiter.allowRequestSync('later');
    expect(limiter.stats().sweeps).toBe(1);
    now = 120_000;
    limiter.allowRequestSync('later-still');
    expect(limiter.stats()).toMatchObject({ sweeps: 2, sweptKeys: 32, keys: 2 });
    expect(setInterval).not.toHaveBeenCalled();
    expect(setTimeout).not.toHaveBeenCalled();
    // A refused request tracks no key, and runs no slice.
    limiter.allowRequestSync('later-still');
    limiter.allowRequestSync('later-still');
    expect(limiter.stats().sweeps).toBe(2);
  });

  it('a pass of many keys goes on one slice of 1,024 keys per new key, and reports once', () => {
    let now = 0;
    const limiter = inGlobalScope(() => new RateLimiter({ threshold: 1, windowSeconds: 1, sweepIntervalSeconds: 5, clock: () => now }));
    const reports: { dropped: number; keys: number }[] = [];
    limiter.on('sweep', (info) => reports.push({ dropped: info.dropped, keys: info.keys }));
    for (let i = 0; i < 3_000; i++) limiter.allowRequestSync(`k${i}`);
    now = 5_000;
    limiter.allowRequestSync('n0'); // starts the pass: keys 0–1,023
    expect(limiter.size).toBe(3_001 - 1_024);
    limiter.allowRequestSync('n1'); // 1,024–2,047
    expect(reports).toEqual([]);
    limiter.allowRequestSync('n2'); // the rest, n0 to n2 included (live: kept)
    expect(reports).toEqual([{ dropped: 3_000, keys: 3 }]);
    expect(limiter.size).toBe(3);
  });

  it('groups and penalties drive it too; close() stops it', async () => {
    let now = 0;
    const [a, b] = inGlobalScope(() => [
      new RateLimiter({ threshold: 5, windowSeconds: 1, sweepIntervalSeconds: 2, clock: () => now }),
      new RateLimiter({ threshold: 5, windowSeconds: 1, sweepIntervalSeconds: 2, clock: () => now }),
    ]);
    const group = new RateLimitGroup([a, b]);
    group.allowRequestSync('g1');
    await group.allowRequest('g2');
    await a.penalty('p1', 2);
    expect([a.size, b.size]).toEqual([3, 2]);
    now = 2_000;
    await group.allowRequest('g3');
    expect([a.stats().sweeps, b.stats().sweeps]).toEqual([1, 1]);
    expect([a.size, b.size]).toEqual([1, 1]);
    now = 4_000;
    await a.penalty('p2', 1);
    expect(a.stats().sweeps).toBe(2);
    a.close();
    now = 6_000;
    a.allowRequestSync('after-close');
    expect(a.stats().sweeps).toBe(2);
  });
});
