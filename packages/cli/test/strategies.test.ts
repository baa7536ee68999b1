// The strategies by name (src/strategies.ts), and replay() with each name and with bad ones.
import { describe, expect, it } from 'vitest';
import { STRATEGY_NAMES, createStrategy } from '../src/strategies.js';
import { FIXTURE, replayText } from './support/replay-fixture.js';

describe('ratewarden replay --strategy', { timeout: 60_000 }, () => {
  it('replay(): each name gives a new instance of its strategy; an unknown name throws', async () => {
    for (const name of STRATEGY_NAMES) {
      expect(createStrategy(name).name).toBe(name);
      expect(createStrategy(name)).not.toBe(createStrategy(name));
      expect(await replayText(FIXTURE, { strategy: name, threshold: 2, windowSeconds: 10 })).toMatchObject({
        strategy: name,
        requests: 8,
      });
    }
    expect((await replayText(FIXTURE)).strategy).toBe('sliding-window-log');
    await expect(replayText(FIXTURE, { strategy: 'leaky' })).rejects.toThrow(RangeError);
    await expect(replayText(FIXTURE, { strategy: 'leaky' })).rejects.toThrow(
      /^Expected `strategy` to be one of sliding-window-log, sliding-window-counter, fixed-window, token-bucket, gcra, got `"leaky"`/,
    );
    await expect(replayText(FIXTURE, { strategy: 'toString' })).rejects.toThrow(RangeError);
    await expect(replayText(FIXTURE, { strategy: 42 as unknown as string })).rejects.toThrow(TypeError);
    // The threshold cap of the sliding-window log, and none for the others.
    await expect(replayText(FIXTURE, { threshold: 2_000_000 })).rejects.toThrow(/`threshold`.*1048576/);
    expect(await replayText(FIXTURE, { threshold: 2_000_000, strategy: 'gcra' })).toMatchObject({ rejected: 0 });
  });
});
