// The two scheduling helpers of src/timers.ts: Node's (process.nextTick, setImmediate) where the
// runtime has them, a task of its own (setTimeout 0) where it does not (Cloudflare Workers without
// nodejs_compat, browsers). Looked up at each call, so stubbing the globals reaches them.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { afterCallbacks, afterInput } from '../../src/timers.js';

afterEach(() => {
  vi.unstubAllGlobals();
  vi.useRealTimers();
});

describe('afterCallbacks', () => {
  it('runs after the promise callbacks already due (process.nextTick), before any timer', async () => {
    const order: string[] = [];
    setTimeout(() => order.push('timer'), 0);
    void Promise.resolve().then(() => {
      // Scheduled from a promise callback: it runs once the callbacks due now have run.
      afterCallbacks(() => order.push('after'));
      void Promise.resolve().then(() => order.push('chained'));
    });
    // Turns of the event loop (setImmediate), no wait of real time, until the timer has run.
    while (!order.includes('timer')) await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual(['chained', 'after', 'timer']);
  });

  it('without process.nextTick: a task of its own (setTimeout 0)', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const ran: string[] = [];
    vi.stubGlobal('process', { ...process, nextTick: undefined });
    afterCallbacks(() => ran.push('after'));
    vi.unstubAllGlobals();
    await Promise.resolve();
    expect(ran).toEqual([]);
    await vi.advanceTimersByTimeAsync(0);
    expect(ran).toEqual(['after']);
  });
});

describe('afterInput', () => {
  it('runs in the check phase (setImmediate)', async () => {
    vi.useFakeTimers({ toFake: ['setImmediate'] });
    const ran: string[] = [];
    afterInput(() => ran.push('after'));
    expect(ran).toEqual([]);
    await vi.advanceTimersByTimeAsync(0);
    expect(ran).toEqual(['after']);
  });

  it('without setImmediate: a task of its own (setTimeout 0)', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const ran: string[] = [];
    vi.stubGlobal('setImmediate', undefined);
    afterInput(() => ran.push('after'));
    vi.unstubAllGlobals();
    expect(ran).toEqual([]);
    await vi.advanceTimersByTimeAsync(0);
    expect(ran).toEqual(['after']);
  });
});
