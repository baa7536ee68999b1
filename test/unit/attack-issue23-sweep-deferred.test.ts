// Attack on issue 23's `sweepIntervalSeconds` on a runtime that refuses timers where the limiter is
// made (src/key-table.ts `startSweeping`): Cloudflare Workers throw "Disallowed operation called
// within global scope" for a timer set while the Worker's module loads — the README's usual place
// for a limiter — and allow one inside a request. Whatever the mechanism (a timer started inside
// a request, or decisions driving the sweep), what must hold is observable: keys whose window is
// clear get forgotten once the interval has passed and the limiter is in use; nothing is swept
// after close(); a decision never fails, nor records and then throws, because of the sweep.
//
// How the runtime is simulated, and why in this process: the library calls the bare global
// `setInterval` when it starts the sweep (no reference captured at import), so what Workers present
// is exactly a `globalThis.setInterval` that throws while "in global scope" and works afterwards.
// The stub wraps @sinonjs/fake-timers' own `setInterval` (passing time is deterministic; the fake
// clock also moves `Date` and `performance`, the limiters' default clock) and goes with the fake
// clock in `afterEach`. vitest's runner keeps its own timer references, so the stub reaches the
// code under test only. A child process would cost a second per case, and a vm context would need
// the ESM graph loaded into it, for no more fidelity.
//
// Status: the five cases marked "FAILED at 1ed88b5" failed on the issue-23 merge (1ed88b5), the
// code this attack was asked to examine; c9eac5f (committed meanwhile, decisions drive the sweep)
// makes all of them pass. They are kept as regression tests of what must hold, whatever the mechanism.
//
// Each case ends a period of time with `advance()`: the fake clock moves past the interval (firing
// any timer), then one decision on a fresh key (which drives a sweep that decisions drive), then a
// few milliseconds more (the slices a timer schedules).
import FakeTimers from '@sinonjs/fake-timers';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RateLimitGroup, RateLimiter } from '../../src/index.js';

type InstalledClock = ReturnType<ReturnType<typeof FakeTimers.withGlobal>['install']>;

let clock: InstalledClock;
/** Whether the simulated runtime refuses timers now (a Worker's global scope). */
let inGlobalScope = false;
/** Whether the simulated runtime never allows `setInterval` (no timers at all). */
let neverTimers = false;

beforeEach(() => {
  clock = FakeTimers.withGlobal(globalThis).install({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'performance', 'Date'] });
  const fake = globalThis.setInterval;
  inGlobalScope = false;
  neverTimers = false;
  globalThis.setInterval = ((handler: () => void, ms?: number) => {
    if (inGlobalScope || neverTimers) throw new Error('Disallowed operation called within global scope.');
    return fake(handler, ms);
  }) as typeof setInterval;
});

afterEach(() => {
  clock.uninstall();
});

/** A limiter made "at module load" of a Worker: its sweep's timer is refused there. */
function madeInGlobalScope(threshold = 5, windowSeconds = 1, sweepIntervalSeconds = 10): RateLimiter {
  inGlobalScope = true;
  try {
    return new RateLimiter({ threshold, windowSeconds, sweepIntervalSeconds });
  } finally {
    inGlobalScope = false;
  }
}

let fresh = 0;
/** Lets `ms` of (fake) time pass, then one decision on a fresh key of each limiter, then a little more time. */
function advance(ms: number, ...limiters: RateLimiter[]): void {
  clock.tick(ms);
  for (const l of limiters) l.allowRequestSync(`fresh-${++fresh}`);
  clock.tick(5);
}

describe('sweepIntervalSeconds on a runtime that refuses timers in global scope', () => {
  it('construction does not throw, and starts no timer (held up)', () => {
    const limiter = madeInGlobalScope();
    expect(clock.countTimers()).toBe(0);
    limiter.close();
  });

  // FAILED at 1ed88b5. The first key tracked by an ordinary decision (`allowRequestSync`, the
  // path of every plain RateLimiter) goes through KeyTable#admit (src/key-table.ts:713 at 1ed88b5,
  // `states.set(key, fresh)`), which never calls `#sweepDeferred` (only the penalty path, :456,
  // and a group's reserved path, :509, do). So on Workers the sweep of a limiter made in global
  // scope never starts: keys are never forgotten, and the "tracks N keys with no bound" warning
  // is silenced too (`#warnUnbounded` sees `#sweepDeferred` set).
  it('keys tracked by allowRequestSync inside requests are forgotten once clear, after the interval', () => {
    const limiter = madeInGlobalScope(5, 1, 10);
    expect(limiter.allowRequestSync('alice').allowed).toBe(true);
    advance(10_000, limiter);
    expect(limiter.sweptKeys).toBeGreaterThanOrEqual(1);
    expect(limiter.size).toBe(1); // only the fresh key of advance(), alice forgotten
    limiter.close();
  });

  // FAILED at 1ed88b5, same cause (allowRequest goes through the same KeyTable#admit).
  it('keys tracked by allowRequest (async) too', async () => {
    const limiter = madeInGlobalScope(5, 1, 10);
    expect((await limiter.allowRequest('bob')).allowed).toBe(true);
    advance(10_000, limiter);
    expect(limiter.sweptKeys).toBeGreaterThanOrEqual(1);
    expect(limiter.size).toBe(1);
    limiter.close();
  });

  // FAILED at 1ed88b5: a RateLimitGroup's in-memory members commit new keys through the same path.
  it("keys a group's decisions track in a member too", async () => {
    const member = madeInGlobalScope(5, 1, 10);
    const group = new RateLimitGroup([{ limiter: member, name: 'a' }]);
    expect((await group.allowRequest('carol')).allowed).toBe(true);
    expect(member.size).toBe(1);
    advance(10_000, member);
    expect(member.sweptKeys).toBeGreaterThanOrEqual(1);
    expect(member.size).toBe(1);
    member.close();
  });

  // FAILED at 1ed88b5 (same cause). Of many limiters made at module load, each used one
  // sweeps its own keys, and the unused ones cost nothing (no timer each).
  it('many limiters: each one in use sweeps its keys; no more timers than limiters in use', () => {
    const limiters = Array.from({ length: 20 }, () => madeInGlobalScope(5, 1, 10));
    const used = limiters.slice(0, 5);
    used.forEach((l, i) => l.allowRequestSync(`k${i}`));
    expect(clock.countTimers()).toBeLessThanOrEqual(5);
    advance(10_000, ...used);
    for (const l of used) expect(l.sweptKeys).toBeGreaterThanOrEqual(1);
    for (const l of used) expect(l.size).toBe(1);
    expect(clock.countTimers()).toBeLessThanOrEqual(5);
    for (const l of limiters) l.close();
    expect(clock.countTimers()).toBe(0);
  });

  it('close() before the first key: nothing is ever swept, no timer is ever set (held up)', () => {
    const limiter = madeInGlobalScope();
    limiter.close();
    limiter.allowRequestSync('dave');
    limiter.penaltySync('erin', 1);
    advance(10_000, limiter);
    advance(10_000, limiter);
    expect(limiter.sweptKeys).toBe(0);
    expect(clock.countTimers()).toBe(0);
  });

  it('keys tracked by a penalty inside requests are forgotten once clear, after the interval (held up)', () => {
    const limiter = madeInGlobalScope(5, 1, 10);
    limiter.penaltySync('frank', 1);
    advance(10_000, limiter);
    expect(limiter.sweptKeys).toBeGreaterThanOrEqual(1);
    limiter.close();
  });

  // FAILED at 1ed88b5. On a runtime where `setInterval` is refused inside requests as well (a
  // sandbox without timers, or a first key tracked during a Worker's module load), the deferred
  // start rethrows the runtime's error from the decision that tracked the first key (startSweeping:
  // `if (this.#states.size > 0) throw error`, src/key-table.ts:604 at 1ed88b5, reached from :456) —
  // AFTER the key's state was recorded (:454): the penalty is both reported failed and recorded.
  // An automatic sweep (a background nicety) must never fail a caller's decision.
  it('a runtime that never allows timers: the penalty that tracks the first key neither throws nor leaves state behind a throw', () => {
    neverTimers = true;
    const limiter = new RateLimiter({ threshold: 5, windowSeconds: 1, sweepIntervalSeconds: 10 });
    let thrown: unknown;
    try {
      limiter.penaltySync('grace', 1);
    } catch (error) {
      thrown = error;
    }
    // A call that threw must not have recorded the penalty (at 1ed88b5: remaining 4, recorded)…
    if (thrown !== undefined) expect(limiter.peekSync('grace').remaining).toBe(5);
    // …and the sweep is no reason for the penalty to fail at all.
    expect(thrown).toBeUndefined();
    limiter.close();
  });
});
