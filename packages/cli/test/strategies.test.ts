// The strategies by name (src/strategies.ts), and replay() with each name and with bad ones; the
// registry's facts that suggest relies on, checked against each strategy on random logs.
import fc from 'fast-check';
import { createQuota } from 'ratewarden';
import { describe, expect, it } from 'vitest';
import { STRATEGIES, STRATEGY_NAMES, createStrategy } from '../src/strategies.js';
import { clientPeaks, groupByClient } from '../src/suggest.js';
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

describe("the strategy registry's facts, which suggest relies on, against each strategy", () => {
  // One client's requests (times in ms, in order) and a window: its peak, and what each
  // threshold refuses, decided by the registry's own instance of the strategy.
  const refusedAt = (entry: (typeof STRATEGIES)[number], times: readonly number[], windowMs: number, threshold: number): number => {
    const strategy = entry.create();
    const quota = createQuota({ threshold, windowSeconds: windowMs / 1000 }, strategy);
    const state = strategy.createState(quota);
    let refused = 0;
    for (const t of times) if (!strategy.consume(state, t, 1, quota).allowed) refused++;
    return refused;
  };
  const peakOf = (times: readonly number[], windowMs: number): number => {
    const runs = groupByClient(Float64Array.from(times), new Uint32Array(times.length), Uint32Array.from(times.keys()), times.length, 1);
    return clientPeaks(runs, windowMs)[0] as number;
  };
  const requestTimes = fc.array(fc.integer({ min: 0, max: 120 }), { minLength: 1, maxLength: 40 }).map((seconds) => seconds.map((s) => s * 500).sort((a, b) => a - b));

  for (const entry of STRATEGIES) {
    it(`${entry.name}: peakExact ${entry.peakExact}, clientsLimitedFromPeaks ${entry.clientsLimitedFromPeaks}, monotone ${entry.monotone}`, () => {
      expect(entry.create().name).toBe(entry.name);
      if (entry.clientsLimitedFromPeaks) expect(entry.peakExact).toBe(true);
      fc.assert(
        fc.property(requestTimes, fc.constantFrom(1000, 5000, 10_000), fc.integer({ min: 1, max: 12 }), (times, windowMs, threshold) => {
          const peak = peakOf(times, windowMs);
          const refused = refusedAt(entry, times, windowMs, threshold);
          if (entry.peakExact && threshold >= peak) expect(refused).toBe(0);
          if (entry.clientsLimitedFromPeaks) expect(refused > 0).toBe(peak > threshold);
          if (entry.monotone === 'proven') expect(refusedAt(entry, times, windowMs, threshold + 1)).toBeLessThanOrEqual(refused);
        }),
        { numRuns: 400 },
      );
    });
  }

  it('the facts are not vacuous: the sliding-window counter, not peakExact, refuses something at its peak', () => {
    // 2 per second: two requests at 0.5 s, two at 1.5 s. No window (t - 1 s, t] holds more than 2,
    // but at 1.5 s the counter weighs the last window's 2 by a half: 1 + 1 + 1 > 2.
    const times = [500, 500, 1500, 1500];
    const counter = STRATEGIES.find((s) => s.name === 'sliding-window-counter');
    if (counter === undefined) throw new Error('no sliding-window-counter');
    expect(counter.peakExact).toBe(false);
    expect(peakOf(times, 1000)).toBe(2);
    expect(refusedAt(counter, times, 1000, 2)).toBeGreaterThan(0);
  });
});
