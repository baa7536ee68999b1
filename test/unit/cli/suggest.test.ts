// `ratewarden suggest` (src/cli/suggest.ts): its answer on the built-in sample, for every strategy
// and both goals, against an independent brute-force search: every threshold from 1 up to the
// answer replayed through the reference models of test/support/reference-models.ts (written from
// the algorithms' definitions, fed by a regular-expression parser); then the same on random logs,
// and the pieces (peaks, grids, busiest hour) on small cases worked by hand.
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { sortByTime } from '../../../src/cli/order.js';
import { loadRequests } from '../../../src/cli/replay.js';
import { STRATEGY_NAMES, type StrategyName } from '../../../src/cli/strategies.js';
import {
  busiestHour,
  clientPeaks,
  evenGrid,
  geometricGrid,
  groupByClient,
  suggestThreshold,
  type ClientRuns,
  type SuggestGoal,
} from '../../../src/cli/suggest.js';
import { refModel, refReplay, refRequests, type RefRequest } from '../../support/reference-models.js';
import { SAMPLE } from '../../support/replay-fixture.js';

/** Whether `threshold` meets every goal on `requests`, by the reference model. */
function bruteMeets(requests: readonly RefRequest[], clients: number, name: StrategyName, threshold: number, windowMs: number, goals: readonly SuggestGoal[]) {
  const { rejected, clientsLimited } = refReplay(requests, refModel(name, threshold, windowMs));
  const ok = goals.every((g) => (g.kind === 'refused' ? rejected <= g.share * requests.length : clientsLimited <= g.share * clients));
  return { ok, rejected, clientsLimited };
}

/** The smallest threshold from 1 to `limit` meeting the goals by brute force, or undefined. */
function bruteForce(requests: readonly RefRequest[], clients: number, name: StrategyName, windowMs: number, goals: readonly SuggestGoal[], limit: number) {
  for (let t = 1; t <= limit; t++) {
    const result = bruteMeets(requests, clients, name, t, windowMs, goals);
    if (result.ok) return { threshold: t, ...result };
  }
  return undefined;
}

const GOALS: readonly (readonly SuggestGoal[])[] = [
  [{ kind: 'clients-limited', share: 0.01 }],
  [{ kind: 'refused', share: 0.005 }],
  [{ kind: 'clients-limited', share: 0.002 }, { kind: 'refused', share: 0.01 }],
];

describe('suggest on the built-in sample, against a brute-force search', { timeout: 120_000 }, () => {
  let sample: RefRequest[] = [];
  let runs: ClientRuns;
  beforeAll(async () => {
    sample = refRequests(gunzipSync(readFileSync(SAMPLE)).toString('utf8'));
    const loaded = await loadRequests({ input: SAMPLE });
    runs = groupByClient(loaded.times, loaded.clientOf, loaded.order, loaded.count, loaded.clientNames.length);
  });

  for (const name of STRATEGY_NAMES) {
    it(`${name}: the smallest threshold meeting each goal per 60 s, and the curve's points`, () => {
      const clients = new Set(sample.map((r) => r.client)).size;
      for (const goals of GOALS) {
        const answer = suggestThreshold(runs, 60, name, goals);
        expect(answer.threshold).toBeDefined();
        const threshold = answer.threshold as number;
        // Brute force: every threshold below the answer misses a goal; the answer meets them all.
        const brute = bruteForce(sample, clients, name, 60_000, goals, threshold);
        expect(brute?.threshold).toBe(threshold);
        expect({ refused: answer.refused, clientsLimited: answer.clientsLimited }).toEqual({ refused: brute?.rejected, clientsLimited: brute?.clientsLimited });
        // A few passes, not one per threshold.
        expect(answer.passes).toBeLessThanOrEqual(6);
        // Every point of the curve is what the reference gives at that threshold.
        for (const point of answer.curve.filter((_, i) => i % 4 === 0)) {
          const ref = refReplay(sample, refModel(name, point.threshold, 60_000));
          expect(point.refusedShare).toBe(ref.rejected / sample.length);
          expect(point.clientsLimitedShare).toBe(ref.clientsLimited / clients);
        }
      }
    });
  }
});

describe('suggest on random logs, against a brute-force search (property)', () => {
  it('finds the smallest threshold meeting the goal, for every strategy', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ client: fc.constantFrom('a', 'b', 'c', 'd', 'e'), timeMs: fc.integer({ min: 0, max: 60 }).map((s) => s * 1000) }), { minLength: 1, maxLength: 60 }),
        fc.constantFrom(...STRATEGY_NAMES),
        fc.constantFrom(1, 5, 10, 30),
        fc.oneof(
          fc.record({ kind: fc.constant('clients-limited' as const), share: fc.constantFrom(0, 0.2, 0.4, 1) }),
          fc.record({ kind: fc.constant('refused' as const), share: fc.constantFrom(0, 0.05, 0.1, 0.3) }),
        ),
        (entries, name, windowSeconds, goal) => {
          const times = Float64Array.from(entries, (e) => e.timeMs);
          const names = [...new Set(entries.map((e) => e.client))];
          const clientOf = Uint32Array.from(entries, (e) => names.indexOf(e.client));
          const order = sortByTime(times, entries.length);
          const requests = Array.from(order, (i) => entries[i] as RefRequest);
          const answer = suggestThreshold(groupByClient(times, clientOf, order, entries.length, names.length), windowSeconds, name, [goal]);
          const brute = bruteForce(requests, names.length, name, windowSeconds * 1000, [goal], entries.length + 1);
          expect(answer.threshold).toBe(brute?.threshold);
          expect(answer.refused).toBe(brute?.rejected);
          expect(answer.clientsLimited).toBe(brute?.clientsLimited);
        },
      ),
      { numRuns: 1500 },
    );
  });
});

describe('the pieces', () => {
  it('clientPeaks: the most requests in any window (t - window, t], a request at exactly t - window out', () => {
    // Client 0 at 0, 10, 10, 20 s; client 1 at 5 s.
    const times = Float64Array.from([0, 10_000, 5000, 10_000, 20_000]);
    const clientOf = Uint32Array.from([0, 0, 1, 0, 0]);
    const runs = groupByClient(times, clientOf, sortByTime(times, 5), 5, 2);
    expect(Array.from(runs.times)).toEqual([0, 10_000, 10_000, 20_000, 5000]);
    expect(Array.from(clientPeaks(runs, 10_000))).toEqual([2, 1]); // (0, 10] holds 10, 10; 0 is out
    expect(Array.from(clientPeaks(runs, 10_001))).toEqual([3, 1]); // (-0.001, 10] holds 0, 10, 10
    expect(Array.from(clientPeaks(runs, 20_001))).toEqual([4, 1]);
  });

  it('the grids: geometric from 1 to the top, even inside a bracket', () => {
    expect(geometricGrid(1, 16)).toEqual([1]);
    // round(108^(i/15)) for i = 0 … 15, repeats dropped (1.37 and 1.87 round to 1 and 2).
    expect(geometricGrid(108, 16)).toEqual([1, 2, 3, 5, 7, 9, 12, 17, 23, 31, 42, 58, 79, 108]);
    expect(geometricGrid(2, 16)).toEqual([1, 2]);
    expect(evenGrid(10, 15, 16)).toEqual([11, 12, 13, 14]);
    expect(evenGrid(0, 170, 16)).toEqual([10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120, 130, 140, 150, 160]);
    expect(evenGrid(4, 5, 16)).toEqual([]);
  });

  it('busiestHour: the calendar hour (UTC) with the most requests, the earliest of equals, and its clients', () => {
    const H = 3_600_000;
    const times = Float64Array.from([H + 1, 2 * H, 2 * H + 5, 2 * H + 9, H + 2, 3 * H]);
    const clientOf = Uint32Array.from([0, 1, 1, 2, 0, 0]);
    expect(busiestHour(times, clientOf, sortByTime(times, 6), 6, 3)).toEqual({ startMs: 2 * H, requests: 3, clients: 2 });
    expect(busiestHour(times, clientOf, sortByTime(times, 0), 0, 3)).toBeUndefined();
  });
});
