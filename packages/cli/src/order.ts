/**
 * Ordering the requests of a replay by time, ties in file order: {@link sortByTime}, a stable
 * sort of request indexes that takes one of three paths ({@link sortPath}): a counting sort by
 * second (or millisecond) for short spans, a radix sort by second (or millisecond) for long ones,
 * and a comparison sort for times that are not whole milliseconds apart (or too few requests for
 * the radix sort to pay).
 *
 * @module
 */

/**
 * The path {@link sortByTime} takes:
 * - `"counting"`: every time is a whole number of seconds (else of milliseconds) after the
 *   earliest, the unit, and the span in that unit fits the counting sort's buckets;
 *   O(count + span).
 * - `"radix"`: whole units over a longer span (below 2^48 units), at least
 *   {@link RADIX_MIN_COUNT} requests; O(count): two 16-bit passes below 2^32 units, three above.
 * - `"comparison"`: anything else; O(count log count).
 */
export type SortPath = 'counting' | 'radix' | 'comparison';

/** Below this many requests the comparison sort is as fast as the radix sort. */
export const RADIX_MIN_COUNT = 4_096;

/** Spans (in units) from this one up do not fit the radix sort's three 16-bit digits. */
const RADIX_MAX_SPAN = 2 ** 48;

/**
 * The order of the requests by time, ties in index (file) order: a stable sort of the indexes
 * `0 … count - 1` by `times[i]`.
 *
 * When every time is a whole number of units after the earliest (the unit: a second if every
 * time is a whole second after it, else a millisecond): a counting sort by unit if the span in
 * units is at most `maxBuckets` (O(count + span), stable by construction), else a stable radix
 * sort by unit if the span is below 2^48 units and there are at least `radixMinCount` requests
 * (O(count)). Otherwise a comparison sort with the index as tie-breaker. {@link sortPath} tells
 * which.
 *
 * @param times - times in **milliseconds**; only the first `count` are read.
 * @param maxBuckets - the largest span, in units, for the counting sort. Default
 *   `max(2^16, 2 * count)`, so that its memory stays within 8 bytes per request.
 * @param radixMinCount - the fewest requests for the radix sort. Default {@link RADIX_MIN_COUNT}.
 */
export function sortByTime(
  times: Float64Array,
  count: number,
  maxBuckets = defaultMaxBuckets(count),
  radixMinCount = RADIX_MIN_COUNT,
): Uint32Array {
  const order = new Uint32Array(count);
  if (count === 0) return order;
  const { path, min, span, unit } = planSort(times, count, maxBuckets, radixMinCount);
  if (path === 'counting') return countingSortByUnit(times, count, min, span, unit, order);
  if (path === 'radix') return radixSortByUnit(times, count, min, span, unit, order);
  for (let i = 0; i < count; i++) order[i] = i;
  order.sort((a, b) => (times[a] as number) - (times[b] as number) || a - b);
  return order;
}

/**
 * The path {@link sortByTime} takes for the same arguments (`"counting"` when `count` is 0:
 * there is nothing to sort).
 */
export function sortPath(
  times: Float64Array,
  count: number,
  maxBuckets = defaultMaxBuckets(count),
  radixMinCount = RADIX_MIN_COUNT,
): SortPath {
  return planSort(times, count, maxBuckets, radixMinCount).path;
}

function defaultMaxBuckets(count: number): number {
  return Math.max(1 << 16, 2 * count);
}

/** The path of {@link sortByTime}, with the earliest time (ms), the unit (ms) and the span (units) it found. */
interface SortPlan {
  readonly path: SortPath;
  readonly min: number;
  readonly span: number;
  readonly unit: number;
}

function planSort(times: Float64Array, count: number, maxBuckets: number, radixMinCount: number): SortPlan {
  if (count === 0) return { path: 'counting', min: 0, span: 0, unit: 1000 };
  let min = Infinity;
  let max = -Infinity;
  for (let i = 0; i < count; i++) {
    const t = times[i] as number;
    if (t < min) min = t;
    if (t > max) max = t;
  }
  // The unit: a second when every time is a whole second after the earliest, else a millisecond
  // when every time is a whole millisecond after it; otherwise only the comparison sort can run.
  let unit = 1000;
  for (let i = 0; i < count; i++) {
    const offset = (times[i] as number) - min;
    if (offset % 1000 !== 0) {
      unit = 1;
      if (offset !== Math.floor(offset)) return { path: 'comparison', min, span: max - min, unit };
    }
  }
  const span = (max - min) / unit;
  if (span + 1 <= maxBuckets) return { path: 'counting', min, span, unit };
  if (count >= radixMinCount && span < RADIX_MAX_SPAN) return { path: 'radix', min, span, unit };
  return { path: 'comparison', min, span, unit };
}

/**
 * A counting sort of the indexes by whole unit after `min`, into `order`: one counter per unit
 * of the span, stable by construction.
 */
function countingSortByUnit(
  times: Float64Array,
  count: number,
  min: number,
  span: number,
  unit: number,
  order: Uint32Array,
): Uint32Array {
  const starts = new Uint32Array(span + 2);
  for (let i = 0; i < count; i++) {
    const bucket = ((times[i] as number) - min) / unit;
    starts[bucket + 1]!++;
  }
  for (let b = 1; b < starts.length; b++) starts[b]! += starts[b - 1] as number;
  for (let i = 0; i < count; i++) {
    const bucket = ((times[i] as number) - min) / unit;
    order[starts[bucket]!++] = i;
  }
  return order;
}

/**
 * A stable LSD radix sort of the indexes by whole unit after `min`, in 16-bit passes: two for
 * spans below 2^32 units, three below 2^48; O(count), with two index arrays and 2^16 counters.
 */
function radixSortByUnit(
  times: Float64Array,
  count: number,
  min: number,
  span: number,
  unit: number,
  order: Uint32Array,
): Uint32Array {
  // The key's low 32 bits, and the bits above them (only when the span needs them).
  const low = new Uint32Array(count);
  const wide = span >= 2 ** 32;
  const high = wide ? new Uint32Array(count) : undefined;
  for (let i = 0; i < count; i++) {
    const key = ((times[i] as number) - min) / unit;
    low[i] = key >>> 0;
    if (high !== undefined) high[i] = Math.floor(key / 2 ** 32);
  }
  let from: Uint32Array = new Uint32Array(count);
  for (let i = 0; i < count; i++) from[i] = i;
  let to: Uint32Array = order;
  const counts = new Uint32Array(1 << 16);
  const digits: [Uint32Array, number][] = [[low, 0], [low, 16]];
  if (high !== undefined) digits.push([high, 0]);
  for (const [keys, shift] of digits) {
    counts.fill(0);
    for (let i = 0; i < count; i++) counts[((keys[from[i] as number] as number) >>> shift) & 0xffff]!++;
    let sum = 0;
    for (let b = 0; b < counts.length; b++) {
      const c = counts[b] as number;
      counts[b] = sum;
      sum += c;
    }
    for (let i = 0; i < count; i++) {
      const index = from[i] as number;
      to[counts[((keys[index] as number) >>> shift) & 0xffff]!++] = index;
    }
    [from, to] = [to, from];
  }
  // An odd number of passes leaves the result in the scratch array.
  if (from !== order) order.set(from);
  return order;
}
