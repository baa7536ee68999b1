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

  it('isHeld: true while a callback of the key runs or waits, exclusive or shared', async () => {
    const mutex = new KeyedMutex();
    expect(mutex.isHeld('a')).toBe(false);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const held = mutex.runExclusive('a', () => gate);
    const shared = mutex.runShared('a', () => undefined);
    expect([mutex.isHeld('a'), mutex.isHeld('b')]).toEqual([true, false]);
    release();
    await Promise.all([held, shared]);
    expect(mutex.isHeld('a')).toBe(false);
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

  it('runShared: shared callbacks of a key run together, never alongside an exclusive one, in arrival order', async () => {
    const mutex = new KeyedMutex();
    const log: string[] = [];
    const gates = new Map<string, () => void>();
    const held = (name: string) => () => {
      log.push(`start ${name}`);
      return new Promise<string>((resolve) => {
        gates.set(name, () => {
          log.push(`end ${name}`);
          resolve(name);
        });
      });
    };
    const open = async (name: string) => {
      for (let i = 0; i < 5; i++) await Promise.resolve();
      (gates.get(name) as () => void)();
    };
    // s1 and s2 share; x waits for both; s3 (after x) waits for x; s4 joins s3's run.
    const s1 = mutex.runShared('k', held('s1'));
    const s2 = mutex.runShared('k', held('s2'));
    expect(log).toEqual(['start s1', 'start s2']); // at once, synchronously
    const x = mutex.runExclusive('k', held('x'));
    const s3 = mutex.runShared('k', held('s3'));
    const s4 = mutex.runShared('k', held('s4'));
    const other = mutex.runShared('other', () => 'other done');
    expect(await other).toBe('other done');
    await open('s1');
    for (let i = 0; i < 5; i++) await Promise.resolve();
    expect(log).toEqual(['start s1', 'start s2', 'end s1']); // x still waits for s2
    await open('s2');
    await open('x');
    await open('s3');
    await open('s4');
    expect(await Promise.all([s1, s2, x, s3, s4])).toEqual(['s1', 's2', 'x', 's3', 's4']);
    expect(log).toEqual(['start s1', 'start s2', 'end s1', 'end s2', 'start x', 'end x', 'start s3', 'start s4', 'end s3', 'end s4']);
    expect(mutex.size).toBe(0);
  });

  it('runShared: a shared run that ended lets the next exclusive callback in; errors release the hold', async () => {
    const mutex = new KeyedMutex();
    await expect(
      mutex.runShared('k', () => {
        throw new Error('sync failure');
      }),
    ).rejects.toThrow('sync failure');
    await expect(mutex.runShared('k', () => Promise.reject(new Error('async failure')))).rejects.toThrow('async failure');
    expect(mutex.size).toBe(0);
    const order: string[] = [];
    const first = mutex.runShared('k', async () => {
      await Promise.resolve();
      order.push('shared 1');
    });
    const exclusive = mutex.runExclusive('k', async () => {
      order.push('exclusive in');
      await Promise.resolve();
      order.push('exclusive out');
    });
    const late = mutex.runShared('k', () => order.push('shared 2'));
    expect(mutex.isLocked('k')).toBe(true);
    await Promise.all([first, exclusive, late]);
    expect(order).toEqual(['shared 1', 'exclusive in', 'exclusive out', 'shared 2']);
    expect(mutex.size).toBe(0);
  });
});

describe('KeyedMutex: the entry of a key lives while any callback holds or waits', () => {
  it('isLocked and size count the waiters too; a later arrival waits for all of them', async () => {
    const mutex = new KeyedMutex();
    const gates: (() => void)[] = [];
    const log: string[] = [];
    const hold = (id: number): Promise<void> =>
      mutex.runExclusive('k', async () => {
        log.push(`start ${id}`);
        await new Promise<void>((resolve) => gates.push(resolve));
        log.push(`end ${id}`);
      });
    expect(mutex.isLocked('k')).toBe(false);
    const first = hold(1);
    const second = hold(2);
    const third = hold(3);
    expect(mutex.isLocked('k')).toBe(true);
    expect(mutex.isLocked('other')).toBe(false);
    expect(mutex.size).toBe(1);
    await Promise.resolve();
    gates.shift()?.();
    await first;
    // The first is done; two still hold or wait: the key stays locked.
    expect(mutex.isLocked('k')).toBe(true);
    expect(mutex.size).toBe(1);
    const fourth = hold(4);
    for (let i = 0; i < 10; i++) await Promise.resolve();
    expect(log).toEqual(['start 1', 'end 1', 'start 2']);
    for (let turn = 0; turn < 1_000 && (gates.length > 0 || log.length < 8); turn++) {
      gates.shift()?.();
      await Promise.resolve();
    }
    await Promise.all([second, third, fourth]);
    expect(log).toEqual(['start 1', 'end 1', 'start 2', 'end 2', 'start 3', 'end 3', 'start 4', 'end 4']);
    expect(mutex.isLocked('k')).toBe(false);
    expect(mutex.size).toBe(0);
  });
});

describe('KeyedMutex: a free key', () => {
  it('runs its callback at once, within the call (the decider relies on it to decide without a turn of delay)', async () => {
    const mutex = new KeyedMutex();
    let ran = false;
    const done = mutex.runExclusive('k', () => {
      ran = true;
    });
    expect(ran).toBe(true);
    await done;
    // A busy key runs it later.
    let second = false;
    const first = mutex.runExclusive('k', () => Promise.resolve());
    const later = mutex.runExclusive('k', () => {
      second = true;
    });
    expect(second).toBe(false);
    await Promise.all([first, later]);
    expect(second).toBe(true);
  });
});
