// The automatic incremental sweep, close/dispose, maxKeys against key floods, the warning.
import { spawnSync } from 'node:child_process';
import FakeTimers from '@sinonjs/fake-timers';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { GCRA, type Quota, type QuotaOptions, RateLimiter, type RateLimitStrategy, SlidingWindowLog, type SlidingWindowLogState, type SweepInfo } from '../../src/index.js';

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
      expect(warn).toHaveBeenCalledWith(
        'ratewarden: a RateLimiter tracks 1000000 keys with no bound: call cleanUp() periodically, or set sweepIntervalSeconds or maxKeys',
        'RateWardenWarning',
      );
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

describe('the automatic sweep judges each key by the quota last applied to it (tiers)', () => {
  let clock: InstalledClock;
  beforeEach(() => {
    clock = FakeTimers.withGlobal(globalThis).install({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'performance', 'Date'] });
  });
  afterEach(() => clock.uninstall());

  it('keeps a key of an hourly tier past the default window, and forgets it once its hour is clear', () => {
    const hourly: QuotaOptions = { threshold: 5, windowSeconds: 3_600 };
    const limiter = new RateLimiter({
      threshold: 5,
      windowSeconds: 60,
      sweepIntervalSeconds: 60,
      limitFor: (_user, key) => (key === 'hourly' ? hourly : undefined),
    });
    const sweeps: SweepInfo[] = [];
    limiter.on('sweep', (info) => sweeps.push(info));
    limiter.allowRequestSync('hourly');
    limiter.allowRequestSync('minutely');
    clock.tick(120_000); // two passes, at 60 s and 120 s
    expect(sweeps).toEqual([
      { dropped: 1, automatic: true, keys: 1 },
      { dropped: 0, automatic: true, keys: 1 },
    ]);
    expect(limiter.size).toBe(1);
    expect(limiter.peekSync('hourly')).toEqual({ allowed: true, remaining: 4, retryAfter: 0, limit: 5, resetAfter: 3_480 });
    clock.tick(3_600_000 - 120_000); // the pass at 3,600 s: the hour since the request is over
    expect(limiter.size).toBe(0);
    expect(limiter.stats()).toMatchObject({ sweeps: 60, sweptKeys: 2, keys: 0 });
    expect(sweeps.at(-1)).toEqual({ dropped: 1, automatic: true, keys: 0 });
    limiter.close();
  });
});

describe('a tier change that keeps the threshold but changes the window', () => {
  it('decides and sweeps by the new window from the next decision on, both ways', () => {
    let now = 0;
    let tier: QuotaOptions | undefined = { threshold: 5, windowSeconds: 3_600 };
    const limiter = new RateLimiter({ threshold: 5, windowSeconds: 60, clock: () => now, limitFor: () => tier });
    expect(limiter.allowRequestSync('u')).toEqual({ allowed: true, remaining: 4, retryAfter: 0, limit: 5, resetAfter: 3_600 });
    tier = { threshold: 5, windowSeconds: 60 }; // a new tier object, equal to the default quota
    now = 1_000;
    expect(limiter.allowRequestSync('u')).toEqual({ allowed: true, remaining: 3, retryAfter: 0, limit: 5, resetAfter: 60 });
    now = 60_000; // the request at 0 left the 60 s window
    expect(limiter.peekSync('u')).toEqual({ allowed: true, remaining: 4, retryAfter: 0, limit: 5, resetAfter: 1 });
    now = 61_000; // and the one at 1 s: the key is clear under the quota last applied
    expect(limiter.cleanUp()).toBe(1);
    expect(limiter.size).toBe(0);

    // Back to the default (limitFor returns undefined) after an hourly decision: swept by the
    // default window again.
    tier = { threshold: 5, windowSeconds: 3_600 };
    now = 100_000;
    limiter.allowRequestSync('v');
    tier = undefined;
    now = 101_000;
    expect(limiter.allowRequestSync('v')).toEqual({ allowed: true, remaining: 3, retryAfter: 0, limit: 5, resetAfter: 60 });
    now = 160_000; // the request at 100 s is out of the default window, the one at 101 s not
    expect(limiter.cleanUp()).toBe(0);
    now = 161_000;
    expect(limiter.cleanUp()).toBe(1);

    // And the other way: admitted under the default window, then decided under an hourly tier:
    // not swept after a minute.
    tier = undefined;
    now = 200_000;
    limiter.allowRequestSync('w');
    tier = { threshold: 5, windowSeconds: 3_600 };
    now = 201_000;
    expect(limiter.allowRequestSync('w')).toEqual({ allowed: true, remaining: 3, retryAfter: 0, limit: 5, resetAfter: 3_600 });
    now = 262_000;
    expect(limiter.cleanUp()).toBe(0);
    expect(limiter.peekSync('w')).toMatchObject({ remaining: 3 });
    now = 201_000 + 3_600_000;
    expect(limiter.cleanUp()).toBe(1);
  });
});

describe('maxKeys: peek of a tracked key when the table is full', () => {
  it('reports the key as it stands, forgetting nothing and turning nothing away', () => {
    let now = 0;
    const limiter = new RateLimiter({ threshold: 3, windowSeconds: 10, maxKeys: 2, clock: () => now });
    limiter.allowRequestSync('clear');
    now = 20_000;
    limiter.allowRequestSync('live');
    // The table is full and 'clear' could be forgotten; a peek of the tracked key needs no room.
    expect(limiter.peekSync('live')).toEqual({ allowed: true, remaining: 2, retryAfter: 0, limit: 3, resetAfter: 10 });
    expect(limiter.stats()).toMatchObject({ keys: 2, evictedKeys: 0 });
    limiter.allowRequestSync('live');
    limiter.allowRequestSync('live');
    expect(limiter.peekSync('live')).toEqual({ allowed: false, remaining: 0, retryAfter: 10, limit: 3, resetAfter: 10 });
    expect(limiter.stats()).toMatchObject({ keys: 2, evictedKeys: 0 });
    // A new key's peek says it would be allowed (room can be made), yet forgets nothing: a peek
    // changes nothing (issue 11, from the attack run).
    expect(limiter.peekSync('new')).toEqual({ allowed: true, remaining: 3, retryAfter: 0, limit: 3, resetAfter: 0 });
    expect(limiter.stats()).toMatchObject({ keys: 2, evictedKeys: 0 });
  });
});

describe("maxKeys: eviction's round robin over the tracked keys", () => {
  it('each new key goes on looking where the previous one stopped, 16 keys at a time, wrapping around', () => {
    let now = 0;
    const limiter = new RateLimiter({ threshold: 1, windowSeconds: 60, maxKeys: 40, clock: () => now });
    for (let i = 0; i < 40; i++) {
      now = i * 100;
      limiter.allowRequestSync(`k${i}`);
    }
    // Every key is live: each newcomer is turned away, told when the soonest key it looked at
    // (k0) clears; a refusal moves the round robin only up to that key, so that the retry finds
    // it first (issue 11: waiting retryAfter is enough).
    now = 10_000;
    const waits = [1, 2, 3, 4].map((n) => limiter.allowRequestSync(`new${n}`));
    expect(waits.map((r) => r.retryAfter)).toEqual([50, 50, 50, 50]);
    expect(waits[0]).toEqual({ allowed: false, remaining: 0, retryAfter: 50, limit: 1, resetAfter: 0 });
    // k0 to k16 are clear at 61.65 s; the round robin stopped at k0, so the next newcomers take
    // k0's, k1's and k2's places.
    now = 61_650;
    expect(limiter.allowRequestSync('new5')).toMatchObject({ allowed: true, remaining: 0 });
    expect(limiter.allowRequestSync('new6')).toMatchObject({ allowed: true, remaining: 0 });
    expect(limiter.allowRequestSync('new7')).toMatchObject({ allowed: true, remaining: 0 });
    expect(limiter.stats()).toMatchObject({ keys: 40, evictedKeys: 3, rejected: 4 });
    expect(limiter.reset('k0')).toBe(false);
    expect(limiter.reset('k1')).toBe(false);
    expect(limiter.reset('k2')).toBe(false);
    expect(limiter.reset('k3')).toBe(true);
  });

  it("a newcomer's wait runs until the key it waits for clears, under that key's own (longer) tier", () => {
    let now = 0;
    const limiter = new RateLimiter({
      threshold: 1,
      windowSeconds: 60,
      maxKeys: 1,
      clock: () => now,
      limitFor: (_user, key) => (key === 'hourly' ? { threshold: 1, windowSeconds: 3_600 } : undefined),
    });
    limiter.allowRequestSync('hourly');
    now = 1_000;
    expect(limiter.allowRequestSync('new')).toEqual({ allowed: false, remaining: 0, retryAfter: 3_599, limit: 1, resetAfter: 0 });
    // The hourly key is judged by its own window: still live after a minute.
    now = 120_000;
    expect(limiter.allowRequestSync('new')).toMatchObject({ allowed: false, retryAfter: 3_480 });
    now = 3_600_000;
    expect(limiter.allowRequestSync('new').allowed).toBe(true);
    expect(limiter.stats().evictedKeys).toBe(1);
  });
});

describe('the automatic sweep: a pass in slices', () => {
  let clock: InstalledClock;
  beforeEach(() => {
    clock = FakeTimers.withGlobal(globalThis).install({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'performance', 'Date'] });
  });
  afterEach(() => clock.uninstall());

  it('is not restarted by an interval that fires before it is over; it reports once, with all it dropped', () => {
    const limiter = new RateLimiter({ threshold: 5, windowSeconds: 0.001, sweepIntervalSeconds: 0.001 });
    const sweeps: SweepInfo[] = [];
    limiter.on('sweep', (info) => sweeps.push(info));
    for (let i = 0; i < 3_000; i++) limiter.allowRequestSync(`k${i}`);
    clock.tick(1); // the interval fires: the first slice
    clock.tick(1); // the interval fires again, before the second slice: the pass goes on
    clock.tick(1);
    expect(sweeps[0]).toEqual({ dropped: 3_000, automatic: true, keys: 0 });
    expect(limiter.stats()).toMatchObject({ keys: 0, sweptKeys: 3_000 });
    limiter.close();
  });

  it('close() in the middle of a pass stops it: no timer left, nothing more dropped', () => {
    const limiter = new RateLimiter({ threshold: 5, windowSeconds: 1, sweepIntervalSeconds: 10 });
    for (let i = 0; i < 3_000; i++) limiter.allowRequestSync(`k${i}`);
    clock.tick(10_000); // the first slice
    expect(limiter.size).toBe(3_000 - 1_024);
    expect(clock.countTimers()).toBe(2); // the interval and the next slice
    limiter.close();
    expect(clock.countTimers()).toBe(0);
    clock.tick(100_000);
    expect(limiter.stats()).toMatchObject({ keys: 3_000 - 1_024, sweeps: 0, sweptKeys: 1_024 });
  });

  it('counts only the keys it dropped, not the live ones it looked at', () => {
    const limiter = new RateLimiter({ threshold: 5, windowSeconds: 60, sweepIntervalSeconds: 10 });
    limiter.allowRequestSync('early');
    clock.tick(30_000);
    limiter.allowRequestSync('late');
    clock.tick(40_000); // passes at 10 … 70 s: 'early' clears at 60 s, 'late' is live
    expect(limiter.stats()).toMatchObject({ keys: 1, sweeps: 7, sweptKeys: 1 });
    limiter.close();
  });
});

describe('maxKeys: the wait told to a turned-away newcomer', () => {
  it('is never 0, even when the key it looked at says it resets now', () => {
    // A strategy whose keys are never clear and report no reset time: the newcomer is told to
    // come back after one window, not retryAfter 0 (a refusal always has a positive wait).
    const inner = new SlidingWindowLog();
    const sticky: RateLimitStrategy<SlidingWindowLogState> = {
      name: 'sticky',
      createState: (quota) => inner.createState(quota),
      consume: (state, now, cost, quota) => inner.consume(state, now, cost, quota),
      peek: (state, now, cost, quota) => ({ ...inner.peek(state, now, cost, quota), resetAfter: 0 }),
      sweep: () => false,
    };
    const limiter = new RateLimiter({ threshold: 1, windowSeconds: 30, maxKeys: 1, strategy: sticky, clock: () => 0 });
    limiter.allowRequestSync('a');
    // It says it is clear one tick later (resetAfter 0): the newcomer is told to come back then,
    // one microsecond, rounded up — above 0.
    expect(limiter.allowRequestSync('b')).toEqual({ allowed: false, remaining: 0, retryAfter: 0.000001, limit: 1, resetAfter: 0 });
    expect(limiter.peekSync('b')).toEqual({ allowed: false, remaining: 0, retryAfter: 0.000001, limit: 1, resetAfter: 0 });
  });
});

describe('the unbounded-keys warning: when it is not needed, and only once', () => {
  it('not with an automatic sweep, nor after cleanUp(); once, through console.warn where process.emitWarning is missing', { timeout: 60_000 }, () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    const swept = new RateLimiter({ threshold: 1, windowSeconds: 1, clock: () => 0, sweepIntervalSeconds: 3_600 });
    const cleaned = new RateLimiter({ threshold: 1, windowSeconds: 1, clock: () => 0 });
    cleaned.cleanUp();
    const emitWarning = Object.getOwnPropertyDescriptor(process, 'emitWarning');
    const consoleWarn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      for (let i = 0; i <= 1_000_001; i++) {
        swept.allowRequestSync(`k${i}`);
        cleaned.allowRequestSync(`k${i}`);
      }
      expect(warn).not.toHaveBeenCalled();
      Object.defineProperty(process, 'emitWarning', { value: undefined, configurable: true, writable: true });
      const unbounded = new RateLimiter({ threshold: 1, windowSeconds: 1, clock: () => 0 });
      for (let i = 0; i <= 1_000_001; i++) unbounded.allowRequestSync(`k${i}`);
      // Back under a million keys and up again: not a second warning.
      unbounded.reset('k0');
      unbounded.reset('k1');
      unbounded.reset('k2');
      unbounded.allowRequestSync('again-1');
      unbounded.allowRequestSync('again-2');
      expect(unbounded.size).toBe(1_000_001);
      expect(consoleWarn).toHaveBeenCalledTimes(1);
      expect(consoleWarn).toHaveBeenCalledWith(
        'ratewarden: a RateLimiter tracks 1000000 keys with no bound: call cleanUp() periodically, or set sweepIntervalSeconds or maxKeys',
      );
    } finally {
      if (emitWarning !== undefined) Object.defineProperty(process, 'emitWarning', emitWarning);
      warn.mockRestore();
      consoleWarn.mockRestore();
      swept.close();
    }
  });
});

describe('the automatic sweep when the clock or the strategy fails', () => {
  let clock: InstalledClock;
  beforeEach(() => {
    clock = FakeTimers.withGlobal(globalThis).install({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'performance', 'Date'] });
  });
  afterEach(() => clock.uninstall());

  it('ends the pass quietly (decisions report the failure); the next pass sweeps', () => {
    let broken = false;
    const limiter = new RateLimiter({
      threshold: 1,
      windowSeconds: 1,
      sweepIntervalSeconds: 10,
      clock: () => {
        if (broken) throw new Error('clock broke');
        return Date.now();
      },
    });
    limiter.allowRequestSync('a');
    broken = true;
    expect(() => clock.tick(10_000)).not.toThrow();
    expect(limiter.stats()).toMatchObject({ keys: 1, sweeps: 0 });
    broken = false;
    clock.tick(10_000);
    expect(limiter.stats()).toMatchObject({ keys: 0, sweeps: 1, sweptKeys: 1 });
    limiter.close();
  });

  it('a strategy whose sweep throws ends the pass; the next pass goes on', () => {
    const inner = new SlidingWindowLog();
    let failing = true;
    const flaky: RateLimitStrategy<SlidingWindowLogState> = {
      name: 'flaky-sweep',
      createState: (quota) => inner.createState(quota),
      consume: (state, now, cost, quota) => inner.consume(state, now, cost, quota),
      peek: (state, now, cost, quota) => inner.peek(state, now, cost, quota),
      sweep: (state, now, quota) => {
        if (failing) throw new Error('sweep broke');
        return inner.sweep(state, now, quota);
      },
    };
    const limiter = new RateLimiter({ threshold: 1, windowSeconds: 1, sweepIntervalSeconds: 10, strategy: flaky });
    limiter.allowRequestSync('a');
    limiter.allowRequestSync('b');
    expect(() => clock.tick(10_000)).not.toThrow();
    expect(limiter.stats()).toMatchObject({ keys: 2, sweeps: 0 });
    expect(() => limiter.cleanUp()).toThrow('sweep broke');
    failing = false;
    clock.tick(10_000);
    expect(limiter.stats()).toMatchObject({ keys: 0, sweeps: 1, sweptKeys: 2 });
    limiter.close();
  });
});

describe('an in-memory strategy that returns a promise', () => {
  it('fails with a TypeError saying what to implement instead, keeping nothing', () => {
    const inner = new SlidingWindowLog();
    const liar = {
      name: 'liar',
      createState: (quota: Quota) => inner.createState(quota),
      consume: async (...args: Parameters<typeof inner.consume>) => inner.consume(...args),
      peek: (...args: Parameters<typeof inner.peek>) => inner.peek(...args),
      sweep: (...args: Parameters<typeof inner.sweep>) => inner.sweep(...args),
    } as unknown as RateLimitStrategy<unknown>;
    const limiter = new RateLimiter({ threshold: 1, windowSeconds: 1, strategy: liar, clock: () => 0 });
    expect(() => limiter.allowRequestSync('k')).toThrow(
      'Expected the in-memory strategy `liar` to return a result, got a promise: a strategy that awaits keeps its state in a store (implement RateLimitStore)',
    );
    expect(limiter.size).toBe(0);
  });
});
