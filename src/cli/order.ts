/**
 * Ordering the requests of a replay by time, ties in file order: {@link sortByTime}, a stable
 * sort of request indexes that takes one of three paths ({@link sortPath}): a counting sort by
 * second for short spans, a radix sort by second for long ones, and a comparison sort for times
 * that are not whole seconds apart (or too few requests for the radix sort to pay).
 *
 * @module
 */

/**
 * The path {@link sortByTime} takes:
 * - `"counting"`: every time is a whole number of seconds after the earliest and the span fits
 *   the counting sort's buckets; O(count + span).
 * - `"radix"`: whole seconds over a longer span (below 2^32 seconds), at least
 *   {@link RADIX_MIN_COUNT} requests; O(count).
 * - `"comparison"`: anything else; O(count log count).
 */
export type SortPath = 'counting' | 'radix' | 'comparison';

/** Below this many requests the comparison sort is as fast as the radix sort. */
export const RADIX_MIN_COUNT = 4_096;

/** Spans (in seconds) from this one up do not fit the radix sort's 32-bit keys. */
const RADIX_MAX_SPAN = 2 ** 32;

/**
 * The order of the requests by time, ties in index (file) order: a stable sort of the indexes
 * `0 … count - 1` by `times[i]`.
 *
 * When every time is a whole number of seconds after the earliest: a counting sort by second if
 * the span in seconds is at most `maxBuckets` (O(count + span), stable by construction), else a
 * stable two-pass radix sort by second if the span is below 2^32 seconds and there are at least
 * `radixMinCount` requests (O(count)). Otherwise a comparison sort with the index as tie-breaker.
 * {@link sortPath} tells which.
 *
 * @param times - times in **milliseconds**; only the first `count` are read.
 * @param maxBuckets - the largest span, in seconds, for the counting sort. Default
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
  const { path, min, span } = planSort(times, count, maxBuckets, radixMinCount);
  if (path === 'counting') return countingSortBySecond(times, count, min, span, order);
  if (path === 'radix') return radixSortBySecond(times, count, min, order);
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

/** The path of {@link sortByTime}, with the earliest time (ms) and the span (s) it found. */
interface SortPlan {
  readonly path: SortPath;
  readonly min: number;
  readonly span: number;
}

function planSort(times: Float64Array, count: number, maxBuckets: number, radixMinCount: number): SortPlan {
  if (count === 0) return { path: 'counting', min: 0, span: 0 };
  let min = Infinity;
  let max = -Infinity;
  for (let i = 0; i < count; i++) {
    const t = times[i] as number;
    if (t < min) min = t;
    if (t > max) max = t;
  }
  const span = (max - min) / 1000;
  // Both sorts by second need whole seconds; the counting sort, a span within its buckets; the
  // radix sort, enough requests and a span its 32-bit keys can hold. (Whether the times are whole
  // seconds is checked only when one of them could run.)
  const counting = span + 1 <= maxBuckets;
  const radix = count >= radixMinCount && span < RADIX_MAX_SPAN;
  if (!counting && !radix) return { path: 'comparison', min, span };
  for (let i = 0; i < count; i++) {
    const bucket = ((times[i] as number) - min) / 1000;
    if (bucket !== Math.floor(bucket)) return { path: 'comparison', min, span };
  }
  return { path: counting ? 'counting' : 'radix', min, span };
}

/**
 * A counting sort of the indexes by whole second after `min`, into `order`: one counter per
 * second of the span, stable by construction.
 */
function countingSortBySecond(
  times: Float64Array,
  count: number,
  min: number,
  span: number,
  order: Uint32Array,
): Uint32Array {
  const starts = new Uint32Array(span + 2);
  for (let i = 0; i < count; i++) {
    const bucket = ((times[i] as number) - min) / 1000;
    starts[bucket + 1]!++;
  }
  for (let b = 1; b < starts.length; b++) starts[b]! += starts[b - 1] as number;
  for (let i = 0; i < count; i++) {
    const bucket = ((times[i] as number) - min) / 1000;
    order[starts[bucket]!++] = i;
  }
  return order;
}

/**
 * A stable LSD radix sort of the indexes by whole second after `min`, in two 16-bit passes:
 * O(count) for spans of up to 2^32 seconds, with two index arrays and 2^16 counters.
 */
function radixSortBySecond(times: Float64Array, count: number, min: number, order: Uint32Array): Uint32Array {
  const keys = new Uint32Array(count);
  for (let i = 0; i < count; i++) keys[i] = ((times[i] as number) - min) / 1000;
  let from: Uint32Array = new Uint32Array(count);
  for (let i = 0; i < count; i++) from[i] = i;
  let to: Uint32Array = order;
  const counts = new Uint32Array(1 << 16);
  for (const shift of [0, 16]) {
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
  return from;
}
