import FakeTimers from '@sinonjs/fake-timers';
import { describe, expect, it } from 'vitest';
import { KeyedMutex } from '../../src/index.js';

describe('KeyedMutex', () => {
  it('runs callbacks of one key one at a time, in arrival order', async () => {
    const mutex = new KeyedMutex();
    const log: string[] = [];
    let inside = 0;
    let maxInside = 0;
    const work = (id: number) =>
      mutex.runExclusive('k', async () => {
        inside++;
        maxInside = Math.max(maxInside, inside);
        log.push(`start ${id}`);
        await Promise.resolve();
        await Promise.resolve();
        log.push(`end ${id}`);
        inside--;
        return id;
      });
    const results = await Promise.all([1, 2, 3].map(work));
    expect(results).toEqual([1, 2, 3]);
    expect(maxInside).toBe(1);
    expect(log).toEqual(['start 1', 'end 1', 'start 2', 'end 2', 'start 3', 'end 3']);
  });

  it('lets different keys overlap', async () => {
    const mutex = new KeyedMutex();
    let open!: () => void;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const held = mutex.runExclusive('a', () => gate);
    expect(mutex.isLocked('a')).toBe(true);
    expect(await mutex.runExclusive('b', () => 'b done')).toBe('b done');
    open();
    await held;
  });

  it('releases the lock when the callback throws synchronously or rejects, and reports the error', async () => {
    const mutex = new KeyedMutex();
    const sync = mutex.runExclusive('k', () => {
      throw new Error('sync failure');
    });
    const async = mutex.runExclusive('k', async () => {
      throw new Error('async failure');
    });
    const after = mutex.runExclusive('k', () => 'still works');
    await expect(sync).rejects.toThrow('sync failure');
    await expect(async).rejects.toThrow('async failure');
    expect(await after).toBe('still works');
    expect(mutex.size).toBe(0);
  });

  it('keeps an entry only while a callback holds or waits: a million keys leave the map empty', async () => {
    const mutex = new KeyedMutex();
    const batch: Promise<number>[] = [];
    let sum = 0;
    for (let i = 0; i < 1_000_000; i++) {
      batch.push(mutex.runExclusive(`key-${i}`, () => i));
      if (batch.length === 10_000) {
        expect(mutex.size).toBe(10_000);
        for (const value of await Promise.all(batch)) sum += value;
        batch.length = 0;
        expect(mutex.size).toBe(0);
      }
    }
    expect(sum).toBe((1_000_000 * 999_999) / 2);
    expect(mutex.size).toBe(0);
  });

  it('needs no timer, setImmediate, nextTick or queueMicrotask: works with all of them faked', async () => {
    const clock = FakeTimers.withGlobal(globalThis).install({
      toFake: ['setTimeout', 'setInterval', 'setImmediate', 'nextTick', 'queueMicrotask', 'performance', 'Date'],
    });
    try {
      const mutex = new KeyedMutex();
      const order: number[] = [];
      await Promise.all(
        [1, 2, 3].map((id) =>
          mutex.runExclusive('k', async () => {
            await Promise.resolve();
            order.push(id);
          }),
        ),
      );
      expect(order).toEqual([1, 2, 3]);
      expect(clock.countTimers()).toBe(0);
    } finally {
      clock.uninstall();
    }
  });
});
