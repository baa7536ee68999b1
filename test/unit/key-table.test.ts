// The automatic incremental sweep, close/dispose, maxKeys against key floods, the warning.
import { spawnSync } from 'node:child_process';
import FakeTimers from '@sinonjs/fake-timers';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { GCRA, RateLimiter } from '../../src/index.js';

type InstalledClock = ReturnType<ReturnType<typeof FakeTimers.withGlobal>['install']>;

describe('automatic sweep (sweepIntervalSeconds)', () => {
  let clock: InstalledClock;
  beforeEach(() => {
    clock = FakeTimers.withGlobal(globalThis).install({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'performance', 'Date'] });
  });
  afterEach(() => clock.uninstall());

  it('drops clear keys in slices of at most 1,024, yielding between slices', () => {
    const limiter = new RateLimiter({ threshold: 5, windowSeconds: 1, sweepIntervalSeconds: 10 });
    for (let i = 0; i < 3_000; i++) limiter.allowRequestSync(`k${i}`);
    expect(limiter.size).toBe(3_000);
    clock.tick(10_000); // the interval fires: the first slice runs
    expect(limiter.size).toBe(3_000 - 1_024);
    clock.tick(1); // the next slices, one timer turn each (a 0 ms timer set during a tick runs 1 ms later)
    expect(limiter.size).toBe(3_000 - 2_048);
    clock.tick(1);
    expect(limiter.size).toBe(0);
    expect(limiter.sweptKeys).toBe(3_000);
    limiter.close();
  });

  it('never drops a live key, and decisions are unchanged by sweeping', () => {
    const swept = new RateLimiter({ threshold: 2, windowSeconds: 30, sweepIntervalSeconds: 1 });
    const kept = new RateLimiter({ threshold: 2, windowSeconds: 30 });
    for (let step = 0; step < 200; step++) {
      // Keys come and go: each is used for 20 steps (34 s), then never again.
      const key = `k${Math.floor(step / 20)}-${step % 3}`;
      expect(swept.allowRequestSync(key)).toEqual(kept.allowRequestSync(key));
      clock.tick(1_700);
    }
    expect(swept.sweptKeys).toBeGreaterThan(0);
    swept.close();
  });

  it('close() and [Symbol.dispose]() stop the timers; the limiter keeps deciding', () => {
    const limiter = new RateLimiter({ threshold: 1, windowSeconds: 1, sweepIntervalSeconds: 1 });
    expect(clock.countTimers()).toBe(1);
    limiter.close();
    limiter.close();
    expect(clock.countTimers()).toBe(0);
    expect(limiter.allowRequestSync('a').allowed).toBe(true);
    {
      using disposable = new RateLimiter({ threshold: 1, windowSeconds: 1, sweepIntervalSeconds: 1 });
      expect(disposable.allowRequestSync('a').allowed).toBe(true);
      expect(clock.countTimers()).toBe(1);
    }
    expect(clock.countTimers()).toBe(0);
  });

  it('clamps a long interval below 2^31 - 1 ms (30 days is not a 1 ms timer)', () => {
    const limiter = new RateLimiter({ threshold: 1, windowSeconds: 60, sweepIntervalSeconds: 30 * 24 * 3600 });
    limiter.allowRequestSync('a');
    clock.tick(60_000);
    expect(limiter.sweptKeys).toBe(0); // no sweep fired after a minute
    clock.tick(2 ** 31 - 2);
    expect(limiter.sweptKeys).toBe(1);
    limiter.close();
  });

  it('rejects a bad interval', () => {
    expect(() => new RateLimiter({ threshold: 1, windowSeconds: 1, sweepIntervalSeconds: 0 })).toThrow(/`sweepIntervalSeconds` .* got `0`/);
    expect(() => new RateLimiter({ threshold: 1, windowSeconds: 1, sweepIntervalSeconds: '1' as never })).toThrow(TypeError);
    expect(clock.countTimers()).toBe(0);
  });
});

describe('maxKeys: floods of distinct keys', () => {
  it('forgets clear keys to make room, so a flood runs in bounded memory', () => {
    let now = 0;
    const limiter = new RateLimiter({ threshold: 3, windowSeconds: 1, maxKeys: 2_000, clock: () => now });
    let allowed = 0;
    let largest = 0;
    for (let i = 0; i < 1_000_000; i++) {
      now = i; // one new key per millisecond: 1,000 live at any time
      if (limiter.allowRequestSync(`flood-${i}`).allowed) allowed++;
      if (limiter.size > largest) largest = limiter.size;
    }
    expect(allowed).toBe(1_000_000);
    expect(largest).toBe(2_000);
  });

  it('never resets a live key: with every tracked key live, the new key is rejected instead', () => {
    let now = 0;
    const limiter = new RateLimiter({ threshold: 2, windowSeconds: 60, maxKeys: 100, clock: () => now });
    for (let i = 0; i < 100; i++) {
      now = i * 100;
      limiter.allowRequestSync(`client-${i}`);
      limiter.allowRequestSync(`client-${i}`);
    }
    now = 20_000;
    const newcomer = limiter.allowRequestSync('newcomer');
    // The first key looked at is client-0 (last request at 0): it clears at 60 s.
    expect(newcomer).toEqual({ allowed: false, remaining: 0, retryAfter: 40, limit: 2, resetAfter: 0 });
    expect(limiter.size).toBe(100);
    // Newcomers keep being turned away, whichever keys they look at: all are live.
    for (let i = 0; i < 20; i++) expect(limiter.allowRequestSync(`newcomer-${i}`).allowed).toBe(false);
    // The tracked clients keep their limits: the flood did not reset them.
    for (let i = 0; i < 100; i++) expect(limiter.allowRequestSync(`client-${i}`).allowed).toBe(false);
    now = 60_050; // client-0's window is clear (only): a newcomer takes its place once the
    // round robin reaches it, within 100 / 16 attempts
    let attempts = 0;
    while (!limiter.allowRequestSync('newcomer').allowed) {
      attempts++;
      expect(attempts).toBeLessThanOrEqual(7);
    }
    expect(limiter.size).toBe(100);
    // client-0 was forgotten (its window was clear); as a new key it would now find no room,
    // and peek says so as allowRequest would.
    expect(limiter.peekSync('client-0')).toMatchObject({ allowed: false, remaining: 0 });
    expect(limiter.reset('client-0')).toBe(false);
    expect(limiter.allowRequestSync('client-1').allowed).toBe(false);
  });

  it('works with every strategy, and validates the option', () => {
    let now = 0;
    const limiter = new RateLimiter({ threshold: 1, windowSeconds: 1, strategy: new GCRA(), maxKeys: 1, clock: () => now });
    expect(limiter.allowRequestSync('a').allowed).toBe(true);
    expect(limiter.allowRequestSync('b').allowed).toBe(false);
    now = 1_000;
    expect(limiter.allowRequestSync('b').allowed).toBe(true);
    expect(() => new RateLimiter({ threshold: 1, windowSeconds: 1, maxKeys: 0 })).toThrow(/`maxKeys` to be a positive safe integer, got `0`/);
  });
});

describe('maxKeys: a refused request or a peek forgets no key', () => {
  function full() {
    let now = 0;
    const limiter = new RateLimiter({ threshold: 2, windowSeconds: 60, maxKeys: 2, clock: () => now });
    limiter.allowRequestSync('old');
    now = 30_000;
    limiter.allowRequestSync('live');
    now = 61_000; // old is clear: a new key may take its place
    return limiter;
  }

  it('a new key refused by the strategy (cost above the threshold) forgets no key', () => {
    const limiter = full();
    expect(limiter.allowRequestSync('new', { cost: 3 })).toMatchObject({ allowed: false, retryAfter: Infinity });
    expect(limiter.stats()).toMatchObject({ keys: 2, evictedKeys: 0, rejected: 1 }); // main: keys 1, evictedKeys 1
    expect(limiter.allowRequestSync('new', { cost: 2 }).allowed).toBe(true);
    expect(limiter.stats()).toMatchObject({ keys: 2, evictedKeys: 1 });
  });

  it('a peek of a new key forgets no key, and says what the decision would', () => {
    const limiter = full();
    expect(limiter.peekSync('new')).toMatchObject({ allowed: true, remaining: 2 });
    expect(limiter.stats()).toMatchObject({ keys: 2, evictedKeys: 0 }); // main: keys 1, evictedKeys 1
    expect(limiter.allowRequestSync('new')).toMatchObject({ allowed: true, remaining: 1 });
    expect(limiter.stats()).toMatchObject({ keys: 2, evictedKeys: 1 });
  });
});

describe('the unbounded-keys warning', () => {
  it('warns once at a million keys with no sweep, maxKeys or cleanUp; not otherwise', { timeout: 30_000 }, () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    try {
      const unbounded = new RateLimiter({ threshold: 1, windowSeconds: 1, clock: () => 0 });
      const bounded = new RateLimiter({ threshold: 1, windowSeconds: 1, clock: () => 0, maxKeys: 2_000_000 });
      for (let i = 0; i <= 1_000_001; i++) {
        unbounded.allowRequestSync(`k${i}`);
        bounded.allowRequestSync(`k${i}`);
      }
      expect(warn).toHaveBeenCalledTimes(1);
      expect(String(warn.mock.calls[0]?.[0])).toMatch(/tracks 1000000 keys with no bound: call cleanUp\(\)/);
    } finally {
      warn.mockRestore();
    }
  });
});

describe('an abandoned limiter with an automatic sweep', () => {
  // In a child process with --expose-gc, against the built package: 20 limiters, each with a
  // sweep timer and listeners that refer to the limiter, are dropped; the garbage collector must
  // collect every one (their timers hold them only weakly). No wall clock: the child runs
  // collections and event-loop turns until all are collected, or gives up after 200.
  const script = `
    const { RateLimiter } = await import(${JSON.stringify(new URL('../../dist/index.js', import.meta.url).href)});
    let collected = 0;
    const registry = new FinalizationRegistry(() => { collected++; });
    for (let i = 0; i < 20; i++) {
      const l = new RateLimiter({ threshold: 5, windowSeconds: 1, sweepIntervalSeconds: 60 });
      l.on('sweep', () => { void l.size; });
      l.on('decision', () => { void l.threshold; });
      l.allowRequestSync('a');
      registry.register(l, i);
    }
    for (let turn = 0; turn < 200 && collected < 20; turn++) {
      globalThis.gc();
      await new Promise((resolve) => setImmediate(resolve));
    }
    console.log(collected);
    process.exit(0);
  `;

  it('is collected, listeners referring to it included: its timers hold it only weakly', () => {
    const run = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(run.stdout.trim()).toBe('20');
  });
});
